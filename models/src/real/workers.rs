//! The worker threads of a real run: one per deque, each with its seat (its
//! deque's owner end and its counters), all sharing the thieves, the
//! published lengths and the step barrier.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rand_pcg::Pcg64;
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

use super::RealReport;
use crate::step_barrier::StepBarrier;
use crate::{rng, ModelError};

/// What every worker shares.
pub(super) struct Shared<T> {
    /// The thief end of every worker's deque.
    pub(super) thieves: Vec<T>,
    /// Every worker's deque length, as published at the end of a step.
    pub(super) lens: Vec<AtomicU64>,
    /// The barrier between the phases of a step.
    pub(super) barrier: StepBarrier,
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

    /// Whether a worker has failed the run (read after a barrier wait).
    pub(super) fn failed(&self) -> bool {
        // Relaxed: every store happened before a barrier wait that this
        // load follows (StepBarrier::wait synchronises all participants).
        self.failed.load(Ordering::Relaxed)
    }

    /// The sum of the published lengths (read after a barrier wait).
    pub(super) fn total(&self) -> u64 {
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
pub(super) struct Seat<'a, D: WorkDeque> {
    /// The owner end of this worker's deque.
    pub(super) owner: D::Owner,
    /// What every worker shares.
    pub(super) shared: &'a Shared<D::Thief>,
    /// This worker's index.
    pub(super) worker: usize,
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
    pub(super) fn generate(&mut self, step: u64) {
        if self.push(self.counts.pushed as usize, step) {
            self.counts.pushed += 1;
        }
    }

    /// Serves one task, if any.
    pub(super) fn serve(&mut self) {
        if self.owner.pop().is_some() {
            self.counts.popped += 1;
        }
    }

    /// Steals up to `count` items one at a time from worker `victim` (a
    /// stolen item moves: it is neither pushed nor popped anew). Stops at
    /// the first empty or lost steal.
    pub(super) fn steal_singles(&mut self, victim: usize, count: u64, step: u64) {
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
    pub(super) fn steal_half(&mut self, victim: usize) {
        self.shared.thieves[victim].steal_half(&mut self.owner, &mut self.counts.stats);
    }

    /// Publishes this deque's length for worker 0 (read after the next
    /// barrier wait).
    pub(super) fn publish_len(&self) {
        // Relaxed: read by worker 0 after the barrier wait that follows.
        self.shared.lens[self.worker].store(self.owner.len() as u64, Ordering::Relaxed);
    }
}

/// What all workers of a finished run did.
pub(super) struct Totals {
    /// Items pushed by generating (not by stealing).
    pub(super) pushed: u64,
    /// Items popped by serving.
    pub(super) popped: u64,
    /// Every worker's steal counters, merged.
    pub(super) stats: ThiefStats,
    /// The items left in the deques after the last step.
    pub(super) final_lens: u64,
}

impl Totals {
    /// Whether the items left are the items pushed minus the items popped.
    pub(super) fn conserved(&self) -> bool {
        self.pushed - self.popped == self.final_lens
    }

    /// The real run's report around the workload's `report`.
    pub(super) fn report<D: WorkDeque, R>(&self, report: R, conserved: bool) -> RealReport<R> {
        RealReport {
            deque: D::KIND.into(),
            report,
            steal_attempts: self.stats.steal_attempts,
            steal_successes: self.stats.steal_successes,
            steal_aborts: self.stats.steal_aborts,
            conserved,
        }
    }
}

/// Runs `n` worker threads, each owning a deque of kind `D` made for
/// `capacity` items and running `work` on its seat with its own generator
/// (derived from `seed`). Returns what each worker's `work` returned, in
/// worker order, and the totals; the first failure of a worker fails the
/// run.
pub(super) fn run_workers<D, T, F>(
    n: usize,
    capacity: usize,
    seed: u64,
    work: F,
) -> Result<(Vec<T>, Totals), ModelError>
where
    D: WorkDeque,
    T: Send,
    F: Fn(&mut Seat<'_, D>, &mut Pcg64) -> T + Sync,
{
    let (owners, thieves): (Vec<_>, Vec<_>) = (0..n).map(|_| D::with_capacity(capacity)).unzip();
    let shared = Shared::new(thieves);
    let done = std::thread::scope(|scope| {
        let handles: Vec<_> = owners
            .into_iter()
            .enumerate()
            .map(|(i, owner)| {
                let (shared, work) = (&shared, &work);
                scope.spawn(move || {
                    let _poison = shared.barrier.poison_on_panic();
                    let mut rng = rng::seeded(seed_for(seed, i));
                    let mut seat = Seat::<D>::new(owner, shared, i, capacity);
                    let out = work(&mut seat, &mut rng);
                    (seat.counts, out)
                })
            })
            .collect();
        join_all(handles)
    })?;
    let final_lens = shared.total();
    if let Some(err) = shared.into_error() {
        return Err(err);
    }
    let mut totals = Totals {
        pushed: 0,
        popped: 0,
        stats: ThiefStats::default(),
        final_lens,
    };
    let outs = done
        .into_iter()
        .map(|(counts, out)| {
            totals.stats.merge(&counts.stats);
            totals.pushed += counts.pushed;
            totals.popped += counts.popped;
            out
        })
        .collect();
    Ok((outs, totals))
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
