//! A pool of persistent worker threads that run one borrowed job at a time.
//!
//! [`Pool::broadcast`] runs a `&dyn Fn(usize)` once per worker and returns
//! when every worker has returned from it. Worker 0 is the calling thread
//! itself (the collector's coordinating thread does its share of marking, as
//! the VM thread of a stop-the-world collector would); workers `1..n` are
//! persistent threads parked between jobs. The job may borrow from the
//! caller's stack (the heap being marked, the mark store): the lifetime is
//! erased for the hand-off and restored by the guarantee that `broadcast`
//! does not return, or unwind, while any worker can still reach the job.
//!
//! Completion is an atomic countdown that the caller, back from its own
//! share, spins on briefly before it blocks: the other workers usually finish
//! within microseconds of it, and a blocked caller would add a futex wake-up
//! (tens of microseconds on a virtual machine) to every pause.
//!
//! For the same reason a thread back from a job lingers, watching for the
//! next one, for up to [`LINGER`] before it blocks on the pool's condition
//! variable: the steps of one pause (a cycle's remark, a collection's contract
//! steps) follow each other within microseconds, and a thread that is still
//! watching starts the next step without being woken.

use crate::sync::thread::{self, JoinHandle};
use crate::sync::{branch, Arc, AtomicUsize, Backoff, Condvar, Mutex, Ordering};
#[cfg(not(loom))]
use std::time::{Duration, Instant};

/// How long a thread back from a job watches for the next one before it
/// blocks (yielding its core while it watches). Longer than the gap between
/// the steps of one pause; shorter than a mutator's run between pauses.
#[cfg(not(loom))]
const LINGER: Duration = Duration::from_micros(50);

/// A job as the workers see it: the caller's closure with its lifetime erased.
type ErasedJob = *const (dyn Fn(usize) + Sync + 'static);

struct State {
    /// Incremented once per broadcast; workers run each generation once.
    generation: u64,
    /// The current job, valid while `pending > 0`.
    job: Option<SendPtr>,
    shutdown: bool,
}

/// The job pointer, sent to the workers under the pool's mutex.
#[derive(Clone, Copy)]
struct SendPtr(ErasedJob);

// SAFETY: the pointee is `Sync` (the job's type says so), so sharing a
// pointer to it with other threads is sound; `broadcast` keeps it alive.
unsafe impl Send for SendPtr {}

struct Shared {
    state: Mutex<State>,
    /// Threads that have not yet finished the current job.
    pending: AtomicUsize,
    /// The latest generation, mirrored outside the mutex for the threads
    /// that linger (a hint: the job itself is read under the mutex).
    announced: AtomicUsize,
    /// Threads wait here for a new generation (or shutdown).
    start: Condvar,
    /// `broadcast` waits here (after spinning) for `pending` to reach zero.
    done: Condvar,
}

/// Persistent worker threads; see the module documentation.
///
/// `pub` only for the loom models (`crate::sync::api`); the module is private.
pub struct Pool {
    shared: Arc<Shared>,
    /// Workers `1..n`; worker 0 is the thread that calls `broadcast`.
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts `workers - 1` threads, parked until the first broadcast (the
    /// caller of `broadcast` is worker 0). `workers` is at least 1.
    pub fn new(workers: usize) -> Pool {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                shutdown: false,
            }),
            pending: AtomicUsize::new(0),
            announced: AtomicUsize::new(0),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let threads = (1..workers.max(1))
            .map(|i| {
                let shared = shared.clone();
                thread::Builder::new()
                    .name(format!("stealmark-gc-{i}"))
                    .spawn(move || worker_main(&shared, i))
                    .expect("failed to spawn a GC worker thread")
            })
            .collect();
        Pool { shared, threads }
    }

    /// The number of workers, the calling thread included.
    pub fn workers(&self) -> usize {
        self.threads.len() + 1
    }

    /// Runs `job(i)` for every worker `i`, `job(0)` on the calling thread,
    /// and returns when all have returned. If `job(0)` unwinds, the unwinding
    /// waits for the other workers first (the engine's job catches its own
    /// panics, so this is a safety net, not the error path).
    pub fn broadcast(&self, job: &(dyn Fn(usize) + Sync)) {
        if !self.threads.is_empty() {
            let ptr: *const (dyn Fn(usize) + Sync + '_) = job;
            // SAFETY: only the lifetime changes (same fat-pointer layout).
            // The erased pointer is dereferenced by the threads only between
            // the hand-off below and their decrement of `pending`. `wait`
            // returns only once `pending == 0`, and it runs on every path out
            // of this function, unwinding included (`WaitOnDrop`), so `job`
            // outlives every use.
            let erased: ErasedJob = unsafe { std::mem::transmute(ptr) };
            let mut st = self.shared.state.lock();
            // Relaxed: a sanity check only. The previous broadcast's wait
            // saw zero with an Acquire load on this thread, and nothing
            // increments `pending` but this thread.
            debug_assert_eq!(
                self.shared.pending.load(Ordering::Relaxed),
                0,
                "broadcast is not reentrant"
            );
            st.job = Some(SendPtr(erased));
            // Relaxed: published with the job by the mutex, which each thread
            // takes before it reads the job and later decrements `pending`.
            self.shared
                .pending
                .store(self.threads.len(), Ordering::Relaxed);
            st.generation += 1;
            // Relaxed: a hint for the lingering threads, who then take the
            // mutex (released below) and read the generation and the job
            // under it.
            self.shared
                .announced
                .store(st.generation as usize, Ordering::Relaxed);
            self.shared.start.notify_all();
        }
        let waiter = WaitOnDrop(&self.shared);
        job(0);
        drop(waiter);
    }
}

/// Waits, when dropped, until no thread can reach the current job.
struct WaitOnDrop<'a>(&'a Shared);

impl Drop for WaitOnDrop<'_> {
    fn drop(&mut self) {
        let shared = self.0;
        // Read before any loom operation: loom may switch threads at each.
        #[cfg(loom)]
        if std::thread::panicking() {
            branch!(PoolWaitUnwinding);
        }
        // Acquire (pairs with the Release decrements in `worker_main`): once
        // zero is seen, every thread's work on the job happened before what
        // the caller does next.
        let finished = || shared.pending.load(Ordering::Acquire) == 0;
        let backoff = Backoff::new();
        #[cfg(loom)]
        let mut spun = false;
        while !finished() {
            if backoff.is_completed() {
                let mut st = shared.state.lock();
                // Re-checked under the lock that the last thread takes before
                // it notifies, so its wake-up cannot be missed.
                #[cfg(loom)]
                if finished() {
                    branch!(PoolWaitDoneUnderLock);
                }
                while !finished() {
                    shared.done.wait(&mut st);
                    branch!(PoolWaitWoken);
                }
                st.job = None;
                return;
            }
            backoff.snooze();
            #[cfg(loom)]
            {
                spun = true;
            }
        }
        #[cfg(loom)]
        if spun {
            branch!(PoolWaitDoneAfterSpin);
        } else {
            branch!(PoolWaitDoneAtOnce);
        }
        shared.state.lock().job = None;
    }
}

fn worker_main(shared: &Shared, index: usize) {
    let mut seen = 0u64;
    loop {
        linger(shared, seen);
        let job = {
            let mut st = shared.state.lock();
            #[cfg(loom)]
            let waited = st.generation == seen && !st.shutdown;
            while st.generation == seen && !st.shutdown {
                shared.start.wait(&mut st);
            }
            if st.shutdown {
                branch!(PoolShutdown);
                return;
            }
            #[cfg(loom)]
            if waited {
                branch!(PoolJobAfterWait);
            } else {
                branch!(PoolJobFoundAtOnce);
            }
            seen = st.generation;
            st.job.expect("a new generation always carries a job")
        };
        // SAFETY: `broadcast` keeps the job alive until this thread has
        // decremented `pending` below, which happens after the call returns.
        // The mutex acquire above orders the caller's writes before our reads.
        let f = unsafe { &*job.0 };
        f(index);
        // Release (pairs with the Acquire load in `WaitOnDrop`): this
        // thread's work on the job happens before the caller returns. The job
        // is not touched after this point.
        if shared.pending.fetch_sub(1, Ordering::Release) == 1 {
            branch!(PoolLastDecrement);
            // Under the lock, so a caller that saw `pending > 0` under it is
            // already waiting (see `WaitOnDrop`).
            let _st = shared.state.lock();
            shared.done.notify_one();
        }
    }
}

/// Watches for a generation after `seen` for up to [`LINGER`]; the caller
/// then takes the mutex either way. Under loom one look stands for the
/// watch (every look is the same load), which keeps the models' schedules
/// few.
fn linger(shared: &Shared, seen: u64) {
    // Relaxed: a hint only (see `announced`).
    let announced = || shared.announced.load(Ordering::Relaxed) != seen as usize;
    #[cfg(not(loom))]
    {
        let backoff = Backoff::new();
        let deadline = Instant::now() + LINGER;
        while !announced() {
            if !backoff.is_completed() {
                backoff.snooze();
            } else if Instant::now() < deadline {
                std::thread::yield_now();
            } else {
                return;
            }
        }
    }
    #[cfg(loom)]
    if !announced() {
        return;
    }
    branch!(PoolJobSeenLingering);
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.state.lock().shutdown = true;
        self.shared.start.notify_all();
        for t in self.threads.drain(..) {
            // A worker cannot panic outside a job, and jobs do not panic.
            let _ = t.join();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn broadcast_runs_every_worker_once_per_call_with_borrowed_data() {
        let pool = Pool::new(3);
        for round in 0..if cfg!(miri) { 5 } else { 100usize } {
            let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
            let borrowed = &hits;
            pool.broadcast(&|i| {
                borrowed[i].fetch_add(round + 1, Ordering::Relaxed);
            });
            for h in &hits {
                assert_eq!(h.load(Ordering::Relaxed), round + 1);
            }
        }
        assert_eq!(pool.workers(), 3);
    }

    #[test]
    fn worker_zero_is_the_calling_thread_and_the_others_are_not() {
        let caller = std::thread::current().id();
        for workers in [1, 4] {
            let pool = Pool::new(workers);
            let ids = Mutex::new(vec![None; workers]);
            pool.broadcast(&|i| ids.lock()[i] = Some(std::thread::current().id()));
            let ids = ids.into_inner();
            assert_eq!(ids[0], Some(caller));
            for id in &ids[1..] {
                assert!(id.is_some() && *id != Some(caller), "{ids:?}");
            }
        }
    }

    #[test]
    fn an_unwinding_worker_zero_waits_for_the_others() {
        let pool = Pool::new(3);
        let finished = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.broadcast(&|i| {
                if i == 0 {
                    panic!("worker 0 fails at once");
                }
                std::thread::sleep(std::time::Duration::from_millis(30));
                finished.fetch_add(1, Ordering::Relaxed);
            });
        }));
        assert!(result.is_err());
        assert_eq!(finished.load(Ordering::Relaxed), 2);
        // The pool is still usable after the unwinding.
        let hits = AtomicUsize::new(0);
        pool.broadcast(&|_| {
            hits.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(hits.load(Ordering::Relaxed), 3);
    }
}
