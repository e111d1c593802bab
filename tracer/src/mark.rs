//! `stealmark mark`: mark a snapshot repeatedly with one configuration and
//! report pause times, load balance and the workers' counters.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use stealmark_heap::{oracle, HeapGraph, OracleInput, Snapshot};
use stealmark_marker::{
    BalancePolicy, Collection, DequeKind, MarkStats, MarkerConfig, StealAmount, VictimSelection,
    WorkerRecord, WorkerStats,
};

use crate::args::{self, switch_word, BalanceArgs};
use crate::contract::{self, Contract, SoftRefsArg};
use crate::cputime;
use crate::error::{CliError, CliResult};
use crate::heapfile;
use crate::mark_runs::{self, CpuMedians, RunSample, WorkerReport};
use crate::outpath;
use crate::output::{self, out, outln, Align, Deferred, Format, Table};
use crate::pause::{median, PauseStats};
use crate::plot::{self, MarkPlot};
use crate::trace_event::{self, RunTrace};

/// Arguments of `stealmark mark`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    stealmark mark heap.smk --threads 2 --deque chase-lev --runs 20\n  \
    stealmark mark heap.smk --policy probabilistic --steal half --victim best-of-2 --json\n  \
    stealmark mark heap.smk --trace-out trace.json --plot mark.svg   (open trace.json in https://ui.perfetto.dev)\n  \
    stealmark mark heap.smk --sequential --runs 5\n  \
    stealmark mark heap.smk --soft-refs keep --histogram 30\n  \
    stealmark mark heap.smk --threads 16 --verify\n\n\
    Live bytes are the runtime's own sizes (V8 self_size, HPROF shallow size) where the file records \
    them, and the arena bytes (what the objects take in the snapshot) beside them; `stealmark info` \
    says which the file has.")]
pub struct MarkArgs {
    /// Snapshot to mark (from `stealmark gen` or `stealmark import`).
    pub file: PathBuf,
    /// GC worker threads [default: the number of CPUs].
    #[arg(long, value_name = "N", value_parser = args::threads)]
    pub threads: Option<usize>,
    /// Work-stealing deque.
    #[arg(long, value_name = "KIND", default_value = "steal-half", value_parser = args::named::<DequeKind>())]
    pub deque: DequeKind,
    /// Balancing policy of workers that still have work.
    #[arg(long, value_name = "P", default_value = "on-empty", value_parser = args::named::<BalancePolicy>())]
    pub policy: BalancePolicy,
    /// Items taken per steal.
    #[arg(long, value_name = "AMOUNT", default_value = "half", value_parser = args::named::<StealAmount>())]
    pub steal: StealAmount,
    /// Victim selection of thieves.
    #[arg(long, value_name = "V", default_value = "random", value_parser = args::named::<VictimSelection>())]
    pub victim: VictimSelection,
    #[command(flatten)]
    pub balance: BalanceArgs,
    /// Whether new grey objects go to a private stack in front of the
    /// deque (`on`), or straight onto the deque (`off`).
    #[arg(long, value_name = "on|off", value_parser = args::on_off, help = args::private_stack_help())]
    pub private_stack: Option<bool>,
    /// Whether the engine counts live bytes and types while marking.
    #[arg(long, value_name = "on|off", value_parser = args::on_off, help = args::count_live_help())]
    pub count_live: Option<bool>,
    /// Turn off prefetching of grey objects.
    #[arg(long)]
    pub no_prefetch: bool,
    /// Run the sequential oracle (a plain depth-first marker) instead of the
    /// parallel engine.
    #[arg(long, conflicts_with_all = [
        "threads", "deque", "policy", "steal", "victim", "mu", "threshold_factor",
        "balance_interval", "private_stack", "count_live", "no_prefetch", "trace_out",
    ])]
    pub sequential: bool,
    /// Measured runs.
    #[arg(long, value_name = "R", default_value_t = 10, value_parser = args::runs)]
    pub runs: usize,
    /// Unmeasured runs before the measured ones (warm caches and threads).
    #[arg(long, value_name = "W", default_value_t = 2, value_parser = args::whole::<usize>)]
    pub warmup: usize,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Write the measured runs' worker spans (marking, stealing, idle,
    /// termination) and the grey objects each holds (private stack, deque,
    /// prefetch FIFO) as Chrome trace-event JSON.
    #[arg(long, value_name = "FILE.json")]
    pub trace_out: Option<PathBuf>,
    /// Write an SVG plot: the grey objects each worker holds (private stack,
    /// deque, prefetch FIFO) during the median run,
    /// and the distribution of pause times.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Check the last run against the sequential oracle: the marked set,
    /// the slots to clear, the objects to finalize, live objects, bytes and
    /// types, non-strong slots and live ephemerons (exit 1 if any differs).
    #[arg(long, conflicts_with = "sequential")]
    pub verify: bool,
    /// Soft references: `clear` clears every soft reference whose referent
    /// nothing stronger reaches (what a runtime does under memory pressure,
    /// and what `stealmark info`'s reachable counts assume); `keep` keeps and
    /// traces every soft referent.
    #[arg(long, value_name = "POLICY", default_value = "clear", value_parser = args::named::<SoftRefsArg>())]
    pub soft_refs: SoftRefsArg,
    /// Print the live objects by type, the N types with the most live bytes
    /// first (as `jmap -histo:live`); `--json` lists N types in
    /// `live_by_type` (20 without this flag).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "20", value_parser = args::positive::<usize>)]
    pub histogram: Option<usize>,
}

/// The JSON document of `mark --json`.
#[derive(Serialize)]
struct MarkReport {
    file: String,
    objects: u64,
    roots: u64,
    marked_objects: u64,
    /// The live bytes (`live_bytes`, kept under its earlier name).
    marked_bytes: u64,
    /// The runtime contract's figures (soft policy, live bytes in runtime
    /// and arena sizes, weak slots, ephemerons, finalization, histogram).
    #[serde(flatten)]
    contract: Contract,
    runs: usize,
    warmup: usize,
    threads: usize,
    deque: String,
    policy: String,
    steal: String,
    victim: String,
    prefetch: bool,
    /// Whether the private stack was on (`null` for the sequential oracle).
    private_stack: Option<bool>,
    /// Whether live bytes and types were counted (`--count-live`; the
    /// sequential oracle always counts).
    count_live: bool,
    /// In the run with the median pause: objects scanned beyond one per
    /// live object (only the `idempotent` deque, which may deliver an item
    /// twice, makes them; 0 for the sequential oracle).
    duplicate_scans: u64,
    /// Every parameter of the engine (`null` for the sequential oracle).
    engine: Option<MarkerConfig>,
    pause_ms: PauseStats,
    /// The GC CPU time of a pause, all workers summed: user and system
    /// mode, and (user + sys) / real (`null` where not measured).
    cpu: Option<CpuStats>,
    balance: Balance,
    termination_latency_ms: PauseStats,
    /// Per worker, the counters of the run with the median pause.
    workers: Vec<WorkerReport>,
    per_run: Vec<RunSample>,
    /// With `--verify`: whether every output equals the oracle's.
    #[serde(skip_serializing_if = "Option::is_none")]
    verified: Option<bool>,
    /// With `--verify`: the outputs that differ from the oracle's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    differences: Vec<&'static str>,
}

/// The CPU time of the pauses.
#[derive(Serialize)]
struct CpuStats {
    /// User-mode CPU time per pause, ms.
    user_ms: PauseStats,
    /// Kernel CPU time per pause, ms.
    sys_ms: PauseStats,
    /// Median over runs of (user + sys) / real.
    cpu_over_real: f64,
    /// Runs whose workers got well under a CPU for the time they were
    /// marking or stealing (see the warning on standard error).
    descheduled_runs: usize,
}

impl CpuStats {
    /// The statistics of `samples`; `None` where CPU time was not measured.
    fn of(samples: &[RunSample]) -> Option<CpuStats> {
        let medians = mark_runs::cpu_medians(samples)?;
        let ms = |f: fn(&RunSample) -> Option<u64>| -> Option<PauseStats> {
            let v: Vec<f64> = samples
                .iter()
                .map(|s| f(s).map(|ns| ns as f64 / 1e6))
                .collect::<Option<_>>()?;
            PauseStats::from_ms(&v)
        };
        Some(CpuStats {
            user_ms: ms(|s| s.user_ns)?,
            sys_ms: ms(|s| s.sys_ns)?,
            cpu_over_real: medians.cpu_over_real,
            descheduled_runs: samples.iter().filter(|s| s.descheduled()).count(),
        })
    }

    /// The medians, for the text report.
    fn medians(&self) -> CpuMedians {
        CpuMedians {
            user_ms: self.user_ms.p50,
            sys_ms: self.sys_ms.p50,
            cpu_over_real: self.cpu_over_real,
        }
    }
}

#[derive(Serialize)]
struct Balance {
    /// Median over runs of max/mean objects scanned per worker.
    max_over_mean: f64,
    /// The worst run's.
    worst: f64,
}

/// Checks the output files before any work.
fn check_outputs(args: &MarkArgs) -> CliResult {
    if args.count_live == Some(false) {
        if args.verify {
            return Err(CliError::usage(
                "--verify compares live bytes and types with the oracle's, and --count-live off does not count them; leave one out",
            ));
        }
        if args.histogram.is_some() {
            return Err(CliError::usage(
                "--histogram prints the live objects by type, and --count-live off does not count them; leave one out",
            ));
        }
    }
    if let Some(path) = &args.trace_out {
        outpath::check_writable("--trace-out", path)?;
    }
    if let Some(path) = &args.plot {
        outpath::check_writable("--plot", path)?;
    }
    Ok(())
}

/// Runs `stealmark mark`.
pub fn run(args: MarkArgs) -> CliResult {
    check_outputs(&args)?;
    let snapshot = heapfile::open(&args.file)?;
    let heap = snapshot.view();
    let roots = snapshot.roots();
    if args.sequential {
        return run_sequential(&args, &snapshot);
    }
    let collection = Collection::new(roots)
        .finalizable(snapshot.finalizable())
        .soft_refs(args.soft_refs.policy());
    let top = args.histogram.unwrap_or(contract::DEFAULT_TOP);
    args.balance.check(&[args.policy], "--policy")?;
    let mut config = MarkerConfig::with_workers(args.threads.unwrap_or_else(args::ncpu));
    config.set_deque(args.deque);
    config.set_policy(args.policy);
    config.set_steal(args.steal);
    config.set_victim(args.victim);
    args.balance.apply(&mut config);
    if let Some(on) = args.private_stack {
        config.set_private_work(on);
    }
    if let Some(on) = args.count_live {
        config.set_count_live(on);
    }
    if args.no_prefetch {
        config.set_prefetch(0);
    }
    config.set_spans(args.trace_out.is_some());
    let mut marker = mark_runs::new_marker(config.clone())?;
    mark_runs::warn_if_oversubscribed(config.workers(), args::ncpu());

    let mut expected = None;
    for _ in 0..args.warmup {
        let (sample, _) = mark_runs::mark_once(&mut marker, &heap, &collection, expected)?;
        expected = Some(sample.marked_objects);
    }
    let mut samples = Vec::with_capacity(args.runs);
    let mut all_stats: Vec<MarkStats> = Vec::with_capacity(args.runs);
    let mut figures = None;
    let mut differences = Vec::new();
    for i in 0..args.runs {
        let (sample, marking) = mark_runs::mark_once(&mut marker, &heap, &collection, expected)?;
        expected = Some(sample.marked_objects);
        samples.push(sample);
        all_stats.push(marking.stats.clone());
        if i + 1 == args.runs {
            figures = Some(Contract::of_engine(
                &marking,
                &snapshot,
                args.soft_refs,
                top,
            ));
            if args.verify {
                let o = oracle(&heap, &oracle_input(&args, &snapshot));
                differences = contract::differences(&marking, &o);
            }
        }
    }
    let figures = figures.expect("at least one run");
    mark_runs::warn_if_descheduled([(
        format!("{} x{}", config.deque(), config.workers()),
        &samples[..],
    )]);
    let mid = mark_runs::median_index(&samples);
    let pauses: Vec<f64> = samples.iter().map(RunSample::pause_ms).collect();
    let balances: Vec<f64> = samples.iter().map(|s| s.balance).collect();
    let term_ms: Vec<f64> = samples
        .iter()
        .map(|s| s.termination_latency_ns as f64 / 1e6)
        .collect();
    let report = MarkReport {
        file: args.file.display().to_string(),
        objects: heap.object_count(),
        roots: roots.len() as u64,
        marked_objects: samples[mid].marked_objects,
        marked_bytes: figures.live_bytes,
        contract: figures,
        runs: args.runs,
        warmup: args.warmup,
        threads: config.workers(),
        deque: config.deque().to_string(),
        policy: config.policy().to_string(),
        steal: config.steal().to_string(),
        victim: config.victim().to_string(),
        prefetch: config.prefetch() > 0,
        private_stack: Some(config.private_work()),
        count_live: config.count_live(),
        duplicate_scans: all_stats[mid].duplicate_scans,
        engine: Some(config.clone()),
        pause_ms: PauseStats::from_ms(&pauses).expect("at least one run"),
        cpu: CpuStats::of(&samples),
        balance: Balance {
            max_over_mean: median(&balances),
            worst: balances.iter().copied().fold(0.0, f64::max),
        },
        termination_latency_ms: PauseStats::from_ms(&term_ms).expect("at least one run"),
        workers: mark_runs::worker_reports(&all_stats[mid]),
        per_run: samples.clone(),
        verified: args.verify.then_some(differences.is_empty()),
        differences,
    };

    // A file that cannot be written after all still lets the results print.
    let mut failures = Deferred::default();
    if let Some(path) = &args.trace_out {
        failures.keep(write_trace(path, &config, &report, &all_stats));
    }
    if let Some(path) = &args.plot {
        let timeline: Vec<Vec<(u64, u64)>> = all_stats[mid]
            .workers
            .iter()
            .map(|r| {
                r.timeline
                    .iter()
                    .map(|s| (s.t_ns, u64::from(s.len)))
                    .collect()
            })
            .collect();
        let title = format!("{}: {}", file_name(&args.file), plot_title(&config));
        failures.keep(plot::write_mark_plot(
            path,
            &MarkPlot {
                title: &title,
                grey_held: &timeline,
                timeline_pause_ns: all_stats[mid].pause_ns,
                pauses_ms: &pauses,
            },
        ));
    }
    print(&args, &report)?;
    if report.verified == Some(false) {
        failures.first(CliError::failed(
            "verifying",
            format!(
                "the engine's {} differ from the sequential oracle's; this is a bug in the marker, please report it with the snapshot and the command line",
                report.differences.join(", ")
            ),
        ));
    }
    failures.finish("mark")
}

/// What a plot's title says of the configuration: the deque, the policy
/// with its parameters, the steal amount and the victims, naming each once
/// ("steal-half deque, on-empty policy, thieves take half from random
/// victims, 2 workers").
pub fn plot_title(config: &MarkerConfig) -> String {
    format!(
        "{} deque, {}, thieves take {} from {} victims, {}",
        config.deque(),
        policy_title(config),
        config.steal(),
        config.victim(),
        output::counted(config.workers() as u64, "worker")
    )
}

/// The policy and the parameters it uses ("probabilistic policy (µ = 1,
/// every 16 objects)").
pub fn policy_title(config: &MarkerConfig) -> String {
    let every = format!("every {} objects", config.balance_interval());
    match config.policy() {
        BalancePolicy::OnEmpty => format!("{} policy", config.policy()),
        BalancePolicy::Probabilistic => {
            format!("{} policy (µ = {}, {every})", config.policy(), config.mu())
        }
        BalancePolicy::Threshold => format!(
            "{} policy (factor {}, {every})",
            config.policy(),
            config.threshold_factor()
        ),
        other => format!("{other} policy"),
    }
}

/// Writes the measured runs' spans and timelines to `path` as trace-event
/// JSON.
fn write_trace(
    path: &Path,
    config: &MarkerConfig,
    report: &MarkReport,
    all_stats: &[MarkStats],
) -> CliResult {
    let traces: Vec<RunTrace<'_>> = all_stats
        .iter()
        .enumerate()
        .map(|(i, stats)| RunTrace {
            label: format!(
                "run {}: {}, {}",
                i + 1,
                config.deque(),
                output::counted(config.workers() as u64, "worker")
            ),
            stats,
        })
        .collect();
    let other = serde_json::json!({
        "tool": "stealmark mark",
        "file": report.file,
        "engine": config,
    });
    let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
    trace_event::write(file, &traces, other).map_err(|e| CliError::io("write", path, e))?;
    let dropped: u64 = all_stats
        .iter()
        .flat_map(|s| &s.workers)
        .map(|w| w.spans_dropped)
        .sum();
    if dropped > 0 {
        eprintln!(
            "note: {} spans did not fit the marker's span buffers ({} per worker and run) and are missing from {}",
            output::count(dropped),
            output::count(WorkerRecord::MAX_SPANS as u64),
            path.display()
        );
    }
    Ok(())
}

/// The oracle's input for the collection `args` asks for.
fn oracle_input<'s>(args: &MarkArgs, snapshot: &'s Snapshot) -> OracleInput<'s> {
    OracleInput {
        roots: snapshot.roots(),
        finalizable: snapshot.finalizable(),
        soft_refs: args.soft_refs.policy(),
    }
}

fn run_sequential(args: &MarkArgs, snapshot: &Snapshot) -> CliResult {
    let heap = snapshot.view();
    let roots = snapshot.roots();
    let input = oracle_input(args, snapshot);
    let mut samples = Vec::with_capacity(args.runs);
    let mut last = None;
    // The oracle's one "worker": what it marked and scanned in the last run.
    let mut worker = WorkerStats::default();
    for i in 0..args.warmup + args.runs {
        let start = Instant::now();
        let (result, cpu) = cputime::measure(|| oracle(&heap, &input));
        let pause_ns = start.elapsed().as_nanos() as u64;
        worker = WorkerStats::default();
        worker.objects_marked = result.objects;
        worker.objects_scanned = result.objects;
        worker.slots_scanned = result.references;
        worker.weak_refs = result.weak_refs.len() as u64;
        worker.busy_ns = pause_ns;
        if i >= args.warmup {
            samples.push(RunSample::single(pause_ns, cpu, result.objects));
        }
        last = Some(result);
    }
    let result = last.expect("at least one run");
    let figures = Contract::of_oracle(
        &result,
        snapshot,
        args.soft_refs,
        args.histogram.unwrap_or(contract::DEFAULT_TOP),
    );
    mark_runs::warn_if_descheduled([("sequential".to_string(), &samples[..])]);
    let pauses: Vec<f64> = samples.iter().map(RunSample::pause_ms).collect();
    let report = MarkReport {
        file: args.file.display().to_string(),
        objects: heap.object_count(),
        roots: roots.len() as u64,
        marked_objects: result.objects,
        marked_bytes: figures.live_bytes,
        contract: figures,
        runs: args.runs,
        warmup: args.warmup,
        threads: 1,
        deque: "sequential".into(),
        policy: "none".into(),
        steal: "none".into(),
        victim: "none".into(),
        prefetch: false,
        private_stack: None,
        count_live: true,
        duplicate_scans: 0,
        engine: None,
        pause_ms: PauseStats::from_ms(&pauses).expect("at least one run"),
        cpu: CpuStats::of(&samples),
        balance: Balance {
            max_over_mean: 1.0,
            worst: 1.0,
        },
        termination_latency_ms: PauseStats::from_ms(&[0.0]).expect("one sample"),
        workers: vec![WorkerReport {
            worker: 0,
            stats: worker,
            timeline_samples: 0,
        }],
        per_run: samples,
        verified: None,
        differences: Vec::new(),
    };
    let mut failures = Deferred::default();
    if let Some(path) = &args.plot {
        let title = format!("{}: sequential oracle", file_name(&args.file));
        let plot = MarkPlot {
            title: &title,
            grey_held: &[],
            timeline_pause_ns: 0,
            pauses_ms: &pauses,
        };
        failures.keep(plot::write_mark_plot(path, &plot));
    }
    print(args, &report)?;
    failures.finish("mark")
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Prints the report as `--json` asks.
fn print(args: &MarkArgs, report: &MarkReport) -> CliResult {
    if args.json {
        return output::print_json(report);
    }
    print_report(report)?;
    if args.histogram.is_some() {
        contract::print_histogram(&report.contract, report.marked_objects)?;
    }
    Ok(())
}

fn print_report(r: &MarkReport) -> CliResult {
    outln!(
        "{}: {}, {}",
        r.file,
        output::counted(r.objects, "object"),
        output::counted(r.roots, "root")
    )?;
    if r.deque == "sequential" {
        outln!(
            "marked {} objects ({}) with the sequential oracle",
            output::count(r.marked_objects),
            contract::live_bytes_text(&r.contract)
        )?;
    } else if let Some(engine) = &r.engine {
        outln!(
            "marked {} objects ({}) with {} deques, {}, thieves take {} from {} victims, prefetch {}, private stack {}, {}",
            output::count(r.marked_objects),
            if r.count_live {
                contract::live_bytes_text(&r.contract)
            } else {
                "live bytes and types not counted: --count-live off".to_string()
            },
            r.deque,
            policy_title(engine),
            r.steal,
            r.victim,
            switch_word(r.prefetch),
            switch_word(engine.private_work()),
            output::counted(r.threads as u64, "worker")
        )?;
    }
    contract::print_summary(&r.contract)?;
    match r.verified {
        Some(true) => outln!(
            "verified: the marked set, cleared slots, objects to finalize, live bytes and types equal the sequential oracle's"
        )?,
        Some(false) => outln!(
            "verified: the {} DIFFER from the sequential oracle's",
            r.differences.join(", ")
        )?,
        None => {}
    }
    let p = &r.pause_ms;
    let in_ms = p
        .named()
        .map(|(name, v)| (name, format!("{} ms", output::ms(v))));
    outln!(
        "pause over {} runs ({} warm-up): {}",
        r.runs,
        r.warmup,
        output::named(in_ms, "  ")
    )?;
    if let Some(cpu) = &r.cpu {
        outln!(
            "GC CPU time per pause, median over runs (all workers summed): {}; (user+sys)/real {:.2} with {}",
            cpu.medians().times(p.p50),
            cpu.cpu_over_real,
            output::counted(r.threads as u64, "worker")
        )?;
    }
    if r.deque == "sequential" {
        return Ok(());
    }
    outln!(
        "balance (max/mean objects scanned per worker): median {:.3}, worst {:.3}",
        r.balance.max_over_mean,
        r.balance.worst
    )?;
    if !r.engine.as_ref().is_some_and(|e| e.deque().exactly_once()) {
        outln!(
            "duplicate scans (objects scanned beyond one per live object) in the median run: {}",
            output::count(r.duplicate_scans)
        )?;
    }
    outln!(
        "termination latency (last object scanned to end of pause): p50 {:.1} µs, max {:.1} µs",
        r.termination_latency_ms.p50 * 1e3,
        r.termination_latency_ms.max * 1e3
    )?;
    outln!("\nper worker, in the run with the median pause:")?;
    let mut table = Table::new([
        ("worker", Align::Right),
        ("marked", Align::Right),
        ("scanned", Align::Right),
        ("slots", Align::Right),
        ("deque pushes", Align::Right),
        ("steals ok/tried", Align::Right),
        ("stolen", Align::Right),
        ("overflow", Align::Right),
        ("busy ms", Align::Right),
        ("steal ms", Align::Right),
        ("idle ms", Align::Right),
        ("parks", Align::Right),
    ]);
    for w in &r.workers {
        let s = &w.stats;
        table.push(vec![
            w.worker.to_string(),
            output::count(s.objects_marked),
            output::count(s.objects_scanned),
            output::count(s.slots_scanned),
            output::count(s.pushes),
            format!(
                "{}/{}",
                output::count(s.steal_successes),
                output::count(s.steal_attempts)
            ),
            output::count(s.items_stolen),
            output::count(s.overflow_pushes),
            output::ms(s.busy_ns as f64 / 1e6),
            output::ms(s.steal_ns as f64 / 1e6),
            output::ms(s.idle_ns as f64 / 1e6),
            output::count(s.parks),
        ]);
    }
    out!("{}", table.render(Format::Table))?;
    outln!("{WORKER_NOTES}")
}

/// What the per-worker columns count, where the names alone mislead.
const WORKER_NOTES: &str = "\
deque pushes: grey objects a worker put on its shared deque; most stay on its private stack and \
are never pushed, so the grey objects it holds (the --plot timeline and the --trace-out counters: \
private stack + deque + prefetch FIFO) can be far more than its pushes
stolen: grey objects taken from other workers' deques; overflow: objects moved to the shared overflow storage";
