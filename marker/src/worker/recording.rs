//! What a worker records about its phase: activity spans, timeline samples
//! of its load, and the deque's and thief's counters, copied at the end.
//! The clock is read at state changes and samples, never per object.

use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::Worker;
use crate::stats::{Span, SpanKind, TimelineSample, WorkerRecord};

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Nanoseconds since the start of the phase.
    #[inline]
    pub(super) fn now_ns(&self) -> u64 {
        self.phase.start.elapsed().as_nanos() as u64
    }

    /// Ends the current span at now and starts one of `kind`.
    pub(super) fn switch(&mut self, kind: SpanKind) {
        let now = self.now_ns();
        self.close_span(now);
        if kind == SpanKind::Idle {
            let st = &mut self.state.record.stats;
            st.termination_attempts += 1;
            self.sample(now, 0);
        }
        self.span_kind = kind;
        self.span_start = now;
    }

    /// Ends the current span at `now`: adds its length to the counter of its
    /// kind, and keeps it when spans are on (counting it dropped when full).
    fn close_span(&mut self, now: u64) {
        let d = now.saturating_sub(self.span_start);
        let rec = &mut self.state.record;
        match self.span_kind {
            SpanKind::Marking => {
                rec.stats.busy_ns += d;
                rec.stats.last_work_ns = now;
            }
            SpanKind::Stealing => rec.stats.steal_ns += d,
            SpanKind::Idle => rec.stats.idle_ns += d,
            SpanKind::Termination => {
                rec.stats.idle_ns += d;
                rec.stats.termination_ns = d;
            }
        }
        if self.phase.config.spans {
            if rec.spans.len() < WorkerRecord::MAX_SPANS {
                rec.spans.push(Span {
                    kind: self.span_kind,
                    start_ns: self.span_start,
                    end_ns: now,
                });
            } else {
                rec.spans_dropped += 1;
            }
        }
    }

    /// Ends the phase's record: closes the last span, as the termination
    /// span, and copies the deque's and thief's counters.
    pub(super) fn finish(&mut self) {
        // The last idle span is the termination span.
        self.span_kind = SpanKind::Termination;
        let now = self.now_ns();
        self.close_span(now);
        let o = *self.state.owner.stats();
        let t = self.state.thief_stats;
        let st = &mut self.state.record.stats;
        st.pushes = o.pushes;
        st.pops = o.pops;
        st.cas = o.cas_attempted + t.cas_attempted;
        st.steal_attempts = t.steal_attempts;
        st.steal_successes = t.steal_successes;
        st.steal_aborts = t.steal_aborts;
        st.items_stolen = t.items_stolen;
    }

    /// Records a timeline sample, decimating when the buffer is full.
    pub(super) fn sample(&mut self, now: u64, len: usize) {
        if self.sample_interval == 0 {
            return;
        }
        let tl = &mut self.state.record.timeline;
        if tl.len() == WorkerRecord::MAX_SAMPLES {
            let mut keep = 0;
            tl.retain(|_| {
                keep += 1;
                keep % 2 == 0
            });
            self.sample_interval = self.sample_interval.saturating_mul(2);
        }
        tl.push(TimelineSample {
            t_ns: now,
            len: len.min(u32::MAX as usize) as u32,
        });
    }
}
