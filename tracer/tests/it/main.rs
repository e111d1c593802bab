//! The crate's integration tests, one binary: a module per topic.

mod cli_bench;
mod cli_bench_modes;
mod cli_contract;
mod cli_demo;
mod cli_gen;
mod cli_info;
mod cli_mark;
mod cli_outputs;
mod closed_stdout;
mod common;
mod import;
mod import_streams;
mod simulate;
