//! [`CModel`]: the runtime's `sm_object_model` callbacks as the engine's
//! [`ObjectModel`], with every answer checked against the contract.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::OnceLock;

use stealmark_marker::model::prefetch_read;
use stealmark_marker::{MarkIndex, ObjRef, ObjectModel, SlotKind};

use crate::bounds::Bounds;
use crate::contract::violated;
use crate::status::{Error, SM_ERR_MARKS, SM_ERR_RANGE};
use crate::types::{
    sm_object_model, sm_slot, SM_SCAN_FAILED, SM_SLOTS_ALL, SM_SLOT_EPHEMERON, SM_SLOT_PHANTOM,
    SM_SLOT_SOFT, SM_SLOT_STRONG, SM_SLOT_STRONG_LEAF, SM_SLOT_WEAK,
};

/// Slots per `scan_slots` call: the buffer the engine passes (4 KiB on the
/// worker's stack). The header promises at least 64.
pub const SLOT_BATCH: usize = 128;

/// `size_t (*)(void *, sm_ref)`, present.
type RefFn = unsafe extern "C" fn(*mut c_void, usize) -> usize;
/// The slot scanner, present.
type ScanFn = unsafe extern "C" fn(*mut c_void, usize, usize, usize, *mut sm_slot, usize) -> usize;

/// The most bytes `prefetch_bytes` may ask for: two lines' worth.
const MAX_PREFETCH_BYTES: u32 = 64;

/// How the engine prefetches an object it is about to scan.
#[derive(Clone, Copy)]
enum Prefetch {
    /// Read prefetches of the reference as an address and of the byte
    /// `last` bytes after it (`prefetch_bytes - 1`, or 0): the lines of the
    /// bytes a scan reads first (the default).
    Address { last: usize },
    /// Nothing (`prefetch_off`).
    Off,
    /// The runtime's `prefetch` callback.
    Callback(unsafe extern "C" fn(*mut c_void, usize)),
}

/// The object model of a collection: the runtime's callbacks, checked
/// present, and the side bitmap's dense index when the marks use one.
pub(crate) struct CModel {
    ctx: *mut c_void,
    size_bytes: RefFn,
    slot_count: RefFn,
    scan_slots: ScanFn,
    type_count: usize,
    type_id: Option<RefFn>,
    prefetch: Prefetch,
    /// The runtime's second-stage hint (`prefetch_slots`), unless
    /// prefetching is off.
    prefetch_slots: Option<unsafe extern "C" fn(*mut c_void, usize)>,
    bounds: Bounds,
    /// The runtime's `scan_clamps_end`: its `scan_slots` stops at the
    /// object's last slot, so an object is scanned without its count.
    clamps_end: bool,
    /// The dense index callback, its context and bound (side bitmap only).
    dense: Option<(RefFn, *mut c_void, usize)>,
    /// The first contract violation found in the callbacks' answers: a
    /// mark cycle turns the panic that reports it into its poisoned state,
    /// which keeps no payload, so the message is kept here. Boxed, so that
    /// the model itself has no interior mutability: the engine's loops take
    /// it by shared reference, and the compiler then reads the callbacks,
    /// bounds and prefetch mode once per loop rather than once per slot.
    violation: Box<OnceLock<String>>,
}

// SAFETY: the header requires every callback to be callable from any GC
// worker thread, several at once, with its `ctx`: the runtime vouches for
// sharing the context pointer between threads for the collection.
unsafe impl Sync for CModel {}

// SAFETY: as for `Sync`: a mark cycle's model moves to the thread that
// finishes or frees it, and the header requires the callbacks and their
// context to serve any thread for the cycle's length.
unsafe impl Send for CModel {}

impl CModel {
    /// Checks `model`'s required callbacks; `dense` is the side bitmap's
    /// index (callback, context, bound), if the marks use one.
    pub(crate) fn new(
        model: &sm_object_model,
        dense: Option<(RefFn, *mut c_void, usize)>,
    ) -> Result<CModel, Error> {
        let need = |f: Option<RefFn>, name: &str| f.ok_or_else(|| Error::null(name));
        let type_id = match (model.type_count, model.type_id) {
            (0, _) => None,
            (_, Some(f)) => Some(f),
            (n, None) => {
                return Err(Error::null(&format!(
                    "model.type_id (with model.type_count = {n})"
                )))
            }
        };
        if dense.is_some_and(|(_, _, bound)| bound == 0) {
            return Err(Error::new(SM_ERR_MARKS, "marks.dense_bound is 0"));
        }
        if model.prefetch_bytes > MAX_PREFETCH_BYTES {
            return Err(Error::new(
                SM_ERR_RANGE,
                format!(
                    "model.prefetch_bytes is {}, above {MAX_PREFETCH_BYTES}",
                    model.prefetch_bytes
                ),
            ));
        }
        Ok(CModel {
            ctx: model.ctx,
            size_bytes: need(model.size_bytes, "model.size_bytes")?,
            slot_count: need(model.slot_count, "model.slot_count")?,
            scan_slots: model
                .scan_slots
                .ok_or_else(|| Error::null("model.scan_slots"))?,
            type_count: model.type_count,
            type_id,
            prefetch: match (model.prefetch_off != 0, model.prefetch) {
                (true, _) => Prefetch::Off,
                (false, Some(f)) => Prefetch::Callback(f),
                (false, None) => Prefetch::Address {
                    last: model.prefetch_bytes.saturating_sub(1) as usize,
                },
            },
            prefetch_slots: model.prefetch_slots.filter(|_| model.prefetch_off == 0),
            bounds: Bounds::of(model),
            clamps_end: model.scan_clamps_end != 0,
            dense,
            violation: Box::default(),
        })
    }

    /// The callbacks of [`CModel::for_tests`], as a runtime passes them:
    /// every object 8 bytes without slots, no types, no prefetch and no
    /// heap bounds.
    #[cfg(test)]
    pub(crate) fn callbacks_for_tests() -> sm_object_model {
        unsafe extern "C" fn eight(_: *mut c_void, _: usize) -> usize {
            8
        }
        unsafe extern "C" fn zero(_: *mut c_void, _: usize) -> usize {
            0
        }
        unsafe extern "C" fn none(
            _: *mut c_void,
            _: usize,
            _: usize,
            _: usize,
            _: *mut sm_slot,
            _: usize,
        ) -> usize {
            0
        }
        sm_object_model {
            ctx: std::ptr::null_mut(),
            size_bytes: Some(eight),
            slot_count: Some(zero),
            scan_slots: Some(none),
            type_count: 0,
            type_id: None,
            prefetch: None,
            prefetch_off: 1,
            prefetch_bytes: 0,
            heap_start: 0,
            heap_end: 0,
            prefetch_slots: None,
            scan_clamps_end: 0,
        }
    }

    /// A model of slotless objects ([`CModel::callbacks_for_tests`]), for
    /// the unit tests (the mark stores' never call it).
    #[cfg(test)]
    pub(crate) fn for_tests() -> CModel {
        CModel::new(&CModel::callbacks_for_tests(), None).expect("every callback is present")
    }

    /// Hints that the mark byte of `obj`, at `byte`, is about to be tested:
    /// a prefetch of the byte's line when references are addresses (rather
    /// than of the object's first bytes, which a scan reads), the runtime's
    /// callback if it gave one, nothing with `prefetch_off`.
    #[inline]
    pub(crate) fn prefetch_mark(&self, obj: ObjRef, byte: *const u8) {
        match self.prefetch {
            Prefetch::Address { .. } => prefetch_read(byte),
            Prefetch::Off => {}
            // SAFETY: as in `size_bytes`.
            Prefetch::Callback(f) => unsafe { f(self.ctx, obj.word()) },
        }
    }

    /// The heap bounds, for the root sources.
    pub(crate) fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The first contract violation found in this model's callbacks.
    pub(crate) fn violation(&self) -> Option<&str> {
        self.violation.get().map(String::as_str)
    }

    /// Keeps `message` (if it is the first) and reports the violation.
    #[cold]
    #[inline(never)]
    fn violated(&self, message: String) -> ! {
        let _ = self.violation.set(message.clone());
        violated(message)
    }

    /// `word` as a reference, or a violation naming `what` gave it.
    #[inline]
    fn target(&self, word: usize, what: impl FnOnce() -> String) -> ObjRef {
        match self.bounds.get(word) {
            Some(r) => r,
            None => self.violated(self.bounds.why(word, what())),
        }
    }
}

impl CModel {
    /// The kind of `entry`, which is not a strong slot (to a leaf or not),
    /// or a contract violation (out of line: non-strong slots are rare).
    #[inline(never)]
    fn other_kind(&self, obj: ObjRef, entry: &sm_slot) -> SlotKind {
        match entry.kind {
            SM_SLOT_STRONG => SlotKind::Strong,
            SM_SLOT_STRONG_LEAF => SlotKind::StrongLeaf,
            SM_SLOT_SOFT => SlotKind::Soft,
            SM_SLOT_WEAK => SlotKind::Weak,
            SM_SLOT_PHANTOM => SlotKind::Phantom,
            SM_SLOT_EPHEMERON => SlotKind::Ephemeron {
                key: self.target(entry.key, || {
                    format!(
                        "scan_slots({:#x}) slot {} (ephemeron key)",
                        obj.word(),
                        entry.index
                    )
                }),
            },
            k => self.violated(format!(
                "scan_slots({:#x}) slot {} has the unknown kind {k}",
                obj.word(),
                entry.index
            )),
        }
    }

    /// Visits the slots of `obj` in `slots` (`end` within the object's
    /// count, or past it when the runtime clamps), a buffer's worth per
    /// call of the runtime's.
    #[inline(always)]
    fn scan_from<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        buf: &mut [MaybeUninit<sm_slot>; SLOT_BATCH],
        visit: &mut V,
    ) {
        let mut from = slots.start;
        while from < slots.end {
            let entries = self.call_scan(obj, from..slots.end, buf);
            let full = entries.len() == SLOT_BATCH;
            from = self.visit_entries(obj, slots.clone(), from, entries, visit);
            if !full {
                break;
            }
        }
    }

    /// One call of the runtime's `scan_slots` for `slots` into `buf`: the
    /// entries it wrote, or a violation if it failed or overran.
    #[inline(always)]
    fn call_scan<'b>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        buf: &'b mut [MaybeUninit<sm_slot>; SLOT_BATCH],
    ) -> &'b [sm_slot] {
        // SAFETY: a present callback, called as the header documents;
        // `buf` has room for `SLOT_BATCH` entries and lives across the
        // call.
        let n = unsafe {
            (self.scan_slots)(
                self.ctx,
                obj.word(),
                slots.start,
                slots.end,
                buf.as_mut_ptr().cast(),
                SLOT_BATCH,
            )
        };
        // `SM_SCAN_FAILED` is above the buffer's size too.
        if n > SLOT_BATCH {
            self.bad_count(obj, n);
        }
        // SAFETY: the callback wrote the `n <= SLOT_BATCH` entries it
        // returned (the header's contract); `sm_slot` is plain integers.
        unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<sm_slot>(), n) }
    }

    /// Checks and visits the `entries` a call for `next..slots.end`
    /// returned; returns the index after the last one.
    #[inline(always)]
    fn visit_entries<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut next: usize,
        entries: &[sm_slot],
        visit: &mut V,
    ) -> usize {
        let end = slots.end;
        for entry in entries {
            // `next <= end`: one comparison checks `next <= index < end`.
            if entry.index.wrapping_sub(next) >= end - next {
                self.bad_index(obj, slots.clone(), next, entry);
            }
            next = entry.index + 1;
            let Some(target) = self.bounds.get(entry.target) else {
                self.bad_target(obj, entry)
            };
            let kind = match entry.kind {
                SM_SLOT_STRONG => SlotKind::Strong,
                SM_SLOT_STRONG_LEAF => SlotKind::StrongLeaf,
                _ => self.other_kind(obj, entry),
            };
            visit(entry.index, target, kind);
        }
        next
    }

    /// Reports a count `n` that `scan_slots` returned above the buffer's.
    #[cold]
    #[inline(never)]
    fn bad_count(&self, obj: ObjRef, n: usize) -> ! {
        if n == SM_SCAN_FAILED {
            self.violated(format!(
                "scan_slots({:#x}) returned SM_SCAN_FAILED",
                obj.word()
            ));
        }
        self.violated(format!(
            "scan_slots({:#x}) returned {n}, more than the buffer's {SLOT_BATCH} entries",
            obj.word()
        ))
    }

    /// Reports an entry whose index is not in `next..end`.
    #[cold]
    #[inline(never)]
    fn bad_index(&self, obj: ObjRef, slots: Range<usize>, next: usize, entry: &sm_slot) -> ! {
        self.violated(format!(
            "scan_slots({:#x}, {}, {}) gave slot index {}, outside [{next}, {}) \
             (indices must rise within the range asked for)",
            obj.word(),
            slots.start,
            slots.end,
            entry.index,
            slots.end
        ))
    }

    /// Reports an entry whose target is not a reference inside the heap.
    #[cold]
    #[inline(never)]
    fn bad_target(&self, obj: ObjRef, entry: &sm_slot) -> ! {
        let what = format!("scan_slots({:#x}) slot {}", obj.word(), entry.index);
        self.violated(self.bounds.why(entry.target, what))
    }
}

impl ObjectModel for CModel {
    /// A runtime may report `SM_SLOT_STRONG_LEAF` slots.
    const LEAF_SLOTS: bool = true;

    /// A runtime may give a `prefetch_slots` callback (tested per call).
    const PREFETCHES_SLOTS: bool = true;

    #[inline]
    fn size_bytes(&self, obj: ObjRef) -> usize {
        // SAFETY: a present callback of the runtime, called as the header
        // documents (any worker thread, its own context).
        unsafe { (self.size_bytes)(self.ctx, obj.word()) }
    }

    /// One `size_bytes` call: the footprint is the size (the default would
    /// call the runtime twice).
    #[inline]
    fn live_bytes(&self, obj: ObjRef) -> (usize, usize) {
        let size = self.size_bytes(obj);
        (size, size)
    }

    #[inline]
    fn slot_count(&self, obj: ObjRef) -> usize {
        // SAFETY: as in `size_bytes`.
        unsafe { (self.slot_count)(self.ctx, obj.word()) }
    }

    /// Inlined into the engine's scan, so that an object costs no call
    /// besides the runtime's.
    #[inline(always)]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        // The engine scans a whole object as `0..slot_count`, and a large
        // array in chunks whose last one may run past the end (the Rust
        // contract lets models clamp): unless the runtime clamps, clamp
        // chunks here, so that the C callback gets `end <= slot_count`, as
        // the header says.
        let slots = if slots.start > 0 && !self.clamps_end {
            slots.start..slots.end.min(self.slot_count(obj))
        } else {
            slots
        };
        let mut buf = [MaybeUninit::<sm_slot>::uninit(); SLOT_BATCH];
        self.scan_from(obj, slots, &mut buf, &mut visit);
    }

    /// With `scan_clamps_end`, one call of the runtime's for an object of
    /// fewer than `SLOT_BATCH` non-null slots, none for its count; a call
    /// that fills the buffer leaves the object to the count, as without.
    #[inline(always)]
    fn scan_object<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        limit: usize,
        mut visit: V,
    ) -> Option<usize> {
        let mut buf = [MaybeUninit::<sm_slot>::uninit(); SLOT_BATCH];
        if self.clamps_end {
            let entries = self.call_scan(obj, 0..SM_SLOTS_ALL, &mut buf);
            if entries.len() < SLOT_BATCH {
                self.visit_entries(obj, 0..SM_SLOTS_ALL, 0, entries, &mut visit);
                return None;
            }
            // A full buffer: the object may be an array to scan in chunks.
            // Its count decides, and the scan starts over from slot 0.
        }
        let n = self.slot_count(obj);
        if n > limit {
            return Some(n);
        }
        self.scan_from(obj, 0..n, &mut buf, &mut visit);
        None
    }

    #[inline]
    fn prefetch_slots(&self, obj: ObjRef) {
        if let Some(f) = self.prefetch_slots {
            // SAFETY: as in `size_bytes`.
            unsafe { f(self.ctx, obj.word()) }
        }
    }

    #[inline]
    fn type_count(&self) -> usize {
        self.type_count
    }

    #[inline]
    fn type_id(&self, obj: ObjRef) -> usize {
        let Some(f) = self.type_id else {
            return 0;
        };
        // SAFETY: as in `size_bytes`.
        let t = unsafe { f(self.ctx, obj.word()) };
        if t >= self.type_count {
            self.violated(format!(
                "type_id({:#x}) = {t}, not below type_count = {}",
                obj.word(),
                self.type_count
            ));
        }
        t
    }

    #[inline]
    fn prefetch(&self, obj: ObjRef) {
        match self.prefetch {
            Prefetch::Address { last } => {
                // The second hint names the first line again when the bytes
                // fit in it: cheaper than a branch on the object's offset.
                prefetch_read(obj.addr());
                prefetch_read(obj.addr().wrapping_add(last));
            }
            Prefetch::Off => {}
            // SAFETY: as in `size_bytes`.
            Prefetch::Callback(f) => unsafe { f(self.ctx, obj.word()) },
        }
    }
}

impl MarkIndex for CModel {
    fn mark_index_bound(&self) -> usize {
        self.dense.map_or(0, |(_, _, bound)| bound)
    }

    #[inline]
    fn mark_index(&self, obj: ObjRef) -> usize {
        let Some((f, ctx, bound)) = self.dense else {
            self.violated("a dense index was asked for without SM_MARKS_SIDE_BITMAP".to_owned());
        };
        // SAFETY: a present callback of the runtime (`sm_marks.dense_index`),
        // called as the header documents.
        let i = unsafe { f(ctx, obj.word()) };
        if i >= bound {
            self.violated(format!(
                "dense_index({:#x}) = {i}, not below dense_bound = {bound}",
                obj.word()
            ));
        }
        i
    }
}
