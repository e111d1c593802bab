//! Misuse through the C interface comes back as a status and a message that
//! names what was wrong, never as a crash or a report that looks right.

use crate::common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use common::*;
use stealmark_capi::*;

fn ok_collect(heap: &Heap, marker: *mut sm_marker) -> sm_report {
    let mut report = sm_report::default();
    let s = collect(
        heap,
        marker,
        &c_model(heap),
        &c_marks(heap, SM_MARKS_HEADER_BYTE),
        &mut report,
    );
    assert_eq!(s, SM_OK, "{}", last_error());
    report
}

#[test]
fn null_arguments_are_named() {
    let heap = Heap::random(50, 1);
    let marker = new_marker(&config(2, 0));
    let mut report = sm_report::default();
    // SAFETY: null pointers are what is being tested; the others are valid.
    unsafe {
        assert_eq!(
            sm_collect(std::ptr::null_mut(), std::ptr::null(), &mut report),
            SM_ERR_NULL
        );
        assert_eq!(last_error(), "marker is NULL");
        assert_eq!(
            sm_collect(marker, std::ptr::null(), &mut report),
            SM_ERR_NULL
        );
        assert_eq!(last_error(), "collection is NULL");
        let mut m = std::ptr::null_mut();
        assert_eq!(sm_marker_new(std::ptr::null(), &mut m), SM_ERR_NULL);
        assert_eq!(
            sm_report_stats(std::ptr::null(), std::ptr::null_mut()),
            SM_ERR_NULL
        );
        sm_marker_free(std::ptr::null_mut());
    }
    let mut model = c_model(&heap);
    model.scan_slots = None;
    let s = collect(
        &heap,
        marker,
        &model,
        &c_marks(&heap, SM_MARKS_HEADER_BYTE),
        &mut report,
    );
    assert_eq!(
        (s, last_error().as_str()),
        (SM_ERR_NULL, "model.scan_slots is NULL")
    );
    let mut marks = c_marks(&heap, SM_MARKS_CALLBACKS);
    marks.is_marked = None;
    let s = collect(&heap, marker, &c_model(&heap), &marks, &mut report);
    assert_eq!(
        (s, last_error().as_str()),
        (SM_ERR_NULL, "marks.is_marked is NULL")
    );
    // SAFETY: a marker from `sm_marker_new`.
    unsafe { sm_marker_free(marker) };
}

#[test]
fn bad_configurations_and_mark_descriptions_are_named() {
    let mut c = config(2, 0);
    c.deque = c"no-such-deque".as_ptr();
    let mut m = std::ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { sm_marker_new(&c, &mut m) }, SM_ERR_CONFIG);
    assert!(
        last_error().contains("no-such-deque") && last_error().contains("steal-half"),
        "{}",
        last_error()
    );
    assert!(m.is_null(), "no marker on failure");
    c.deque = c"abp".as_ptr();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { sm_marker_new(&c, &mut m) }, SM_OK);

    let heap = Heap::random(50, 2);
    let mut marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    marks.header.clear_bits = 1; // overlaps set_bits
    let mut report = sm_report::default();
    assert_eq!(
        collect(&heap, m, &c_model(&heap), &marks, &mut report),
        SM_ERR_MARKS
    );
    assert!(last_error().contains("overlap"), "{}", last_error());
    marks.mode = 9;
    assert_eq!(
        collect(&heap, m, &c_model(&heap), &marks, &mut report),
        SM_ERR_MARKS
    );
    assert!(last_error().contains("marks.mode 9"), "{}", last_error());
    // The marker is still usable.
    ok_collect(&heap, m);
    // SAFETY: a marker from `sm_marker_new`.
    unsafe { sm_marker_free(m) };
}

#[test]
fn prefetch_bytes_above_two_lines_are_out_of_range_and_up_to_them_mark_the_same() {
    let heap = Heap::random(2_000, 5);
    let marker = new_marker(&config(2, 0));
    let mut report = sm_report::default();
    let mut model = c_model(&heap);
    model.prefetch_bytes = 65;
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    assert_eq!(
        (
            collect(&heap, marker, &model, &marks, &mut report),
            last_error().as_str()
        ),
        (SM_ERR_RANGE, "model.prefetch_bytes is 65, above 64")
    );
    let expected = {
        ok_collect(&heap, marker);
        heap.marked()
    };
    for bytes in [1, 56, 64] {
        model.prefetch_bytes = bytes;
        let s = collect(&heap, marker, &model, &marks, &mut report);
        assert_eq!(s, SM_OK, "{bytes}: {}", last_error());
        assert_eq!(heap.marked(), expected, "prefetch_bytes {bytes}");
    }
    // SAFETY: a marker from `sm_marker_new`.
    unsafe { sm_marker_free(marker) };
}

/// A scanner that reports an unaligned reference in slot 0.
unsafe extern "C" fn scan_unaligned(
    _: *mut c_void,
    r: usize,
    start: usize,
    end: usize,
    out: *mut sm_slot,
    _: usize,
) -> usize {
    if start > 0 || end == 0 {
        return 0;
    }
    // SAFETY: as above.
    unsafe {
        out.write(sm_slot {
            index: 0,
            target: r + 3,
            key: 0,
            kind: SM_SLOT_STRONG,
            reserved: 0,
        })
    };
    1
}

/// A scanner whose slot 0 has an unknown kind.
unsafe extern "C" fn scan_bad_kind(
    _: *mut c_void,
    r: usize,
    start: usize,
    end: usize,
    out: *mut sm_slot,
    _: usize,
) -> usize {
    if start > 0 || end == 0 {
        return 0;
    }
    // SAFETY: as above.
    unsafe {
        out.write(sm_slot {
            index: 0,
            target: r,
            key: 0,
            kind: 17,
            reserved: 0,
        })
    };
    1
}

/// Every node has at least one slot, so that each scanner is called.
fn heap_with_slots(seed: u64) -> Heap {
    let mut heap = Heap::random(300, seed);
    for n in &mut heap.nodes {
        if n.slots.is_empty() {
            n.slots.push(Slot {
                target: None,
                kind: SM_SLOT_STRONG,
                key: 0,
            });
        }
    }
    heap
}

#[test]
fn broken_callbacks_fail_the_collection_and_leave_the_marker_usable() {
    type Scan =
        unsafe extern "C" fn(*mut c_void, usize, usize, usize, *mut sm_slot, usize) -> usize;
    let cases: [(Scan, &str); 4] = [
        (scan_out_of_range, "outside ["),
        (scan_unaligned, "not a multiple of 8"),
        (scan_bad_kind, "unknown kind 17"),
        (scan_fails, "SM_SCAN_FAILED"),
    ];
    let heap = heap_with_slots(3);
    for workers in [1, 2] {
        let marker = new_marker(&config(workers, 0));
        for (scan, what) in cases {
            let mut model = c_model(&heap);
            model.scan_slots = Some(scan);
            let mut report = sm_report::default();
            let s = collect(
                &heap,
                marker,
                &model,
                &c_marks(&heap, SM_MARKS_HEADER_BYTE),
                &mut report,
            );
            assert_eq!(s, SM_ERR_CONTRACT, "{what}: {}", last_error());
            assert!(last_error().contains(what), "{what}: {}", last_error());
            assert!(report.marker.is_null(), "no report on failure");
            // The next collection works and is right.
            let r = ok_collect(&heap, marker);
            let mut st = sm_stats::default();
            // SAFETY: a current report.
            assert_eq!(unsafe { sm_report_stats(&r, &mut st) }, SM_OK);
            assert_eq!(
                st.live_objects,
                heap.marked().iter().filter(|&&m| m).count() as u64
            );
        }
        // SAFETY: a marker from `sm_marker_new`.
        unsafe { sm_marker_free(marker) };
    }
}

#[test]
fn references_outside_the_heap_bounds_and_dense_indices_past_the_bound_are_caught() {
    let heap = heap_with_slots(4);
    let marker = new_marker(&config(2, 0));
    let (lo, hi) = heap.bounds();
    let mut model = c_model(&heap);
    model.heap_start = lo;
    model.heap_end = hi;
    let mut report = sm_report::default();
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    assert_eq!(
        collect(&heap, marker, &model, &marks, &mut report),
        SM_OK,
        "{}",
        last_error()
    );
    model.heap_end = lo + 16; // most nodes now lie outside
    assert_eq!(
        collect(&heap, marker, &model, &marks, &mut report),
        SM_ERR_CONTRACT
    );
    assert!(
        last_error().contains("outside the heap"),
        "{}",
        last_error()
    );
    let mut marks = c_marks(&heap, SM_MARKS_SIDE_BITMAP);
    marks.dense_bound = 10;
    assert_eq!(
        collect(&heap, marker, &c_model(&heap), &marks, &mut report),
        SM_ERR_CONTRACT
    );
    assert!(
        last_error().contains("not below dense_bound = 10"),
        "{}",
        last_error()
    );
    // SAFETY: a marker from `sm_marker_new`.
    unsafe { sm_marker_free(marker) };
}

#[test]
fn a_report_goes_stale_at_the_next_collection() {
    let heap = Heap::random(200, 5);
    let marker = new_marker(&config(2, 0));
    let first = ok_collect(&heap, marker);
    let mut st = sm_stats::default();
    // SAFETY: reports of a live marker; valid out-parameters.
    unsafe {
        assert_eq!(sm_report_stats(&first, &mut st), SM_OK);
        let second = ok_collect(&heap, marker);
        assert_eq!(sm_report_stats(&first, &mut st), SM_ERR_STALE);
        assert!(last_error().contains("stale"), "{}", last_error());
        assert_eq!(sm_report_stats(&second, &mut st), SM_OK);
        let mut t = sm_type_count::default();
        assert_eq!(sm_report_live_by_type(&second, TYPES, &mut t), SM_ERR_RANGE);
        let mut m = false;
        assert_eq!(sm_report_is_marked(&second, 0, &mut m), SM_ERR_MARKS);
        let (mut n, mut total) = (0, 0);
        assert_eq!(
            sm_report_cleared_by_worker(&second, 2, 0, std::ptr::null_mut(), 0, &mut n, &mut total),
            SM_ERR_RANGE
        );
        sm_marker_free(marker);
    }
}

static REENTERED: AtomicPtr<sm_marker> = AtomicPtr::new(std::ptr::null_mut());
static REENTRY_STATUS: AtomicI32 = AtomicI32::new(-1);

/// A size callback that tries to start a collection on the marker that is
/// running it (once).
unsafe extern "C" fn size_reentering(ctx: *mut c_void, r: usize) -> usize {
    let m = REENTERED.swap(std::ptr::null_mut(), Ordering::Relaxed);
    if !m.is_null() {
        // SAFETY: `ctx` is the heap.
        let heap = unsafe { &*(ctx as *const Heap) };
        let mut report = sm_report::default();
        let s = collect(
            heap,
            m,
            &c_model(heap),
            &c_marks(heap, SM_MARKS_HEADER_BYTE),
            &mut report,
        );
        REENTRY_STATUS.store(s, Ordering::Relaxed);
    }
    // SAFETY: as in `c_size`.
    unsafe { c_size(ctx, r) }
}

#[test]
fn a_callback_that_reenters_its_marker_gets_busy() {
    let heap = Heap::random(200, 6);
    let marker = new_marker(&config(1, 0));
    let mut model = c_model(&heap);
    model.size_bytes = Some(size_reentering);
    REENTERED.store(marker, Ordering::Relaxed);
    let mut report = sm_report::default();
    let marks = c_marks(&heap, SM_MARKS_CALLBACKS);
    // The inner call clears the marks of the heap the outer one marks; only
    // the statuses matter here.
    assert_eq!(collect(&heap, marker, &model, &marks, &mut report), SM_OK);
    assert_eq!(REENTRY_STATUS.load(Ordering::Relaxed), SM_ERR_BUSY);
    // SAFETY: a marker from `sm_marker_new`.
    unsafe { sm_marker_free(marker) };
}
