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
    if (2..=MAX_PROCESSORS).contains(&processors) {
        Ok(())
    } else {
        Err(ModelError::invalid(
            "processors",
            processors,
            format!("between 2 and {MAX_PROCESSORS}"),
        ))
    }
}

/// Checks that `steps` is between 2 and [`MAX_STEPS`].
pub(crate) fn check_steps(steps: u64) -> Result<(), ModelError> {
    if (2..=MAX_STEPS).contains(&steps) {
        Ok(())
    } else {
        Err(ModelError::invalid(
            "steps",
            steps,
            format!("between 2 and {MAX_STEPS}"),
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
