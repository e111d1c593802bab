//! Set-up that the tests of collections and of mark cycles share: a
//! collection of a heap's roots, one `sm_collect` call on it, and scanners
//! that break their contract.

use std::ffi::c_void;

use stealmark_capi::*;

use super::{c_refs, clear_all, Heap};

/// A collection of `roots` with `model` and `marks`: no finalizable
/// objects, and every soft slot to an unmarked referent cleared.
pub fn collection(model: &sm_object_model, marks: &sm_marks, roots: &sm_refs) -> sm_collection {
    sm_collection {
        model,
        marks,
        roots,
        finalizable: std::ptr::null(),
        soft: clear_all(),
    }
}

/// Runs one collection of `heap` on `marker` with `model` and `marks`,
/// from `heap`'s roots and its marks cleared.
pub fn collect(
    heap: &Heap,
    marker: *mut sm_marker,
    model: &sm_object_model,
    marks: &sm_marks,
    report: &mut sm_report,
) -> sm_status {
    let roots = heap.root_addrs();
    let roots = c_refs(&roots);
    heap.clear_marks();
    let c = collection(model, marks, &roots);
    // SAFETY: valid pointers for the call.
    unsafe { sm_collect(marker, &c, report) }
}

/// A scanner that reports a slot index past the end of the range asked
/// for (five past it).
pub unsafe extern "C" fn scan_out_of_range(
    _: *mut c_void,
    r: usize,
    _: usize,
    end: usize,
    out: *mut sm_slot,
    _: usize,
) -> usize {
    // SAFETY: `out` has room for at least 64 entries.
    unsafe {
        out.write(sm_slot {
            index: end + 5,
            target: r,
            key: 0,
            kind: SM_SLOT_STRONG,
            reserved: 0,
        })
    };
    1
}

/// A scanner that reports failure.
pub unsafe extern "C" fn scan_fails(
    _: *mut c_void,
    _: usize,
    _: usize,
    _: usize,
    _: *mut sm_slot,
    _: usize,
) -> usize {
    SM_SCAN_FAILED
}
