//! The front of `stealmark bench --mode`: the setup from the arguments, and
//! the table, JSON document and MMU plot of the results (`pauses`), one row
//! and one curve per mode and worker count.

use std::time::Duration;

use super::mmu::MmuPoint;
use super::mutator::Rates;
use super::pauses::{configs, measure, Mode, ModeResult, Setup};
use super::BenchArgs;
use crate::args;
use crate::error::{CliError, CliResult};
use crate::mark_runs;
use crate::output::{self, out, outln, Align, Format, Table};
use crate::plot::{self, MmuCurve};

/// The MMU at `window_ms`, if the curve has that window.
fn mmu_at(points: &[MmuPoint], window_ms: f64) -> Option<f64> {
    points
        .iter()
        .find(|p| p.window_ms == window_ms)
        .map(|p| p.utilization)
}

/// The results as a table, one row a mode at a worker count.
pub fn table(results: &[ModeResult]) -> Table {
    let mut t = Table::new([
        ("mode", Align::Left),
        ("workers", Align::Right),
        ("max pause ms", Align::Right),
        ("p50 ms", Align::Right),
        ("p99 ms", Align::Right),
        ("pauses", Align::Right),
        ("max/first", Align::Right),
        ("speedup", Align::Right),
        ("MMU 1ms", Align::Right),
        ("MMU 10ms", Align::Right),
        ("MMU 100ms", Align::Right),
        ("GC CPU ms", Align::Right),
        ("writes/s", Align::Right),
        ("marking", Align::Right),
        ("idle", Align::Right),
        ("slowdown", Align::Right),
        ("CPU slowdown", Align::Right),
        ("marked", Align::Right),
        ("of snapshot", Align::Right),
        ("reachable", Align::Right),
    ]);
    let mmu = |r: &ModeResult, w: f64| {
        mmu_at(&r.mmu, w).map_or_else(|| "-".into(), |u| format!("{u:.3}"))
    };
    for r in results {
        t.push(vec![
            r.mode.to_string(),
            r.workers.to_string(),
            output::ms(r.max_pause_ms),
            output::ms(r.pause_ms.p50),
            output::ms(r.pause_ms.p99),
            format!("{:.0}", r.pauses_per_round),
            format!("{:.3}", r.max_pause_ratio),
            format!("{:.3}", r.max_pause_speedup),
            mmu(r, 1.0),
            mmu(r, 10.0),
            mmu(r, 100.0),
            output::ms(r.gc_cpu_ms),
            format!("{:.0}", r.mutator_ops_per_s),
            format!("{:.0}", r.marking_ops_per_s),
            format!("{:.0}", r.idle_ops_per_s),
            format!("{:.3}", r.marking_slowdown),
            format!("{:.3}", r.cpu_slowdown),
            output::count(r.marked_objects),
            output::count(r.marked_snapshot_objects),
            output::count(r.reachable_objects),
        ]);
    }
    t
}

/// What the columns mean.
const NOTES: &str = "\
max pause: the longest pause of any round; p50, p99: over every pause of every round;
modes: incremental-iu and concurrent-iu mark as incremental and concurrent do, with the incremental-update barrier
(values stored into marked holders shaded, new objects white) in place of the snapshot-at-the-beginning one (old
values logged, new objects black);
workers: GC workers (stw: the collection's; concurrent, concurrent-iu: the background marking's and the remark's;
incremental, incremental-iu: the remark's, the steps run on mutator 0's thread alone);
pauses: per round (median); max/first: median over rounds of the longest pause over the first mode's at the same
worker count, same round; speedup: median over rounds of the same mode's longest pause at the fewest workers
over the longest pause here, same round (above 1 is shorter);
MMU w: the least mutator fraction of any w-long window of any round (Cheng & Blelloch);
GC CPU: process CPU time minus the mutator threads', per round (median);
writes/s: per mutator thread over a round, pauses included; marking, idle: per thread while marking (pauses
excluded; barrier on) and outside marking (no barrier); slowdown: 1 - marking/idle (the barrier, plus the
workers' share of the machine); CPU slowdown: the same per CPU second of the mutator threads (the barrier and
the shared caches, not the workers' share); marked: objects marked, new objects included; of snapshot: the
snapshot's objects among them; reachable: the snapshot's reachable objects before the mutator ran (the mutator
moves references within the heap without cutting any off, so the two agree).
";

/// How far the snapshot objects a configuration marked may be from the
/// snapshot's reachable objects, as a fraction of the latter, before a
/// warning says that its figures describe another heap.
const SIZE_TOLERANCE: f64 = 0.1;

/// The warning for `mode` at `workers` when the snapshot objects it marked
/// (`marked`) differ from the snapshot's `reachable` objects by more than
/// [`SIZE_TOLERANCE`]: its pauses then describe a heap of another size.
fn size_warning(mode: Mode, workers: usize, marked: u64, reachable: u64) -> Option<String> {
    let difference = marked.abs_diff(reachable) as f64;
    (difference > SIZE_TOLERANCE * reachable as f64).then(|| {
        format!(
            "warning: {mode} at {} marked {} of the snapshot's objects, against {} reachable in the snapshot: its figures describe a heap of another size",
            output::counted(workers as u64, "worker"),
            output::count(marked),
            output::count(reachable)
        )
    })
}

/// The worker counts of `--threads` (every one, in order), or the number
/// of CPUs.
fn worker_counts(a: &BenchArgs) -> CliResult<Vec<usize>> {
    args::distinct("--threads", &a.threads)?;
    Ok(if a.threads.is_empty() {
        vec![args::ncpu()]
    } else {
        a.threads.clone()
    })
}

/// The worker counts as text: `2 workers`, or `workers 1, 2, 4`.
fn workers_text(counts: &[usize]) -> String {
    match counts {
        [one] => output::counted(*one as u64, "worker"),
        _ => format!(
            "workers {}",
            counts
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Where `x` is in `list` (0 if not there).
fn position<T: PartialEq>(list: &[T], x: &T) -> usize {
    list.iter().position(|y| y == x).unwrap_or(0)
}

/// The MMU curves of the plot, and what their colours and lines stand for.
/// One worker count: a colour per mode, as many curves as modes. Several:
/// a colour per worker count and a line style per mode.
fn curves(results: &[ModeResult], modes: &[Mode], workers: &[usize]) -> (Vec<MmuCurve>, String) {
    let several = workers.len() > 1;
    let curves = results
        .iter()
        .map(|r| {
            let mode = position(modes, &r.mode);
            MmuCurve {
                name: if several {
                    format!(
                        "{}, {}",
                        r.mode,
                        output::counted(r.workers as u64, "worker")
                    )
                } else {
                    r.mode.to_string()
                },
                colour: if several {
                    position(workers, &r.workers)
                } else {
                    mode
                },
                dash: if several { mode } else { 0 },
                points: r.mmu.iter().map(|p| (p.window_ms, p.utilization)).collect(),
            }
        })
        .collect();
    let key = if several {
        format!("{} (colour), a line style per mode", workers_text(workers))
    } else {
        workers_text(workers)
    };
    (curves, key)
}

/// Objects per incremental step, beyond the barrier's entries, unless
/// `--step-budget` says otherwise.
pub const DEFAULT_STEP_BUDGET: usize = 4096;

/// Mutator time between incremental steps, µs, unless `--step-interval-us`
/// says otherwise.
pub const DEFAULT_STEP_INTERVAL_US: u64 = 1000;

/// Rejects the flags of incremental steps when no mode of `--mode` takes
/// steps (flags that would be silently ignored).
fn check_step_flags(a: &BenchArgs) -> CliResult {
    if a.mode.iter().any(|m| m.steps()) {
        return Ok(());
    }
    for (given, flag) in [
        (a.step_budget.is_some(), "--step-budget"),
        (a.step_interval_us.is_some(), "--step-interval-us"),
    ] {
        if given {
            return Err(CliError::usage(format!(
                "{flag} applies to the incremental mode only; add incremental to --mode (or incremental-iu), or leave {flag} out"
            )));
        }
    }
    Ok(())
}

/// Runs `stealmark bench FILE --mode ...`: every mode at every worker count
/// of `--threads`.
pub fn run(a: &BenchArgs) -> CliResult {
    args::distinct("--mode", &a.mode)?;
    check_step_flags(a)?;
    let modes = a.mode.clone();
    if a.mutators == 0 {
        return Err(CliError::usage("--mutators must be at least 1"));
    }
    let workers = worker_counts(a)?;
    let setup = Setup {
        mutators: a.mutators,
        rates: Rates {
            writes: a.write_rate,
            allocs: a.alloc_rate,
        },
        lead: Duration::from_millis(a.lead_ms),
        step_budget: a.step_budget.unwrap_or(DEFAULT_STEP_BUDGET),
        step_interval: Duration::from_micros(
            a.step_interval_us.unwrap_or(DEFAULT_STEP_INTERVAL_US),
        ),
        side_capacity: usize::try_from(a.side_capacity)
            .map_err(|_| CliError::usage("--side-capacity is too large"))?,
    };
    mark_runs::warn_if_oversubscribed(workers.iter().copied().max().unwrap_or(1), args::ncpu());
    let results = measure(&a.file, &configs(&workers, &modes), &setup, a.runs)?;
    for r in &results {
        if let Some(warning) = size_warning(
            r.mode,
            r.workers,
            r.marked_snapshot_objects,
            r.reachable_objects,
        ) {
            eprintln!("{warning}");
        }
    }
    let name = a.file.file_name().map_or_else(
        || a.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(path) = &a.plot {
        let (curves, key) = curves(&results, &modes, &workers);
        let title = format!(
            "{name}: worst MMU of {} rounds, {} mutator(s) at {} writes/s, {key}",
            a.runs, setup.mutators, a.write_rate
        );
        plot::write_mmu_plot(path, &title, &curves)?;
    }
    match a.format {
        Format::Json => output::print_json(&serde_json::json!({
            "file": a.file.display().to_string(),
            "time_unit": "ms",
            "ncpu": args::ncpu(),
            "worker_counts": workers,
            "mutators": setup.mutators,
            "write_rate": a.write_rate,
            "alloc_rate": a.alloc_rate,
            "lead_ms": a.lead_ms,
            "rounds": a.runs,
            "bench": { "modes": results },
        })),
        format => {
            if format == Format::Table {
                outln!(
                    "{name}: {}; {} mutator thread(s) at {} writes/s and {} allocations/s each; \
                     {} alternated rounds per mode and worker count after a warm-up round\n",
                    workers_text(&workers),
                    setup.mutators,
                    a.write_rate,
                    a.alloc_rate,
                    a.runs
                )?;
            }
            out!("{}", table(&results).render(format))?;
            if format == Format::Table {
                out!("\n{NOTES}")?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_that_shrank_or_grew_by_more_than_a_tenth_is_warned_of() {
        let line = size_warning(Mode::Concurrent, 2, 563, 160_080).unwrap();
        assert!(
            line.starts_with("warning: concurrent at 2 workers"),
            "{line}"
        );
        assert!(line.contains("563") && line.contains("160,080"), "{line}");
        assert!(size_warning(Mode::Stw, 1, 177_000, 160_000).is_some());
        assert!(size_warning(Mode::Stw, 1, 160_000, 160_000).is_none());
        assert!(size_warning(Mode::Stw, 1, 144_000, 160_000).is_none());
        assert!(size_warning(Mode::Incremental, 1, 143_999, 160_000).is_some());
    }
}
