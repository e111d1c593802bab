//! [`ObjectModel`] and [`MarkIndex`]: what the marker needs to know about a
//! heap.
//!
//! The marker is generic over [`ObjectModel`] and monomorphised per model, so
//! every call here inlines into the mark loop: the traits cost nothing at run
//! time.

use std::ops::Range;

use crate::obj_ref::ObjRef;
use crate::prefetch::prefetch_read;
use crate::slot_kind::SlotKind;

/// A heap the marker can trace: the trait a runtime implements.
///
/// Implementations must be consistent: for an object `o`, `slot_count(o)` and
/// `scan_slots` describe the same slots on every call during a mark phase.
///
/// The methods are called from every GC worker thread at once, hence `Sync`.
/// A runtime whose mutators write reference slots while GC workers scan them
/// (concurrent marking) must read the slots with atomic loads in
/// `scan_slots` (`Relaxed` is enough: the engine's barrier and hand-offs
/// carry the ordering). A plain read of memory another thread writes is a
/// data race, undefined behaviour even when any value would do.
pub trait ObjectModel: Sync {
    /// Whether [`ObjectModel::scan_slots`] reports
    /// [`SlotKind::StrongLeaf`] slots. A model that does sets it, and the
    /// marker compiles its path for leaves in; with `false` (the default)
    /// the marker's loop has no test for them, and a `StrongLeaf` slot is
    /// traced as a `Strong` one (correct, without the shortcut).
    const LEAF_SLOTS: bool = false;

    /// Whether [`ObjectModel::prefetch_slots`] does anything. A model that
    /// overrides it sets this, and the marker calls it; with `false` (the
    /// default) the marker's loop has no call and no test for it.
    const PREFETCHES_SLOTS: bool = false;

    /// The object's size in bytes, header included: the engine sums it over
    /// the marked objects as the live bytes.
    fn size_bytes(&self, obj: ObjRef) -> usize;

    /// The bytes the object takes in the model's own storage, where that
    /// differs from [`ObjectModel::size_bytes`]: a heap snapshot that records
    /// each object's size in the runtime it came from lays the object out in
    /// its own format, of another size. The engine sums it over the marked
    /// objects beside the live bytes. The default is `size_bytes`, which is
    /// right for a runtime's own heap.
    #[inline]
    fn footprint_bytes(&self, obj: ObjRef) -> usize {
        self.size_bytes(obj)
    }

    /// The object's [`ObjectModel::size_bytes`] and
    /// [`ObjectModel::footprint_bytes`] at once: the engine counts both for
    /// every live object, and a model that derives them from one header
    /// word overrides this to read it once. The default calls the two.
    #[inline]
    fn live_bytes(&self, obj: ObjRef) -> (usize, usize) {
        (self.size_bytes(obj), self.footprint_bytes(obj))
    }

    /// The number of reference slots the object has (null ones included).
    fn slot_count(&self, obj: ObjRef) -> usize;

    /// Calls `visit(index, target, kind)` for every non-null reference slot
    /// whose index lies in `slots`, in slot order. `slots` is clamped to
    /// `0..slot_count(obj)`, so a marker can scan a large array in chunks.
    /// `index` is the slot's index in `0..slot_count(obj)`: the engine
    /// reports cleared weak slots as (holder, index), so a runtime can clear
    /// exactly that field.
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        visit: V,
    );

    /// Scans a whole object, as `scan_slots(obj, 0..slot_count(obj),
    /// visit)` does, if it has at most `limit` slots, and returns `None`.
    /// An object with more slots is left to be scanned in chunks: nothing
    /// is visited, and the answer is `Some(slot_count(obj))`.
    ///
    /// The marker scans every object it pops this way. The default asks
    /// [`ObjectModel::slot_count`] first. A model whose slot count costs a
    /// call of its own (a runtime behind a C ABI) overrides it to scan at
    /// once and ask the count only when the object turns out large.
    #[inline(always)]
    fn scan_object<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        limit: usize,
        visit: V,
    ) -> Option<usize> {
        let n = self.slot_count(obj);
        if n > limit {
            return Some(n);
        }
        self.scan_slots(obj, 0..n, visit);
        None
    }

    /// The number of object types, for the live-object histogram: every
    /// `type_id` is below it. The default, 0, means the model has no types
    /// and the engine keeps no histogram.
    #[inline]
    fn type_count(&self) -> usize {
        0
    }

    /// The object's type, below [`ObjectModel::type_count`]. Only called
    /// when `type_count() > 0`.
    #[inline]
    fn type_id(&self, obj: ObjRef) -> usize {
        let _ = obj;
        0
    }

    /// Hints that `obj` will be scanned soon. The default prefetches the
    /// word as an address, which suits models whose references are addresses
    /// (a prefetch never faults, whatever the address).
    #[inline]
    fn prefetch(&self, obj: ObjRef) {
        prefetch_read(obj.addr());
    }

    /// The second stage of prefetching, for a model whose scan reads memory
    /// that only the object's header locates (an array part allocated apart
    /// from it): hints that `obj` will be scanned soon, a few objects after
    /// [`ObjectModel::prefetch`] hinted at it, so that reading its header
    /// here is likely a cache hit. The marker calls it only if
    /// [`ObjectModel::PREFETCHES_SLOTS`] is set. The default does nothing.
    #[inline]
    fn prefetch_slots(&self, obj: ObjRef) {
        let _ = obj;
    }
}

/// Dense indices for the objects of a heap, so that a side bitmap
/// ([`MarkBitmap`](crate::MarkBitmap)) can hold their mark bits.
///
/// The index belongs to the mark store, not to the object model: a runtime
/// that keeps mark bits in its object headers implements
/// [`MarkStore`](crate::MarkStore) over them and never needs this trait.
///
/// Contract: `mark_index(o) < mark_index_bound()` for every object the
/// marker can reach, and distinct objects have distinct indices. A side
/// bitmap panics, naming this contract, on an index out of range.
pub trait MarkIndex {
    /// One past the largest index of any object.
    fn mark_index_bound(&self) -> usize;

    /// The object's index.
    fn mark_index(&self, obj: ObjRef) -> usize;
}
