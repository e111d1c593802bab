//! Mark cycles that fail, or are misused, never report success: a cycle
//! whose marking panicked is poisoned (every later call refuses, `finish`
//! returns an error), a background stopped by a panic is quiet, background
//! phases do not overlap, and owned barrier handles used after their cycle
//! say so. The marker stays usable after each.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::Dyn;
use stealmark_marker::{
    Collection, CycleError, CycleOptions, MarkBitmap, MarkIndex, Marker, MarkerConfig, ObjRef,
    ObjectModel, OwnedCycle, SlotKind,
};

/// A list: object `i` points to `i + 1` (slot 0: `next[i]`, 0 for null,
/// else index + 1). Scanning object `panic_on` panics once.
struct List {
    next: Vec<AtomicUsize>,
    panic_on: usize,
    panicked: AtomicBool,
}

impl List {
    fn new(n: usize, panic_on: usize) -> List {
        List {
            next: (0..n)
                .map(|i| AtomicUsize::new(if i + 1 < n { i + 2 } else { 0 }))
                .collect(),
            panic_on,
            panicked: AtomicBool::new(false),
        }
    }
}

impl ObjectModel for List {
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
        if o.index() == self.panic_on && !self.panicked.swap(true, Relaxed) {
            panic!("scan_slots of object {} broke its contract", o.index());
        }
        let w = self.next[o.index()].load(Relaxed);
        if s.start == 0 && s.end > 0 && w != 0 {
            v(0, ObjRef::from_index(w - 1), SlotKind::Strong);
        }
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for List {
    fn mark_index_bound(&self) -> usize {
        self.next.len()
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}

const N: usize = 100;
const ROOTS: [ObjRef; 1] = [ObjRef::from_index(0)];

fn config(workers: usize, deque: stealmark_marker::DequeKind) -> MarkerConfig {
    let mut config = MarkerConfig::with_workers(workers);
    config.set_deque(deque);
    config
}

/// Runs `f` on a thread and fails if it takes longer than 60 s (a hang).
fn within_a_minute(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(60)) {
        panic!("hung for 60 s");
    }
    t.join().expect("the check failed");
}

fn is_panicked<T>(r: Result<T, CycleError>) -> bool {
    matches!(r, Err(CycleError::Panicked { .. }))
}

/// The marker marks the whole list afterwards (it stayed usable).
fn marker_still_works(marker: &mut Marker, heap: &List) {
    let marks = MarkBitmap::new(N);
    let report = marker.collect_with(&Dyn::of(heap), &marks, &Collection::new(&ROOTS[..]));
    assert_eq!(report.live_objects(), N as u64);
}

/// The reproduction, through `step`: the list, with the scan of
/// object 10 panicking once. The step re-raises; every later call
/// refuses, and `finish` reports the failure instead of 89 unmarked
/// objects.
#[test]
fn a_step_that_panicked_poisons_the_cycle() {
    for (deque, workers) in common::matrix(&[1, 2]) {
        let heap = List::new(N, 10);
        let marks = MarkBitmap::new(N);
        let mut marker = Marker::new(config(workers, deque)).unwrap();
        let model = Dyn::of(&heap);
        let cycle = marker.start(&model, &marks, &ROOTS[..]);
        let raised = catch_unwind(AssertUnwindSafe(|| while !cycle.step(4).unwrap() {}));
        assert!(raised.is_err(), "{deque} {workers}: the step's panic");
        assert!(is_panicked(cycle.step(4)), "{deque} {workers}: step");
        assert!(is_panicked(cycle.concurrently(|| ())), "{deque} {workers}");
        assert!(cycle.is_quiet());
        let finished = cycle.finish(&Collection::new(&ROOTS[..]));
        assert!(
            is_panicked(finished.map(|_| ())),
            "{deque} {workers}: finish"
        );
        marker_still_works(&mut marker, &heap);
    }
}

/// The same through `concurrently`: the background stops, `is_quiet` holds
/// (the mutator waiting for it returns), the panic is re-raised once the
/// mutator's part returns, and the cycle is poisoned.
#[test]
fn a_background_that_panicked_poisons_the_cycle_and_is_quiet() {
    within_a_minute(|| {
        for (deque, workers) in common::matrix(&[1, 2]) {
            let heap = List::new(N, 10);
            let marks = MarkBitmap::new(N);
            let mut marker = Marker::new(config(workers, deque)).unwrap();
            let model = Dyn::of(&heap);
            let cycle = marker.start(&model, &marks, &ROOTS[..]);
            let raised = catch_unwind(AssertUnwindSafe(|| {
                cycle.concurrently(|| {
                    while !cycle.is_quiet() {
                        std::thread::yield_now();
                    }
                    assert!(cycle.wait_quiet(None));
                })
            }));
            assert!(raised.is_err(), "{deque} {workers}: the worker's panic");
            assert!(cycle.is_quiet());
            assert!(is_panicked(cycle.step(4)), "{deque} {workers}: step");
            assert!(is_panicked(cycle.concurrently(|| ())));
            let finished = cycle.finish(&Collection::new(&ROOTS[..]));
            assert!(is_panicked(finished.map(|_| ())), "{deque} {workers}");
            marker_still_works(&mut marker, &heap);
        }
    });
}

/// A nested `concurrently`, and one from another thread, are refused
/// without stopping the running background: a buffer handed off after
/// them is still marked from before the remark.
#[test]
fn overlapping_background_phases_are_refused_and_stop_nothing() {
    within_a_minute(|| {
        // 0 -> ... -> 49; 50 -> ... -> 99 is reachable only through the
        // entry recorded below (a slot overwritten during the cycle).
        let heap = List::new(N, usize::MAX);
        heap.next[49].store(0, Relaxed);
        let marks = MarkBitmap::new(N);
        let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
        let model = Dyn::of(&heap);
        let cycle = marker.start(&model, &marks, &ROOTS[..]);
        cycle
            .concurrently(|| {
                assert_eq!(
                    cycle.concurrently(|| ()).err(),
                    Some(CycleError::BackgroundRunning)
                );
                let other =
                    std::thread::scope(|s| s.spawn(|| cycle.concurrently(|| ()).err()).join());
                assert_eq!(other.unwrap(), Some(CycleError::BackgroundRunning));
                let mut b = cycle.mutator();
                b.pre_write(Some(ObjRef::from_index(50)));
                b.flush();
                assert!(cycle.wait_quiet(Some(Duration::from_secs(30))));
                assert!(
                    (0..N).all(|i| marks.contains(i)),
                    "marked in the background"
                );
            })
            .unwrap();
        let (report, _) = cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
        assert_eq!(report.live_objects(), N as u64);
        // Another phase may start once the first has ended.
    });
}

/// Live counts: objects allocated black are reported beside the marked
/// ones, with their bytes.
#[test]
fn objects_allocated_black_are_counted_with_their_bytes() {
    let heap = List::new(N, usize::MAX);
    heap.next[49].store(0, Relaxed);
    let marks = MarkBitmap::new(N);
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    let model = Dyn::of(&heap);
    let cycle = marker.start(&model, &marks, &ROOTS[..]);
    let mut b = cycle.mutator();
    for i in 90..N {
        b.allocate_black(ObjRef::from_index(i));
    }
    drop(b);
    let (report, stats) = cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
    assert_eq!(report.live_objects(), 50);
    assert_eq!(report.live_bytes(), 50 * 16);
    assert_eq!(
        (stats.allocated_black, stats.allocated_black_bytes),
        (10, 160)
    );
}

type Owned = OwnedCycle<Dyn<'static>, MarkBitmap>;

fn owned(panic_on: usize, workers: usize) -> (Arc<List>, Arc<MarkBitmap>, Owned) {
    let heap = Arc::new(List::new(N, panic_on));
    let marks = Arc::new(MarkBitmap::new(N));
    let marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
    let cycle = OwnedCycle::start(
        marker,
        Arc::new(Dyn::shared(heap.clone())),
        marks.clone(),
        &ROOTS[..],
        CycleOptions::default(),
    );
    (heap, marks, cycle)
}

/// The owned form: `Send + Sync`, kept behind an `Arc` by other threads.
#[test]
fn owned_cycles_and_handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Owned>();
    send::<stealmark_marker::OwnedMutator<Dyn<'static>, MarkBitmap>>();
}

/// The owned form fails the same way, with errors instead of panics, and
/// gives the marker back through `abandon`.
#[test]
fn an_owned_cycle_that_panicked_refuses_and_gives_the_marker_back() {
    within_a_minute(|| {
        for workers in [1, 2] {
            let (heap, _, cycle) = owned(10, workers);
            cycle.start_background().unwrap();
            assert!(cycle.wait_quiet(Some(Duration::from_secs(30))));
            assert!(is_panicked(cycle.stop_background()));
            assert!(is_panicked(cycle.start_background()));
            assert!(is_panicked(cycle.step(10)));
            let mut m = cycle.mutator();
            assert!(is_panicked(cycle.finish(&Collection::new(&ROOTS[..]))));
            let mut marker = cycle.abandon().unwrap();
            assert_eq!(cycle.abandon().err(), Some(CycleError::Ended));
            assert_eq!(m.pre_write(Some(ROOTS[0])).err(), Some(CycleError::Ended));
            marker_still_works(&mut marker, &heap);
            // Through a step: the error comes back, not the panic.
            let (heap, _, cycle) = owned(10, workers);
            let mut result = cycle.step(4);
            while result == Ok(false) {
                result = cycle.step(4);
            }
            assert!(is_panicked(result));
            marker_still_works(&mut cycle.abandon().unwrap(), &heap);
        }
    });
}

/// Owned handles: the remark refuses while one is attached (the cycle goes
/// on), a second background start is refused, and a handle used after the
/// remark reports it.
#[test]
fn owned_handles_are_checked_against_their_cycle() {
    within_a_minute(|| {
        let (heap, marks, cycle) = owned(usize::MAX, 2);
        heap.next[49].store(0, Relaxed);
        let mut m = cycle.mutator();
        assert!(!m.is_attached());
        m.pre_write(None).unwrap();
        assert!(!m.is_attached(), "a null takes no buffer");
        m.pre_write(Some(ObjRef::from_index(50))).unwrap();
        assert!(m.is_attached());
        cycle.start_background().unwrap();
        assert_eq!(
            cycle.start_background().err(),
            Some(CycleError::BackgroundRunning)
        );
        assert_eq!(
            cycle.concurrently(|| ()).err(),
            Some(CycleError::BackgroundRunning)
        );
        let c = Collection::new(&ROOTS[..]);
        assert_eq!(
            cycle.finish(&c).err(),
            Some(CycleError::LeakedBuffers { held: 1 })
        );
        m.detach().unwrap();
        let mut done = cycle.finish(&c).unwrap();
        assert_eq!(done.report().live_objects(), N as u64);
        assert!((0..N).all(|i| marks.contains(i)));
        assert_eq!(
            m.pre_write(Some(ObjRef::from_index(3))).err(),
            Some(CycleError::Ended)
        );
        assert_eq!(m.pre_write(None).err(), Some(CycleError::Ended));
        assert_eq!(
            m.allocate_black(ObjRef::from_index(3)).err(),
            Some(CycleError::Ended)
        );
        assert_eq!(cycle.finish(&c).err(), Some(CycleError::Ended));
        assert_eq!(cycle.step(1).err(), Some(CycleError::Ended));
        heap.next[49].store(51, Relaxed);
        marker_still_works(&mut done.into_marker(), &heap);
    });
}

/// A cycle started without black allocation refuses it: a borrowed
/// buffer panics, an owned handle returns the error; either way the
/// object stays unmarked, and the cycle goes on to mark what is reachable.
#[test]
fn black_allocation_off_is_refused_and_marks_nothing() {
    let heap = List::new(N, usize::MAX);
    heap.next[49].store(0, Relaxed);
    let mut options = CycleOptions::default();
    options.black_allocation = false;
    let marks = MarkBitmap::new(N);
    let mut marker = Marker::new(MarkerConfig::with_workers(1)).unwrap();
    let model = Dyn::of(&heap);
    let cycle = marker.start_with(&model, &marks, &ROOTS[..], options);
    let refused = catch_unwind(AssertUnwindSafe(|| {
        cycle.mutator().allocate_black(ObjRef::from_index(70));
    }));
    let message = refused.expect_err("allocate_black was not refused");
    let message = message.downcast_ref::<String>().expect("a message");
    assert!(message.contains("black allocation off"), "{message}");
    while !cycle.step(10).unwrap() {}
    let (report, _) = cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
    assert_eq!(report.live_objects(), 50);
    assert_eq!(marks.count(), 50, "object 70 marked");

    let heap = Arc::new(List::new(N, usize::MAX));
    heap.next[49].store(0, Relaxed);
    let marks = Arc::new(MarkBitmap::new(N));
    let cycle: Owned = OwnedCycle::start(
        Marker::new(MarkerConfig::with_workers(1)).unwrap(),
        Arc::new(Dyn::shared(heap.clone())),
        marks.clone(),
        &ROOTS[..],
        options,
    );
    let mut m = cycle.mutator();
    assert_eq!(
        m.allocate_black(ObjRef::from_index(70)).err(),
        Some(CycleError::BlackAllocationOff)
    );
    m.detach().unwrap();
    while !cycle.step(10).unwrap() {}
    cycle.finish(&Collection::new(&ROOTS[..])).unwrap();
    assert_eq!(marks.count(), 50, "object 70 marked");
}
