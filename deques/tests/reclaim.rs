//! Quiescent reclamation returns memory: [`Owner::quiesce`] on a `-q` deque
//! frees the arrays that its resizes retired, as a counting global allocator
//! sees, and a second call has nothing left to free.
#![cfg(not(loom))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use stealmark_deques::chase_lev::ChaseLevQuiescent;
use stealmark_deques::steal_half::StealHalfQuiescent;
use stealmark_deques::{Owner, WorkDeque};

/// The system allocator, counting the bytes each thread frees.
struct CountingAlloc;

thread_local! {
    /// Bytes freed by this thread (the tests run on several threads).
    static FREED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; the counting only
// touches a thread-local `Cell` with a const initialiser, which neither
// allocates nor registers a destructor, so it cannot re-enter the allocator.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // `try_with`: a thread that is being torn down counts nothing.
        let _ = FREED.try_with(|freed| freed.set(freed.get() + layout.size()));
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn freed() -> usize {
    FREED.with(Cell::get)
}

/// Grows a deque from 2 to 1024 slots, which retires the arrays of 2, 4,
/// ..., 512 slots, and checks that `quiesce` frees at least their slots.
fn quiesce_frees_retired_arrays<D: WorkDeque>() {
    let (mut owner, _thief) = D::with_capacity(2);
    for i in 0..1024 {
        owner.push(i).unwrap();
    }
    let retired_slot_bytes = (1..=9).map(|k| 1usize << k).sum::<usize>() * size_of::<usize>();
    let before = freed();
    // SAFETY: no thief is inside a steal: the only thief handle is unused.
    unsafe { owner.quiesce() };
    let by_quiesce = freed() - before;
    assert!(
        by_quiesce >= retired_slot_bytes,
        "{}: quiesce freed {by_quiesce} bytes, the retired arrays hold {retired_slot_bytes}",
        D::KIND
    );
    let before = freed();
    // SAFETY: as above.
    unsafe { owner.quiesce() };
    assert_eq!(
        freed() - before,
        0,
        "{}: a second quiesce freed memory",
        D::KIND
    );
    // The live array was kept: every item is still there.
    for i in (0..1024).rev() {
        assert_eq!(owner.pop(), Some(i), "{}", D::KIND);
    }
}

#[test]
fn chase_lev_quiescent_quiesce_frees_memory() {
    quiesce_frees_retired_arrays::<ChaseLevQuiescent>();
}

#[test]
fn steal_half_quiescent_quiesce_frees_memory() {
    quiesce_frees_retired_arrays::<StealHalfQuiescent>();
}
