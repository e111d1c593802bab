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

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;
use stealmark_deques::DequeKind;
use stealmark_models::berenbrink::{self, BerenbrinkConfig, BerenbrinkReport, StealFunction};
use stealmark_models::hendler_shavit::{self, HsConfig, HsReport, HsSteal};
use stealmark_models::mitzenmacher::{self, MitzenmacherConfig, MitzenmacherReport};
use stealmark_models::real::{self, RealReport};
use stealmark_models::{ModelError, StabilityRule, STABILITY_RULE};
use strum::VariantNames;

use crate::args;
use crate::error::{CliError, CliResult};
use crate::output::{count, out, outln, print_json, Align, Format, Table};
use crate::plot::{err as plot_err, render_to_file, PlotResult};

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

#[derive(Args)]
struct BerenbrinkArgs {
    /// n: processors (and generators).
    #[arg(long, value_name = "N")]
    processors: usize,
    /// K: the processors that host the generators.
    #[arg(long, value_name = "K")]
    generator_hosts: usize,
    /// λ: each generator's task probability per step.
    #[arg(long, value_name = "L")]
    lambda: f64,
    /// The work-stealing function: one, half, const:C or fraction:R.
    #[arg(long, value_name = "F", value_parser = parse_steal_function)]
    steal: StealFunction,
    /// Steps to run.
    #[arg(long, value_name = "S")]
    steps: u64,
    /// The seed.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Also run steal-one and steal-half with the same parameters and plot
    /// their total load over time to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    real: RealArgs,
}

#[derive(Args)]
struct MitzenmacherArgs {
    /// λ: the Poisson arrival rate per processor (0 < λ < 1).
    #[arg(long, value_name = "L")]
    lambda: f64,
    /// Processors in the simulation.
    #[arg(long, value_name = "N", default_value_t = 128)]
    processors: usize,
    /// T: the least load a victim must have (2: steal whenever possible).
    #[arg(long, value_name = "T", default_value_t = 2)]
    threshold: u32,
    /// K: tasks taken per steal (at most T - 1).
    #[arg(long, value_name = "K", default_value_t = 1)]
    steal_count: u32,
    /// D: victims sampled per steal attempt (the most loaded is robbed).
    #[arg(long, value_name = "D", default_value_t = 1)]
    choices: u32,
    /// R: the rate of the exponential transfer delay (default: instantaneous).
    #[arg(long, value_name = "R")]
    transfer_rate: Option<f64>,
    /// Simulated time, warm-up (the first 10%) included.
    #[arg(long, value_name = "S", default_value_t = mitzenmacher::DEFAULT_TIME)]
    time: f64,
    /// The seed.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct HendlerShavitArgs {
    /// n: processes.
    #[arg(long, value_name = "N")]
    processors: usize,
    /// µ in (0, 1]: a process with L items balances with probability µ/L.
    #[arg(long, value_name = "M")]
    mu: f64,
    /// What a balancing steal takes: half or one.
    #[arg(long, value_name = "half|one", value_parser = parse_hs_steal)]
    steal: HsSteal,
    /// Steps to run.
    #[arg(long, value_name = "S")]
    steps: u64,
    /// The seed.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Also run steal-one and steal-half with the same parameters and plot
    /// max_p L_p/A_t over time to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    real: RealArgs,
}

fn parse_steal_function(s: &str) -> Result<StealFunction, String> {
    s.parse().map_err(|e: ModelError| e.to_string())
}

fn parse_hs_steal(s: &str) -> Result<HsSteal, String> {
    s.parse().map_err(|e: ModelError| e.to_string())
}

/// Runs `stealmark simulate`.
pub fn run(args: SimulateArgs) -> CliResult {
    match args.model {
        Model::Berenbrink(a) => run_berenbrink(&a),
        Model::Mitzenmacher(a) => run_mitzenmacher(&a),
        Model::HendlerShavit(a) => run_hendler_shavit(&a),
    }
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

/// The reports of the two policies a plot compares: the run already made
/// for the requested policy, and a new run (same parameters) for the others.
fn one_and_half<P: PartialEq + Copy, R: Clone>(
    policies: [P; 2],
    requested: P,
    done: &R,
    run: impl Fn(P) -> CliResult<Outcome<R>>,
) -> CliResult<Vec<R>> {
    policies
        .into_iter()
        .map(|p| {
            if p == requested {
                Ok(done.clone())
            } else {
                run(p).map(|r| r.report().clone())
            }
        })
        .collect()
}

fn berenbrink_once(
    config: &BerenbrinkConfig,
    deque: Option<DequeKind>,
) -> CliResult<Outcome<BerenbrinkReport>> {
    Ok(match deque {
        None => Outcome::Model(berenbrink::simulate(config)?),
        Some(kind) => Outcome::Real(real::berenbrink_on(kind, config)?),
    })
}

fn run_berenbrink(a: &BerenbrinkArgs) -> CliResult {
    let config = BerenbrinkConfig {
        processors: a.processors,
        generator_hosts: a.generator_hosts,
        lambda: a.lambda,
        steal: a.steal,
        steps: a.steps,
        seed: a.seed,
    };
    let deque = a.real.deque()?;
    let outcome = berenbrink_once(&config, deque)?;
    if let Some(path) = &a.plot {
        let series = one_and_half(
            [StealFunction::One, StealFunction::Half],
            config.steal,
            outcome.report(),
            |steal| berenbrink_once(&BerenbrinkConfig { steal, ..config }, deque),
        )?;
        write_berenbrink_plot(path, &config, deque.map(<&str>::from), &series)?;
    }
    if a.json {
        return print_json(&outcome);
    }
    let r = outcome.report();
    let mode = match &outcome {
        Outcome::Model(_) => "the Markov chain of Fig. 1".to_string(),
        Outcome::Real(real) => format!(
            "{} worker threads over the {} deque",
            config.processors, real.deque
        ),
    };
    outln!(
        "Berenbrink et al.: {mode}\n  n = {} processors, K = {} generator hosts, λ = {} (λn = {}), steal {}, {} steps, seed {}\n",
        config.processors,
        config.generator_hosts,
        config.lambda,
        config.arrival_rate(),
        config.steal,
        config.steps,
        config.seed
    )?;
    let mut table = Table::new([("step", Align::Right), ("total load", Align::Right)]);
    let stride = r.total_load.len().div_ceil(10).max(1);
    for (i, s) in r.total_load.iter().enumerate() {
        if i % stride == stride - 1 || i + 1 == r.total_load.len() {
            table.push(vec![count(s.step), count(s.load)]);
        }
    }
    out!("{}", table.render(Format::Table))?;
    let threshold = StabilityRule::DEFAULT.max_growth_fraction * config.arrival_rate();
    outln!()?;
    outln!("final total load      {}", count(r.final_total_load))?;
    outln!(
        "growth rate           {:.3} tasks/step over the second half (unstable above {:.3})",
        r.growth_rate,
        threshold
    )?;
    outln!("stable                {}", r.stable)?;
    outln!("paper predicts        {}", r.prediction)?;
    outln!(
        "tasks                 {} generated, {} served, {} moved by steals",
        count(r.generated),
        count(r.serviced),
        count(r.stolen)
    )?;
    if let Outcome::Real(real) = &outcome {
        outln!(
            "deque                 {}: {} steal attempts, {} succeeded, {} lost a race; tasks conserved: {}",
            real.deque,
            count(real.steal_attempts),
            count(real.steal_successes),
            count(real.steal_aborts),
            real.conserved
        )?;
    }
    if let Some(path) = &a.plot {
        outln!("plot                  {}", path.display())?;
    }
    outln!("\nStability rule: {STABILITY_RULE}")?;
    Ok(())
}

fn run_mitzenmacher(a: &MitzenmacherArgs) -> CliResult {
    let config = MitzenmacherConfig {
        lambda: a.lambda,
        processors: a.processors,
        threshold: a.threshold,
        steal_count: a.steal_count,
        choices: a.choices,
        transfer_rate: a.transfer_rate,
        retry_rate: 0.0,
        preempt_at: 0,
        time: a.time,
        seed: a.seed,
    };
    let r: MitzenmacherReport = mitzenmacher::run(&config)?;
    if a.json {
        return print_json(&r);
    }
    let delay = match config.transfer_rate {
        Some(rate) => format!("transfer rate {rate}"),
        None => "instantaneous transfers".to_string(),
    };
    outln!(
        "Mitzenmacher, {}\n  λ = {}, {} processors, T = {}, K = {}, D = {}, {delay}, time {} (warm-up {}), seed {}\n",
        r.section,
        config.lambda,
        config.processors,
        config.threshold,
        config.steal_count,
        config.choices,
        config.time,
        config.time * mitzenmacher::WARMUP_FRACTION,
        config.seed
    )?;
    let method = match r.fixed_point_method {
        mitzenmacher::fluid::Method::ClosedForm => "closed form",
        mitzenmacher::fluid::Method::Ode => "integrated ODEs",
    };
    let mut summary = Table::new([("", Align::Left), ("time in system", Align::Right)]);
    summary.push(vec![
        format!("simulated ({} tasks)", count(r.tasks_measured)),
        format!("{:.4}", r.simulated_time_in_system),
    ]);
    summary.push(vec![
        format!("fixed point ({method})"),
        format!("{:.4}", r.fixed_point_time_in_system),
    ]);
    summary.push(vec![
        "relative error".to_string(),
        format!("{:.2}%", 100.0 * r.relative_error),
    ]);
    out!("{}", summary.render(Format::Table))?;
    outln!()?;
    let mut tails = Table::new([
        ("i", Align::Right),
        ("simulated s_i", Align::Right),
        ("fixed point π_i", Align::Right),
    ]);
    for (i, fp) in r.fixed_point_tails.iter().enumerate().take(12) {
        let sim = r.simulated_tails.get(i).copied().unwrap_or(0.0);
        tails.push(vec![
            (i + 1).to_string(),
            format!("{sim:.5}"),
            format!("{fp:.5}"),
        ]);
    }
    out!("{}", tails.render(Format::Table))?;
    outln!(
        "\nsteal attempts that found a victim: {:.1}%",
        100.0 * r.steal_success_ratio
    )?;
    Ok(())
}

fn hs_once(config: &HsConfig, deque: Option<DequeKind>) -> CliResult<Outcome<HsReport>> {
    Ok(match deque {
        None => Outcome::Model(hendler_shavit::simulate(config)?),
        Some(kind) => Outcome::Real(real::hendler_shavit_on(kind, config)?),
    })
}

fn run_hendler_shavit(a: &HendlerShavitArgs) -> CliResult {
    let config = HsConfig {
        processors: a.processors,
        mu: a.mu,
        steal: a.steal,
        steps: a.steps,
        seed: a.seed,
    };
    let deque = a.real.deque()?;
    let outcome = hs_once(&config, deque)?;
    if let Some(path) = &a.plot {
        let series = one_and_half(
            [HsSteal::One, HsSteal::Half],
            config.steal,
            outcome.report(),
            |steal| hs_once(&HsConfig { steal, ..config }, deque),
        )?;
        write_hs_plot(path, &config, deque.map(<&str>::from), &series)?;
    }
    if a.json {
        return print_json(&outcome);
    }
    let r = outcome.report();
    let mode = match &outcome {
        Outcome::Model(_) => "the step model of section 3".to_string(),
        Outcome::Real(real) => format!(
            "{} worker threads over the {} deque",
            config.processors, real.deque
        ),
    };
    outln!(
        "Hendler-Shavit asymmetric probabilistic balancing: {mode}\n  n = {} processes, µ = {}, steal {}, {} steps, seed {}; {} producers × {} items/step\n",
        config.processors,
        config.mu,
        config.steal,
        config.steps,
        config.seed,
        config.producers(),
        hendler_shavit::PRODUCER_TASKS
    )?;
    let mut order: Vec<usize> = (0..r.time_averaged_ratios.len()).collect();
    order.sort_by(|&x, &y| r.time_averaged_ratios[y].total_cmp(&r.time_averaged_ratios[x]));
    let mut table = Table::new([
        ("process", Align::Right),
        ("role", Align::Left),
        ("mean L_p/A_t", Align::Right),
    ]);
    for &p in order.iter().take(5) {
        let role = if p < config.producers() {
            "producer"
        } else {
            "consumer"
        };
        table.push(vec![
            p.to_string(),
            role.to_string(),
            format!("{:.3}", r.time_averaged_ratios[p]),
        ]);
    }
    out!("{}", table.render(Format::Table))?;
    outln!()?;
    outln!(
        "largest time-averaged L_p/A_t   {:.3} (process {})",
        r.max_time_averaged_ratio,
        r.argmax_process
    )?;
    outln!(
        "final total load                {}",
        count(r.final_total_load)
    )?;
    outln!(
        "balancing                       {} steals moved {} items",
        count(r.balances),
        count(r.moved)
    )?;
    if let Outcome::Real(real) = &outcome {
        outln!(
            "deque                           {}: {} steal attempts, {} lost a race; items conserved: {}",
            real.deque,
            count(real.steal_attempts),
            count(real.steal_aborts),
            real.conserved
        )?;
    }
    if let Some(path) = &a.plot {
        outln!("plot                            {}", path.display())?;
    }
    Ok(())
}

const ONE_COLOUR: RGBColor = RGBColor(214, 39, 40);
const HALF_COLOUR: RGBColor = RGBColor(31, 119, 180);

/// One line of a time-series chart.
struct Line<'a> {
    label: String,
    colour: RGBColor,
    points: &'a [(f64, f64)],
}

fn draw_lines(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    y_label: &str,
    x_max: f64,
    lines: &[Line<'_>],
) -> PlotResult {
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.05;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(40)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| {
            if y_max >= 20.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(plot_err)?;
    for line in lines {
        let colour = line.colour;
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)
}

fn mode_label(deque: Option<&str>) -> String {
    match deque {
        None => "model".to_string(),
        Some(d) => format!("real threads, {d} deque"),
    }
}

fn write_berenbrink_plot(
    path: &Path,
    config: &BerenbrinkConfig,
    deque: Option<&str>,
    series: &[BerenbrinkReport],
) -> CliResult {
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|r| {
            r.total_load
                .iter()
                .map(|s| (s.step as f64, s.load as f64))
                .collect()
        })
        .collect();
    let label = |r: &BerenbrinkReport| {
        format!(
            "steal {}: final {}, growth {:.2}/step, {}",
            r.config.steal,
            r.final_total_load,
            r.growth_rate,
            if r.stable { "stable" } else { "unstable" }
        )
    };
    let x_max = config.steps as f64;
    render_to_file(path, (1000, 800), |root| {
        let (top, bottom) = root.split_vertically(440);
        let caption = format!(
            "Berenbrink et al. ({}): n={}, K={}, λ={} (λn={}), total load",
            mode_label(deque),
            config.processors,
            config.generator_hosts,
            config.lambda,
            config.arrival_rate()
        );
        let both: Vec<Line<'_>> = series
            .iter()
            .zip(&points)
            .zip([ONE_COLOUR, HALF_COLOUR])
            .map(|((r, p), colour)| Line {
                label: label(r),
                colour,
                points: p,
            })
            .collect();
        draw_lines(&top, &caption, "total load", x_max, &both)?;
        let half = [Line {
            label: label(&series[1]),
            colour: HALF_COLOUR,
            points: &points[1],
        }];
        draw_lines(
            &bottom,
            "steal-half alone (zoomed)",
            "total load",
            x_max,
            &half,
        )
    })
}

fn write_hs_plot(
    path: &Path,
    config: &HsConfig,
    deque: Option<&str>,
    series: &[HsReport],
) -> CliResult {
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|r| {
            r.max_ratio
                .iter()
                .map(|s| (s.step as f64, s.max_ratio))
                .collect()
        })
        .collect();
    let x_max = config.steps as f64;
    let loads: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|r| {
            r.total_load
                .iter()
                .map(|s| (s.step as f64, s.load as f64))
                .collect()
        })
        .collect();
    render_to_file(path, (1000, 800), |root| {
        let (top, bottom) = root.split_vertically(440);
        let caption = format!(
            "Hendler-Shavit ({}): n={}, µ={}, max_p L_p/A_t",
            mode_label(deque),
            config.processors,
            config.mu
        );
        let lines: Vec<Line<'_>> = series
            .iter()
            .zip(&points)
            .zip([ONE_COLOUR, HALF_COLOUR])
            .map(|((r, p), colour)| Line {
                label: format!(
                    "steal {}: largest time-averaged L_p/A_t = {:.2}",
                    r.config.steal, r.max_time_averaged_ratio
                ),
                colour,
                points: p,
            })
            .collect();
        draw_lines(&top, &caption, "max_p L_p / A_t", x_max, &lines)?;
        let totals: Vec<Line<'_>> = series
            .iter()
            .zip(&loads)
            .zip([ONE_COLOUR, HALF_COLOUR])
            .map(|((r, p), colour)| Line {
                label: format!(
                    "steal {}: final total load {}",
                    r.config.steal, r.final_total_load
                ),
                colour,
                points: p,
            })
            .collect();
        draw_lines(&bottom, "total load", "total load", x_max, &totals)
    })
}
