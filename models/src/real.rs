//! The Berenbrink and Hendler-Shavit workloads on real threads over a real
//! deque.
//!
//! One worker thread per processor, each owning one deque of kind `D`. Steps
//! are synchronised with a barrier (three waits per step), so the chain's
//! phases happen in order while the steals inside a phase race for real:
//!
//! - Berenbrink: (1) every generator on a host pushes a task with probability
//!   λ into the host's deque; (2) every worker whose deque is empty picks a
//!   processor uniformly from all `n` and steals from it: `one` is one
//!   [`Thief::steal`], `const:C` up to C of them, `half` one
//!   [`Thief::steal_half`] (a lost race counts as a failed request); (3)
//!   every worker pops one task. Unlike the chain, a victim may serve several
//!   thieves in one step, as real deques do.
//! - Hendler-Shavit: (1) every worker balances with probability µ/L: it picks
//!   another worker and, if that deque looks longer than its own, steals half
//!   of it ([`Thief::steal_half`]) or one item; (2) producers push
//!   [`PRODUCER_TASKS`] tasks and every worker pops one.
//!
//! After the last step the items left in the deques must equal the items
//! pushed minus the items popped; the report says whether they do.
//!
//! [`PRODUCER_TASKS`]: crate::hendler_shavit::PRODUCER_TASKS

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rand::Rng;
use serde::Serialize;
use stealmark_deques::{DequeKind, DequeVisitor, Owner, Steal, Thief, ThiefStats, WorkDeque};

use crate::berenbrink::{BerenbrinkConfig, BerenbrinkReport, StealFunction};
use crate::hendler_shavit::{HsConfig, HsReport, HsSteal, RatioTracker, PRODUCER_TASKS};
use crate::step_barrier::StepBarrier;
use crate::{rng, ModelError};

/// The most worker threads a real run starts.
pub const MAX_THREADS: usize = 256;

/// The most steps a real run takes (each step is three barrier waits).
pub const MAX_STEPS: u64 = 1_000_000;

/// The most items a bounded deque is created for.
const MAX_CAPACITY: usize = 1 << 16;

/// A real run's report: the model's report plus what the deques did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RealReport<R> {
    /// The deque kind's name (`D::KIND`).
    pub deque: &'static str,
    /// The workload's report, computed from the deques' lengths.
    #[serde(flatten)]
    pub report: R,
    /// Steal attempts, single or batch.
    pub steal_attempts: u64,
    /// Attempts that took items.
    pub steal_successes: u64,
    /// Attempts that lost a race.
    pub steal_aborts: u64,
    /// Whether items left = items pushed − items popped.
    pub conserved: bool,
}

fn check_threads(processors: usize, steps: u64) -> Result<(), ModelError> {
    if processors > MAX_THREADS {
        return Err(ModelError::invalid(
            "processors",
            processors,
            format!("at most {MAX_THREADS} with --real (one thread each)"),
        ));
    }
    if steps > MAX_STEPS {
        return Err(ModelError::invalid(
            "steps",
            steps,
            format!("at most {MAX_STEPS} with --real"),
        ));
    }
    Ok(())
}

/// What every worker shares.
struct Shared<T> {
    thieves: Vec<T>,
    lens: Vec<AtomicU64>,
    barrier: StepBarrier,
    failed: AtomicBool,
    error: Mutex<Option<ModelError>>,
}

impl<T> Shared<T> {
    fn new(thieves: Vec<T>) -> Self {
        let n = thieves.len();
        Shared {
            thieves,
            lens: (0..n).map(|_| AtomicU64::new(0)).collect(),
            barrier: StepBarrier::new(n),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    fn fail(&self, error: ModelError) {
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(error);
        // Relaxed: read only after the next barrier wait, which orders it.
        self.failed.store(true, Ordering::Relaxed);
    }

    fn failed(&self) -> bool {
        // Relaxed: every store happened before a barrier wait that this
        // load follows (StepBarrier::wait synchronises all participants).
        self.failed.load(Ordering::Relaxed)
    }

    fn total(&self) -> u64 {
        // Relaxed: written before the barrier this read follows.
        self.lens.iter().map(|l| l.load(Ordering::Relaxed)).sum()
    }

    fn into_error(self) -> Option<ModelError> {
        self.error.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// What one worker counted.
#[derive(Default)]
struct WorkerCounts {
    pushed: u64,
    popped: u64,
    stats: ThiefStats,
}

/// One worker's deque, its view of the shared state and its counters.
struct Seat<'a, D: WorkDeque> {
    owner: D::Owner,
    shared: &'a Shared<D::Thief>,
    worker: usize,
    capacity: usize,
    counts: WorkerCounts,
}

impl<'a, D: WorkDeque> Seat<'a, D> {
    fn new(owner: D::Owner, shared: &'a Shared<D::Thief>, worker: usize, capacity: usize) -> Self {
        Seat {
            owner,
            shared,
            worker,
            capacity,
            counts: WorkerCounts::default(),
        }
    }

    /// Pushes `item`; a full bounded deque fails the run with `DequeFull`.
    fn push(&mut self, item: usize, step: u64) -> bool {
        if self.owner.push(item).is_ok() {
            return true;
        }
        self.shared.fail(ModelError::DequeFull {
            deque: D::KIND.into(),
            worker: self.worker,
            capacity: self.capacity,
            step,
        });
        false
    }

    /// Pushes a newly generated task.
    fn generate(&mut self, step: u64) {
        if self.push(self.counts.pushed as usize, step) {
            self.counts.pushed += 1;
        }
    }

    /// Serves one task, if any.
    fn serve(&mut self) {
        if self.owner.pop().is_some() {
            self.counts.popped += 1;
        }
    }

    /// Steals up to `count` items one at a time from worker `victim` (a
    /// stolen item moves: it is neither pushed nor popped anew). Stops at
    /// the first empty or lost steal.
    fn steal_singles(&mut self, victim: usize, count: u64, step: u64) {
        for _ in 0..count {
            match self.shared.thieves[victim].steal(&mut self.counts.stats) {
                Steal::Success(item) => {
                    if !self.push(item, step) {
                        return;
                    }
                }
                Steal::Empty | Steal::Abort => return,
            }
        }
    }

    /// Moves about half of worker `victim`'s items into this deque.
    fn steal_half(&mut self, victim: usize) {
        self.shared.thieves[victim].steal_half(&mut self.owner, &mut self.counts.stats);
    }

    /// Publishes this deque's length for worker 0 (read after the next
    /// barrier wait).
    fn publish_len(&self) {
        // Relaxed: read by worker 0 after the barrier wait that follows.
        self.shared.lens[self.worker].store(self.owner.len() as u64, Ordering::Relaxed);
    }
}

fn join_all<T>(handles: Vec<std::thread::ScopedJoinHandle<'_, T>>) -> Result<Vec<T>, ModelError> {
    let mut out = Vec::with_capacity(handles.len());
    let mut panic = None;
    for h in handles {
        match h.join() {
            Ok(v) => out.push(v),
            Err(e) => {
                let msg = e
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| e.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                panic.get_or_insert(msg);
            }
        }
    }
    match panic {
        Some(msg) => Err(ModelError::WorkerPanicked(msg)),
        None => Ok(out),
    }
}

fn seed_for(seed: u64, worker: usize) -> u64 {
    seed ^ (worker as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs the Berenbrink workload on `n` threads over deque kind `D`.
pub fn berenbrink<D: WorkDeque>(
    config: &BerenbrinkConfig,
) -> Result<RealReport<BerenbrinkReport>, ModelError> {
    config.validate()?;
    check_threads(config.processors, config.steps)?;
    if let StealFunction::Fraction(_) = config.steal {
        return Err(ModelError::RealUnsupported(
            "fraction:R steals (deques steal one item or half)".into(),
        ));
    }
    let n = config.processors;
    let per_host = config.generators_on(0) as usize;
    let capacity = (per_host.saturating_mul(config.steps as usize) + 1).clamp(64, MAX_CAPACITY);
    let (owners, thieves): (Vec<_>, Vec<_>) = (0..n).map(|_| D::with_capacity(capacity)).unzip();
    let shared = Shared::new(thieves);
    let (counts, loads) = std::thread::scope(|scope| {
        let handles: Vec<_> = owners
            .into_iter()
            .enumerate()
            .map(|(i, owner)| {
                let shared = &shared;
                scope.spawn(move || {
                    let _poison = shared.barrier.poison_on_panic();
                    let mut rng = rng::seeded(seed_for(config.seed, i));
                    let mut seat = Seat::<D>::new(owner, shared, i, capacity);
                    let mut loads = Vec::new();
                    let generators = config.generators_on(i);
                    for step in 1..=config.steps {
                        for _ in 0..generators {
                            if rng.random_bool(config.lambda) {
                                seat.generate(step);
                            }
                        }
                        if shared.barrier.wait().is_err() {
                            break;
                        }
                        if seat.owner.is_empty() {
                            let k = rng.random_range(0..n);
                            if k != i {
                                match config.steal {
                                    StealFunction::One => seat.steal_singles(k, 1, step),
                                    StealFunction::Const(c) => seat.steal_singles(k, c, step),
                                    StealFunction::Half | StealFunction::Fraction(_) => {
                                        seat.steal_half(k)
                                    }
                                }
                            }
                        }
                        if shared.barrier.wait().is_err() {
                            break;
                        }
                        seat.serve();
                        // SAFETY: no thief is inside a steal from this deque.
                        // Steals happen only between the first and the second
                        // wait of a step. The second wait returned `Ok`, so
                        // every worker had arrived there (StepBarrier lets a
                        // wait pass only when all parties have arrived; one
                        // that has left the loop never arrives again): all
                        // steals of this step have returned. Next step's
                        // steals start after a first wait that cannot pass
                        // before we arrive at it, after this call.
                        unsafe { seat.owner.quiesce() };
                        seat.publish_len();
                        if shared.barrier.wait().is_err() {
                            break;
                        }
                        if i == 0 {
                            loads.push(shared.total());
                        }
                        if shared.failed() {
                            break;
                        }
                    }
                    (seat.counts, loads)
                })
            })
            .collect();
        join_all(handles).map(|all| {
            let mut loads = Vec::new();
            let counts: Vec<WorkerCounts> = all
                .into_iter()
                .map(|(c, l)| {
                    if !l.is_empty() {
                        loads = l;
                    }
                    c
                })
                .collect();
            (counts, loads)
        })
    })?;
    let final_lens = shared.total();
    if let Some(err) = shared.into_error() {
        return Err(err);
    }
    let mut stats = ThiefStats::default();
    let (mut pushed, mut popped) = (0, 0);
    for c in &counts {
        stats.merge(&c.stats);
        pushed += c.pushed;
        popped += c.popped;
    }
    let report = BerenbrinkReport::from_loads(*config, &loads, pushed, popped, stats.items_stolen);
    Ok(RealReport {
        deque: D::KIND.into(),
        conserved: pushed - popped == final_lens && report.final_total_load == final_lens,
        report,
        steal_attempts: stats.steal_attempts,
        steal_successes: stats.steal_successes,
        steal_aborts: stats.steal_aborts,
    })
}

/// Runs the Hendler-Shavit workload on `n` threads over deque kind `D`.
pub fn hendler_shavit<D: WorkDeque>(config: &HsConfig) -> Result<RealReport<HsReport>, ModelError> {
    config.validate()?;
    check_threads(config.processors, config.steps)?;
    let n = config.processors;
    let producers = config.producers();
    let capacity = (PRODUCER_TASKS as usize * config.steps as usize + 1).clamp(64, MAX_CAPACITY);
    let (owners, thieves): (Vec<_>, Vec<_>) = (0..n).map(|_| D::with_capacity(capacity)).unzip();
    let shared = Shared::new(thieves);
    let counts = std::thread::scope(|scope| {
        let handles: Vec<_> = owners
            .into_iter()
            .enumerate()
            .map(|(i, owner)| {
                let shared = &shared;
                scope.spawn(move || {
                    let _poison = shared.barrier.poison_on_panic();
                    let mut rng = rng::seeded(seed_for(config.seed, i));
                    let mut seat = Seat::<D>::new(owner, shared, i, capacity);
                    let mut tracker = (i == 0).then(|| RatioTracker::new(n, config.steps));
                    for step in 1..=config.steps {
                        if let Some(t) = tracker.as_mut() {
                            // Relaxed: written before the previous step's last barrier.
                            t.record(shared.lens.iter().map(|l| l.load(Ordering::Relaxed)));
                        }
                        let own = seat.owner.len();
                        if rng.random_bool(config.balance_probability(own as u64)) {
                            let mut q = rng.random_range(0..n - 1);
                            if q >= i {
                                q += 1;
                            }
                            if shared.thieves[q].len() > own {
                                match config.steal {
                                    HsSteal::Half => seat.steal_half(q),
                                    HsSteal::One => seat.steal_singles(q, 1, step),
                                }
                            }
                        }
                        if shared.barrier.wait().is_err() {
                            break;
                        }
                        if i < producers {
                            for _ in 0..PRODUCER_TASKS {
                                seat.generate(step);
                            }
                        }
                        seat.serve();
                        // SAFETY: no thief is inside a steal from this deque.
                        // Steals happen only before the first wait of a step.
                        // That wait returned `Ok`, so every worker had
                        // arrived there (StepBarrier lets a wait pass only
                        // when all parties have arrived; one that has left
                        // the loop never arrives again): all steals of this
                        // step have returned. Next step's steals start after
                        // the second wait, which cannot pass before we arrive
                        // at it, after this call.
                        unsafe { seat.owner.quiesce() };
                        seat.publish_len();
                        if shared.barrier.wait().is_err() {
                            break;
                        }
                        if shared.failed() {
                            break;
                        }
                    }
                    (seat.counts, tracker)
                })
            })
            .collect();
        join_all(handles)
    })?;
    let final_lens = shared.total();
    if let Some(err) = shared.into_error() {
        return Err(err);
    }
    let mut stats = ThiefStats::default();
    let (mut pushed, mut popped) = (0, 0);
    let mut tracker = None;
    for (c, t) in counts {
        stats.merge(&c.stats);
        pushed += c.pushed;
        popped += c.popped;
        if t.is_some() {
            tracker = t;
        }
    }
    let tracker =
        tracker.ok_or_else(|| ModelError::WorkerPanicked("worker 0 kept no ratios".into()))?;
    let report = tracker.finish(*config, stats.steal_successes, stats.items_stolen);
    Ok(RealReport {
        deque: D::KIND.into(),
        conserved: pushed - popped == final_lens,
        report,
        steal_attempts: stats.steal_attempts,
        steal_successes: stats.steal_successes,
        steal_aborts: stats.steal_aborts,
    })
}

/// Runs [`berenbrink`] over deque kind `deque` (any [`DequeKind`]: the
/// `-q` kinds reclaim retired buffers at quiescent points, which these runs
/// provide once per step).
pub fn berenbrink_on(
    deque: DequeKind,
    config: &BerenbrinkConfig,
) -> Result<RealReport<BerenbrinkReport>, ModelError> {
    /// [`berenbrink`] with `config`.
    struct Run<'a>(&'a BerenbrinkConfig);
    impl DequeVisitor for Run<'_> {
        type Output = Result<RealReport<BerenbrinkReport>, ModelError>;
        fn visit<D: WorkDeque>(self) -> Self::Output {
            berenbrink::<D>(self.0)
        }
    }
    deque.dispatch(Run(config))
}

/// Runs [`hendler_shavit`] over deque kind `deque` (any [`DequeKind`], as
/// for [`berenbrink_on`]).
pub fn hendler_shavit_on(
    deque: DequeKind,
    config: &HsConfig,
) -> Result<RealReport<HsReport>, ModelError> {
    /// [`hendler_shavit`] with `config`.
    struct Run<'a>(&'a HsConfig);
    impl DequeVisitor for Run<'_> {
        type Output = Result<RealReport<HsReport>, ModelError>;
        fn visit<D: WorkDeque>(self) -> Self::Output {
            hendler_shavit::<D>(self.0)
        }
    }
    deque.dispatch(Run(config))
}
