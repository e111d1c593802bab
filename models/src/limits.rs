//! The largest runs the models accept. A model keeps its state per processor
//! and its total load per step in memory, so both are bounded: a mistyped
//! `--steps` or `--processors` is a clear error, not an aborted allocation.

use crate::ModelError;

/// The most processors a model run simulates.
pub const MAX_PROCESSORS: usize = 1 << 20;

/// The most steps a step-based model (Berenbrink, Hendler-Shavit) runs: its
/// per-step series then take at most 160 MB.
pub const MAX_STEPS: u64 = 10_000_000;

/// Checks that `processors` is between 2 and [`MAX_PROCESSORS`].
pub(crate) fn check_processors(processors: usize) -> Result<(), ModelError> {
    check_range("processors", processors, 2, MAX_PROCESSORS)
}

/// Checks that `steps` is between 2 and [`MAX_STEPS`].
pub(crate) fn check_steps(steps: u64) -> Result<(), ModelError> {
    check_range("steps", steps, 2, MAX_STEPS)
}

/// Checks that `value` is between `lo` and `hi`, both included; the error
/// names the parameter and the range.
fn check_range<T: PartialOrd + std::fmt::Display>(
    name: &'static str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), ModelError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(ModelError::invalid(
            name,
            value,
            format!("between {lo} and {hi}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_and_named() {
        assert!(check_processors(2).is_ok());
        assert!(check_processors(MAX_PROCESSORS).is_ok());
        assert!(check_steps(2).is_ok());
        assert!(check_steps(MAX_STEPS).is_ok());
        for bad in [0, 1, MAX_PROCESSORS + 1, usize::MAX] {
            let err = check_processors(bad).unwrap_err().to_string();
            assert!(
                err.contains("processors") && err.contains("1048576"),
                "{err}"
            );
        }
        for bad in [0, 1, MAX_STEPS + 1, u64::MAX] {
            let err = check_steps(bad).unwrap_err().to_string();
            assert!(err.contains("steps") && err.contains("10000000"), "{err}");
        }
    }
}
