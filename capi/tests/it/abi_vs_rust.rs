//! The same heaps marked through the C interface (C-style callbacks, every
//! mark mode, the three root forms) and through the Rust API (a
//! monomorphised `ObjectModel`): the marked sets and the reports must be
//! equal.

use crate::common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use stealmark_capi::*;
use stealmark_marker::model::{SoftRefPolicy, SoftRefs};
use stealmark_marker::{Collection, Marker, MarkerConfig, ObjRef};

/// What a collection gave: marks, slots to clear (sorted), objects to
/// finalize (sorted), live objects, bytes, per type.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    marked: Vec<bool>,
    cleared: Vec<(usize, usize, usize, usize, u32)>,
    to_finalize: Vec<usize>,
    live: (u64, u64),
    by_type: Vec<(u64, u64)>,
}

struct KeepEven;
impl SoftRefPolicy for KeepEven {
    fn keep(&self, r: ObjRef) -> bool {
        // SAFETY: the engine passes references of the heap.
        unsafe { node(r.word()) }.index % 2 == 0
    }
}

fn through_rust(heap: &Heap, workers: usize, soft: u32) -> Outcome {
    heap.clear_marks();
    let roots: Vec<ObjRef> = heap
        .roots
        .iter()
        .map(|&i| ObjRef::from_word(heap.addr(i)).unwrap())
        .collect();
    let fin: Vec<ObjRef> = heap
        .finalizable
        .iter()
        .map(|&i| ObjRef::from_word(heap.addr(i)).unwrap())
        .collect();
    let soft = match soft {
        SM_SOFT_CLEAR_ALL => SoftRefs::ClearAll,
        SM_SOFT_KEEP_ALL => SoftRefs::KeepAll,
        _ => SoftRefs::Ask(&KeepEven),
    };
    let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
    let c = Collection::new(&roots[..])
        .finalizable(&fin[..])
        .soft_refs(soft);
    let report = marker.collect_with(&RustModel(heap), &RustMarks, &c);
    let mut cleared: Vec<_> = report
        .cleared()
        .map(|w| {
            let (kind, key) = match w.kind {
                stealmark_marker::SlotKind::Soft => (SM_SLOT_SOFT, 0),
                stealmark_marker::SlotKind::Weak => (SM_SLOT_WEAK, 0),
                stealmark_marker::SlotKind::Phantom => (SM_SLOT_PHANTOM, 0),
                stealmark_marker::SlotKind::Ephemeron { key } => (SM_SLOT_EPHEMERON, key.word()),
                stealmark_marker::SlotKind::Strong => (SM_SLOT_STRONG, 0),
                stealmark_marker::SlotKind::StrongLeaf => (SM_SLOT_STRONG_LEAF, 0),
            };
            (w.holder.word(), w.slot, w.target.word(), key, kind)
        })
        .collect();
    cleared.sort();
    let mut to_finalize: Vec<usize> = report.to_finalize().map(|r| r.word()).collect();
    to_finalize.sort();
    Outcome {
        marked: heap.marked(),
        cleared,
        to_finalize,
        live: (report.live_objects(), report.live_bytes()),
        by_type: report
            .live_by_type()
            .iter()
            .map(|t| (t.objects, t.bytes))
            .collect(),
    }
}

/// Roots through `visit_chunk`: one chunk per 5 roots.
unsafe extern "C" fn chunks_of_5(ctx: *mut c_void) -> usize {
    // SAFETY: `ctx` is the roots' vector.
    unsafe { &*(ctx as *const Vec<usize>) }.len().div_ceil(5)
}

unsafe extern "C" fn visit_5(
    ctx: *mut c_void,
    chunk: usize,
    visit: unsafe extern "C" fn(*mut c_void, usize),
    vctx: *mut c_void,
) {
    // SAFETY: `ctx` is the roots' vector.
    let roots = unsafe { &*(ctx as *const Vec<usize>) };
    for &r in roots.iter().skip(5 * chunk).take(5) {
        // SAFETY: the engine's visitor with its context.
        unsafe { visit(vctx, r) };
    }
}

/// Roots through `scan_chunk`, 5 per chunk.
unsafe extern "C" fn scan_5(
    ctx: *mut c_void,
    chunk: usize,
    from: usize,
    out: *mut usize,
    cap: usize,
) -> usize {
    // SAFETY: `ctx` is the roots' vector.
    let roots = unsafe { &*(ctx as *const Vec<usize>) };
    let part = &roots[(5 * chunk).min(roots.len())..(5 * chunk + 5).min(roots.len())];
    let part = &part[from.min(part.len())..];
    let n = part.len().min(cap);
    // SAFETY: `out` has room for `cap >= n` references.
    unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), out, n) };
    n
}

/// Objects handed to `count_prefetch_slots`.
static PREFETCH_SLOTS_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A second-stage prefetch hint that reads the object's header (as a
/// runtime's would, to find memory kept apart) and counts its calls.
unsafe extern "C" fn count_prefetch_slots(_: *mut c_void, r: usize) {
    // SAFETY: the engine passes references of the heap.
    let n = unsafe { node(r) };
    stealmark_marker::model::prefetch_read(n.slots.as_ptr().cast());
    // Relaxed: the test reads the count after `sm_collect` returns, which
    // joins the workers that call this.
    PREFETCH_SLOTS_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// Gives the model the second-stage hints: a two-line header
/// (`prefetch_bytes`) and `prefetch_slots`, which must not change what is
/// marked.
fn hinted(model: &mut sm_object_model) {
    model.prefetch_bytes = 64;
    model.prefetch_slots = Some(count_prefetch_slots);
}

/// Makes the model one whose `scan_slots` clamps the end it is given.
fn clamping(model: &mut sm_object_model) {
    model.scan_slots = Some(c_scan_clamping);
    model.scan_clamps_end = 1;
}

/// Calls of `counted_slot_count`.
static SLOT_COUNT_CALLS: AtomicUsize = AtomicUsize::new(0);

/// The heap's `slot_count`, counting its calls.
unsafe extern "C" fn counted_slot_count(ctx: *mut c_void, r: usize) -> usize {
    // Relaxed: read after `sm_collect` returns, as above.
    SLOT_COUNT_CALLS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the engine's arguments, passed on.
    unsafe { c_count(ctx, r) }
}

/// Marks `heap` through the C interface, with the object model `c_model`
/// gives as `adjust` changes it.
fn through_c(
    heap: &Heap,
    marker: *mut sm_marker,
    mode: u32,
    roots_form: usize,
    soft: u32,
    adjust: impl Fn(&mut sm_object_model),
) -> Outcome {
    heap.clear_marks();
    let mut model = c_model(heap);
    adjust(&mut model);
    let marks = c_marks(heap, mode);
    let root_addrs = heap.root_addrs();
    let fin_addrs = heap.finalizable_addrs();
    let mut roots = c_refs(&root_addrs);
    if roots_form > 0 {
        roots.refs = std::ptr::null();
        roots.len = 0;
        roots.ctx = &root_addrs as *const Vec<usize> as *mut c_void;
        roots.chunk_count = Some(chunks_of_5);
        if roots_form == 1 {
            roots.visit_chunk = Some(visit_5);
        } else {
            roots.scan_chunk = Some(scan_5);
        }
    }
    let fin = c_refs(&fin_addrs);
    let c = sm_collection {
        model: &model,
        marks: &marks,
        roots: &roots,
        finalizable: &fin,
        soft: sm_soft_policy {
            mode: soft,
            reserved: 0,
            ctx: std::ptr::null_mut(),
            keep: Some(c_keep),
        },
    };
    let mut report = sm_report::default();
    // SAFETY: valid pointers; the heap outlives the call.
    let s = unsafe { sm_collect(marker, &c, &mut report) };
    assert_eq!(s, SM_OK, "{}", last_error());
    let marked = if mode == SM_MARKS_SIDE_BITMAP {
        (0..heap.nodes.len())
            .map(|i| {
                let mut m = false;
                // SAFETY: a current report, a valid out-parameter.
                assert_eq!(unsafe { sm_report_is_marked(&report, i, &mut m) }, SM_OK);
                m
            })
            .collect()
    } else {
        heap.marked()
    };
    let mut stats = sm_stats::default();
    // SAFETY: as above.
    assert_eq!(unsafe { sm_report_stats(&report, &mut stats) }, SM_OK);
    // Paged in small pages, so that the paging is exercised.
    let mut cleared = Vec::new();
    let mut page = [sm_weak_ref::default(); 7];
    loop {
        let mut n = 0;
        // SAFETY: as above; `page` has room for 7.
        let s = unsafe { sm_report_cleared(&report, cleared.len(), page.as_mut_ptr(), 7, &mut n) };
        assert_eq!(s, SM_OK);
        cleared.extend(
            page[..n]
                .iter()
                .map(|w| (w.holder, w.slot, w.target, w.key, w.kind)),
        );
        if n < 7 {
            break;
        }
    }
    assert_eq!(cleared.len() as u64, stats.cleared);
    let mut workers = 0;
    // SAFETY: as above.
    assert_eq!(unsafe { sm_report_workers(&report, &mut workers) }, SM_OK);
    let mut by_worker = 0;
    for w in 0..workers {
        let (mut n, mut total) = (0, 0);
        // SAFETY: as above; a zero-capacity copy needs no buffer.
        let s = unsafe {
            sm_report_cleared_by_worker(&report, w, 0, std::ptr::null_mut(), 0, &mut n, &mut total)
        };
        assert_eq!((s, n), (SM_OK, 0));
        by_worker += total;
    }
    assert_eq!(by_worker, cleared.len());
    cleared.sort();
    let mut to_finalize = vec![0usize; heap.finalizable.len() + 1];
    let mut n = 0;
    // SAFETY: as above.
    let s = unsafe {
        sm_report_to_finalize(
            &report,
            0,
            to_finalize.as_mut_ptr(),
            to_finalize.len(),
            &mut n,
        )
    };
    assert_eq!(s, SM_OK);
    to_finalize.truncate(n);
    to_finalize.sort();
    assert_eq!(n as u64, stats.to_finalize);
    let by_type = (0..TYPES)
        .map(|t| {
            let mut c = sm_type_count::default();
            // SAFETY: as above.
            assert_eq!(unsafe { sm_report_live_by_type(&report, t, &mut c) }, SM_OK);
            (c.objects, c.bytes)
        })
        .collect();
    Outcome {
        marked,
        cleared,
        to_finalize,
        live: (stats.live_objects, stats.live_bytes),
        by_type,
    }
}

#[test]
fn the_c_interface_marks_and_reports_as_the_rust_api() {
    for seed in 1..=4u64 {
        let mut heap = Heap::random(3000, seed * 0x9E37_79B9);
        // Odd seeds hint leaves through the C interface; the Rust side reads
        // them as plain strong slots.
        if seed % 2 == 1 {
            assert!(heap.hint_leaves() > 0, "seed {seed}: no leaf hinted");
        }
        for workers in [1u32, 2, 3] {
            let expected: Vec<Outcome> = (0..3)
                .map(|soft| through_rust(&heap, workers as usize, soft))
                .collect();
            for solo_below in [0, u64::MAX] {
                let marker = new_marker(&config(workers, solo_below));
                for (i, mode) in [
                    SM_MARKS_HEADER_BYTE,
                    SM_MARKS_CALLBACKS,
                    SM_MARKS_SIDE_BITMAP,
                ]
                .into_iter()
                .enumerate()
                {
                    let soft = ((seed as usize + i) % 3) as u32;
                    let roots_form = (seed as usize + workers as usize + i) % 3;
                    let hints = (seed as usize + i) % 2 == 0;
                    let clamps = (seed as usize + workers as usize) % 2 == 0;
                    let before = PREFETCH_SLOTS_CALLS.load(Ordering::Relaxed);
                    let adjust = |model: &mut sm_object_model| {
                        if hints {
                            hinted(model);
                        }
                        if clamps {
                            clamping(model);
                        }
                    };
                    let got = through_c(&heap, marker, mode, roots_form, soft, adjust);
                    if hints {
                        assert!(
                            PREFETCH_SLOTS_CALLS.load(Ordering::Relaxed) > before,
                            "seed {seed}, {workers} workers, mode {mode}: no second-stage hint"
                        );
                    }
                    assert!(got.live.0 > 0);
                    assert_eq!(
                        got, expected[soft as usize],
                        "seed {seed}, {workers} workers, solo_below {solo_below}, mode {mode}, roots form {roots_form}, soft {soft}, clamps {clamps}"
                    );
                }
                // SAFETY: a marker from `sm_marker_new`, used by no other call.
                unsafe { sm_marker_free(marker) };
            }
        }
    }
}

#[test]
fn a_model_that_clamps_scans_each_object_with_one_call() {
    let mut heap = Heap::random(3000, 0x5EED);
    // Strong slots only, so that no holder is scanned again (which asks the
    // count), and one root array of 9000 slots, past the engine's limit for
    // a whole scan, to be scanned in chunks, the last one past its end.
    for node in &mut heap.nodes {
        for slot in &mut node.slots {
            slot.kind = SM_SLOT_STRONG;
        }
    }
    let targets = heap.nodes.len();
    let mut rng = Rng(99);
    heap.nodes[0].slots = (0..9000)
        .map(|_| Slot {
            target: Some(rng.below(targets)),
            kind: SM_SLOT_STRONG,
            key: 0,
        })
        .collect();
    heap.roots.push(0);
    // Objects with a buffer's worth of non-null slots or more: the ones
    // whose count a clamping model is asked for.
    let full = heap
        .nodes
        .iter()
        .filter(|n| n.slots.iter().filter(|s| s.target.is_some()).count() >= 128)
        .count();
    let expected = through_rust(&heap, 2, 0);
    let marker = new_marker(&config(2, 0));
    let mut calls = [0; 2];
    for clamps in [false, true] {
        let before = SLOT_COUNT_CALLS.load(Ordering::Relaxed);
        let got = through_c(&heap, marker, SM_MARKS_HEADER_BYTE, 0, 0, |model| {
            model.slot_count = Some(counted_slot_count);
            if clamps {
                clamping(model);
            }
        });
        assert_eq!(got, expected, "clamps {clamps}");
        calls[usize::from(clamps)] = SLOT_COUNT_CALLS.load(Ordering::Relaxed) - before;
    }
    let live = expected.live.0 as usize;
    assert!(calls[0] >= live, "{} counts for {live} objects", calls[0]);
    assert!(
        (1..=full).contains(&calls[1]),
        "{} counts with the runtime clamping, {full} objects of a full buffer",
        calls[1]
    );
    // SAFETY: a marker from `sm_marker_new`, used by no other call.
    unsafe { sm_marker_free(marker) };
}

#[test]
fn solo_collections_use_one_worker_and_the_others_do_not() {
    let heap = Heap::random(2000, 77);
    let marker = new_marker(&config(2, 1000));
    let mut used = Vec::new();
    for _ in 0..3 {
        let model = c_model(&heap);
        let marks = c_marks(&heap, SM_MARKS_CALLBACKS);
        let mut report = sm_report::default();
        let mut stats = sm_stats::default();
        assert_eq!(
            collect(&heap, marker, &model, &marks, &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        // SAFETY: a report of this thread's last collection.
        unsafe {
            assert_eq!(sm_report_stats(&report, &mut stats), SM_OK);
        }
        used.push((stats.workers_used, stats.live_objects >= 1000));
    }
    // The first collection counts as small; it marks over 1000 objects, so
    // the next ones wake the pool.
    assert_eq!(used, [(1, true), (2, true), (2, true)]);
    // SAFETY: as above.
    unsafe { sm_marker_free(marker) };
}
