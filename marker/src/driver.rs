//! One collection, as a sequence of steps ([`crate::StepKind`]): each step is one parallel job of every worker
//! ([`Pool::broadcast`]) with its own termination, and the coordinating
//! thread decides between steps, from per-worker counts, which step comes
//! next. A step that has nothing to do does not run, so a heap without
//! non-strong slots and without finalizable objects costs one step, as a
//! plain mark phase.
//!
//! The order: `roots` (the strong closure); then, until nothing changes,
//! `register` and `resolve` (while ephemerons wait for unmarked keys) and
//! `soft` (while soft slots wait for the policy's answer); then `finalize`
//! (J1, the finalizable objects, resurrection) and `register` and `resolve`
//! again if needed; then `judge` (J2). A concurrent mark cycle's remark can
//! run the same sequence after its own first step.
//!
//! A `resolve` step reads the key index frozen (no lock, no fence), so
//! ephemerons it finds with unmarked keys wait for another round. After
//! [`MarkerConfig::ephemeron_frozen_rounds`] rounds (tables nested in
//! ephemeron values, each found only once the previous key is marked), the
//! next `resolve` shares the index instead: it registers ephemerons as it
//! finds them, with the fenced protocol, and so ends the rounds.

use std::any::Any;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use stealmark_deques::{DequeVisitor, WorkDeque};
use stealmark_model::{MarkBitmap, MarkStore, ObjectModel, SoftRefs};

use crate::barrier::Barrier;
use crate::config::MarkerConfig;
use crate::engines::Engines;
use crate::ephemeron::KeyIndex;
use crate::pool::Pool;
use crate::roots::{Chunks, Claims};
use crate::stats::{MarkStats, StepKind, StepRecord, TypeCount};
use crate::termination::Termination;
use crate::worker::{Engine, Phase, Step, Watch};

/// A worker's panic, to re-raise on the caller's thread.
pub(crate) type Panic = Box<dyn Any + Send>;

/// One collection over the configured deque kind: the marker's parts it
/// uses and the collection's inputs.
pub(crate) struct Collect<'a, H, S> {
    pub(crate) engines: &'a mut Engines,
    pub(crate) pool: &'a Pool,
    pub(crate) term: &'a Termination,
    pub(crate) index: &'a mut KeyIndex,
    pub(crate) config: &'a MarkerConfig,
    pub(crate) stats: &'a mut MarkStats,
    pub(crate) heap: &'a H,
    pub(crate) store: &'a S,
    pub(crate) roots: &'a dyn Chunks,
    /// The holders to scan again (a mark cycle's backward barrier).
    pub(crate) rescans: &'a dyn Chunks,
    pub(crate) finalizable: &'a dyn Chunks,
    pub(crate) soft: SoftRefs<'a>,
    /// The side bitmap, which the workers clear in the first step.
    pub(crate) clear: Option<&'a MarkBitmap>,
    /// The previous collection panicked: empty what it left behind first.
    pub(crate) drain: bool,
    /// What to run: a whole collection, or a part of a mark cycle.
    pub(crate) action: Action,
    /// The collection's (or cycle's) time origin.
    pub(crate) start: Instant,
    /// A whole collection, or a part of a solo cycle, on the calling
    /// thread alone: every step runs as on a one-worker marker, and the
    /// pool is not woken.
    pub(crate) solo: bool,
}

/// What a [`Collect`] runs: a whole collection, or one part of a mark cycle
/// (`crate::cycle`), whose parts share the engine's per-worker records from
/// `Begin` to `Complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// A whole collection: the `roots` step, then the contract's steps.
    Collect,
    /// A cycle's start: empty the records (no step runs).
    Begin,
    /// A `satb` step of every worker over the entries in `roots`, traced to
    /// termination; or, with `StepKind::Roots`, a `roots` step (the remark's
    /// rescan).
    Trace(StepKind),
    /// An `increment`: shade `roots`, rescan `rescans`, then scan up to
    /// `budget` objects; on the calling thread alone, or `parallel` on
    /// every worker (the budget shared among them). `exclusive`: no other
    /// thread writes the store while the step runs (no black allocation).
    Increment {
        budget: usize,
        parallel: bool,
        exclusive: bool,
    },
    /// A cycle's end, at the remark: the contract's steps and the records.
    Complete,
}

/// What an [`Action`] leaves to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing: the action ran to its end.
    Done,
    /// An increment ran out of budget with grey objects left.
    Grey,
}

impl<H: ObjectModel, S: MarkStore<H>> DequeVisitor for Collect<'_, H, S> {
    type Output = Result<Outcome, Panic>;

    fn visit<D: WorkDeque>(self) -> Result<Outcome, Panic> {
        let engine = self.engines.get::<D>();
        if matches!(self.action, Action::Collect | Action::Begin) {
            let types = if self.config.count_live {
                self.heap.type_count()
            } else {
                0
            };
            engine.begin_collection(types, self.drain);
            self.stats.steps.clear();
        }
        let solo_config;
        let steps_config = if self.solo {
            solo_config = MarkerConfig {
                workers: 1,
                ..self.config.clone()
            };
            &solo_config
        } else {
            self.config
        };
        let mut driver = Driver {
            engine,
            pool: self.pool,
            term: self.term,
            index: self.index,
            config: self.config,
            steps_config,
            stats: self.stats,
            heap: self.heap,
            store: self.store,
            roots: self.roots,
            rescans: self.rescans,
            finalizable: self.finalizable,
            soft: self.soft,
            clear: self.clear,
            start: self.start,
            watch: Watch::Off,
            rounds: 0,
            // A whole collection is stop-the-world throughout. A cycle's
            // parts run beside the mutators, whose black allocation marks
            // in the same store (`MutatorBuffer::allocate_black`): only an
            // increment of a cycle without it, on one thread, marks alone.
            unshared: match self.action {
                Action::Collect => steps_config.workers == 1,
                Action::Increment {
                    parallel,
                    exclusive,
                    ..
                } => exclusive && (!parallel || steps_config.workers == 1),
                Action::Begin | Action::Trace(_) | Action::Complete => false,
            },
        };
        match self.action {
            Action::Collect => driver.run()?,
            Action::Begin => {}
            Action::Trace(kind) => driver.step(kind)?,
            Action::Increment {
                budget, parallel, ..
            } => return driver.increment(budget, parallel),
            Action::Complete => driver.complete(None)?,
        }
        Ok(Outcome::Done)
    }
}

/// The coordinator's state during one collection.
struct Driver<'a, D: WorkDeque, H, S> {
    engine: &'a mut Engine<D>,
    pool: &'a Pool,
    term: &'a Termination,
    index: &'a mut KeyIndex,
    config: &'a MarkerConfig,
    /// The configuration the steps run with: `config`, or `config` with
    /// one worker for a solo collection or cycle ([`Collect::solo`]).
    steps_config: &'a MarkerConfig,
    stats: &'a mut MarkStats,
    heap: &'a H,
    store: &'a S,
    roots: &'a dyn Chunks,
    rescans: &'a dyn Chunks,
    finalizable: &'a dyn Chunks,
    soft: SoftRefs<'a>,
    clear: Option<&'a MarkBitmap>,
    /// The collection's time origin.
    start: Instant,
    /// How marking steps use the key index: off until the first
    /// `register`, then frozen, then (after `FROZEN_ROUNDS`) shared.
    watch: Watch,
    /// `register` rounds so far.
    rounds: u32,
    /// Whether the steps' single worker is the only thread marking in the
    /// store (`Phase::unshared`).
    unshared: bool,
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Driver<'_, D, H, S> {
    fn run(&mut self) -> Result<(), Panic> {
        self.step(StepKind::Roots)?;
        let roots_end = self.start.elapsed().as_nanos() as u64;
        let last_work = self.max_over_workers(|s| s.record().stats.last_work_ns);
        self.complete(Some(roots_end.saturating_sub(last_work)))
    }

    /// The contract's steps after the strong closure, then the records:
    /// the end of a collection, or a cycle's remark. `latency` is the first
    /// step's termination latency, when it has one.
    fn complete(&mut self, latency: Option<u64>) -> Result<(), Panic> {
        self.settle_contract()?;
        if self.finalizable.chunk_count() > 0 {
            // The soft slots found while resurrecting get the policy as
            // before (HotSpot's Parallel GC does), in the loop after; they
            // are judged at J2 (see `docs/design.md`).
            self.step(StepKind::Finalize)?;
            self.settle_contract()?;
        }
        if self
            .engine
            .states()
            .any(|s| !s.record().weak_refs.is_empty())
        {
            self.step(StepKind::Judge)?;
        }
        self.stats
            .workers
            .resize_with(self.config.workers, Default::default);
        self.engine.finish_collection(&mut self.stats.workers);
        let types = if self.config.count_live {
            self.heap.type_count()
        } else {
            0
        };
        let st = &mut *self.stats;
        st.phase_ns = self.start.elapsed().as_nanos() as u64;
        st.termination_latency_ns = latency.unwrap_or(0);
        st.config = Some(self.config.clone());
        let t = st.total();
        st.roots = t.roots;
        st.live_objects = t.objects_marked;
        st.duplicate_scans = t.objects_scanned.saturating_sub(t.objects_marked);
        st.live_bytes = t.live_bytes;
        st.live_footprint_bytes = t.live_footprint_bytes;
        st.live_by_type.clear();
        st.live_by_type.resize(types, TypeCount::default());
        for rec in &st.workers {
            for (sum, w) in st.live_by_type.iter_mut().zip(&rec.live_by_type) {
                sum.objects += w.objects;
                sum.bytes += w.bytes;
            }
        }
        Ok(())
    }

    /// Runs `register`, `resolve` and `soft` steps until no ephemeron waits
    /// to be registered and no soft slot waits for the policy.
    fn settle_contract(&mut self) -> Result<(), Panic> {
        loop {
            let pending: usize = self.engine.states().map(|s| s.pending()).sum();
            if pending > 0 {
                if self.watch == Watch::Off {
                    self.index.reset(pending, self.store.dense_bound(self.heap));
                }
                if self.rounds < self.config.ephemeron_frozen_rounds && self.watch != Watch::Shared
                {
                    self.rounds += 1;
                    self.index.reserve(pending);
                    self.step(StepKind::Register)?;
                    self.watch = Watch::Frozen;
                } else {
                    self.watch = Watch::Shared;
                }
                self.step(StepKind::Resolve)?;
                continue;
            }
            let asked = matches!(self.soft, SoftRefs::Ask(_));
            if asked && self.engine.states().any(|s| s.soft_unasked() > 0) {
                self.step(StepKind::Soft)?;
                continue;
            }
            if self.watch != Watch::Off && self.all_released() {
                // Every head of the key index's dense table is clear.
                self.index.all_taken();
            }
            return Ok(());
        }
    }

    /// Whether every ephemeron entry registered so far was released (each
    /// is released at most once, so equal counts mean all of them).
    fn all_released(&mut self) -> bool {
        let (registered, released) = self.engine.states().fold((0, 0), |(g, l), s| {
            let st = &s.record().stats;
            (g + st.ephemerons_registered, l + st.ephemerons_released)
        });
        registered == released
    }

    /// The largest of `f` over the workers' states.
    fn max_over_workers(&mut self, f: impl Fn(&crate::worker::WorkerState<D>) -> u64) -> u64 {
        self.engine.states().map(|s| f(s)).max().unwrap_or(0)
    }

    /// Runs one step on every worker.
    fn step(&mut self, kind: StepKind) -> Result<(), Panic> {
        self.step_with(kind, 0, true).map(|_| ())
    }

    /// Runs an `increment` step: shades the entries in `roots`, rescans the
    /// holders in `rescans`, then scans up to `budget` objects; on the
    /// calling thread alone (worker 0), or with `parallel` on every worker,
    /// each with its share of the budget.
    fn increment(&mut self, budget: usize, parallel: bool) -> Result<Outcome, Panic> {
        if self.step_with(StepKind::Increment, budget, parallel)? {
            Ok(Outcome::Grey)
        } else {
            Ok(Outcome::Done)
        }
    }

    /// Runs one step (an `increment` with `budget`, on worker 0 alone
    /// unless `on_all`); whether an increment left grey objects.
    fn step_with(&mut self, kind: StepKind, budget: usize, on_all: bool) -> Result<bool, Panic> {
        let all_released = self.all_released();
        let step = Step {
            kind,
            watch: match kind {
                // `register` and `judge` mark nothing: nothing to check.
                StepKind::Register | StepKind::Judge | StepKind::Preclean => Watch::Off,
                // Every entry registered was released, and a frozen step
                // registers none: no check could find anything (a
                // `finalize` step after the rounds released every key).
                _ if self.watch == Watch::Frozen && all_released => Watch::Off,
                _ => self.watch,
            },
            soft_strong: matches!(self.soft, SoftRefs::KeepAll),
            all_released,
        };
        let frozen_view;
        let (index, frozen) = if step.watch == Watch::Frozen {
            frozen_view = self.index.freeze();
            (None, Some(&frozen_view))
        } else {
            (Some(&*self.index), None)
        };
        let claims = match kind {
            StepKind::Roots | StepKind::Satb | StepKind::Increment => Some(Claims::new(self.roots)),
            StepKind::Finalize => Some(Claims::new(self.finalizable)),
            StepKind::Register
            | StepKind::Resolve
            | StepKind::Soft
            | StepKind::Judge
            | StepKind::Preclean => None,
        };
        let rescans = match kind {
            StepKind::Satb if self.rescans.chunk_count() > 0 => Some(Claims::new(self.rescans)),
            _ => None,
        };
        self.term.reset(self.steps_config.workers);
        let t0 = Instant::now();
        let phase = Phase {
            engine: &*self.engine,
            heap: self.heap,
            store: self.store,
            config: self.steps_config,
            term: self.term,
            start: self.start,
            step,
            claims,
            rescans,
            index,
            frozen,
            soft: self.soft,
            clear: if kind == StepKind::Roots {
                self.clear
            } else {
                None
            },
            unshared: self.unshared,
            barrier: Barrier::new(),
            panic: Mutex::new(None),
            // An increment on every worker shares its budget.
            budget: if kind == StepKind::Increment && on_all {
                budget.div_ceil(self.steps_config.workers)
            } else {
                budget
            },
            scanning: CachePadded::new(AtomicUsize::new(
                if kind == StepKind::Increment && on_all {
                    self.steps_config.workers
                } else {
                    0
                },
            )),
        };
        let alone = kind == StepKind::Increment && !on_all;
        if alone || self.steps_config.workers == 1 {
            phase.run_worker(0);
        } else {
            self.pool.broadcast(&|i| phase.run_worker(i));
        }
        let panic = phase.panic.into_inner();
        self.engine.finish_step();
        self.stats.steps.push(StepRecord {
            kind,
            watch: step.watch != Watch::Off,
            ns: t0.elapsed().as_nanos() as u64,
        });
        match panic {
            Some(payload) => Err(payload),
            None => Ok(kind == StepKind::Increment && self.engine.increment_left(on_all)),
        }
    }
}
