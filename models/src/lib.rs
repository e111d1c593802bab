//! Simulations of the analyses behind stealmark's balancing policies.
//!
//! Three papers justify the policies the marker offers; this crate turns each
//! into a seeded, deterministic simulation so that their claims can be checked
//! on demand (`stealmark simulate ...`) and in tests:
//!
//! - [`berenbrink`]: the Markov chain of Berenbrink, Friedetzky and Goldberg
//!   (2003), section 2, Fig. 1: `n` Bernoulli(λ) generators on `K` hosts,
//!   empty processors request work from a random processor, a requested
//!   processor hands `f(ℓ)` tasks to one requester. Theorem 22 says that a
//!   bounded `f` (steal one) is transient when `K(j + 1) < λn`; Theorem 10
//!   says that `f(ℓ) = ⌊ℓ/2⌋` is stable for every λ < 1.
//! - [`mitzenmacher`]: the discrete-event simulation of Mitzenmacher's (1998)
//!   work-stealing models beside their fluid-limit fixed points (closed form
//!   for sections 2.2 and 2.3, numerical integration of the differential
//!   equations for repeated and preemptive steals, transfer delay, multiple
//!   choices and multiple steals).
//! - [`hendler_shavit`]: asymmetric probabilistic balancing (Hendler and
//!   Shavit 2002, §2.2 and §3): a process balances with probability µ/L.
//! - [`real`]: the Berenbrink and Hendler-Shavit workloads on real threads
//!   over any [`stealmark_deques::WorkDeque`].
//!
//! Every simulation takes its seed explicitly and uses [`rand_pcg::Pcg64`],
//! so a run is reproducible on every platform.
//!
//! ```
//! use stealmark_models::berenbrink::{self, BerenbrinkConfig, StealFunction};
//!
//! // Theorem 22: all generators on one processor, λn = 8 > 2, steal one.
//! let config = BerenbrinkConfig {
//!     processors: 16,
//!     generator_hosts: 1,
//!     lambda: 0.5,
//!     steal: StealFunction::One,
//!     steps: 2_000,
//!     seed: 1,
//! };
//! let one = berenbrink::simulate(&config)?;
//! assert!(!one.stable);
//! let half = berenbrink::simulate(&BerenbrinkConfig { steal: StealFunction::Half, ..config })?;
//! assert!(half.stable);
//! # Ok::<(), stealmark_models::ModelError>(())
//! ```

mod error;
mod rng;
mod step_barrier;
mod trend;

pub mod berenbrink;
pub mod hendler_shavit;
pub mod limits;
pub mod mitzenmacher;
pub mod real;

pub use error::ModelError;
pub use trend::{growth_rate, StabilityRule, STABILITY_RULE};
