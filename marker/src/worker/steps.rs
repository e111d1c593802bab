//! What each kind of step does before it traces ([`crate::StepKind`]; the
//! judging is in `judge`). Every worker runs the
//! same step at once; each works on its own records.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, SoftRefs};

use super::mark_loop::delay_edge;
use super::{Watch, Worker, FROZEN, OFF, SHARED};
use crate::stats::StepKind;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// This worker's share of the step.
    pub(super) fn step(&mut self) {
        match self.phase.step.watch {
            Watch::Off => self.step_as::<OFF>(),
            Watch::Frozen => self.step_as::<FROZEN>(),
            Watch::Shared => self.step_as::<SHARED>(),
        }
    }

    fn step_as<const W: u8>(&mut self) {
        match self.phase.step.kind {
            StepKind::Roots => {
                if let Some(bitmap) = self.phase.clear {
                    bitmap.clear_part(self.index, self.phase.config.workers);
                    if !self.phase.barrier.wait(1, self.phase.config.workers) {
                        return;
                    }
                }
                self.mark_roots::<W>();
                self.close::<W>();
            }
            StepKind::Satb => {
                self.mark_roots::<W>();
                self.close::<W>();
            }
            StepKind::Increment => self.increment::<W>(),
            StepKind::Preclean => self.preclean(usize::MAX),
            StepKind::Register => self.register_all(),
            StepKind::Resolve => {
                if W == SHARED {
                    self.register_pending();
                } else {
                    let ready = std::mem::take(&mut self.slot.contract.ready);
                    self.trace_each::<W>(&ready, |_, _| {});
                    self.slot.contract.ready = ready;
                    self.slot.contract.ready.clear();
                }
                self.close::<W>();
            }
            StepKind::Soft => {
                self.ask_soft::<W>();
                self.close::<W>();
            }
            StepKind::Finalize => {
                self.judge_weak();
                self.take_finalizable();
                let n = self.phase.config.workers;
                if !self.phase.barrier.wait(1, n) {
                    return;
                }
                self.resurrect::<W>();
                if !self.phase.barrier.wait(2, n) {
                    return;
                }
                self.close::<W>();
            }
            StepKind::Judge => self.judge_rest(),
        }
    }

    /// Claims root chunks until none is left; marks each chunk's references
    /// (timed: the root phase) and traces from them before claiming the
    /// next, so that the mark stack stays small.
    fn mark_roots<const W: u8>(&mut self) {
        let phase = self.phase;
        let Some(claims) = &phase.claims else {
            return;
        };
        while let Some(chunk) = claims.claim() {
            let t0 = self.now_ns();
            let mut n = 0u64;
            claims.source().scan_chunk(chunk, &mut |root| {
                n += 1;
                let (heap, store) = (phase.heap, phase.store);
                if let Some(r) = delay_edge(heap, store, &mut self.edges, self.edge_depth, root) {
                    self.trace::<W>(r);
                }
            });
            let t1 = self.now_ns();
            let st = &mut self.slot.record.stats;
            if phase.step.kind == StepKind::Roots {
                st.roots += n;
                st.root_chunks += 1;
                st.root_ns += t1.saturating_sub(t0);
            } else {
                st.satb_entries += n;
            }
            self.drain::<W>();
        }
    }

    /// The `register` step: this worker's pending ephemerons whose keys are
    /// marked by now become ready (traced by the `resolve` step that
    /// follows); the others are registered in the key index, in one batch.
    /// Nothing is marked, so nothing races with the inserts.
    fn register_all(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let index = self.phase.index.expect("a register step has the index");
        let c = &mut self.slot.contract;
        let mut pending = c.take_pending();
        let registered = index.register(
            &mut pending,
            |key| store.is_marked(heap, key),
            |key| store.dense_index(heap, key),
            self.phase.config.workers == 1,
            &mut c.ready,
            &mut c.scratch,
        );
        self.slot.record.stats.ephemerons_registered += registered as u64;
        self.slot.contract.restore_pending(pending);
    }

    /// The shared `resolve` step's start: registers this worker's pending
    /// ephemerons in the shared index (re-reading each key's mark after the
    /// next fence), tracing at once those whose key is now marked.
    fn register_pending(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let pending = self.slot.contract.take_pending();
        for &(key, value) in &pending {
            if store.is_marked(heap, key) {
                self.trace::<SHARED>(value);
            } else {
                self.register(key, value);
            }
        }
        self.slot.contract.restore_pending(pending);
    }

    /// Offers the soft referents found since the last time, and still
    /// unmarked, to the policy; marks those it keeps.
    fn ask_soft<const W: u8>(&mut self) {
        let SoftRefs::Ask(policy) = self.phase.soft else {
            return;
        };
        let (heap, store) = (self.phase.heap, self.phase.store);
        let end = self.slot.record.weak_refs.len();
        for i in self.slot.contract.soft_from..end {
            let r = self.slot.record.weak_refs[i];
            if r.kind == SlotKind::Soft
                && !store.is_marked(heap, r.target)
                && policy.keep(r.target)
                && self.trace::<W>(r.target)
            {
                self.slot.record.stats.soft_kept += 1;
            }
        }
        self.slot.contract.soft_asked(end);
    }

    /// Sets aside, of the slots found and not yet looked at, up to `limit`
    /// whose referents (ephemerons: keys) are marked: they can never be
    /// cleared (marks only grow within a cycle), and the judging skips
    /// `weak_refs[..settled]`. Swaps each into place (the records' order
    /// changes; nothing else does). Nothing is marked.
    pub(super) fn preclean(&mut self, limit: usize) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let c = &mut self.slot.contract;
        let refs = &mut self.slot.record.weak_refs;
        let end = refs.len().min(c.looked.saturating_add(limit));
        for i in c.looked..end {
            let r = refs[i];
            let (marked, entry) = match r.kind {
                SlotKind::Ephemeron { key } => (store.is_marked(heap, key), true),
                _ => (store.is_marked(heap, r.target), false),
            };
            if marked {
                refs.swap(c.settled, i);
                c.settled += 1;
                c.settled_entries += u64::from(entry);
            }
        }
        if end > c.looked {
            // The records' order changed: judging walks all of them.
            c.judged.complete = false;
        }
        c.looked = end;
        // Every soft slot left to ask about is past `settled`: the policy
        // is asked only at the remark, after the last preclean.
        c.soft_from = c.settled;
    }

    /// Takes this worker's share of the finalizable objects' chunks (every
    /// `n`th, from its index on) and keeps those not marked. A fixed share
    /// rather than claims: the candidates are resurrected by the worker
    /// that took them, and a worker that ended its J1 early would claim
    /// every chunk (in well under a millisecond) before the other woke,
    /// then resurrect and trace alone. Nothing is marked before every
    /// worker is done (the barrier after), so the set is taken before
    /// anything is resurrected.
    fn take_finalizable(&mut self) {
        let phase = self.phase;
        let Some(claims) = &phase.claims else {
            return;
        };
        let candidates = &mut self.slot.contract.candidates;
        for chunk in claims.share(self.index, phase.config.workers) {
            claims.source().scan_chunk(chunk, &mut |f: ObjRef| {
                if !phase.store.is_marked(phase.heap, f) {
                    candidates.push(f);
                }
            });
        }
    }

    /// Marks this worker's candidates; each one this worker marks first is
    /// its to report (an object registered twice is reported once). Nothing
    /// is traced before every worker is done (the barrier after), so a
    /// candidate reachable from another is still reported.
    fn resurrect<const W: u8>(&mut self) {
        let candidates = std::mem::take(&mut self.slot.contract.candidates);
        self.trace_each::<W>(&candidates, |w, f| w.slot.record.to_finalize.push(f));
        self.slot.record.stats.finalized = self.slot.record.to_finalize.len() as u64;
        self.slot.contract.candidates = candidates;
        self.slot.contract.candidates.clear();
    }
}
