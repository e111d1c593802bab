//! Making and freeing a marker: `sm_config_init`, `sm_marker_new`,
//! `sm_marker_free`.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use stealmark_marker::{DequeKind, Marker, MarkerConfig};

use crate::marker::sm_marker;
use crate::status::{guard, panic_text, sm_status, Error, SM_ERR_CONFIG, SM_ERR_RESOURCE};
use crate::types::sm_config;

/// The default `solo_below`: collections after one that marked fewer
/// objects run on the calling thread alone.
pub const DEFAULT_SOLO_BELOW: u64 = 16_384;

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
        config.set_deque(
            name.parse::<DequeKind>()
                .map_err(|e| Error::new(SM_ERR_CONFIG, format!("config.deque: {e}")))?,
        );
    }
    config.set_count_live(c.count_live != 0);
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
        let handle = Box::new(sm_marker::new(marker, c.solo_below));
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
