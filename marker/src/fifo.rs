//! The prefetch FIFO between a worker's mark stack and its scan loop, and
//! the batch of objects scanned that wait to be counted live.
//!
//! An object popped from the stack is prefetched and enters the FIFO; it is
//! scanned when it leaves, `depth` pops later, by which time its cache line
//! has usually arrived (Cher, Hosking and Vijaykumar's buffered prefetch).

use crate::config::MarkerConfig;

/// A fixed array of `N` mark-stack words, `len` of them held: the storage
/// of both the FIFO (as a ring) and the batch (as a stack).
pub(crate) struct Words<const N: usize> {
    words: [usize; N],
    len: usize,
}

impl<const N: usize> Words<N> {
    pub(crate) const fn new() -> Self {
        Words {
            words: [0; N],
            len: 0,
        }
    }

    /// How many words are held.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `w`; the caller empties a full buffer first.
    #[inline(always)]
    pub(crate) fn push(&mut self, w: usize) {
        self.words[self.len] = w;
        self.len += 1;
    }

    /// The words held, oldest first.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[usize] {
        &self.words[..self.len]
    }

    /// The words held, oldest first, to rewrite in place.
    #[inline(always)]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [usize] {
        &mut self.words[..self.len]
    }

    /// Empties the buffer.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

/// A ring of up to [`MarkerConfig::MAX_PREFETCH`] mark-stack words, oldest
/// first from `head`.
pub(crate) struct Fifo {
    ring: Words<{ MarkerConfig::MAX_PREFETCH }>,
    head: usize,
}

impl Fifo {
    pub(crate) const fn new() -> Fifo {
        Fifo {
            ring: Words::new(),
            head: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }

    /// Appends `w`; the caller keeps `len() < MAX_PREFETCH`.
    #[inline(always)]
    pub(crate) fn push(&mut self, w: usize) {
        let r = &mut self.ring;
        debug_assert!(r.len < MarkerConfig::MAX_PREFETCH);
        r.words[(self.head + r.len) % MarkerConfig::MAX_PREFETCH] = w;
        r.len += 1;
    }

    /// Replaces every word held with `f` of it, in place.
    pub(crate) fn rewrite(&mut self, mut f: impl FnMut(usize) -> usize) {
        let r = &mut self.ring;
        for i in 0..r.len {
            let at = (self.head + i) % MarkerConfig::MAX_PREFETCH;
            r.words[at] = f(r.words[at]);
        }
    }

    /// The `i`-th oldest word held, if the FIFO holds more than `i`.
    #[inline(always)]
    pub(crate) fn peek(&self, i: usize) -> Option<usize> {
        let r = &self.ring;
        (i < r.len).then(|| r.words[(self.head + i) % MarkerConfig::MAX_PREFETCH])
    }

    /// Removes the oldest word.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<usize> {
        let r = &mut self.ring;
        if r.len == 0 {
            return None;
        }
        let w = r.words[self.head];
        self.head = (self.head + 1) % MarkerConfig::MAX_PREFETCH;
        r.len -= 1;
        Some(w)
    }
}

/// Objects scanned between two countings of live objects (the worker's
/// `account`): the batch's capacity.
pub(crate) const ACCOUNT_BATCH: usize = 32;

/// A fixed buffer of mark-stack words, filled one by one and emptied at
/// once (the objects scanned and not yet counted live).
pub(crate) type Batch = Words<ACCOUNT_BATCH>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_across_wrap() {
        let mut f = Fifo::new();
        for round in 0..5 {
            for i in 0..10 {
                f.push(round * 100 + i);
            }
            for i in 0..10 {
                assert_eq!(f.peek(9 - i), Some(round * 100 + 9));
                assert_eq!(f.peek(10 - i), None);
                assert_eq!(f.pop(), Some(round * 100 + i));
            }
        }
        assert_eq!(f.pop(), None);
        assert_eq!(f.len(), 0);
    }

    #[test]
    fn rewrite_changes_each_held_word_across_wrap() {
        let mut f = Fifo::new();
        for i in 0..MarkerConfig::MAX_PREFETCH - 2 {
            f.push(i);
            assert_eq!(f.pop(), Some(i));
        }
        for i in 0..5 {
            f.push(i);
        }
        f.rewrite(|w| w * 10 + 1);
        let held: Vec<usize> = std::iter::from_fn(|| f.pop()).collect();
        assert_eq!(held, [1, 11, 21, 31, 41]);
        let mut b = Batch::new();
        b.push(3);
        b.push(4);
        b.as_mut_slice()[1] = 7;
        assert_eq!(b.as_slice(), [3, 7]);
    }

    #[test]
    fn batch_holds_what_was_pushed_until_cleared() {
        let mut b = Batch::new();
        for w in 0..ACCOUNT_BATCH {
            b.push(w * 8);
        }
        assert_eq!(b.len(), ACCOUNT_BATCH);
        let held: Vec<usize> = (0..ACCOUNT_BATCH).map(|w| w * 8).collect();
        assert_eq!(b.as_slice(), held.as_slice());
        b.clear();
        assert_eq!(b.len(), 0);
        assert!(b.as_slice().is_empty());
    }
}
