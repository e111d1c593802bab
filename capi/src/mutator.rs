//! Per-mutator-thread barrier handles through the C interface:
//! `sm_mutator_*`, a thin layer over [`OwnedMutator`]. A handle shares the
//! cycle's state, not the `sm_cycle` itself: it stays safe to call after
//! the cycle was finished or freed, and then returns `SM_ERR_ENDED`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use std::sync::Arc;

use stealmark_marker::{CycleError, OwnedMutator};

use crate::bounds::Bounds;
use crate::cycle::{cycle_error, sm_cycle, CStore};
use crate::model::CModel;
use crate::status::{guard, sm_status, Error};

/// The barrier handle (`sm_mutator`).
#[allow(non_camel_case_types)]
pub struct sm_mutator {
    barrier: OwnedMutator<CModel, CStore>,
    bounds: Bounds,
    /// The cycle's object model, for the message of a poisoned cycle.
    model: Arc<CModel>,
}

impl sm_mutator {
    /// The error of a refusal of the handle's cycle.
    fn failed(&self, e: CycleError) -> Error {
        cycle_error(e, &self.model)
    }
}

/// The handle behind `m`.
fn get<'a>(m: *mut sm_mutator) -> Result<&'a mut sm_mutator, Error> {
    // SAFETY: the caller's promise: null or a live handle, used by this
    // thread alone.
    unsafe { m.as_mut() }.ok_or_else(|| Error::null("mutator"))
}

/// Makes a barrier handle of `cycle` into `*out`.
///
/// # Safety
///
/// `cycle` null or live; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_new(
    cycle: *const sm_cycle,
    out: *mut *mut sm_mutator,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let c = unsafe { cycle.as_ref() }.ok_or_else(|| Error::null("cycle"))?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        let handle = Box::new(sm_mutator {
            barrier: c.cycle.mutator(),
            bounds: c.bounds,
            model: Arc::clone(&c.model),
        });
        // SAFETY: checked non-null; the caller's promise.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// The write barrier: records `old`, a slot's value before the mutator
/// overwrites it (0: nothing to record).
///
/// # Safety
///
/// `m` null or a live handle, used by no other thread at the time.
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_pre_write(m: *mut sm_mutator, old: usize) -> sm_status {
    guard(|| {
        let m = get(m)?;
        let old = match old {
            0 => None,
            w => Some(m.bounds.checked(w, "sm_mutator_pre_write's old value")?),
        };
        m.barrier.pre_write(old).map_err(|e| m.failed(e))
    })
}

/// The incremental-update barrier's forward half: `value`, stored into a
/// marked holder, is marked and traced before the cycle ends (0 records
/// nothing).
///
/// # Safety
///
/// As [`sm_mutator_pre_write`].
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_shade(m: *mut sm_mutator, value: usize) -> sm_status {
    guard(|| {
        let m = get(m)?;
        match value {
            0 => m.barrier.pre_write(None),
            w => {
                let value = m.bounds.checked(w, "sm_mutator_shade's value")?;
                m.barrier.shade(value)
            }
        }
        .map_err(|e| m.failed(e))
    })
}

/// The incremental-update barrier's backward half: `holder`, marked and
/// written to, is scanned again at the remark.
///
/// # Safety
///
/// As [`sm_mutator_pre_write`].
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_rescan(m: *mut sm_mutator, holder: usize) -> sm_status {
    guard(|| {
        let m = get(m)?;
        let holder = m.bounds.checked(holder, "sm_mutator_rescan's holder")?;
        m.barrier.rescan(holder).map_err(|e| m.failed(e))
    })
}

/// Marks `obj`, just allocated, black.
///
/// # Safety
///
/// As [`sm_mutator_pre_write`].
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_allocate_black(m: *mut sm_mutator, obj: usize) -> sm_status {
    guard(|| {
        let m = get(m)?;
        let obj = m
            .bounds
            .checked(obj, "sm_mutator_allocate_black's object")?;
        m.barrier.allocate_black(obj).map_err(|e| m.failed(e))
    })
}

/// Hands the recorded entries to the marker; stays attached.
///
/// # Safety
///
/// As [`sm_mutator_pre_write`].
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_flush(m: *mut sm_mutator) -> sm_status {
    guard(|| {
        let m = get(m)?;
        m.barrier.flush().map_err(|e| m.failed(e))
    })
}

/// Hands the entries off and gives the buffer back (before the remark).
///
/// # Safety
///
/// As [`sm_mutator_pre_write`].
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_detach(m: *mut sm_mutator) -> sm_status {
    guard(|| {
        let m = get(m)?;
        m.barrier.detach().map_err(|e| m.failed(e))
    })
}

/// Detaches and frees a handle (null is ignored).
///
/// # Safety
///
/// `m` null or a handle from `sm_mutator_new`, not freed yet, used by no
/// other call.
#[no_mangle]
pub unsafe extern "C" fn sm_mutator_free(m: *mut sm_mutator) {
    if m.is_null() {
        return;
    }
    // SAFETY: the caller's promise: from `Box::into_raw`, used by no other
    // call.
    let handle = unsafe { Box::from_raw(m) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(handle)));
}
