//! A heap in Rust memory that both the C interface (through C-style
//! callbacks) and the Rust API (through `ObjectModel`) can mark: objects
//! are boxed nodes, references their addresses, and the mark byte sits in
//! each node.

#![allow(dead_code)] // each test file uses part of it

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering};

use stealmark_capi::*;
use stealmark_marker::{MarkStore, ObjRef, ObjectModel, SlotKind};

mod ffi;
mod setup;
pub use ffi::*;
pub use setup::*;

/// A slot: the target's node index, its kind, and an ephemeron's key index.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub target: Option<usize>,
    pub kind: u32,
    pub key: usize,
}

/// One object.
#[repr(C, align(16))]
pub struct Node {
    /// The mark byte: bit 0 set means marked; bit 6 must be kept.
    pub mark: AtomicU8,
    pub ty: usize,
    pub index: usize,
    pub slots: Vec<Slot>,
}

/// The heap: nodes, roots and finalizable objects by index.
pub struct Heap {
    /// Boxed: a node's address is its reference, so nodes must not move.
    #[allow(clippy::vec_box)]
    pub nodes: Vec<Box<Node>>,
    pub roots: Vec<usize>,
    pub finalizable: Vec<usize>,
}

pub const TYPES: usize = 3;

/// A small xorshift generator, so that tests need no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

impl Heap {
    /// A random heap of `n` objects with every slot kind.
    pub fn random(n: usize, seed: u64) -> Heap {
        let mut rng = Rng(seed | 1);
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            let count = if rng.below(40) == 0 {
                1100 + rng.below(900)
            } else {
                rng.below(5)
            };
            let slots = (0..count)
                .map(|_| {
                    let kind = match rng.below(20) {
                        0 => SM_SLOT_SOFT,
                        1 | 2 => SM_SLOT_WEAK,
                        3 => SM_SLOT_PHANTOM,
                        4 | 5 => SM_SLOT_EPHEMERON,
                        _ => SM_SLOT_STRONG,
                    };
                    let target = (rng.below(8) != 0).then(|| rng.below(n));
                    Slot {
                        target,
                        kind,
                        key: rng.below(n),
                    }
                })
                .collect();
            nodes.push(Box::new(Node {
                mark: AtomicU8::new(if rng.below(2) == 0 { 0x40 } else { 0 }),
                ty: rng.below(TYPES),
                index: i,
                slots,
            }));
        }
        let roots = (0..1 + n / 50).map(|_| rng.below(n)).collect();
        let finalizable = (0..n / 20).map(|_| rng.below(n)).collect();
        Heap {
            nodes,
            roots,
            finalizable,
        }
    }

    /// The heap with every other strong slot to an object without slots
    /// hinted as a leaf (`SM_SLOT_STRONG_LEAF`). Returns how many.
    pub fn hint_leaves(&mut self) -> usize {
        let slotless: Vec<bool> = self.nodes.iter().map(|n| n.slots.is_empty()).collect();
        let mut hinted = 0;
        let mut every_other = false;
        for node in &mut self.nodes {
            for slot in &mut node.slots {
                if slot.kind == SM_SLOT_STRONG && slot.target.is_some_and(|t| slotless[t]) {
                    every_other = !every_other;
                    if every_other {
                        slot.kind = SM_SLOT_STRONG_LEAF;
                        hinted += 1;
                    }
                }
            }
        }
        hinted
    }

    pub fn addr(&self, i: usize) -> usize {
        &*self.nodes[i] as *const Node as usize
    }

    /// The roots' addresses.
    pub fn root_addrs(&self) -> Vec<usize> {
        self.roots.iter().map(|&i| self.addr(i)).collect()
    }

    /// The finalizable objects' addresses.
    pub fn finalizable_addrs(&self) -> Vec<usize> {
        self.finalizable.iter().map(|&i| self.addr(i)).collect()
    }

    pub fn clear_marks(&self) {
        for n in &self.nodes {
            n.mark.fetch_and(!1, Ordering::Relaxed);
        }
    }

    pub fn marked(&self) -> Vec<bool> {
        self.nodes
            .iter()
            .map(|n| n.mark.load(Ordering::Relaxed) & 1 != 0)
            .collect()
    }

    pub fn size_of(n: &Node) -> usize {
        16 + 8 * n.slots.len()
    }

    /// The bounds of the nodes' addresses.
    pub fn bounds(&self) -> (usize, usize) {
        let lo = (0..self.nodes.len()).map(|i| self.addr(i)).min().unwrap();
        let hi = (0..self.nodes.len()).map(|i| self.addr(i)).max().unwrap();
        (lo, hi + std::mem::size_of::<Node>())
    }
}

/// The node at reference `r`.
///
/// # Safety
///
/// `r` is the address of a node of a live heap.
pub unsafe fn node<'a>(r: usize) -> &'a Node {
    // SAFETY: the caller's promise.
    unsafe { &*(r as *const Node) }
}

// ---- the C-style callbacks ----------------------------------------------

pub unsafe extern "C" fn c_size(_: *mut c_void, r: usize) -> usize {
    // SAFETY: the engine passes references of the heap.
    Heap::size_of(unsafe { node(r) })
}

pub unsafe extern "C" fn c_count(_: *mut c_void, r: usize) -> usize {
    // SAFETY: as above.
    unsafe { node(r) }.slots.len()
}

pub unsafe extern "C" fn c_type(_: *mut c_void, r: usize) -> usize {
    // SAFETY: as above.
    unsafe { node(r) }.ty
}

pub unsafe extern "C" fn c_scan(
    ctx: *mut c_void,
    r: usize,
    start: usize,
    end: usize,
    out: *mut sm_slot,
    cap: usize,
) -> usize {
    // SAFETY: `ctx` is the heap, `r` one of its nodes.
    let (heap, n) = unsafe { (&*(ctx as *const Heap), node(r)) };
    let mut k = 0;
    for i in start..end {
        if k == cap {
            break;
        }
        let s = n.slots[i];
        let Some(t) = s.target else { continue };
        let key = if s.kind == SM_SLOT_EPHEMERON {
            heap.addr(s.key)
        } else {
            0
        };
        // SAFETY: `k < cap`, and `out` has room for `cap` entries.
        unsafe {
            out.add(k).write(sm_slot {
                index: i,
                target: heap.addr(t),
                key,
                kind: s.kind,
                reserved: 0,
            })
        };
        k += 1;
    }
    k
}

/// `c_scan` for a model with `scan_clamps_end`: an `end` past the node's
/// last slot stops there.
pub unsafe extern "C" fn c_scan_clamping(
    ctx: *mut c_void,
    r: usize,
    start: usize,
    end: usize,
    out: *mut sm_slot,
    cap: usize,
) -> usize {
    // SAFETY: as above.
    let end = end.min(unsafe { node(r) }.slots.len());
    // SAFETY: the engine's arguments, `end` within the node's slots.
    unsafe { c_scan(ctx, r, start, end, out, cap) }
}

pub unsafe extern "C" fn c_try_mark(_: *mut c_void, r: usize) -> bool {
    // SAFETY: as above.
    unsafe { node(r) }.mark.fetch_or(1, Ordering::Relaxed) & 1 == 0
}

pub unsafe extern "C" fn c_is_marked(_: *mut c_void, r: usize) -> bool {
    // SAFETY: as above.
    unsafe { node(r) }.mark.load(Ordering::Relaxed) & 1 != 0
}

pub unsafe extern "C" fn c_dense(_: *mut c_void, r: usize) -> usize {
    // SAFETY: as above.
    unsafe { node(r) }.index
}

/// Keeps soft referents whose index is even.
pub unsafe extern "C" fn c_keep(_: *mut c_void, r: usize) -> bool {
    // SAFETY: as above.
    unsafe { node(r) }.index % 2 == 0
}

/// The object model of `heap` for the C interface.
pub fn c_model(heap: &Heap) -> sm_object_model {
    sm_object_model {
        ctx: heap as *const Heap as *mut c_void,
        size_bytes: Some(c_size),
        slot_count: Some(c_count),
        scan_slots: Some(c_scan),
        type_count: TYPES,
        type_id: Some(c_type),
        prefetch: None,
        prefetch_off: 0,
        prefetch_bytes: 0,
        heap_start: 0,
        heap_end: 0,
        prefetch_slots: None,
        scan_clamps_end: 0,
    }
}

/// Mark bits of the given mode over the nodes' mark bytes (bit 0).
pub fn c_marks(heap: &Heap, mode: u32) -> sm_marks {
    sm_marks {
        mode,
        prefetch_distance: 0,
        header: bit0(std::mem::offset_of!(Node, mark) as isize),
        ctx: std::ptr::null_mut(),
        try_mark: Some(c_try_mark),
        is_marked: Some(c_is_marked),
        dense_index: Some(c_dense),
        dense_bound: heap.nodes.len(),
    }
}

// ---- the same heap for the Rust API --------------------------------------

/// `heap` as an `ObjectModel` (references are the nodes' addresses).
pub struct RustModel<'h>(pub &'h Heap);

impl ObjectModel for RustModel<'_> {
    fn size_bytes(&self, o: ObjRef) -> usize {
        // SAFETY: the engine passes references of the heap.
        Heap::size_of(unsafe { node(o.word()) })
    }
    fn slot_count(&self, o: ObjRef) -> usize {
        // SAFETY: as above.
        unsafe { node(o.word()) }.slots.len()
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, mut v: V) {
        // SAFETY: as above.
        let n = unsafe { node(o.word()) };
        let r = |i| ObjRef::from_word(self.0.addr(i)).unwrap();
        for i in s.start..s.end.min(n.slots.len()) {
            let sl = n.slots[i];
            let Some(t) = sl.target else { continue };
            let kind = match sl.kind {
                // A leaf hint read as a plain strong slot: the comparison
                // with the C interface then checks the engine's leaf path.
                SM_SLOT_STRONG | SM_SLOT_STRONG_LEAF => SlotKind::Strong,
                SM_SLOT_SOFT => SlotKind::Soft,
                SM_SLOT_WEAK => SlotKind::Weak,
                SM_SLOT_PHANTOM => SlotKind::Phantom,
                _ => SlotKind::Ephemeron { key: r(sl.key) },
            };
            v(i, r(t), kind);
        }
    }
    fn type_count(&self) -> usize {
        TYPES
    }
    fn type_id(&self, o: ObjRef) -> usize {
        // SAFETY: as above.
        unsafe { node(o.word()) }.ty
    }
}

/// The nodes' mark bytes as a Rust `MarkStore`.
pub struct RustMarks;

impl MarkStore<RustModel<'_>> for RustMarks {
    fn try_mark(&self, _: &RustModel<'_>, o: ObjRef) -> bool {
        // SAFETY: as above.
        unsafe { node(o.word()) }
            .mark
            .fetch_or(1, Ordering::Relaxed)
            & 1
            == 0
    }
    fn is_marked(&self, _: &RustModel<'_>, o: ObjRef) -> bool {
        // SAFETY: as above.
        unsafe { node(o.word()) }.mark.load(Ordering::Relaxed) & 1 != 0
    }
}
