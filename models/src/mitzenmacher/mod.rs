//! Mitzenmacher's (1998) work-stealing models: a discrete-event simulation of
//! `n` processors beside the fluid-limit fixed point.
//!
//! The system (section 2.1): every processor receives tasks as a Poisson
//! process of rate λ < 1 and serves them FIFO with exponential(1) service
//! times. Tasks are stolen from the end of the victim's queue. The variants:
//!
//! | knob | paper | meaning |
//! |---|---|---|
//! | `threshold` T ≥ 2 | §2.3 | a victim must hold at least T tasks (T = 2: §2.2) |
//! | `steal_count` k | §3.4 | a steal takes k tasks (1 ≤ k ≤ T − 1 − B) |
//! | `choices` d | §3.3 | a thief samples d victims and picks the most loaded |
//! | `transfer_rate` r | §3.2 | stolen tasks arrive after an exponential(r) delay |
//! | `retry_rate` | §2.4 | empty processors retry steals at this rate |
//! | `preempt_at` B | §2.5 | a processor left with ≤ B tasks after a completion steals |
//!
//! [`fluid`] holds the differential equations and their fixed points: the
//! closed forms of §2.2 and §2.3 where they apply, numerical integration
//! otherwise. [`des`] holds the simulation. [`run`] runs both and compares
//! the expected time a task spends in the system.

pub mod des;
pub mod fluid;

use serde::Serialize;

use crate::{limits, ModelError};

/// The default simulated time (model time units, mean service time = 1):
/// half of the paper's 10 × 100,000. With 128 processors, four seeds agree
/// within 0.6% at λ ≤ 0.95 (within 0.3% at λ ≤ 0.9); at 100,000 two seeds
/// differed by 1.3% at λ = 0.95.
pub const DEFAULT_TIME: f64 = 500_000.0;

/// The fraction of the simulated time discarded as warm-up (the paper
/// discards the first 10,000 of 100,000 seconds).
pub const WARMUP_FRACTION: f64 = 0.1;

/// One work-stealing system of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MitzenmacherConfig {
    /// λ: the Poisson arrival rate at each processor (0 < λ < 1).
    pub lambda: f64,
    /// `n`: processors in the simulation (the fluid limit is `n → ∞`).
    pub processors: usize,
    /// T: the least load a victim must have.
    pub threshold: u32,
    /// k: tasks taken by one steal.
    pub steal_count: u32,
    /// d: victims sampled per steal attempt.
    pub choices: u32,
    /// r: the rate of the exponential transfer delay; `None` is instantaneous.
    pub transfer_rate: Option<f64>,
    /// The rate at which empty processors retry steals (0: only on emptying).
    pub retry_rate: f64,
    /// B: steal when a completion leaves at most B tasks (0: when empty).
    pub preempt_at: u32,
    /// Simulated time, warm-up included.
    pub time: f64,
    /// The seed of the simulation.
    pub seed: u64,
}

impl MitzenmacherConfig {
    /// The simple model of §2.2 with λ, 128 processors and the default time.
    pub fn simple(lambda: f64) -> Self {
        MitzenmacherConfig {
            lambda,
            processors: 128,
            threshold: 2,
            steal_count: 1,
            choices: 1,
            transfer_rate: None,
            retry_rate: 0.0,
            preempt_at: 0,
            time: DEFAULT_TIME,
            seed: 1,
        }
    }

    /// Checks the parameters' ranges.
    pub fn validate(&self) -> Result<(), ModelError> {
        if !(self.lambda > 0.0 && self.lambda < 1.0) {
            return Err(ModelError::invalid("lambda", self.lambda, "0 < λ < 1"));
        }
        limits::check_processors(self.processors)?;
        if self.threshold < 2 {
            return Err(ModelError::invalid(
                "threshold",
                self.threshold,
                "at least 2",
            ));
        }
        let max_k = self.threshold.saturating_sub(1 + self.preempt_at);
        if self.steal_count < 1 || self.steal_count > max_k {
            return Err(ModelError::invalid(
                "steal-count",
                self.steal_count,
                format!(
                    "between 1 and T - 1 - B = {max_k} (a victim must keep more than B tasks; the paper uses k <= T/2)"
                ),
            ));
        }
        if self.choices < 1 || self.choices > 64 {
            return Err(ModelError::invalid(
                "choices",
                self.choices,
                "between 1 and 64",
            ));
        }
        if let Some(r) = self.transfer_rate {
            if !(r > 0.0 && r.is_finite()) {
                return Err(ModelError::invalid("transfer-rate", r, "a finite rate > 0"));
            }
        }
        if !(self.retry_rate >= 0.0 && self.retry_rate.is_finite()) {
            return Err(ModelError::invalid(
                "retry-rate",
                self.retry_rate,
                "a finite rate >= 0",
            ));
        }
        if !(self.time >= 100.0 && self.time.is_finite()) {
            return Err(ModelError::invalid(
                "time",
                self.time,
                "at least 100 time units",
            ));
        }
        Ok(())
    }

    /// The sections of the paper whose equations describe this system
    /// (several, comma-separated, when knobs are combined).
    pub fn section(&self) -> String {
        let mut parts = Vec::new();
        if self.retry_rate > 0.0 {
            parts.push("2.4 repeated steal attempts");
        }
        if self.preempt_at > 0 {
            parts.push("2.5 preemptive stealing");
        }
        if self.transfer_rate.is_some() {
            parts.push("3.2 transfer delay");
        }
        if self.choices > 1 {
            parts.push("3.3 multiple choices");
        }
        if self.steal_count > 1 {
            parts.push("3.4 multiple steals");
        }
        if parts.is_empty() {
            parts.push(if self.threshold > 2 {
                "2.3 threshold stealing"
            } else {
                "2.2 simple work stealing"
            });
        }
        parts.join(", ")
    }
}

/// The simulated and predicted time in system of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MitzenmacherReport {
    /// The configuration that ran.
    pub config: MitzenmacherConfig,
    /// The paper sections whose equations apply.
    pub section: String,
    /// The simulation's mean time in system (tasks that arrived after warm-up).
    pub simulated_time_in_system: f64,
    /// The fluid-limit fixed point's expected time in system.
    pub fixed_point_time_in_system: f64,
    /// |simulated − fixed point| / fixed point.
    pub relative_error: f64,
    /// How the fixed point was found: `closed-form` or `ode`.
    pub fixed_point_method: fluid::Method,
    /// Tasks whose time in system was measured.
    pub tasks_measured: u64,
    /// Steal attempts that found a victim / all steal attempts.
    pub steal_success_ratio: f64,
    /// The fixed point's tails π_1, π_2, ... (fraction of processors, waiting
    /// for a transfer or not, with at least i tasks), up to 1e-6.
    pub fixed_point_tails: Vec<f64>,
    /// The simulation's time-averaged tails over the same range.
    pub simulated_tails: Vec<f64>,
}

/// Runs the simulation and computes the fixed point.
pub fn run(config: &MitzenmacherConfig) -> Result<MitzenmacherReport, ModelError> {
    config.validate()?;
    let fixed = fluid::fixed_point(config)?;
    let tails = fixed.tails(1e-6);
    let sim = des::simulate(config, tails.len())?;
    let predicted = fixed.time_in_system;
    Ok(MitzenmacherReport {
        config: *config,
        section: config.section(),
        simulated_time_in_system: sim.time_in_system,
        fixed_point_time_in_system: predicted,
        relative_error: (sim.time_in_system - predicted).abs() / predicted,
        fixed_point_method: fixed.method,
        tasks_measured: sim.tasks_measured,
        steal_success_ratio: sim.steal_success_ratio,
        fixed_point_tails: tails,
        simulated_tails: sim.tails,
    })
}
