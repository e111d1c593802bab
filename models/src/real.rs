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

use std::sync::atomic::Ordering;

use rand::Rng;
use serde::Serialize;
use stealmark_deques::{DequeKind, DequeVisitor, Owner, Thief, WorkDeque};

use crate::berenbrink::{BerenbrinkConfig, BerenbrinkReport, StealFunction};
use crate::hendler_shavit::{HsConfig, HsReport, HsSteal, RatioTracker, PRODUCER_TASKS};
use crate::ModelError;

mod workers;

use workers::run_workers;

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
    let (loads, totals) = run_workers::<D, _, _>(n, capacity, config.seed, |seat, rng| {
        let (i, shared) = (seat.worker, seat.shared);
        let mut loads = (i == 0).then(Vec::new);
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
                        StealFunction::Half | StealFunction::Fraction(_) => seat.steal_half(k),
                    }
                }
            }
            if shared.barrier.wait().is_err() {
                break;
            }
            seat.serve();
            // SAFETY: no thief is inside a steal from this deque. Steals
            // happen only between the first and the second wait of a step.
            // The second wait returned `Ok`, so every worker had arrived
            // there (StepBarrier lets a wait pass only when all parties
            // have arrived; one that has left the loop never arrives
            // again): all steals of this step have returned. Next step's
            // steals start after a first wait that cannot pass before we
            // arrive at it, after this call.
            unsafe { seat.owner.quiesce() };
            seat.publish_len();
            if shared.barrier.wait().is_err() {
                break;
            }
            if let Some(l) = loads.as_mut() {
                l.push(shared.total());
            }
            if shared.failed() {
                break;
            }
        }
        loads
    })?;
    // Worker 0 kept the loads.
    let loads = loads.into_iter().flatten().next().unwrap_or_default();
    let report = BerenbrinkReport::from_loads(
        *config,
        &loads,
        totals.pushed,
        totals.popped,
        totals.stats.items_stolen,
    );
    let conserved = totals.conserved() && report.final_total_load == totals.final_lens;
    Ok(totals.report::<D, _>(report, conserved))
}

/// Runs the Hendler-Shavit workload on `n` threads over deque kind `D`.
pub fn hendler_shavit<D: WorkDeque>(config: &HsConfig) -> Result<RealReport<HsReport>, ModelError> {
    config.validate()?;
    check_threads(config.processors, config.steps)?;
    let n = config.processors;
    let producers = config.producers();
    let capacity = (PRODUCER_TASKS as usize * config.steps as usize + 1).clamp(64, MAX_CAPACITY);
    let (trackers, totals) = run_workers::<D, _, _>(n, capacity, config.seed, |seat, rng| {
        let (i, shared) = (seat.worker, seat.shared);
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
            // SAFETY: no thief is inside a steal from this deque. Steals
            // happen only before the first wait of a step. That wait
            // returned `Ok`, so every worker had arrived there (StepBarrier
            // lets a wait pass only when all parties have arrived; one that
            // has left the loop never arrives again): all steals of this
            // step have returned. Next step's steals start after the second
            // wait, which cannot pass before we arrive at it, after this
            // call.
            unsafe { seat.owner.quiesce() };
            seat.publish_len();
            if shared.barrier.wait().is_err() {
                break;
            }
            if shared.failed() {
                break;
            }
        }
        tracker
    })?;
    let tracker = trackers
        .into_iter()
        .flatten()
        .next()
        .ok_or_else(|| ModelError::WorkerPanicked("worker 0 kept no ratios".into()))?;
    let report = tracker.finish(
        *config,
        totals.stats.steal_successes,
        totals.stats.items_stolen,
    );
    let conserved = totals.conserved();
    Ok(totals.report::<D, _>(report, conserved))
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
