//! The circular array shared by the growable deques ([`crate::chase_lev`]
//! and [`crate::steal_half`]), and the two ways to reclaim retired arrays.
//!
//! A deque's items live at logical indices that only ever grow; index `i` is
//! stored in slot `i & mask`. The owner resizes by copying the live range
//! into a new array and publishing it; thieves that still hold the old array
//! read correct values from it for every index they can successfully claim,
//! because the owner never writes to an array after retiring it.

use std::marker::PhantomData;

#[cfg(not(miri))]
use crossbeam_epoch as epoch;

use crate::sync::{AtomicPtr, AtomicUsize, Ordering};

/// A power-of-two array of word-sized atomic slots.
pub struct Buffer {
    mask: usize,
    slots: Box<[AtomicUsize]>,
}

impl Buffer {
    /// Allocates a zeroed array of `capacity` slots on the heap and leaks it
    /// as a raw pointer; [`Buffer::free`] takes it back.
    ///
    /// # Panics
    ///
    /// If `capacity` is not a power of two (zero included). This is a real
    /// assertion, not a debug one: `slot` indexes without a bounds check
    /// through `mask = capacity - 1`, so a zero capacity (an overflowed
    /// `next_power_of_two` in a release build) would index an empty slice.
    pub(crate) fn alloc(capacity: usize) -> *mut Buffer {
        assert!(
            capacity.is_power_of_two(),
            "deque array capacity {capacity} is not a power of two"
        );
        let slots = (0..capacity).map(|_| AtomicUsize::new(0)).collect();
        Box::into_raw(Box::new(Buffer {
            mask: capacity - 1,
            slots,
        }))
    }

    /// Frees an array made by [`Buffer::alloc`].
    ///
    /// # Safety
    /// `ptr` came from [`Buffer::alloc`], is freed once, and no thread reads
    /// it any more.
    pub(crate) unsafe fn free(ptr: *mut Buffer) {
        // SAFETY: the caller guarantees that `ptr` is a live, unshared
        // allocation from `Buffer::alloc`, which used `Box::into_raw`.
        drop(unsafe { Box::from_raw(ptr) });
    }

    /// The number of slots.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.mask + 1
    }

    #[inline]
    fn slot(&self, index: isize) -> &AtomicUsize {
        // SAFETY: `index & mask < capacity == slots.len()`.
        unsafe { self.slots.get_unchecked(index as usize & self.mask) }
    }

    /// Reads the item at logical index `index`.
    ///
    /// Relaxed: the caller orders this read after the write it wants to see
    /// (the owner wrote it itself; a thief acquired the bottom index that the
    /// owner released after writing the slot).
    #[inline]
    pub(crate) fn read(&self, index: isize) -> usize {
        self.slot(index).load(Ordering::Relaxed)
    }

    /// Writes the item at logical index `index`.
    ///
    /// Relaxed: the caller publishes it with a release fence or store on the
    /// bottom index (or on the array pointer, when copying into a new array).
    #[inline]
    pub(crate) fn write(&self, index: isize, item: usize) {
        self.slot(index).store(item, Ordering::Relaxed)
    }

    /// Allocates an array of `capacity` slots holding a copy of the logical
    /// range `[from, to)` of `self`.
    pub(crate) fn resized(&self, capacity: usize, from: isize, to: isize) -> *mut Buffer {
        debug_assert!(to.wrapping_sub(from) as usize <= capacity);
        let new = Buffer::alloc(capacity);
        // SAFETY: `new` was just allocated and is not shared yet.
        let new_ref = unsafe { &*new };
        let mut i = from;
        while i != to {
            new_ref.write(i, self.read(i));
            i = i.wrapping_add(1);
        }
        new
    }
}

/// How a growable deque frees the arrays it retires when it resizes.
pub trait Reclaim: 'static + Send + Sync {
    /// What a thief holds while it may read an array.
    #[doc(hidden)]
    type Guard;
    /// Protects the arrays a thief is about to read.
    #[doc(hidden)]
    fn pin() -> Self::Guard;
    /// Retires `old`, which the owner has just replaced: no thread can load
    /// it from the deque any more, but thieves may still hold it.
    #[doc(hidden)]
    fn retire(old: *mut Buffer, retired: &parking_lot::Mutex<Vec<RetiredBuffer>>);
}

/// Retired arrays are freed by crossbeam-epoch once every thread that was
/// pinned when they were retired has unpinned. Each steal pins.
#[derive(Debug, Clone, Copy, Default)]
pub struct Epoch;

/// Retired arrays are kept until the deque is dropped, or until the owner
/// frees them at a quiescent point with the `unsafe`
/// [`Owner::quiesce`](crate::Owner::quiesce) (no thief may be inside a steal
/// then). Steals pin nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiescent;

/// An array retired under [`Quiescent`] reclamation, freed on drop.
#[doc(hidden)]
pub struct RetiredBuffer(*mut Buffer);

// SAFETY: a retired array is only freed (by its single owner, the list) and
// its slots are atomics, so handing it to another thread is sound.
unsafe impl Send for RetiredBuffer {}

impl Drop for RetiredBuffer {
    fn drop(&mut self) {
        // SAFETY: the list holding this buffer is dropped or drained only
        // when no thief can read it (the deque is gone, or the owner has
        // promised a quiescent point); each retired pointer is listed once.
        unsafe { Buffer::free(self.0) }
    }
}

impl Reclaim for Epoch {
    #[cfg(not(miri))]
    type Guard = epoch::Guard;
    // Under Miri, see `retire`.
    #[cfg(miri)]
    type Guard = PhantomData<()>;

    #[inline]
    fn pin() -> Self::Guard {
        #[cfg(not(miri))]
        return epoch::pin();
        #[cfg(miri)]
        return PhantomData;
    }

    fn retire(old: *mut Buffer, retired: &parking_lot::Mutex<Vec<RetiredBuffer>>) {
        // crossbeam-epoch's own internals break Miri's default Stacked
        // Borrows model (crossbeam issue #545), so under Miri this strategy
        // keeps retired arrays until the deque is dropped, like `Quiescent`
        // without the early free: Miri still checks every access the deque
        // itself makes. The normal test suite exercises the epoch path.
        #[cfg(miri)]
        retired.lock().push(RetiredBuffer(old));
        #[cfg(not(miri))]
        {
            let _ = retired;
            let guard = epoch::pin();
            // SAFETY: `old` came from `Buffer::alloc` (a `Box`), is
            // unreachable from the deque now, and is retired exactly once;
            // every thief that might still read it is pinned, so epoch frees
            // it only after they have all unpinned.
            unsafe { guard.defer_destroy(epoch::Shared::from(old as *const Buffer)) };
        }
    }
}

impl Reclaim for Quiescent {
    type Guard = PhantomData<()>;

    #[inline]
    fn pin() -> PhantomData<()> {
        PhantomData
    }

    fn retire(old: *mut Buffer, retired: &parking_lot::Mutex<Vec<RetiredBuffer>>) {
        retired.lock().push(RetiredBuffer(old));
    }
}

/// The array pointer and retired list of a growable deque.
pub(crate) struct SharedBuffer<R: Reclaim> {
    ptr: AtomicPtr<Buffer>,
    retired: parking_lot::Mutex<Vec<RetiredBuffer>>,
    _reclaim: PhantomData<R>,
}

impl<R: Reclaim> SharedBuffer<R> {
    pub(crate) fn new(capacity: usize) -> Self {
        SharedBuffer {
            ptr: AtomicPtr::new(Buffer::alloc(capacity)),
            retired: parking_lot::Mutex::new(Vec::new()),
            _reclaim: PhantomData,
        }
    }

    /// The current array, for the owner (the only thread that replaces it).
    #[inline]
    pub(crate) fn owner_load(&self) -> &Buffer {
        // Relaxed: only the owner stores this pointer, so it reads its own
        // latest store.
        let ptr = self.ptr.load(Ordering::Relaxed);
        // SAFETY: the current array is freed only after it is replaced, and
        // only the owner (who is calling) replaces it.
        unsafe { &*ptr }
    }

    /// The current array, for a thief holding `_guard`.
    #[inline]
    pub(crate) fn thief_load<'g>(&self, _guard: &'g R::Guard) -> &'g Buffer {
        // Acquire: pairs with the release store in `replace`, so the copied
        // slots of a new array are visible.
        let ptr = self.ptr.load(Ordering::Acquire);
        // SAFETY: under `Epoch` the guard keeps a retired array alive until
        // it is dropped; under `Quiescent` retired arrays live until the
        // deque is dropped (it outlives `self`'s borrow by the thief's `Arc`)
        // or until the owner's `unsafe` `Owner::quiesce`, whose caller
        // promises that no thief is inside a steal.
        unsafe { &*ptr }
    }

    /// Copies the logical range `[from, to)` into a new array of `capacity`
    /// slots, publishes it and retires the old one. Owner only.
    #[cold]
    #[inline(never)]
    pub(crate) fn replace(&self, capacity: usize, from: isize, to: isize) -> &Buffer {
        // Relaxed: pairs with nothing; only the owner (who is calling) stores
        // this pointer, so it reads its own latest store.
        let old = self.ptr.load(Ordering::Relaxed);
        // SAFETY: see `owner_load`.
        let new = unsafe { &*old }.resized(capacity, from, to);
        // Release: pairs with the acquire load in `thief_load`; a thief that
        // sees the new array also sees the copied slots.
        self.ptr.store(new, Ordering::Release);
        R::retire(old, &self.retired);
        // SAFETY: `new` is the current array; see `owner_load`.
        unsafe { &*new }
    }

    /// Frees the retired arrays now: the body of `Owner::quiesce` of the
    /// growable deques.
    ///
    /// # Safety
    /// No thief is inside a steal (holds an array loaded before now).
    pub(crate) unsafe fn free_retired(&self) {
        self.retired.lock().clear();
    }

    /// The number of arrays retired and not freed yet (always zero under
    /// [`Epoch`], which hands them to the collector, except under Miri).
    pub(crate) fn retired_len(&self) -> usize {
        self.retired.lock().len()
    }
}

impl<R: Reclaim> Drop for SharedBuffer<R> {
    fn drop(&mut self) {
        // `&mut self`: every handle is gone, nobody reads the array.
        // Relaxed: pairs with nothing; the last handle's `Arc` drop (an
        // acquire fence after the release decrements) already orders every
        // other handle's accesses before this one.
        let ptr = self.ptr.load(Ordering::Relaxed);
        // SAFETY: the current array is unshared now and freed only here.
        unsafe { Buffer::free(ptr) }
    }
}
