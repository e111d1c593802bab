//! What each worker keeps between steps and collections (`WorkerState`), the
//! deques and shared storage of one deque kind (`Engine`), and what the
//! workers share during one step (`Phase`).

use std::any::Any;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use stealmark_deques::{Owner, ThiefStats, WorkDeque};
use stealmark_model::{MarkBitmap, MarkStore, ObjectModel, SoftRefs};

use super::contract::Contract;
use super::Worker;
use crate::arrays::ArrayTable;
use crate::barrier::Barrier;
use crate::config::{DequeKind, MarkerConfig};
use crate::ephemeron::{Frozen, KeyIndex};
use crate::holders::Holders;
use crate::overflow::Overflow;
use crate::private::PrivateStack;
use crate::roots::Claims;
use crate::stats::{StepKind, WorkerRecord};
use crate::termination::Termination;

/// Array descriptors per marker: arrays being scanned in chunks at once.
const ARRAY_DESCRIPTORS: usize = 4096;

/// What one worker keeps between steps (and, for the buffers, between
/// collections): its end of its deque, its private stack, its random
/// stream, its records and its share of the contract's state.
pub(crate) struct WorkerState<D: WorkDeque> {
    /// The owner's end of this worker's deque.
    pub(super) owner: D::Owner,
    /// The private part of the mark stack; its capacity is kept from one
    /// step to the next.
    pub(super) private: PrivateStack,
    /// This worker's random stream (victims, the probabilistic policy).
    pub(super) rng: Pcg64,
    /// Counters of this worker's steals, as a thief.
    pub(super) thief_stats: ThiefStats,
    /// The records of the current (or last) collection.
    pub(super) record: WorkerRecord,
    /// This worker's share of the runtime contract's state during a
    /// collection (waiting ephemerons, soft slots asked, ...).
    pub(super) contract: Contract,
}

impl<D: WorkDeque> WorkerState<D> {
    /// Ephemeron entries found with an unmarked key and not yet registered.
    pub(crate) fn pending(&self) -> usize {
        self.contract.pending()
    }

    /// Soft slots found since the policy was last asked.
    pub(crate) fn soft_unasked(&self) -> usize {
        self.contract.soft_unasked()
    }

    /// This collection's record so far.
    pub(crate) fn record(&self) -> &WorkerRecord {
        &self.record
    }

    /// Whether grey objects wait in this worker's private stack or deque
    /// (after an increment, which may stop with some left).
    pub(crate) fn has_grey(&self) -> bool {
        self.private.len() != 0 || !self.owner.is_empty()
    }
}

/// The deques, overflow storage and array descriptors of one deque kind.
pub(crate) struct Engine<D: WorkDeque> {
    /// Each worker's state, locked by the worker for the length of a step.
    states: Box<[CachePadded<Mutex<WorkerState<D>>>]>,
    /// The thieves' ends of the deques, indexed by worker.
    pub(super) thieves: Box<[D::Thief]>,
    /// Where a full bounded deque spills (shared by all workers).
    pub(super) overflow: Overflow,
    /// The large arrays being scanned in chunks.
    pub(super) arrays: ArrayTable,
    /// With a deque that may deliver an item twice: the holders whose
    /// non-strong slots were recorded, and the large arrays opened.
    pub(super) holders: Holders,
    /// With a deque that may deliver an item twice, and more than one
    /// worker: the scanned objects whose deque tickets or horizons said
    /// they may have another copy, claimed when counted live
    /// (`Worker::account`).
    pub(super) counted: Holders,
    /// Whether pushes can fail (bounded deques), so that the overflow storage
    /// must be checked before a worker goes idle.
    pub(super) bounded: bool,
}

impl<D: WorkDeque> Engine<D> {
    /// One deque, private stack and random stream per worker of `config`.
    pub(crate) fn new(config: &MarkerConfig) -> Engine<D> {
        let mut states = Vec::with_capacity(config.workers);
        let mut thieves = Vec::with_capacity(config.workers);
        for i in 0..config.workers {
            let (owner, thief) = D::with_capacity(config.deque_capacity);
            thieves.push(thief);
            // Each worker has its own stream: the seed mixed with the index
            // through a multiplicative hash, so no two queues share a seed.
            let seed = config.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            states.push(CachePadded::new(Mutex::new(WorkerState {
                owner,
                private: PrivateStack::default(),
                rng: Pcg64::seed_from_u64(seed),
                thief_stats: ThiefStats::default(),
                record: WorkerRecord::default(),
                contract: Contract::default(),
            })));
        }
        Engine {
            states: states.into_boxed_slice(),
            thieves: thieves.into_boxed_slice(),
            overflow: Overflow::default(),
            // A deque that may deliver a token twice must not let a copy
            // outlive its descriptor's reuse (`crate::arrays`).
            arrays: ArrayTable::new(ARRAY_DESCRIPTORS, config.workers, D::KIND.exactly_once()),
            holders: Holders::default(),
            counted: Holders::default(),
            bounded: config.deque == DequeKind::Abp,
        }
    }

    /// Prepares a collection of a heap with `types` types (no worker runs):
    /// empties every record and the contract state, keeping their buffers.
    /// With `drain`, also empties every deque, private stack and the shared
    /// storage: what a collection that panicked left behind.
    pub(crate) fn begin_collection(&mut self, types: usize, drain: bool) {
        self.overflow.clear();
        self.arrays.reset();
        self.holders.clear();
        self.counted.clear();
        for state in self.states() {
            if drain {
                while state.owner.pop().is_some() {}
                state.private.clear();
            }
            state.record.clear(types);
            state.contract.clear();
            state.owner.reset_stats();
            state.thief_stats = ThiefStats::default();
        }
    }

    /// Whether an increment left work: grey objects anywhere (a worker's
    /// private stack or deque, the overflow storage), or non-strong slots
    /// that the increment's workers (worker 0, or every worker if `all`)
    /// have not precleaned.
    pub(crate) fn increment_left(&mut self, all: bool) -> bool {
        let ran = if all { self.states.len() } else { 1 };
        self.states()
            .enumerate()
            .any(|(i, s)| s.has_grey() || (i < ran && s.contract.looked < s.record.weak_refs.len()))
            || !self.overflow.is_empty_locked()
    }

    /// The workers' states, between steps.
    pub(crate) fn states(&mut self) -> impl Iterator<Item = &mut WorkerState<D>> + '_ {
        self.states.iter_mut().map(|s| s.get_mut())
    }

    /// After a step, when every worker has returned (no thief is inside a
    /// steal): lets the deques free retired buffers.
    pub(crate) fn finish_step(&mut self) {
        for state in self.states() {
            // SAFETY: no thief is inside a steal from this deque. Its only
            // thief handle is `self.thieves[i]` (made in `Engine::new`, never
            // cloned), which workers reach only through the `&Engine` of a
            // `Phase`; `&mut self` proves that no such borrow is live, and
            // `Pool::broadcast` returned only after every worker had
            // returned from the step's job.
            unsafe { state.owner.quiesce() };
        }
    }

    /// After a collection: swaps each worker's record with `records[i]`, so
    /// that both sets of buffers are kept.
    pub(crate) fn finish_collection(&mut self, records: &mut [WorkerRecord]) {
        for (state, rec) in self.states().zip(records) {
            std::mem::swap(rec, &mut state.record);
        }
    }
}

/// How a step uses the ephemeron key index (`crate::ephemeron`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Watch {
    /// No ephemeron waits in the index: nothing to check.
    Off,
    /// Check every newly marked object against the frozen index; new
    /// ephemerons with unmarked keys wait for the next registration step.
    Frozen,
    /// Check every newly marked object against the shared index, and
    /// register new ephemerons with unmarked keys at once (the fenced
    /// protocol).
    Shared,
}

/// What one step does, beyond its kind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) kind: StepKind,
    /// How the step uses the key index.
    pub(crate) watch: Watch,
    /// Trace soft slots as strong (the policy keeps every referent, also
    /// those found while resurrecting).
    pub(crate) soft_strong: bool,
    /// Every ephemeron entry registered in the key index so far has been
    /// released (their keys are marked): judging need not look at the
    /// entries that waited.
    pub(crate) all_released: bool,
}

/// Everything the workers share during one step.
pub(crate) struct Phase<'a, D: WorkDeque, H, S> {
    /// The deques and shared storage.
    pub(crate) engine: &'a Engine<D>,
    /// The heap being marked.
    pub(crate) heap: &'a H,
    /// Where the mark bits live.
    pub(crate) store: &'a S,
    /// The marker's configuration.
    pub(crate) config: &'a MarkerConfig,
    /// The termination protocol's shared state (reset for each step).
    pub(crate) term: &'a Termination,
    /// The collection's time origin (spans and samples are relative to it).
    pub(crate) start: Instant,
    /// What this step does.
    pub(crate) step: Step,
    /// The chunks this step claims: the roots, or the finalizable objects.
    pub(crate) claims: Option<Claims<'a>>,
    /// The holders this step scans again, marked already (a mark cycle's
    /// backward barrier): claimed in chunks as the roots are.
    pub(crate) rescans: Option<Claims<'a>>,
    /// Ephemeron values waiting for their keys: the index itself (steps
    /// that register, and shared watching), or a read-only view of it
    /// (frozen watching).
    pub(crate) index: Option<&'a KeyIndex>,
    pub(crate) frozen: Option<&'a Frozen<'a>>,
    /// The soft-reference policy.
    pub(crate) soft: SoftRefs<'a>,
    /// The side bitmap, when the workers clear it themselves before marking
    /// (each its own part, so the lines start in the cache of a core that
    /// marks), meeting at the barrier before anyone marks.
    pub(crate) clear: Option<&'a MarkBitmap>,
    /// Whether this step's worker is the only thread marking in `store`:
    /// a whole stop-the-world collection with one worker (never a mark
    /// cycle's part, where the mutators' barriers mark too). It then marks
    /// with [`MarkStore::try_mark_unshared`].
    pub(crate) unshared: bool,
    /// The barriers inside the step.
    pub(crate) barrier: Barrier,
    /// The first panic raised by a worker, re-raised by the caller.
    pub(crate) panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Objects an `increment` step may scan (each worker's share, when it
    /// runs on every worker).
    pub(crate) budget: usize,
    /// An `increment` on every worker: the workers still scanning, a hint
    /// for a worker out of work on whether to wait for more (`Relaxed`
    /// throughout: a worker that leaves too early only leaves work for the
    /// next step, and one that waits too long is bounded by the others'
    /// budgets). Zero when the increment runs on worker 0 alone.
    pub(crate) scanning: CachePadded<AtomicUsize>,
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Phase<'_, D, H, S> {
    /// The job of worker `index`. Catches a panic, records it and ends the
    /// step for everyone (the caller re-raises it).
    pub(crate) fn run_worker(&self, index: usize) {
        let mut state = self.engine.states[index].lock();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Worker::new(self, index, &mut state).step();
        }));
        if let Err(payload) = result {
            self.panic.lock().get_or_insert(payload);
            self.term.abort();
            self.barrier.abort();
        }
    }
}
