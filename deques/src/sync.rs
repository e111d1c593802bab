//! Atomics from `std` or, under `--cfg loom`, from loom, so that the loom
//! models explore every interleaving of the very code that ships.
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
};

/// `n` slots holding 0, allocated zeroed (one `calloc`, and fresh zero
/// pages for a large array) instead of built slot by slot.
#[cfg(not(loom))]
pub(crate) fn zeroed_slots(n: usize) -> Box<[AtomicUsize]> {
    let words: Box<[usize]> = vec![0usize; n].into_boxed_slice();
    // SAFETY: `AtomicUsize` has the size, alignment and bit validity of
    // `usize` (its documentation guarantees it), so the allocation of `n`
    // `usize`s is one of `n` `AtomicUsize`s, freed with the same layout; the
    // box is moved, so nothing else refers to it.
    unsafe { Box::from_raw(Box::into_raw(words) as *mut [AtomicUsize]) }
}

/// `n` slots holding 0 (loom's atomics are not `usize`s in memory).
#[cfg(loom)]
pub(crate) fn zeroed_slots(n: usize) -> Box<[AtomicUsize]> {
    (0..n).map(|_| AtomicUsize::new(0)).collect()
}
