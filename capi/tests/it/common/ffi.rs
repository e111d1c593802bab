//! Helpers for calling the C interface from Rust, independent of any heap:
//! shared by the integration tests (through `common`) and the benchmark
//! (`benches/capi.rs` includes this file by path), never linked into the
//! library.

#![allow(dead_code)] // each user takes part of it

use stealmark_capi::*;

/// A configuration with `workers` workers and solo collections below
/// `solo_below`.
pub fn config(workers: u32, solo_below: u64) -> sm_config {
    let mut c = std::mem::MaybeUninit::uninit();
    // SAFETY: `c` is valid for writes; `sm_config_init` fills it.
    unsafe { sm_config_init(c.as_mut_ptr()) };
    // SAFETY: initialised above.
    let mut c = unsafe { c.assume_init() };
    c.workers = workers;
    c.solo_below = solo_below;
    c
}

/// A new marker of configuration `c` (the caller frees it).
pub fn new_marker(c: &sm_config) -> *mut sm_marker {
    let mut m = std::ptr::null_mut();
    // SAFETY: valid pointers.
    let s = unsafe { sm_marker_new(c, &mut m) };
    assert_eq!(s, SM_OK, "{}", last_error());
    m
}

/// This thread's last error message.
pub fn last_error() -> String {
    // SAFETY: a NUL-terminated string valid until the next failing call.
    unsafe { std::ffi::CStr::from_ptr(sm_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A plain array of references.
pub fn c_refs(refs: &[usize]) -> sm_refs {
    sm_refs {
        refs: refs.as_ptr(),
        len: refs.len(),
        ctx: std::ptr::null_mut(),
        chunk_count: None,
        visit_chunk: None,
        scan_chunk: None,
    }
}

/// Mark bit 0 of the byte at `offset` from each object: set means marked,
/// no other bit changes.
pub fn bit0(offset: isize) -> sm_mark_byte {
    sm_mark_byte {
        offset,
        test_mask: 1,
        test_value: 1,
        set_bits: 1,
        clear_bits: 0,
    }
}

/// The soft-reference policy that clears every soft slot to an unmarked
/// referent.
pub fn clear_all() -> sm_soft_policy {
    sm_soft_policy {
        mode: SM_SOFT_CLEAR_ALL,
        reserved: 0,
        ctx: std::ptr::null_mut(),
        keep: None,
    }
}
