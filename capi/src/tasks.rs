//! `sm_marker_run_tasks`: the runtime's own parallel work (its sweep, say)
//! on the marker's threads, between collections (`Marker::run_tasks`).

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::marker::{lent, poisoned, sm_marker};
use crate::status::{guard, sm_status, Error};
use crate::types::TaskFn;

/// The runtime's task and its context, shared by the workers.
struct Task {
    run: TaskFn,
    ctx: *mut c_void,
}

// SAFETY: the header requires the task to be callable from any thread,
// several at once, with the same `ctx`: sharing the pointer with the
// workers is what the caller asked for.
unsafe impl Sync for Task {}

/// Runs `task(ctx, i)` for every `i` in `0..tasks` on the marker's
/// threads; see the header.
///
/// # Safety
///
/// `marker` is null or a live marker; `task` is null or a function that
/// may be called from any thread, several at once, with `ctx` and each
/// index, as the header documents.
#[no_mangle]
pub unsafe extern "C" fn sm_marker_run_tasks(
    marker: *mut sm_marker,
    tasks: usize,
    task: Option<TaskFn>,
    ctx: *mut c_void,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let handle = unsafe { marker.as_ref() }.ok_or_else(|| Error::null("marker"))?;
        let run = match task {
            Some(run) => run,
            None if tasks == 0 => return Ok(()),
            None => return Err(Error::null("task")),
        };
        let mut state = handle.write()?;
        if state.poisoned {
            return Err(poisoned());
        }
        let engine = state.marker.as_mut().ok_or_else(lent)?;
        let shared = Task { run, ctx };
        let shared = &shared;
        let result = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the caller's promise: `run` may be called from any
            // worker with `ctx` and each index below `tasks`.
            engine.run_tasks(tasks, |i| unsafe { (shared.run)(shared.ctx, i) })
        }));
        result.map_err(|payload| state.poison(&*payload))
    })
}
