//! Run-time configuration of the mark engine.
//!
//! Every option has a command-line name ([`std::str::FromStr`] and
//! [`std::fmt::Display`] agree on it, and [`strum::VariantNames`] lists the
//! names) and serialises under that name. The deque kinds are the deques
//! crate's [`DequeKind`]; the other options are defined here, with their
//! names derived by strum.

use serde::Serialize;
pub use stealmark_deques::DequeKind;
use strum::{Display, EnumString, IntoStaticStr, VariantArray, VariantNames};
use thiserror::Error;

/// A configuration value that could not be parsed or is out of range.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// A name that is not one of the option's values.
    #[error("unknown {option} `{given}`; expected one of: {}", expected.join(", "))]
    UnknownName {
        /// The option being parsed (`policy`, `steal amount`, ...).
        option: &'static str,
        /// The text given.
        given: String,
        /// The accepted names.
        expected: &'static [&'static str],
    },
    /// A numeric field outside its accepted range.
    #[error("{field} = {value} is out of range: {reason}")]
    OutOfRange {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What the field accepts.
        reason: &'static str,
    },
}

/// An option defined here, for [`ConfigError::UnknownName`]: what the
/// option is called.
trait Named: VariantNames {
    /// The option, as error messages name it.
    const OPTION: &'static str;
}

impl ConfigError {
    /// The error of parsing `given` as a value of option `T` (strum's
    /// `FromStr` calls it for a name it does not know).
    fn unknown<T: Named>(given: &str) -> ConfigError {
        ConfigError::UnknownName {
            option: T::OPTION,
            given: given.to_owned(),
            expected: T::VARIANTS,
        }
    }
}

/// When a worker that still has work tries to balance with another.
#[derive(Display, EnumString, IntoStaticStr, VariantArray, VariantNames, Serialize)]
#[strum(
    serialize_all = "kebab-case",
    parse_err_ty = ConfigError,
    parse_err_fn = ConfigError::unknown::<BalancePolicy>
)]
#[serde(into = "&'static str")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BalancePolicy {
    /// `on-empty`: steal only when the local deque is empty (Arora et al.).
    OnEmpty,
    /// `probabilistic`: try to balance with probability µ/len (Rudolph et
    /// al.; Hendler-Shavit §2.2.1).
    Probabilistic,
    /// `threshold`: balance when the local load has changed by a constant
    /// factor since the last balance (Lüling-Monien; Berenbrink et al.).
    Threshold,
}

impl Named for BalancePolicy {
    const OPTION: &'static str = "policy";
}

/// How many items a steal takes.
#[derive(Display, EnumString, IntoStaticStr, VariantArray, VariantNames, Serialize)]
#[strum(
    serialize_all = "kebab-case",
    parse_err_ty = ConfigError,
    parse_err_fn = ConfigError::unknown::<StealAmount>
)]
#[serde(into = "&'static str")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StealAmount {
    /// `one`: one item per steal.
    One,
    /// `half`: half of the victim's items per steal.
    Half,
}

impl Named for StealAmount {
    const OPTION: &'static str = "steal amount";
}

/// How a thief picks its victim.
#[derive(Display, EnumString, IntoStaticStr, VariantArray, VariantNames, Serialize)]
#[strum(
    serialize_all = "kebab-case",
    parse_err_ty = ConfigError,
    parse_err_fn = ConfigError::unknown::<VictimSelection>
)]
#[serde(into = "&'static str")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VictimSelection {
    /// `random`: another worker chosen uniformly at random (the "random
    /// victim" of the literature).
    Random,
    /// `best-of-2`: two random other workers; the one with the longer deque.
    #[strum(serialize = "best-of-2")]
    BestOf2,
}

impl Named for VictimSelection {
    const OPTION: &'static str = "victim selection";
}

/// The full engine configuration.
///
/// ```
/// use stealmark_marker::{MarkerConfig, DequeKind, BalancePolicy};
/// let mut c = MarkerConfig::with_workers(4);
/// c.deque = "chase-lev".parse().unwrap();
/// c.policy = BalancePolicy::Threshold;
/// assert_eq!(c.deque, DequeKind::ChaseLev);
/// c.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerConfig {
    /// Number of GC workers (at least 1): the thread that calls
    /// [`crate::Marker::mark`] and `workers - 1` persistent threads.
    pub workers: usize,
    /// The deque kind.
    pub deque: DequeKind,
    /// The balancing policy for workers that still have work.
    pub policy: BalancePolicy,
    /// Items taken per steal.
    pub steal: StealAmount,
    /// Victim selection.
    pub victim: VictimSelection,
    /// µ of the probabilistic policy: balance with probability min(1, µ/len).
    pub mu: f64,
    /// The constant factor of the threshold policy (> 1).
    pub threshold_factor: f64,
    /// Objects scanned between two evaluations of the balancing policy.
    pub balance_interval: u32,
    /// Depth of the prefetch FIFO between the mark stack and the scan
    /// (0 turns prefetching off; at most [`MarkerConfig::MAX_PREFETCH`]).
    pub prefetch: usize,
    /// Keep new grey objects on a private stack and share the oldest of them
    /// through the deque (see `deque_reserve`); `false` pushes every object
    /// onto the deque, as in Flood et al.
    pub private_work: bool,
    /// With private work: the items a busy worker keeps in its deque while
    /// no worker is idle. While any worker is idle, busy workers share half
    /// of their private items.
    pub deque_reserve: usize,
    /// Capacity of each worker's deque: fixed for `abp`, initial for the others.
    pub deque_capacity: usize,
    /// Arrays with more than twice this many slots are scanned in chunks of
    /// this many slots, claimed by any worker.
    pub array_chunk: usize,
    /// Count live objects, their bytes and a histogram by type while
    /// marking ([`Report::live_bytes`](crate::Report::live_bytes),
    /// [`Report::live_by_type`](crate::Report::live_by_type)). It costs a
    /// few percent of the pause (`docs/benchmarks.md`, "Runtime contract");
    /// a runtime that counts live bytes in its sweep can turn it off, and
    /// then live bytes are zero and the histogram empty (live objects are
    /// still counted: the workers count objects scanned anyway).
    pub count_live: bool,
    /// Rounds of ephemeron resolution per collection that register waiting
    /// ephemerons in a step of their own and then read the key index
    /// without locks or fences; a later round shares the index and
    /// registers ephemerons as it finds them (fenced), ending the rounds
    /// (`docs/design.md`, "Ephemerons"). 0 shares it from the first round.
    pub ephemeron_frozen_rounds: u32,
    /// Objects scanned between two samples of the deque-length timeline
    /// (0 turns the timeline off).
    pub timeline_interval: u32,
    /// Record timestamped spans (marking, stealing, idle, termination) for
    /// trace files.
    pub spans: bool,
    /// Base seed of the workers' random number generators; worker `i` uses a
    /// stream derived from this and `i`.
    pub seed: u64,
}

impl MarkerConfig {
    /// The largest prefetch FIFO depth.
    pub const MAX_PREFETCH: usize = 16;

    /// The default configuration with `workers` workers.
    pub fn with_workers(workers: usize) -> MarkerConfig {
        MarkerConfig {
            workers,
            ..MarkerConfig::default()
        }
    }

    /// Checks every numeric field, and that the deque returns each item
    /// exactly once (the marker does not yet tolerate an object taken twice).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let range = |ok: bool, field, value: String, reason| {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::OutOfRange {
                    field,
                    value,
                    reason,
                })
            }
        };
        // Until the marker tolerates an object taken twice (weak-slot
        // records, large-array tokens and statistics assume exactly once),
        // it refuses the deques that return an item at least once.
        range(
            self.deque.exactly_once(),
            "deque",
            self.deque.to_string(),
            "a deque that returns each item exactly once (not `idempotent`)",
        )?;
        range(
            (1..=1024).contains(&self.workers),
            "workers",
            self.workers.to_string(),
            "1 to 1024",
        )?;
        range(
            self.prefetch <= Self::MAX_PREFETCH,
            "prefetch",
            self.prefetch.to_string(),
            "0 (off) to 16",
        )?;
        range(
            (16..=1 << 26).contains(&self.deque_capacity),
            "deque_capacity",
            self.deque_capacity.to_string(),
            "16 to 2^26",
        )?;
        range(
            self.array_chunk >= 16,
            "array_chunk",
            self.array_chunk.to_string(),
            "at least 16",
        )?;
        range(
            self.mu.is_finite() && self.mu > 0.0,
            "mu",
            self.mu.to_string(),
            "a positive number",
        )?;
        range(
            self.threshold_factor.is_finite() && self.threshold_factor > 1.0,
            "threshold_factor",
            self.threshold_factor.to_string(),
            "a number above 1",
        )?;
        range(
            self.balance_interval >= 1,
            "balance_interval",
            self.balance_interval.to_string(),
            "at least 1",
        )
    }
}

impl Default for MarkerConfig {
    fn default() -> MarkerConfig {
        MarkerConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            deque: DequeKind::StealHalf,
            policy: BalancePolicy::OnEmpty,
            steal: StealAmount::Half,
            victim: VictimSelection::Random,
            mu: 1.0,
            threshold_factor: 2.0,
            balance_interval: 16,
            prefetch: 8,
            private_work: true,
            deque_reserve: 32,
            deque_capacity: 4096,
            array_chunk: 512,
            count_live: true,
            ephemeron_frozen_rounds: 4,
            timeline_interval: 4096,
            spans: false,
            seed: 0x5EED_57EA_1A4C,
        }
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::{
        BalancePolicy, ConfigError, DequeKind, MarkerConfig, StealAmount, VictimSelection,
    };

    #[test]
    fn names_round_trip() {
        for d in DequeKind::VARIANTS {
            assert_eq!(d.to_string().parse::<DequeKind>().unwrap(), *d);
        }
        for p in BalancePolicy::VARIANTS {
            assert_eq!(p.to_string().parse::<BalancePolicy>().unwrap(), *p);
        }
        for s in StealAmount::VARIANTS {
            assert_eq!(s.to_string().parse::<StealAmount>().unwrap(), *s);
        }
        for v in VictimSelection::VARIANTS {
            assert_eq!(v.to_string().parse::<VictimSelection>().unwrap(), *v);
        }
    }

    #[test]
    fn unknown_name_is_a_typed_error() {
        let e = "stealhalf".parse::<DequeKind>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("stealhalf") && msg.contains("steal-half"),
            "{msg}"
        );
        let e = "uniform".parse::<VictimSelection>().unwrap_err();
        assert_eq!(
            e,
            ConfigError::UnknownName {
                option: "victim selection",
                given: "uniform".into(),
                expected: &["random", "best-of-2"],
            }
        );
        assert_eq!(
            e.to_string(),
            "unknown victim selection `uniform`; expected one of: random, best-of-2"
        );
    }

    #[test]
    fn serialises_under_the_command_line_names() {
        let mut c = MarkerConfig::with_workers(2);
        c.deque = DequeKind::ChaseLevQuiescent;
        c.victim = VictimSelection::BestOf2;
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["deque"], "chase-lev-q");
        assert_eq!(json["policy"], "on-empty");
        assert_eq!(json["steal"], "half");
        assert_eq!(json["victim"], "best-of-2");
    }

    #[test]
    fn validation_names_the_field() {
        let mut c = MarkerConfig::with_workers(0);
        assert!(c.validate().unwrap_err().to_string().contains("workers"));
        c.workers = 2;
        c.prefetch = 17;
        assert!(c.validate().unwrap_err().to_string().contains("prefetch"));
        let mut c = MarkerConfig::with_workers(2);
        c.deque = DequeKind::Idempotent;
        assert!(c.validate().unwrap_err().to_string().contains("idempotent"));
    }
}
