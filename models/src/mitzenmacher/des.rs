//! The discrete-event simulation of Mitzenmacher's work-stealing systems.
//!
//! The continuous-time chain is simulated by uniformization: every processor
//! carries the same total event rate `Λ = λ + 1 + r_retry + r_transfer`; the
//! next event happens after an exponential(nΛ) time at a uniformly chosen
//! processor, and is an arrival (rate λ), a service completion (rate 1, a
//! no-op when idle), a steal retry (rate `r_retry`, a no-op unless empty and
//! not waiting) or a transfer arrival (rate `r_transfer`, a no-op unless
//! waiting). This is exact for the Markov chain and needs no event queue.
//!
//! Tasks carry their arrival time; queues are FIFO and thieves take from the
//! back. A task's time in system is measured for tasks arriving in
//! `[warm-up, time]`; the run continues past `time` (with arrivals) until the
//! last of them completes, so long tasks are not dropped from the mean.

use std::collections::VecDeque;

use rand::Rng;
use rand_pcg::Pcg64;

use super::{MitzenmacherConfig, WARMUP_FRACTION};
use crate::{rng, ModelError};

/// What a simulation measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SimOutcome {
    /// The mean time in system of the measured tasks.
    pub time_in_system: f64,
    /// How many tasks were measured.
    pub tasks_measured: u64,
    /// Successful steal attempts / attempts.
    pub steal_success_ratio: f64,
    /// The time-averaged fraction of processors with at least `i` tasks
    /// (`i = 1..`), after warm-up.
    pub tails: Vec<f64>,
}

#[derive(Default)]
struct Processor {
    queue: VecDeque<f64>,
    /// Tasks stolen by this processor and still in transfer (empty when not
    /// waiting).
    transit: Vec<f64>,
    waiting: bool,
}

/// Time-weighted counts of processors per load.
struct LoadHistogram {
    count: Vec<u64>,
    area: Vec<f64>,
    since: Vec<f64>,
}

impl LoadHistogram {
    fn new(processors: usize) -> Self {
        LoadHistogram {
            count: vec![processors as u64],
            area: vec![0.0],
            since: vec![0.0],
        }
    }

    fn settle(&mut self, load: usize, now: f64) {
        if load >= self.count.len() {
            self.count.resize(load + 1, 0);
            self.area.resize(load + 1, 0.0);
            self.since.resize(load + 1, now);
        }
        self.area[load] += self.count[load] as f64 * (now - self.since[load]);
        self.since[load] = now;
    }

    fn moved(&mut self, from: usize, to: usize, now: f64) {
        if from == to {
            return;
        }
        self.settle(from, now);
        self.settle(to, now);
        self.count[from] -= 1;
        self.count[to] += 1;
    }

    fn reset(&mut self, now: f64) {
        self.area.fill(0.0);
        self.since.fill(now);
    }

    /// Tails S_1..S_len of the time-averaged load distribution since `start`.
    fn tails(&mut self, now: f64, start: f64, processors: usize, len: usize) -> Vec<f64> {
        for load in 0..self.count.len() {
            self.settle(load, now);
        }
        let norm = (now - start) * processors as f64;
        let mut tails = vec![0.0; len];
        let mut above = 0.0;
        for load in (1..self.area.len()).rev() {
            above += self.area[load] / norm;
            if load <= len {
                tails[load - 1] = above;
            }
        }
        tails
    }
}

struct System<'a> {
    config: &'a MitzenmacherConfig,
    procs: Vec<Processor>,
    histogram: LoadHistogram,
    attempts: u64,
    successes: u64,
    scratch: Vec<f64>,
}

impl System<'_> {
    /// Processor `p` tries one steal (it is not waiting).
    fn try_steal(&mut self, rng: &mut Pcg64, p: usize, now: f64) {
        let n = self.procs.len();
        self.attempts += 1;
        let mut best = usize::MAX;
        let mut best_load = 0;
        for _ in 0..self.config.choices {
            let mut v = rng.random_range(0..n - 1);
            if v >= p {
                v += 1;
            }
            let load = self.procs[v].queue.len();
            if best == usize::MAX || load > best_load {
                best = v;
                best_load = load;
            }
        }
        if best_load < self.config.threshold as usize {
            return;
        }
        self.successes += 1;
        let k = self.config.steal_count as usize;
        self.scratch.clear();
        let victim = &mut self.procs[best].queue;
        let keep = victim.len() - k;
        self.scratch.extend(victim.drain(keep..));
        self.histogram.moved(best_load, keep, now);
        let thief = &mut self.procs[p];
        if self.config.transfer_rate.is_some() {
            thief.transit.extend_from_slice(&self.scratch);
            thief.waiting = true;
        } else {
            let before = thief.queue.len();
            thief.queue.extend(self.scratch.iter().copied());
            self.histogram.moved(before, before + k, now);
        }
    }
}

/// Simulates the configuration; `tail_len` tails are reported.
pub fn simulate(config: &MitzenmacherConfig, tail_len: usize) -> Result<SimOutcome, ModelError> {
    config.validate()?;
    let n = config.processors;
    let mut rng = rng::seeded(config.seed);
    let lambda = config.lambda;
    let retry = config.retry_rate;
    let transfer = config.transfer_rate.unwrap_or(0.0);
    let per_proc = lambda + 1.0 + retry + transfer;
    let total_rate = per_proc * n as f64;
    let warmup = config.time * WARMUP_FRACTION;
    let end = config.time;
    let mut sys = System {
        config,
        procs: (0..n).map(|_| Processor::default()).collect(),
        histogram: LoadHistogram::new(n),
        attempts: 0,
        successes: 0,
        scratch: Vec::new(),
    };
    let mut now = 0.0;
    let mut warmed = false;
    let mut tails = Vec::new();
    let (mut outstanding, mut measured, mut sum) = (0u64, 0u64, 0.0f64);
    let in_window = |arrival: f64| arrival >= warmup && arrival <= end;
    loop {
        now += rng::exponential(&mut rng, total_rate);
        if !warmed && now >= warmup {
            sys.histogram.reset(warmup);
            warmed = true;
        }
        if now > end {
            if tails.is_empty() {
                tails = sys.histogram.tails(end, warmup, n, tail_len);
            }
            if outstanding == 0 {
                break;
            }
        }
        let p = rng.random_range(0..n);
        let u = rng.random::<f64>() * per_proc;
        if u < lambda {
            let len = sys.procs[p].queue.len();
            sys.procs[p].queue.push_back(now);
            sys.histogram.moved(len, len + 1, now);
            if in_window(now) {
                outstanding += 1;
            }
        } else if u < lambda + 1.0 {
            let len = sys.procs[p].queue.len();
            let Some(arrival) = sys.procs[p].queue.pop_front() else {
                continue;
            };
            sys.histogram.moved(len, len - 1, now);
            if in_window(arrival) {
                outstanding -= 1;
                measured += 1;
                sum += now - arrival;
            }
            if !sys.procs[p].waiting && len - 1 <= config.preempt_at as usize {
                sys.try_steal(&mut rng, p, now);
            }
        } else if u < lambda + 1.0 + retry {
            if sys.procs[p].queue.is_empty() && !sys.procs[p].waiting {
                sys.try_steal(&mut rng, p, now);
            }
        } else if sys.procs[p].waiting {
            let proc = &mut sys.procs[p];
            let len = proc.queue.len();
            proc.queue.extend(proc.transit.drain(..));
            proc.waiting = false;
            let after = proc.queue.len();
            sys.histogram.moved(len, after, now);
        }
    }
    if measured == 0 {
        return Err(ModelError::invalid(
            "time",
            config.time,
            "long enough that some task arrives after the warm-up",
        ));
    }
    Ok(SimOutcome {
        time_in_system: sum / measured as f64,
        tasks_measured: measured,
        steal_success_ratio: if sys.attempts == 0 {
            0.0
        } else {
            sys.successes as f64 / sys.attempts as f64
        },
        tails,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_stealing_pressure_time_is_near_mm1() {
        // At λ = 0.1 steals are rare; the M/M/1 time 1/(1 − λ) = 1.111 is an
        // upper bound and the fluid value 1.0955 is close.
        let c = MitzenmacherConfig {
            time: 5_000.0,
            processors: 32,
            ..MitzenmacherConfig::simple(0.1)
        };
        let out = simulate(&c, 4).unwrap();
        assert!(
            out.time_in_system < 1.0 / 0.9 + 0.02,
            "{}",
            out.time_in_system
        );
        assert!(out.time_in_system > 1.0, "{}", out.time_in_system);
        assert!((out.tails[0] - 0.1).abs() < 0.01, "{:?}", out.tails);
    }

    #[test]
    fn seeds_are_deterministic() {
        let c = MitzenmacherConfig {
            time: 1_000.0,
            processors: 16,
            ..MitzenmacherConfig::simple(0.7)
        };
        assert_eq!(simulate(&c, 5).unwrap(), simulate(&c, 5).unwrap());
        let other = MitzenmacherConfig { seed: 2, ..c };
        assert_ne!(simulate(&c, 5).unwrap(), simulate(&other, 5).unwrap());
    }

    #[test]
    fn huge_processor_counts_are_refused_before_allocating() {
        let c = MitzenmacherConfig {
            processors: usize::MAX,
            ..MitzenmacherConfig::simple(0.5)
        };
        let err = simulate(&c, 4).unwrap_err().to_string();
        assert!(err.contains("processors"), "{err}");
    }
}
