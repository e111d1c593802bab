//! The Chase-Lev dynamic circular work-stealing deque (SPAA 2005), with the
//! C11 memory orderings of Lê, Pop, Cohen and Zappa Nardelli (PPoPP 2013).
//!
//! `top` and `bottom` are unbounded logical indices into a circular array
//! (`buffer.rs`). The owner pushes and pops at `bottom` without any
//! read-modify-write except when it takes the last item, which it races for
//! with a CAS on `top`; thieves CAS `top` to take one item.
//!
//! The array grows by doubling when a push finds it full, and shrinks by half
//! when a pop leaves fewer than `capacity / SHRINK_FACTOR` items (but never
//! below the initial capacity), so the deque never overflows and never holds
//! on to a huge array after a burst. When thieves have emptied the deque, the
//! owner's next pop (which finds it empty) shrinks the array straight back to
//! the initial capacity. Retired arrays are reclaimed with crossbeam-epoch
//! ([`ChaseLev`]) or at a quiescent point ([`ChaseLevQuiescent`], freed by
//! [`Owner::quiesce`](crate::Owner::quiesce)).
//!
//! ```
//! use stealmark_deques::chase_lev::ChaseLev;
//! use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};
//!
//! let (mut owner, thief) = ChaseLev::with_capacity(2);
//! for i in 0..10 {
//!     owner.push(i).unwrap(); // grows: never full
//! }
//! let mut stats = ThiefStats::default();
//! assert_eq!(thief.steal(&mut stats), Steal::Success(0));
//! assert_eq!(owner.pop(), Some(9));
//! assert_eq!(owner.len(), 8);
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::buffer::SharedBuffer;
pub use crate::buffer::{Epoch, Quiescent, Reclaim};
use crate::handle::{arc_handles, array_methods, owner_methods};
use crate::sync::{fence, AtomicIsize, Ordering};
use crate::{DequeKind, OwnerStats, Steal, ThiefStats, WorkDeque};

pub use crate::buffer::SHRINK_FACTOR;

/// The Chase-Lev kind (`chase-lev`), with epoch-based reclamation.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChaseLev;

/// The Chase-Lev kind with quiescent-point reclamation (`chase-lev-q`):
/// steals pin nothing; retired arrays live until the deque is dropped or
/// until the owner calls [`Owner::quiesce`](crate::Owner::quiesce).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChaseLevQuiescent;

impl WorkDeque for ChaseLev {
    type Owner = ChaseLevOwner<Epoch>;
    type Thief = ChaseLevThief<Epoch>;
    const KIND: DequeKind = DequeKind::ChaseLev;

    /// # Panics
    ///
    /// If `capacity` rounded up to a power of two overflows `usize`.
    fn with_capacity(capacity: usize) -> (Self::Owner, Self::Thief) {
        new(capacity, 0)
    }

    fn with_capacity_near_wrap(capacity: usize, before_wrap: usize) -> (Self::Owner, Self::Thief) {
        new(capacity, isize::MIN.wrapping_sub_unsigned(before_wrap))
    }
}

impl WorkDeque for ChaseLevQuiescent {
    type Owner = ChaseLevOwner<Quiescent>;
    type Thief = ChaseLevThief<Quiescent>;
    const KIND: DequeKind = DequeKind::ChaseLevQuiescent;

    /// # Panics
    ///
    /// If `capacity` rounded up to a power of two overflows `usize`.
    fn with_capacity(capacity: usize) -> (Self::Owner, Self::Thief) {
        new(capacity, 0)
    }

    fn with_capacity_near_wrap(capacity: usize, before_wrap: usize) -> (Self::Owner, Self::Thief) {
        new(capacity, isize::MIN.wrapping_sub_unsigned(before_wrap))
    }
}

/// A deque whose indices start at `start` (0, or a few pushes before
/// `bottom` wraps from `isize::MAX` to `isize::MIN`: see
/// `WorkDeque::with_capacity_near_wrap`).
fn new<R: Reclaim>(capacity: usize, start: isize) -> (ChaseLevOwner<R>, ChaseLevThief<R>) {
    // `next_power_of_two` wraps to 0 in a release build when it overflows,
    // and a zero-slot array must never be made.
    let min_capacity = capacity
        .max(2)
        .checked_next_power_of_two()
        .unwrap_or_else(|| panic!("Chase-Lev deque capacity {capacity} overflows usize"));
    let inner = Arc::new(Inner {
        top: CachePadded::new(AtomicIsize::new(start)),
        bottom: CachePadded::new(AtomicIsize::new(start)),
        buffer: CachePadded::new(SharedBuffer::new(min_capacity)),
    });
    let owner = ChaseLevOwner {
        inner: Arc::clone(&inner),
        stats: OwnerStats::default(),
        _not_sync: PhantomData,
    };
    (owner, ChaseLevThief { inner })
}

struct Inner<R: Reclaim> {
    /// The index of the oldest item; only ever incremented, by CAS.
    top: CachePadded<AtomicIsize>,
    /// One past the index of the youngest item; written by the owner only.
    bottom: CachePadded<AtomicIsize>,
    buffer: CachePadded<SharedBuffer<R>>,
}

/// The owner handle of a Chase-Lev deque.
pub struct ChaseLevOwner<R: Reclaim> {
    inner: Arc<Inner<R>>,
    stats: OwnerStats,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief handle of a Chase-Lev deque.
pub struct ChaseLevThief<R: Reclaim> {
    inner: Arc<Inner<R>>,
}

arc_handles!(ChaseLevOwner, ChaseLevThief<R: Reclaim>, inner, [capacity]);

impl<R: Reclaim> ChaseLevOwner<R> {
    array_methods!();

    /// A pop left the deque empty at `top == bottom == end` (it took the
    /// last item, or found that thieves had): gives a grown array back at
    /// once. Otherwise a deque that thieves drained would keep its peak
    /// array until the owner next pops a real item. No thief can claim an
    /// index below `end` any more, and one that claims a later index has
    /// read the `bottom` of a later push, after which it loads the new
    /// array.
    #[inline]
    fn shrink_emptied(&self, capacity: usize, end: isize) {
        self.inner.buffer.shrink_emptied(capacity, end);
    }

    /// Stores `item` at the bottom, growing the array if it is full, without
    /// counting it as a push.
    #[inline]
    fn put(&mut self, item: usize) {
        let inner = &*self.inner;
        // Relaxed: only the owner writes `bottom`.
        let b = inner.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the successful CAS on `top` of a thief, so the
        // thief's read of the slot it took happens before we may reuse it.
        let t = inner.top.load(Ordering::Acquire);
        let mut buf = inner.buffer.owner_load();
        if b.wrapping_sub(t) as usize >= buf.capacity() {
            // The length is below `isize::MAX`, so this never overflows; a
            // real assertion all the same (see `Buffer::alloc`).
            let doubled = buf
                .capacity()
                .checked_mul(2)
                .expect("Chase-Lev deque capacity overflow");
            buf = inner.buffer.replace(doubled, t, b);
        }
        buf.write(b, item);
        if b == isize::MAX {
            hit!(ClIndexWrapped);
        }
        // Release: pairs with the acquire load of `bottom` in `steal`; a thief
        // that sees the new bottom sees the slot (and the array holding it).
        fence(Ordering::Release);
        // Relaxed: published by the release fence above.
        inner.bottom.store(b.wrapping_add(1), Ordering::Relaxed);
    }
}

impl<R: Reclaim> crate::Owner for ChaseLevOwner<R> {
    type Thief = ChaseLevThief<R>;

    #[inline]
    fn push(&mut self, item: usize) -> Result<(), usize> {
        self.put(item);
        self.stats.pushes += 1;
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        let inner = &*self.inner;
        // Relaxed: only the owner writes `bottom`.
        let b = inner.bottom.load(Ordering::Relaxed).wrapping_sub(1);
        let buf = inner.buffer.owner_load();
        // Relaxed: the SeqCst fence below orders it before our load of `top`.
        inner.bottom.store(b, Ordering::Relaxed);
        // SeqCst: pairs with the SeqCst fence in `steal` (Dekker-style): either
        // a thief sees the decremented bottom, or we see its incremented top.
        fence(Ordering::SeqCst);
        // Relaxed: ordered after our store of `bottom` by the fence above,
        // which pairs with the fence in `steal` (Lê et al. load it relaxed).
        let t = inner.top.load(Ordering::Relaxed);
        let len = b.wrapping_sub(t);
        if len < 0 {
            // Empty (thieves took the rest): `top == b + 1`. Restore bottom.
            // Relaxed: pairs with nothing; with `bottom == top` no thief can
            // take anything, and the next push publishes with its fence.
            inner.bottom.store(b.wrapping_add(1), Ordering::Relaxed);
            self.shrink_emptied(buf.capacity(), b.wrapping_add(1));
            return None;
        }
        let item = buf.read(b);
        if len == 0 {
            // The last item: race the thieves for it on `top`.
            self.stats.cas_attempted += 1;
            // SeqCst: the CAS is totally ordered with the thieves' CASes on
            // `top` (pairs with them); Relaxed on failure, we read nothing.
            let won = inner
                .top
                .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            // Relaxed: pairs with nothing; `top == b + 1` now (our CAS or a
            // thief's), so restoring `bottom == top` exposes no item.
            inner.bottom.store(b.wrapping_add(1), Ordering::Relaxed);
            if !won {
                hit!(ClLastItemLost);
                self.shrink_emptied(buf.capacity(), b.wrapping_add(1));
                return None;
            }
            hit!(ClLastItemWon);
            self.stats.cas_succeeded += 1;
            // Now empty at `top == bottom == b + 1`.
            self.shrink_emptied(buf.capacity(), b.wrapping_add(1));
        } else {
            inner
                .buffer
                .shrink_if_sparse(buf.capacity(), len as usize, t, b);
        }
        self.stats.pops += 1;
        Some(item)
    }

    fn len(&self) -> usize {
        // Relaxed: an estimate; exact for the owner when no thief runs.
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Relaxed);
        b.wrapping_sub(t).max(0) as usize
    }

    owner_methods!(thief: ChaseLevThief { inner }, quiesce);
}

impl<R: Reclaim> ChaseLevThief<R> {
    #[inline]
    fn steal_one(&self, stats: &mut ThiefStats) -> Steal<usize> {
        let inner = &*self.inner;
        stats.steal_attempts += 1;
        let guard = R::pin();
        // Acquire: pairs with the successful CAS on `top` by the owner or
        // another thief.
        let t = inner.top.load(Ordering::Acquire);
        // SeqCst: pairs with the SeqCst fence in `pop` (see there).
        fence(Ordering::SeqCst);
        // Acquire: pairs with the release fence in `push`, so the slots below
        // `b` and the array holding them are visible.
        let b = inner.bottom.load(Ordering::Acquire);
        if b.wrapping_sub(t) <= 0 {
            return Steal::Empty;
        }
        let buf = inner.buffer.thief_load(&guard);
        let item = buf.thief_read(t);
        stats.cas_attempted += 1;
        // SeqCst: totally ordered with the other CASes on `top` (owner's last
        // item race, other thieves). Relaxed on failure: we discard `item`.
        match inner
            .top
            .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => {
                #[cfg(loom)]
                if buf.is_retired() {
                    hit!(ClStealFromRetiredArray);
                }
                stats.cas_succeeded += 1;
                stats.steal_successes += 1;
                stats.items_stolen += 1;
                Steal::Success(item)
            }
            Err(_) => {
                hit!(ClStealAborted);
                stats.steal_aborts += 1;
                Steal::Abort
            }
        }
    }

    /// Moves up to `limit` items, one CAS each, from the top of this deque to
    /// the bottom of `dest`, oldest first, stopping at the first steal that
    /// finds the deque empty or loses a race. Returns the number moved
    /// (`Empty` or `Abort` if the first steal failed).
    ///
    /// Chase-Lev cannot take several items with one CAS: the owner pops
    /// without any CAS while more than one item is left, so a thief that
    /// claimed a range could collide with pops it cannot see. This is the
    /// batch steal the StealHalf deque improves on.
    ///
    /// The counters record one steal attempt for the whole batch, as for
    /// StealHalf (see [`ThiefStats`]), and the moved items are not counted
    /// as pushes of `dest`.
    pub fn steal_batch(
        &self,
        dest: &mut ChaseLevOwner<R>,
        limit: usize,
        stats: &mut ThiefStats,
    ) -> Steal<usize> {
        crate::steal_each(
            stats,
            limit,
            |singles| self.steal_one(singles),
            |item| dest.put(item),
        )
    }
}

impl<R: Reclaim> crate::Thief for ChaseLevThief<R> {
    type Owner = ChaseLevOwner<R>;

    #[inline]
    fn steal(&self, stats: &mut ThiefStats) -> Steal<usize> {
        self.steal_one(stats)
    }

    fn steal_half(&self, dest: &mut ChaseLevOwner<R>, stats: &mut ThiefStats) -> Steal<usize> {
        if Arc::ptr_eq(&self.inner, &dest.inner) {
            return Steal::Empty;
        }
        let half = crate::Thief::len(self).div_ceil(2).max(1);
        self.steal_batch(dest, half, stats)
    }

    fn len(&self) -> usize {
        // Acquire: pairs with the successful CASes on `top` and with the
        // release fence in `push`. Only an estimate (clamped at zero):
        // nothing is read through these values.
        let t = self.inner.top.load(Ordering::Acquire);
        let b = self.inner.bottom.load(Ordering::Acquire);
        b.wrapping_sub(t).max(0) as usize
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{Owner, Thief};

    #[test]
    fn grows_and_shrinks() {
        let (mut o, t) = ChaseLev::with_capacity(4);
        assert_eq!(o.capacity(), 4);
        for i in 0..100 {
            o.push(i).unwrap();
        }
        assert_eq!(o.capacity(), 128);
        let mut s = ThiefStats::default();
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        for i in (30..100).rev() {
            assert_eq!(o.pop(), Some(i));
        }
        assert!(o.capacity() < 128);
        for i in (1..30).rev() {
            assert_eq!(o.pop(), Some(i));
        }
        assert_eq!(o.pop(), None);
        assert_eq!(o.capacity(), 4);
        assert_eq!(t.steal(&mut s), Steal::Empty);
    }

    #[test]
    fn batch_steal_moves_half_and_counts_one_steal() {
        let (mut a, ta) = ChaseLev::with_capacity(8);
        let (mut b, _tb) = ChaseLev::with_capacity(8);
        for i in 0..9 {
            a.push(i).unwrap();
        }
        let mut s = ThiefStats::default();
        assert_eq!(ta.steal_half(&mut b, &mut s), Steal::Success(5));
        assert_eq!((a.len(), b.len()), (4, 5));
        let expected = ThiefStats {
            steal_attempts: 1,
            steal_successes: 1,
            steal_aborts: 0,
            items_stolen: 5,
            cas_attempted: 5,
            cas_succeeded: 5,
        };
        assert_eq!(s, expected);
        // Stolen items are not pushes of the thief's deque.
        assert_eq!(b.stats().pushes, 0);
        assert_eq!(b.pop(), Some(4));
        let self_thief = a.thief();
        assert_eq!(self_thief.steal_half(&mut a, &mut s), Steal::Empty);
    }
}
