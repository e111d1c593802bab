//! An `increment` step of a mark cycle (incremental marking, as V8's):
//! worker 0 alone, on the caller's thread, shades the entries the step was
//! given, then scans up to a budget of objects. What it leaves grey stays
//! in its private stack and deque for the next step.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjectModel};

use super::mark_loop::Popped;
use super::mode::DYNAMIC;
use super::Worker;
use crate::fifo::Fifo;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// This worker's (the only one's) share of an `increment` step.
    pub(super) fn increment<const W: u8>(&mut self) {
        let phase = self.phase;
        if let Some(claims) = &phase.claims {
            let mut n = 0u64;
            while let Some(chunk) = claims.claim() {
                claims.source().scan_chunk(chunk, &mut |entry| {
                    n += 1;
                    self.trace::<W>(entry);
                });
            }
            self.slot.record.stats.satb_entries += n;
        }
        let mut budget = phase.budget;
        let mut fifo = std::mem::replace(&mut self.fifo, Fifo::new());
        let mut edges = std::mem::replace(&mut self.edges, Fifo::new());
        while budget > 0 {
            if let Some(popped) = self.next_local::<DYNAMIC>(phase.heap, &mut fifo, self.depth) {
                match popped {
                    Popped::Object(w) => self.process_object::<W, DYNAMIC>(
                        phase.heap,
                        phase.store,
                        w,
                        &mut fifo,
                        &mut edges,
                    ),
                    Popped::Token(t) => self.scan_chunk::<W, DYNAMIC>(t, &mut edges),
                }
                budget -= 1;
            } else if edges.len() != 0 {
                self.flush_edges::<W>(&mut edges);
            } else if !self.refill() {
                break;
            }
        }
        // Out of work with budget left: set aside non-strong slots for the
        // remark (a preclean, bounded by what is left of the budget).
        if budget > 0 {
            self.preclean(budget);
        }
        // Out of budget: the delayed edges are marked (their targets join
        // the private stack) and the prefetched objects go back to it,
        // except that, with `copies`, one tagged as shared (at its pop or
        // by a horizon taken now) goes back to the deque as a copy (a thief
        // may hold another).
        self.flush_edges::<W>(&mut edges);
        if self.copies() {
            self.take_horizon(&mut fifo);
        }
        while let Some(w) = fifo.pop() {
            self.return_unscanned(w);
        }
        self.account(&mut fifo);
        self.fifo = fifo;
        self.edges = edges;
        self.finish();
    }
}
