//! The crate's integration tests, one binary: a module per topic.

mod cli;
mod pacing;
mod patch;
mod suite;
mod weak_tables;
