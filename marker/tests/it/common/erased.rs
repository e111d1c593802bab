//! One object model type for every test heap off the oracle matrix's hot
//! path, and one mark store type for the tests' own stores. The engine is
//! monomorphised per (model, mark store) pair and per deque kind, so each
//! pair a test hands it compiles the whole mark loop again for every deque
//! kind: most of this binary's build time. The hand-written graphs, the
//! heaps that panic, spin, count threads or change under the marker all
//! reach the engine as one type, [`Dyn`], and the stores that count calls
//! or keep header bytes as [`DynStore`], whose calls go through trait
//! objects. The generated heaps of the oracle matrix keep their own type
//! (`Counting<HeapView>`), so that the matrix runs at the engine's speed.

use std::ops::Range;
use std::sync::Arc;

use stealmark_marker::{MarkIndex, MarkStore, ObjRef, ObjectModel, SlotKind};

/// [`ObjectModel`] and [`MarkIndex`] in a form that can be a trait object:
/// the scan's visitor is a `dyn FnMut`.
pub trait Model: Send + Sync {
    fn size_bytes(&self, obj: ObjRef) -> usize;
    fn footprint_bytes(&self, obj: ObjRef) -> usize;
    fn slot_count(&self, obj: ObjRef) -> usize;
    fn scan(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        visit: &mut dyn FnMut(usize, ObjRef, SlotKind),
    );
    fn type_count(&self) -> usize;
    fn type_id(&self, obj: ObjRef) -> usize;
    fn prefetch(&self, obj: ObjRef);
    fn mark_index_bound(&self) -> usize;
    fn mark_index(&self, obj: ObjRef) -> usize;
}

impl<M: ObjectModel + MarkIndex + Send> Model for M {
    fn size_bytes(&self, obj: ObjRef) -> usize {
        ObjectModel::size_bytes(self, obj)
    }
    fn footprint_bytes(&self, obj: ObjRef) -> usize {
        ObjectModel::footprint_bytes(self, obj)
    }
    fn slot_count(&self, obj: ObjRef) -> usize {
        ObjectModel::slot_count(self, obj)
    }
    fn scan(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        visit: &mut dyn FnMut(usize, ObjRef, SlotKind),
    ) {
        self.scan_slots(obj, slots, visit);
    }
    fn type_count(&self) -> usize {
        ObjectModel::type_count(self)
    }
    fn type_id(&self, obj: ObjRef) -> usize {
        ObjectModel::type_id(self, obj)
    }
    fn prefetch(&self, obj: ObjRef) {
        ObjectModel::prefetch(self, obj);
    }
    fn mark_index_bound(&self) -> usize {
        MarkIndex::mark_index_bound(self)
    }
    fn mark_index(&self, obj: ObjRef) -> usize {
        MarkIndex::mark_index(self, obj)
    }
}

/// A test heap of any type, as the one model type the engine sees:
/// borrowed, or shared (for an owned cycle, which keeps its heap).
#[derive(Clone)]
pub enum Dyn<'a> {
    Borrowed(&'a (dyn Model + 'a)),
    Shared(Arc<dyn Model + 'a>),
}

impl<'a> Dyn<'a> {
    /// `model`, borrowed.
    pub fn of<M: Model>(model: &'a M) -> Dyn<'a> {
        Dyn::Borrowed(model)
    }

    /// `model`, shared.
    pub fn shared<M: Model + 'a>(model: Arc<M>) -> Dyn<'a> {
        Dyn::Shared(model)
    }

    fn model(&self) -> &(dyn Model + 'a) {
        match self {
            Dyn::Borrowed(model) => *model,
            Dyn::Shared(model) => &**model,
        }
    }
}

impl ObjectModel for Dyn<'_> {
    fn size_bytes(&self, obj: ObjRef) -> usize {
        self.model().size_bytes(obj)
    }
    fn footprint_bytes(&self, obj: ObjRef) -> usize {
        self.model().footprint_bytes(obj)
    }
    fn slot_count(&self, obj: ObjRef) -> usize {
        self.model().slot_count(obj)
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        self.model().scan(obj, slots, &mut visit);
    }
    fn type_count(&self) -> usize {
        self.model().type_count()
    }
    fn type_id(&self, obj: ObjRef) -> usize {
        self.model().type_id(obj)
    }
    fn prefetch(&self, obj: ObjRef) {
        self.model().prefetch(obj);
    }
}

impl MarkIndex for Dyn<'_> {
    fn mark_index_bound(&self) -> usize {
        self.model().mark_index_bound()
    }
    fn mark_index(&self, obj: ObjRef) -> usize {
        self.model().mark_index(obj)
    }
}

/// A test's own mark store of any type, as the one store type the engine
/// sees beside its side bitmap (`MarkStore` has no generic method, so it
/// is a trait object as it stands).
#[derive(Clone, Copy)]
pub struct DynStore<'s>(pub &'s dyn for<'a> MarkStore<Dyn<'a>>);

impl MarkStore<Dyn<'_>> for DynStore<'_> {
    fn try_mark(&self, heap: &Dyn<'_>, obj: ObjRef) -> bool {
        self.0.try_mark(heap, obj)
    }
    fn try_mark_unshared(&self, heap: &Dyn<'_>, obj: ObjRef) -> bool {
        self.0.try_mark_unshared(heap, obj)
    }
    fn is_marked(&self, heap: &Dyn<'_>, obj: ObjRef) -> bool {
        self.0.is_marked(heap, obj)
    }
    fn prefetch(&self, heap: &Dyn<'_>, obj: ObjRef) {
        self.0.prefetch(heap, obj);
    }
    fn prefetch_distance(&self) -> usize {
        self.0.prefetch_distance()
    }
    fn dense_bound(&self, heap: &Dyn<'_>) -> Option<usize> {
        self.0.dense_bound(heap)
    }
    fn dense_index(&self, heap: &Dyn<'_>, obj: ObjRef) -> Option<usize> {
        self.0.dense_index(heap, obj)
    }
}
