//! `stealmark simulate`: the balancing models behind the policies
//! (stealmark-models), as tables, JSON and SVG plots.
//!
//! - `berenbrink`: the work-stealing chain of Berenbrink, Friedetzky and
//!   Goldberg (Fig. 1), or with `--real` the same workload on threads over a
//!   deque; `--plot` draws the total load over time for steal-one against
//!   steal-half.
//! - `mitzenmacher`: the discrete-event simulation beside the fluid-limit
//!   fixed point.
//! - `hendler-shavit`: asymmetric probabilistic balancing; `--plot` draws
//!   `max_p L_p / A_t` over time for steal-one against steal-half.
//!
//! This module holds the arguments; each model prints its report from its
//! own submodule, and the two that also run on real threads share the path
//! of [`workload`].

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use stealmark_deques::DequeKind;
use stealmark_models::berenbrink::StealFunction;
use stealmark_models::hendler_shavit::HsSteal;
use stealmark_models::{ModelError, STABILITY_RULE};
use strum::VariantNames;

use crate::args;
use crate::error::{CliError, CliResult};

mod berenbrink;
mod hendler_shavit;
mod mitzenmacher;
mod workload;

/// A parameter out of range, or a run that `--real` cannot make, is a usage
/// error; a run that fails is not.
impl From<ModelError> for CliError {
    fn from(e: ModelError) -> CliError {
        match e {
            ModelError::InvalidParameter { .. } | ModelError::RealUnsupported(_) => {
                CliError::usage(e.to_string())
            }
            ModelError::NotConverged { .. }
            | ModelError::DequeFull { .. }
            | ModelError::WorkerPanicked(_) => CliError::failed("simulate", e),
        }
    }
}

/// Arguments of `stealmark simulate`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  stealmark simulate berenbrink --processors 64 --generator-hosts 1 --lambda 0.5 --steal one --steps 10000 --plot load.svg\n  stealmark simulate mitzenmacher --lambda 0.9 --threshold 4 --transfer-rate 0.25\n  stealmark simulate hendler-shavit --processors 64 --mu 0.5 --steal half --steps 5000 --real --deque crossbeam"
)]
pub struct SimulateArgs {
    #[command(subcommand)]
    model: Model,
}

#[derive(Subcommand)]
enum Model {
    /// The work-stealing Markov chain of Berenbrink, Friedetzky and Goldberg
    /// (2003), section 2, Fig. 1: steal-one diverges (Theorem 22), steal-half
    /// stays stable (Theorem 10).
    #[command(after_help = berenbrink_help())]
    Berenbrink(BerenbrinkArgs),
    /// Mitzenmacher's (1998) work-stealing systems: the discrete-event
    /// simulation against the fluid-limit fixed point.
    #[command(after_help = MITZENMACHER_HELP)]
    Mitzenmacher(MitzenmacherArgs),
    /// Asymmetric probabilistic balancing of Hendler and Shavit (2002): each
    /// process balances with probability µ/L.
    #[command(after_help = HENDLER_SHAVIT_HELP)]
    HendlerShavit(HendlerShavitArgs),
}

/// The help of `simulate berenbrink`, with the models crate's
/// [`STABILITY_RULE`].
fn berenbrink_help() -> String {
    format!(
        "\
The n generators are split equally over the first K processors (a point \
distribution). Each step every generator adds a task to its host with \
probability λ, every empty processor asks a processor chosen uniformly at \
random, every asked processor with ℓ tasks hands f(ℓ) to one requester, and \
every processor serves one task. f: one = min(1, ℓ), half = ⌊ℓ/2⌋, const:C = \
min(C, ℓ), fraction:R = ⌊Rℓ⌋.

Stability rule (the `stable` key): {STABILITY_RULE}. Theorem 22 predicts \
divergence when f ≤ j and K(j+1) < λn (K = 1, steal one: λn > 2).

Example:
  stealmark simulate berenbrink --processors 64 --generator-hosts 1 --lambda 0.5 --steal one --steps 10000 --plot load.svg"
    )
}

const MITZENMACHER_HELP: &str = "\
Every processor receives Poisson(λ) tasks and serves them FIFO in \
exponential(1) time. A processor that empties tries one steal: it samples D \
other processors, takes the most loaded, and if that one holds at least T \
tasks takes K from the end of its queue; with --transfer-rate R the stolen \
tasks arrive after an exponential(R) delay. The fixed point is the paper's \
closed form for sections 2.2 and 2.3 (K = 1, D = 1, no delay) and the \
integrated differential equations otherwise. The first 10% of --time is \
warm-up; the time in system is measured on the tasks that arrive after it.

Example:
  stealmark simulate mitzenmacher --lambda 0.9 --threshold 4 --transfer-rate 0.25";

const HENDLER_SHAVIT_HELP: &str = "\
Each step, every process balances with probability µ/L (1 when empty): it \
picks another process and, if that one holds more, takes half the difference \
(--steal half) or one item (--steal one). Workload: the first ⌈n/8⌉ processes \
receive 9 items per step and every process consumes one per step. Reported: \
the largest time-averaged L_p/A_t over processes (A_t: the average load).

Example:
  stealmark simulate hendler-shavit --processors 64 --mu 0.5 --steal half --steps 5000";

/// Flags shared by the models that can run on real threads.
#[derive(Args)]
struct RealArgs {
    /// Run the workload on real worker threads (one per processor) over a
    /// deque instead of the abstract model.
    #[arg(long)]
    real: bool,
    /// The deque for --real (the -q kinds reclaim retired buffers at
    /// quiescent points).
    #[arg(
        long,
        value_name = "NAME",
        requires = "real",
        value_parser = args::named::<DequeKind>()
    )]
    deque: Option<DequeKind>,
}

impl RealArgs {
    fn deque(&self) -> CliResult<Option<DequeKind>> {
        match (self.real, self.deque) {
            (false, _) => Ok(None),
            (true, Some(kind)) => Ok(Some(kind)),
            (true, None) => Err(CliError::usage(format!(
                "--real needs --deque NAME (one of {})",
                DequeKind::VARIANTS.join(", ")
            ))),
        }
    }
}

/// The flags of a run of the models that can run on real threads; each
/// model describes its own `--plot`.
#[derive(Args)]
struct RunArgs {
    /// Steps to run.
    #[arg(long, value_name = "S", value_parser = args::whole::<u64>)]
    steps: u64,
    /// The seed.
    #[arg(long, value_name = "X", default_value_t = 1, value_parser = args::whole::<u64>)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Also run steal-one and steal-half with the same parameters and plot
    /// them over time to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    real: RealArgs,
}

#[derive(Args)]
#[command(mut_arg("plot", |a| a.help(
    "Also run steal-one and steal-half with the same parameters and plot their total load over time to this SVG file"
)))]
struct BerenbrinkArgs {
    /// n: processors (and generators).
    #[arg(long, value_name = "N", value_parser = args::whole::<usize>)]
    processors: usize,
    /// K: the processors that host the generators.
    #[arg(long, value_name = "K", value_parser = args::whole::<usize>)]
    generator_hosts: usize,
    /// λ: each generator's task probability per step.
    #[arg(long, value_name = "L")]
    lambda: f64,
    /// The work-stealing function: one, half, const:C or fraction:R.
    #[arg(long, value_name = "F", value_parser = parse_steal_function)]
    steal: StealFunction,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args)]
struct MitzenmacherArgs {
    /// λ: the Poisson arrival rate per processor (0 < λ < 1).
    #[arg(long, value_name = "L")]
    lambda: f64,
    /// Processors in the simulation.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = args::whole::<usize>)]
    processors: usize,
    /// T: the least load a victim must have (2: steal whenever possible).
    #[arg(long, value_name = "T", default_value_t = 2, value_parser = args::whole::<u32>)]
    threshold: u32,
    /// K: tasks taken per steal (at most T - 1).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = args::whole::<u32>)]
    steal_count: u32,
    /// D: victims sampled per steal attempt (the most loaded is robbed).
    #[arg(long, value_name = "D", default_value_t = 1, value_parser = args::whole::<u32>)]
    choices: u32,
    /// R: the rate of the exponential transfer delay (default: instantaneous).
    #[arg(long, value_name = "R")]
    transfer_rate: Option<f64>,
    /// Simulated time, warm-up (the first 10%) included.
    #[arg(long, value_name = "S", default_value_t = stealmark_models::mitzenmacher::DEFAULT_TIME)]
    time: f64,
    /// The seed.
    #[arg(long, value_name = "X", default_value_t = 1, value_parser = args::whole::<u64>)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(mut_arg("plot", |a| a.help(
    "Also run steal-one and steal-half with the same parameters and plot max_p L_p/A_t over time to this SVG file"
)))]
struct HendlerShavitArgs {
    /// n: processes.
    #[arg(long, value_name = "N", value_parser = args::whole::<usize>)]
    processors: usize,
    /// µ in (0, 1]: a process with L items balances with probability µ/L.
    #[arg(long, value_name = "M")]
    mu: f64,
    /// What a balancing steal takes: half or one.
    #[arg(long, value_name = "half|one", value_parser = parse_hs_steal)]
    steal: HsSteal,
    #[command(flatten)]
    run: RunArgs,
}

fn parse_steal_function(s: &str) -> Result<StealFunction, String> {
    s.parse().map_err(|e: ModelError| e.to_string())
}

fn parse_hs_steal(s: &str) -> Result<HsSteal, String> {
    s.parse().map_err(|e: ModelError| e.to_string())
}

impl SimulateArgs {
    /// The `--plot` file, if the model takes one and it was given.
    pub fn plot(&self) -> Option<&Path> {
        match &self.model {
            Model::Berenbrink(a) => a.run.plot.as_deref(),
            Model::Mitzenmacher(_) => None,
            Model::HendlerShavit(a) => a.run.plot.as_deref(),
        }
    }
}

/// Runs `stealmark simulate`.
pub fn run(args: SimulateArgs) -> CliResult {
    match args.model {
        Model::Berenbrink(a) => berenbrink::run(&a),
        Model::Mitzenmacher(a) => mitzenmacher::run(&a),
        Model::HendlerShavit(a) => hendler_shavit::run(&a),
    }
}
