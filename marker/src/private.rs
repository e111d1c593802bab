//! The private part of a worker's mark stack.
//!
//! Every pop from a work-stealing deque pays a full fence (the owner orders
//! its `bottom` store before it reads `top`), and a fence stalls until the
//! scan's outstanding cache misses complete: at one pop per object that
//! costs a marker much of its memory-level parallelism. So new grey objects
//! go to this private stack, and a worker shares its *oldest* private items
//! — nearest the roots, with the largest subgraphs below them, which is what
//! thieves want — through its deque: a small reserve while every worker is
//! busy, half of them while any worker is idle (see `Worker::share`).
//!
//! It is a `Vec` used as a stack from the top and drained from the bottom
//! (`base`), so pushes and pops cost what a `Vec`'s do; the capacity is kept
//! between phases.

/// A stack that can also give away its oldest items.
#[derive(Debug, Default)]
pub(crate) struct PrivateStack {
    items: Vec<usize>,
    /// Items below this index have been given away.
    base: usize,
}

impl PrivateStack {
    /// The number of items.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.items.len() - self.base
    }

    /// Pushes `w`. The common case tests one thing, that the buffer has
    /// room (the `Vec`'s own test then folds away); a full buffer takes
    /// the cold path.
    #[inline(always)]
    pub(crate) fn push(&mut self, w: usize) {
        if self.items.len() == self.items.capacity() {
            return self.push_full(w);
        }
        self.items.push(w);
    }

    /// Pushes `w` if `keep`, without a branch on `keep` while the buffer
    /// has room: `w` is written at the first spare place above the top,
    /// and the top moves up by `keep`. For the mark loop, where `keep` is
    /// whether the worker just set the target's mark bit, a branch taken
    /// unpredictably, so a mispredicted one, for about one slot in five. A
    /// full buffer takes [`PrivateStack::push`]'s cold path, if `keep`.
    #[inline(always)]
    pub(crate) fn push_if(&mut self, w: usize, keep: bool) {
        let len = self.items.len();
        let Some(place) = self.items.spare_capacity_mut().first_mut() else {
            if keep {
                self.push_full(w);
            }
            return;
        };
        place.write(w);
        // SAFETY: the element at `len` is initialised (written just above,
        // at the first spare place, so `len < capacity`), and the length
        // grows by at most one.
        unsafe { self.items.set_len(len + usize::from(keep)) };
    }

    /// [`PrivateStack::push`] onto a full buffer: compacts it, if items
    /// were given away, or grows it.
    #[cold]
    #[inline(never)]
    fn push_full(&mut self, w: usize) {
        if self.base > 0 {
            self.compact();
        }
        self.items.push(w);
    }

    /// Pops the newest item. An empty stack whose items were all given
    /// away is reset (`clear`), so that pushes reuse the buffer from its
    /// start; one that is empty from the start is left alone: in the pure
    /// mode (private stack off) every pop of the mark loop looks here first
    /// and finds it so, and then stores nothing.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<usize> {
        if self.items.len() > self.base {
            self.items.pop()
        } else {
            if self.base != 0 {
                self.clear();
            }
            None
        }
    }

    /// Removes and returns up to `n` of the oldest items, oldest first.
    pub(crate) fn take_oldest(&mut self, n: usize) -> &[usize] {
        let lo = self.base;
        let hi = (lo + n).min(self.items.len());
        self.base = hi;
        &self.items[lo..hi]
    }

    /// Empties the stack, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.base = 0;
    }

    /// Moves the live items down over the given-away ones, when that frees
    /// at least half the buffer (so compaction is amortised O(1) per push);
    /// otherwise the `Vec` grows as usual.
    #[cold]
    fn compact(&mut self) {
        if self.base >= self.items.len() / 2 {
            self.items.copy_within(self.base.., 0);
            self.items.truncate(self.items.len() - self.base);
            self.base = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_at_the_top_oldest_first_at_the_bottom() {
        let mut s = PrivateStack::default();
        for i in 0..10 {
            s.push(i);
        }
        assert_eq!(s.take_oldest(3), &[0, 1, 2]);
        assert_eq!(s.len(), 7);
        assert_eq!(s.pop(), Some(9));
        for i in 10..100 {
            s.push(i);
        }
        assert_eq!(s.take_oldest(2), &[3, 4]);
        let mut rest = Vec::new();
        while let Some(w) = s.pop() {
            rest.push(w);
        }
        let mut expect: Vec<usize> = (5..9).chain(10..100).collect();
        expect.reverse();
        assert_eq!(rest, expect);
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn emptied_after_giving_away_starts_over_at_the_bottom() {
        let mut s = PrivateStack::default();
        s.push(1);
        s.push(2);
        assert_eq!(s.take_oldest(1), &[1]);
        assert_eq!(s.pop(), Some(2));
        assert_eq!(s.pop(), None);
        assert_eq!((s.items.len(), s.base), (0, 0));
        assert_eq!(s.pop(), None);
        s.push(3);
        assert_eq!(s.take_oldest(5), &[3]);
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn push_if_keeps_what_it_is_told_to_keep_full_buffer_or_not() {
        let mut s = PrivateStack::default();
        s.push_if(1, false);
        assert_eq!(s.len(), 0);
        s.push_if(2, true);
        while s.items.len() < s.items.capacity() {
            s.push(0);
        }
        let full = s.len();
        s.push_if(3, false);
        assert_eq!(s.len(), full, "a full buffer and keep = false: nothing");
        s.push_if(4, true);
        assert_eq!(s.len(), full + 1, "a full buffer and keep = true: grown");
        assert_eq!(s.pop(), Some(4));
        assert_eq!(s.take_oldest(1), &[2]);
    }

    /// Random pushes, conditional pushes, pops and give-aways, against a
    /// deque as the model; enough of them to grow and compact the buffer
    /// often (fewer under Miri, still past the first growths).
    #[test]
    fn matches_a_deque_model() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut s = PrivateStack::default();
        let mut model = std::collections::VecDeque::new();
        let steps = if cfg!(miri) { 3_000 } else { 200_000 };
        for i in 0..steps {
            match next() % 8 {
                0..=1 => {
                    s.push(i);
                    model.push_back(i);
                }
                2..=3 => {
                    let keep = next() % 2 == 0;
                    s.push_if(i, keep);
                    if keep {
                        model.push_back(i);
                    }
                }
                4..=6 => assert_eq!(s.pop(), model.pop_back()),
                _ => {
                    let n = (next() % 40) as usize;
                    let given: Vec<usize> = s.take_oldest(n).to_vec();
                    let expect: Vec<usize> = model.drain(..n.min(model.len())).collect();
                    assert_eq!(given, expect);
                }
            }
            assert_eq!(s.len(), model.len());
        }
    }
}
