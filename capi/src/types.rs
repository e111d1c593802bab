//! The structs of the header, field for field (`#[repr(C)]`), with the
//! header's names. Callbacks are nullable function pointers.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// An object reference: non-zero, a multiple of 8 (`sm_ref`).
pub type sm_ref = usize;

/// `SM_SLOT_STRONG`.
pub const SM_SLOT_STRONG: u32 = 0;
/// `SM_SLOT_SOFT`.
pub const SM_SLOT_SOFT: u32 = 1;
/// `SM_SLOT_WEAK`.
pub const SM_SLOT_WEAK: u32 = 2;
/// `SM_SLOT_PHANTOM`.
pub const SM_SLOT_PHANTOM: u32 = 3;
/// `SM_SLOT_EPHEMERON`.
pub const SM_SLOT_EPHEMERON: u32 = 4;
/// `SM_SLOT_STRONG_LEAF`.
pub const SM_SLOT_STRONG_LEAF: u32 = 5;

/// What `scan_slots` returns to fail the collection.
pub const SM_SCAN_FAILED: usize = usize::MAX;
/// `SM_SLOTS_ALL`: the end that asks `scan_slots` for all of an object's
/// slots (with `scan_clamps_end`).
pub const SM_SLOTS_ALL: usize = usize::MAX;

/// `SM_MARKS_HEADER_BYTE`.
pub const SM_MARKS_HEADER_BYTE: u32 = 1;
/// `SM_MARKS_CALLBACKS`.
pub const SM_MARKS_CALLBACKS: u32 = 2;
/// `SM_MARKS_SIDE_BITMAP`.
pub const SM_MARKS_SIDE_BITMAP: u32 = 3;

/// `SM_SOFT_CLEAR_ALL`.
pub const SM_SOFT_CLEAR_ALL: u32 = 0;
/// `SM_SOFT_KEEP_ALL`.
pub const SM_SOFT_KEEP_ALL: u32 = 1;
/// `SM_SOFT_ASK`.
pub const SM_SOFT_ASK: u32 = 2;

/// One non-null reference slot, as `scan_slots` writes it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct sm_slot {
    /// The slot's index in `0..slot_count`.
    pub index: usize,
    /// The referent.
    pub target: sm_ref,
    /// An ephemeron's key, else 0.
    pub key: sm_ref,
    /// One of `SM_SLOT_*`.
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
}

/// `size_t (*)(void *ctx, sm_ref obj)`.
pub type RefFn = Option<unsafe extern "C" fn(*mut c_void, sm_ref) -> usize>;
/// `bool (*)(void *ctx, sm_ref obj)`.
pub type RefPredicate = Option<unsafe extern "C" fn(*mut c_void, sm_ref) -> bool>;
/// The slot scanner.
pub type ScanSlotsFn =
    Option<unsafe extern "C" fn(*mut c_void, sm_ref, usize, usize, *mut sm_slot, usize) -> usize>;
/// The visitor the engine hands to `visit_chunk`.
pub type VisitFn = unsafe extern "C" fn(*mut c_void, sm_ref);
/// A task of `sm_marker_run_tasks`: `(ctx, index)`.
pub type TaskFn = unsafe extern "C" fn(*mut c_void, usize);
/// A chunk visitor.
pub type VisitChunkFn = Option<unsafe extern "C" fn(*mut c_void, usize, VisitFn, *mut c_void)>;
/// A chunk scanner into a buffer.
pub type ScanChunkFn =
    Option<unsafe extern "C" fn(*mut c_void, usize, usize, *mut sm_ref, usize) -> usize>;

/// How the engine reads the heap.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_object_model {
    /// Passed to every callback.
    pub ctx: *mut c_void,
    /// Required: the object's size in bytes.
    pub size_bytes: RefFn,
    /// Required: the object's slot count.
    pub slot_count: RefFn,
    /// Required: the batched slot scanner.
    pub scan_slots: ScanSlotsFn,
    /// Types for the histogram; 0: none.
    pub type_count: usize,
    /// The object's type, if `type_count > 0`.
    pub type_id: RefFn,
    /// Optional prefetch hint.
    pub prefetch: Option<unsafe extern "C" fn(*mut c_void, sm_ref)>,
    /// Non-zero: no prefetching.
    pub prefetch_off: u32,
    /// The bytes from the reference a scan reads first (at most 64; 0: the
    /// line at the reference).
    pub prefetch_bytes: u32,
    /// Optional heap bounds (start).
    pub heap_start: usize,
    /// Optional heap bounds (end); not above `heap_start`: no check.
    pub heap_end: usize,
    /// Optional second-stage prefetch hint.
    pub prefetch_slots: Option<unsafe extern "C" fn(*mut c_void, sm_ref)>,
    /// Non-zero: `scan_slots` clamps `end` to the object's slot count, and
    /// the engine scans an object in one call without asking its count.
    pub scan_clamps_end: u32,
}

/// A header mark byte's description.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct sm_mark_byte {
    /// Byte offset from the reference.
    pub offset: isize,
    /// The bits that say whether the object is marked.
    pub test_mask: u8,
    /// Marked iff `byte & test_mask == test_value`.
    pub test_value: u8,
    /// Bits that marking sets.
    pub set_bits: u8,
    /// Bits that marking clears.
    pub clear_bits: u8,
}

/// Where mark bits live.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_marks {
    /// One of `SM_MARKS_*`.
    pub mode: u32,
    /// How many targets ahead of its mark test the engine prefetches a
    /// mark (`MarkStore::prefetch_distance`), for `SM_MARKS_HEADER_BYTE`
    /// and `SM_MARKS_CALLBACKS`; 0 for the default, 32.
    pub prefetch_distance: u32,
    /// The header byte, for `SM_MARKS_HEADER_BYTE`.
    pub header: sm_mark_byte,
    /// Passed to the callbacks.
    pub ctx: *mut c_void,
    /// `SM_MARKS_CALLBACKS`: sets the mark.
    pub try_mark: RefPredicate,
    /// `SM_MARKS_CALLBACKS`: reads the mark.
    pub is_marked: RefPredicate,
    /// `SM_MARKS_SIDE_BITMAP`: the dense index.
    pub dense_index: RefFn,
    /// `SM_MARKS_SIDE_BITMAP`: one past the largest index.
    pub dense_bound: usize,
}

/// A set of references in chunks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_refs {
    /// A plain array, if not null.
    pub refs: *const sm_ref,
    /// Its length.
    pub len: usize,
    /// Passed to the callbacks.
    pub ctx: *mut c_void,
    /// The chunk count.
    pub chunk_count: Option<unsafe extern "C" fn(*mut c_void) -> usize>,
    /// A chunk, through a visitor.
    pub visit_chunk: VisitChunkFn,
    /// A chunk, into a buffer.
    pub scan_chunk: ScanChunkFn,
}

/// The soft-reference policy.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_soft_policy {
    /// One of `SM_SOFT_*`.
    pub mode: u32,
    /// Zero.
    pub reserved: u32,
    /// Passed to `keep`.
    pub ctx: *mut c_void,
    /// `SM_SOFT_ASK`: whether to keep a referent.
    pub keep: RefPredicate,
}

/// The marker's configuration.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_config {
    /// Workers; 0: the machine's cores.
    pub workers: u32,
    /// Non-zero: count live bytes and types.
    pub count_live: u32,
    /// The deque kind's name, or null.
    pub deque: *const c_char,
    /// Solo below this many objects marked last time; 0: never.
    pub solo_below: u64,
}

/// The inputs of one collection.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_collection {
    /// The object model.
    pub model: *const sm_object_model,
    /// The mark bits.
    pub marks: *const sm_marks,
    /// The roots.
    pub roots: *const sm_refs,
    /// The finalizable objects, or null.
    pub finalizable: *const sm_refs,
    /// The soft-reference policy.
    pub soft: sm_soft_policy,
}

/// A slot to clear.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct sm_weak_ref {
    /// The holder.
    pub holder: sm_ref,
    /// The slot's index.
    pub slot: usize,
    /// The referent (an ephemeron: its value).
    pub target: sm_ref,
    /// An ephemeron's key, else 0.
    pub key: sm_ref,
    /// One of `SM_SLOT_*` (never strong).
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
}

/// A collection's statistics.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct sm_stats {
    /// Wall time, ns.
    pub pause_ns: u64,
    /// Objects marked.
    pub live_objects: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// Root references read.
    pub roots: u64,
    /// Slots to clear.
    pub cleared: u64,
    /// Objects to finalize.
    pub to_finalize: u64,
    /// Soft referents kept.
    pub soft_kept: u64,
    /// Ephemeron entries found.
    pub ephemerons: u64,
    /// Objects stolen between workers.
    pub items_stolen: u64,
    /// Steps run.
    pub steps: u32,
    /// Workers configured.
    pub workers: u32,
    /// Workers that took part.
    pub workers_used: u32,
    /// Zero.
    pub reserved: u32,
}

/// Live counts of one type.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct sm_type_count {
    /// Objects.
    pub objects: u64,
    /// Bytes.
    pub bytes: u64,
}

/// A report: its marker and collection number.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_report {
    /// The marker.
    pub marker: *mut crate::marker::sm_marker,
    /// The collection's number on that marker.
    pub collection: u64,
}

impl Default for sm_report {
    fn default() -> sm_report {
        sm_report {
            marker: std::ptr::null_mut(),
            collection: 0,
        }
    }
}

/// Back-pressure of a mark cycle: a mutator thread beyond the barrier
/// queue's bound marks itself (the default).
pub const SM_BACKPRESSURE_ASSIST: u32 = 0;
/// Back-pressure of a mark cycle: a mutator thread beyond the bound waits
/// for the marking threads.
pub const SM_BACKPRESSURE_WAIT: u32 = 1;

/// The options of a mark cycle (`sm_cycle_options`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_cycle_options {
    /// `SM_BACKPRESSURE_*`.
    pub backpressure: u32,
    /// 1: incremental steps run on every worker; 0: on the calling thread.
    pub parallel_steps: u32,
    /// Barrier buffers that may wait per worker and per buffer held (>= 1).
    pub buffers_per_thread: usize,
    /// Objects an assisting mutator marks per assist (>= 1).
    pub assist_budget: usize,
    /// 1: mutators may allocate black (`sm_mutator_allocate_black`); 0:
    /// refused, and steps on one thread mark without atomic
    /// read-modify-writes.
    pub black_allocation: u32,
    /// 1: every part of the cycle runs on the thread that calls it, alone
    /// (the other workers are never woken); 0: as the other options say.
    pub solo: u32,
}

/// The inputs of a mark cycle's remark (`sm_remark`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sm_remark {
    /// The roots at the remark (required, may be empty).
    pub roots: *const sm_refs,
    /// The registered finalizable objects; null: none.
    pub finalizable: *const sm_refs,
    /// Soft references (zeroed: clear all).
    pub soft: sm_soft_policy,
}
