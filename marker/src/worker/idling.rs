//! The worker as a client of the termination protocol: once its own work is
//! gone it refills from the overflow storage or by stealing, while still
//! counted active; failing that it counts itself idle, probes for work
//! (spin, yield, then park), and either reactivates to refill or sees the
//! phase end.

use crossbeam_utils::Backoff;
use stealmark_deques::{Thief, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::Worker;
use crate::termination::Reactivate;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// The local deque and FIFO are empty: take from the overflow storage,
    /// else try to steal, up to twice per other worker. `true` if the local
    /// deque now has work.
    pub(super) fn refill(&mut self) -> bool {
        let e = self.phase.engine;
        if e.bounded && e.overflow.len_hint() > 0 {
            let batch = self.phase.config.deque_capacity / 2;
            let k = e.overflow.take(&mut self.slot.owner, batch);
            if k > 0 {
                self.slot.record.stats.overflow_takes += k as u64;
                return true;
            }
        }
        for _ in 0..2 * self.phase.config.workers {
            #[cfg(feature = "inject-delays")]
            self.inject_delay();
            let Some(v) = self.pick_victim() else {
                break;
            };
            if self.steal_from(v) {
                return true;
            }
        }
        // A bounded deque's overflow storage is checked under its lock before
        // the worker may count itself idle (see docs/design.md).
        self.load() > 0 || (e.bounded && !e.overflow.is_empty_locked() && self.refill())
    }

    /// The termination protocol. Returns `true` when the worker has found
    /// work again, `false` when the phase is over.
    pub(super) fn idle(&mut self) -> bool {
        let term = self.phase.term;
        let engine = self.phase.engine;
        loop {
            #[cfg(feature = "inject-delays")]
            self.inject_delay();
            if term.go_idle() {
                return false;
            }
            let backoff = Backoff::new();
            loop {
                if term.is_done() {
                    return false;
                }
                #[cfg(feature = "inject-delays")]
                self.inject_delay();
                // Probe one random victim (and the overflow hint): O(1).
                let seen = (engine.bounded && engine.overflow.len_hint() > 0)
                    || self
                        .pick_victim()
                        .is_some_and(|v| !engine.thieves[v].is_empty());
                if seen {
                    match term.try_reactivate() {
                        Reactivate::Done => return false,
                        Reactivate::Active => {
                            #[cfg(feature = "inject-delays")]
                            self.inject_delay();
                            if self.refill() {
                                return true;
                            }
                            self.slot.record.stats.termination_attempts += 1;
                            break;
                        }
                    }
                }
                if backoff.is_completed() {
                    self.slot.record.stats.parks += 1;
                    term.park();
                    backoff.reset();
                } else {
                    backoff.snooze();
                }
            }
        }
    }
}
