//! The work-stealing Markov chain of Berenbrink, Friedetzky and Goldberg
//! (2003), section 2, Fig. 1.
//!
//! `n` processors, `n` generators. The generator-allocation distribution is
//! the point distribution that splits the generators equally over the first
//! `K` processors (the first `n mod K` hosts get one more when `K` does not
//! divide `n`). One step, from `X_t` to `X_{t+1}`:
//!
//! 1. every generator creates a task with probability λ, into its host's queue
//!    (`X'_t(i)`);
//! 2. every processor with an empty queue sends a request to a processor
//!    chosen uniformly at random from all `n` (itself included, as in Fig. 1);
//! 3. every non-empty processor that received requests picks one uniformly
//!    and transfers `f(X'_t(k))` tasks to it;
//! 4. every processor services one task: `X_{t+1}(i) = max(0, X'(i) + j⁺ − j⁻ − 1)`.
//!
//! The work-stealing function `f` is a [`StealFunction`]. The run starts
//! empty and reports the total load after every step; [`STABILITY_RULE`]
//! decides `stable`.
//!
//! [`STABILITY_RULE`]: crate::STABILITY_RULE

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use serde::Serialize;

use crate::{growth_rate, limits, rng, ModelError, StabilityRule};

/// The work-stealing function `f`: how many of `ℓ` tasks a victim hands over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StealFunction {
    /// `f(ℓ) = min(1, ℓ)`: one task, like a single-item deque steal.
    One,
    /// `f(ℓ) = ⌊ℓ/2⌋`, the paper's natural function (Theorem 10).
    Half,
    /// `f(ℓ) = min(C, ℓ)`: a bounded batch (Theorem 22 with `j(n) = C`).
    Const(u64),
    /// `f(ℓ) = ⌊Rℓ⌋` for `0 < R ≤ 1`.
    Fraction(f64),
}

impl StealFunction {
    /// `f(ℓ)`.
    pub fn amount(&self, load: u64) -> u64 {
        match *self {
            StealFunction::One => load.min(1),
            StealFunction::Half => load / 2,
            StealFunction::Const(c) => load.min(c),
            StealFunction::Fraction(r) => ((r * load as f64).floor() as u64).min(load),
        }
    }

    /// The bound `j(n)` with `f(ℓ) ≤ j(n)` for every `ℓ`, if `f` is bounded.
    pub fn bound(&self) -> Option<u64> {
        match *self {
            StealFunction::One => Some(1),
            StealFunction::Const(c) => Some(c),
            StealFunction::Half | StealFunction::Fraction(_) => None,
        }
    }
}

impl fmt::Display for StealFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StealFunction::One => write!(f, "one"),
            StealFunction::Half => write!(f, "half"),
            StealFunction::Const(c) => write!(f, "const:{c}"),
            StealFunction::Fraction(r) => write!(f, "fraction:{r}"),
        }
    }
}

impl FromStr for StealFunction {
    type Err = ModelError;

    /// Parses `one`, `half`, `const:C` (C ≥ 1) or `fraction:R` (0 < R ≤ 1).
    fn from_str(s: &str) -> Result<Self, ModelError> {
        let expected = "one, half, const:C (integer C >= 1) or fraction:R (0 < R <= 1)";
        match s {
            "one" => return Ok(StealFunction::One),
            "half" => return Ok(StealFunction::Half),
            _ => {}
        }
        if let Some(c) = s.strip_prefix("const:") {
            return match c.parse::<u64>() {
                Ok(c) if c >= 1 => Ok(StealFunction::Const(c)),
                _ => Err(ModelError::invalid("steal", s, expected)),
            };
        }
        if let Some(r) = s.strip_prefix("fraction:") {
            return match r.parse::<f64>() {
                Ok(r) if r > 0.0 && r <= 1.0 => Ok(StealFunction::Fraction(r)),
                _ => Err(ModelError::invalid("steal", s, expected)),
            };
        }
        Err(ModelError::invalid("steal", s, expected))
    }
}

impl Serialize for StealFunction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The parameters of one run of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BerenbrinkConfig {
    /// `n`: processors, and generators.
    pub processors: usize,
    /// `K`: the processors that host the generators (the first `K`).
    pub generator_hosts: usize,
    /// λ: each generator's task probability per step.
    pub lambda: f64,
    /// The work-stealing function `f`.
    pub steal: StealFunction,
    /// Steps to run.
    pub steps: u64,
    /// The seed.
    pub seed: u64,
}

impl BerenbrinkConfig {
    /// Checks the parameters' ranges.
    pub fn validate(&self) -> Result<(), ModelError> {
        limits::check_processors(self.processors)?;
        if self.generator_hosts == 0 || self.generator_hosts > self.processors {
            return Err(ModelError::invalid(
                "generator-hosts",
                self.generator_hosts,
                format!(
                    "between 1 and the number of processors ({})",
                    self.processors
                ),
            ));
        }
        if !(self.lambda > 0.0 && self.lambda <= 1.0) {
            return Err(ModelError::invalid("lambda", self.lambda, "0 < λ <= 1"));
        }
        limits::check_steps(self.steps)?;
        Ok(())
    }

    /// The number of generators on host `i` (equal split, remainder first).
    pub fn generators_on(&self, host: usize) -> u64 {
        if host >= self.generator_hosts {
            return 0;
        }
        let base = self.processors / self.generator_hosts;
        let extra = usize::from(host < self.processors % self.generator_hosts);
        (base + extra) as u64
    }

    /// The expected arrivals per step, λn.
    pub fn arrival_rate(&self) -> f64 {
        self.lambda * self.processors as f64
    }

    /// What the paper predicts for this configuration.
    pub fn prediction(&self) -> Prediction {
        let lambda_n = self.arrival_rate();
        match self.steal.bound() {
            Some(j) if (self.generator_hosts as f64) * (j as f64 + 1.0) < lambda_n => {
                Prediction::Transient
            }
            Some(_) => Prediction::None,
            None if self.lambda < 1.0 && self.steal_satisfies_properties() => Prediction::Stable,
            None => Prediction::None,
        }
    }

    fn steal_satisfies_properties(&self) -> bool {
        match self.steal {
            StealFunction::Half => true,
            StealFunction::Fraction(r) => r <= 0.5,
            _ => false,
        }
    }
}

/// What Berenbrink et al. predict for a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prediction {
    /// Theorem 22: `f ≤ j(n)` and `K(j(n) + 1) < λn`, so the chain is transient.
    Transient,
    /// Theorem 10: `f` satisfies Properties 1–3 (`⌊Rℓ⌋`, R ≤ 1/2) and λ < 1,
    /// so the chain is positive recurrent (for `n` large enough).
    Stable,
    /// Neither theorem applies.
    None,
}

impl fmt::Display for Prediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Prediction::Transient => "unstable (Theorem 22: K(j+1) < λn)",
            Prediction::Stable => "stable (Theorem 10)",
            Prediction::None => "no prediction",
        })
    }
}

/// The total load after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoadSample {
    /// The step (1-based: the load after `step` steps).
    pub step: u64,
    /// The sum of all queue lengths.
    pub load: u64,
}

/// Thins a per-step load series to at most about `points` samples, always
/// keeping the last one.
pub fn sample_loads(loads: &[u64], points: usize) -> Vec<LoadSample> {
    let stride = loads.len().div_ceil(points.max(1)).max(1);
    let mut out: Vec<LoadSample> = loads
        .iter()
        .enumerate()
        .skip(stride - 1)
        .step_by(stride)
        .map(|(i, &load)| LoadSample {
            step: i as u64 + 1,
            load,
        })
        .collect();
    if let Some(&last) = loads.last() {
        if out.last().map(|s| s.step) != Some(loads.len() as u64) {
            out.push(LoadSample {
                step: loads.len() as u64,
                load: last,
            });
        }
    }
    out
}

/// How many samples of the total load a report keeps.
pub const SAMPLE_POINTS: usize = 500;

/// The outcome of a run (of the chain, or of real threads).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BerenbrinkReport {
    /// The configuration that ran.
    pub config: BerenbrinkConfig,
    /// The total load, sampled over time (about [`SAMPLE_POINTS`] samples).
    pub total_load: Vec<LoadSample>,
    /// The total load after the last step.
    pub final_total_load: u64,
    /// The least-squares growth of the total load over the second half, in
    /// tasks per step.
    pub growth_rate: f64,
    /// The verdict of [`crate::STABILITY_RULE`].
    pub stable: bool,
    /// What the paper predicts for this configuration.
    pub prediction: Prediction,
    /// Tasks generated over the run.
    pub generated: u64,
    /// Tasks serviced over the run.
    pub serviced: u64,
    /// Tasks moved by steals over the run.
    pub stolen: u64,
}

impl BerenbrinkReport {
    pub(crate) fn from_loads(
        config: BerenbrinkConfig,
        loads: &[u64],
        generated: u64,
        serviced: u64,
        stolen: u64,
    ) -> Self {
        let growth = growth_rate(loads);
        BerenbrinkReport {
            config,
            total_load: sample_loads(loads, SAMPLE_POINTS),
            final_total_load: loads.last().copied().unwrap_or(0),
            growth_rate: growth,
            stable: StabilityRule::DEFAULT.is_stable(growth, config.arrival_rate()),
            prediction: config.prediction(),
            generated,
            serviced,
            stolen,
        }
    }
}

/// Runs the chain of Fig. 1 from the empty state.
pub fn simulate(config: &BerenbrinkConfig) -> Result<BerenbrinkReport, ModelError> {
    config.validate()?;
    let n = config.processors;
    let mut rng = rng::seeded(config.seed);
    let mut queue = vec![0u64; n];
    // Per step scratch: the accepted requester of each processor (usize::MAX:
    // none), the number of requests it saw, and the transfers.
    let mut chosen = vec![usize::MAX; n];
    let mut requests = vec![0u32; n];
    let mut gain = vec![0u64; n];
    let mut loss = vec![0u64; n];
    let mut loads = Vec::with_capacity(config.steps as usize);
    let (mut generated, mut serviced, mut stolen) = (0u64, 0u64, 0u64);
    for _ in 0..config.steps {
        for (host, q) in queue.iter_mut().enumerate().take(config.generator_hosts) {
            let new = rng::binomial(&mut rng, config.generators_on(host), config.lambda);
            *q += new;
            generated += new;
        }
        chosen.fill(usize::MAX);
        requests.fill(0);
        for i in 0..n {
            if queue[i] == 0 {
                let k = rng.random_range(0..n);
                if queue[k] > 0 {
                    // Reservoir sampling: every requester of `k` ends up chosen
                    // with probability 1/requests.
                    requests[k] += 1;
                    if rng.random_range(0..requests[k]) == 0 {
                        chosen[k] = i;
                    }
                }
            }
        }
        gain.fill(0);
        loss.fill(0);
        for k in 0..n {
            if chosen[k] != usize::MAX {
                let amount = config.steal.amount(queue[k]);
                gain[chosen[k]] = amount;
                loss[k] = amount;
                stolen += amount;
            }
        }
        let mut total = 0;
        for i in 0..n {
            let after = queue[i] + gain[i] - loss[i];
            if after > 0 {
                serviced += 1;
            }
            queue[i] = after.saturating_sub(1);
            total += queue[i];
        }
        loads.push(total);
    }
    Ok(BerenbrinkReport::from_loads(
        *config, &loads, generated, serviced, stolen,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(steal: StealFunction) -> BerenbrinkConfig {
        BerenbrinkConfig {
            processors: 32,
            generator_hosts: 1,
            lambda: 0.5,
            steal,
            steps: 4_000,
            seed: 7,
        }
    }

    #[test]
    fn steal_functions_parse_and_apply() {
        assert_eq!("one".parse::<StealFunction>().unwrap(), StealFunction::One);
        assert_eq!(
            "half".parse::<StealFunction>().unwrap(),
            StealFunction::Half
        );
        assert_eq!(
            "const:3".parse::<StealFunction>().unwrap(),
            StealFunction::Const(3)
        );
        assert_eq!(
            "fraction:0.25".parse::<StealFunction>().unwrap(),
            StealFunction::Fraction(0.25)
        );
        for bad in [
            "",
            "two",
            "const:0",
            "const:x",
            "fraction:0",
            "fraction:1.5",
            "fraction:nan",
        ] {
            assert!(bad.parse::<StealFunction>().is_err(), "{bad}");
        }
        assert_eq!(StealFunction::One.amount(0), 0);
        assert_eq!(StealFunction::One.amount(9), 1);
        assert_eq!(StealFunction::Half.amount(9), 4);
        assert_eq!(StealFunction::Const(3).amount(2), 2);
        assert_eq!(StealFunction::Const(3).amount(20), 3);
        assert_eq!(StealFunction::Fraction(0.25).amount(9), 2);
    }

    #[test]
    fn generators_split_equally_with_remainder_first() {
        let c = BerenbrinkConfig {
            processors: 10,
            generator_hosts: 3,
            ..config(StealFunction::Half)
        };
        let split: Vec<u64> = (0..10).map(|i| c.generators_on(i)).collect();
        assert_eq!(split, [4, 3, 3, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(split.iter().sum::<u64>(), 10);
    }

    #[test]
    fn tasks_are_conserved() {
        for steal in [
            StealFunction::One,
            StealFunction::Half,
            StealFunction::Const(4),
        ] {
            let r = simulate(&config(steal)).unwrap();
            assert_eq!(r.generated - r.serviced, r.final_total_load, "{steal}");
        }
    }

    #[test]
    fn runs_are_deterministic_per_seed() {
        let a = simulate(&config(StealFunction::Half)).unwrap();
        let b = simulate(&config(StealFunction::Half)).unwrap();
        assert_eq!(a, b);
        let c = simulate(&BerenbrinkConfig {
            seed: 8,
            ..config(StealFunction::Half)
        })
        .unwrap();
        assert_ne!(a.total_load, c.total_load);
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = BerenbrinkConfig {
            generator_hosts: 40,
            ..config(StealFunction::One)
        };
        let err = simulate(&bad).unwrap_err().to_string();
        assert!(err.contains("generator-hosts"), "{err}");
        let bad = BerenbrinkConfig {
            lambda: 1.5,
            ..config(StealFunction::One)
        };
        assert!(simulate(&bad).unwrap_err().to_string().contains("lambda"));
    }

    #[test]
    fn huge_runs_are_refused_before_allocating() {
        let steps = BerenbrinkConfig {
            steps: u64::MAX,
            ..config(StealFunction::Half)
        };
        assert!(simulate(&steps).unwrap_err().to_string().contains("steps"));
        let processors = BerenbrinkConfig {
            processors: usize::MAX,
            ..config(StealFunction::Half)
        };
        let err = simulate(&processors).unwrap_err().to_string();
        assert!(err.contains("processors"), "{err}");
    }

    #[test]
    fn samples_keep_the_last_step() {
        let loads: Vec<u64> = (1..=1001).collect();
        let s = sample_loads(&loads, 100);
        assert!(s.len() <= 102);
        assert_eq!(
            s.last().unwrap(),
            &LoadSample {
                step: 1001,
                load: 1001
            }
        );
        assert_eq!(s[0].step, s[0].load);
    }
}
