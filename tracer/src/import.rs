//! `stealmark import`: placeholder until the importers issue (#6) fills it.

use clap::Args;

/// Arguments of `stealmark import`.
#[derive(Args)]
pub struct ImportArgs {}

/// Runs `stealmark import`.
pub fn run(_args: ImportArgs) -> Result<(), Box<dyn std::error::Error>> {
    Err("import is not implemented yet".into())
}
