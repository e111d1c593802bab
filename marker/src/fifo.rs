//! The prefetch FIFO between a worker's mark stack and its scan loop, and
//! the batch of objects scanned that wait to be counted live.
//!
//! An object popped from the stack is prefetched and enters the FIFO; it is
//! scanned when it leaves, `depth` pops later, by which time its cache line
//! has usually arrived (Cher, Hosking and Vijaykumar's buffered prefetch).

use crate::config::MarkerConfig;

/// A fixed ring of up to [`MarkerConfig::MAX_PREFETCH`] mark-stack words.
pub(crate) struct Fifo {
    ring: [usize; MarkerConfig::MAX_PREFETCH],
    head: usize,
    len: usize,
}

impl Fifo {
    pub(crate) const fn new() -> Fifo {
        Fifo {
            ring: [0; MarkerConfig::MAX_PREFETCH],
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `w`; the caller keeps `len() < MAX_PREFETCH`.
    #[inline(always)]
    pub(crate) fn push(&mut self, w: usize) {
        debug_assert!(self.len < MarkerConfig::MAX_PREFETCH);
        let i = (self.head + self.len) % MarkerConfig::MAX_PREFETCH;
        self.ring[i] = w;
        self.len += 1;
    }

    /// Removes the oldest word.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let w = self.ring[self.head];
        self.head = (self.head + 1) % MarkerConfig::MAX_PREFETCH;
        self.len -= 1;
        Some(w)
    }
}

/// A fixed buffer of mark-stack words, filled one by one and emptied at
/// once (the objects scanned and not yet counted live).
pub(crate) struct Batch {
    words: [usize; ACCOUNT_BATCH],
    len: usize,
}

/// Objects scanned between two countings of live objects (the worker's
/// `account`): the batch's capacity.
pub(crate) const ACCOUNT_BATCH: usize = 32;

impl Batch {
    pub(crate) const fn new() -> Batch {
        Batch {
            words: [0; ACCOUNT_BATCH],
            len: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `w`; the caller empties a full batch first.
    #[inline(always)]
    pub(crate) fn push(&mut self, w: usize) {
        self.words[self.len] = w;
        self.len += 1;
    }

    /// The words in the batch.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[usize] {
        &self.words[..self.len]
    }

    /// Empties the batch.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

impl<'a> IntoIterator for &'a Batch {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.words[..self.len].iter()
    }
}

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
                assert_eq!(f.pop(), Some(round * 100 + i));
            }
        }
        assert_eq!(f.pop(), None);
        assert_eq!(f.len(), 0);
    }
}
