//! The crate's integration tests, one binary: a module per topic.

mod barrier_bounds;
mod common;
mod concurrent;
mod contract;
mod contract_resurrect;
mod cycle_failures;
mod leaves;
mod oracle;
mod prefetch_distance;
mod reference_live;
mod solo;
mod tasks;
mod unshared;
