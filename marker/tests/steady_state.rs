//! Steady state: 1,000 back-to-back collections with one marker leave the
//! heap flat (each deque kind). A correctness test, not a timing test: a
//! counting global allocator gives the bytes allocated and not freed,
//! exactly, so that a leak of 4 KiB per collection (4 MB over the run)
//! fails the bound by far; the resident set (`/proc/self/statm`, Linux
//! only) is printed beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

use stealmark_heap::{generate_heap, GenConfig, HeapGraph, Shape};
use stealmark_marker::{DequeKind, Marker, MarkerConfig};
use strum::VariantArray;

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

/// Bytes allocated and not freed, by every thread of this test binary.
/// Relaxed: a counter; the test reads it on the thread that ran the
/// collections, after they returned (the pool's join of the step orders
/// the workers' allocations before it).
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every method forwards to `System` with the same arguments and
// returns its result unchanged; the counting has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` (`ptr` came from this
        // allocator, that is from `System`, with `layout`), passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated and not freed.
fn live_bytes() -> i64 {
    LIVE.load(Ordering::Relaxed)
}

/// Resident bytes of this process (Linux), or 0.
fn resident_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

#[test]
fn a_thousand_collections_leave_the_heap_flat() {
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 20_000).seed(3)).unwrap();
    let view = g.heap.view();
    let roots = g.heap.roots();
    for &deque in DequeKind::VARIANTS.iter() {
        let mut c = MarkerConfig::with_workers(4);
        c.deque = deque;
        c.deque_capacity = 256;
        let mut marker = Marker::new(c).unwrap();
        // Warm up: buffers reach their steady-state capacity.
        let expect = marker.mark(&view, roots).stats.objects_marked();
        for _ in 0..100 {
            marker.mark(&view, roots);
        }
        let (before, rss_before) = (live_bytes(), resident_bytes());
        for _ in 0..1000 {
            let m = marker.mark(&view, roots);
            assert_eq!(m.stats.objects_marked(), expect);
        }
        let (after, rss_after) = (live_bytes(), resident_bytes());
        let growth = after - before;
        eprintln!(
            "{deque}: live heap bytes {before} -> {after}, resident {rss_before} -> {rss_after}, over 1,000 collections"
        );
        // Buffers whose high-water marks depend on scheduling (private
        // stacks, weak-reference lists, retired deque arrays awaiting epoch
        // reclamation) may still grow a little; a leak of 4 KiB per
        // collection (4 MB), let alone a word per object (16,000 live
        // objects), exceeds this bound by far.
        assert!(
            growth <= 2 << 20,
            "{deque}: the live heap grew by {growth} bytes over 1,000 collections ({before} -> {after})"
        );
    }
}
