//! Pause-time statistics over repeated runs: min, p50, p90, p99, max, mean.

use serde::Serialize;

/// Summary of a set of pause times, in milliseconds.
///
/// Percentiles interpolate linearly between the two nearest ranks (the
/// definition of NumPy's default and of R's type 7), so that a small sample
/// still gives distinct p90 and p99.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PauseStats {
    /// Shortest pause.
    pub min: f64,
    /// Median pause.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Longest pause.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl PauseStats {
    /// Summarises pause times given in milliseconds. Returns `None` for an
    /// empty sample.
    pub fn from_ms(pauses_ms: &[f64]) -> Option<PauseStats> {
        if pauses_ms.is_empty() {
            return None;
        }
        let mut sorted = pauses_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        Some(PauseStats {
            min: sorted[0],
            p50: percentile(&sorted, 0.50),
            p90: percentile(&sorted, 0.90),
            p99: percentile(&sorted, 0.99),
            max: sorted[sorted.len() - 1],
            mean,
        })
    }

    /// Every statistic with its name, in the order the reports list them.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("min", self.min),
            ("p50", self.p50),
            ("p90", self.p90),
            ("p99", self.p99),
            ("max", self.max),
            ("mean", self.mean),
        ]
    }
}

/// The `q` quantile (0..=1) of a sorted, non-empty sample, interpolating
/// linearly between neighbouring ranks.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    debug_assert!(!sorted.is_empty());
    let rank = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// The median of a non-empty sample (sorts a copy).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile(&sorted, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_sample_has_no_stats() {
        assert_eq!(PauseStats::from_ms(&[]), None);
    }

    #[test]
    fn single_sample_is_every_statistic() {
        let s = PauseStats::from_ms(&[2.5]).unwrap();
        assert_eq!(
            (s.min, s.p50, s.p99, s.max, s.mean),
            (2.5, 2.5, 2.5, 2.5, 2.5)
        );
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v: Vec<f64> = (1..=11).map(f64::from).collect();
        let s = PauseStats::from_ms(&v).unwrap();
        assert_eq!(s.min, 1.0);
        assert_eq!(s.p50, 6.0);
        assert_eq!(s.p90, 10.0);
        assert!((s.p99 - 10.9).abs() < 1e-9);
        assert_eq!(s.max, 11.0);
        assert_eq!(s.mean, 6.0);
        let names: Vec<&str> = s.named().iter().map(|&(name, _)| name).collect();
        assert_eq!(names, ["min", "p50", "p90", "p99", "max", "mean"]);
        let values: Vec<f64> = s.named().iter().map(|&(_, v)| v).collect();
        assert_eq!(values, [s.min, s.p50, s.p90, s.p99, s.max, s.mean]);
    }

    #[test]
    fn order_of_input_does_not_matter() {
        let a = PauseStats::from_ms(&[3.0, 1.0, 2.0]).unwrap();
        let b = PauseStats::from_ms(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(a, b);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
