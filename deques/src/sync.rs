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
