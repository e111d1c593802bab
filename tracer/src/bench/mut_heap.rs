//! The heap of `stealmark bench --mode`: the snapshot (a copy-on-write
//! mapping that the synthetic mutator writes) and a side arena of the new
//! objects it allocates, traced as one heap (`MutHeap`).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use stealmark_heap::{HeapView, MarkIndex, ObjRef, ObjectModel, SlotKind};

/// Slots of a new object.
pub const NEW_SLOTS: usize = 2;

/// The side arena: room for `capacity` new objects of [`NEW_SLOTS`] words.
pub struct Side {
    words: Box<[AtomicUsize]>,
    next: AtomicUsize,
}

impl Side {
    /// An arena for `capacity` objects.
    pub fn new(capacity: usize) -> Side {
        Side {
            words: (0..capacity.max(1) * NEW_SLOTS)
                .map(|_| AtomicUsize::new(0))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// The address range of the arena.
    fn range(&self) -> Range<usize> {
        let lo = self.words.as_ptr() as usize;
        lo..lo + self.words.len() * 8
    }

    /// New objects the arena has room for.
    pub fn capacity(&self) -> usize {
        self.words.len() / NEW_SLOTS
    }

    /// Forgets every object (between rounds: nothing refers to them then;
    /// snapshot slots never do, and each round's mutators start afresh).
    pub fn reset(&self) {
        // Relaxed: called while no mutator runs (between rounds, after the
        // threads were joined).
        self.next.store(0, Relaxed);
    }

    /// Slot `i` of the new object `obj`.
    pub(super) fn slot(&self, obj: ObjRef, i: usize) -> &AtomicUsize {
        &self.words[(obj.word() - self.range().start) / 8 + i]
    }

    /// Allocates an object whose slots are `init`; `None` when full.
    pub(super) fn allocate(&self, init: [Option<ObjRef>; NEW_SLOTS]) -> Option<ObjRef> {
        // Relaxed: hands out distinct indices; the object is published to
        // other threads (and the marker) only through later stores, and to
        // the marker only once marked black.
        let i = self.next.fetch_add(1, Relaxed);
        if i >= self.capacity() {
            return None;
        }
        let obj = ObjRef::from_word(self.range().start + i * NEW_SLOTS * 8)?;
        for (k, v) in init.into_iter().enumerate() {
            // Relaxed: see `MutHeap::scan_slots`.
            self.slot(obj, k).store(v.map_or(0, ObjRef::word), Relaxed);
        }
        Some(obj)
    }
}

/// The snapshot (a copy-on-write mapping) and the side arena, as one heap.
pub struct MutHeap<'a> {
    pub view: HeapView<'a>,
    pub side: &'a Side,
    side_at: Range<usize>,
    view_bound: usize,
}

impl<'a> MutHeap<'a> {
    pub fn new(view: HeapView<'a>, side: &'a Side) -> MutHeap<'a> {
        MutHeap {
            view_bound: view.mark_index_bound(),
            side_at: side.range(),
            view,
            side,
        }
    }

    #[inline(always)]
    fn is_new(&self, obj: ObjRef) -> bool {
        self.side_at.contains(&obj.word())
    }
}

impl ObjectModel for MutHeap<'_> {
    #[inline(always)]
    fn size_bytes(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            NEW_SLOTS * 8
        } else {
            self.view.size_bytes(obj)
        }
    }

    #[inline(always)]
    fn slot_count(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            NEW_SLOTS
        } else {
            self.view.slot_count(obj)
        }
    }

    #[inline(always)]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        if !self.is_new(obj) {
            return self.view.scan_slots(obj, slots, visit);
        }
        for i in slots.start..slots.end.min(NEW_SLOTS) {
            // Relaxed: mutators store these slots while workers scan; the
            // write barrier and its hand-offs carry the ordering.
            if let Some(t) = ObjRef::from_word(self.side.slot(obj, i).load(Relaxed)) {
                visit(i, t, SlotKind::Strong);
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, obj: ObjRef) {
        if !self.is_new(obj) {
            self.view.prefetch(obj);
        }
    }
}

impl MarkIndex for MutHeap<'_> {
    fn mark_index_bound(&self) -> usize {
        self.view_bound + self.side.capacity()
    }

    #[inline(always)]
    fn mark_index(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            self.view_bound + (obj.word() - self.side_at.start) / (NEW_SLOTS * 8)
        } else {
            self.view.mark_index(obj)
        }
    }
}
