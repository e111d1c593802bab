//! The crate's integration tests, one binary: a module per topic.

mod common;
mod abi_vs_rust;
mod cycle;
mod header;
mod misuse;
