//! The bounded Arora-Blumofe-Plaxton deque (SPAA 1998), as in Herlihy and
//! Shavit's `BoundedDEQueue`: an array of `capacity` slots, a `bottom` index
//! written only by the owner, and an `age` word packing `{tag, top}` that
//! thieves advance by CAS.
//!
//! The owner pushes and pops at `bottom` without any read-modify-write; it
//! races for the last item with a CAS on `age`, and when the deque empties it
//! resets `top` and `bottom` to zero and bumps the tag, so that a thief
//! holding the old `age` cannot succeed (the ABA problem). Items live in
//! `[top, bottom)`; since the indices only reset when the deque is empty,
//! `push` gives the item back when `bottom` reaches the capacity, even if
//! thieves have freed slots below `top` (the original algorithm's bound).
//!
//! ```
//! use stealmark_deques::abp::Abp;
//! use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};
//!
//! let (mut owner, thief) = Abp::with_capacity(2);
//! owner.push(1).unwrap();
//! owner.push(2).unwrap();
//! assert_eq!(owner.push(3), Err(3)); // full
//! let mut stats = ThiefStats::default();
//! assert_eq!(thief.steal(&mut stats), Steal::Success(1));
//! assert_eq!(owner.pop(), Some(2));
//! assert_eq!(owner.pop(), None);
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::handle::{arc_handles, owner_methods};
use crate::sync::{fence, zeroed_slots, AtomicU64, AtomicUsize, Ordering};
use crate::{DequeKind, OwnerStats, Steal, ThiefStats, WorkDeque};

/// The largest capacity: `top` is 32 bits of the `age` word.
pub const MAX_CAPACITY: usize = u32::MAX as usize;

/// The ABP kind (`abp`): bounded, `with_capacity` fixes the capacity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Abp;

impl WorkDeque for Abp {
    type Owner = AbpOwner;
    type Thief = AbpThief;
    const KIND: DequeKind = DequeKind::Abp;

    /// Creates a deque of exactly `capacity` slots (at least 1, at most
    /// [`MAX_CAPACITY`]).
    fn with_capacity(capacity: usize) -> (AbpOwner, AbpThief) {
        Abp::with_capacity_near_wrap(capacity, 0)
    }

    /// Starts the tag `before_wrap` resets before it wraps; ABP's indices
    /// reset to 0 whenever the deque empties and never wrap.
    fn with_capacity_near_wrap(capacity: usize, before_wrap: usize) -> (AbpOwner, AbpThief) {
        let capacity = capacity.clamp(1, MAX_CAPACITY);
        let tag = 0u32.wrapping_sub(before_wrap as u32);
        let inner = Arc::new(Inner {
            age: CachePadded::new(AtomicU64::new(Age::new(tag, 0).0)),
            bottom: CachePadded::new(AtomicUsize::new(0)),
            slots: zeroed_slots(capacity),
        });
        let owner = AbpOwner {
            inner: Arc::clone(&inner),
            bottom: 0,
            stats: OwnerStats::default(),
            _not_sync: PhantomData,
        };
        (owner, AbpThief { inner })
    }
}

/// `{tag, top}`: the tag in the high 32 bits, `top` in the low 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Age(u64);

impl Age {
    fn new(tag: u32, top: usize) -> Age {
        Age((u64::from(tag) << 32) | top as u64)
    }

    fn top(self) -> usize {
        (self.0 as u32) as usize
    }

    fn tag(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

struct Inner {
    age: CachePadded<AtomicU64>,
    /// One past the youngest item; written by the owner only.
    bottom: CachePadded<AtomicUsize>,
    slots: Box<[AtomicUsize]>,
}

impl Inner {
    /// Slot `i`, for `i < capacity` (the callers check `i < bottom <= capacity`).
    #[inline]
    fn slot(&self, i: usize) -> &AtomicUsize {
        &self.slots[i]
    }
}

/// The owner handle of an [`Abp`] deque.
pub struct AbpOwner {
    inner: Arc<Inner>,
    /// The owner's copy of `bottom`.
    bottom: usize,
    stats: OwnerStats,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief handle of an [`Abp`] deque.
pub struct AbpThief {
    inner: Arc<Inner>,
}

arc_handles!(AbpOwner, AbpThief, inner, [capacity]);

impl AbpOwner {
    /// The fixed capacity.
    pub fn capacity(&self) -> usize {
        self.inner.slots.len()
    }

    /// The number of pushes that still fit before `bottom` reaches the
    /// capacity.
    pub fn room(&self) -> usize {
        self.capacity() - self.bottom
    }

    /// Stores `item` at the bottom, without counting it as a push; gives it
    /// back if `bottom` has reached the capacity.
    #[inline]
    fn put(&mut self, item: usize) -> Result<(), usize> {
        let b = self.bottom;
        if b == self.inner.slots.len() {
            return Err(item);
        }
        // Relaxed: published by the release fence below.
        self.inner.slot(b).store(item, Ordering::Relaxed);
        // Release fence: pairs with the acquire load of `bottom` in `steal`,
        // so a thief that sees the new bottom sees the slot. A fence rather
        // than a release store, as in Lê et al.'s Chase-Lev: it also publishes
        // the slots to a thief whose acquire load reads a later relaxed store
        // of `bottom` (a pop's decrement or restore), which a release store
        // would not, as a release sequence no longer includes its thread's
        // later stores (C++20).
        fence(Ordering::Release);
        // Relaxed: published by the fence above.
        self.inner.bottom.store(b + 1, Ordering::Relaxed);
        self.bottom = b + 1;
        Ok(())
    }
}

impl crate::Owner for AbpOwner {
    type Thief = AbpThief;

    #[inline]
    fn push(&mut self, item: usize) -> Result<(), usize> {
        self.put(item)?;
        self.stats.pushes += 1;
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        let inner = &*self.inner;
        if self.bottom == 0 {
            return None;
        }
        let b = self.bottom - 1;
        // Relaxed: the SeqCst fence below orders this store before our load
        // of `age` (it pairs with the SeqCst fence in `steal`).
        inner.bottom.store(b, Ordering::Relaxed);
        // SeqCst: pairs with the SeqCst fence in `steal` (Dekker-style):
        // either the thief sees the decremented bottom, or we see its top.
        fence(Ordering::SeqCst);
        // Relaxed: the slot is our own write.
        let item = inner.slot(b).load(Ordering::Relaxed);
        // Acquire: pairs with a thief's successful CAS, so that its read of
        // the slot happens before we reuse the slot after the reset below.
        let old = Age(inner.age.load(Ordering::Acquire));
        if b > old.top() {
            self.bottom = b;
            self.stats.pops += 1;
            return Some(item);
        }
        // At most one item left (`b == top`) or none (`b < top`): reset the
        // deque to empty at index 0, with a new tag. Relaxed: pairs with
        // nothing; a thief that reads this 0 sees an empty deque, and a thief
        // that still holds the old `age` cannot win its CAS, because `age`
        // gets a new tag below (by our CAS, or by the release store).
        inner.bottom.store(0, Ordering::Relaxed);
        self.bottom = 0;
        let new = Age::new(old.tag().wrapping_add(1), 0);
        if b == old.top() {
            self.stats.cas_attempted += 1;
            // SeqCst: totally ordered with the thieves' CASes on `age`; its
            // release half orders the reset before later pushes are seen.
            // Acquire on failure: pairs with the winning thief's CAS.
            if inner
                .age
                .compare_exchange(old.0, new.0, Ordering::SeqCst, Ordering::Acquire)
                .is_ok()
            {
                hit!(AbpLastItemWon);
                if old.tag() == u32::MAX {
                    hit!(AbpTagWrapped);
                }
                self.stats.cas_succeeded += 1;
                self.stats.pops += 1;
                return Some(item);
            }
            hit!(AbpLastItemLost);
        }
        if old.tag() == u32::MAX {
            hit!(AbpTagWrapped);
        }
        // A thief took the last item. Release: pairs with the acquire load of
        // `age` in `steal`; no thief can CAS `old` any more (the tag moved).
        inner.age.store(new.0, Ordering::Release);
        None
    }

    fn len(&self) -> usize {
        // Relaxed: an estimate; exact for the owner when no thief runs.
        let top = Age(self.inner.age.load(Ordering::Relaxed)).top();
        self.bottom.saturating_sub(top)
    }

    owner_methods!(thief: AbpThief { inner });
}

impl crate::Thief for AbpThief {
    type Owner = AbpOwner;

    #[inline]
    fn steal(&self, stats: &mut ThiefStats) -> Steal<usize> {
        let inner = &*self.inner;
        stats.steal_attempts += 1;
        // Acquire: pairs with the CAS or reset store that wrote this age.
        let old = Age(inner.age.load(Ordering::Acquire));
        // SeqCst: pairs with the SeqCst fence in `pop` (see there).
        fence(Ordering::SeqCst);
        // Acquire: pairs with the release store of `bottom` in `push`.
        let b = inner.bottom.load(Ordering::Acquire);
        if b <= old.top() {
            return Steal::Empty;
        }
        // Relaxed: ordered after the push by the acquire load of `bottom`.
        let item = inner.slot(old.top()).load(Ordering::Relaxed);
        let new = Age::new(old.tag(), old.top() + 1);
        stats.cas_attempted += 1;
        // SeqCst: totally ordered with the owner's CAS and other thieves'.
        // Relaxed on failure: we discard the item.
        match inner
            .age
            .compare_exchange(old.0, new.0, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => {
                stats.cas_succeeded += 1;
                stats.steal_successes += 1;
                stats.items_stolen += 1;
                Steal::Success(item)
            }
            Err(_) => {
                hit!(AbpStealAborted);
                stats.steal_aborts += 1;
                Steal::Abort
            }
        }
    }

    /// Steals up to half of the items, one CAS each, stopping when `dest` is
    /// full or a steal fails. ABP has no batch steal: this is the baseline
    /// the StealHalf deque improves on. The counters record one steal
    /// attempt for the whole batch, as for StealHalf (see `ThiefStats`), and
    /// the moved items are not counted as pushes of `dest`.
    fn steal_half(&self, dest: &mut AbpOwner, stats: &mut ThiefStats) -> Steal<usize> {
        if Arc::ptr_eq(&self.inner, &dest.inner) {
            return Steal::Empty;
        }
        let want = crate::Thief::len(self).div_ceil(2).max(1).min(dest.room());
        crate::steal_each(
            stats,
            want,
            |singles| self.steal(singles),
            |item| {
                let stored = dest.put(item);
                debug_assert!(stored.is_ok(), "steal_half: no room in dest");
            },
        )
    }

    fn len(&self) -> usize {
        // Acquire: pairs with the CAS or release store that wrote `age`, and
        // with the release store of `bottom` in `push`. Only an estimate:
        // nothing is read through these values.
        let top = Age(self.inner.age.load(Ordering::Acquire)).top();
        let b = self.inner.bottom.load(Ordering::Acquire);
        b.saturating_sub(top)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{Owner, Thief};

    #[test]
    fn resets_and_bumps_the_tag_when_empty() {
        let (mut o, t) = Abp::with_capacity(4);
        let mut s = ThiefStats::default();
        for i in 0..4 {
            o.push(i).unwrap();
        }
        assert_eq!(o.push(9), Err(9));
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        assert_eq!(t.steal(&mut s), Steal::Success(1));
        assert_eq!(o.push(9), Err(9)); // bottom is still at the capacity
        assert_eq!(o.pop(), Some(3));
        assert_eq!(o.pop(), Some(2)); // the last item: one CAS
        assert_eq!(o.stats().cas_succeeded, 1);
        assert_eq!(o.pop(), None);
        assert_eq!(Age(o.inner.age.load(Ordering::Relaxed)).tag(), 1);
        assert_eq!(o.room(), 4);
        let (mut d, _) = Abp::with_capacity(2);
        for i in 0..4 {
            o.push(i).unwrap();
        }
        assert_eq!(t.steal_half(&mut d, &mut s), Steal::Success(2));
        assert_eq!(t.steal_half(&mut d, &mut s), Steal::Empty); // dest full
        assert_eq!((o.len(), d.len()), (2, 2));
        // Two single steals, then one batch of two (counted as one steal,
        // with a CAS per item); the full `dest` made no attempt.
        let expected = ThiefStats {
            steal_attempts: 3,
            steal_successes: 3,
            steal_aborts: 0,
            items_stolen: 4,
            cas_attempted: 4,
            cas_succeeded: 4,
        };
        assert_eq!(s, expected);
        // Stolen items are not pushes of the thief's deque.
        assert_eq!(d.stats().pushes, 0);
    }
}
