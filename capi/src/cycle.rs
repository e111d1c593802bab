//! Mark cycles through the C interface: `sm_cycle_*`, a thin layer over
//! [`OwnedCycle`]. The cycle takes the engine out of its `sm_marker` for
//! its length and gives it back at the remark (with the report) or when
//! freed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use stealmark_marker::{
    Backpressure, Collection, CycleError, CycleOptions, MarkStore, ObjRef, OwnedCycle,
};

use crate::bounds::Bounds;
use crate::marker::{lent, poisoned, sm_marker};
use crate::marks::{HeaderByte, MarkCallbacks};
use crate::model::CModel;
use crate::refs::CRefs;
use crate::soft::Soft;
use crate::status::{
    guard, panic_text, sm_status, Error, SM_ERR_BUSY, SM_ERR_CONFIG, SM_ERR_ENDED, SM_ERR_MARKS,
    SM_ERR_POISONED, SM_ERR_RESOURCE,
};
use crate::types::{
    sm_cycle_options, sm_marks, sm_object_model, sm_refs, sm_remark, sm_report,
    SM_BACKPRESSURE_ASSIST, SM_BACKPRESSURE_WAIT, SM_MARKS_CALLBACKS, SM_MARKS_HEADER_BYTE,
};

/// A cycle's mark bits: the header byte or the runtime's callbacks.
pub(crate) enum CStore {
    Header(HeaderByte),
    Callbacks(MarkCallbacks),
}

impl MarkStore<CModel> for CStore {
    #[inline]
    fn try_mark(&self, heap: &CModel, obj: ObjRef) -> bool {
        match self {
            CStore::Header(h) => h.try_mark(heap, obj),
            CStore::Callbacks(c) => c.try_mark(heap, obj),
        }
    }

    #[inline]
    fn try_mark_unshared(&self, heap: &CModel, obj: ObjRef) -> bool {
        match self {
            CStore::Header(h) => h.try_mark_unshared(heap, obj),
            CStore::Callbacks(c) => c.try_mark_unshared(heap, obj),
        }
    }

    #[inline]
    fn is_marked(&self, heap: &CModel, obj: ObjRef) -> bool {
        match self {
            CStore::Header(h) => h.is_marked(heap, obj),
            CStore::Callbacks(c) => c.is_marked(heap, obj),
        }
    }

    /// The inner store's hint: for a header byte, the byte's line alone
    /// (the default would fetch the model's prefetch of the object).
    #[inline]
    fn prefetch(&self, heap: &CModel, obj: ObjRef) {
        match self {
            CStore::Header(h) => h.prefetch(heap, obj),
            CStore::Callbacks(c) => c.prefetch(heap, obj),
        }
    }

    #[inline]
    fn prefetch_distance(&self) -> usize {
        match self {
            CStore::Header(h) => MarkStore::<CModel>::prefetch_distance(h),
            CStore::Callbacks(c) => MarkStore::<CModel>::prefetch_distance(c),
        }
    }
}

/// The cycle handle (`sm_cycle`).
#[allow(non_camel_case_types)]
pub struct sm_cycle {
    /// The marker the engine came from and goes back to.
    marker: *const sm_marker,
    pub(crate) cycle: OwnedCycle<CModel, CStore>,
    /// The cycle's object model, which keeps the first contract violation.
    pub(crate) model: Arc<CModel>,
    /// The heap bounds, to check references handed to the barrier.
    pub(crate) bounds: Bounds,
    mode: u32,
    /// The cycle runs on one thread (`sm_cycle_options.solo`): its report
    /// says one worker was used.
    solo: bool,
}

// SAFETY: the header requires the marker to outlive the cycle; its state
// is behind a lock, and the rest is `OwnedCycle`, `Send` and `Sync`.
unsafe impl Send for sm_cycle {}
// SAFETY: as above.
unsafe impl Sync for sm_cycle {}

/// The engine's form of `o` (defaults for null).
fn cycle_options(o: Option<&sm_cycle_options>) -> Result<CycleOptions, Error> {
    let mut out = CycleOptions::default();
    let Some(o) = o else { return Ok(out) };
    out.backpressure = match o.backpressure {
        SM_BACKPRESSURE_ASSIST => Backpressure::Assist,
        SM_BACKPRESSURE_WAIT => Backpressure::Wait,
        b => {
            return Err(Error::new(
                SM_ERR_CONFIG,
                format!("options.backpressure {b} is not one of SM_BACKPRESSURE_*"),
            ))
        }
    };
    out.parallel_steps = flag(o.parallel_steps, "parallel_steps")?;
    if o.buffers_per_thread == 0 || o.assist_budget == 0 {
        return Err(Error::new(
            SM_ERR_CONFIG,
            "options.buffers_per_thread and options.assist_budget must be at least 1",
        ));
    }
    out.buffers_per_thread = o.buffers_per_thread;
    out.assist_budget = o.assist_budget;
    out.black_allocation = flag(o.black_allocation, "black_allocation")?;
    out.solo = flag(o.solo, "solo")?;
    Ok(out)
}

/// An option that is 0 or 1, named `name` in the error otherwise.
fn flag(value: u32, name: &str) -> Result<bool, Error> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(Error::new(
            SM_ERR_CONFIG,
            format!("options.{name} {v} is neither 0 nor 1"),
        )),
    }
}

/// A cycle's mark bits from `marks`.
fn store(marks: &sm_marks) -> Result<CStore, Error> {
    match marks.mode {
        SM_MARKS_HEADER_BYTE => Ok(CStore::Header(HeaderByte::from_marks(marks)?)),
        SM_MARKS_CALLBACKS => Ok(CStore::Callbacks(MarkCallbacks::from_marks(marks)?)),
        m => Err(Error::new(
            SM_ERR_MARKS,
            format!(
                "marks.mode {m}: a mark cycle needs SM_MARKS_HEADER_BYTE or SM_MARKS_CALLBACKS"
            ),
        )),
    }
}

/// The status of a cycle's refusal; a poisoned cycle's message names the
/// contract violation that poisoned it, if one did.
pub(crate) fn cycle_error(e: CycleError, model: &CModel) -> Error {
    if let (CycleError::Panicked { .. }, Some(v)) = (&e, model.violation()) {
        return Error::new(
            SM_ERR_POISONED,
            format!("the cycle is poisoned: a callback broke its contract: {v}"),
        );
    }
    let status = match e {
        CycleError::LeakedBuffers { .. } | CycleError::BackgroundRunning => SM_ERR_BUSY,
        CycleError::Panicked { .. } => SM_ERR_POISONED,
        CycleError::Ended => SM_ERR_ENDED,
        CycleError::Spawn { .. } => SM_ERR_RESOURCE,
        CycleError::BlackAllocationOff => SM_ERR_CONFIG,
        // A refusal added to the engine after this layer: the cycle
        // refused the call, and the message says why.
        _ => SM_ERR_BUSY,
    };
    Error::new(status, e.to_string())
}

impl sm_cycle {
    /// The error of a refusal of this cycle.
    fn failed(&self, e: CycleError) -> Error {
        cycle_error(e, &self.model)
    }
}

/// The cycle behind `cycle`.
fn get<'a>(cycle: *const sm_cycle) -> Result<&'a sm_cycle, Error> {
    // SAFETY: the caller's promise: null or a live cycle.
    unsafe { cycle.as_ref() }.ok_or_else(|| Error::null("cycle"))
}

/// Fills `*options` with the defaults.
///
/// # Safety
///
/// `options` is null (ignored) or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_options_init(options: *mut sm_cycle_options) {
    let d = CycleOptions::default();
    if !options.is_null() {
        // SAFETY: the caller's promise.
        unsafe {
            options.write(sm_cycle_options {
                backpressure: SM_BACKPRESSURE_ASSIST,
                parallel_steps: u32::from(d.parallel_steps),
                buffers_per_thread: d.buffers_per_thread,
                assist_budget: d.assist_budget,
                black_allocation: u32::from(d.black_allocation),
                solo: u32::from(d.solo),
            })
        };
    }
}

/// Starts a mark cycle; see the header.
///
/// # Safety
///
/// `marker` null or live, outliving the cycle; `model`, `marks`, `roots`
/// null or valid for the call (their callbacks and contexts valid for the
/// cycle's length); `options` null or valid; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_start(
    marker: *mut sm_marker,
    model: *const sm_object_model,
    marks: *const sm_marks,
    roots: *const sm_refs,
    options: *const sm_cycle_options,
    out: *mut *mut sm_cycle,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let handle = unsafe { marker.as_ref() }.ok_or_else(|| Error::null("marker"))?;
        // SAFETY: as above.
        let model = unsafe { model.as_ref() }.ok_or_else(|| Error::null("model"))?;
        // SAFETY: as above.
        let marks = unsafe { marks.as_ref() }.ok_or_else(|| Error::null("marks"))?;
        // SAFETY: as above.
        let roots = unsafe { roots.as_ref() }.ok_or_else(|| Error::null("roots"))?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        // SAFETY: as above.
        let options = cycle_options(unsafe { options.as_ref() })?;
        let solo = options.solo;
        let store = store(marks)?;
        let heap = Arc::new(CModel::new(model, None)?);
        let bounds = heap.bounds();
        let roots = CRefs::new(roots, "roots", bounds)?.collect()?;
        let mut state = handle.write()?;
        if state.poisoned {
            return Err(poisoned());
        }
        let engine = state.marker.take().ok_or_else(lent)?;
        state.collection += 1;
        state.valid = false;
        let started = catch_unwind(AssertUnwindSafe(|| {
            OwnedCycle::start(engine, heap.clone(), Arc::new(store), &roots[..], options)
        }));
        let cycle = match started {
            Ok(cycle) => cycle,
            Err(payload) => {
                state.poisoned = true;
                return Err(Error::new(
                    crate::status::SM_ERR_PANIC,
                    format!(
                        "starting the cycle panicked (the marker is now poisoned): {}",
                        panic_text(&*payload)
                    ),
                ));
            }
        };
        let cycle = Box::new(sm_cycle {
            marker,
            cycle,
            model: heap,
            bounds,
            mode: marks.mode,
            solo,
        });
        // SAFETY: `out` is valid for writes (checked non-null; the caller's
        // promise).
        unsafe { out.write(Box::into_raw(cycle)) };
        Ok(())
    })
}

/// One incremental step of at most `budget` objects (on the calling thread,
/// or on every worker with the option `parallel_steps`).
///
/// # Safety
///
/// `cycle` null or live; `done` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_step(
    cycle: *const sm_cycle,
    budget: usize,
    done: *mut bool,
) -> sm_status {
    guard(|| {
        let c = get(cycle)?;
        let finished = c.cycle.step(budget).map_err(|e| c.failed(e))?;
        if !done.is_null() {
            // SAFETY: the caller's promise.
            unsafe { done.write(finished) };
        }
        Ok(())
    })
}

/// Starts the background marking.
///
/// # Safety
///
/// `cycle` null or live.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_start_background(cycle: *const sm_cycle) -> sm_status {
    guard(|| {
        let c = get(cycle)?;
        c.cycle.start_background().map_err(|e| c.failed(e))
    })
}

/// Stops the background marking and waits for its workers.
///
/// # Safety
///
/// `cycle` null or live.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_stop_background(cycle: *const sm_cycle) -> sm_status {
    guard(|| {
        let c = get(cycle)?;
        c.cycle.stop_background().map_err(|e| c.failed(e))
    })
}

/// Whether the background marking is quiet.
///
/// # Safety
///
/// `cycle` null or live; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_is_quiet(cycle: *const sm_cycle, out: *mut bool) -> sm_status {
    guard(|| {
        let quiet = get(cycle)?.cycle.is_quiet();
        // SAFETY: the caller's promise.
        let out = unsafe { out.as_mut() }.ok_or_else(|| Error::null("out"))?;
        *out = quiet;
        Ok(())
    })
}

/// Blocks until the background marking is quiet or `timeout_ns` (negative:
/// no limit) has passed.
///
/// # Safety
///
/// `cycle` null or live; `quiet` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_wait_quiet(
    cycle: *const sm_cycle,
    timeout_ns: i64,
    quiet: *mut bool,
) -> sm_status {
    guard(|| {
        let c = get(cycle)?;
        let timeout = u64::try_from(timeout_ns).ok().map(Duration::from_nanos);
        let q = c.cycle.wait_quiet(timeout);
        if !quiet.is_null() {
            // SAFETY: the caller's promise.
            unsafe { quiet.write(q) };
        }
        Ok(())
    })
}

/// The remark; see the header.
///
/// # Safety
///
/// `cycle` null or live, its marker alive; `remark` null or valid for the
/// call; `report` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_finish(
    cycle: *const sm_cycle,
    remark: *const sm_remark,
    report: *mut sm_report,
) -> sm_status {
    guard(|| {
        let c = get(cycle)?;
        // SAFETY: the caller's promise.
        let r = unsafe { remark.as_ref() }.ok_or_else(|| Error::null("remark"))?;
        // SAFETY: as above.
        let roots = unsafe { r.roots.as_ref() }.ok_or_else(|| Error::null("remark.roots"))?;
        let roots = CRefs::new(roots, "roots", c.bounds)?.collect()?;
        // SAFETY: as above.
        let finalizable = match unsafe { r.finalizable.as_ref() } {
            Some(f) => CRefs::new(f, "finalizable", c.bounds)?.collect()?,
            None => Vec::new(),
        };
        let soft = Soft::new(&r.soft)?;
        let collection = Collection::new(&roots[..])
            .finalizable(&finalizable[..])
            .soft_refs(soft.refs());
        let mut done = c.cycle.finish(&collection).map_err(|e| c.failed(e))?;
        let live = done.report().live_objects();
        let engine = done.into_marker();
        // SAFETY: the header requires the marker to outlive its cycles.
        let handle = unsafe { &*c.marker };
        let mut state = handle.write_blocking();
        state.marker = Some(engine);
        state.valid = true;
        state.mode = c.mode;
        state.dense_bound = 0;
        state.solo = c.solo;
        state.last_live = Some(live);
        if !report.is_null() {
            // SAFETY: the caller's promise.
            unsafe {
                report.write(sm_report {
                    marker: c.marker.cast_mut(),
                    collection: state.collection,
                })
            };
        }
        Ok(())
    })
}

/// Frees a cycle, abandoning it if it did not finish (null is ignored).
///
/// # Safety
///
/// `cycle` null or a cycle from `sm_cycle_start`, not freed yet, no other
/// call on it running or starting; its marker alive.
#[no_mangle]
pub unsafe extern "C" fn sm_cycle_free(cycle: *mut sm_cycle) {
    if cycle.is_null() {
        return;
    }
    // SAFETY: the caller's promise: from `Box::into_raw`, used by no other
    // call.
    let c = unsafe { Box::from_raw(cycle) };
    let _ = catch_unwind(AssertUnwindSafe(move || {
        if let Ok(engine) = c.cycle.abandon() {
            // SAFETY: the header requires the marker to outlive its cycles.
            let handle = unsafe { &*c.marker };
            handle.write_blocking().marker = Some(engine);
        }
        drop(c);
    }));
}
