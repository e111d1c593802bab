//! What each kind of step does ([`crate::StepKind`]): what comes before
//! tracing to termination (marking roots, registering waiting ephemerons,
//! asking the soft-reference policy, taking the finalizable objects), and
//! a mark cycle's budgeted `increment`. The judging is in `judge`. Every
//! worker runs the same step at once; each works on its own records.

use std::sync::atomic::Ordering;

use crossbeam_utils::Backoff;
use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, SoftRefs};

use super::mark_loop::{delay_edge, Extent, Popped};
use super::modes::{in_mode, Configured, KeyWatch, LoopMode, Unwatched, Watched};
use super::word::Word;
use super::{Watch, Worker};
use crate::delay::DelayLine;
use crate::fifo::Fifo;
use crate::stats::StepKind;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// This worker's share of the step.
    pub(super) fn step(&mut self) {
        match self.phase.step.watch {
            Watch::Off => self.step_as::<Unwatched>(),
            Watch::Frozen | Watch::Shared => self.step_as::<Watched>(),
        }
    }

    fn step_as<W: KeyWatch>(&mut self) {
        match self.phase.step.kind {
            StepKind::Roots => {
                if let Some(bitmap) = self.phase.clear {
                    bitmap.clear_part(self.index, self.phase.config.workers);
                    if !self.phase.barrier.wait(1, self.phase.config.workers) {
                        return;
                    }
                }
                self.mark_roots::<W>();
                self.trace_to_termination::<W>();
            }
            StepKind::Satb => {
                self.mark_roots::<W>();
                self.rescan_holders::<W>();
                self.trace_to_termination::<W>();
            }
            StepKind::Increment => self.increment::<W>(),
            StepKind::Preclean => self.preclean(usize::MAX),
            StepKind::Register => self.register_all(),
            StepKind::Resolve => {
                if self.phase.step.watch == Watch::Shared {
                    self.register_pending();
                } else {
                    let ready = std::mem::take(&mut self.state.contract.ready);
                    self.shade_each::<W>(&ready, |_, _| {});
                    self.state.contract.ready = ready;
                    self.state.contract.ready.clear();
                }
                self.trace_to_termination::<W>();
            }
            StepKind::Soft => {
                self.ask_soft::<W>();
                self.trace_to_termination::<W>();
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
                self.trace_to_termination::<W>();
            }
            StepKind::Judge => self.judge_rest(),
        }
    }

    /// Claims root chunks until none is left; marks each chunk's references
    /// (timed: the root phase) and traces from them before claiming the
    /// next, so that the mark stack stays small.
    fn mark_roots<W: KeyWatch>(&mut self) {
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
                let delay = self.settings.edge_delay;
                if let Some(r) = delay_edge(heap, store, &mut self.edges, delay, Word::object(root))
                {
                    self.shade::<W>(r.obj());
                }
            });
            let t1 = self.now_ns();
            let st = &mut self.state.record.stats;
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

    /// Claims chunks of the holders to scan again (a mark cycle's backward
    /// barrier, at its remark) until none is left, and scans each holder
    /// whole on the spot: marked already, it is never pushed. Its strong
    /// targets are marked and pushed; its other slots are recorded again,
    /// so that the remark judges what they hold now. It is not counted live
    /// again (its first scan was). Traces from each chunk's targets before
    /// claiming the next.
    fn rescan_holders<W: KeyWatch>(&mut self) {
        let phase = self.phase;
        let Some(claims) = &phase.rescans else {
            return;
        };
        let (heap, store) = (phase.heap, phase.store);
        while let Some(chunk) = claims.claim() {
            let mut edges = std::mem::take(&mut self.edges);
            let mut n = 0u64;
            claims.source().scan_chunk(chunk, &mut |holder| {
                n += 1;
                let slots = heap.slot_count(holder);
                self.scan::<W, Configured>(
                    heap,
                    store,
                    holder,
                    Extent::Slots(0..slots),
                    &mut edges,
                );
            });
            self.flush_edges::<W>(&mut edges);
            self.edges = edges;
            self.state.record.stats.rescans += n;
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
        let c = &mut self.state.contract;
        let mut pending = c.take_pending();
        let registered = index.register(
            &mut pending,
            |key| store.is_marked(heap, key),
            |key| store.dense_index(heap, key),
            self.phase.config.workers == 1,
            &mut c.ready,
            &mut c.scratch,
        );
        self.state.record.stats.ephemerons_registered += registered as u64;
        self.state.contract.restore_pending(pending);
    }

    /// The shared `resolve` step's start: registers this worker's pending
    /// ephemerons in the shared index (re-reading each key's mark after the
    /// next fence), tracing at once those whose key is now marked.
    fn register_pending(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let pending = self.state.contract.take_pending();
        for &(key, value) in &pending {
            if store.is_marked(heap, key) {
                self.shade::<Watched>(value);
            } else {
                self.register(key, value);
            }
        }
        self.state.contract.restore_pending(pending);
    }

    /// Offers the soft referents found since the last time, and still
    /// unmarked, to the policy; marks those it keeps.
    fn ask_soft<W: KeyWatch>(&mut self) {
        let SoftRefs::Ask(policy) = self.phase.soft else {
            return;
        };
        let (heap, store) = (self.phase.heap, self.phase.store);
        let end = self.state.record.weak_refs.len();
        for i in self.state.contract.soft_from..end {
            let r = self.state.record.weak_refs[i];
            if r.kind == SlotKind::Soft
                && !store.is_marked(heap, r.target)
                && policy.keep(r.target)
                && self.shade::<W>(r.target)
            {
                self.state.record.stats.soft_kept += 1;
            }
        }
        self.state.contract.soft_asked(end);
    }

    /// Sets aside, of the slots found and not yet looked at, up to `limit`
    /// whose referents (ephemerons: keys) are marked: they can never be
    /// cleared (marks only grow within a cycle), and the judging skips
    /// `weak_refs[..settled]`. Swaps each into place (the records' order
    /// changes; nothing else does). Nothing is marked.
    pub(super) fn preclean(&mut self, limit: usize) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let c = &mut self.state.contract;
        let refs = &mut self.state.record.weak_refs;
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
        let candidates = &mut self.state.contract.candidates;
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
    fn resurrect<W: KeyWatch>(&mut self) {
        let candidates = std::mem::take(&mut self.state.contract.candidates);
        self.shade_each::<W>(&candidates, |w, f| w.state.record.to_finalize.push(f));
        self.state.record.stats.finalized = self.state.record.to_finalize.len() as u64;
        self.state.contract.candidates = candidates;
        self.state.contract.candidates.clear();
    }

    /// This worker's share of an `increment` step of a mark cycle
    /// (incremental marking): on the caller's thread alone (as V8's), or on
    /// every worker (parallel steps), shades the entries the step was given,
    /// claimed in chunks, then scans up to its budget of objects, stealing
    /// when its own run out. What it leaves
    /// grey stays in its private stack and deque for the next step.
    fn increment<W: KeyWatch>(&mut self) {
        let phase = self.phase;
        if let Some(claims) = &phase.claims {
            let mut n = 0u64;
            while let Some(chunk) = claims.claim() {
                claims.source().scan_chunk(chunk, &mut |entry| {
                    n += 1;
                    self.shade::<W>(entry);
                });
            }
            self.state.record.stats.satb_entries += n;
        }
        let mut fifo = std::mem::replace(&mut self.fifo, Fifo::new());
        let mut edges = std::mem::take(&mut self.edges);
        let (heap, store) = (phase.heap, phase.store);
        let budget = in_mode!(W, self.settings, M => {
            self.increment_objects::<W, M>(heap, store, &mut fifo, &mut edges)
        });
        // Out of work with budget left: set aside non-strong slots for the
        // remark (a preclean, bounded by what is left of the budget).
        if budget > 0 {
            self.preclean(budget);
        }
        // Out of budget: the delayed edges are marked (their targets join
        // the private stack) and the prefetched objects go back to it,
        // except that, with `copies`, one tagged as maybe a copy (at its
        // pop or by a horizon taken now) goes back to the deque as a copy
        // (a thief may hold another).
        self.flush_edges::<W>(&mut edges);
        if self.copies() {
            self.take_horizon(&mut fifo);
        }
        while let Some(w) = fifo.pop() {
            self.return_unscanned(Word::from_raw(w));
        }
        self.account(&mut fifo);
        self.fifo = fifo;
        self.edges = edges;
        self.finish();
    }

    /// The scanning of an `increment`: up to the step's budget of objects,
    /// in the mark loop's mode `M` (`super::modes`), with `heap` and `store`
    /// as parameters for the reason [`Worker::drain_objects`] gives. Returns
    /// the budget left, which is not zero only when the work ran out.
    #[inline(never)]
    fn increment_objects<W: KeyWatch, M: LoopMode>(
        &mut self,
        heap: &H,
        store: &S,
        fifo: &mut Fifo,
        edges: &mut DelayLine,
    ) -> usize {
        let phase = self.phase;
        let mut budget = phase.budget;
        let depth = self.settings.depth;
        // On every worker: share work as a trace does, and, out of work,
        // wait for more while another worker still scans. This worker's own
        // count keeps `scanning` above zero until it leaves the loop.
        let parallel = phase.scanning.load(Ordering::Relaxed) > 0;
        let mut hungry = false;
        let backoff = Backoff::new();
        let mut until_balance = phase.config.balance_interval;
        while budget > 0 {
            if let Some(popped) = self.next_local::<M>(heap, fifo, depth) {
                if hungry {
                    hungry = false;
                    phase.term.hungry_leave();
                    phase.scanning.fetch_add(1, Ordering::Relaxed);
                }
                match popped {
                    Popped::Object(w) => self.process_object::<W, M>(heap, store, w, fifo, edges),
                    Popped::Token(t) => self.scan_chunk::<W, M>(t, edges),
                }
                budget -= 1;
                if parallel {
                    until_balance -= 1;
                    if until_balance == 0 {
                        until_balance = phase.config.balance_interval;
                        self.periodic(fifo.len());
                    }
                }
            } else if self.flush_edges::<W>(edges) {
                // The delayed edges' targets joined the private stack.
            } else if self.refill() {
                backoff.reset();
            } else if !parallel {
                break;
            } else {
                if !hungry {
                    hungry = true;
                    phase.term.hungry_enter();
                    phase.scanning.fetch_sub(1, Ordering::Relaxed);
                }
                if phase.scanning.load(Ordering::Relaxed) == 0 {
                    break;
                }
                backoff.snooze();
            }
        }
        if hungry {
            phase.term.hungry_leave();
        } else if parallel {
            phase.scanning.fetch_sub(1, Ordering::Relaxed);
        }
        budget
    }
}
