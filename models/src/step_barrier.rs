//! A step barrier that a panicking participant poisons, so that a `--real`
//! run whose worker panics ends with an error instead of hanging the others
//! (`std::sync::Barrier` would wait forever).

use std::sync::{Condvar, Mutex, MutexGuard};

/// A reusable barrier for a fixed number of threads.
pub(crate) struct StepBarrier {
    state: Mutex<State>,
    turned: Condvar,
    parties: usize,
}

struct State {
    arrived: usize,
    generation: u64,
    poisoned: bool,
}

/// Returned by [`StepBarrier::wait`] once a participant has panicked.
#[derive(Debug)]
pub(crate) struct Poisoned;

impl StepBarrier {
    pub(crate) fn new(parties: usize) -> Self {
        StepBarrier {
            state: Mutex::new(State {
                arrived: 0,
                generation: 0,
                poisoned: false,
            }),
            turned: Condvar::new(),
            parties,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent under every panic point, so a poisoned
        // mutex is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until all parties have called `wait` for this step. Like
    /// `std::sync::Barrier::wait`, everything a party did before waiting
    /// happens-before what every party does after (the mutex orders it).
    pub(crate) fn wait(&self) -> Result<(), Poisoned> {
        let mut state = self.lock();
        if state.poisoned {
            return Err(Poisoned);
        }
        let generation = state.generation;
        state.arrived += 1;
        if state.arrived == self.parties {
            state.arrived = 0;
            state.generation += 1;
            self.turned.notify_all();
            return Ok(());
        }
        while state.generation == generation && !state.poisoned {
            state = self.turned.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.generation == generation {
            Err(Poisoned)
        } else {
            Ok(())
        }
    }

    /// Wakes every waiter with [`Poisoned`], now and for all later waits.
    pub(crate) fn poison(&self) {
        self.lock().poisoned = true;
        self.turned.notify_all();
    }

    /// A guard that poisons the barrier if its thread unwinds.
    pub(crate) fn poison_on_panic(&self) -> PoisonOnPanic<'_> {
        PoisonOnPanic(self)
    }
}

/// Poisons its barrier when dropped during a panic.
pub(crate) struct PoisonOnPanic<'a>(&'a StepBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poison();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_parties_pass_each_step_together() {
        let barrier = StepBarrier::new(4);
        let counter = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for step in 1..=50 {
                        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        barrier.wait().unwrap();
                        assert!(counter.load(std::sync::atomic::Ordering::Relaxed) >= 4 * step);
                        barrier.wait().unwrap();
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_party_releases_the_others() {
        let barrier = StepBarrier::new(3);
        let result = std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2)
                .map(|_| s.spawn(|| barrier.wait().is_err()))
                .collect();
            let panicker = s.spawn(|| {
                let _guard = barrier.poison_on_panic();
                panic!("worker failed");
            });
            assert!(panicker.join().is_err());
            waiters
                .into_iter()
                .map(|w| w.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(result, [true, true]);
    }
}
