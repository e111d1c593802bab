//! A heap of leaves for the root-phase measurements (`contract_targets`'
//! `roots` groups and `roots_ceiling`): marking it is all root work.

use stealmark_marker::{MarkIndex, ObjRef, ObjectModel, SlotKind};

/// `n` objects without slots, numbered.
pub struct Leaves(pub usize);

impl ObjectModel for Leaves {
    fn size_bytes(&self, _: ObjRef) -> usize {
        16
    }
    fn slot_count(&self, _: ObjRef) -> usize {
        0
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        _: ObjRef,
        _: std::ops::Range<usize>,
        _: V,
    ) {
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for Leaves {
    fn mark_index_bound(&self) -> usize {
        self.0
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}
