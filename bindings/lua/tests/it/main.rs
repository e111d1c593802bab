//! The crate's integration tests, one binary: a module per topic.

mod cli;
mod pacing;
mod patch;
mod solo;
mod suite;
mod sweep;
mod weak_tables;
