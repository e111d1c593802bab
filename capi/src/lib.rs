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
//! "C"`); the crate's tests do, with C-style callbacks written in Rust.

mod contract;
mod cycle;
mod handle;
mod marks;
mod model;
mod mutator;
mod refs;
mod report;
mod status;
mod types;

pub use contract::Violation;
pub use cycle::{
    sm_cycle, sm_cycle_finish, sm_cycle_free, sm_cycle_is_quiet, sm_cycle_options_init,
    sm_cycle_start, sm_cycle_start_background, sm_cycle_step, sm_cycle_stop_background,
    sm_cycle_wait_quiet,
};
pub use handle::{
    sm_collect, sm_config_init, sm_marker, sm_marker_free, sm_marker_new, DEFAULT_SOLO_BELOW,
};
pub use marks::HeaderByte;
pub use model::SLOT_BATCH;
pub use mutator::{
    sm_mutator, sm_mutator_allocate_black, sm_mutator_detach, sm_mutator_flush, sm_mutator_free,
    sm_mutator_new, sm_mutator_pre_write,
};
pub use report::{
    sm_report_cleared, sm_report_cleared_by_worker, sm_report_is_marked, sm_report_live_by_type,
    sm_report_stats, sm_report_to_finalize, sm_report_workers,
};
pub use status::*;
pub use types::*;
