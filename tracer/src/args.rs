//! Value parsers shared by the subcommands. They reject bad values while
//! clap parses, so a bad name or a zero thread count is a usage error
//! (exit 2) with a message listing what is accepted.

use std::error::Error;
use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use stealmark_marker::{BalancePolicy, MarkerConfig};
use strum::VariantNames;

use crate::error::{CliError, CliResult};

/// The most GC workers the tool accepts (the marker's own limit).
pub const MAX_THREADS: usize = 1024;

/// The message of a value parser for a negative value where a positive
/// number is expected (clap is told to pass negative-looking values to the
/// parsers, so that this reaches the user instead of "unexpected argument").
fn negative(s: &str) -> Option<String> {
    s.trim()
        .starts_with('-')
        .then(|| format!("`{}` is negative; the value must be positive", s.trim()))
}

/// Parses a worker count: 1 to [`MAX_THREADS`].
pub fn threads(s: &str) -> Result<usize, String> {
    if let Some(message) = negative(s) {
        return Err(message);
    }
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a thread count; give a whole number such as 2"))?;
    if n == 0 {
        return Err("the thread count must be at least 1".into());
    }
    if n > MAX_THREADS {
        return Err(format!("at most {MAX_THREADS} threads are supported"));
    }
    Ok(n)
}

/// Parses a run count: at least 1.
pub fn runs(s: &str) -> Result<usize, String> {
    if let Some(message) = negative(s) {
        return Err(message);
    }
    match s.trim().parse::<usize>() {
        Ok(0) => Err("at least one run is needed".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{s}` is not a run count; give a whole number such as 10"
        )),
    }
}

/// Parses a whole number that may be zero (a warm-up count, a seed).
pub fn whole<T: FromStr>(s: &str) -> Result<T, String> {
    if let Some(message) = negative(s) {
        return Err(format!("{message} or 0"));
    }
    s.trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number; give one such as 3"))
}

/// Parses a whole number of at least 1 (a degree, a branch, an interval).
pub fn positive<T: FromStr + PartialEq + Default>(s: &str) -> Result<T, String> {
    if let Some(message) = negative(s) {
        return Err(message);
    }
    match s.trim().parse::<T>() {
        Ok(v) if v == T::default() => Err("the value must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number; give a positive one such as 4"
        )),
    }
}

/// Parses a finite real number above `min`.
fn real_above(s: &str, min: f64, example: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > min => Ok(v),
        Ok(_) if min == 0.0 => Err(format!(
            "`{s}` must be positive; give a value such as {example}"
        )),
        Ok(_) => Err(format!(
            "`{s}` must be above {min}; give a value such as {example}"
        )),
        Err(_) => Err(format!("`{s}` is not a number; give one such as {example}")),
    }
}

/// Parses a switch: `on` or `off`.
pub fn on_off(s: &str) -> Result<bool, String> {
    match s.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}` is not a switch; give on or off")),
    }
}

/// A switch's word: `on` or `off` (what [`on_off`] parses).
pub fn switch_word(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// Parses µ of the probabilistic policy: a positive real number.
pub fn mu(s: &str) -> Result<f64, String> {
    real_above(s, 0.0, "0.5")
}

/// Parses the constant factor of the threshold policy: a real number
/// above 1.
pub fn threshold_factor(s: &str) -> Result<f64, String> {
    real_above(s, 1.0, "2")
}

/// Parses an object count: digits, optionally with `_` or `,` separators,
/// and an optional suffix `k` (thousand), `M` (million) or `G` (billion),
/// which may follow a decimal fraction (`2.5M`).
pub fn count(s: &str) -> Result<u64, String> {
    if let Some(message) = negative(s) {
        return Err(message);
    }
    let bad = || format!("`{s}` is not a count; give a number such as 1000000, 250k or 2.5M");
    let t: String = s
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != ',')
        .collect();
    let (digits, scale) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t.as_str(), 1.0),
    };
    if scale == 1.0 {
        return digits.parse::<u64>().map_err(|_| bad());
    }
    let v: f64 = digits.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || v * scale > u64::MAX as f64 {
        return Err(bad());
    }
    Ok((v * scale).round() as u64)
}

/// The parser of every option whose values are named by strum (the deque
/// kinds, the balancing policies, the steal amounts, the victim
/// selections): it accepts `T`'s names, which `--help` lists and a usage
/// error names, and parses them with `T`'s `FromStr`.
pub fn named<T>() -> impl TypedValueParser<Value = T>
where
    T: VariantNames + FromStr + Clone + Send + Sync + 'static,
    T::Err: Error + Send + Sync + 'static,
{
    PossibleValuesParser::new(T::VARIANTS).try_map(|s| s.parse::<T>())
}

/// The balancing parameters of the engine, for `mark` and `bench`.
#[derive(Args, Debug, Clone, Default)]
pub struct BalanceArgs {
    /// µ of the probabilistic policy: a worker holding L grey objects
    /// balances with probability min(1, µ/L).
    #[arg(long, value_name = "MU", value_parser = mu, help = default_help(
        "µ of the probabilistic policy: a worker holding L grey objects balances with probability min(1, µ/L)",
        MarkerConfig::default().mu(),
    ))]
    pub mu: Option<f64>,
    /// The factor of the threshold policy.
    #[arg(long, value_name = "F", value_parser = threshold_factor, help = default_help(
        "The factor of the threshold policy: a worker balances when its load has fallen by this factor since it last balanced",
        MarkerConfig::default().threshold_factor(),
    ))]
    pub threshold_factor: Option<f64>,
    /// Objects scanned between two balancing checks.
    #[arg(long, value_name = "N", value_parser = positive::<u32>, help = default_help(
        "Objects a worker scans between two balancing checks (the policy, sharing work with idle workers, waking parked ones)",
        MarkerConfig::default().balance_interval(),
    ))]
    pub balance_interval: Option<u32>,
}

/// The help of `--private-stack`, with the engine's default.
pub fn private_stack_help() -> String {
    default_help(
        "Keep new grey objects on a private stack in front of the deque and share the oldest of them (on), or push every one onto the deque (off: pure work stealing)",
        switch_word(MarkerConfig::default().private_work()),
    )
}

/// The help of `--count-live`, with the engine's default.
pub fn count_live_help() -> String {
    default_help(
        "Count live bytes and types while marking (on), as a runtime's heap accounting needs, or not (off: a runtime that counts in its sweep)",
        switch_word(MarkerConfig::default().count_live()),
    )
}

/// A flag's help with the engine's default appended, so that `--help` shows
/// the default the engine really uses.
pub fn default_help(text: &str, default: impl std::fmt::Display) -> String {
    format!("{text} [default: {default}]")
}

impl BalanceArgs {
    /// Rejects a parameter that none of `policies` uses (a flag that would
    /// be silently ignored); `policy_flag` is the flag that chooses the
    /// policies (`--policy`, `--policies`).
    pub fn check(&self, policies: &[BalancePolicy], policy_flag: &str) -> CliResult {
        let unused = |given: bool, policy: BalancePolicy, flag: &str| {
            if given && !policies.contains(&policy) {
                Err(CliError::usage(format!(
                    "{flag} applies to the {policy} policy only; choose that policy with {policy_flag}, or leave {flag} out"
                )))
            } else {
                Ok(())
            }
        };
        unused(self.mu.is_some(), BalancePolicy::Probabilistic, "--mu")?;
        unused(
            self.threshold_factor.is_some(),
            BalancePolicy::Threshold,
            "--threshold-factor",
        )
    }

    /// Sets the given parameters in `config`.
    pub fn apply(&self, config: &mut MarkerConfig) {
        if let Some(mu) = self.mu {
            config.set_mu(mu);
        }
        if let Some(f) = self.threshold_factor {
            config.set_threshold_factor(f);
        }
        if let Some(n) = self.balance_interval {
            config.set_balance_interval(n);
        }
    }
}

/// Rejects a list (`--threads 2,2`) that names a value twice, rather than
/// silently dropping the repeat.
pub fn distinct<T: PartialEq + std::fmt::Display>(flag: &str, items: &[T]) -> CliResult {
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            return Err(CliError::usage(format!(
                "{flag} names {x} twice; give each value once"
            )));
        }
    }
    Ok(())
}

/// The number of CPUs, the default worker count.
pub fn ncpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts() {
        assert_eq!(threads("3"), Ok(3));
        assert!(threads("0").unwrap_err().contains("at least 1"));
        assert!(threads("x").is_err());
        assert!(threads("5000").is_err());
    }

    #[test]
    fn object_counts() {
        assert_eq!(count("1000"), Ok(1000));
        assert_eq!(count("1_000_000"), Ok(1_000_000));
        assert_eq!(count("250k"), Ok(250_000));
        assert_eq!(count("2.5M"), Ok(2_500_000));
        assert_eq!(count("1G"), Ok(1_000_000_000));
        assert!(count("lots").is_err());
        assert!(count("-1").is_err());
        assert!(count("-1k").is_err());
    }

    #[test]
    fn run_counts() {
        assert_eq!(runs("1"), Ok(1));
        assert!(runs("0").is_err());
    }

    #[test]
    fn negative_values_say_so() {
        for message in [
            count("-5").unwrap_err(),
            threads("-2").unwrap_err(),
            runs("-1").unwrap_err(),
            positive::<u32>("-3").unwrap_err(),
            whole::<usize>("-1").unwrap_err(),
        ] {
            assert!(message.contains("must be positive"), "{message}");
        }
        assert!(mu("-0.5").unwrap_err().contains("must be positive"));
        assert!(threshold_factor("0.5").unwrap_err().contains("above 1"));
    }

    #[test]
    fn repeated_list_values_are_rejected() {
        assert!(distinct("--threads", &[1, 2]).is_ok());
        let err = distinct("--threads", &[2, 1, 2]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("names 2 twice"), "{err}");
    }

    #[test]
    fn balancing_flags_need_their_policy() {
        let mu = BalanceArgs {
            mu: Some(0.5),
            ..BalanceArgs::default()
        };
        let err = mu.check(&[BalancePolicy::OnEmpty], "--policy").unwrap_err();
        assert!(err.to_string().contains("with --policy"), "{err}");
        assert!(mu
            .check(
                &[BalancePolicy::OnEmpty, BalancePolicy::Probabilistic],
                "--policies"
            )
            .is_ok());
        let interval = BalanceArgs {
            balance_interval: Some(8),
            ..BalanceArgs::default()
        };
        assert!(interval
            .check(&[BalancePolicy::OnEmpty], "--policy")
            .is_ok());
        let mut config = MarkerConfig::with_workers(1);
        interval.apply(&mut config);
        assert_eq!(config.balance_interval(), 8);
        assert_eq!(config.mu(), MarkerConfig::default().mu());
    }

    #[test]
    fn whole_and_positive_numbers() {
        assert_eq!(whole::<usize>("0"), Ok(0));
        assert_eq!(positive::<u32>("4"), Ok(4));
        assert!(positive::<u32>("0").unwrap_err().contains("at least 1"));
        assert_eq!(mu("0.25"), Ok(0.25));
        assert!(mu("inf").is_err());
        assert_eq!(threshold_factor("1.5"), Ok(1.5));
        assert_eq!(on_off("on"), Ok(true));
        assert_eq!(on_off("off"), Ok(false));
        assert!(on_off("yes").unwrap_err().contains("on or off"));
    }
}
