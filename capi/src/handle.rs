//! The marker handle: `sm_marker_new`, `sm_marker_free`, `sm_collect`.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use stealmark_marker::model::{SoftRefPolicy, SoftRefs};
use stealmark_marker::{Collection, DequeKind, Marker, MarkerConfig, ObjRef};

use crate::contract::Violation;
use crate::marks::{HeaderByte, MarkCallbacks};
use crate::model::CModel;
use crate::refs::CRefs;
use crate::status::{
    guard, panic_text, sm_status, Error, SM_ERR_BUSY, SM_ERR_CONFIG, SM_ERR_CONTRACT, SM_ERR_MARKS,
    SM_ERR_PANIC, SM_ERR_POISONED, SM_ERR_RESOURCE,
};
use crate::types::{
    sm_collection, sm_config, sm_marks, sm_report, sm_soft_policy, SM_MARKS_CALLBACKS,
    SM_MARKS_HEADER_BYTE, SM_MARKS_SIDE_BITMAP, SM_SOFT_ASK, SM_SOFT_CLEAR_ALL, SM_SOFT_KEEP_ALL,
};

/// The default `solo_below`: collections after one that marked fewer
/// objects run on the calling thread alone.
pub const DEFAULT_SOLO_BELOW: u64 = 16_384;

/// The marker handle (`sm_marker`): the engine and what the report
/// functions need, behind a lock that turns concurrent misuse into
/// `SM_ERR_BUSY`.
#[allow(non_camel_case_types)]
pub struct sm_marker {
    state: RwLock<State>,
}

/// A marker's state.
pub(crate) struct State {
    pub(crate) marker: Marker,
    /// An engine panic happened: every call but `sm_marker_free` fails.
    poisoned: bool,
    /// Collections begun; a report names the one it belongs to.
    pub(crate) collection: u64,
    /// Whether the last collection succeeded (its report is readable).
    pub(crate) valid: bool,
    /// The last collection's mark mode (`SM_MARKS_*`).
    pub(crate) mode: u32,
    /// The last collection's dense bound (side bitmap), else 0.
    pub(crate) dense_bound: usize,
    /// Whether the last collection ran on the calling thread alone.
    pub(crate) solo: bool,
    solo_below: u64,
    /// Objects the last successful collection marked.
    last_live: Option<u64>,
}

/// The engine configuration of `c`: the defaults with `c`'s workers, then
/// `c`'s deque kind and live counting.
fn marker_config(c: &sm_config) -> Result<MarkerConfig, Error> {
    let workers = match c.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n as usize,
    };
    let mut config = MarkerConfig::with_workers(workers);
    if !c.deque.is_null() {
        // SAFETY: the header requires a NUL-terminated string, alive for
        // the call.
        let name = unsafe { CStr::from_ptr(c.deque) };
        let name = name
            .to_str()
            .map_err(|_| Error::new(SM_ERR_CONFIG, "config.deque is not UTF-8"))?;
        config.deque = name
            .parse::<DequeKind>()
            .map_err(|e| Error::new(SM_ERR_CONFIG, format!("config.deque: {e}")))?;
    }
    config.count_live = c.count_live != 0;
    config
        .validate()
        .map_err(|e| Error::new(SM_ERR_CONFIG, format!("config: {e}")))?;
    Ok(config)
}

/// Fills `*config` with the defaults.
///
/// # Safety
///
/// `config` is null (ignored) or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_config_init(config: *mut sm_config) {
    if !config.is_null() {
        // SAFETY: the caller's promise.
        unsafe {
            config.write(sm_config {
                workers: 0,
                count_live: 1,
                deque: std::ptr::null(),
                solo_below: DEFAULT_SOLO_BELOW,
            })
        };
    }
}

/// Makes a marker from `*config` into `*out`.
///
/// # Safety
///
/// `config` is null or a valid `sm_config` (its `deque` null or a C
/// string); `out` is null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_marker_new(
    config: *const sm_config,
    out: *mut *mut sm_marker,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let c = unsafe { config.as_ref() }.ok_or_else(|| Error::null("config"))?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        let config = marker_config(c)?;
        let marker = catch_unwind(|| Marker::new(config))
            .map_err(|p| {
                Error::new(
                    SM_ERR_RESOURCE,
                    format!("starting the workers: {}", panic_text(&*p)),
                )
            })?
            .map_err(|e| Error::new(SM_ERR_CONFIG, format!("config: {e}")))?;
        let handle = Box::new(sm_marker {
            state: RwLock::new(State {
                marker,
                poisoned: false,
                collection: 0,
                valid: false,
                mode: 0,
                dense_bound: 0,
                solo: false,
                solo_below: c.solo_below,
                last_live: None,
            }),
        });
        // SAFETY: `out` is valid for writes (checked non-null; the caller's
        // promise).
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Frees a marker (null is ignored).
///
/// # Safety
///
/// `marker` is null or a marker from `sm_marker_new`, not freed yet, with
/// no other call on it running or starting.
#[no_mangle]
pub unsafe extern "C" fn sm_marker_free(marker: *mut sm_marker) {
    if marker.is_null() {
        return;
    }
    // SAFETY: the caller's promise: the handle came from `Box::into_raw` and
    // nothing else uses it.
    let handle = unsafe { Box::from_raw(marker) };
    // Dropping joins the worker threads; a panic there must not unwind into
    // C, and there is nothing left to report it to.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(handle)));
}

impl sm_marker {
    /// The state, for a collection: `SM_ERR_BUSY` if another call holds it.
    fn write(&self) -> Result<RwLockWriteGuard<'_, State>, Error> {
        match self.state.try_write() {
            Ok(g) => Ok(g),
            Err(TryLockError::WouldBlock) => Err(busy()),
            Err(TryLockError::Poisoned(_)) => Err(poisoned()),
        }
    }

    /// The state, for reading a report.
    pub(crate) fn read(&self) -> Result<RwLockReadGuard<'_, State>, Error> {
        let state = match self.state.try_read() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => return Err(busy()),
            Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
        };
        if state.poisoned {
            return Err(poisoned());
        }
        Ok(state)
    }
}

fn busy() -> Error {
    Error::new(SM_ERR_BUSY, "the marker is in use by another call (a collection running on another thread, or a callback re-entering the engine)")
}

fn poisoned() -> Error {
    Error::new(
        SM_ERR_POISONED,
        "the marker was poisoned by an earlier engine panic; only sm_marker_free may be called",
    )
}

/// The soft-reference policy's `keep` callback.
struct AskSoft<'a>(
    &'a sm_soft_policy,
    unsafe extern "C" fn(*mut std::ffi::c_void, usize) -> bool,
);

// SAFETY: the header requires `keep` to be callable from any GC worker
// thread, several at once, with its context.
unsafe impl Sync for AskSoft<'_> {}

impl SoftRefPolicy for AskSoft<'_> {
    fn keep(&self, referent: ObjRef) -> bool {
        // SAFETY: a present callback, called as the header documents.
        unsafe { (self.1)(self.0.ctx, referent.word()) }
    }
}

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
    let policy = &c.soft;
    let ask;
    let soft = match policy.mode {
        SM_SOFT_CLEAR_ALL => SoftRefs::ClearAll,
        SM_SOFT_KEEP_ALL => SoftRefs::KeepAll,
        SM_SOFT_ASK => {
            ask = AskSoft(policy, policy.keep.ok_or_else(|| Error::null("soft.keep"))?);
            SoftRefs::Ask(&ask)
        }
        m => {
            return Err(Error::new(
                SM_ERR_CONFIG,
                format!("soft.mode {m} is not one of SM_SOFT_*"),
            ))
        }
    };
    #[cfg(test)]
    tests::maybe_panic();
    let collection = Collection::new(&roots)
        .finalizable(&finalizable)
        .soft_refs(soft)
        .solo(solo);
    let live = match marks.mode {
        SM_MARKS_HEADER_BYTE => {
            let store = HeaderByte::new(&marks.header)?;
            state
                .marker
                .collect_with(&heap, &store, &collection)
                .live_objects()
        }
        SM_MARKS_CALLBACKS => {
            let store = MarkCallbacks {
                ctx: marks.ctx,
                try_mark: marks
                    .try_mark
                    .ok_or_else(|| Error::null("marks.try_mark"))?,
                is_marked: marks
                    .is_marked
                    .ok_or_else(|| Error::null("marks.is_marked"))?,
            };
            state
                .marker
                .collect_with(&heap, &store, &collection)
                .live_objects()
        }
        SM_MARKS_SIDE_BITMAP => state
            .marker
            .collect(&heap, &collection)
            .report()
            .live_objects(),
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
                state.poisoned = true;
                return Err(Error::new(
                    SM_ERR_PANIC,
                    format!(
                        "the engine panicked (the marker is now poisoned): {}",
                        panic_text(&*payload)
                    ),
                ));
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
    use std::ffi::c_void;

    use super::*;
    use crate::status::{SM_ERR_POISONED, SM_OK};
    use crate::types::{sm_mark_byte, sm_object_model, sm_refs, sm_slot, sm_stats};
    use crate::{sm_report_stats, sm_status};

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

    unsafe extern "C" fn size(_: *mut c_void, _: usize) -> usize {
        8
    }
    unsafe extern "C" fn count(_: *mut c_void, _: usize) -> usize {
        0
    }
    unsafe extern "C" fn scan(
        _: *mut c_void,
        _: usize,
        _: usize,
        _: usize,
        _: *mut sm_slot,
        _: usize,
    ) -> usize {
        0
    }

    /// One collection of a heap of one slotless object.
    fn collect_one(marker: *mut sm_marker, report: &mut sm_report) -> sm_status {
        /// The object: its mark byte, 8-aligned.
        #[repr(C, align(8))]
        struct Obj(std::sync::atomic::AtomicU8);
        let obj = Obj(std::sync::atomic::AtomicU8::new(0));
        let root = [&obj as *const Obj as usize];
        let model = sm_object_model {
            ctx: std::ptr::null_mut(),
            size_bytes: Some(size),
            slot_count: Some(count),
            scan_slots: Some(scan),
            type_count: 0,
            type_id: None,
            prefetch: None,
            prefetch_off: 1,
            reserved: 0,
            heap_start: 0,
            heap_end: 0,
        };
        let marks = sm_marks {
            mode: SM_MARKS_HEADER_BYTE,
            reserved: 0,
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
