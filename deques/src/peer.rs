//! crossbeam-deque behind this crate's traits: the peer to beat.
//!
//! The owner is a LIFO [`crossbeam_deque::Worker`], like a GC mark stack; the
//! thief is its [`crossbeam_deque::Stealer`]. `steal_half` is crossbeam's
//! `steal_batch_with_limit` into the thief's own worker, with no cap on the
//! batch, so that it moves half of the victim's items like the other deques.
//!
//! crossbeam steals a batch from a LIFO worker one item at a time, with one
//! CAS per item (a FIFO worker gives a whole batch for one CAS). The thief
//! counters reflect that: they count one CAS per item moved.
//!
//! Unlike the other deques, crossbeam reads slots racily (it copies the slot
//! and discards the copy if the CAS fails), which Miri reports; this adapter
//! is the baseline only, and its tests do not run under Miri.

use crossbeam_deque::{Stealer, Worker};

use crate::handle::owner_methods;
use crate::{DequeKind, OwnerStats, Steal, ThiefStats, WorkDeque};

/// The crossbeam-deque peer kind (`crossbeam`): a LIFO worker and its stealer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crossbeam;

impl WorkDeque for Crossbeam {
    type Owner = CrossbeamOwner;
    type Thief = CrossbeamThief;
    const KIND: DequeKind = DequeKind::Crossbeam;

    /// crossbeam's worker grows and shrinks on its own; `capacity` is unused.
    fn with_capacity(_capacity: usize) -> (CrossbeamOwner, CrossbeamThief) {
        let worker = Worker::new_lifo();
        let stealer = worker.stealer();
        let owner = CrossbeamOwner {
            worker,
            stats: OwnerStats::default(),
        };
        (owner, CrossbeamThief { stealer })
    }
}

/// The owner handle of a [`Crossbeam`] deque: a LIFO crossbeam worker.
#[derive(Debug)]
pub struct CrossbeamOwner {
    worker: Worker<usize>,
    stats: OwnerStats,
}

/// A thief handle of a [`Crossbeam`] deque: a crossbeam stealer.
#[derive(Debug, Clone)]
pub struct CrossbeamThief {
    stealer: Stealer<usize>,
}

impl crate::Owner for CrossbeamOwner {
    type Thief = CrossbeamThief;

    #[inline]
    fn push(&mut self, item: usize) -> Result<(), usize> {
        self.worker.push(item);
        self.stats.pushes += 1;
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        let item = self.worker.pop();
        if item.is_some() {
            self.stats.pops += 1;
        }
        item
    }

    fn len(&self) -> usize {
        self.worker.len()
    }

    fn thief(&self) -> CrossbeamThief {
        CrossbeamThief {
            stealer: self.worker.stealer(),
        }
    }

    owner_methods!();
}

impl crate::Thief for CrossbeamThief {
    type Owner = CrossbeamOwner;

    #[inline]
    fn steal(&self, stats: &mut ThiefStats) -> Steal<usize> {
        stats.steal_attempts += 1;
        stats.cas_attempted += 1;
        match self.stealer.steal() {
            crossbeam_deque::Steal::Success(item) => {
                stats.cas_succeeded += 1;
                stats.steal_successes += 1;
                stats.items_stolen += 1;
                Steal::Success(item)
            }
            crossbeam_deque::Steal::Empty => {
                // crossbeam returns before its CAS when it sees an empty deque.
                stats.cas_attempted -= 1;
                Steal::Empty
            }
            crossbeam_deque::Steal::Retry => {
                stats.steal_aborts += 1;
                Steal::Abort
            }
        }
    }

    fn steal_half(&self, dest: &mut CrossbeamOwner, stats: &mut ThiefStats) -> Steal<usize> {
        stats.steal_attempts += 1;
        let before = dest.worker.len();
        let result = self
            .stealer
            .steal_batch_with_limit(&dest.worker, usize::MAX);
        // Exact unless thieves of `dest` steal from it meanwhile; then a lower bound.
        let moved = dest.worker.len().saturating_sub(before);
        // One CAS per item taken from a LIFO worker, plus the one that lost a
        // race if the batch ended early or aborted.
        stats.cas_succeeded += moved as u64;
        stats.cas_attempted += moved as u64;
        match result {
            crossbeam_deque::Steal::Success(()) => {
                stats.steal_successes += 1;
                let moved = moved.max(1);
                stats.items_stolen += moved as u64;
                Steal::Success(moved)
            }
            crossbeam_deque::Steal::Empty => Steal::Empty,
            crossbeam_deque::Steal::Retry => {
                stats.cas_attempted += 1;
                stats.steal_aborts += 1;
                Steal::Abort
            }
        }
    }

    fn len(&self) -> usize {
        self.stealer.len()
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::{Owner, Thief};

    #[test]
    fn lifo_owner_fifo_thief() {
        let (mut o, t) = Crossbeam::with_capacity(0);
        for i in 0..5 {
            o.push(i).unwrap();
        }
        let mut s = ThiefStats::default();
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        assert_eq!(o.pop(), Some(4));
        assert_eq!((o.len(), t.len()), (3, 3));
        assert_eq!((s.items_stolen, s.cas_succeeded), (1, 1));
        assert_eq!(o.stats().pushes, 5);
        o.reset_stats();
        assert_eq!(*o.stats(), OwnerStats::default());
    }

    #[test]
    fn steal_half_moves_half_into_dest() {
        let (mut a, ta) = Crossbeam::with_capacity(0);
        let (mut b, tb) = Crossbeam::with_capacity(0);
        for i in 0..101 {
            a.push(i).unwrap();
        }
        let mut s = ThiefStats::default();
        assert_eq!(ta.steal_half(&mut b, &mut s), Steal::Success(51));
        assert_eq!((a.len(), b.len()), (50, 51));
        assert_eq!(s.items_stolen, 51);
        assert_eq!(s.cas_succeeded, 51);
        let (mut c, _tc) = Crossbeam::with_capacity(0);
        let (_d, td) = Crossbeam::with_capacity(0);
        assert_eq!(td.steal_half(&mut c, &mut s), Steal::Empty);
        let mut all: Vec<usize> = std::iter::from_fn(|| a.pop().or_else(|| b.pop())).collect();
        all.sort_unstable();
        assert_eq!(all, (0..101).collect::<Vec<_>>());
        drop(tb);
    }
}
