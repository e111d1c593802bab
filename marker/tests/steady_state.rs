//! Steady state: 1,000 back-to-back collections with one marker leave the
//! heap flat (each deque kind), and a mark cycle after the first allocates
//! no large block. Correctness tests, not timing tests: a counting global
//! allocator gives the bytes allocated and not freed, exactly, so that a
//! leak of 4 KiB per collection (4 MB over the run) fails the bound by far
//! (the resident set, `/proc/self/statm`, Linux only, is printed beside
//! it); and it keeps the largest block asked for while a test watches.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use stealmark_heap::{generate_heap, GenConfig, HeapGraph, Shape};
use stealmark_marker::{
    Collection, CycleOptions, DequeKind, MarkBitmap, MarkIndex, Marker, MarkerConfig, ObjRef,
    OwnedCycle,
};
use strum::VariantArray;

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

/// Bytes allocated and not freed, by every thread of this test binary.
/// Relaxed: a counter; the test reads it on the thread that ran the
/// collections, after they returned (the pool's join of the step orders
/// the workers' allocations before it).
static LIVE: AtomicI64 = AtomicI64::new(0);

/// While `WATCH` is set, the largest block asked for (`alloc`,
/// `alloc_zeroed`, or a `realloc`'s new size). Relaxed, as `LIVE`.
static WATCH: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

/// The tests of this binary one at a time: each reads counters that every
/// thread's allocations move.
static SERIAL: Mutex<()> = Mutex::new(());

/// Notes a block of `size` bytes asked for.
fn asked(size: usize) {
    if WATCH.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the same arguments and
// returns its result unchanged; the counting has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        asked(layout.size());
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        asked(layout.size());
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
        asked(new_size);
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
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 20_000).seed(3)).unwrap();
    let view = g.heap.view();
    let roots = g.heap.roots();
    for &deque in DequeKind::VARIANTS.iter() {
        let mut c = MarkerConfig::with_workers(4);
        c.set_deque(deque);
        c.set_deque_capacity(256);
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

/// One mark cycle of `heap` from `roots` on `marker`, with a mutator that
/// hands off two buffers' worth of forward-barrier entries and some
/// holders to rescan between steps; returns the marker.
fn one_cycle(
    marker: Marker,
    heap: &Arc<stealmark_heap::HeapView<'static>>,
    roots: &[ObjRef],
    options: CycleOptions,
) -> Marker {
    let bits = Arc::new(MarkBitmap::new(heap.mark_index_bound()));
    WATCH.store(true, Ordering::Relaxed);
    let cycle = OwnedCycle::start(marker, heap.clone(), bits, roots, options);
    let mut m = cycle.mutator();
    let n = heap.mark_index_bound();
    for i in 0..2500 {
        let obj = roots[i % roots.len()];
        if i % 5 == 0 {
            m.rescan(obj).unwrap();
        } else {
            m.shade(obj).unwrap();
        }
        if i % 500 == 0 {
            m.flush().unwrap();
            cycle.step(n / 8).unwrap();
        }
    }
    m.detach().unwrap();
    while !cycle.step(n / 8).unwrap() {}
    let finished = cycle.finish(&Collection::new(roots)).unwrap();
    WATCH.store(false, Ordering::Relaxed);
    finished.into_marker()
}

/// Once warm, a marker's cycles (an owned cycle's start, its mutator handle
/// and hand-offs, its steps and its remark) allocate no block of a
/// kilobyte or more: the cycle's state is a small block, and its barrier
/// buffers and lists come from the cycle before. (With glibc, a request of
/// that size in a pause first merges every small block the runtime freed
/// since the last one.) Warm is one cycle on a heap of strong references;
/// on one with weak slots, two: the workers' records of non-strong slots
/// alternate between two buffers (a collection's report keeps the one it
/// filled while the next collection fills the other). At one worker, so
/// that the schedule, and with it each worker's private stack and deque,
/// repeats: with more, a worker's stack may reach a new high-water mark in
/// any later cycle, as in a collection (a 64 KiB growth in about one run
/// of eight at two workers).
#[test]
fn a_warm_cycle_allocates_no_large_block() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (shape, warm_up) in [(Shape::Random, 1), (Shape::Runtime, 2)] {
        warm_cycles_ask_for_small_blocks(shape, warm_up);
    }
}

/// Runs `warm_up` cycles of a generated heap of shape `shape`, then checks
/// the next cycle's requests, at one worker, its steps on the caller's
/// thread alone and on every worker.
fn warm_cycles_ask_for_small_blocks(shape: Shape, warm_up: usize) {
    let g = generate_heap(&GenConfig::new(shape, 20_000).seed(5)).unwrap();
    let heap: &'static stealmark_heap::Heap = Box::leak(Box::new(g.heap));
    let view = Arc::new(heap.view());
    let roots = heap.roots();
    for parallel_steps in [false, true] {
        let workers = 1;
        let mut options = CycleOptions::default();
        options.parallel_steps = parallel_steps;
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        for _ in 0..warm_up {
            marker = one_cycle(marker, &view, roots, options);
        }
        LARGEST.store(0, Ordering::Relaxed);
        marker = one_cycle(marker, &view, roots, options);
        let largest = LARGEST.load(Ordering::Relaxed);
        assert!(
            largest < 1024,
            "{shape:?}, {workers} workers: a cycle after {warm_up} asked for a block of \
             {largest} bytes"
        );
        drop(marker);
    }
}
