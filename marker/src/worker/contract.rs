//! The runtime contract on the worker's side: what happens to a
//! non-strong slot when a worker finds it (out of line: they are rare), and
//! the checks of newly marked objects against the ephemeron key index while
//! a step watches it (frozen, or shared with the fenced protocol of
//! `crate::ephemeron`).

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, SoftRefs, WeakRef};

use super::judge::JudgeLists;
use super::modes::{KeyWatch, Unwatched};
use super::stack::MARKS_AHEAD;
use super::{Watch, Worker};
use crate::ephemeron;

/// Objects to check collected before a worker fences and checks them
/// (one fence per batch rather than per object).
const CHECK_BATCH: usize = 256;
/// Values released from the frozen index that one [`Worker::settle`] marks
/// and checks at once ([`Worker::release_frozen`]).
const RELEASE_AHEAD: usize = 256;
/// How many records ahead of the one being handled `found_weak` prefetches
/// the marks it will test, within one object's records. The marks are
/// scattered over the bitmap and, unlike the strong slots' (through the
/// edge delay line), were not prefetched when the slots were scanned:
/// without the hints a table's records each wait for a mark word in turn.
const DECIDERS_AHEAD: usize = 16;
/// `found_weak` prefetches the marks only when the mark store has more
/// mark bits than this (1 MiB of bitmap, half an L2), or marks in headers:
/// a smaller bitmap stays cached, and on the 1M chain (0.5 MiB) the hints
/// cost about 7%, where the 8M `weak` heap (4 MiB) gains 0.7%.
const DECIDER_HINT_MIN_BITS: usize = 1 << 23;

/// One worker's share of the contract's state during a collection. Its
/// buffers keep their capacity from one collection to the next.
#[derive(Default)]
pub(crate) struct Contract {
    /// Ephemeron entries `(key, value)` found with the key unmarked while
    /// no step registered at once: registered by the next `register` step.
    pending: Vec<(ObjRef, ObjRef)>,
    /// Values of pending entries whose key was marked by then, found by the
    /// `register` step: traced by the `resolve` step after it.
    pub(super) ready: Vec<ObjRef>,
    /// `weak_refs[..soft_from]` have been offered to the soft-reference
    /// policy (or needed not be).
    pub(super) soft_from: usize,
    /// Soft slots found since `soft_from` (only counted when the policy is
    /// asked per referent).
    soft_unasked: usize,
    /// `weak_refs[..j1_end]` were judged at J1.
    pub(super) j1_end: usize,
    /// `weak_refs[..settled]` have marked referents (ephemerons: keys),
    /// set aside by a cycle's `preclean` steps: judging skips them.
    pub(super) settled: usize,
    /// Ephemeron slots among `weak_refs[..settled]` (live entries).
    pub(super) settled_entries: u64,
    /// `weak_refs[settled..looked]` were looked at by a preclean and had
    /// unmarked referents then.
    pub(super) looked: usize,
    /// Finalizable objects found unmarked, before resurrection.
    pub(super) candidates: Vec<ObjRef>,
    /// Objects this worker marked while watching, not yet checked against
    /// the key index; and the batch being checked.
    check: Vec<ObjRef>,
    checking: Vec<ObjRef>,
    /// Keys this worker registered, whose marks it has not yet re-read;
    /// and the batch being re-read.
    recheck: Vec<ObjRef>,
    rechecking: Vec<ObjRef>,
    /// Values taken from the key index, to trace.
    released: Vec<ObjRef>,
    /// Pending entries grouped by shard while registering.
    pub(super) scratch: Vec<(ObjRef, ObjRef)>,
    /// The records judging must look at, as indices into `weak_refs`, while
    /// [`JudgeLists::complete`] holds.
    pub(super) judged: JudgeLists,
}

/// Whether `key_slot` is the key slot of the ephemeron entry `value_slot`
/// (the record just after it): a weak slot of the same holder whose
/// referent is the entry's key. Its liveness is then the entry's.
#[inline]
pub(super) fn is_key_slot(key_slot: &WeakRef, value_slot: &WeakRef) -> bool {
    match value_slot.kind {
        SlotKind::Ephemeron { key } => {
            key_slot.kind == SlotKind::Weak
                && key_slot.target == key
                && key_slot.holder == value_slot.holder
        }
        _ => false,
    }
}

impl Contract {
    /// Empties the state for a new collection, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.ready.clear();
        self.soft_from = 0;
        self.soft_unasked = 0;
        self.j1_end = 0;
        self.settled = 0;
        self.settled_entries = 0;
        self.looked = 0;
        self.candidates.clear();
        self.check.clear();
        self.recheck.clear();
        self.released.clear();
        self.judged.clear();
    }

    /// Entries waiting to be registered.
    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Soft slots found since the policy was last asked.
    pub(crate) fn soft_unasked(&self) -> usize {
        self.soft_unasked
    }

    /// Adds a newly marked object to check.
    #[inline(always)]
    pub(super) fn check(&mut self, obj: ObjRef) {
        self.check.push(obj);
    }

    /// Whether objects or keys wait for a check.
    #[inline]
    pub(super) fn has_checks(&self) -> bool {
        !self.check.is_empty() || !self.recheck.is_empty()
    }

    /// Whether the batch is full.
    #[inline(always)]
    pub(super) fn checks_full(&self) -> bool {
        self.check.len() >= CHECK_BATCH
    }

    /// Takes the waiting entries out, leaving the (empty) buffer's capacity
    /// to be handed back with [`Contract::restore_pending`].
    pub(super) fn take_pending(&mut self) -> Vec<(ObjRef, ObjRef)> {
        std::mem::take(&mut self.pending)
    }

    /// Hands the pending buffer back, emptied (nothing was added meanwhile:
    /// registering steps add no pending entries).
    pub(super) fn restore_pending(&mut self, mut buffer: Vec<(ObjRef, ObjRef)>) {
        debug_assert!(self.pending.is_empty());
        buffer.clear();
        self.pending = buffer;
    }

    /// The soft slots found so far have been offered to the policy.
    pub(super) fn soft_asked(&mut self, upto: usize) {
        self.soft_from = upto;
        self.soft_unasked = 0;
    }
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Handles the non-strong slots recorded from `weak_refs[from]` on (just
    /// found in one object): an ephemeron's value is traced if its key is
    /// marked, else it waits (registered in the key index at once while the
    /// index is shared, pending otherwise); a soft referent is traced if
    /// every soft referent is kept, or counted for the policy if it is
    /// asked. Notes the records judging must look at ([`JudgeLists`]). A
    /// WeakMap entry (a weak key slot, then its value slot: [`is_key_slot`])
    /// is handled as one: one test of the key's mark for both records.
    #[cold]
    #[inline(never)]
    pub(super) fn found_weak<W: KeyWatch>(&mut self, from: usize) {
        #[cfg(feature = "inject-delays")]
        self.inject_delay();
        let end = self.state.record.weak_refs.len();
        // With one record there is nothing to overlap its miss with; with a
        // cached bitmap there is no miss.
        let hint = end - from > 1 && self.phase.config.prefetch > 0 && self.marks_outgrow_cache();
        let mut ahead = from;
        let mut i = from;
        while i < end {
            let to = (i + DECIDERS_AHEAD).min(end);
            if hint && ahead < to {
                self.prefetch_deciders(ahead..to);
                ahead = to;
            }
            let r = self.state.record.weak_refs[i];
            match r.kind {
                SlotKind::Ephemeron { key } => self.found_entry::<W>(i, key, r.target, false),
                SlotKind::Weak => {
                    let next = self.state.record.weak_refs[i + 1..end].first();
                    match next.map(|v| (v, is_key_slot(&r, v))) {
                        Some((&v, true)) => {
                            i += 1;
                            self.found_entry::<W>(i, r.target, v.target, true);
                        }
                        _ => self.note_unsettled(i, &r),
                    }
                }
                SlotKind::Soft => {
                    if !self.phase.step.soft_strong {
                        if matches!(self.phase.soft, SoftRefs::Ask(_)) {
                            self.state.contract.soft_unasked += 1;
                        }
                    } else if self.shade::<W>(r.target) {
                        self.state.record.stats.soft_kept += 1;
                    }
                    self.note_unsettled(i, &r);
                }
                SlotKind::Phantom => self.note_unsettled(i, &r),
                SlotKind::Strong | SlotKind::StrongLeaf => {}
            }
            i += 1;
        }
    }

    /// Whether the marks outgrow the cache ([`DECIDER_HINT_MIN_BITS`]).
    #[inline]
    fn marks_outgrow_cache(&self) -> bool {
        let (heap, store) = (self.phase.heap, self.phase.store);
        store
            .dense_bound(heap)
            .is_none_or(|bits| bits > DECIDER_HINT_MIN_BITS)
    }

    /// Prefetches the marks that handling the records `range` tests or
    /// sets: an ephemeron's key, and its value (marked at once if the key
    /// is); a soft referent traced as strong. Other records' marks are not
    /// read here ([`Worker::note_unsettled`]).
    #[inline]
    fn prefetch_deciders(&self, range: std::ops::Range<usize>) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let soft_strong = self.phase.step.soft_strong;
        for r in &self.state.record.weak_refs[range] {
            match r.kind {
                SlotKind::Ephemeron { key } => {
                    store.prefetch(heap, key);
                    store.prefetch(heap, r.target);
                }
                SlotKind::Soft if soft_strong => store.prefetch(heap, r.target),
                _ => {}
            }
        }
    }

    /// Handles the ephemeron record `i`, whose `value` waits for `key`;
    /// `paired`: the record before it is its key slot ([`is_key_slot`]),
    /// which lives or dies with it.
    #[inline(always)]
    fn found_entry<W: KeyWatch>(&mut self, i: usize, key: ObjRef, value: ObjRef, paired: bool) {
        self.state.record.stats.ephemerons += 1;
        if self.phase.store.is_marked(self.phase.heap, key) {
            // The key slot's referent is marked too: neither is noted.
            self.shade::<W>(value);
            return;
        }
        if W::ON && self.phase.step.watch == Watch::Shared {
            self.register(key, value);
        } else {
            self.state.contract.pending.push((key, value));
        }
        let lists = &mut self.state.contract.judged;
        let list = if paired {
            &mut lists.pairs
        } else {
            &mut lists.entries
        };
        JudgeLists::note(&mut lists.complete, list, i, key);
    }

    /// Notes the soft, weak or phantom record `r` (`weak_refs[i]`) for
    /// judging, without testing its referent's mark: judging tests it, with
    /// the marks prefetched a few listed records ahead, where a test here
    /// would wait for the mark word (a reference object has one such slot,
    /// so there is no other record to overlap the miss with).
    #[inline]
    fn note_unsettled(&mut self, i: usize, r: &WeakRef) {
        let lists = &mut self.state.contract.judged;
        let list = if r.kind == SlotKind::Phantom {
            &mut lists.phantom
        } else {
            &mut lists.weak
        };
        JudgeLists::note(&mut lists.complete, list, i, r.target);
    }

    /// Registers `value` as waiting for the unmarked `key` in the shared
    /// index; the key's mark is re-read after the next fence
    /// ([`Worker::settle`]).
    pub(super) fn register(&mut self, key: ObjRef, value: ObjRef) {
        self.phase
            .index
            .expect("a shared step has the index")
            .insert(key, value);
        self.state.contract.recheck.push(key);
        self.state.record.stats.ephemerons_registered += 1;
    }

    /// Checks the objects this worker marked (and, with the shared index,
    /// re-reads the keys it registered) against the key index, and traces
    /// the values released (queueing them for checks in turn). The caller
    /// loops until nothing is left to check.
    #[cold]
    pub(super) fn settle<W: KeyWatch>(&mut self) {
        #[cfg(feature = "inject-delays")]
        self.inject_delay();
        let c = &mut self.state.contract;
        std::mem::swap(&mut c.check, &mut c.checking);
        let watch = self.phase.step.watch;
        if watch == Watch::Shared {
            self.settle_shared();
        } else if let Some(frozen) = self.phase.frozen {
            let (heap, store) = (self.phase.heap, self.phase.store);
            let c = &mut self.state.contract;
            for &obj in &c.checking {
                if frozen.may_hold(obj) {
                    frozen.lookup(obj, store.dense_index(heap, obj), &mut c.released);
                }
            }
        }
        self.state.contract.checking.clear();
        if watch == Watch::Frozen {
            self.release_frozen();
        }
        while let Some(value) = self.state.contract.released.pop() {
            self.hint_released();
            self.state.record.stats.ephemerons_released += 1;
            self.shade::<W>(value);
        }
    }

    /// Traces the values released from the frozen index, and checks each
    /// one this worker marks against the index at once rather than queueing
    /// it ([`Contract::check`]) for the next [`Worker::settle`]: a chain of
    /// entries (each value the next entry's key) is followed link by link
    /// in this loop, and its values are scanned afterwards from the mark
    /// stack. At most [`RELEASE_AHEAD`] values are checked this way per
    /// call, so that the mark stack stays short and the worker returns to
    /// its loop (and shares work) regularly; the caller traces the rest the
    /// ordinary way. Only the worker that marked a key looks it up, as the
    /// frozen view requires.
    fn release_frozen(&mut self) {
        let Some(frozen) = self.phase.frozen else {
            return;
        };
        let (heap, store) = (self.phase.heap, self.phase.store);
        for _ in 0..RELEASE_AHEAD {
            let Some(value) = self.state.contract.released.pop() else {
                return;
            };
            self.hint_released();
            self.state.record.stats.ephemerons_released += 1;
            // `Unwatched`: marked and pushed, not queued for a check: it
            // is checked here.
            if !self.shade::<Unwatched>(value) {
                continue;
            }
            // Scanned after this loop: its header's miss overlaps the walk.
            heap.prefetch(value);
            if frozen.may_hold(value) {
                frozen.lookup(
                    value,
                    store.dense_index(heap, value),
                    &mut self.state.contract.released,
                );
            }
        }
    }

    /// Hints the mark of the released value that will be traced
    /// [`MARKS_AHEAD`] values after the one just popped (the values
    /// released by a batch of checks are scattered over the heap; a chain's
    /// come one at a time, and then there is nothing to hint).
    #[inline]
    fn hint_released(&self) {
        let released = &self.state.contract.released;
        if self.phase.config.prefetch > 0 && released.len() >= MARKS_AHEAD {
            let ahead = released[released.len() - MARKS_AHEAD];
            self.phase.store.prefetch(self.phase.heap, ahead);
        }
    }

    /// The marking side of the shared protocol, for a batch: one fence after
    /// this worker's marks and inserts, then every object it marked is
    /// checked against the index and every key it registered is re-read.
    fn settle_shared(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let index = self.phase.index.expect("a shared step has the index");
        // SeqCst fence: pairs with the other side's fence (a registrant's
        // after its insert, a marker's after its mark): see
        // `crate::ephemeron`.
        ephemeron::fence();
        let c = &mut self.state.contract;
        std::mem::swap(&mut c.recheck, &mut c.rechecking);
        for &obj in &c.checking {
            if index.may_hold(obj) {
                index.take(obj, store.dense_index(heap, obj), &mut c.released);
            }
        }
        for &key in &c.rechecking {
            if store.is_marked(heap, key) {
                index.take(key, store.dense_index(heap, key), &mut c.released);
            }
        }
        c.rechecking.clear();
    }
}
