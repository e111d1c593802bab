//! `stealmark`: generate, inspect, import, trace and benchmark heap snapshots.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod import;
mod simulate;

/// Parallel GC marking over work-stealing deques.
#[derive(Parser)]
#[command(name = "stealmark", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import a foreign heap dump (V8 or HPROF) into a stealmark snapshot.
    Import(import::ImportArgs),
    /// Simulate the balancing models that justify the policies.
    Simulate(simulate::SimulateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Import(args) => import::run(args),
        Command::Simulate(args) => simulate::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
