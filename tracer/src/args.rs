//! Value parsers shared by the subcommands. They reject bad values while
//! clap parses, so a bad name or a zero thread count is a usage error
//! (exit 2) with a message listing what is accepted.

use std::error::Error;
use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use strum::VariantNames;

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
    }

    #[test]
    fn whole_and_positive_numbers() {
        assert_eq!(whole::<usize>("0"), Ok(0));
        assert_eq!(positive::<u32>("4"), Ok(4));
        assert!(positive::<u32>("0").unwrap_err().contains("at least 1"));
    }
}
