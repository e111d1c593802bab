//! The edge delay line: strong targets wait here between being found in a
//! slot and having their mark bits tested, while the prefetch of those
//! bits is in flight.
//!
//! Every strong slot of every scanned object passes through it, so its
//! one operation is a swap: the new edge takes the place of the edge
//! [`EDGE_DEPTH`] pushes older, which comes out. That is a load, a store
//! and the position's increment, where a FIFO pushes, tests its length
//! and pops. The line keeps no count of what it holds: a count updated per
//! edge is a read-modify-write of memory in the slot loop's dependency
//! chain (it made the one-worker mark of a generated random heap slower
//! than the FIFO's). Emptiness and the oldest edge are found by looking at
//! the positions, which only the flushes do.

/// Edges delayed between finding them and testing their mark bits (a power
/// of two: the position wraps with a mask).
pub(crate) const EDGE_DEPTH: usize = 8;

/// A ring of [`EDGE_DEPTH`] mark-stack words in which 0 is an empty
/// position (no object reference or tagged word is 0). The held edges are
/// the positions just before `at`, oldest first (each push fills `at`;
/// each pop empties the oldest).
pub(crate) struct DelayLine {
    ring: [usize; EDGE_DEPTH],
    /// The position the next edge takes: the oldest held edge's when the
    /// line is full.
    at: usize,
}

impl DelayLine {
    pub(crate) const fn new() -> DelayLine {
        DelayLine {
            ring: [0; EDGE_DEPTH],
            at: 0,
        }
    }

    /// Whether no edge is held.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.ring.iter().all(|&w| w == 0)
    }

    /// Takes in `w` (not 0) and gives out the edge pushed [`EDGE_DEPTH`]
    /// pushes before it, or `None` while the line is not yet full.
    #[inline(always)]
    pub(crate) fn swap(&mut self, w: usize) -> Option<usize> {
        debug_assert_ne!(w, 0, "0 marks an empty position");
        let at = self.at & (EDGE_DEPTH - 1);
        let old = std::mem::replace(&mut self.ring[at], w);
        self.at = (at + 1) & (EDGE_DEPTH - 1);
        (old != 0).then_some(old)
    }

    /// Takes out the oldest held edge: the first one from `at` on.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<usize> {
        (0..EDGE_DEPTH)
            .map(|i| (self.at + i) & (EDGE_DEPTH - 1))
            .find(|&i| self.ring[i] != 0)
            .map(|i| std::mem::take(&mut self.ring[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line against a model FIFO of depth [`EDGE_DEPTH`], through
    /// partial fills, full runs and flushes at every length.
    #[test]
    fn behaves_as_a_fifo_of_fixed_depth() {
        let mut line = DelayLine::new();
        let mut model = std::collections::VecDeque::new();
        let mut next = 1usize;
        for run in 0..3 * EDGE_DEPTH {
            for _ in 0..run {
                model.push_back(next);
                let expected = (model.len() > EDGE_DEPTH).then(|| model.pop_front().unwrap());
                assert_eq!(line.swap(next), expected);
                assert_eq!(line.is_empty(), model.is_empty());
                next += 1;
            }
            // Flush part of the line, or all of it.
            for _ in 0..(run % (EDGE_DEPTH + 2)) {
                assert_eq!(line.pop(), model.pop_front());
                assert_eq!(line.is_empty(), model.is_empty());
            }
        }
        while let Some(w) = model.pop_front() {
            assert_eq!(line.pop(), Some(w));
        }
        assert_eq!(line.pop(), None);
        assert!(line.is_empty());
    }
}
