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

use crate::sync::{fence, zeroed_slots, AtomicPtr, AtomicUsize, Ordering};

/// A power-of-two array of word-sized atomic slots.
pub struct Buffer {
    mask: usize,
    slots: Box<[AtomicUsize]>,
    /// Under loom, what happened to this array (see [`LoomLife`]).
    #[cfg(loom)]
    life: LoomLife,
}

/// Under `--cfg loom`, an array is never deallocated: [`Buffer::free`]
/// poisons it instead. Every slot access is a shared access to the `alive`
/// cell and the free is an exclusive one, so loom's causality check reports
/// any access that the free does not happen after (or that does not happen
/// after the free), in whatever order the schedule ran them: a thief that
/// reads an array its reclamation (epoch or quiescent) may already have
/// freed fails the model even when this execution ran the read first. The
/// flags are `std` atomics: they record the order of the simulated steps
/// for the counters without adding interleavings.
#[cfg(loom)]
struct LoomLife {
    /// Shared access for each slot access, exclusive for the free.
    alive: loom::cell::UnsafeCell<()>,
    /// The owner replaced this array (`SharedBuffer::replace`).
    retired: std::sync::atomic::AtomicBool,
    /// A thief read a slot after the array was retired.
    read_after_retire: std::sync::atomic::AtomicBool,
    /// The reclamation freed it.
    freed: std::sync::atomic::AtomicBool,
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
        let slots = zeroed_slots(capacity);
        Box::into_raw(Box::new(Buffer {
            mask: capacity - 1,
            slots,
            #[cfg(loom)]
            life: LoomLife {
                alive: loom::cell::UnsafeCell::new(()),
                retired: Default::default(),
                read_after_retire: Default::default(),
                freed: Default::default(),
            },
        }))
    }

    /// Frees an array made by [`Buffer::alloc`] (under loom: poisons it and
    /// leaks it, see `LoomLife`).
    ///
    /// # Safety
    /// `ptr` came from [`Buffer::alloc`], is freed once, and no thread reads
    /// it any more.
    pub(crate) unsafe fn free(ptr: *mut Buffer) {
        #[cfg(loom)]
        {
            // SAFETY: under loom arrays are never deallocated, so `ptr` is
            // still a valid `Buffer`.
            let life = unsafe { &(*ptr).life };
            // Relaxed (std atomics): bookkeeping of the simulated schedule.
            if life
                .read_after_retire
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                crate::coverage::hit(crate::coverage::Branch::FreedArrayAThiefReadAfterRetire);
            }
            crate::coverage::hit(crate::coverage::Branch::ArrayFreed);
            // The free: every access must happen before it.
            life.alive.with_mut(|_| ());
            life.freed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        #[cfg(not(loom))]
        // SAFETY: the caller guarantees that `ptr` is a live, unshared
        // allocation from `Buffer::alloc`, which used `Box::into_raw`.
        drop(unsafe { Box::from_raw(ptr) });
    }

    /// Under loom: panics if this array was freed, and records a read of a
    /// retired array by a thief.
    #[cfg(loom)]
    #[inline]
    fn check_alive(&self, thief: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        assert!(
            !self.life.freed.load(Relaxed),
            "a deque array was accessed after it was freed"
        );
        // A slot access: it must happen before the free.
        self.life.alive.with(|_| ());
        if thief && self.life.retired.load(Relaxed) {
            self.life.read_after_retire.store(true, Relaxed);
            crate::coverage::hit(crate::coverage::Branch::ThiefReadRetiredArray);
        }
    }

    /// Under loom: whether the owner has replaced this array.
    #[cfg(loom)]
    pub(crate) fn is_retired(&self) -> bool {
        self.life.retired.load(std::sync::atomic::Ordering::Relaxed)
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
        #[cfg(loom)]
        self.check_alive(false);
        self.slot(index).load(Ordering::Relaxed)
    }

    /// [`Buffer::read`] by a thief, which may hold a retired array (under
    /// loom the read is recorded; otherwise the same as `read`).
    #[inline]
    pub(crate) fn thief_read(&self, index: isize) -> usize {
        #[cfg(loom)]
        self.check_alive(true);
        self.slot(index).load(Ordering::Relaxed)
    }

    /// Writes the item at logical index `index`.
    ///
    /// Relaxed: the caller publishes it with a release fence or store on the
    /// bottom index (or on the array pointer, when copying into a new array).
    #[inline]
    pub(crate) fn write(&self, index: isize, item: usize) {
        #[cfg(loom)]
        self.check_alive(false);
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

/// Stores `b` in a deque's `bottom` word (owner only), publishing the slots
/// the owner wrote below it: the end of a push of StealHalf or of the
/// idempotent deque, and of a batch steal into one.
#[inline(always)]
pub(crate) fn publish_bottom(bottom: &AtomicUsize, b: usize) {
    // Release fence: pairs with the acquire load of `bottom` in a steal,
    // which may use this bottom as its limit and so must see the slots. A
    // fence rather than a release store, as in Lê et al.'s Chase-Lev: it
    // also publishes the slots to a thief whose acquire load reads a later
    // relaxed store of `bottom` (a pop's decrement or restore), which a
    // release store would not, as a release sequence no longer includes its
    // thread's later stores (C++20).
    fence(Ordering::Release);
    // Relaxed: published by the fence above.
    bottom.store(b, Ordering::Relaxed);
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

/// A retired array on its way to crossbeam-epoch's deferred free.
#[cfg(not(miri))]
struct Retired(*mut Buffer);

#[cfg(not(miri))]
impl Retired {
    /// The pointer. A method, so that a closure that calls it captures the
    /// whole `Retired` (which is `Send`) rather than its raw-pointer field.
    fn into_inner(self) -> *mut Buffer {
        self.0
    }
}

// SAFETY: a retired array is unreachable from the deque; the deferred
// function that receives it is its only user, and its slots are atomics.
#[cfg(not(miri))]
unsafe impl Send for Retired {}

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
            let old = Retired(old);
            // SAFETY: `old` came from `Buffer::alloc`, is unreachable from
            // the deque now, and is retired exactly once; every thief that
            // might still read it is pinned, so epoch runs this only after
            // they have all unpinned, and then nobody reads it.
            unsafe { guard.defer_unchecked(move || Buffer::free(old.into_inner())) };
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

/// A pop of a growable deque halves its array when fewer than
/// `capacity / SHRINK_FACTOR` items remain (never below the initial
/// capacity). Growth happens at `capacity` items, so after a shrink the
/// deque is at most a quarter full and a single push or pop cannot flip it
/// back.
pub const SHRINK_FACTOR: usize = 4;

/// The array pointer and retired list of a growable deque, and the
/// capacity it was made with (which shrinks stop at).
pub(crate) struct SharedBuffer<R: Reclaim> {
    ptr: AtomicPtr<Buffer>,
    retired: parking_lot::Mutex<Vec<RetiredBuffer>>,
    min_capacity: usize,
    _reclaim: PhantomData<R>,
}

impl<R: Reclaim> SharedBuffer<R> {
    pub(crate) fn new(capacity: usize) -> Self {
        SharedBuffer {
            ptr: AtomicPtr::new(Buffer::alloc(capacity)),
            retired: parking_lot::Mutex::new(Vec::new()),
            min_capacity: capacity,
            _reclaim: PhantomData,
        }
    }

    /// Halves the current array, of `capacity` slots, if only `len` items,
    /// at logical indices `[from, to)`, remain and it is above the initial
    /// capacity. Owner only, after a pop; the deque says why no thief that
    /// can still claim reads outside `[from, to)` of the old array.
    #[inline(always)]
    pub(crate) fn shrink_if_sparse(&self, capacity: usize, len: usize, from: isize, to: isize) {
        if capacity > self.min_capacity && len < capacity / SHRINK_FACTOR {
            self.replace(capacity / 2, from, to);
        }
    }

    /// The deque is empty at logical index `end` (`top == bottom == end`):
    /// gives a grown array, of `capacity` slots, back at once, down to the
    /// initial capacity; the copy is empty. One compare when the array is
    /// not grown. Owner only; the deque says why no thief can claim an
    /// index below `end` any more.
    #[inline(always)]
    pub(crate) fn shrink_emptied(&self, capacity: usize, end: isize) {
        if capacity > self.min_capacity {
            self.replace(self.min_capacity, end, end);
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
        #[cfg(loom)]
        {
            // SAFETY: see `owner_load`; under loom nothing is deallocated.
            let life = unsafe { &(*old).life };
            life.retired
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
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
