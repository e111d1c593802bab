//! The crate's integration tests, one binary: a module per topic.

mod abi_vs_rust;
mod common;
mod cycle;
mod header;
mod misuse;
mod tasks;
