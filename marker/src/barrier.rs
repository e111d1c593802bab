//! A barrier for the workers of one step: spin, yield, then park; and
//! abortable, so that a worker that panicked before arriving cannot leave
//! the others waiting.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crossbeam_utils::{Backoff, CachePadded};
use parking_lot::{Condvar, Mutex};

/// Successive barriers of one step's workers (made fresh for each step).
pub(crate) struct Barrier {
    /// Arrivals, over every round of the step.
    arrived: CachePadded<AtomicUsize>,
    /// Set when a worker panicked: waiting ends, unsuccessfully.
    aborted: AtomicBool,
    sleep: Mutex<()>,
    wake: Condvar,
}

impl Barrier {
    pub(crate) fn new() -> Barrier {
        Barrier {
            arrived: CachePadded::new(AtomicUsize::new(0)),
            aborted: AtomicBool::new(false),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Arrives at round `round` (1, 2, ... within the step) of `n` workers
    /// and waits until all `n` have arrived. Returns `false` if the step was
    /// aborted instead. Everything a worker wrote before arriving happens
    /// before what any worker does after a successful wait.
    pub(crate) fn wait(&self, round: usize, n: usize) -> bool {
        let target = round * n;
        // AcqRel: the release half publishes this worker's writes, the
        // acquire half (and the Acquire loads below) take the others'.
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 >= target {
            // The last to arrive: wake any that parked. Under the lock, which
            // a parking worker holds between its check and its wait.
            let _guard = self.sleep.lock();
            self.wake.notify_all();
            return true;
        }
        let done = || self.arrived.load(Ordering::Acquire) >= target;
        // Acquire (pairs with the Release store in `abort`).
        let aborted = || self.aborted.load(Ordering::Acquire);
        let backoff = Backoff::new();
        loop {
            if done() {
                return true;
            }
            if aborted() {
                return false;
            }
            if backoff.is_completed() {
                let mut guard = self.sleep.lock();
                while !done() && !aborted() {
                    self.wake.wait(&mut guard);
                }
            } else {
                backoff.snooze();
            }
        }
    }

    /// Ends every wait, now and later, unsuccessfully.
    pub(crate) fn abort(&self) {
        // Release (pairs with the Acquire load in `wait`).
        self.aborted.store(true, Ordering::Release);
        let _guard = self.sleep.lock();
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_wait_for_everyone_and_abort_releases_waiters() {
        let b = Barrier::new();
        let counts: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for _ in 0..5 {
                s.spawn(|| {
                    for (round, c) in counts.iter().enumerate() {
                        c.fetch_add(1, Ordering::Relaxed);
                        assert!(b.wait(round + 1, 5));
                        assert_eq!(c.load(Ordering::Relaxed), 5);
                    }
                });
            }
        });
        let b = Barrier::new();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| b.wait(1, 2));
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.abort();
            assert!(!waiter.join().unwrap());
        });
    }
}
