//! The barrier queue's bounds: a mutator that writes as fast as it can,
//! against markers slowed down (every scan spins), keeps the cycle's
//! buffers within a multiple of the threads, whatever the write rate, in
//! the background (the mutator waits) and incrementally (it assists). A
//! correctness test, not a timing test: the figures are printed, the
//! assertions are on counts.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::common::Dyn;

use stealmark_marker::{
    Backpressure, Collection, CycleOptions, CycleStats, MarkBitmap, MarkIndex, Marker,
    MarkerConfig, ObjRef, ObjectModel, SlotKind,
};

/// A list of `n` objects (`i` points to `i + 1`) whose scans spin a while.
struct SlowList(usize);

impl ObjectModel for SlowList {
    fn size_bytes(&self, _: ObjRef) -> usize {
        16
    }
    fn slot_count(&self, _: ObjRef) -> usize {
        1
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        o: ObjRef,
        s: std::ops::Range<usize>,
        mut v: V,
    ) {
        for k in 0..200u32 {
            std::hint::black_box(k);
        }
        if s.start == 0 && s.end > 0 && o.index() + 1 < self.0 {
            v(0, ObjRef::from_index(o.index() + 1), SlotKind::Strong);
        }
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for SlowList {
    fn mark_index_bound(&self) -> usize {
        self.0
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}

const N: usize = 200_000;
const WORKERS: usize = 2;
const ROOTS: [ObjRef; 1] = [ObjRef::from_index(0)];

/// Buffers a cycle may allocate with one mutator thread: held (1), handed
/// off and kept for reuse (each at most the limit), and the batch the
/// coordinator marks from (at most the limit).
fn bound(options: &CycleOptions) -> u64 {
    let limit = options.buffers_per_thread * (WORKERS + 1);
    (1 + 3 * limit) as u64
}

/// One cycle: a mutator records old values from the list's far end
/// (unmarked until the markers get there) for `length`, as fast as it can.
fn flood(background: bool, backpressure: Backpressure, length: Duration) -> (u64, CycleStats) {
    let list = SlowList(N);
    let heap = Dyn::of(&list);
    let marks = MarkBitmap::new(N);
    let mut marker = Marker::new(MarkerConfig::with_workers(WORKERS)).unwrap();
    let mut options = CycleOptions::default();
    options.backpressure = backpressure;
    let cycle = marker.start_with(&heap, &marks, &ROOTS[..], options);
    let written = AtomicU64::new(0);
    let write = || {
        let mut b = cycle.mutator();
        let t0 = Instant::now();
        let mut k = 0usize;
        while t0.elapsed() < length {
            for _ in 0..4096 {
                b.pre_write(Some(ObjRef::from_index(N - 1 - k % N)));
                k += 1;
            }
        }
        written.store(k as u64, Relaxed);
    };
    if background {
        cycle.concurrently(write).unwrap();
    } else {
        write();
        while !cycle.step(100_000).unwrap() {}
    }
    let (report, stats) = cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
    assert_eq!(report.live_objects(), N as u64);
    let bound = bound(&options);
    let n = written.load(Relaxed);
    eprintln!(
        "background {background}, {backpressure:?}: {n} entries written, {} buffers handed off, \
         {} refused, {} assists, {} background steps, peak {} buffers (bound {bound}), remark {} us",
        stats.buffers,
        stats.waits,
        stats.assists,
        stats.background_steps,
        stats.peak_buffers,
        stats.remark_ns / 1000,
    );
    assert!(
        stats.peak_buffers <= bound,
        "{} buffers at the peak, bound {bound}",
        stats.peak_buffers
    );
    (n, stats)
}

/// In the background the writer outruns the markers, meets the bound and
/// waits; the buffers stay within the bound.
#[test]
fn a_flooding_mutator_waits_for_the_background() {
    let (written, stats) = flood(true, Backpressure::Wait, Duration::from_millis(300));
    assert!(
        written > stats.peak_buffers * 1024,
        "the mutator wrote more than the buffers could hold"
    );
    assert!(stats.waits > 0, "the bound was never reached");
}

/// Without background marking the writer assists: it runs increments
/// itself, and the buffers stay within the bound.
#[test]
fn a_flooding_mutator_assists_without_background() {
    let (_, stats) = flood(false, Backpressure::Assist, Duration::from_millis(300));
    assert!(stats.assists > 0 && stats.waits > 0, "{stats:?}");
}

/// Once the markers have marked what the mutator writes, its entries are
/// filtered out at hand-off: nothing more is queued.
#[test]
fn entries_already_marked_are_filtered_at_hand_off() {
    let list = SlowList(1000);
    let heap = Dyn::of(&list);
    let marks = MarkBitmap::new(1000);
    let mut marker = Marker::new(MarkerConfig::with_workers(WORKERS)).unwrap();
    let cycle = marker.start(&heap, &marks, &ROOTS[..]);
    while !cycle.step(10_000).unwrap() {}
    let mut b = cycle.mutator();
    for k in 0..100_000 {
        b.pre_write(Some(ObjRef::from_index(k % 1000)));
    }
    drop(b);
    let (_, stats) = cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
    assert_eq!(stats.buffers, 0, "every entry was marked already");
}
