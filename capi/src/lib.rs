//! The C interface of the stealmark mark engine: `libstealmark_capi.a`,
//! `libstealmark_capi.so` and the header `stealmark.h` (in `include/`).
//!
//! A runtime written in C or C++ describes its heap with callbacks, says
//! where its mark bits live, and gets back what the Rust API's report
//! gives: the weak slots to clear, the objects to finalize, live objects
//! and bytes (total and per type), statistics. This crate is a thin layer
//! over `stealmark_marker::Marker`; it adds no marking of its own.
//!
//! How the C structs map onto the engine:
//!
//! - `sm_object_model` becomes an `ObjectModel` whose `scan_slots` calls
//!   the runtime once per object (or per chunk of a large array) with a
//!   buffer of [`SLOT_BATCH`] `sm_slot` entries, and checks every entry:
//!   slot indices rising within the range asked for, references non-zero
//!   multiples of 8 (inside the heap bounds if the runtime gave them),
//!   known slot kinds.
//! - `sm_marks` becomes a `MarkStore`: a header byte set with an atomic
//!   compare-exchange ([`HeaderByte`]), the runtime's callbacks, or the
//!   engine's own side bitmap over dense indices.
//! - `sm_refs` (roots, finalizable objects) becomes a `RootSource`.
//! - `sm_collect` runs `Marker::collect_with` (or `Marker::collect` for the
//!   side bitmap); its report stays in the marker, and the `sm_report_*`
//!   functions copy from it until the next collection.
//! - `sm_cycle_*` (incremental and concurrent marking) is a thin layer
//!   over `stealmark_marker::OwnedCycle`, which holds the marker's engine
//!   until the remark; `sm_mutator_*` over `OwnedMutator`, a mutator
//!   thread's barrier handle.
//!
//! A callback that breaks its contract makes a worker panic with a
//! [`Violation`] payload, which the engine re-raises on the calling thread:
//! `sm_collect` returns `SM_ERR_CONTRACT` with the violation's message, and
//! the marker stays usable. Any other panic returns `SM_ERR_PANIC` and
//! poisons the marker. No panic unwinds into C: every exported function
//! runs under `catch_unwind`, and the visitor that C code calls catches
//! panics and re-raises them once C has returned.
//!
//! Rust code can call the exported functions too (they are `unsafe extern
//! "C"`); the crate's tests do, with C-style callbacks written in Rust:
//!
//! ```
//! use std::ffi::c_void;
//! use std::sync::atomic::AtomicU8;
//! use stealmark_capi::*;
//!
//! /// An object: a mark byte, and one slot (a reference or 0).
//! #[repr(C, align(8))]
//! struct Obj { mark: AtomicU8, slot: usize }
//!
//! unsafe extern "C" fn size(_: *mut c_void, _: sm_ref) -> usize { 16 }
//! unsafe extern "C" fn count(_: *mut c_void, _: sm_ref) -> usize { 1 }
//! unsafe extern "C" fn scan(_: *mut c_void, r: sm_ref, start: usize, end: usize,
//!                           out: *mut sm_slot, _cap: usize) -> usize {
//!     // SAFETY: the engine passes our objects and a buffer of at least 64.
//!     let o = unsafe { &*(r as *const Obj) };
//!     if start > 0 || end == 0 || o.slot == 0 { return 0 }
//!     unsafe { out.write(sm_slot { index: 0, target: o.slot, key: 0, kind: SM_SLOT_STRONG, reserved: 0 }) };
//!     1
//! }
//!
//! let b = Obj { mark: AtomicU8::new(0), slot: 0 };
//! let a = Obj { mark: AtomicU8::new(0), slot: &b as *const Obj as usize };
//! let garbage = Obj { mark: AtomicU8::new(0), slot: 0 };
//! let roots = [&a as *const Obj as sm_ref];
//!
//! let model = sm_object_model {
//!     ctx: std::ptr::null_mut(), size_bytes: Some(size), slot_count: Some(count),
//!     scan_slots: Some(scan), type_count: 0, type_id: None, prefetch: None,
//!     prefetch_off: 0, prefetch_bytes: 0, heap_start: 0, heap_end: 0, prefetch_slots: None,
//!     scan_clamps_end: 0,
//! };
//! let marks = sm_marks {
//!     mode: SM_MARKS_HEADER_BYTE, prefetch_distance: 0,
//!     header: sm_mark_byte { offset: 0, test_mask: 1, test_value: 1, set_bits: 1, clear_bits: 0 },
//!     ctx: std::ptr::null_mut(), try_mark: None, is_marked: None, dense_index: None, dense_bound: 0,
//! };
//! let root_set = sm_refs {
//!     refs: roots.as_ptr(), len: 1, ctx: std::ptr::null_mut(),
//!     chunk_count: None, visit_chunk: None, scan_chunk: None,
//! };
//! let collection = sm_collection {
//!     model: &model, marks: &marks, roots: &root_set, finalizable: std::ptr::null(),
//!     soft: sm_soft_policy { mode: SM_SOFT_CLEAR_ALL, reserved: 0, ctx: std::ptr::null_mut(), keep: None },
//! };
//! let mut config = std::mem::MaybeUninit::uninit();
//! let mut marker = std::ptr::null_mut();
//! let mut report = sm_report::default();
//! let mut stats = sm_stats::default();
//! // SAFETY: every pointer is valid for the call; the objects outlive it.
//! unsafe {
//!     sm_config_init(config.as_mut_ptr());
//!     assert_eq!(sm_marker_new(config.as_ptr(), &mut marker), SM_OK);
//!     assert_eq!(sm_collect(marker, &collection, &mut report), SM_OK);
//!     assert_eq!(sm_report_stats(&report, &mut stats), SM_OK);
//!     sm_marker_free(marker);
//! }
//! assert_eq!((stats.live_objects, stats.live_bytes), (2, 32));
//! assert_eq!(b.mark.into_inner(), 1);
//! assert_eq!(garbage.mark.into_inner(), 0);
//! ```

mod bounds;
mod collect;
mod config;
mod contract;
mod cycle;
mod marker;
mod marks;
mod model;
mod mutator;
mod refs;
mod report;
mod soft;
mod status;
mod tasks;
mod types;

pub use collect::sm_collect;
pub use config::{sm_config_init, sm_marker_free, sm_marker_new, DEFAULT_SOLO_BELOW};
pub use contract::Violation;
pub use cycle::{
    sm_cycle, sm_cycle_finish, sm_cycle_free, sm_cycle_is_quiet, sm_cycle_options_init,
    sm_cycle_start, sm_cycle_start_background, sm_cycle_step, sm_cycle_stop_background,
    sm_cycle_wait_quiet,
};
pub use marker::sm_marker;
pub use marks::HeaderByte;
pub use model::SLOT_BATCH;
pub use mutator::{
    sm_mutator, sm_mutator_allocate_black, sm_mutator_detach, sm_mutator_flush, sm_mutator_free,
    sm_mutator_new, sm_mutator_pre_write, sm_mutator_rescan, sm_mutator_shade,
};
pub use report::{
    sm_report_cleared, sm_report_cleared_by_worker, sm_report_is_marked, sm_report_live_by_type,
    sm_report_stats, sm_report_to_finalize, sm_report_workers,
};
pub use status::*;
pub use tasks::sm_marker_run_tasks;
pub use types::*;
