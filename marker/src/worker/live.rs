//! Counting live objects: one object at a time ([`count_object`], the step
//! that the engine's scan, the sequential marker and the replay floor all
//! take when they count live), and the loop of `Worker::account` over a
//! batch of objects whose count waited for their deque tickets.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::Worker;
use crate::fifo::obj_ref;
use crate::stats::TypeCount;

/// Counts `obj` live: adds it and its bytes to its type in `by_type`
/// unless that is empty (an untyped heap), and returns its bytes and its
/// footprint for the caller's sums. Inline, so that a scan that has just
/// read the object's header reads it again from L1, not from memory.
#[inline(always)]
pub(crate) fn count_object<H: ObjectModel>(
    heap: &H,
    obj: ObjRef,
    by_type: &mut [TypeCount],
) -> (u64, u64) {
    let (size, footprint) = heap.live_bytes(obj);
    if !by_type.is_empty() {
        let t = &mut by_type[heap.type_id(obj)];
        t.objects += 1;
        t.bytes += size as u64;
    }
    (size as u64, footprint as u64)
}

/// Sums the live bytes and footprint of the objects `words`, and counts
/// them by type into `by_type` unless it is empty, as [`count_object`]
/// does for each. A function of its own so that its reference parameters
/// tell the compiler that the counts do not alias the heap: the heap's
/// fields are then read once per batch, not once per object.
#[inline(never)]
pub(super) fn count_live<H: ObjectModel>(
    heap: &H,
    words: &[usize],
    by_type: &mut [TypeCount],
) -> (u64, u64) {
    let (mut bytes, mut footprint) = (0, 0);
    for &w in words {
        let (size, foot) = count_object(heap, obj_ref(w), by_type);
        bytes += size;
        footprint += foot;
    }
    (bytes, footprint)
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Counts a scanned object live at once, while its header is in L1
    /// (the scan has just read it): the path of every object that has no
    /// other copy to claim (without `copies`), so that the count is not a
    /// second pass over a batch that reloads each object's header and type.
    #[inline(always)]
    pub(super) fn count_scanned(&mut self, heap: &H, obj: ObjRef) {
        let rec = &mut self.slot.record;
        let (size, footprint) = count_object(heap, obj, &mut rec.live_by_type);
        rec.stats.objects_scanned += 1;
        rec.stats.live_bytes += size;
        rec.stats.live_footprint_bytes += footprint;
    }
}
