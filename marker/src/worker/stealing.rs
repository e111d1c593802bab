//! Sharing and stealing work, and going idle.
//!
//! While a worker has work, every `balance_interval` objects it shares its
//! oldest private items through its deque, wakes parked workers in
//! proportion to its surplus, and, by the configured [`BalancePolicy`],
//! may steal early from a victim that has much more (with `on-empty`, as
//! soon as its stack is empty and only its prefetch FIFO holds objects).
//! Once its own work is gone it is a client of the termination protocol:
//! it refills from the overflow storage or by stealing, while still counted
//! active; failing that it counts itself idle, probes for work (spin,
//! yield, then park), and either reactivates to refill or sees the step
//! end.

use crossbeam_utils::Backoff;
use rand::Rng;
use stealmark_deques::{Owner, Steal, Thief, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::word::Word;
use super::Worker;
use crate::config::{BalancePolicy, StealAmount, VictimSelection};
use crate::termination::Reactivate;

/// While a worker looks for work, busy workers keep up to this many of their
/// private items in their deques (half their private stack, at most this).
const IDLE_SHARE_MAX: usize = 1024;

/// A busy worker wakes one parked worker per this many items in its deque.
pub(super) const WAKE_GRAIN: usize = 4;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Tops up the deque from the oldest private items: to half of the
    /// private stack (at most [`IDLE_SHARE_MAX`]) while any worker is
    /// looking for work, else to the reserve.
    fn share(&mut self) {
        let private = self.state.private.len();
        if private < 2 {
            return;
        }
        let c = self.phase.config;
        let want = if self.phase.term.hungry() > 0 {
            (private / 2).min(IDLE_SHARE_MAX)
        } else {
            c.deque_reserve.min(private / 2)
        };
        let shared = self.state.owner.len();
        if shared >= want {
            return;
        }
        let state = &mut *self.state;
        for &w in state.private.take_oldest(want - shared) {
            if let Err(w) = state.owner.push(w) {
                let e = self.phase.engine;
                let moved =
                    e.overflow
                        .spill(w, &mut state.owner, self.phase.config.deque_capacity / 2);
                state.record.stats.overflow_pushes += moved as u64;
            }
        }
    }

    /// Every `balance_interval` objects: wake parked workers in proportion
    /// to the surplus, and apply the balancing policy. `prefetched` is the
    /// length of the mark loop's object FIFO (part of the load a timeline
    /// sample records).
    pub(super) fn periodic(&mut self, prefetched: usize) {
        #[cfg(feature = "inject-delays")]
        self.inject_delay();
        if self.sample_interval != 0 {
            self.until_sample = self
                .until_sample
                .saturating_sub(self.phase.config.balance_interval);
            if self.until_sample == 0 {
                self.until_sample = self.sample_interval;
                let len = self.load() + prefetched;
                let now = self.now_ns();
                self.sample(now, len);
            }
        }
        if self.settings.private {
            self.share();
        }
        let len = self.load();
        if len >= WAKE_GRAIN && self.phase.term.sleepers() > 0 {
            let k = self.phase.term.wake(len / WAKE_GRAIN);
            self.state.record.stats.wakeups_sent += k as u64;
        }
        let c = self.phase.config;
        let balance = match c.policy {
            // The stack is empty, the last objects in the prefetch FIFO: a
            // worker on a linked list lives here, one object at a time.
            BalancePolicy::OnEmpty => len == 0,
            BalancePolicy::Probabilistic => {
                len == 0 || self.state.rng.random::<f64>() * (len as f64) < c.mu
            }
            BalancePolicy::Threshold => {
                let last = self.last_balance_len;
                if (len as f64) * c.threshold_factor <= last as f64 {
                    true
                } else {
                    if len as f64 >= last as f64 * c.threshold_factor || last == 0 {
                        self.last_balance_len = len;
                    }
                    false
                }
            }
        };
        if balance {
            self.balance(len);
        }
    }

    /// A balancing attempt by a worker that still has `len` items: steal
    /// from a random victim only if it surely has more than twice as many.
    fn balance(&mut self, len: usize) {
        self.last_balance_len = len;
        let Some(v) = self.pick_victim() else {
            return;
        };
        if self.phase.engine.thieves[v].len() > 2 * len + 1 {
            self.state.record.stats.balance_attempts += 1;
            self.steal_from(v);
            self.last_balance_len = self.load();
        }
    }

    /// A random other worker (`random`, or the longer deque of two).
    pub(super) fn pick_victim(&mut self) -> Option<usize> {
        let n = self.phase.config.workers;
        if n < 2 {
            return None;
        }
        let mut pick = || {
            let r = self.state.rng.random_range(0..n - 1);
            if r >= self.index {
                r + 1
            } else {
                r
            }
        };
        let a = pick();
        match self.phase.config.victim {
            VictimSelection::Random => Some(a),
            VictimSelection::BestOf2 => {
                let b = pick();
                let t = &self.phase.engine.thieves;
                Some(if t[b].len() > t[a].len() { b } else { a })
            }
        }
    }

    /// One steal attempt from `victim`; `true` if something was taken.
    pub(super) fn steal_from(&mut self, victim: usize) -> bool {
        let thief = &self.phase.engine.thieves[victim];
        match self.phase.config.steal {
            StealAmount::Half => matches!(
                thief.steal_half(&mut self.state.owner, &mut self.state.thief_stats),
                Steal::Success(k) if k > 0
            ),
            StealAmount::One => match thief.steal(&mut self.state.thief_stats) {
                Steal::Success(w) => {
                    // Another copy may come out of the victim's deque.
                    self.push_copy(Word::from_raw(w));
                    true
                }
                Steal::Empty | Steal::Abort => false,
            },
        }
    }

    /// The local deque and FIFO are empty: take from the overflow storage,
    /// else try to steal, up to twice per other worker. `true` if the local
    /// deque now has work.
    pub(super) fn refill(&mut self) -> bool {
        let e = self.phase.engine;
        if e.bounded && e.overflow.len_hint() > 0 {
            let batch = self.phase.config.deque_capacity / 2;
            let k = e.overflow.take(&mut self.state.owner, batch);
            if k > 0 {
                self.state.record.stats.overflow_takes += k as u64;
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
                            self.state.record.stats.termination_attempts += 1;
                            break;
                        }
                    }
                }
                if backoff.is_completed() {
                    self.state.record.stats.parks += 1;
                    term.park();
                    backoff.reset();
                } else {
                    backoff.snooze();
                }
            }
        }
    }
}
