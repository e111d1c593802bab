//! `stealmark simulate`: placeholder until the simulateers issue (#6) fills it.

use clap::Args;

/// Arguments of `stealmark simulate`.
#[derive(Args)]
pub struct SimulateArgs {}

/// Runs `stealmark simulate`.
pub fn run(_args: SimulateArgs) -> Result<(), Box<dyn std::error::Error>> {
    Err("simulate is not implemented yet".into())
}
