//! Stop-the-world collections: `sm_collect`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use stealmark_marker::Collection;

use crate::contract::Violation;
use crate::marker::{lent, poisoned, sm_marker, State};
use crate::marks::{HeaderByte, MarkCallbacks};
use crate::model::CModel;
use crate::refs::CRefs;
use crate::soft::Soft;
use crate::status::{guard, sm_status, Error, SM_ERR_CONTRACT, SM_ERR_MARKS};
use crate::types::{
    sm_collection, sm_marks, sm_report, SM_MARKS_CALLBACKS, SM_MARKS_HEADER_BYTE,
    SM_MARKS_SIDE_BITMAP,
};

/// Runs one collection of `c` on `marker`; a contract violation or an
/// engine panic unwinds out of it.
fn run(state: &mut State, c: &sm_collection, solo: bool) -> Result<(), Error> {
    // SAFETY: the header requires the collection's pointers to be null or
    // valid for the call.
    let model = unsafe { c.model.as_ref() }.ok_or_else(|| Error::null("collection.model"))?;
    // SAFETY: as above.
    let marks: &sm_marks =
        unsafe { c.marks.as_ref() }.ok_or_else(|| Error::null("collection.marks"))?;
    // SAFETY: as above.
    let roots = unsafe { c.roots.as_ref() }.ok_or_else(|| Error::null("collection.roots"))?;
    let dense = if marks.mode == SM_MARKS_SIDE_BITMAP {
        let f = marks
            .dense_index
            .ok_or_else(|| Error::null("marks.dense_index"))?;
        Some((f, marks.ctx, marks.dense_bound))
    } else {
        None
    };
    let heap = CModel::new(model, dense)?;
    let roots = CRefs::new(roots, "roots", heap.bounds())?;
    // SAFETY: as above.
    let finalizable = match unsafe { c.finalizable.as_ref() } {
        Some(f) => CRefs::new(f, "finalizable", heap.bounds())?,
        None => CRefs::empty("finalizable"),
    };
    let soft = Soft::new(&c.soft)?;
    #[cfg(test)]
    tests::maybe_panic();
    let collection = Collection::new(&roots)
        .finalizable(&finalizable)
        .soft_refs(soft.refs())
        .solo(solo);
    let marker = state.marker.as_mut().ok_or_else(lent)?;
    let live = match marks.mode {
        SM_MARKS_HEADER_BYTE => {
            let store = HeaderByte::from_marks(marks)?;
            marker
                .collect_with(&heap, &store, &collection)
                .live_objects()
        }
        SM_MARKS_CALLBACKS => {
            let store = MarkCallbacks::from_marks(marks)?;
            marker
                .collect_with(&heap, &store, &collection)
                .live_objects()
        }
        SM_MARKS_SIDE_BITMAP => marker.collect(&heap, &collection).report().live_objects(),
        m => {
            return Err(Error::new(
                SM_ERR_MARKS,
                format!("marks.mode {m} is not one of SM_MARKS_*"),
            ))
        }
    };
    state.mode = marks.mode;
    state.dense_bound = dense.map_or(0, |(_, _, bound)| bound);
    state.last_live = Some(live);
    Ok(())
}

/// Runs a collection; see the header.
///
/// # Safety
///
/// `marker` is null or a live marker; `collection` is null or valid, with
/// its pointers and callbacks as the header documents; `report` is null or
/// valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_collect(
    marker: *mut sm_marker,
    collection: *const sm_collection,
    report: *mut sm_report,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let handle = unsafe { marker.as_ref() }.ok_or_else(|| Error::null("marker"))?;
        // SAFETY: the caller's promise.
        let c = unsafe { collection.as_ref() }.ok_or_else(|| Error::null("collection"))?;
        let mut state = handle.write()?;
        if state.poisoned {
            return Err(poisoned());
        }
        state.collection += 1;
        state.valid = false;
        let solo = state.solo_below > 0 && state.last_live.is_none_or(|n| n < state.solo_below);
        match catch_unwind(AssertUnwindSafe(|| run(&mut state, c, solo))) {
            Ok(result) => result?,
            Err(payload) => {
                if let Some(Violation(message)) = payload.downcast_ref::<Violation>() {
                    return Err(Error::new(SM_ERR_CONTRACT, message.clone()));
                }
                return Err(state.poison(&*payload));
            }
        }
        state.valid = true;
        state.solo = solo;
        if !report.is_null() {
            // SAFETY: the caller's promise.
            unsafe {
                report.write(sm_report {
                    marker,
                    collection: state.collection,
                })
            };
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::config::{sm_config_init, sm_marker_free, sm_marker_new};
    use crate::sm_report_stats;
    use crate::status::{SM_ERR_PANIC, SM_ERR_POISONED, SM_OK};
    use crate::types::{sm_mark_byte, sm_refs, sm_soft_policy, sm_stats, SM_SOFT_CLEAR_ALL};

    thread_local! {
        /// Makes the next collection on this thread panic inside the
        /// engine's call, as a bug of the engine would.
        static PANIC_NEXT: Cell<bool> = const { Cell::new(false) };
    }

    pub(super) fn maybe_panic() {
        if PANIC_NEXT.with(|p| p.replace(false)) {
            panic!("an injected engine bug");
        }
    }

    /// One collection of a heap of one slotless object.
    fn collect_one(marker: *mut sm_marker, report: &mut sm_report) -> sm_status {
        /// The object: its mark byte, 8-aligned.
        #[repr(C, align(8))]
        struct Obj(std::sync::atomic::AtomicU8);
        let obj = Obj(std::sync::atomic::AtomicU8::new(0));
        let root = [&obj as *const Obj as usize];
        let model = CModel::callbacks_for_tests();
        let marks = sm_marks {
            mode: SM_MARKS_HEADER_BYTE,
            prefetch_distance: 0,
            header: sm_mark_byte {
                offset: 0,
                test_mask: 1,
                test_value: 1,
                set_bits: 1,
                clear_bits: 0,
            },
            ctx: std::ptr::null_mut(),
            try_mark: None,
            is_marked: None,
            dense_index: None,
            dense_bound: 0,
        };
        let roots = sm_refs {
            refs: root.as_ptr(),
            len: 1,
            ctx: std::ptr::null_mut(),
            chunk_count: None,
            visit_chunk: None,
            scan_chunk: None,
        };
        let c = sm_collection {
            model: &model,
            marks: &marks,
            roots: &roots,
            finalizable: std::ptr::null(),
            soft: sm_soft_policy {
                mode: SM_SOFT_CLEAR_ALL,
                reserved: 0,
                ctx: std::ptr::null_mut(),
                keep: None,
            },
        };
        // SAFETY: valid pointers, alive for the call.
        unsafe { sm_collect(marker, &c, report) }
    }

    #[test]
    fn an_engine_panic_poisons_the_marker() {
        let mut config = std::mem::MaybeUninit::uninit();
        // SAFETY: valid for writes.
        unsafe { sm_config_init(config.as_mut_ptr()) };
        // SAFETY: initialised above.
        let mut config = unsafe { config.assume_init() };
        config.workers = 2;
        let mut marker = std::ptr::null_mut();
        // SAFETY: valid pointers.
        assert_eq!(unsafe { sm_marker_new(&config, &mut marker) }, SM_OK);
        let mut first = sm_report::default();
        assert_eq!(collect_one(marker, &mut first), SM_OK);
        let mut stats = sm_stats::default();
        // SAFETY: a current report of a live marker.
        assert_eq!(unsafe { sm_report_stats(&first, &mut stats) }, SM_OK);
        assert_eq!((stats.live_objects, stats.workers_used), (1, 1));

        PANIC_NEXT.with(|p| p.set(true));
        let mut report = sm_report::default();
        assert_eq!(collect_one(marker, &mut report), SM_ERR_PANIC);
        // SAFETY: the thread's last error message.
        let message = unsafe { std::ffi::CStr::from_ptr(crate::sm_last_error()) };
        assert!(message.to_string_lossy().contains("an injected engine bug"));
        assert_eq!(collect_one(marker, &mut report), SM_ERR_POISONED);
        // SAFETY: a report of a live marker, a valid out-parameter.
        let status = unsafe { sm_report_stats(&first, &mut stats) };
        assert_eq!(status, SM_ERR_POISONED);
        // SAFETY: a marker from `sm_marker_new`, used by no other call.
        unsafe { sm_marker_free(marker) };
    }
}
