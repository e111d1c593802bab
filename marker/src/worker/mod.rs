//! One worker's share of a step, generic over the deque kind `D`, the heap
//! `H` and the mark store `S` (monomorphised: every call inlines).
//!
//! This module holds the worker ([`Worker`]) and its tracing loop
//! ([`Worker::trace_to_termination`]: drain, steal, idle); the methods are
//! split by what they do, each module an `impl` block of the same
//! [`Worker`]:
//!
//! - `phase`: what a worker keeps between steps (`WorkerState`), the
//!   deques and shared storage of one deque kind (`Engine`), and what the
//!   workers share during one step (`Phase`);
//! - `modes`: the tracing methods' modes as types: whether the step
//!   watches the ephemeron key index (`W`), and the mark loop's settings
//!   taken as constants (`M`);
//! - `word`: the mark stack's word (an object or a large array's token,
//!   and its tags), a leaf module that the others share;
//! - `stack`: the primitives that mark, push and pop;
//! - `mark_loop`: draining: popping, scanning and pushing grey objects
//!   through the prefetch FIFOs, and large arrays in chunks (the hot path);
//! - `counting`: counting live objects when scanned, exactly once even with
//!   a deque that delivers an object twice (tickets and claims);
//! - `live`: counting the live objects of a batch (bytes, footprint, types),
//!   the loop that the reference markers (`crate::sequential`) share;
//! - `stealing`: sharing work while busy (the periodic check, the balancing
//!   policies, victim selection and stealing), and refilling and idling as
//!   a client of the termination protocol;
//! - `steps`: what each kind of step does around its tracing (mark roots,
//!   register waiting ephemerons, ask the soft-reference policy, take the
//!   finalizable objects; a cycle's budgeted increment);
//! - `contract`: what happens to a non-strong slot when it is found, and
//!   the checks of newly marked objects against the ephemeron key index;
//! - `judge`: J1 and J2, the judging of non-strong slots;
//! - `recording`: spans, timeline samples and the step's counters.

mod contract;
mod counting;
mod judge;
mod leaves;
mod live;
mod mark_loop;
mod modes;
mod phase;
mod recording;
mod stack;
mod stealing;
mod steps;
mod word;

#[cfg(feature = "inject-delays")]
use rand::Rng;
#[cfg(feature = "inject-delays")]
use stealmark_deques::copies::Ticket;
use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjectModel};

use crate::delay::DelayLine;
use crate::fifo::{Batch, Fifo};
use crate::stats::SpanKind;
use modes::{KeyWatch, Settings};
#[cfg(feature = "inject-delays")]
use word::Word;

// The reference markers (`bench` feature) count with the engine's loop.
#[cfg(feature = "bench")]
pub(crate) use live::count_live;
pub(crate) use phase::{Engine, Phase, Step, Watch, WorkerState};

/// One worker's state during a step.
struct Worker<'p, 'a, D: WorkDeque, H, S> {
    phase: &'p Phase<'a, D, H, S>,
    index: usize,
    /// What this worker keeps between steps.
    state: &'p mut WorkerState<D>,
    /// The mark loop's settings for this step.
    settings: Settings,
    /// Popped objects waiting to be scanned, whose headers have been
    /// prefetched (empty when prefetching is off).
    fifo: Fifo,
    /// Strong targets waiting for their mark-bit test, whose mark words have
    /// been prefetched (empty when prefetching is off).
    edges: DelayLine,
    /// Whether a scanned object may have been scanned by another worker too
    /// (see [`Worker::counts_copies`]): then an object whose deque ticket
    /// may share carries a tag to the count (`Word::MAY_COPY`, in its word
    /// in the prefetch FIFO and in `scanned`), which claims the tagged
    /// objects. Read only where `D` may deliver twice.
    copies: bool,
    /// Whether the heap has types (the live-object histogram is kept).
    typed: bool,
    /// Objects scanned and not yet counted live ([`Worker::account`]),
    /// tagged with `copies` as they left the prefetch FIFO.
    scanned: Batch,
    /// Leaves marked and not yet counted live (`leaves`).
    leaves: Batch,
    /// Objects left until the next policy evaluation and wake-up check.
    until_balance: u32,
    /// Arrays with more slots than this are scanned in chunks.
    big_array: usize,
    /// Objects left until the next timeline sample (counted down in steps of
    /// `balance_interval`, at each periodic check).
    until_sample: u32,
    sample_interval: u32,
    /// The load at the last balance (threshold policy).
    last_balance_len: usize,
    span_kind: SpanKind,
    span_start: u64,
}

impl<'p, 'a, D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'p, 'a, D, H, S> {
    /// Starts worker `index`'s share of a step. The state's records carry
    /// over from the collection's earlier steps, and so does its private
    /// stack: empty after any step that ran to termination, it holds the
    /// grey objects an `increment` left (a panicked collection's are
    /// dropped by the next one, `Engine::begin_collection`).
    fn new(phase: &'p Phase<'a, D, H, S>, index: usize, state: &'p mut WorkerState<D>) -> Self {
        let c = phase.config;
        let typed = !state.record.live_by_type.is_empty();
        let mut w = Worker {
            phase,
            index,
            state,
            settings: Settings {
                depth: c.prefetch,
                edge_delay: c.prefetch > 0,
                private: c.private_work,
                count_live: c.count_live,
                unshared: phase.unshared,
            },
            fifo: Fifo::new(),
            edges: DelayLine::new(phase.store.prefetch_distance()),
            copies: c.count_live && Self::counts_copies(c.workers),
            typed,
            scanned: Batch::new(),
            leaves: Batch::new(),
            until_balance: c.balance_interval,
            big_array: 2 * c.array_chunk,
            until_sample: c.timeline_interval,
            sample_interval: c.timeline_interval,
            last_balance_len: 0,
            span_kind: SpanKind::Marking,
            span_start: 0,
        };
        w.span_start = w.now_ns();
        w
    }

    /// Whether `workers` workers on deques of kind `D` may scan a live
    /// object more than once, so that counting it when scanned (its header
    /// is cached then) needs its deque ticket and horizons: the count
    /// claims an object that they say may have another copy
    /// (`stealmark_deques::copies`), and counts the others directly.
    ///
    /// False for an exactly-once kind, and for any kind with one worker: a
    /// deque delivers an item twice only to its owner and a thief whose
    /// steal raced the owner's pop (`stealmark_deques::idempotent`), and a
    /// single worker has no thief. True with `inject-delays`, whose hook
    /// delivers items twice on purpose at any worker count.
    fn counts_copies(workers: usize) -> bool {
        !D::KIND.exactly_once() && (workers > 1 || cfg!(feature = "inject-delays"))
    }

    /// Traces until the termination protocol says the step is over: drains,
    /// steals and idles. Then records the step's end.
    fn trace_to_termination<W: KeyWatch>(&mut self) {
        let term = self.phase.term;
        loop {
            self.drain::<W>();
            self.switch(SpanKind::Stealing);
            term.hungry_enter();
            if self.refill() {
                term.hungry_leave();
                self.switch(SpanKind::Marking);
                continue;
            }
            self.switch(SpanKind::Idle);
            let found = self.idle();
            term.hungry_leave();
            if found {
                self.switch(SpanKind::Marking);
            } else {
                break;
            }
        }
        self.finish();
    }

    /// Test-only: random yields and sleeps, to shake out lost work and hangs.
    #[cfg(feature = "inject-delays")]
    fn inject_delay(&mut self) {
        let r: u32 = self.state.rng.random_range(0..256);
        if r < 32 {
            std::thread::yield_now();
        } else if r < 34 {
            std::thread::sleep(std::time::Duration::from_micros(u64::from(r) * 20));
        }
    }

    /// Test-only, with a deque that may deliver an item twice: pushes one
    /// popped item in eight back onto the deque as a copy, so that it is
    /// delivered again (to this worker or a thief), as the deque itself
    /// does only rarely: the marker's defences against duplicates (holder
    /// claims, claims of the live count, unrecycled array descriptors) are
    /// then exercised on every run. Returns the popped item's ticket,
    /// marked shared if it now has a copy.
    #[cfg(feature = "inject-delays")]
    fn inject_duplicate(&mut self, w: Word, ticket: Ticket) -> Ticket {
        if !D::KIND.exactly_once() && self.state.rng.random_range(0..8) == 0 {
            self.push_copy(w);
            return ticket.shared();
        }
        ticket
    }
}
