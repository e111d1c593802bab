//! [`ObjectModel`]: what the marker needs to know about a heap.
//!
//! The marker is generic over [`ObjectModel`] and monomorphised per model, so
//! every call here inlines into the mark loop: the trait costs nothing at run
//! time.

use std::ops::Range;

use crate::obj_ref::ObjRef;
use crate::prefetch::prefetch_read;
use crate::slot_kind::SlotKind;

/// A heap the marker can trace: the trait a runtime implements.
///
/// Implementations must be consistent: for an object `o`, `slot_count(o)` and
/// `scan_slots` describe the same slots on every call during a mark phase,
/// and `mark_index(o) < mark_index_bound()` for every object reachable from
/// the roots. Distinct objects have distinct mark indices.
///
/// The methods are called from every GC worker thread at once, hence `Sync`.
pub trait ObjectModel: Sync {
    /// One past the largest mark-bitmap index of any object.
    fn mark_index_bound(&self) -> usize;

    /// The object's index in the mark bitmap.
    fn mark_index(&self, obj: ObjRef) -> usize;

    /// The object's size in bytes, header included.
    fn size_bytes(&self, obj: ObjRef) -> usize;

    /// The number of reference slots the object has (null ones included).
    fn slot_count(&self, obj: ObjRef) -> usize;

    /// Calls `visit(target, kind)` for every non-null reference slot whose
    /// index lies in `slots`, in slot order. `slots` is clamped to
    /// `0..slot_count(obj)`, so a marker can scan a large array in chunks.
    fn scan_slots<V: FnMut(ObjRef, SlotKind)>(&self, obj: ObjRef, slots: Range<usize>, visit: V);

    /// Hints that `obj` will be scanned soon. The default prefetches the
    /// word as an address, which suits models whose references are addresses
    /// (a prefetch never faults, whatever the address).
    #[inline]
    fn prefetch(&self, obj: ObjRef) {
        prefetch_read(obj.addr());
    }
}
