//! Balancing while a worker has work: every `balance_interval` objects it
//! shares its oldest private items through its deque, wakes parked workers
//! in proportion to its surplus, and, by the configured [`BalancePolicy`],
//! may steal early from a victim that has much more. Victim selection and
//! the steal itself are also used by the idle worker's refill.

use rand::Rng;
use stealmark_deques::{Owner, Steal, Thief, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::Worker;
use crate::config::{BalancePolicy, StealAmount, VictimSelection};

/// While a worker looks for work, busy workers keep up to this many of their
/// private items in their deques (half their private stack, at most this).
const IDLE_SHARE_MAX: usize = 1024;

/// A busy worker wakes one parked worker per this many items in its deque.
pub(super) const WAKE_GRAIN: usize = 4;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// This worker's load: private and shared items.
    #[inline]
    pub(super) fn load(&self) -> usize {
        self.slot.private.len() + self.slot.owner.len()
    }

    /// Tops up the deque from the oldest private items: to half of the
    /// private stack (at most [`IDLE_SHARE_MAX`]) while any worker is
    /// looking for work, else to the reserve.
    fn share(&mut self) {
        let private = self.slot.private.len();
        if private < 2 {
            return;
        }
        let c = self.phase.config;
        let want = if self.phase.term.hungry() > 0 {
            (private / 2).min(IDLE_SHARE_MAX)
        } else {
            c.deque_reserve.min(private / 2)
        };
        let shared = self.slot.owner.len();
        if shared >= want {
            return;
        }
        let slot = &mut *self.slot;
        for &w in slot.private.take_oldest(want - shared) {
            if let Err(w) = slot.owner.push(w) {
                let e = self.phase.engine;
                let moved =
                    e.overflow
                        .spill(w, &mut slot.owner, self.phase.config.deque_capacity / 2);
                slot.record.stats.overflow_pushes += moved as u64;
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
        if self.private {
            self.share();
        }
        let len = self.load();
        if len >= WAKE_GRAIN && self.phase.term.sleepers() > 0 {
            let k = self.phase.term.wake(len / WAKE_GRAIN);
            self.slot.record.stats.wakeups_sent += k as u64;
        }
        let c = self.phase.config;
        let balance = match c.policy {
            BalancePolicy::OnEmpty => false,
            BalancePolicy::Probabilistic => {
                len == 0 || self.slot.rng.random::<f64>() * (len as f64) < c.mu
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
            self.slot.record.stats.balance_attempts += 1;
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
            let r = self.slot.rng.random_range(0..n - 1);
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
                thief.steal_half(&mut self.slot.owner, &mut self.slot.thief_stats),
                Steal::Success(k) if k > 0
            ),
            StealAmount::One => match thief.steal(&mut self.slot.thief_stats) {
                Steal::Success(w) => {
                    // Another copy may come out of the victim's deque.
                    self.push_copy(w);
                    true
                }
                Steal::Empty | Steal::Abort => false,
            },
        }
    }
}
