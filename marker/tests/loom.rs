//! loom models of the marker's own concurrency: the termination protocol
//! (`src/termination.rs`) driven by its client as the workers run it
//! (`src/worker/stealing.rs`), and the pool's job hand-off and wait
//! (`src/pool.rs`). The models run the real `Termination` and `Pool` on
//! loom's primitives through `src/sync.rs`.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p stealmark-marker --release --test loom
//! ```
//!
//! Each model (declared with [`models!`]) has its own preemption bound (the
//! small ones are explored without a bound, exhaustively;
//! `LOOM_MAX_PREEMPTIONS` overrides them all). Each model names the branches
//! it must reach (`sync::branches`, counted in the code under test) and
//! fails if one of them was taken in none of its explored executions; every
//! counted branch is some model's target (`every_branch_is_a_target`), and
//! `--nocapture` prints every count and each model's time.
#![cfg(loom)]

use std::sync::{Mutex as StdMutex, MutexGuard as StdMutexGuard, PoisonError};
use std::time::Instant;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

use stealmark_marker::sync::api::{Pool, Reactivate, Termination};
use stealmark_marker::sync::branches::{self, Branch};
use stealmark_marker::sync::Backoff;

/// The branch counters are process-wide: one model at a time.
static SERIAL: StdMutex<()> = StdMutex::new(());

fn serial() -> StdMutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Explores `f` under the preemption bound `bound` (`None`: every
/// interleaving), then checks that each branch of `must_reach` was taken in
/// at least one execution.
fn model(
    name: &str,
    bound: Option<usize>,
    must_reach: &[Branch],
    f: impl Fn() + Sync + Send + 'static,
) {
    let _serial = serial();
    branches::reset();
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = bound;
    }
    let start = Instant::now();
    builder.check(f);
    let counts: Vec<(Branch, usize)> = Branch::ALL
        .iter()
        .map(|&b| (b, branches::hits(b)))
        .filter(|&(_, n)| n > 0)
        .collect();
    eprintln!(
        "{name}: {:.1} s, preemption bound {:?}, branches {counts:?}",
        start.elapsed().as_secs_f64(),
        builder.preemption_bound
    );
    let missed: Vec<Branch> = must_reach
        .iter()
        .copied()
        .filter(|&b| branches::hits(b) == 0)
        .collect();
    assert!(
        missed.is_empty(),
        "{name}: branches never taken: {missed:?}"
    );
}

/// Declares models: each `fn NAME() bound B, reaches [BRANCH, ...] BODY`
/// becomes a `#[test]` NAME that runs [`model`] on BODY with the bound B
/// and those branches of [`Branch`]. `TARGETS:` names a constant that lists
/// the branches of every model declared, for `every_branch_is_a_target`.
macro_rules! models {
    ($targets:ident: $(
        $(#[$meta:meta])*
        fn $name:ident() bound $bound:expr, reaches [$($branch:ident),* $(,)?] $body:block
    )*) => {
        $(
            $(#[$meta])*
            #[test]
            fn $name() {
                model(stringify!($name), $bound, &[$(Branch::$branch),*], || $body);
            }
        )*

        /// The branches each model declared here must reach.
        const $targets: &[&[Branch]] = &[$(&[$(Branch::$branch),*]),*];
    };
}

// ---------------------------------------------------------------------------
// Termination
// ---------------------------------------------------------------------------

/// A tiny stand-in for the workers' deques and the heap: `shared` items that
/// anyone may steal, and a budget of children that scanning creates.
struct Work {
    /// Items in the (one, shared) fake deque.
    shared: AtomicUsize,
    /// Items that exist: in `shared`, or held by a worker that took them
    /// and has not finished scanning them.
    live: AtomicUsize,
    /// Children still to be created; scanning an item creates one while
    /// the budget lasts.
    budget: AtomicUsize,
    /// Items scanned.
    scanned: AtomicUsize,
    /// `go_idle` calls that returned `true` (the last worker out).
    last_out: AtomicUsize,
}

impl Work {
    /// `live` items held by the workers, none shared yet, and a budget of
    /// `budget` children.
    fn new(live: usize, budget: usize) -> Arc<Work> {
        Arc::new(Work {
            shared: AtomicUsize::new(0),
            live: AtomicUsize::new(live),
            budget: AtomicUsize::new(budget),
            scanned: AtomicUsize::new(0),
            last_out: AtomicUsize::new(0),
        })
    }

    /// Puts an item (already counted live) on the shared deque and, like
    /// `periodic`, wakes a parked worker if the hint shows one.
    fn share(&self, t: &Termination) {
        self.shared.fetch_add(1, SeqCst);
        if t.sleepers() > 0 {
            t.wake(1);
        }
    }

    /// Steals one item from the shared deque (the client's `refill`).
    fn steal(&self) -> bool {
        self.shared
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// The phase is over for this worker: no item may exist anywhere, and
    /// none may be created again (nobody holds one to scan).
    fn check_done(&self) {
        assert_eq!(self.live.load(SeqCst), 0, "done while work exists");
        assert_eq!(self.shared.load(SeqCst), 0, "done with stealable work");
    }
}

/// One worker of the phase, as `Worker::trace_to_termination` drives the
/// protocol: drain what it holds (scanning creates children into the shared
/// deque and, like `periodic`, wakes a parked worker if the hint shows
/// one), then refill by stealing, then idle. Returns when the phase is over.
fn worker(t: &Termination, w: &Work, mut held: usize) {
    loop {
        while held > 0 {
            if w.budget
                .fetch_update(SeqCst, SeqCst, |b| b.checked_sub(1))
                .is_ok()
            {
                // Counted live before anyone can steal it.
                w.live.fetch_add(1, SeqCst);
                w.share(t);
            }
            held -= 1;
            w.scanned.fetch_add(1, SeqCst);
            w.live.fetch_sub(1, SeqCst);
        }
        t.hungry_enter();
        if w.steal() {
            held += 1;
            t.hungry_leave();
            continue;
        }
        let found = idle(t, w, &mut held);
        t.hungry_leave();
        if !found {
            w.check_done();
            return;
        }
    }
}

/// `Worker::idle` (`worker/stealing.rs`), with the shared fake deque as every victim:
/// go idle; then probe (spin, yield, park) until the phase is over or a
/// probe sees work, reactivate and refill. `true` when it holds work again.
fn idle(t: &Termination, w: &Work, held: &mut usize) -> bool {
    loop {
        if t.go_idle() {
            w.last_out.fetch_add(1, SeqCst);
            return false;
        }
        let backoff = Backoff::new();
        loop {
            if t.is_done() {
                return false;
            }
            // The probe is a hint: relaxed, as a victim's length is.
            let seen = w.shared.load(std::sync::atomic::Ordering::Relaxed) > 0;
            if seen {
                match t.try_reactivate() {
                    Reactivate::Done => return false,
                    Reactivate::Active => {
                        if w.steal() {
                            *held += 1;
                            return true;
                        }
                        break;
                    }
                }
            }
            if backoff.is_completed() {
                t.park();
                backoff.reset();
            } else {
                backoff.snooze();
            }
        }
    }
}

/// The protocol, reset for a phase of `workers` workers.
fn termination(workers: usize) -> Arc<Termination> {
    let t = Arc::new(Termination::new());
    t.reset(workers);
    t
}

/// Runs `f` on a model thread with its own handles on `t` and `w`.
fn spawn<R: 'static>(
    t: &Arc<Termination>,
    w: &Arc<Work>,
    f: impl FnOnce(&Termination, &Work) -> R + Send + 'static,
) -> thread::JoinHandle<R> {
    let (t, w) = (t.clone(), w.clone());
    thread::spawn(move || f(&t, &w))
}

/// Waits until a worker has parked (the sleeper hint shows it), so that
/// every execution goes on from a parked worker.
fn wait_for_sleeper(t: &Termination) {
    while t.sleepers() == 0 {
        thread::yield_now();
    }
}

/// A phase of `held.len()` workers, worker `i` starting with `held[i]`
/// items, scanning creating up to `budget` children in all.
fn phase(held: &'static [usize], budget: usize) {
    let t = termination(held.len());
    let initial: usize = held.iter().sum();
    let w = Work::new(initial, budget);
    let others: Vec<_> = held[1..]
        .iter()
        .map(|&h| spawn(&t, &w, move |t, w| worker(t, w, h)))
        .collect();
    worker(&t, &w, held[0]);
    for o in others {
        o.join().unwrap();
    }
    // Every item scanned exactly once; done set by exactly one last worker.
    assert_eq!(w.scanned.load(SeqCst), initial + budget);
    assert_eq!(w.budget.load(SeqCst), 0);
    assert_eq!(w.last_out.load(SeqCst), 1, "the last worker out sets done");
    assert!(t.is_done());
    assert_eq!(t.sleepers(), 0);
    assert_eq!(t.hungry(), 0);
}

/// Worker 0 shares an item, then panics with work in hand
/// (`Phase::run_worker` catches the panic and calls `abort`): it never goes
/// idle, so `active` never reaches zero, and worker 1 — idle, busy with the
/// shared item, or parked (`after_park`: worker 0 waits for the sleeper hint
/// before it aborts) — must still stop.
fn abort(after_park: bool) {
    let t = termination(2);
    let w = Work::new(1, 0);
    let other = spawn(&t, &w, |t, w| {
        let mut held = 0;
        loop {
            if !idle(t, w, &mut held) {
                return held;
            }
            // It stole the item: it scans it and idles again.
            held -= 1;
            w.scanned.fetch_add(1, SeqCst);
            w.live.fetch_sub(1, SeqCst);
        }
    });
    if after_park {
        wait_for_sleeper(&t);
    }
    w.share(&t);
    t.abort();
    assert_eq!(other.join().unwrap(), 0);
    assert!(t.is_done());
    assert_eq!(w.last_out.load(SeqCst), 0, "no worker was the last out");
}

models! {
    TERMINATION_TARGETS:

    /// Two workers, one item and one child: worker 1 starts idle, steals the
    /// child or sees it taken back by worker 0, races worker 0's last
    /// `go_idle` with its reactivation (winning from one, or losing to zero),
    /// and parks until the end.
    fn termination_two_workers_one_child() bound Some(6), reaches [
        GoIdleLast, GoIdleNotLast, ReactivateFromOne, ReactivateDone,
        ReactivateLostToLastIdle, ParkSawDoneUnderLock, ParkWokenByDone,
    ] {
        phase(&[1, 0], 1)
    }

    /// Two workers, each starting with an item, two children: both create
    /// work and go idle, either may be the last out, and a parked worker is
    /// woken by the other's wake-up or by the end.
    fn termination_two_workers_two_children() bound Some(5), reaches [
        GoIdleLast, GoIdleNotLast, ReactivateFromOne, ReactivateDone,
        ReactivateLostToLastIdle, ParkSawDoneUnderLock, ParkWokenByDone, ParkWokenByWake,
        WakeNotified,
    ] {
        phase(&[1, 1], 2)
    }

    /// A busy worker shares two items, one at a time, with an idle worker
    /// that has parked (it waits for the sleeper hint first, so that every
    /// execution starts from a parked worker), waking it after each as
    /// `periodic` does; then both run as workers. The first wake-up finds the
    /// sleeper; the second may find it already gone (its hint stale), or
    /// parked again.
    fn termination_wake_parked_worker() bound Some(5), reaches [
        GoIdleLast, ReactivateFromOne, ParkWokenByWake, ParkWokenByDone, WakeNotified,
        WakeFoundNoSleeper,
    ] {
        let t = termination(2);
        let w = Work::new(2, 0);
        let idle_worker = spawn(&t, &w, |t, w| worker(t, w, 0));
        wait_for_sleeper(&t);
        // Worker 0 holds two items in its private stack and shares them.
        for _ in 0..2 {
            w.share(&t);
        }
        worker(&t, &w, 0);
        idle_worker.join().unwrap();
        assert_eq!(w.scanned.load(SeqCst), 2);
        assert_eq!(w.last_out.load(SeqCst), 1);
        assert_eq!(t.sleepers(), 0);
    }

    /// Three workers, one item, one child: two idle workers compete for the
    /// child, reactivate from one and from two (a CAS that loses to the
    /// other's reactivation retries), and both must see the end.
    fn termination_three_workers_one_child() bound Some(2), reaches [
        GoIdleLast, ReactivateFromOne, ReactivateFromMany, ReactivateRetried, ReactivateDone,
        ParkSawDoneUnderLock, ParkWokenByDone,
    ] {
        phase(&[1, 0, 0], 1)
    }

    /// `abort` while the other worker idles, probes or takes the shared item.
    fn termination_abort_stops_idle_worker() bound None, reaches [
        Abort, GoIdleNotLast, ReactivateFromOne,
    ] {
        abort(false)
    }

    /// `abort` while the other worker is parked, or just woken by the share.
    fn termination_abort_wakes_parked_worker() bound None, reaches [
        Abort, ParkWokenByDone, ParkWokenByWake,
    ] {
        abort(true)
    }
}

// ---------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------

/// One cell per worker, written by that worker inside the job and read by
/// the caller after `broadcast`: loom reports a causality violation if a
/// worker's access is not ordered before the caller's (the caller returned
/// while a worker could still be in the job).
struct Cells(Vec<UnsafeCell<usize>>);

// SAFETY: worker `i` touches only cell `i`, inside the job; the caller
// touches the cells only outside `broadcast`. Whether those accesses are
// ordered is exactly what loom checks.
unsafe impl Sync for Cells {}

impl Cells {
    fn new(n: usize) -> Cells {
        Cells((0..n).map(|_| UnsafeCell::new(0)).collect())
    }

    /// The job's access: read, then write (so that both a write and a read
    /// of the worker must happen before the caller's next access).
    fn bump(&self, i: usize) {
        // SAFETY: see the `Sync` impl (loom checks it).
        self.0[i].with_mut(|p| unsafe { *p += 1 });
    }

    /// The caller's access after `broadcast`: every worker's count.
    fn take(&self) -> Vec<usize> {
        self.0
            .iter()
            // SAFETY: see the `Sync` impl (loom checks it).
            .map(|c| c.with_mut(|p| unsafe { std::mem::take(&mut *p) }))
            .collect()
    }
}

models! {
    POOL_TARGETS:

    /// Two broadcasts on a pool of two workers (the caller and one thread),
    /// then the pool's shutdown: each job runs once per worker, the caller
    /// returns only after the thread has left the job, whether the caller saw
    /// the countdown reach zero at once, after spinning, under the lock or
    /// after blocking.
    fn pool_two_broadcasts_then_shutdown() bound Some(6), reaches [
        PoolJobFoundAtOnce, PoolJobSeenLingering, PoolJobAfterWait, PoolShutdown,
        PoolLastDecrement, PoolWaitDoneAtOnce, PoolWaitDoneAfterSpin, PoolWaitDoneUnderLock, PoolWaitWoken,
    ] {
        let pool = Pool::new(2);
        assert_eq!(pool.workers(), 2);
        let cells = Cells::new(2);
        for _ in 0..2 {
            pool.broadcast(&|i| cells.bump(i));
            assert_eq!(cells.take(), [1, 1]);
        }
    }

    /// One broadcast on three workers: the countdown goes through two
    /// threads' decrements and only the last one notifies.
    fn pool_three_workers() bound Some(3), reaches [
        PoolLastDecrement, PoolWaitDoneAtOnce, PoolWaitWoken,
    ] {
        let pool = Pool::new(3);
        let cells = Cells::new(3);
        pool.broadcast(&|i| cells.bump(i));
        assert_eq!(cells.take(), [1, 1, 1]);
    }

    /// `job(0)` unwinds at once: the drop guard still waits until the thread
    /// has left the job before the unwinding leaves `broadcast` (the caller's
    /// access to the thread's cell after `catch_unwind` is ordered after the
    /// thread's), and the pool works afterwards.
    fn pool_unwinding_job_zero_waits() bound Some(6), reaches [
        PoolWaitUnwinding, PoolLastDecrement, PoolWaitWoken,
    ] {
        let pool = Pool::new(2);
        let cells = Cells::new(2);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.broadcast(&|i| {
                if i == 0 {
                    // No panic hook, no message: a plain unwind.
                    std::panic::resume_unwind(Box::new("job 0 fails"));
                }
                cells.bump(i);
            });
        }));
        assert!(result.is_err());
        assert_eq!(cells.take(), [0, 1]);
        pool.broadcast(&|i| cells.bump(i));
        assert_eq!(cells.take(), [1, 1]);
    }
}

/// Every counted branch is the target of some model.
#[test]
fn every_branch_is_a_target() {
    let missing: Vec<Branch> = Branch::ALL
        .iter()
        .copied()
        .filter(|b| {
            !TERMINATION_TARGETS
                .iter()
                .chain(POOL_TARGETS)
                .any(|targets| targets.contains(b))
        })
        .collect();
    assert!(missing.is_empty(), "branches no model targets: {missing:?}");
}
