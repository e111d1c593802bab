//! The per-phase setup: what each worker keeps between phases, the deques
//! and shared storage of one deque kind, and what the workers share during
//! one phase.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crossbeam_utils::{Backoff, CachePadded};
use parking_lot::Mutex;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use stealmark_deques::{Owner, ThiefStats, WorkDeque};
use stealmark_model::{MarkBitmap, MarkStore, ObjRef, ObjectModel};

use super::Worker;
use crate::arrays::ArrayTable;
use crate::config::{DequeKind, MarkerConfig};
use crate::overflow::Overflow;
use crate::private::PrivateStack;
use crate::stats::WorkerRecord;
use crate::termination::Termination;

/// Array descriptors per marker: arrays being scanned in chunks at once.
const ARRAY_DESCRIPTORS: usize = 4096;

/// What one worker keeps between phases.
pub(crate) struct Slot<D: WorkDeque> {
    /// The owner's end of this worker's deque.
    pub(super) owner: D::Owner,
    /// The private part of the mark stack; its capacity is kept from one
    /// phase to the next.
    pub(super) private: PrivateStack,
    /// This worker's random stream (victims, the probabilistic policy).
    pub(super) rng: Pcg64,
    /// Counters of this worker's steals, as a thief.
    pub(super) thief_stats: ThiefStats,
    /// The records of the current (or last) phase.
    pub(super) record: WorkerRecord,
}

/// The deques, overflow storage and array descriptors of one deque kind.
pub(crate) struct Engine<D: WorkDeque> {
    slots: Box<[CachePadded<Mutex<Slot<D>>>]>,
    /// The thieves' ends of the deques, indexed by worker.
    pub(super) thieves: Box<[D::Thief]>,
    /// Where a full bounded deque spills (shared by all workers).
    pub(super) overflow: Overflow,
    /// The large arrays being scanned in chunks.
    pub(super) arrays: ArrayTable,
    /// Whether pushes can fail (bounded deques), so that the overflow storage
    /// must be checked before a worker goes idle.
    pub(super) bounded: bool,
}

impl<D: WorkDeque> Engine<D> {
    /// One deque, private stack and random stream per worker of `config`.
    pub(crate) fn new(config: &MarkerConfig) -> Engine<D> {
        let mut slots = Vec::with_capacity(config.workers);
        let mut thieves = Vec::with_capacity(config.workers);
        for i in 0..config.workers {
            let (owner, thief) = D::with_capacity(config.deque_capacity);
            thieves.push(thief);
            // Each worker has its own stream: the seed mixed with the index
            // through a multiplicative hash, so no two queues share a seed.
            let seed = config.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            slots.push(CachePadded::new(Mutex::new(Slot {
                owner,
                private: PrivateStack::default(),
                rng: Pcg64::seed_from_u64(seed),
                thief_stats: ThiefStats::default(),
                record: WorkerRecord::default(),
            })));
        }
        Engine {
            slots: slots.into_boxed_slice(),
            thieves: thieves.into_boxed_slice(),
            overflow: Overflow::default(),
            arrays: ArrayTable::new(ARRAY_DESCRIPTORS, config.workers),
            bounded: config.deque == DequeKind::Abp,
        }
    }

    /// Prepares a phase (no worker runs).
    pub(crate) fn reset(&self) {
        self.overflow.clear();
        self.arrays.reset();
    }

    /// After a phase, when every worker has returned (no thief is inside a
    /// steal): lets the deques free retired buffers, and swaps each worker's
    /// record with `records[i]`, so both sets of buffers are kept.
    pub(crate) fn finish_phase(&mut self, records: &mut [WorkerRecord]) {
        for (slot, rec) in self.slots.iter_mut().zip(records) {
            let slot = slot.get_mut();
            // SAFETY: no thief is inside a steal from this deque. Its only
            // thief handle is `self.thieves[i]` (made in `Engine::new`, never
            // cloned), which workers reach only through the `&Engine` of a
            // `Phase`; `&mut self` proves that no such borrow is live, and
            // `Pool::broadcast` returned only after every worker had
            // returned from the phase's job.
            unsafe { slot.owner.quiesce() };
            std::mem::swap(rec, &mut slot.record);
        }
    }
}

/// Everything the workers share during one phase.
pub(crate) struct Phase<'a, D: WorkDeque, H, S> {
    /// The deques and shared storage.
    pub(crate) engine: &'a Engine<D>,
    /// The heap being marked.
    pub(crate) heap: &'a H,
    /// Where the mark bits live.
    pub(crate) store: &'a S,
    /// The roots, split between the workers in contiguous slices.
    pub(crate) roots: &'a [ObjRef],
    /// The marker's configuration.
    pub(crate) config: &'a MarkerConfig,
    /// The termination protocol's shared state.
    pub(crate) term: &'a Termination,
    /// The phase's time origin (spans and samples are relative to it).
    pub(crate) start: Instant,
    /// The side bitmap, when the workers clear it themselves before marking
    /// (each its own part, so the lines start in the cache of a core that
    /// marks), meeting at `cleared` before anyone marks.
    pub(crate) clear: Option<&'a MarkBitmap>,
    /// Workers done clearing their part of `clear`.
    pub(crate) cleared: AtomicUsize,
    /// The first panic raised by a worker, re-raised by the caller.
    pub(crate) panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Phase<'_, D, H, S> {
    /// The job of worker `index`. Catches a panic, records it and ends the
    /// phase for everyone (the caller re-raises it).
    pub(crate) fn run_worker(&self, index: usize) {
        let mut slot = self.engine.slots[index].lock();
        if let Some(bitmap) = self.clear {
            let n = self.config.workers;
            bitmap.clear_part(index, n);
            // Release/Acquire: each worker's clearing stores happen before
            // every other worker's marking, which starts after it has seen
            // all `n` arrivals. Spins and yields only: clearing is short.
            self.cleared.fetch_add(1, Ordering::Release);
            let backoff = Backoff::new();
            while self.cleared.load(Ordering::Acquire) < n {
                backoff.snooze();
            }
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Worker::new(self, index, &mut slot).run();
        }));
        if let Err(payload) = result {
            self.panic.lock().get_or_insert(payload);
            self.term.abort();
        }
    }
}
