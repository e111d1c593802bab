//! The rule that calls a finite run stable or unstable.

/// The stability rule, in words (shown by `stealmark simulate --help`).
pub const STABILITY_RULE: &str =
    "stable = the least-squares growth rate of the total load over the \
second half of the run is below 1% of the arrival rate λn (tasks per step); a chain that keeps a \
fixed fraction of its arrivals grows linearly and fails the rule, a positive-recurrent one has a \
growth rate near 0";

/// The parameters of [`STABILITY_RULE`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StabilityRule {
    /// The fraction of the arrival rate above which growth counts as unstable.
    pub max_growth_fraction: f64,
}

impl StabilityRule {
    /// The rule used by every model: 1% of the arrival rate.
    pub const DEFAULT: StabilityRule = StabilityRule {
        max_growth_fraction: 0.01,
    };

    /// Whether a run with this growth rate (tasks/step) and arrival rate
    /// (tasks/step) is stable under the rule.
    pub fn is_stable(&self, growth_rate: f64, arrival_rate: f64) -> bool {
        growth_rate < self.max_growth_fraction * arrival_rate
    }
}

/// Least-squares slope of `loads` (one value per step) over its second half.
/// Returns 0 for fewer than two points.
pub fn growth_rate(loads: &[u64]) -> f64 {
    let tail = &loads[loads.len() / 2..];
    let n = tail.len() as f64;
    if tail.len() < 2 {
        return 0.0;
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = tail.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, &y) in tail.iter().enumerate() {
        let dx = x as f64 - mean_x;
        sxy += dx * (y as f64 - mean_y);
        sxx += dx * dx;
    }
    sxy / sxx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_line_is_exact() {
        let loads: Vec<u64> = (0..100).map(|t| 3 * t + 7).collect();
        assert!((growth_rate(&loads) - 3.0).abs() < 1e-9);
        assert_eq!(growth_rate(&[5]), 0.0);
        let flat = vec![4; 50];
        assert_eq!(growth_rate(&flat), 0.0);
    }

    #[test]
    fn rule_compares_with_one_percent_of_arrivals() {
        let rule = StabilityRule::DEFAULT;
        assert!(rule.is_stable(0.05, 10.0));
        assert!(!rule.is_stable(0.2, 10.0));
    }
}
