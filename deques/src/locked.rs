//! A lock-based baseline: a `parking_lot::Mutex<VecDeque>` per deque.
//!
//! Owner and thieves take the same lock for every operation. It is the
//! yardstick the lock-free deques must beat, and it provides the symmetric
//! [`balance`] of Herlihy and Shavit's work-balancing queues, which locks
//! two queues in a canonical (address) order so that two balancers working
//! on the same pair in opposite roles cannot deadlock.
//!
//! ```
//! use stealmark_deques::locked::{balance, Locked};
//! use stealmark_deques::{Owner, Thief, WorkDeque};
//!
//! let (mut a, ta) = Locked::with_capacity(8);
//! let (_b, tb) = Locked::with_capacity(8);
//! for i in 0..10 {
//!     a.push(i).unwrap();
//! }
//! assert_eq!(balance(&ta, &tb), 5);
//! assert_eq!((ta.len(), tb.len()), (5, 5));
//! ```

use std::cell::Cell;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};

use crate::handle::owner_methods;
use crate::{DequeKind, OwnerStats, Steal, ThiefStats, WorkDeque};

/// The locked deque kind (`locked`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Locked;

impl WorkDeque for Locked {
    type Owner = LockedOwner;
    type Thief = LockedThief;
    const KIND: DequeKind = DequeKind::Locked;

    fn with_capacity(capacity: usize) -> (LockedOwner, LockedThief) {
        let queue = Arc::new(CachePadded::new(Mutex::new(VecDeque::with_capacity(
            capacity.max(1),
        ))));
        let owner = LockedOwner {
            queue: Arc::clone(&queue),
            stats: OwnerStats::default(),
            _not_sync: PhantomData,
        };
        (owner, LockedThief { queue })
    }
}

type Queue = CachePadded<Mutex<VecDeque<usize>>>;

/// The owner handle of a [`Locked`] deque. It grows without bound.
#[derive(Debug)]
pub struct LockedOwner {
    queue: Arc<Queue>,
    stats: OwnerStats,
    /// Owner handles are `Send` but not `Sync`, like the lock-free ones.
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief handle of a [`Locked`] deque.
#[derive(Debug, Clone)]
pub struct LockedThief {
    queue: Arc<Queue>,
}

impl crate::Owner for LockedOwner {
    type Thief = LockedThief;

    fn push(&mut self, item: usize) -> Result<(), usize> {
        self.queue.lock().push_back(item);
        self.stats.pushes += 1;
        Ok(())
    }

    fn pop(&mut self) -> Option<usize> {
        let item = self.queue.lock().pop_back();
        if item.is_some() {
            self.stats.pops += 1;
        }
        item
    }

    fn len(&self) -> usize {
        self.queue.lock().len()
    }

    owner_methods!(thief: LockedThief { queue });
}

/// Locks two distinct queues in address order, returning the guards in
/// argument order.
fn lock_pair<'a>(
    a: &'a Queue,
    b: &'a Queue,
) -> (
    MutexGuard<'a, VecDeque<usize>>,
    MutexGuard<'a, VecDeque<usize>>,
) {
    debug_assert!(!std::ptr::eq(a, b), "lock_pair on one queue");
    if (a as *const Queue) < (b as *const Queue) {
        let ga = a.lock();
        (ga, b.lock())
    } else {
        let gb = b.lock();
        (a.lock(), gb)
    }
}

/// Moves the `count` oldest items of `from` to the bottom of `to`, oldest
/// first, so that `to`'s owner pops the youngest of them first.
fn move_oldest(from: &mut VecDeque<usize>, to: &mut VecDeque<usize>, count: usize) {
    to.extend(from.drain(..count));
}

impl crate::Thief for LockedThief {
    type Owner = LockedOwner;

    fn steal(&self, stats: &mut ThiefStats) -> Steal<usize> {
        stats.steal_attempts += 1;
        match self.queue.lock().pop_front() {
            Some(item) => {
                stats.steal_successes += 1;
                stats.items_stolen += 1;
                Steal::Success(item)
            }
            None => Steal::Empty,
        }
    }

    fn steal_half(&self, dest: &mut LockedOwner, stats: &mut ThiefStats) -> Steal<usize> {
        stats.steal_attempts += 1;
        if Arc::ptr_eq(&self.queue, &dest.queue) {
            // Stealing from oneself moves nothing.
            return Steal::Empty;
        }
        let (mut victim, mut mine) = lock_pair(&self.queue, &dest.queue);
        let count = victim.len().div_ceil(2);
        if count == 0 {
            return Steal::Empty;
        }
        move_oldest(&mut victim, &mut mine, count);
        stats.steal_successes += 1;
        stats.items_stolen += count as u64;
        Steal::Success(count)
    }

    fn len(&self) -> usize {
        self.queue.lock().len()
    }
}

/// The symmetric balancing step of Herlihy and Shavit's work-balancing
/// queues: locks both queues in a canonical (address) order, then moves
/// items from the longer to the shorter until their lengths differ by at
/// most one. Returns the number of items moved.
///
/// The oldest items of the longer queue move to the bottom of the shorter
/// one. Balancing a queue with itself moves nothing.
pub fn balance(a: &LockedThief, b: &LockedThief) -> usize {
    if Arc::ptr_eq(&a.queue, &b.queue) {
        return 0;
    }
    let (mut qa, mut qb) = lock_pair(&a.queue, &b.queue);
    let (long, short) = if qa.len() >= qb.len() {
        (&mut *qa, &mut *qb)
    } else {
        (&mut *qb, &mut *qa)
    };
    let count = (long.len() - short.len()) / 2;
    move_oldest(long, short, count);
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Owner, Thief};

    #[test]
    fn lifo_owner_fifo_thief() {
        let (mut o, t) = Locked::with_capacity(2);
        for i in 0..5 {
            o.push(i).unwrap();
        }
        let mut s = ThiefStats::default();
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        assert_eq!(o.pop(), Some(4));
        assert_eq!(o.len(), 3);
        assert_eq!(t.len(), 3);
        assert_eq!(s.items_stolen, 1);
        assert_eq!(o.stats().pushes, 5);
        assert_eq!(o.stats().pops, 1);
        o.reset_stats();
        assert_eq!(*o.stats(), OwnerStats::default());
    }

    #[test]
    fn steal_half_takes_the_oldest_half() {
        let (mut a, ta) = Locked::with_capacity(4);
        let (mut b, _tb) = Locked::with_capacity(4);
        for i in 0..7 {
            a.push(i).unwrap();
        }
        let mut s = ThiefStats::default();
        assert_eq!(ta.steal_half(&mut b, &mut s), Steal::Success(4));
        assert_eq!(a.len(), 3);
        assert_eq!((b.pop(), b.pop()), (Some(3), Some(2)));
        assert_eq!(s.items_stolen, 4);
        let (mut c, tc) = Locked::with_capacity(1);
        assert_eq!(tc.steal_half(&mut b, &mut s), Steal::Empty);
        let tself = c.thief();
        c.push(1).unwrap();
        assert_eq!(tself.steal_half(&mut c, &mut s), Steal::Empty);
    }

    #[test]
    fn balance_is_symmetric_and_deadlock_free() {
        let (mut a, ta) = Locked::with_capacity(4);
        let (_b, tb) = Locked::with_capacity(4);
        for i in 0..9 {
            a.push(i).unwrap();
        }
        assert_eq!(balance(&tb, &ta), 4);
        assert_eq!((ta.len(), tb.len()), (5, 4));
        assert_eq!(balance(&ta, &ta), 0);
        // Two threads balancing the same pair in opposite argument orders.
        std::thread::scope(|s| {
            let (x, y) = (ta.clone(), tb.clone());
            s.spawn(move || (0..2000).for_each(|_| _ = balance(&x, &y)));
            let (x, y) = (ta.clone(), tb.clone());
            s.spawn(move || (0..2000).for_each(|_| _ = balance(&y, &x)));
        });
        assert_eq!(ta.len() + tb.len(), 9);
    }
}
