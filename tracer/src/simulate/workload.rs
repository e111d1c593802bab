//! The one path of the models that also run on real threads (Berenbrink,
//! Hendler-Shavit): run the model or the threads, plot steal-one against
//! steal-half, then print JSON or the report.

use std::path::Path;

use serde::Serialize;
use stealmark_deques::DequeKind;
use stealmark_models::berenbrink::LoadSample;
use stealmark_models::real::RealReport;
use stealmark_models::ModelError;

use super::RunArgs;
use crate::error::CliResult;
use crate::outpath;
use crate::output::{out, outln, print_json, Deferred, Format, Table};
use crate::plot::{self, Panel};

/// A model configuration that runs as the abstract model or on real threads
/// over a deque, and whose steal-one and steal-half runs a plot compares.
pub(super) trait Workload: Copy {
    /// What a steal takes.
    type Steal: Copy + PartialEq;
    /// The report of one run.
    type Report: Clone + Serialize;
    /// Steal-one and steal-half, the runs a plot compares.
    const COMPARED: [Self::Steal; 2];
    /// The report's title.
    const TITLE: &'static str;
    /// What the abstract model is, after the title.
    const MODEL: &'static str;
    /// The width the summary's labels are padded to.
    const LABEL_WIDTH: usize;

    /// The processors (one thread each on a real run).
    fn processors(&self) -> usize;
    /// The steps a run takes.
    fn steps(&self) -> u64;
    /// What a steal takes in this configuration.
    fn steal(&self) -> Self::Steal;
    /// This configuration with another steal.
    fn with_steal(self, steal: Self::Steal) -> Self;
    /// Runs the abstract model.
    fn simulate(&self) -> Result<Self::Report, ModelError>;
    /// Runs on real threads over the deque named `deque`.
    fn on_deque(&self, deque: DequeKind) -> Result<RealReport<Self::Report>, ModelError>;
    /// The parameters, on the line under the title.
    fn parameters(&self) -> String;
    /// The table of the report.
    fn table(&self, report: &Self::Report) -> Table;
    /// The labelled lines under the table.
    fn summary(&self, report: &Self::Report) -> Vec<(&'static str, String)>;
    /// What the deque of a real run did, on the `deque` line.
    fn deque_summary(real: &RealReport<Self::Report>) -> String;
    /// A paragraph after the summary, if any.
    fn note(&self) -> Option<String> {
        None
    }
    /// The plot's two charts of the steal-one and steal-half runs; `mode`
    /// says what ran them.
    fn panels(&self, mode: &str, runs: &[Self::Report; 2]) -> [Panel; 2];
}

/// A model report, or a real run's report around it.
#[derive(Serialize)]
#[serde(untagged)]
enum Outcome<R> {
    Model(R),
    Real(RealReport<R>),
}

impl<R> Outcome<R> {
    fn report(&self) -> &R {
        match self {
            Outcome::Model(r) => r,
            Outcome::Real(r) => &r.report,
        }
    }
}

/// Runs `config` (on real threads with `--real`), writes the plot if one is
/// asked for, and prints the report (one JSON object with `--json`).
/// The plot is checked before the runs, and a plot that cannot be written
/// after all still lets the report print.
pub(super) fn run<W: Workload>(config: W, args: &RunArgs) -> CliResult {
    let plot = args.plot.as_deref();
    if let Some(path) = plot {
        outpath::check_writable("--plot", path)?;
    }
    let deque = args.real.deque()?;
    let outcome = once(config, deque)?;
    let mut failures = Deferred::default();
    let mut written = None;
    if let Some(path) = plot {
        let runs = compared(config, deque, outcome.report())?;
        let result = plot::write_simulate_plot(
            path,
            config.steps(),
            &config.panels(&mode_label(deque), &runs),
        );
        if result.is_ok() {
            written = Some(path);
        }
        failures.keep(result);
    }
    if args.json {
        print_json(&outcome)?;
    } else {
        print_report(config, &outcome, written)?;
    }
    failures.finish("simulate")
}

/// Prints the report of `outcome`, a run of `config`: the title, the
/// table, the summary and, if one was written, the plot's path.
fn print_report<W: Workload>(
    config: W,
    outcome: &Outcome<W::Report>,
    plot: Option<&Path>,
) -> CliResult {
    let r = outcome.report();
    let mode = match outcome {
        Outcome::Model(_) => W::MODEL.to_string(),
        Outcome::Real(real) => format!(
            "{} worker threads over the {} deque",
            config.processors(),
            real.deque
        ),
    };
    outln!("{}: {mode}\n  {}\n", W::TITLE, config.parameters())?;
    out!("{}", config.table(r).render(Format::Table))?;
    outln!()?;
    let width = W::LABEL_WIDTH;
    for (label, value) in config.summary(r) {
        outln!("{label:<width$}{value}")?;
    }
    if let Outcome::Real(real) = outcome {
        outln!("{:<width$}{}", "deque", W::deque_summary(real))?;
    }
    if let Some(path) = plot {
        outln!("{:<width$}{}", "plot", path.display())?;
    }
    if let Some(note) = config.note() {
        outln!("\n{note}")?;
    }
    Ok(())
}

fn once<W: Workload>(config: W, deque: Option<DequeKind>) -> CliResult<Outcome<W::Report>> {
    Ok(match deque {
        None => Outcome::Model(config.simulate()?),
        Some(kind) => Outcome::Real(config.on_deque(kind)?),
    })
}

/// The reports of steal-one and steal-half: the run already made for the
/// requested steal, and a new run (same parameters) for the other.
fn compared<W: Workload>(
    config: W,
    deque: Option<DequeKind>,
    done: &W::Report,
) -> CliResult<[W::Report; 2]> {
    let run = |steal| {
        if steal == config.steal() {
            Ok(done.clone())
        } else {
            once(config.with_steal(steal), deque).map(|o| o.report().clone())
        }
    };
    let [one, half] = W::COMPARED;
    Ok([run(one)?, run(half)?])
}

/// What ran a plotted run, in its caption.
fn mode_label(deque: Option<DequeKind>) -> String {
    match deque {
        None => "model".to_string(),
        Some(d) => format!("real threads, {d} deque"),
    }
}

/// A total-load series as (step, load) points.
pub(super) fn load_points(samples: &[LoadSample]) -> Vec<(f64, f64)> {
    samples
        .iter()
        .map(|s| (s.step as f64, s.load as f64))
        .collect()
}
