//! Leaves: the targets of [`SlotKind::StrongLeaf`] slots, objects without
//! slots. They travel the edge delay line tagged
//! [`Word::LEAF`](super::word::Word) and are done once marked: the worker that set the mark counts them as
//! marked and scanned and queues them to be counted live, and never pushes
//! them.
//!
//! [`SlotKind::StrongLeaf`]: stealmark_model::SlotKind::StrongLeaf

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::live::count_batch;
use super::modes::KeyWatch;
use super::stack::mark;
use super::word::Word;
use super::Worker;
use crate::fifo::{Batch, ACCOUNT_BATCH};
use crate::stats::WorkerRecord;

/// What follows the mark of a leaf, `target`, by this worker: in debug
/// builds, the check of the hint (the target has no slots); with
/// `counting`, its place in the queue `leaves` of leaves to count live,
/// counted into `record` when full. A leaf is counted by the worker that
/// marked it, so exactly once: it never has another copy.
#[inline(always)]
pub(super) fn marked_leaf<H: ObjectModel>(
    heap: &H,
    record: &mut WorkerRecord,
    typed: bool,
    counting: bool,
    leaves: &mut Batch,
    target: ObjRef,
) {
    debug_assert_eq!(
        heap.slot_count(target),
        0,
        "a StrongLeaf slot's target {target:?} has reference slots"
    );
    if counting {
        leaves.push(Word::object(target).raw());
        if leaves.len() == ACCOUNT_BATCH {
            count_batch(heap, record, typed, leaves);
        }
    }
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Marks the leaf `obj`, from the edge delay line outside the slot loop;
    /// if this worker set the bit, counts it as marked and scanned
    /// ([`marked_leaf`]) and (while `W` watches the key index) queues it
    /// for the key-index check.
    pub(super) fn shade_leaf<W: KeyWatch>(&mut self, obj: ObjRef) {
        let phase = self.phase;
        if !mark(phase.heap, phase.store, phase.unshared, obj) {
            return;
        }
        let rec = &mut self.state.record;
        rec.stats.objects_marked += 1;
        rec.stats.objects_scanned += 1;
        let counting = self.settings.count_live;
        marked_leaf(phase.heap, rec, self.typed, counting, &mut self.leaves, obj);
        if W::ON {
            self.state.contract.check(obj);
        }
    }
}
