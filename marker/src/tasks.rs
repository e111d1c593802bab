//! [`Marker::run_tasks`]: the runtime's own parallel work (its sweep, say)
//! on the threads the marker keeps for marking, between collections.
//!
//! A runtime that marks in parallel usually sweeps sequentially: the
//! marker's threads sit parked while one thread walks the whole heap again.
//! HotSpot, MMTk and cppgc sweep with their GC threads too. Lending them out
//! needs no new threads and no second pool: the tasks run as one more job of
//! the marker's [`Pool`](crate::pool::Pool), handed out by an index counter
//! so that a thread that finishes a short task takes the next one.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::marker::Marker;
use crate::sync::{AtomicUsize, Mutex, Ordering};

impl Marker {
    /// Runs `task(i)` once for every `i` in `0..tasks`, spread over the
    /// marker's workers (the calling thread is one of them), and returns
    /// when every task has returned.
    ///
    /// Tasks are handed out in index order, one at a time, to whichever
    /// worker is free, so a runtime that splits its work into a few times
    /// more tasks than workers gets them balanced. With one worker, or one
    /// task, every task runs on the calling thread and no other thread is
    /// woken.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use stealmark_marker::{Marker, MarkerConfig};
    ///
    /// let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    /// let sums: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
    /// marker.run_tasks(sums.len(), |i| {
    ///     let part = (i as u64 * 1000..(i as u64 + 1) * 1000).sum();
    ///     sums[i].store(part, Ordering::Relaxed);
    /// });
    /// let total: u64 = sums.iter().map(|s| s.load(Ordering::Relaxed)).sum();
    /// assert_eq!(total, (0..8000).sum());
    /// ```
    ///
    /// # Panics
    ///
    /// If a task panics, the other tasks still run, and the first panic is
    /// raised again on the calling thread once every worker is back. The
    /// marker stays usable.
    pub fn run_tasks<F: Fn(usize) + Sync>(&mut self, tasks: usize, task: F) {
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
        let work = |_worker: usize| loop {
            // Relaxed: the counter only hands out indices, each once (an
            // atomic increment never returns a value twice). What the tasks
            // wrote is published to the caller by the pool's completion: each
            // worker's Release decrement of its pending count, paired with
            // the caller's Acquire load that sees zero.
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= tasks {
                break;
            }
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| task(i))) {
                failed.lock().get_or_insert(payload);
            }
        };
        if tasks <= 1 || self.pool().workers() == 1 {
            work(0);
        } else {
            self.pool().broadcast(&work);
        }
        if let Some(payload) = failed.into_inner() {
            resume_unwind(payload);
        }
    }
}
