//! The report functions: copies of a collection's results, read from its
//! marker while the report is current.

use std::sync::RwLockReadGuard;

use stealmark_marker::{Report, SlotKind, WeakRef};

use crate::marker::State;
use crate::status::{guard, sm_status, Error, SM_ERR_MARKS, SM_ERR_RANGE, SM_ERR_STALE};
use crate::types::{
    sm_ref, sm_report, sm_stats, sm_type_count, sm_weak_ref, SM_MARKS_SIDE_BITMAP,
    SM_SLOT_EPHEMERON, SM_SLOT_PHANTOM, SM_SLOT_SOFT, SM_SLOT_STRONG, SM_SLOT_STRONG_LEAF,
    SM_SLOT_WEAK,
};

/// The state of `report`'s marker, if the report is current.
///
/// # Safety
///
/// `report` is null or valid, and its marker (if the report came from
/// `sm_collect`) is alive.
unsafe fn current<'r>(report: *const sm_report) -> Result<RwLockReadGuard<'r, State>, Error> {
    // SAFETY: the caller's promise.
    let r = unsafe { report.as_ref() }.ok_or_else(|| Error::null("report"))?;
    // SAFETY: the caller's promise: the marker of a report is alive.
    let marker = unsafe { r.marker.as_ref() }.ok_or_else(|| Error::null("report.marker"))?;
    let state = marker.read()?;
    if r.collection != state.collection || !state.valid {
        return Err(Error::new(
            SM_ERR_STALE,
            format!(
                "the report of collection {} is stale: its marker has begun collection {}",
                r.collection, state.collection
            ),
        ));
    }
    Ok(state)
}

/// Writes `value` to `out`, or fails naming `what`.
///
/// # Safety
///
/// `out` is null or valid for writes.
unsafe fn put<T>(out: *mut T, what: &str, value: T) -> Result<(), Error> {
    if out.is_null() {
        return Err(Error::null(what));
    }
    // SAFETY: the caller's promise; checked non-null.
    unsafe { out.write(value) };
    Ok(())
}

/// The C form of a slot to clear.
fn weak_ref(w: &WeakRef) -> sm_weak_ref {
    let (kind, key) = match w.kind {
        SlotKind::Strong => (SM_SLOT_STRONG, 0),
        SlotKind::StrongLeaf => (SM_SLOT_STRONG_LEAF, 0),
        SlotKind::Soft => (SM_SLOT_SOFT, 0),
        SlotKind::Weak => (SM_SLOT_WEAK, 0),
        SlotKind::Phantom => (SM_SLOT_PHANTOM, 0),
        SlotKind::Ephemeron { key } => (SM_SLOT_EPHEMERON, key.word()),
    };
    sm_weak_ref {
        holder: w.holder.word(),
        slot: w.slot,
        target: w.target.word(),
        key,
        kind,
        reserved: 0,
    }
}

/// Copies up to `cap` items of `items` into `out`; how many.
///
/// # Safety
///
/// `out` is valid for `cap` writes (it may be null when `cap` is 0).
unsafe fn copy_out<T, I: Iterator<Item = T>>(
    items: I,
    out: *mut T,
    cap: usize,
) -> Result<usize, Error> {
    if out.is_null() && cap > 0 {
        return Err(Error::null("out"));
    }
    let mut n = 0;
    for item in items.take(cap) {
        // SAFETY: `n < cap`, and `out` has room for `cap` items.
        unsafe { out.add(n).write(item) };
        n += 1;
    }
    Ok(n)
}

/// Copies items of the worker lists, taken in turn as one list, from
/// position `from` on into `out` (at most `cap`); how many. `len` gives a
/// list's length, `items` its items from a position on.
///
/// # Safety
///
/// As [`copy_out`].
unsafe fn copy_paged<L, T, I: Iterator<Item = T>>(
    lists: impl Iterator<Item = L>,
    mut from: usize,
    out: *mut T,
    cap: usize,
    len: impl Fn(&L) -> usize,
    items: impl Fn(L, usize) -> I,
) -> Result<usize, Error> {
    let mut n = 0;
    for list in lists {
        let k = len(&list);
        if from >= k {
            from -= k;
            continue;
        }
        // SAFETY: `out` has room for `cap` items, `n` of them used.
        n += unsafe { copy_out(items(list, from), out.wrapping_add(n), cap - n) }?;
        from = 0;
        if n == cap {
            break;
        }
    }
    Ok(n)
}

/// The report's statistics.
fn stats(state: &State) -> sm_stats {
    let report: Report<'_> = state.engine().last_report();
    let s = report.stats;
    let total = s.total();
    let workers = state.engine().config().workers() as u32;
    sm_stats {
        pause_ns: s.pause_ns,
        live_objects: report.live_objects(),
        live_bytes: report.live_bytes(),
        roots: s.roots,
        cleared: total.cleared,
        to_finalize: total.finalized,
        soft_kept: total.soft_kept,
        ephemerons: total.ephemerons,
        items_stolen: total.items_stolen,
        steps: s.steps.len() as u32,
        workers,
        workers_used: if state.solo { 1 } else { workers },
        reserved: 0,
    }
}

/// The collection's statistics.
///
/// # Safety
///
/// `report` is null or a report whose marker is alive; `out` is null or
/// valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_report_stats(
    report: *const sm_report,
    out: *mut sm_stats,
) -> sm_status {
    // SAFETY: the caller's promises.
    guard(|| unsafe { put(out, "out", stats(&*current(report)?)) })
}

/// The number of worker lists.
///
/// # Safety
///
/// As [`sm_report_stats`].
#[no_mangle]
pub unsafe extern "C" fn sm_report_workers(report: *const sm_report, out: *mut usize) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        let n = state.engine().last_report().cleared_by_worker().len();
        // SAFETY: the caller's promise.
        unsafe { put(out, "out", n) }
    })
}

/// Copies slots to clear, all workers' together. After a mark cycle, the
/// runtime clears a slot only if it still holds the reported target (the
/// mutators may have written it after its holder's scan).
///
/// # Safety
///
/// `report` as in [`sm_report_stats`]; `out` valid for `cap` writes;
/// `written` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_report_cleared(
    report: *const sm_report,
    from: usize,
    out: *mut sm_weak_ref,
    cap: usize,
    written: *mut usize,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        let lists = state.engine().last_report().cleared_by_worker();
        // SAFETY: the caller's promise: `out` has room for `cap` items.
        let n = unsafe {
            copy_paged(
                lists,
                from,
                out,
                cap,
                |l| l.len(),
                |l, at| l.iter().skip(at).map(weak_ref),
            )
        }?;
        // SAFETY: the caller's promise.
        unsafe { put(written, "written", n) }
    })
}

/// Copies worker `worker`'s slots to clear.
///
/// # Safety
///
/// As [`sm_report_cleared`]; `total` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn sm_report_cleared_by_worker(
    report: *const sm_report,
    worker: usize,
    from: usize,
    out: *mut sm_weak_ref,
    cap: usize,
    written: *mut usize,
    total: *mut usize,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        let mut lists = state.engine().last_report().cleared_by_worker();
        let workers = lists.len();
        let list = lists.nth(worker).ok_or_else(|| {
            Error::new(
                SM_ERR_RANGE,
                format!("worker {worker} is not below the report's {workers} workers"),
            )
        })?;
        // SAFETY: the caller's promises.
        unsafe {
            let n = copy_out(list.iter().skip(from).map(weak_ref), out, cap)?;
            put(written, "written", n)?;
            put(total, "total", list.len())
        }
    })
}

/// Copies the objects to finalize.
///
/// # Safety
///
/// As [`sm_report_cleared`].
#[no_mangle]
pub unsafe extern "C" fn sm_report_to_finalize(
    report: *const sm_report,
    from: usize,
    out: *mut sm_ref,
    cap: usize,
    written: *mut usize,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        let lists = state.engine().last_report().to_finalize_by_worker();
        // SAFETY: the caller's promise: `out` has room for `cap` items.
        let n = unsafe {
            copy_paged(
                lists,
                from,
                out,
                cap,
                |l| l.len(),
                |l, at| l[at..].iter().map(|r| r.word()),
            )
        }?;
        // SAFETY: the caller's promise.
        unsafe { put(written, "written", n) }
    })
}

/// The live objects and bytes of one type.
///
/// # Safety
///
/// As [`sm_report_stats`].
#[no_mangle]
pub unsafe extern "C" fn sm_report_live_by_type(
    report: *const sm_report,
    type_id: usize,
    out: *mut sm_type_count,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        let counts = state.engine().last_report().live_by_type();
        let c = counts.get(type_id).ok_or_else(|| {
            Error::new(
                SM_ERR_RANGE,
                format!(
                    "type {type_id} is not below the report's {} types (the model's type_count, \
                     0 when config.count_live is off)",
                    counts.len()
                ),
            )
        })?;
        let value = sm_type_count {
            objects: c.objects,
            bytes: c.bytes,
        };
        // SAFETY: the caller's promise.
        unsafe { put(out, "out", value) }
    })
}

/// Whether the object of dense index `dense_index` was marked (side bitmap
/// only).
///
/// # Safety
///
/// As [`sm_report_stats`].
#[no_mangle]
pub unsafe extern "C" fn sm_report_is_marked(
    report: *const sm_report,
    dense_index: usize,
    out: *mut bool,
) -> sm_status {
    guard(|| {
        // SAFETY: the caller's promise.
        let state = unsafe { current(report) }?;
        if state.mode != SM_MARKS_SIDE_BITMAP {
            return Err(Error::new(
                SM_ERR_MARKS,
                "sm_report_is_marked needs a collection with SM_MARKS_SIDE_BITMAP",
            ));
        }
        if dense_index >= state.dense_bound {
            return Err(Error::new(
                SM_ERR_RANGE,
                format!(
                    "dense index {dense_index} is not below the bound {}",
                    state.dense_bound
                ),
            ));
        }
        let bitmap = state.engine().last_marking().bitmap;
        // SAFETY: the caller's promise.
        unsafe { put(out, "out", bitmap.contains(dense_index)) }
    })
}
