//! `stealmark demo`: the one command that shows what the engine does.
//!
//! Builds the default `runtime` heap in memory, checks that every
//! configuration marks exactly what the sequential oracle marks, and runs the
//! benchmark matrix (every deque at 1 to ncpu workers, alternating runs),
//! then prints a pause-time and balance table. Writes no files.

use std::time::Instant;

use clap::Args;
use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
use stealmark_marker::{BalancePolicy, DequeKind, MarkerConfig};

use crate::args;
use crate::bench::{self, MatrixResult};
use crate::error::{CliError, CliResult};
use crate::mark_runs;
use crate::output::{self, out, outln, Format};
use crate::pause::median;
use crate::progress::Progress;

/// Objects in the demo heap: a few million, so that a pause is long enough
/// (tens of milliseconds) to compare the deques, and the whole demo stays
/// well under two minutes on two cores.
const OBJECTS: u64 = 3_000_000;
/// The most measured runs per configuration.
const RUNS: usize = 7;
/// The fewest measured runs per configuration, however slow the machine.
const MIN_RUNS: usize = 3;
/// The whole demo aims to finish within this many seconds: on a slow or
/// busy machine it measures fewer runs (but at least [`MIN_RUNS`]).
const BUDGET_S: f64 = 90.0;

/// Arguments of `stealmark demo` (none for users; the hidden ones let the
/// tests run it on a small heap).
#[derive(Args)]
#[command(after_help = "Example:\n  \
    stealmark demo\n\n\
    Then try your own heap:\n  \
    stealmark gen --shape power-law --objects 2M -o heap.smk\n  \
    stealmark bench heap.smk --plot bench.svg")]
pub struct DemoArgs {
    /// Objects in the heap (for tests).
    #[arg(long, hide = true, default_value_t = OBJECTS, value_parser = args::count)]
    pub objects: u64,
    /// Measured runs per configuration (for tests) [default: fitted to the
    /// time budget].
    #[arg(long, hide = true, value_parser = args::runs)]
    pub runs: Option<usize>,
}

/// Runs `stealmark demo`.
pub fn run(args: DemoArgs) -> CliResult {
    let ncpu = args::ncpu();
    let started = Instant::now();
    let config = GenConfig::new(Shape::Runtime, args.objects);
    let spinner = Progress::spinner(&format!(
        "building a {}-object runtime heap in memory",
        output::count(args.objects)
    ));
    let generated =
        generate_heap(&config).map_err(|e| CliError::failed("building the demo heap", e))?;
    spinner.finish();
    let build_s = started.elapsed().as_secs_f64();
    let heap = generated.heap.view();
    let roots = generated.heap.roots();
    let info = &generated.info;

    // The oracle: its marked set is the reference, its time the baseline.
    let spinner = Progress::spinner("marking with the sequential oracle");
    let mut oracle_ms = Vec::new();
    let mut oracle = None;
    for _ in 0..3 {
        let start = Instant::now();
        let result = mark_sequential(&heap, roots);
        oracle_ms.push(start.elapsed().as_secs_f64() * 1e3);
        oracle = Some(result);
    }
    let oracle = oracle.expect("three oracle runs");
    spinner.finish();

    // Every deque's marked set, at the most workers, equals the oracle's.
    for &deque in DequeKind::ALGORITHMS {
        let mut config = MarkerConfig::with_workers(ncpu);
        config.set_deque(deque);
        let mut marker = mark_runs::new_marker(config)?;
        let marking = marker.mark(&heap, roots);
        if *marking.bitmap != oracle.marked {
            return Err(CliError::failed(
                "checking against the oracle",
                format!("{deque} at {ncpu} workers marked a different set than the sequential oracle; this is a bug, please report it"),
            ));
        }
    }

    let threads = bench::default_threads(ncpu);
    let configs = bench::matrix(&threads, DequeKind::ALGORITHMS, &[BalancePolicy::OnEmpty]);
    let oracle_p50 = median(&oracle_ms);
    let runs = args.runs.unwrap_or_else(|| {
        // A round runs every configuration once; the oracle's pause bounds
        // the engine's at one worker from above, so this overestimates.
        let round_s = configs.len() as f64 * oracle_p50 / 1e3;
        let left_s = BUDGET_S - started.elapsed().as_secs_f64();
        let rounds = (left_s / round_s).floor() as usize;
        rounds.saturating_sub(1).clamp(MIN_RUNS, RUNS)
    });
    let result = bench::run_matrix(
        &heap,
        roots,
        &configs,
        &[],
        &MarkerConfig::with_workers(ncpu),
        runs,
    )?;
    for r in &result.results {
        if r.marked_objects != oracle.objects {
            return Err(CliError::failed(
                "checking against the oracle",
                format!(
                    "{} at {} workers marked {} objects, the sequential oracle {}; this is a bug, please report it",
                    r.deque, r.threads, r.marked_objects, oracle.objects
                ),
            ));
        }
    }

    outln!(
        "stealmark demo: a `runtime` heap of {} objects ({} reachable, {} garbage, {}, {}), built in memory in {:.1} s",
        output::count(info.objects),
        output::count(oracle.objects),
        output::count(info.garbage),
        output::counted(roots.len() as u64, "root"),
        output::bytes(heap.arena_bytes()),
        build_s
    )?;
    outln!(
        "every deque at 1..{ncpu} worker{} (on-empty policy, steal half, random victims, prefetch on); {} alternated runs each after a warm-up round",
        if ncpu == 1 { "" } else { "s" },
        runs
    )?;
    outln!(
        "check: every deque marked exactly the sequential oracle's {} objects ({})",
        output::count(oracle.objects),
        output::bytes(oracle.bytes)
    )?;
    out!(
        "\n{}\n",
        bench::table(&result, false, Format::Table).render(Format::Table)
    )?;
    outln!(
        "sequential oracle (depth-first, no prefetch): p50 {} ms",
        output::ms(oracle_p50)
    )?;
    print_summary(&result, oracle_p50, ncpu)?;
    out!("\n{}", bench::column_notes(&result))
}

/// One line per worker count: the fastest deque and its ratios.
fn print_summary(result: &MatrixResult, oracle_ms: f64, ncpu: usize) -> CliResult {
    for t in 1..=ncpu {
        let best = result
            .results
            .iter()
            .filter(|r| r.threads == t)
            .min_by(|a, b| a.pause_ms.p50.total_cmp(&b.pause_ms.p50));
        if let Some(best) = best {
            outln!(
                "fastest at {t} worker{}: {} at {} ms, {:.2}x faster than the oracle",
                if t == 1 { "" } else { "s" },
                best.deque,
                output::ms(best.pause_ms.p50),
                oracle_ms / best.pause_ms.p50
            )?;
        }
    }
    Ok(())
}
