//! A pool of persistent worker threads that run one borrowed job at a time.
//!
//! [`Pool::broadcast`] hands a `&dyn Fn(usize)` to every worker and blocks
//! until each has returned from it. The job may borrow from the caller's
//! stack (the heap being marked, the mark store): the lifetime is erased for
//! the hand-off and restored by the guarantee that `broadcast` does not
//! return, or unwind, while any worker can still reach the job.

use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

/// A job as the workers see it: the caller's closure with its lifetime erased.
type ErasedJob = *const (dyn Fn(usize) + Sync + 'static);

struct State {
    /// Incremented once per broadcast; workers run each generation once.
    generation: u64,
    /// The current job, valid while `running > 0`.
    job: Option<SendPtr>,
    /// Workers that have not yet finished the current job.
    running: usize,
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
    /// Workers wait here for a new generation (or shutdown).
    start: Condvar,
    /// `broadcast` waits here for `running` to reach zero.
    done: Condvar,
}

/// Persistent worker threads, parked between jobs.
pub(crate) struct Pool {
    shared: std::sync::Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts `workers` threads named `stealmark-gc-<i>`.
    pub(crate) fn new(workers: usize) -> Pool {
        let shared = std::sync::Arc::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                running: 0,
                shutdown: false,
            }),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let threads = (0..workers)
            .map(|i| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("stealmark-gc-{i}"))
                    .spawn(move || worker_main(&shared, i))
                    .expect("failed to spawn a GC worker thread")
            })
            .collect();
        Pool { shared, threads }
    }

    /// The number of workers.
    pub(crate) fn workers(&self) -> usize {
        self.threads.len()
    }

    /// Runs `job(i)` on worker `i`, for every worker, and returns when all
    /// have returned. `job` must not panic (the engine catches panics inside
    /// its job and re-raises them in the caller).
    pub(crate) fn broadcast(&self, job: &(dyn Fn(usize) + Sync)) {
        let ptr: *const (dyn Fn(usize) + Sync + '_) = job;
        // SAFETY: only the lifetime changes (same fat-pointer layout). The
        // erased pointer is dereferenced by workers only between the
        // hand-off below and their decrement of `running`; we do not return
        // before `running == 0`, and nothing between here and that wait can
        // unwind (parking_lot locks do not poison, `notify_all` and `wait`
        // do not panic), so `job` outlives every use.
        let erased: ErasedJob = unsafe { std::mem::transmute(ptr) };
        let mut st = self.shared.state.lock();
        debug_assert_eq!(st.running, 0, "broadcast is not reentrant");
        st.job = Some(SendPtr(erased));
        st.running = self.threads.len();
        st.generation += 1;
        self.shared.start.notify_all();
        while st.running > 0 {
            self.shared.done.wait(&mut st);
        }
        st.job = None;
    }
}

fn worker_main(shared: &Shared, index: usize) {
    let mut seen = 0u64;
    loop {
        let job = {
            let mut st = shared.state.lock();
            while st.generation == seen && !st.shutdown {
                shared.start.wait(&mut st);
            }
            if st.shutdown {
                return;
            }
            seen = st.generation;
            st.job.expect("a new generation always carries a job")
        };
        // SAFETY: `broadcast` keeps the job alive until this worker has
        // decremented `running` below, which happens after the call returns.
        // The mutex acquire above orders the caller's writes before our reads.
        let f = unsafe { &*job.0 };
        f(index);
        let mut st = shared.state.lock();
        st.running -= 1;
        if st.running == 0 {
            shared.done.notify_one();
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn broadcast_runs_every_worker_once_per_call_with_borrowed_data() {
        let pool = Pool::new(3);
        for round in 0..100usize {
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
}
