//! The seeded generator every model uses, and the few samplers they need.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Creates the model generator for `seed` (portable: PCG-64 from a `u64`).
pub(crate) fn seeded(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// Samples Binomial(`trials`, `p`) as a sum of Bernoulli draws: generator
/// counts per host are small, and this keeps the chain exactly as specified.
pub(crate) fn binomial(rng: &mut Pcg64, trials: u64, p: f64) -> u64 {
    if p >= 1.0 {
        return trials;
    }
    (0..trials).filter(|_| rng.random_bool(p)).count() as u64
}

/// Samples an exponential variate of the given rate (> 0).
pub(crate) fn exponential(rng: &mut Pcg64, rate: f64) -> f64 {
    // `random::<f64>()` is in [0, 1); 1 - u is in (0, 1], so ln is finite.
    -(1.0 - rng.random::<f64>()).ln() / rate
}
