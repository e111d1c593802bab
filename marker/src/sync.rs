//! The synchronisation primitives of the termination protocol and the worker
//! pool: `std`, `parking_lot` and `crossbeam-utils` in every real build, and
//! loom's under `--cfg loom`, so that the crate's loom models
//! explore every interleaving of the very code that ships.
//!
//! Outside loom this module is nothing but re-exports: the production code
//! compiles to exactly the types it named before (`parking_lot::Mutex`,
//! `crossbeam_utils::Backoff`, ...). Under loom:
//!
//! - atomics, `Arc` and threads are loom's;
//! - loom has no `parking_lot`, so [`Mutex`] and [`Condvar`] are thin
//!   adapters that give loom's std-like lock and condition variable
//!   parking_lot's interface (`lock()` returns the guard, `wait(&mut guard)`,
//!   no poisoning);
//! - [`Backoff`] yields to loom's scheduler instead of spinning (a spin loop
//!   that never yields does not terminate under loom) and completes after
//!   `LOOM_BACKOFF_STEPS` snoozes, so that a model reaches both the
//!   spinning and the blocking paths of a wait in a few steps;
//! - `CachePadded` is crossbeam's own: it only aligns, it does not
//!   synchronise;
//! - `branches` counts the interesting branches that the models must
//!   reach, and `api` opens the termination protocol and the pool to them.
//!
//! The branch counters are placed with `branch!(Name)`, which expands to
//! nothing outside loom.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::Arc;

pub use crossbeam_utils::CachePadded;

#[cfg(not(loom))]
pub(crate) use crossbeam_utils::Backoff;
#[cfg(not(loom))]
pub(crate) use parking_lot::{Condvar, Mutex};

#[cfg(loom)]
pub use self::loom_impl::{Backoff, Condvar, Mutex, MutexGuard, LOOM_BACKOFF_STEPS};

/// Threads: `std::thread`, or loom's under `--cfg loom`.
pub(crate) mod thread {
    #[cfg(not(loom))]
    pub(crate) use std::thread::{Builder, JoinHandle};

    #[cfg(loom)]
    pub use loom::thread::{Builder, JoinHandle};
}

/// Counts a branch for the loom models (see `branches`); nothing outside
/// loom.
#[cfg(not(loom))]
macro_rules! branch {
    ($name:ident) => {};
}

/// Counts a branch for the loom models (see [`branches`]).
#[cfg(loom)]
macro_rules! branch {
    ($name:ident) => {
        $crate::sync::branches::hit($crate::sync::branches::Branch::$name)
    };
}

pub(crate) use branch;

#[cfg(loom)]
mod loom_impl {
    use std::cell::Cell;
    use std::ops::{Deref, DerefMut};
    use std::sync::PoisonError;

    /// How many snoozes complete a [`Backoff`] under loom: one, so that a
    /// wait checks, yields once, checks again and then blocks.
    pub const LOOM_BACKOFF_STEPS: u32 = 1;

    /// `crossbeam_utils::Backoff` for loom: every step yields to loom's
    /// scheduler, and the backoff completes after [`LOOM_BACKOFF_STEPS`].
    #[derive(Debug, Default)]
    pub struct Backoff {
        step: Cell<u32>,
    }

    impl Backoff {
        /// A fresh backoff.
        pub fn new() -> Backoff {
            Backoff::default()
        }

        /// Starts over.
        pub fn reset(&self) {
            self.step.set(0);
        }

        /// One step of spinning: a yield under loom.
        pub fn spin(&self) {
            self.snooze();
        }

        /// One step of spinning or yielding: a yield under loom.
        pub fn snooze(&self) {
            loom::thread::yield_now();
            if self.step.get() < LOOM_BACKOFF_STEPS {
                self.step.set(self.step.get() + 1);
            }
        }

        /// Whether the caller should block now instead of snoozing again.
        pub fn is_completed(&self) -> bool {
            self.step.get() >= LOOM_BACKOFF_STEPS
        }
    }

    /// loom's mutex with parking_lot's interface (no poisoning).
    #[derive(Debug)]
    pub struct Mutex<T>(loom::sync::Mutex<T>);

    /// The guard of [`Mutex`]; `None` only inside [`Condvar::wait`].
    #[derive(Debug)]
    pub struct MutexGuard<'a, T>(Option<loom::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        /// A new unlocked mutex.
        pub fn new(value: T) -> Mutex<T> {
            Mutex(loom::sync::Mutex::new(value))
        }

        /// Locks the mutex (a panic while it was held does not poison it).
        pub fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
        }

        /// The value, consuming the mutex.
        pub fn into_inner(self) -> T {
            self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
        }

        /// The value, through a unique reference (no locking).
        pub fn get_mut(&mut self) -> &mut T {
            self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0
                .as_ref()
                .expect("a guard is whole outside Condvar::wait")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0
                .as_mut()
                .expect("a guard is whole outside Condvar::wait")
        }
    }

    /// loom's condition variable with parking_lot's interface.
    #[derive(Debug)]
    pub struct Condvar(loom::sync::Condvar);

    impl Condvar {
        /// A new condition variable.
        #[allow(clippy::new_without_default)]
        pub fn new() -> Condvar {
            Condvar(loom::sync::Condvar::new())
        }

        /// Unlocks `guard`'s mutex, waits for a notification and locks it
        /// again.
        pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let inner = guard.0.take().expect("a guard is whole");
            let inner = self.0.wait(inner).unwrap_or_else(PoisonError::into_inner);
            guard.0 = Some(inner);
        }

        /// Wakes one waiter, if any.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}

/// Test-only counters of the branches that the loom models must reach: each
/// model resets them, runs, and asserts that every branch it targets was
/// taken in at least one explored execution. The counts add up over all of
/// a model's executions (they are plain `std` atomics, outside loom's
/// model), so the models that read them must not run concurrently.
#[cfg(loom)]
pub mod branches {
    use std::sync::atomic::{AtomicUsize, Ordering};

    macro_rules! branches {
        ($($(#[doc = $doc:literal])* $name:ident,)*) => {
            /// A counted branch.
            #[derive(Clone, Copy, Debug, PartialEq, Eq)]
            pub enum Branch {
                $($(#[doc = $doc])* $name,)*
            }

            impl Branch {
                /// Every counted branch.
                pub const ALL: &'static [Branch] = &[$(Branch::$name,)*];
            }
        };
    }

    branches! {
        /// `go_idle`: this decrement took `active` to zero; it sets `done`.
        GoIdleLast,
        /// `go_idle`: other workers are still active.
        GoIdleNotLast,
        /// `try_reactivate` incremented `active` from one: it revived the
        /// phase while the only active worker could be about to go idle.
        ReactivateFromOne,
        /// `try_reactivate` incremented `active` from more than one.
        ReactivateFromMany,
        /// `try_reactivate` found `active` at zero (the phase is over) at
        /// its first read.
        ReactivateDone,
        /// `try_reactivate` read a non-zero `active`, lost its CAS to a
        /// concurrent change and then found zero: it raced the last
        /// `go_idle` and lost.
        ReactivateLostToLastIdle,
        /// `try_reactivate`'s CAS failed and its retry succeeded.
        ReactivateRetried,
        /// `park` found `done` under the sleep lock: the final wake-up was
        /// sent between the worker's last unlocked check and its lock, and
        /// would have been lost without this re-check.
        ParkSawDoneUnderLock,
        /// `park` waited and was woken with the phase over (`go_idle`'s or
        /// `abort`'s `notify_all`).
        ParkWokenByDone,
        /// `park` waited and was woken by a busy worker's `wake`.
        ParkWokenByWake,
        /// `wake` found a parked worker and notified it.
        WakeNotified,
        /// `wake` found nobody counted parked (the hint was stale, or the
        /// worker it saw has not counted itself yet or has already left).
        WakeFoundNoSleeper,
        /// `abort` ended the phase.
        Abort,
        /// Pool: a thread found its new generation at once, without waiting.
        PoolJobFoundAtOnce,
        /// Pool: a lingering thread saw the next generation announced.
        PoolJobSeenLingering,
        /// Pool: a thread waited on `start` for its job.
        PoolJobAfterWait,
        /// Pool: a thread saw shutdown.
        PoolShutdown,
        /// Pool: the last thread's decrement reached zero; it notifies.
        PoolLastDecrement,
        /// Pool: the caller's first look at `pending` saw zero.
        PoolWaitDoneAtOnce,
        /// Pool: the caller saw zero after spinning (snoozes), unblocked.
        PoolWaitDoneAfterSpin,
        /// Pool: the caller gave up spinning, took the lock and found zero
        /// there (the last decrement came between its last look and its lock).
        PoolWaitDoneUnderLock,
        /// Pool: the caller blocked on `done` and was woken.
        PoolWaitWoken,
        /// Pool: the drop guard waited while `job(0)` was unwinding.
        PoolWaitUnwinding,
    }

    const N: usize = Branch::ALL.len();

    static HITS: [AtomicUsize; N] = [const { AtomicUsize::new(0) }; N];

    /// Counts one taking of branch `b`.
    pub fn hit(b: Branch) {
        HITS[b as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// How often branch `b` was taken since the last [`reset`].
    pub fn hits(b: Branch) -> usize {
        HITS[b as usize].load(Ordering::Relaxed)
    }

    /// Sets every counter to zero.
    pub fn reset() {
        for h in &HITS {
            h.store(0, Ordering::Relaxed);
        }
    }
}

/// The termination protocol and the pool, opened to the loom models.
#[cfg(loom)]
pub mod api {
    pub use crate::pool::Pool;
    pub use crate::termination::{Reactivate, Termination};
}
