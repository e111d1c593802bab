//! The edge delay line: strong targets wait here between being found in a
//! slot and having their mark bits tested, while the prefetch of those
//! bits is in flight.
//!
//! Every strong slot of every scanned object passes through it, so its
//! one operation is a swap: the new edge takes the place of the edge
//! as many pushes older as the line is deep, which comes out. That is a load, a store
//! and the position's increment, where a FIFO pushes, tests its length
//! and pops. The line keeps no count of what it holds: a count updated per
//! edge is a read-modify-write of memory in the slot loop's dependency
//! chain (it made the one-worker mark of a generated random heap slower
//! than the FIFO's). Emptiness and the oldest edge are found by looking at
//! the positions, which only the flushes do.
//!
//! How deep: as the mark store asks
//! ([`MarkStore::prefetch_distance`](stealmark_model::MarkStore::prefetch_distance)),
//! once per worker and step.
//! A mark in the object itself misses once per target not seen for a while,
//! and the miss needs a long line to resolve in; a dense side bitmap mostly
//! hits, and there each delayed edge only holds back its target's push.

/// The deepest line a store may ask for
/// ([`MarkStore::prefetch_distance`](stealmark_model::MarkStore::prefetch_distance)).
pub(crate) const MAX_EDGE_DEPTH: usize = 64;

/// A ring of mark-stack words in which 0 is an empty position (no object
/// reference or tagged word is 0), used to a depth fixed when it is made.
/// The held edges are the positions just before `at`, oldest first (each
/// push fills `at`; each pop empties the oldest).
pub(crate) struct DelayLine {
    ring: [usize; MAX_EDGE_DEPTH],
    /// The position the next edge takes: the oldest held edge's when the
    /// line is full.
    at: usize,
    /// The depth less one (the depth is a power of two).
    mask: usize,
}

impl DelayLine {
    /// An empty line as deep as the largest power of two not above
    /// `distance`, within 1 to [`MAX_EDGE_DEPTH`].
    pub(crate) fn new(distance: usize) -> DelayLine {
        let capped = distance.clamp(1, MAX_EDGE_DEPTH);
        DelayLine {
            ring: [0; MAX_EDGE_DEPTH],
            at: 0,
            mask: (1 << capped.ilog2()) - 1,
        }
    }

    /// The ring position of `i`, wrapped to the depth. The mask is below
    /// the ring's length; saying so again with the constant lets the
    /// compiler drop the index's bounds check.
    #[inline(always)]
    fn position(&self, i: usize) -> usize {
        i & self.mask & (MAX_EDGE_DEPTH - 1)
    }

    /// Whether no edge is held.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.ring[..=self.mask].iter().all(|&w| w == 0)
    }

    /// Takes in `w` (not 0) and gives out the edge pushed as many pushes
    /// before it as the line is deep, or `None` while the line is not yet
    /// full.
    #[inline(always)]
    pub(crate) fn swap(&mut self, w: usize) -> Option<usize> {
        debug_assert_ne!(w, 0, "0 marks an empty position");
        let at = self.position(self.at);
        let old = std::mem::replace(&mut self.ring[at], w);
        self.at = (at + 1) & self.mask;
        (old != 0).then_some(old)
    }

    /// Takes out every held edge, oldest first, into `f`, in one pass over
    /// the line (a pop per edge would search from `at` each time); whether
    /// there was any.
    #[inline]
    pub(crate) fn take_all(&mut self, mut f: impl FnMut(usize)) -> bool {
        let mut any = false;
        for i in 0..=self.mask {
            let w = std::mem::take(&mut self.ring[self.position(self.at + i)]);
            if w != 0 {
                any = true;
                f(w);
            }
        }
        any
    }
}

/// A line of depth 1, to stand in for a worker's line while the loop holds it.
impl Default for DelayLine {
    fn default() -> DelayLine {
        DelayLine::new(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line against a model FIFO of the same depth, at every depth,
    /// through partial fills, full runs and flushes (`take_all`).
    #[test]
    fn behaves_as_a_fifo_of_its_depth() {
        for depth in (0..=6).map(|k| 1usize << k) {
            let mut line = DelayLine::new(depth);
            let mut model = std::collections::VecDeque::new();
            let mut next = 1usize;
            for run in 0..3 * depth {
                for _ in 0..run {
                    model.push_back(next);
                    let expected = (model.len() > depth).then(|| model.pop_front().unwrap());
                    assert_eq!(line.swap(next), expected);
                    assert_eq!(line.is_empty(), model.is_empty());
                    next += 1;
                }
                if run % 3 == 0 {
                    let mut taken = Vec::new();
                    let any = line.take_all(|w| taken.push(w));
                    assert_eq!(any, !model.is_empty());
                    assert_eq!(taken, model.drain(..).collect::<Vec<_>>());
                    assert!(line.is_empty());
                }
            }
            let mut taken = Vec::new();
            line.take_all(|w| taken.push(w));
            assert_eq!(taken, model.drain(..).collect::<Vec<_>>());
            assert!(!line.take_all(|_| unreachable!()));
        }
    }

    /// A distance that is not a power of two, or out of range, gives the
    /// largest power of two not above it, within 1 to 64.
    #[test]
    fn the_depth_is_a_power_of_two_from_1_to_64() {
        for (distance, depth) in [
            (0, 1),
            (1, 1),
            (3, 2),
            (8, 8),
            (33, 32),
            (64, 64),
            (1000, 64),
        ] {
            let mut line = DelayLine::new(distance);
            let out: Vec<_> = (1..=depth + 1).map(|w| line.swap(w)).collect();
            assert!(out[..depth].iter().all(Option::is_none), "{distance}");
            assert_eq!(out[depth], Some(1), "{distance}");
        }
    }
}
