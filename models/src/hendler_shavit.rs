//! Asymmetric probabilistic balancing (Hendler and Shavit 2002, §2.2 and §3).
//!
//! Time proceeds in steps. At the start of step `t` every process `p` with
//! `L_{p,t}` items decides to balance with probability `µ / L_{p,t}` (1 when it
//! is empty) and selects another process uniformly. As in §3.1, a process
//! approached by several initiators keeps one uniformly at random, a process
//! that is both approached and initiating decides between the two uniformly,
//! and `p` and `q` balance when each decided for the other. Balancing is
//! asymmetric: only an initiator may take items, and only from a process with
//! more items than itself. `half` moves `⌊(L_q − L_p)/2⌋` items (the
//! balancing of Theorem 3.4's `contrib`); `one` moves a single item.
//!
//! The workload, whose load changes are bounded per step as §2.2's `Δ_u`
//! assumes: the first `⌈n/8⌉` processes are producers that receive
//! [`PRODUCER_TASKS`] new items every step, and every process consumes one
//! item per step when it has one. The system load grows by at least `n/8`
//! items per step, all of it born on an eighth of the processes.
//!
//! The report is the largest time-averaged `L_{p,t} / A_t` over processes,
//! where `A_t` is the average load at the start of step `t` (steps with
//! `A_t = 0` are skipped). Theorem 3.9 says it stays below a constant that
//! depends on neither `n` nor the application.

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use serde::Serialize;

use crate::berenbrink::{sample_loads, LoadSample, SAMPLE_POINTS};
use crate::{limits, rng, ModelError};

/// Items each producer receives per step.
pub const PRODUCER_TASKS: u64 = 9;

/// How much an initiator takes from a more loaded process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HsSteal {
    /// Equalise the pair: `⌊(L_q − L_p)/2⌋` items.
    Half,
    /// One item.
    One,
}

impl fmt::Display for HsSteal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HsSteal::Half => "half",
            HsSteal::One => "one",
        })
    }
}

impl FromStr for HsSteal {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, ModelError> {
        match s {
            "half" => Ok(HsSteal::Half),
            "one" => Ok(HsSteal::One),
            _ => Err(ModelError::invalid("steal", s, "half or one")),
        }
    }
}

/// The parameters of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HsConfig {
    /// `n`: processes.
    pub processors: usize,
    /// µ in (0, 1]: the balancing probability is µ/L.
    pub mu: f64,
    /// What a balancing steal takes.
    pub steal: HsSteal,
    /// Steps to run.
    pub steps: u64,
    /// The seed.
    pub seed: u64,
}

impl HsConfig {
    /// Checks the parameters' ranges.
    pub fn validate(&self) -> Result<(), ModelError> {
        limits::check_processors(self.processors)?;
        if !(self.mu > 0.0 && self.mu <= 1.0) {
            return Err(ModelError::invalid("mu", self.mu, "0 < µ <= 1"));
        }
        limits::check_steps(self.steps)?;
        Ok(())
    }

    /// The number of producers, `⌈n/8⌉`.
    pub fn producers(&self) -> usize {
        self.processors.div_ceil(8)
    }

    /// The probability that a process with `load` items balances.
    pub fn balance_probability(&self, load: u64) -> f64 {
        if load == 0 {
            1.0
        } else {
            (self.mu / load as f64).min(1.0)
        }
    }
}

/// `max_p L_{p,t} / A_t` at one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioSample {
    /// The step.
    pub step: u64,
    /// The largest load over the average load at the start of the step.
    pub max_ratio: f64,
}

/// The outcome of a run (of the model, or of real threads).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HsReport {
    /// The configuration that ran.
    pub config: HsConfig,
    /// `max_p (1/|T|) Σ_{t ∈ T} L_{p,t} / A_t`.
    pub max_time_averaged_ratio: f64,
    /// The process that attains it.
    pub argmax_process: usize,
    /// The time-averaged ratio of every process.
    pub time_averaged_ratios: Vec<f64>,
    /// The instantaneous `max_p L_{p,t} / A_t`, sampled over time.
    pub max_ratio: Vec<RatioSample>,
    /// The total load, sampled over time.
    pub total_load: Vec<LoadSample>,
    /// The total load at the end.
    pub final_total_load: u64,
    /// Balancing operations that moved items.
    pub balances: u64,
    /// Items moved by balancing.
    pub moved: u64,
}

/// Accumulates per-process ratios and the sampled series.
pub(crate) struct RatioTracker {
    sums: Vec<f64>,
    counted: u64,
    max_series: Vec<f64>,
    loads: Vec<u64>,
}

impl RatioTracker {
    pub(crate) fn new(processors: usize, steps: u64) -> Self {
        RatioTracker {
            sums: vec![0.0; processors],
            counted: 0,
            max_series: Vec::with_capacity(steps as usize),
            loads: Vec::with_capacity(steps as usize),
        }
    }

    /// Records the loads at the start of a step.
    pub(crate) fn record(&mut self, loads: impl Iterator<Item = u64> + Clone) {
        let total: u64 = loads.clone().sum();
        self.loads.push(total);
        if total == 0 {
            self.max_series.push(0.0);
            return;
        }
        let avg = total as f64 / self.sums.len() as f64;
        let mut max = 0.0f64;
        for (sum, l) in self.sums.iter_mut().zip(loads) {
            let r = l as f64 / avg;
            *sum += r;
            max = max.max(r);
        }
        self.counted += 1;
        self.max_series.push(max);
    }

    pub(crate) fn finish(self, config: HsConfig, balances: u64, moved: u64) -> HsReport {
        let averages: Vec<f64> = self
            .sums
            .iter()
            .map(|s| s / self.counted.max(1) as f64)
            .collect();
        let (argmax, max) = averages
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, 0.0),
                |best, (i, v)| if v > best.1 { (i, v) } else { best },
            );
        let stride = self.max_series.len().div_ceil(SAMPLE_POINTS).max(1);
        let max_ratio = self
            .max_series
            .iter()
            .enumerate()
            .step_by(stride)
            .map(|(i, &r)| RatioSample {
                step: i as u64 + 1,
                max_ratio: r,
            })
            .collect();
        HsReport {
            config,
            max_time_averaged_ratio: max,
            argmax_process: argmax,
            time_averaged_ratios: averages,
            max_ratio,
            total_load: sample_loads(&self.loads, SAMPLE_POINTS),
            final_total_load: self.loads.last().copied().unwrap_or(0),
            balances,
            moved,
        }
    }
}

/// Runs the model from the empty state.
pub fn simulate(config: &HsConfig) -> Result<HsReport, ModelError> {
    config.validate()?;
    let n = config.processors;
    let producers = config.producers();
    let mut rng = rng::seeded(config.seed);
    let mut load = vec![0u64; n];
    let none = usize::MAX;
    let mut selected = vec![none; n];
    let mut approached_by = vec![none; n];
    let mut approaches = vec![0u32; n];
    let mut decided = vec![none; n];
    let mut tracker = RatioTracker::new(n, config.steps);
    let (mut balances, mut moved) = (0u64, 0u64);
    for _ in 0..config.steps {
        tracker.record(load.iter().copied());
        // Balancing initiation: select.
        selected.fill(none);
        approached_by.fill(none);
        approaches.fill(0);
        for p in 0..n {
            if rng.random_bool(config.balance_probability(load[p])) {
                let mut q = rng.random_range(0..n - 1);
                if q >= p {
                    q += 1;
                }
                selected[p] = q;
                approaches[q] += 1;
                if rng.random_range(0..approaches[q]) == 0 {
                    approached_by[q] = p;
                }
            }
        }
        // Decide between the approacher kept and the own selection.
        for x in 0..n {
            decided[x] = match (approached_by[x], selected[x]) {
                (a, s) if a != none && s != none && a != s => {
                    if rng.random_bool(0.5) {
                        a
                    } else {
                        s
                    }
                }
                (a, _) if a != none => a,
                (_, s) => s,
            };
        }
        // Balance mutually decided pairs; only a lighter initiator takes.
        for p in 0..n {
            let q = decided[p];
            if q == none || q < p || decided[q] != p {
                continue;
            }
            let (thief, victim) = if load[p] < load[q] { (p, q) } else { (q, p) };
            if selected[thief] != victim || load[thief] == load[victim] {
                continue;
            }
            let amount = match config.steal {
                HsSteal::Half => (load[victim] - load[thief]) / 2,
                HsSteal::One => 1,
            };
            if amount > 0 {
                load[victim] -= amount;
                load[thief] += amount;
                balances += 1;
                moved += amount;
            }
        }
        // The application: producers receive, everyone consumes one.
        for (p, l) in load.iter_mut().enumerate() {
            if p < producers {
                *l += PRODUCER_TASKS;
            }
            *l = l.saturating_sub(1);
        }
    }
    Ok(tracker.finish(*config, balances, moved))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(steal: HsSteal, processors: usize) -> HsConfig {
        HsConfig {
            processors,
            mu: 0.5,
            steal,
            steps: 2_000,
            seed: 3,
        }
    }

    #[test]
    fn ratios_average_to_one_over_processes() {
        let r = simulate(&config(HsSteal::Half, 16)).unwrap();
        let mean: f64 = r.time_averaged_ratios.iter().sum::<f64>() / 16.0;
        assert!((mean - 1.0).abs() < 1e-9, "{mean}");
        assert!(r.max_time_averaged_ratio >= 1.0);
    }

    #[test]
    fn steal_half_keeps_loads_within_a_constant_of_the_average() {
        // Theorem 3.9: the bound does not grow with n.
        for n in [16, 64, 256] {
            let r = simulate(&config(HsSteal::Half, n)).unwrap();
            assert!(
                r.max_time_averaged_ratio < 6.5,
                "n={n}: {}",
                r.max_time_averaged_ratio
            );
        }
    }

    #[test]
    fn steal_one_leaves_producers_far_above_the_average() {
        let one = simulate(&config(HsSteal::One, 64)).unwrap();
        let half = simulate(&config(HsSteal::Half, 64)).unwrap();
        assert!(
            one.max_time_averaged_ratio > 1.5 * half.max_time_averaged_ratio,
            "one {} half {}",
            one.max_time_averaged_ratio,
            half.max_time_averaged_ratio
        );
        // Steal-one leaves nearly all items on the producers: the ratio
        // approaches n / producers = 8.
        assert!(one.argmax_process < 8, "a producer is the most loaded");
        assert!(one.max_time_averaged_ratio > 7.5);
    }

    #[test]
    fn parameters_are_checked() {
        let bad = HsConfig {
            mu: 0.0,
            ..config(HsSteal::Half, 4)
        };
        assert!(simulate(&bad).unwrap_err().to_string().contains("mu"));
        assert!("two".parse::<HsSteal>().is_err());
    }

    #[test]
    fn huge_runs_are_refused_before_allocating() {
        let steps = HsConfig {
            steps: u64::MAX,
            ..config(HsSteal::Half, 4)
        };
        assert!(simulate(&steps).unwrap_err().to_string().contains("steps"));
        let processors = HsConfig {
            processors: usize::MAX,
            ..config(HsSteal::Half, 4)
        };
        let err = simulate(&processors).unwrap_err().to_string();
        assert!(err.contains("processors"), "{err}");
    }
}
