//! Termination detection and idle-worker parking.
//!
//! The protocol keeps one global status word, `active`: the number of
//! workers that may hold or create work. In short:
//!
//! - a worker decrements `active` only after it has found its deque, its
//!   prefetch FIFO and the shared overflow storage empty and failed to steal;
//! - an idle worker re-increments `active` (never from zero) *before* it
//!   steals, so every item is always held by an active worker;
//! - the worker whose decrement takes `active` to zero therefore knows that no
//!   work exists anywhere: it sets `done` and wakes the parked workers.
//!
//! No step scans all workers: an idle worker probes one random victim per
//! round, and the last worker out detects termination from the word alone.
//! Idle workers spin briefly, then yield, then park on a condition variable;
//! busy workers wake parked ones in proportion to their surplus.

use crate::sync::{branch, AtomicBool, AtomicUsize, CachePadded, Condvar, Mutex, Ordering};

/// The shared termination state of one mark phase (reset between phases).
///
/// `pub` only for the loom models (`crate::sync::api`); the module is private.
pub struct Termination {
    /// Workers counted active (the global status word).
    active: CachePadded<AtomicUsize>,
    /// Workers looking for work, for busy workers' sharing decisions.
    hungry: CachePadded<AtomicUsize>,
    /// Set once, by the worker that takes `active` to zero.
    done: CachePadded<AtomicBool>,
    /// Workers parked on `wake`; mirrors the count under `sleep` so that busy
    /// workers can test it without taking the lock.
    sleepers: CachePadded<AtomicUsize>,
    sleep: Mutex<usize>,
    wake: Condvar,
}

/// What an idle worker's probe found.
pub enum Reactivate {
    /// `active` was re-incremented: the worker may steal.
    Active,
    /// The phase has terminated.
    Done,
}

impl Termination {
    /// No worker counted active; [`Termination::reset`] starts a phase.
    // Public only under loom (`crate::sync::api`), where clippy asks for it.
    #[cfg_attr(loom, allow(clippy::new_without_default))]
    pub fn new() -> Termination {
        Termination {
            active: CachePadded::new(AtomicUsize::new(0)),
            hungry: CachePadded::new(AtomicUsize::new(0)),
            done: CachePadded::new(AtomicBool::new(false)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            sleep: Mutex::new(0),
            wake: Condvar::new(),
        }
    }

    /// Prepares a phase with `workers` active workers. Called while no
    /// worker runs (the pool's hand-off orders it before their first access).
    pub fn reset(&self, workers: usize) {
        // Relaxed: published to the workers by the pool's mutex.
        self.active.store(workers, Ordering::Relaxed);
        self.hungry.store(0, Ordering::Relaxed);
        self.done.store(false, Ordering::Relaxed);
        self.sleepers.store(0, Ordering::Relaxed);
        *self.sleep.lock() = 0;
    }

    /// Counts the caller idle. Returns `true` if it was the last active
    /// worker, in which case the phase is over (and everyone is woken).
    pub fn go_idle(&self) -> bool {
        // SeqCst (pairs with the SeqCst update in `try_reactivate`): all
        // changes of `active` form one total order, and the decrement comes
        // after this worker's emptiness checks in program order; the AcqRel
        // part makes every earlier decrement's worker history visible to the
        // worker that reaches zero.
        if self.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            branch!(GoIdleLast);
            // Release (pairs with the Acquire loads in `is_done`).
            self.done.store(true, Ordering::Release);
            let _guard = self.sleep.lock();
            self.wake.notify_all();
            true
        } else {
            branch!(GoIdleNotLast);
            false
        }
    }

    /// Ends the phase early (a worker panicked): every worker stops at its
    /// next idle check, and the caller re-raises the panic.
    pub fn abort(&self) {
        branch!(Abort);
        // Release (pairs with the Acquire loads in `is_done`).
        self.done.store(true, Ordering::Release);
        let _guard = self.sleep.lock();
        self.wake.notify_all();
    }

    /// Counts an idle worker active again so that it may steal, unless the
    /// phase has already terminated (`active` reached zero).
    pub fn try_reactivate(&self) -> Reactivate {
        // The loom models count which reads the CAS loop made.
        #[cfg(loom)]
        let mut reads = 0usize;
        // SeqCst: see `go_idle`. Never from zero: zero means terminated.
        let result = self
            .active
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |a| {
                #[cfg(loom)]
                {
                    reads += 1;
                }
                (a != 0).then_some(a + 1)
            });
        #[cfg(loom)]
        match result {
            Ok(1) => branch!(ReactivateFromOne),
            Ok(_) => branch!(ReactivateFromMany),
            Err(_) if reads == 1 => branch!(ReactivateDone),
            Err(_) => branch!(ReactivateLostToLastIdle),
        }
        #[cfg(loom)]
        if result.is_ok() && reads > 1 {
            branch!(ReactivateRetried);
        }
        match result {
            Ok(_) => Reactivate::Active,
            Err(_) => Reactivate::Done,
        }
    }

    /// Whether the phase has terminated.
    #[inline]
    pub fn is_done(&self) -> bool {
        // Acquire (pairs with the Release store in `go_idle`).
        self.done.load(Ordering::Acquire)
    }

    /// Counts the caller as looking for work (stealing or idle).
    #[inline]
    pub fn hungry_enter(&self) {
        // Relaxed: a hint for busy workers deciding how much to share; it
        // carries no data and liveness never depends on it.
        self.hungry.fetch_add(1, Ordering::Relaxed);
    }

    /// The caller has found work (or the phase is over).
    #[inline]
    pub fn hungry_leave(&self) {
        // Relaxed: see `hungry_enter`.
        self.hungry.fetch_sub(1, Ordering::Relaxed);
    }

    /// How many workers are looking for work (a cheap, possibly stale hint:
    /// written only when a worker runs out of work or finds some).
    #[inline]
    pub fn hungry(&self) -> usize {
        // Relaxed: see `hungry_enter`.
        self.hungry.load(Ordering::Relaxed)
    }

    /// Whether any worker is parked (a cheap, possibly stale hint).
    #[inline]
    pub fn sleepers(&self) -> usize {
        // Relaxed: a hint; a missed sleeper is woken by a later check or at
        // termination, and liveness never depends on it.
        self.sleepers.load(Ordering::Relaxed)
    }

    /// Parks the calling idle worker until woken or the phase ends. Returns
    /// immediately if the phase has ended.
    pub fn park(&self) {
        let mut sleeping = self.sleep.lock();
        // Checked under the lock that `go_idle` takes before notifying, so
        // the final wake-up cannot be missed.
        if self.is_done() {
            branch!(ParkSawDoneUnderLock);
            return;
        }
        *sleeping += 1;
        self.sleepers.store(*sleeping, Ordering::Relaxed);
        self.wake.wait(&mut sleeping);
        #[cfg(loom)]
        if self.is_done() {
            branch!(ParkWokenByDone);
        } else {
            branch!(ParkWokenByWake);
        }
        *sleeping -= 1;
        self.sleepers.store(*sleeping, Ordering::Relaxed);
    }

    /// Wakes up to `n` parked workers; returns how many were woken.
    pub fn wake(&self, n: usize) -> usize {
        let sleeping = self.sleep.lock();
        let k = n.min(*sleeping);
        #[cfg(loom)]
        if k == 0 {
            branch!(WakeFoundNoSleeper);
        } else {
            branch!(WakeNotified);
        }
        for _ in 0..k {
            self.wake.notify_one();
        }
        k
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn last_idle_worker_terminates_and_reactivation_never_revives() {
        let t = Termination::new();
        t.reset(2);
        assert!(!t.go_idle());
        assert!(matches!(t.try_reactivate(), Reactivate::Active));
        assert!(!t.go_idle());
        assert!(t.go_idle());
        assert!(t.is_done());
        assert!(matches!(t.try_reactivate(), Reactivate::Done));
        t.park(); // returns at once: done
    }
}
