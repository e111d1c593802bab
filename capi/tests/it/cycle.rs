//! Mark cycles through the C interface: one cycle through `sm_cycle_*`
//! and through `OwnedCycle` on the same heap gives the same marks and
//! report; every misuse comes back as a status with a message.

use crate::common;

use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

use common::*;
use stealmark_capi::*;
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{
    Collection, CycleOptions, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, OwnedCycle,
    SlotKind,
};

/// The shared heap as an owned `ObjectModel`, for `OwnedCycle`.
struct Owned(Arc<Heap>);

impl ObjectModel for Owned {
    fn size_bytes(&self, o: ObjRef) -> usize {
        RustModel(&self.0).size_bytes(o)
    }
    fn slot_count(&self, o: ObjRef) -> usize {
        RustModel(&self.0).slot_count(o)
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, v: V) {
        RustModel(&self.0).scan_slots(o, s, v)
    }
    fn type_count(&self) -> usize {
        TYPES
    }
    fn type_id(&self, o: ObjRef) -> usize {
        RustModel(&self.0).type_id(o)
    }
}

/// The nodes' mark bytes for `Owned`.
struct OwnedMarks;

impl MarkStore<Owned> for OwnedMarks {
    fn try_mark(&self, h: &Owned, o: ObjRef) -> bool {
        RustMarks.try_mark(&RustModel(&h.0), o)
    }
    fn is_marked(&self, h: &Owned, o: ObjRef) -> bool {
        RustMarks.is_marked(&RustModel(&h.0), o)
    }
}

/// Marks, live objects and bytes, slots to clear and objects to finalize
/// (sorted).
type Outcome = (Vec<bool>, u64, u64, Vec<(usize, usize)>, Vec<usize>);

/// Every `n`th node, from node `from`.
fn every(heap: &Heap, from: usize, n: usize) -> Vec<usize> {
    (from..heap.nodes.len())
        .step_by(n)
        .map(|i| heap.addr(i))
        .collect()
}

/// The objects a mutator "overwrote" during the cycle (the snapshot
/// barrier): every 7th node.
fn overwritten(heap: &Heap) -> Vec<usize> {
    every(heap, 0, 7)
}

/// The values a mutator "stored" into marked holders (the forward
/// barrier): every 11th node from the 5th.
fn stored(heap: &Heap) -> Vec<usize> {
    every(heap, 5, 11)
}

/// The holders a mutator "wrote to" (the backward barrier): every 13th
/// node from the 3rd, marked or not: their slots are scanned either way.
fn written(heap: &Heap) -> Vec<usize> {
    every(heap, 3, 13)
}

fn through_rust(heap: &Arc<Heap>) -> Outcome {
    heap.clear_marks();
    let word = |i: &usize| ObjRef::from_word(heap.addr(*i)).unwrap();
    let roots: Vec<ObjRef> = heap.roots.iter().map(word).collect();
    let fin: Vec<ObjRef> = heap.finalizable.iter().map(word).collect();
    let marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    let mut options = CycleOptions::default();
    options.parallel_steps = true;
    let cycle = OwnedCycle::start(
        marker,
        Arc::new(Owned(heap.clone())),
        Arc::new(OwnedMarks),
        &roots[..],
        options,
    );
    cycle.step(50).unwrap();
    cycle.start_background().unwrap();
    let mut m = cycle.mutator();
    for &w in &overwritten(heap) {
        m.pre_write(ObjRef::from_word(w)).unwrap();
    }
    for &w in &stored(heap) {
        m.shade(ObjRef::from_word(w).unwrap()).unwrap();
    }
    for &w in &written(heap) {
        m.rescan(ObjRef::from_word(w).unwrap()).unwrap();
    }
    m.detach().unwrap();
    cycle.wait_quiet(None);
    let c = Collection::new(&roots[..])
        .finalizable(&fin[..])
        .soft_refs(SoftRefs::KeepAll);
    let mut done = cycle.finish(&c).unwrap();
    let r = done.report();
    let mut cleared: Vec<_> = r.cleared().map(|w| (w.holder.word(), w.slot)).collect();
    cleared.sort();
    let mut to_finalize: Vec<usize> = r.to_finalize().map(|o| o.word()).collect();
    to_finalize.sort();
    (
        heap.marked(),
        r.live_objects(),
        r.live_bytes(),
        cleared,
        to_finalize,
    )
}

fn through_c(heap: &Heap, mode: u32) -> Outcome {
    heap.clear_marks();
    let marker = new_marker(&config(2, 0));
    let model = c_model(heap);
    let marks = c_marks(heap, mode);
    let root_addrs = heap.root_addrs();
    let fin_addrs = heap.finalizable_addrs();
    let roots = c_refs(&root_addrs);
    let fin = c_refs(&fin_addrs);
    let mut cycle = std::ptr::null_mut();
    let mut options = std::mem::MaybeUninit::uninit();
    // SAFETY: valid pointers; the heap outlives the cycle.
    let s = unsafe {
        sm_cycle_options_init(options.as_mut_ptr());
        let mut options = options.assume_init();
        options.parallel_steps = 1;
        sm_cycle_start(marker, &model, &marks, &roots, &options, &mut cycle)
    };
    assert_eq!(s, SM_OK, "{}", last_error());
    let mut m = std::ptr::null_mut();
    // SAFETY: a live cycle; valid out-parameters.
    unsafe {
        assert_eq!(sm_cycle_step(cycle, 50, std::ptr::null_mut()), SM_OK);
        assert_eq!(sm_cycle_start_background(cycle), SM_OK);
        assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
        for &w in &overwritten(heap) {
            assert_eq!(sm_mutator_pre_write(m, w), SM_OK);
        }
        for &w in &stored(heap) {
            assert_eq!(sm_mutator_shade(m, w), SM_OK);
        }
        for &w in &written(heap) {
            assert_eq!(sm_mutator_rescan(m, w), SM_OK);
        }
        assert_eq!(sm_mutator_detach(m), SM_OK);
        let mut quiet = false;
        assert_eq!(sm_cycle_wait_quiet(cycle, -1, &mut quiet), SM_OK);
    }
    let remark = sm_remark {
        roots: &roots,
        finalizable: &fin,
        soft: sm_soft_policy {
            mode: SM_SOFT_KEEP_ALL,
            reserved: 0,
            ctx: std::ptr::null_mut(),
            keep: None,
        },
    };
    let mut report = sm_report::default();
    // SAFETY: as above.
    let s = unsafe { sm_cycle_finish(cycle, &remark, &mut report) };
    assert_eq!(s, SM_OK, "{}", last_error());
    let mut stats = sm_stats::default();
    // SAFETY: a current report.
    assert_eq!(unsafe { sm_report_stats(&report, &mut stats) }, SM_OK);
    let mut page = vec![sm_weak_ref::default(); stats.cleared as usize];
    let mut fin_out = vec![0usize; stats.to_finalize as usize];
    let (mut n, mut k) = (0, 0);
    // SAFETY: as above; the buffers have room for every entry.
    unsafe {
        assert_eq!(
            sm_report_cleared(&report, 0, page.as_mut_ptr(), page.len(), &mut n),
            SM_OK
        );
        assert_eq!(
            sm_report_to_finalize(&report, 0, fin_out.as_mut_ptr(), fin_out.len(), &mut k),
            SM_OK
        );
    }
    let mut cleared: Vec<_> = page[..n].iter().map(|w| (w.holder, w.slot)).collect();
    cleared.sort();
    fin_out.truncate(k);
    fin_out.sort();
    let marked = heap.marked();
    // SAFETY: handles from this test, no other call on them.
    unsafe {
        sm_mutator_free(m);
        sm_cycle_free(cycle);
        sm_marker_free(marker);
    }
    (
        marked,
        stats.live_objects,
        stats.live_bytes,
        cleared,
        fin_out,
    )
}

#[test]
fn one_cycle_through_c_and_through_owned_cycle_agree() {
    for seed in [3, 11] {
        let mut heap = Heap::random(3000, seed);
        assert!(heap.hint_leaves() > 0);
        let heap = Arc::new(heap);
        let want = through_rust(&heap);
        assert!(want.1 > 0);
        for mode in [SM_MARKS_HEADER_BYTE, SM_MARKS_CALLBACKS] {
            assert_eq!(through_c(&heap, mode), want, "seed {seed}, mode {mode}");
        }
    }
}

/// A started cycle of `heap` on a new marker.
fn start(heap: &Heap, model: &sm_object_model) -> (*mut sm_marker, *mut sm_cycle, Vec<usize>) {
    let marker = new_marker(&config(2, 0));
    let marks = c_marks(heap, SM_MARKS_HEADER_BYTE);
    let root_addrs = heap.root_addrs();
    let roots = c_refs(&root_addrs);
    let mut cycle = std::ptr::null_mut();
    // SAFETY: valid pointers; the heap outlives the cycle.
    let s = unsafe { sm_cycle_start(marker, model, &marks, &roots, std::ptr::null(), &mut cycle) };
    assert_eq!(s, SM_OK, "{}", last_error());
    (marker, cycle, root_addrs)
}

fn remark(roots: &sm_refs) -> sm_remark {
    sm_remark {
        roots,
        finalizable: std::ptr::null(),
        soft: clear_all(),
    }
}

#[test]
fn misuse_comes_back_as_statuses_with_messages() {
    let heap = Heap::random(500, 5);
    heap.clear_marks();
    let model = c_model(&heap);
    let (marker, cycle, root_addrs) = start(&heap, &model);
    let roots = c_refs(&root_addrs);
    let r = remark(&roots);
    let mut report = sm_report::default();
    let mut m = std::ptr::null_mut();
    // SAFETY: live handles from this test, or null; valid out-parameters.
    unsafe {
        assert_eq!(
            sm_cycle_step(std::ptr::null(), 10, std::ptr::null_mut()),
            SM_ERR_NULL
        );
        assert_eq!(last_error(), "cycle is NULL");
        assert_eq!(sm_mutator_pre_write(std::ptr::null_mut(), 8), SM_ERR_NULL);
        assert_eq!(last_error(), "mutator is NULL");
        assert_eq!(
            sm_cycle_finish(cycle, std::ptr::null(), &mut report),
            SM_ERR_NULL
        );

        // The marker is lent to the cycle.
        let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
        let c = collection(&model, &marks, &roots);
        assert_eq!(sm_collect(marker, &c, &mut report), SM_ERR_BUSY);
        assert!(
            last_error().contains("mark cycle holds"),
            "{}",
            last_error()
        );
        let mut other = std::ptr::null_mut();
        let s = sm_cycle_start(marker, &model, &marks, &roots, std::ptr::null(), &mut other);
        assert_eq!(s, SM_ERR_BUSY);

        // A second background start.
        assert_eq!(sm_cycle_start_background(cycle), SM_OK);
        assert_eq!(sm_cycle_start_background(cycle), SM_ERR_BUSY);
        assert!(last_error().contains("already runs"), "{}", last_error());

        // A bad reference, and an attached handle at the remark.
        assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
        assert_eq!(sm_mutator_pre_write(m, 12), SM_ERR_RANGE);
        assert_eq!(sm_mutator_shade(m, 12), SM_ERR_RANGE);
        assert!(
            last_error().contains("sm_mutator_shade"),
            "{}",
            last_error()
        );
        assert_eq!(sm_mutator_rescan(m, 0), SM_ERR_RANGE);
        assert!(
            last_error().contains("sm_mutator_rescan"),
            "{}",
            last_error()
        );
        assert_eq!(sm_mutator_pre_write(m, heap.addr(1)), SM_OK);
        assert_eq!(sm_cycle_finish(cycle, &r, &mut report), SM_ERR_BUSY);
        assert!(last_error().contains("still held"), "{}", last_error());
        assert_eq!(sm_mutator_detach(m), SM_OK);
        assert_eq!(
            sm_cycle_finish(cycle, &r, &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        let mut stats = sm_stats::default();
        assert_eq!(sm_report_stats(&report, &mut stats), SM_OK);
        assert!(stats.live_objects > 0);

        // Used after the remark.
        assert_eq!(sm_cycle_finish(cycle, &r, &mut report), SM_ERR_ENDED);
        assert!(last_error().contains("ended"), "{}", last_error());
        assert_eq!(sm_cycle_step(cycle, 10, std::ptr::null_mut()), SM_ERR_ENDED);
        assert_eq!(sm_mutator_pre_write(m, heap.addr(2)), SM_ERR_ENDED);
        assert_eq!(sm_mutator_allocate_black(m, heap.addr(2)), SM_ERR_ENDED);
        assert_eq!(sm_mutator_shade(m, heap.addr(2)), SM_ERR_ENDED);
        assert_eq!(sm_mutator_shade(m, 0), SM_ERR_ENDED);
        assert_eq!(sm_mutator_rescan(m, heap.addr(2)), SM_ERR_ENDED);
        sm_cycle_free(cycle);
        // The handle outlives its cycle safely.
        assert_eq!(sm_mutator_pre_write(m, heap.addr(3)), SM_ERR_ENDED);
        sm_mutator_free(m);
        // The marker is back.
        heap.clear_marks();
        assert_eq!(
            sm_collect(marker, &c, &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        sm_marker_free(marker);
    }
}

/// A null old value on a detached handle records nothing and takes no
/// buffer while the cycle runs; once the cycle has ended (remarked, or
/// freed unfinished) it gets `SM_ERR_ENDED`, as a reference does.
#[test]
fn a_null_pre_write_on_a_handle_that_outlived_its_cycle_says_ended() {
    let heap = Heap::random(200, 7);
    let model = c_model(&heap);
    for finish in [true, false] {
        heap.clear_marks();
        let (marker, cycle, root_addrs) = start(&heap, &model);
        let roots = c_refs(&root_addrs);
        let mut report = sm_report::default();
        let mut m = std::ptr::null_mut();
        // SAFETY: live handles from this test; valid out-parameters.
        unsafe {
            assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
            assert_eq!(sm_mutator_pre_write(m, 0), SM_OK, "{}", last_error());
            if finish {
                // The remark does not wait for the handle: it holds no buffer.
                let s = sm_cycle_finish(cycle, &remark(&roots), &mut report);
                assert_eq!(s, SM_OK, "{}", last_error());
                assert_eq!(sm_mutator_pre_write(m, 0), SM_ERR_ENDED);
                assert!(last_error().contains("ended"), "{}", last_error());
            }
            sm_cycle_free(cycle);
            assert_eq!(sm_mutator_pre_write(m, 0), SM_ERR_ENDED, "finish {finish}");
            assert_eq!(sm_mutator_pre_write(m, heap.addr(1)), SM_ERR_ENDED);
            sm_mutator_free(m);
            sm_marker_free(marker);
        }
    }
}

#[test]
fn a_failing_scan_poisons_the_cycle_and_free_gives_the_marker_back() {
    let heap = Heap::random(500, 9);
    heap.clear_marks();
    let mut model = c_model(&heap);
    model.scan_slots = Some(scan_fails);
    let (marker, cycle, root_addrs) = start(&heap, &model);
    let roots = c_refs(&root_addrs);
    let r = remark(&roots);
    let mut report = sm_report::default();
    let mut m = std::ptr::null_mut();
    // SAFETY: live handles from this test; valid out-parameters.
    unsafe {
        assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
        // The handle holds a buffer from here on: its barrier's fast path.
        assert_eq!(sm_mutator_pre_write(m, heap.addr(1)), SM_OK);
        let mut done = false;
        let mut s = SM_OK;
        for _ in 0..100 {
            s = sm_cycle_step(cycle, 1000, &mut done);
            if s != SM_OK || done {
                break;
            }
        }
        assert_eq!(s, SM_ERR_POISONED, "done: {done}");
        assert!(last_error().contains("poisoned"), "{}", last_error());
        assert!(last_error().contains("SM_SCAN_FAILED"), "{}", last_error());
        assert_eq!(sm_cycle_step(cycle, 1000, &mut done), SM_ERR_POISONED);
        assert_eq!(sm_cycle_start_background(cycle), SM_ERR_POISONED);
        // The barrier refuses a poisoned cycle, also on its fast path and
        // for a null old value.
        assert_eq!(sm_mutator_pre_write(m, heap.addr(2)), SM_ERR_POISONED);
        assert!(last_error().contains("SM_SCAN_FAILED"), "{}", last_error());
        assert_eq!(sm_mutator_pre_write(m, 0), SM_ERR_POISONED);
        assert_eq!(sm_mutator_allocate_black(m, heap.addr(3)), SM_ERR_POISONED);
        assert_eq!(sm_mutator_shade(m, heap.addr(3)), SM_ERR_POISONED);
        assert_eq!(sm_mutator_rescan(m, heap.addr(3)), SM_ERR_POISONED);
        report.collection = 77;
        assert_eq!(sm_cycle_finish(cycle, &r, &mut report), SM_ERR_POISONED);
        assert_eq!(report.collection, 77, "no report from a poisoned cycle");
        sm_cycle_free(cycle);
        sm_mutator_free(m);
        // The engine is back and usable with a sound model.
        let good = c_model(&heap);
        let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
        assert_eq!(
            collect(&heap, marker, &good, &marks, &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        sm_marker_free(marker);
    }
}

#[test]
fn a_contract_violation_in_a_cycle_comes_back_with_its_message() {
    let heap = Heap::random(500, 4);
    // On a GC worker (the background marking) and on the calling thread (a
    // step): either way the cycle's error names the broken contract.
    for background in [true, false] {
        heap.clear_marks();
        let mut model = c_model(&heap);
        model.scan_slots = Some(scan_out_of_range);
        let (marker, cycle, root_addrs) = start(&heap, &model);
        let roots = c_refs(&root_addrs);
        let r = remark(&roots);
        let mut report = sm_report::default();
        let mut m = std::ptr::null_mut();
        // SAFETY: live handles from this test; valid out-parameters.
        unsafe {
            assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
            let s = if background {
                assert_eq!(sm_cycle_start_background(cycle), SM_OK);
                assert_eq!(sm_cycle_wait_quiet(cycle, -1, std::ptr::null_mut()), SM_OK);
                sm_cycle_finish(cycle, &r, &mut report)
            } else {
                sm_cycle_step(cycle, 1000, std::ptr::null_mut())
            };
            assert_eq!(s, SM_ERR_POISONED, "background {background}");
            let message = last_error();
            assert!(
                message.contains("broke its contract") && message.contains("outside"),
                "background {background}: {message}"
            );
            assert_eq!(sm_mutator_pre_write(m, heap.addr(1)), SM_ERR_POISONED);
            assert!(last_error().contains("outside"), "{}", last_error());
            sm_mutator_free(m);
            sm_cycle_free(cycle);
            sm_marker_free(marker);
        }
    }
}

/// Roots of three chunks whose second holds a reference that is not one.
unsafe extern "C" fn bad_root_chunk(
    ctx: *mut c_void,
    chunk: usize,
    _: usize,
    out: *mut usize,
    _: usize,
) -> usize {
    // SAFETY: `ctx` is a live `Heap` in the test; `out` has room for 256.
    unsafe {
        out.write(if chunk == 1 {
            12
        } else {
            (*ctx.cast::<Heap>()).addr(0)
        })
    };
    1
}

unsafe extern "C" fn three_chunks(_: *mut c_void) -> usize {
    3
}

#[test]
fn a_bad_root_fails_the_call_with_a_contract_error_and_leaves_the_marker_usable() {
    let heap = Heap::random(100, 2);
    let model = c_model(&heap);
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    let bad = sm_refs {
        refs: std::ptr::null(),
        len: 0,
        ctx: (&raw const heap).cast_mut().cast(),
        chunk_count: Some(three_chunks),
        visit_chunk: None,
        scan_chunk: Some(bad_root_chunk),
    };
    let marker = new_marker(&config(2, 0));
    let mut cycle = std::ptr::null_mut();
    // SAFETY: valid pointers; the heap outlives the calls.
    unsafe {
        let s = sm_cycle_start(marker, &model, &marks, &bad, std::ptr::null(), &mut cycle);
        assert_eq!(s, SM_ERR_CONTRACT);
        assert!(last_error().contains("roots chunk 1"), "{}", last_error());
        assert!(cycle.is_null());
    }
    // The marker still has its engine: a cycle starts, and a bad remark
    // root fails the remark, which can then be done again.
    let root_addrs = heap.root_addrs();
    let roots = c_refs(&root_addrs);
    let mut report = sm_report::default();
    // SAFETY: as above.
    unsafe {
        let s = sm_cycle_start(marker, &model, &marks, &roots, std::ptr::null(), &mut cycle);
        assert_eq!(s, SM_OK, "{}", last_error());
        assert_eq!(
            sm_cycle_finish(cycle, &remark(&bad), &mut report),
            SM_ERR_CONTRACT
        );
        assert_eq!(
            sm_cycle_finish(cycle, &remark(&roots), &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        sm_cycle_free(cycle);
        sm_marker_free(marker);
    }
}

#[test]
fn a_cycle_needs_marks_of_its_own() {
    let heap = Heap::random(50, 1);
    let model = c_model(&heap);
    let marks = c_marks(&heap, SM_MARKS_SIDE_BITMAP);
    let roots = c_refs(&[]);
    let marker = new_marker(&config(1, 0));
    let mut cycle = std::ptr::null_mut();
    let mut bad = std::mem::MaybeUninit::uninit();
    // SAFETY: valid pointers.
    unsafe {
        let s = sm_cycle_start(marker, &model, &marks, &roots, std::ptr::null(), &mut cycle);
        assert_eq!(s, SM_ERR_MARKS);
        assert!(cycle.is_null());
        sm_cycle_options_init(bad.as_mut_ptr());
        let mut bad = bad.assume_init();
        bad.backpressure = 9;
        let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
        let s = sm_cycle_start(marker, &model, &marks, &roots, &bad, &mut cycle);
        assert_eq!(s, SM_ERR_CONFIG);
        assert!(last_error().contains("backpressure"), "{}", last_error());
        bad.backpressure = SM_BACKPRESSURE_ASSIST;
        bad.parallel_steps = 2;
        let s = sm_cycle_start(marker, &model, &marks, &roots, &bad, &mut cycle);
        assert_eq!(s, SM_ERR_CONFIG);
        assert!(last_error().contains("parallel_steps"), "{}", last_error());
        bad.parallel_steps = 0;
        bad.black_allocation = 2;
        let s = sm_cycle_start(marker, &model, &marks, &roots, &bad, &mut cycle);
        assert_eq!(s, SM_ERR_CONFIG);
        assert!(
            last_error().contains("black_allocation"),
            "{}",
            last_error()
        );
        bad.black_allocation = 0;
        bad.solo = 7;
        let s = sm_cycle_start(marker, &model, &marks, &roots, &bad, &mut cycle);
        assert_eq!(s, SM_ERR_CONFIG);
        assert!(last_error().contains("solo"), "{}", last_error());
        sm_marker_free(marker);
    }
}

/// A cycle started with black_allocation 0 refuses sm_mutator_allocate_black
/// (the object stays unmarked) without poisoning anything, and marks on:
/// its steps at one worker (unshared), then its remark, mark what a
/// collection marks.
#[test]
fn a_cycle_without_black_allocation_refuses_it_and_marks_on() {
    // Object 0 holds only the edge to object 1, which holds nothing, so
    // that the root's closure is part of the heap.
    let mut heap = Heap::random(500, 3);
    heap.nodes[0].slots = vec![Slot {
        target: Some(1),
        kind: SM_SLOT_STRONG,
        key: 0,
    }];
    heap.nodes[1].slots.clear();
    let model = c_model(&heap);
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    let root_addrs = [heap.addr(0)];
    let roots = c_refs(&root_addrs);
    let marker = new_marker(&config(1, 0));
    let mut report = sm_report::default();
    heap.clear_marks();
    let c = collection(&model, &marks, &roots);
    // SAFETY: valid pointers for the call.
    assert_eq!(unsafe { sm_collect(marker, &c, &mut report) }, SM_OK);
    let expected = heap.marked();
    let unreached = expected
        .iter()
        .position(|&m| !m)
        .expect("an unreachable object");
    heap.clear_marks();
    let mut cycle = std::ptr::null_mut();
    let mut options = std::mem::MaybeUninit::uninit();
    let mut m = std::ptr::null_mut();
    // SAFETY: valid pointers; the heap outlives the cycle.
    unsafe {
        sm_cycle_options_init(options.as_mut_ptr());
        let mut options = options.assume_init();
        assert_eq!(options.black_allocation, 1, "the default allows it");
        options.black_allocation = 0;
        let s = sm_cycle_start(marker, &model, &marks, &roots, &options, &mut cycle);
        assert_eq!(s, SM_OK, "{}", last_error());
        assert_eq!(sm_cycle_step(cycle, 20, std::ptr::null_mut()), SM_OK);
        assert_eq!(sm_mutator_new(cycle, &mut m), SM_OK);
        let refused = sm_mutator_allocate_black(m, heap.addr(unreached));
        assert_eq!(refused, SM_ERR_CONFIG);
        assert!(
            last_error().contains("black allocation off"),
            "{}",
            last_error()
        );
        assert_eq!(sm_mutator_detach(m), SM_OK);
        let mut done = false;
        while !done {
            assert_eq!(sm_cycle_step(cycle, 50, &mut done), SM_OK);
        }
        let r = remark(&roots);
        assert_eq!(
            sm_cycle_finish(cycle, &r, &mut report),
            SM_OK,
            "{}",
            last_error()
        );
        assert_eq!(heap.marked(), expected);
        sm_mutator_free(m);
        sm_cycle_free(cycle);
        sm_marker_free(marker);
    }
}

/// A cycle started with `solo` on a two-worker marker, its steps asked to
/// run on every worker, marks what a collection marks, and its report says
/// one worker took part; the same cycle without `solo` says two. With black
/// allocation on and off (its steps then mark unshared).
#[test]
fn a_solo_cycle_marks_what_a_collection_marks_on_one_worker() {
    let heap = Heap::random(3_000, 11);
    let model = c_model(&heap);
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    let root_addrs = [heap.addr(0), heap.addr(1), heap.addr(2)];
    let roots = c_refs(&root_addrs);
    let marker = new_marker(&config(2, 0));
    let mut report = sm_report::default();
    let mut stats = sm_stats::default();
    let c = collection(&model, &marks, &roots);
    heap.clear_marks();
    // SAFETY: valid pointers for the call.
    assert_eq!(unsafe { sm_collect(marker, &c, &mut report) }, SM_OK);
    let expected = heap.marked();
    assert!(expected.iter().filter(|&&m| m).count() > 100);
    for (solo, black_allocation) in [(1, 1), (1, 0), (0, 1), (0, 0)] {
        heap.clear_marks();
        let mut options = std::mem::MaybeUninit::uninit();
        let mut cycle = std::ptr::null_mut();
        // SAFETY: valid pointers; the heap outlives the cycle.
        unsafe {
            sm_cycle_options_init(options.as_mut_ptr());
            let mut options = options.assume_init();
            assert_eq!(options.solo, 0, "off by default");
            options.solo = solo;
            options.parallel_steps = 1;
            options.black_allocation = black_allocation;
            let s = sm_cycle_start(marker, &model, &marks, &roots, &options, &mut cycle);
            assert_eq!(s, SM_OK, "{}", last_error());
            let mut done = false;
            let mut steps = 0;
            while !done {
                assert_eq!(sm_cycle_step(cycle, 64, &mut done), SM_OK);
                steps += 1;
            }
            assert!(steps > 2, "the budget splits the marking into steps");
            let r = remark(&roots);
            let s = sm_cycle_finish(cycle, &r, &mut report);
            assert_eq!(s, SM_OK, "{}", last_error());
            assert_eq!(sm_report_stats(&report, &mut stats), SM_OK);
            sm_cycle_free(cycle);
        }
        let what = format!("solo {solo}, black allocation {black_allocation}");
        assert_eq!(heap.marked(), expected, "{what}");
        assert_eq!(stats.workers, 2, "{what}");
        assert_eq!(stats.workers_used, if solo == 1 { 1 } else { 2 }, "{what}");
    }
    // SAFETY: no cycle holds the marker.
    unsafe { sm_marker_free(marker) };
}
