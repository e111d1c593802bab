//! `stealmark bench`: compare deques, policies and worker counts on one
//! snapshot.
//!
//! Every configuration gets its own marker (its threads parked between
//! phases), and the runs alternate through the marker's
//! [`stealmark_marker::bench::compare`]: each round runs every configuration
//! once, so that machine drift (frequency, other tenants) affects all of them
//! alike. Each configuration is summarised by its pause statistics and by
//! paired ratios (the median over rounds of one pause over another in the
//! same round): against the baseline (the first deque and the first policy
//! listed) at the same worker count, and against itself at the smallest
//! worker count. Medians and ratios both use the marker's pause times.
//!
//! With `--reference`, three one-threaded markers run in the same rounds
//! and get rows of their own (deque `oracle`, `sequential`, `floor`): how
//! far the engine is from the limit on this heap. With `--count-live on`
//! (the default) the engine counts live bytes and types, and so do the
//! sequential marker and the floor, so that the rows compare like with
//! like; `--count-live off` turns counting off in all three.

mod mmu;
mod modes;
mod mut_heap;
mod mutator;
mod pauses;

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use std::time::Instant;

use stealmark_heap::{mark_sequential, HeapGraph, MarkIndex, ObjRef, ObjectModel};
use stealmark_marker::bench::{compare, BenchError, Subject};
use stealmark_marker::sequential::{Replay, SequentialMarker};
use stealmark_marker::{BalancePolicy, DequeKind, MarkerConfig, StealAmount, VictimSelection};

use crate::args::{self, switch_word, BalanceArgs};
use crate::cputime;
use crate::error::{CliError, CliResult};
use crate::heapfile;
use crate::mark;
use crate::mark_runs::{self, CpuMedians, RunSample};
use crate::outpath;
use crate::output::{self, out, outln, Align, Deferred, Format, Table};
use crate::pause::{median, PauseStats};
use crate::plot::{self, Bar};
use crate::progress::Progress;

/// Arguments of `stealmark bench`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    stealmark bench heap.smk\n  \
    stealmark bench heap.smk --threads 1,2 --deques steal-half,chase-lev,crossbeam --runs 20\n  \
    stealmark bench heap.smk --policies on-empty,probabilistic,threshold --format markdown\n  \
    stealmark bench heap.smk --format csv > results.csv --plot bench.svg\n  \
    stealmark bench heap.smk --threads 1,2 --deques steal-half,idempotent --private-stack off --reference\n  \
    stealmark bench heap.smk --threads 1 --deques steal-half --reference --count-live off\n  \
    stealmark bench heap.smk --mode stw,incremental,concurrent --mutators 1 --threads 1 --plot mmu.svg\n  \
    stealmark bench heap.smk --mode stw,concurrent --threads 1,2,4,8,16 --format csv > scaling.csv\n  \
    stealmark bench heap.smk --mode incremental,incremental-iu,concurrent,concurrent-iu --threads 2\n\n\
    The baseline of each ratio is the first deque and the first policy listed, at the same worker count.\n\
    With --mode, the pause-time benchmark runs instead: a synthetic mutator writes into a copy-on-write\n\
    mapping of FILE while each mode marks it, at every worker count of --threads (default: the number of\n\
    CPUs), the modes and worker counts alternated round by round; one row (JSON: one bench.modes[] entry\n\
    with its `workers`) and one MMU curve per mode and worker count. Incremental steps run on mutator 0's\n\
    thread alone; there the worker count is that of the start and the remark. The modes incremental and\n\
    concurrent use the snapshot-at-the-beginning barrier (old values logged, new objects black), and\n\
    incremental-iu and concurrent-iu the incremental-update barrier (values stored shaded, new objects\n\
    white): concurrent-iu on every store, incremental-iu on stores into marked holders only (on every\n\
    store with several mutators, whose stores and assists run beside the steps).")]
pub struct BenchArgs {
    /// Snapshot to mark (from `stealmark gen` or `stealmark import`).
    pub file: PathBuf,
    /// Worker counts, comma-separated, each run [default: 1, 2, 4, ... and
    /// the number of CPUs; with --mode: the number of CPUs].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = args::threads)]
    pub threads: Vec<usize>,
    /// Deques, comma-separated; the first is the baseline [default: every
    /// kind but the -q variants].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = args::named::<DequeKind>())]
    pub deques: Vec<DequeKind>,
    /// Balancing policies, comma-separated; the first is the baseline
    /// [default: on-empty].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = args::named::<BalancePolicy>())]
    pub policies: Vec<BalancePolicy>,
    #[command(flatten)]
    pub balance: BalanceArgs,
    /// Items taken per steal, in every configuration [default: half].
    #[arg(long, value_name = "AMOUNT", value_parser = args::named::<StealAmount>())]
    pub steal: Option<StealAmount>,
    /// Victim selection of thieves, in every configuration [default: random].
    #[arg(long, value_name = "V", value_parser = args::named::<VictimSelection>())]
    pub victim: Option<VictimSelection>,
    /// Whether new grey objects go to a private stack in front of the
    /// deque (`on`) or straight onto the deque (`off`); `on,off` runs both.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = args::on_off, help = format!(
        "{}; `on,off` runs every configuration both ways",
        args::private_stack_help()
    ))]
    pub private_stack: Vec<bool>,
    /// Also run, in the same rounds, the sequential oracle (`oracle`), the
    /// sequential marker with the engine's prefetching (`sequential`) and
    /// the replay floor (`floor`: the mark order replayed with perfect
    /// prefetching), each with a row of its own.
    #[arg(long)]
    pub reference: bool,
    /// Count live bytes and types while marking (`on`), as the engine does
    /// by default, or not (`off`); with --reference the sequential marker
    /// and the floor count exactly when the engine does (the oracle always
    /// counts).
    #[arg(long, value_name = "on|off", value_parser = args::on_off, help = format!(
        "{}; with --reference the sequential marker and the floor count exactly when the engine does (the oracle always counts)",
        args::count_live_help()
    ))]
    pub count_live: Option<bool>,
    /// Measured runs per configuration.
    #[arg(long, value_name = "R", default_value_t = 10, value_parser = args::runs)]
    pub runs: usize,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write an SVG bar chart of the median pauses (with --mode: the MMU
    /// curves).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Pause-time benchmark: marking modes, comma-separated, alternated
    /// (the first is the baseline of the pause ratios): stw, incremental,
    /// concurrent (snapshot-at-the-beginning barrier), incremental-iu,
    /// concurrent-iu (incremental-update barrier). Its markers use the
    /// engine's defaults, so the flags that choose or tune the deque
    /// benchmark's configurations are refused with it.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum, conflicts_with_all = [
        "deques", "policies", "mu", "threshold_factor", "balance_interval", "steal", "victim",
        "private_stack", "reference", "count_live",
    ])]
    pub mode: Vec<pauses::Mode>,
    /// With --mode: mutator threads.
    #[arg(long, value_name = "M", default_value_t = 1, requires = "mode")]
    pub mutators: usize,
    /// With --mode: reference writes done per second per mutator thread
    /// (skipped attempts are not counted; 0: as fast as it can).
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = args::count, requires = "mode")]
    pub write_rate: u64,
    /// With --mode: allocations per second per mutator thread, by the
    /// clock (also with --write-rate 0).
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = args::count, requires = "mode")]
    pub alloc_rate: u64,
    /// With --mode: the mutator runs this long before and after each
    /// collection.
    #[arg(long, value_name = "MS", default_value_t = 200, requires = "mode")]
    pub lead_ms: u64,
    /// With --mode incremental or incremental-iu: objects per step, plus
    /// the barrier entries the mutators logged since the last step (so that
    /// the steps keep up with the barrier).
    #[arg(long, value_name = "N", requires = "mode", help = args::default_help(
        "With --mode incremental or incremental-iu: objects per step, plus the barrier entries the mutators logged since the last step (so that the steps keep up with the barrier)",
        modes::DEFAULT_STEP_BUDGET,
    ))]
    pub step_budget: Option<usize>,
    /// With --mode incremental or incremental-iu: mutator time between
    /// steps, µs.
    #[arg(long, value_name = "US", requires = "mode", help = args::default_help(
        "With --mode incremental or incremental-iu: mutator time between steps, µs",
        modes::DEFAULT_STEP_INTERVAL_US,
    ))]
    pub step_interval_us: Option<u64>,
    /// With --mode: new objects the side arena holds per round (more are
    /// not allocated).
    #[arg(long, value_name = "N", default_value_t = 1 << 20, value_parser = args::count, requires = "mode")]
    pub side_capacity: u64,
}

/// One configuration of a benchmark matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Worker count.
    pub threads: usize,
    /// Deque kind.
    pub deque: DequeKind,
    /// Balancing policy.
    pub policy: BalancePolicy,
    /// The private stack on or off (`None`: as in the shared parameters).
    pub private_stack: Option<bool>,
}

impl Config {
    /// The engine's configuration: `base` (the parameters every
    /// configuration shares) with this worker count, deque and policy.
    pub fn engine(&self, base: &MarkerConfig) -> MarkerConfig {
        let mut config = base.clone();
        config
            .set_workers(self.threads)
            .set_deque(self.deque)
            .set_policy(self.policy)
            .set_private_work(self.private_stack.unwrap_or(base.private_work()));
        config
    }

    /// A unique key for the configuration.
    fn key(&self) -> String {
        format!(
            "{}/{}/{}",
            self.name(),
            self.threads,
            self.private_stack.unwrap_or(true)
        )
    }

    /// The name of the configuration without its worker count.
    pub fn name(&self) -> String {
        match self.private_stack {
            Some(on) => format!(
                "{} / {} / private stack {}",
                self.deque,
                self.policy,
                switch_word(on)
            ),
            None => format!("{} / {}", self.deque, self.policy),
        }
    }
}

/// The measured result of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigResult {
    /// Worker count.
    pub threads: usize,
    /// Deque kind.
    pub deque: String,
    /// Balancing policy.
    pub policy: String,
    /// Every parameter of the engine (`null` for a reference marker).
    pub engine: Option<MarkerConfig>,
    /// Pause statistics over the measured runs.
    pub pause_ms: PauseStats,
    /// Medians over runs of the GC CPU time of a pause, all workers summed
    /// (`null` where not measured).
    pub cpu: Option<CpuMedians>,
    /// Median over runs of this pause over the baseline's pause in the same
    /// round, at the same worker count (below 1 is faster).
    pub ratio_to_baseline: f64,
    /// Median over runs of this configuration's pause at the smallest
    /// worker count over its pause here, in the same round (above 1 is
    /// faster; `null` for a reference marker).
    pub speedup: f64,
    /// Median over runs of max/mean objects scanned per worker.
    pub balance_max_over_mean: f64,
    /// Median termination latency, ms.
    pub termination_latency_ms: f64,
    /// Objects marked (the same in every run).
    pub marked_objects: u64,
    /// Whether this row counted live objects (bytes, footprint, types)
    /// while marking: the engine and, with --reference, the sequential
    /// marker and the floor as `--count-live` says; the oracle always.
    pub count_live: bool,
    /// Live bytes counted in the last run (0 where not counted).
    pub live_bytes: u64,
    /// Every measured run, in order.
    pub per_run: Vec<RunSample>,
}

/// The whole matrix: every configuration's result, in matrix order.
#[derive(Clone, Debug, Serialize)]
pub struct MatrixResult {
    /// Measured runs per configuration (after one warm-up round).
    pub runs: usize,
    /// The baseline's deque and policy.
    pub baseline: String,
    /// Results, ordered by worker count, then deque, then policy.
    pub results: Vec<ConfigResult>,
}

/// A one-threaded reference marker of `--reference`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// The heap crate's sequential oracle (`mark_sequential`).
    Oracle,
    /// The sequential marker with the engine's prefetch FIFO depth.
    Sequential,
    /// The replay floor: the recorded mark order replayed, prefetching as
    /// deep as the engine (perfect prefetching, no stack, no stealing).
    Floor,
}

impl Reference {
    /// Every reference marker, in row order.
    pub const ALL: [Reference; 3] = [Reference::Oracle, Reference::Sequential, Reference::Floor];

    /// Its name in the `deque` column.
    pub fn name(self) -> &'static str {
        match self {
            Reference::Oracle => "oracle",
            Reference::Sequential => "sequential",
            Reference::Floor => "floor",
        }
    }

    /// Whether it counts live objects when the engine's `count_live` is
    /// `engine_counts`: the oracle always does (it computes the whole
    /// runtime contract), the others exactly when the engine does.
    pub fn counts_live(self, engine_counts: bool) -> bool {
        self == Reference::Oracle || engine_counts
    }

    /// A subject that marks `heap` once per call, timing only the marking,
    /// and records its sample in `recorded`; the sequential marker and the
    /// floor prefetch and count live objects as the engine's `base` does. The floor
    /// records its mark order now, untimed.
    fn subject<'a, H: ObjectModel + MarkIndex>(
        self,
        heap: &'a H,
        roots: &'a [ObjRef],
        base: &MarkerConfig,
        recorded: &'a mut Vec<RunSample>,
        progress: &'a Progress,
    ) -> Subject<'a> {
        let (prefetch, count_live) = (base.prefetch(), base.count_live());
        let mut sequential = SequentialMarker::new(prefetch).count_live(count_live);
        let mut replay =
            (self == Reference::Floor).then(|| Replay::record(heap, roots).count_live(count_live));
        Subject::custom(self.name(), move || {
            progress.message(self.name());
            let ((pause_ns, marked, live_bytes), cpu) = cputime::measure(|| {
                let start = Instant::now();
                let (marked, live_bytes) = match (self, replay.as_mut()) {
                    (Reference::Oracle, _) => {
                        let o = mark_sequential(heap, roots);
                        (o.objects, o.bytes)
                    }
                    (Reference::Sequential, _) => {
                        let marked = sequential.mark(heap, roots).count();
                        (marked, sequential.live().bytes)
                    }
                    (Reference::Floor, Some(r)) => {
                        let marked = r.run(heap, roots, prefetch).count();
                        (marked, r.live().bytes)
                    }
                    (Reference::Floor, None) => unreachable!("the floor records its order"),
                };
                (start.elapsed().as_nanos() as u64, marked, live_bytes)
            });
            recorded.push(RunSample::single(pause_ns, cpu, marked).with_live_bytes(live_bytes));
            progress.inc();
            marked
        })
    }
}

/// The matrix of `threads × deques × policies`, in that nesting order.
pub fn matrix(threads: &[usize], deques: &[DequeKind], policies: &[BalancePolicy]) -> Vec<Config> {
    let mut out = Vec::new();
    for &t in threads {
        for &deque in deques {
            for &policy in policies {
                out.push(Config {
                    threads: t,
                    deque,
                    policy,
                    private_stack: None,
                });
            }
        }
    }
    out
}

/// Runs every configuration `runs` times, alternating them run by run after
/// one warm-up round (the marker's [`compare`]), and summarises each.
/// `configs` must not be empty; its first deque and policy are the baseline.
/// The `references` run in the same rounds, after the configurations, and
/// get rows after theirs.
pub fn run_matrix<H: ObjectModel + MarkIndex>(
    heap: &H,
    roots: &[ObjRef],
    configs: &[Config],
    references: &[Reference],
    base: &MarkerConfig,
    runs: usize,
) -> CliResult<MatrixResult> {
    let n = configs.len() + references.len();
    let progress = Progress::new(((runs + 1) * n) as u64, "bench", "runs");
    // Each subject records its own phases' samples (the warm-up first).
    let mut samples: Vec<Vec<RunSample>> = vec![Vec::with_capacity(runs + 1); n];
    let report = {
        let progress = &progress;
        let mut subjects = Vec::with_capacity(n);
        let (engines, reference_samples) = samples.split_at_mut(configs.len());
        for (c, recorded) in configs.iter().zip(engines) {
            let mut marker = mark_runs::new_marker(c.engine(base))?;
            let label = format!("{} x{}", c.name(), c.threads);
            subjects.push(Subject::custom(c.key(), move || {
                progress.message(label.as_str());
                let (marking, cpu) = cputime::measure(|| marker.mark(heap, roots));
                let sample = RunSample::of(&marking, cpu);
                recorded.push(sample);
                progress.inc();
                sample.marked_objects
            }));
        }
        for (r, recorded) in references.iter().zip(reference_samples) {
            subjects.push(r.subject(heap, roots, base, recorded, progress));
        }
        compare(heap, roots, &mut subjects, runs)
    };
    progress.finish();
    // The report's own times are those of the closures (counting the
    // bitmap and the progress bar); every statistic here comes from the
    // marker's pause times instead. The report still checks that every
    // configuration marked the same number of objects.
    report.map_err(|e| match e {
        BenchError::NoRuns => CliError::usage("at least one run is needed"),
        BenchError::Mismatch {
            subject, got, expected, ..
        } if subject == Reference::Sequential.name() || subject == Reference::Floor.name() => {
            CliError::usage(format!(
                "--reference: the sequential marker and the replay floor trace strong slots only, and this heap's soft, weak, phantom or ephemeron slots change what is marked (the engine marked {expected} objects, `{subject}` {got}); give a heap without them (`stealmark gen --all-strong`), or leave --reference out"
            ))
        }
        other => CliError::failed(
            "benchmarking",
            format!("{other}; this is a bug in the marker, please report it with the snapshot"),
        ),
    })?;
    // Drop the warm-up phase: round k of the comparison is entry k of each.
    let measured: Vec<Vec<RunSample>> = samples
        .into_iter()
        .map(|recorded| recorded.into_iter().skip(1).collect())
        .collect();
    let labels = configs
        .iter()
        .map(|c| format!("{} x{}", c.name(), c.threads))
        .chain(references.iter().map(|r| r.name().to_string()));
    mark_runs::warn_if_descheduled(labels.zip(&measured).map(|(l, m)| (l, m.as_slice())));
    let baseline = &configs[0];
    let min_threads = configs.iter().map(|c| c.threads).min().unwrap_or(1);
    // The runs of `like` at `t` workers.
    let runs_of = |t: usize, like: &Config| {
        configs
            .iter()
            .position(|c| {
                *c == Config {
                    threads: t,
                    ..like.clone()
                }
            })
            .map(|i| measured[i].as_slice())
    };
    let mut results: Vec<ConfigResult> = configs
        .iter()
        .zip(&measured)
        .map(|(c, measured)| {
            let pauses: Vec<f64> = measured.iter().map(RunSample::pause_ms).collect();
            ConfigResult {
                threads: c.threads,
                deque: c.deque.to_string(),
                policy: c.policy.to_string(),
                engine: Some(c.engine(base)),
                pause_ms: PauseStats::from_ms(&pauses).expect("at least one run"),
                cpu: mark_runs::cpu_medians(measured),
                ratio_to_baseline: runs_of(c.threads, baseline)
                    .map_or(f64::NAN, |base| paired_ratio(measured, base)),
                speedup: runs_of(min_threads, c)
                    .map_or(f64::NAN, |fewest| paired_ratio(fewest, measured)),
                balance_max_over_mean: median(
                    &measured.iter().map(|s| s.balance).collect::<Vec<_>>(),
                ),
                termination_latency_ms: median(
                    &measured
                        .iter()
                        .map(|s| s.termination_latency_ns as f64 / 1e6)
                        .collect::<Vec<_>>(),
                ),
                marked_objects: measured[0].marked_objects,
                count_live: base.count_live(),
                live_bytes: last_live_bytes(measured),
                per_run: measured.clone(),
            }
        })
        .collect();
    let fewest_baseline = runs_of(min_threads, baseline);
    for (r, measured) in references.iter().zip(&measured[configs.len()..]) {
        let pauses: Vec<f64> = measured.iter().map(RunSample::pause_ms).collect();
        results.push(ConfigResult {
            threads: 1,
            deque: r.name().to_string(),
            policy: "-".to_string(),
            engine: None,
            pause_ms: PauseStats::from_ms(&pauses).expect("at least one run"),
            cpu: mark_runs::cpu_medians(measured),
            ratio_to_baseline: fewest_baseline
                .map_or(f64::NAN, |base| paired_ratio(measured, base)),
            speedup: f64::NAN,
            balance_max_over_mean: 1.0,
            termination_latency_ms: 0.0,
            marked_objects: measured[0].marked_objects,
            count_live: r.counts_live(base.count_live()),
            live_bytes: last_live_bytes(measured),
            per_run: measured.clone(),
        });
    }
    Ok(MatrixResult {
        runs,
        baseline: baseline.name(),
        results,
    })
}

/// The live bytes of the last of `runs` (0 if none).
fn last_live_bytes(runs: &[RunSample]) -> u64 {
    runs.last().map_or(0, |s| s.live_bytes)
}

/// The paired ratio `a / b`: the median over rounds of a's pause over b's
/// pause in the same round.
fn paired_ratio(a: &[RunSample], b: &[RunSample]) -> f64 {
    let ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.pause_ns as f64 / y.pause_ns.max(1) as f64)
        .collect();
    if ratios.is_empty() {
        f64::NAN
    } else {
        median(&ratios)
    }
}

/// The results as a table in `format`: one row per configuration. CSV
/// cells are plain numbers (ratios without their `x`); the other formats
/// are for people.
pub fn table(result: &MatrixResult, with_policy: bool, format: Format) -> Table {
    let mut columns = vec![("workers", Align::Right), ("deque", Align::Left)];
    if with_policy {
        columns.push(("policy", Align::Left));
    }
    let with_private = mixed_private_stack(result);
    if with_private {
        columns.push(("private stack", Align::Left));
    }
    columns.extend([
        ("p50 ms", Align::Right),
        ("p90 ms", Align::Right),
        ("min ms", Align::Right),
        ("max ms", Align::Right),
        ("user ms", Align::Right),
        ("sys ms", Align::Right),
        ("vs baseline", Align::Right),
        ("speedup", Align::Right),
        ("balance", Align::Right),
        ("term µs", Align::Right),
    ]);
    let ratio = |r: f64| {
        if r.is_nan() {
            // A reference marker has no speedup.
            if format == Format::Csv {
                String::new()
            } else {
                "-".to_string()
            }
        } else if format == Format::Csv {
            format!("{r:.3}")
        } else {
            format!("{r:.2}x")
        }
    };
    let cpu = |f: fn(&CpuMedians) -> f64, r: &ConfigResult| {
        r.cpu
            .as_ref()
            .map_or_else(String::new, |c| output::ms(f(c)))
    };
    let mut table = Table::new(columns);
    for r in &result.results {
        let mut row = vec![r.threads.to_string(), r.deque.clone()];
        if with_policy {
            row.push(r.policy.clone());
        }
        if with_private {
            row.push(private_stack_cell(r).to_string());
        }
        row.extend([
            output::ms(r.pause_ms.p50),
            output::ms(r.pause_ms.p90),
            output::ms(r.pause_ms.min),
            output::ms(r.pause_ms.max),
            cpu(|c| c.user_ms, r),
            cpu(|c| c.sys_ms, r),
            ratio(r.ratio_to_baseline),
            ratio(r.speedup),
            format!("{:.3}", r.balance_max_over_mean),
            format!("{:.1}", r.termination_latency_ms * 1e3),
        ]);
        table.push(row);
    }
    table
}

/// Whether some engine rows ran with the private stack and some without.
fn mixed_private_stack(result: &MatrixResult) -> bool {
    let mut on = result
        .results
        .iter()
        .filter_map(|r| r.engine.as_ref().map(|e| e.private_work()));
    on.next().is_some_and(|first| on.any(|x| x != first))
}

/// `on` or `off` for an engine row, `-` for a reference row.
fn private_stack_cell(r: &ConfigResult) -> &'static str {
    match &r.engine {
        Some(e) if e.private_work() => "on",
        Some(_) => "off",
        None => "-",
    }
}

/// What the table's derived columns mean, one line each.
pub fn column_notes(result: &MatrixResult) -> String {
    let min_threads = result.results.iter().map(|r| r.threads).min().unwrap_or(1);
    format!(
        "vs baseline: median over rounds of pause / baseline's pause in the same round (baseline: {} at the same worker count; below 1.00x is faster)\n\
         user ms, sys ms: median CPU time of a pause in user and kernel mode, all GC workers summed (p50 ms is the wall time, HotSpot's real)\n\
         speedup: median over rounds of the same configuration's pause at {min_threads} worker{} / pause here (above 1.00x is faster)\n\
         balance: max over mean of objects scanned per worker (1.000 is perfect)\n\
         term µs: median time from the last object scanned to the end of the pause\n{}",
        result.baseline,
        if min_threads == 1 { "" } else { "s" },
        if result.results.iter().any(|r| r.engine.is_none()) {
            let counts = result
                .results
                .iter()
                .find(|r| r.deque == Reference::Sequential.name())
                .is_some_and(|r| r.count_live);
            format!(
                "oracle, sequential, floor (--reference): the sequential oracle (which always counts live bytes and types), the sequential marker with the engine's prefetching, and the replay floor (the mark order replayed with perfect prefetching), one thread each; the sequential marker and the floor {} live bytes and types{}; vs baseline against the baseline at {min_threads} worker{}\n",
                if counts { "count" } else { "do not count" },
                if counts { " as the engine does (--count-live on)" } else { ", nor does the engine (--count-live off)" },
                if min_threads == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    )
}

/// The bars of the `--plot` chart.
pub fn bars(result: &MatrixResult, with_policy: bool) -> Vec<Bar> {
    let with_private = mixed_private_stack(result);
    result
        .results
        .iter()
        .map(|r| {
            let mut config = if with_policy {
                format!("{} / {}", r.deque, r.policy)
            } else {
                r.deque.clone()
            };
            if with_private {
                config = format!("{config} / private {}", private_stack_cell(r));
            }
            Bar {
                config,
                threads: r.threads,
                median_ms: r.pause_ms.p50,
                min_ms: r.pause_ms.min,
                max_ms: r.pause_ms.max,
                ratio: r.ratio_to_baseline,
            }
        })
        .collect()
}

/// The worker counts 1, 2, 4, ... up to and including `ncpu`.
pub fn default_threads(ncpu: usize) -> Vec<usize> {
    let mut t = vec![1];
    while t[t.len() - 1] * 2 < ncpu {
        let next = t[t.len() - 1] * 2;
        t.push(next);
    }
    if ncpu > 1 {
        t.push(ncpu);
    }
    t
}

/// Runs `stealmark bench`.
pub fn run(args: BenchArgs) -> CliResult {
    if let Some(path) = &args.plot {
        outpath::check_writable("--plot", path)?;
    }
    if !args.mode.is_empty() {
        return modes::run(&args);
    }
    args::distinct("--threads", &args.threads)?;
    args::distinct("--deques", &args.deques)?;
    args::distinct("--policies", &args.policies)?;
    let threads = if args.threads.is_empty() {
        default_threads(args::ncpu())
    } else {
        args.threads.clone()
    };
    let deques = if args.deques.is_empty() {
        DequeKind::ALGORITHMS.to_vec()
    } else {
        args.deques.clone()
    };
    let policies = if args.policies.is_empty() {
        vec![BalancePolicy::OnEmpty]
    } else {
        args.policies.clone()
    };
    args.balance.check(&policies, "--policies")?;
    let mut base = MarkerConfig::default();
    args.balance.apply(&mut base);
    if let Some(steal) = args.steal {
        base.set_steal(steal);
    }
    if let Some(victim) = args.victim {
        base.set_victim(victim);
    }
    if let Some(on) = args.count_live {
        base.set_count_live(on);
    }
    let snapshot = heapfile::open(&args.file)?;
    let heap = snapshot.view();
    let roots = snapshot.roots();
    mark_runs::warn_if_oversubscribed(threads.iter().copied().max().unwrap_or(1), args::ncpu());
    args::distinct("--private-stack", &args.private_stack)?;
    let mut configs = matrix(&threads, &deques, &policies);
    match args.private_stack[..] {
        [] => {}
        [on] => {
            base.set_private_work(on);
        }
        _ => {
            configs = configs
                .into_iter()
                .flat_map(|c| {
                    args.private_stack.iter().map(move |&on| Config {
                        private_stack: Some(on),
                        ..c.clone()
                    })
                })
                .collect();
        }
    }
    let references: &[Reference] = if args.reference { &Reference::ALL } else { &[] };
    let result = run_matrix(&heap, roots, &configs, references, &base, args.runs)?;
    let with_policy = policies.len() > 1;
    let mut failures = Deferred::default();
    if let Some(path) = &args.plot {
        let name = args.file.file_name().map_or_else(
            || args.file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        failures.keep(plot::write_bench_plot(
            path,
            &plot_title(&name, args.runs, &base, &policies, &result),
            &bars(&result, with_policy),
        ));
    }
    print(
        &args,
        heap.object_count(),
        roots.len(),
        &result,
        with_policy,
        base.count_live(),
    )?;
    failures.finish("bench")
}

/// The title of the bench plot: the heap, the runs, the steal amount and
/// victims every bar shares, the policy when every bar has the same one
/// (the bars name the deques, and the policies when there are several),
/// and the baseline of the ratio labels.
fn plot_title(
    file: &str,
    runs: usize,
    base: &MarkerConfig,
    policies: &[BalancePolicy],
    result: &MatrixResult,
) -> String {
    let policy = match policies {
        [one] => {
            let mut config = base.clone();
            config.set_policy(*one);
            format!("{}, ", mark::policy_title(&config))
        }
        _ => String::new(),
    };
    format!(
        "{file}: median pause of {runs} alternated runs; {policy}thieves take {} from {} victims; labels: paired ratio to {}",
        base.steal(), base.victim(), result.baseline
    )
}

/// Prints the results in `args.format`.
fn print(
    args: &BenchArgs,
    objects: u64,
    roots: usize,
    result: &MatrixResult,
    with_policy: bool,
    count_live: bool,
) -> CliResult {
    match args.format {
        Format::Json => {
            let doc = serde_json::json!({
                "file": args.file.display().to_string(),
                "objects": objects,
                "roots": roots,
                "ncpu": args::ncpu(),
                "count_live": count_live,
                "bench": result,
            });
            output::print_json(&doc)
        }
        format => {
            if format == Format::Table {
                outln!(
                    "{}: {}, {}; {} alternated runs per configuration after a warm-up round; baseline {}; live objects {}\n",
                    args.file.display(),
                    output::counted(objects, "object"),
                    output::counted(roots as u64, "root"),
                    args.runs,
                    result.baseline,
                    if count_live {
                        "counted (--count-live on)"
                    } else {
                        "not counted (--count-live off)"
                    }
                )?;
            }
            out!("{}", table(result, with_policy, format).render(format))?;
            if format == Format::Table {
                out!("\n{}", column_notes(result))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_threads_cover_one_to_ncpu() {
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn matrix_nests_threads_then_deques_then_policies() {
        let m = matrix(
            &[1, 2],
            &[DequeKind::Abp, DequeKind::Locked],
            &[BalancePolicy::OnEmpty],
        );
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].deque, DequeKind::Locked);
        assert_eq!(m[2].threads, 2);
    }

    fn pauses(ns: &[u64]) -> Vec<RunSample> {
        ns.iter()
            .map(|&pause_ns| RunSample::single(pause_ns, None, 1))
            .collect()
    }

    #[test]
    fn paired_ratio_is_the_median_of_same_round_ratios() {
        // Rounds: 2/1, 3/6, 8/4, 10/10, 1/2, sorted 0.5, 0.5, 1, 2, 2; not
        // the ratio of the medians, 3/4.
        let a = pauses(&[2, 3, 8, 10, 1]);
        let b = pauses(&[1, 6, 4, 10, 2]);
        assert_eq!(paired_ratio(&a, &b), 1.0);
        // An even count interpolates: 0.5, 1, 2, 2.
        assert_eq!(paired_ratio(&a[..4], &b[..4]), 1.5);
        assert!(paired_ratio(&[], &[]).is_nan());
    }
}
