//! The front of `stealmark bench --mode`: the setup from the arguments, and
//! the table, JSON document and MMU plot of the results (`pauses`).

use std::time::Duration;

use super::mmu::MmuPoint;
use super::mutator::Rates;
use super::pauses::{measure, ModeResult, Setup};
use super::BenchArgs;
use crate::args;
use crate::error::{CliError, CliResult};
use crate::output::{self, out, outln, Align, Format, Table};
use crate::plot::{self, MmuCurve};

/// The MMU at `window_ms`, if the curve has that window.
fn mmu_at(points: &[MmuPoint], window_ms: f64) -> Option<f64> {
    points
        .iter()
        .find(|p| p.window_ms == window_ms)
        .map(|p| p.utilization)
}

/// The results as a table, one row a mode.
pub fn table(results: &[ModeResult]) -> Table {
    let mut t = Table::new([
        ("mode", Align::Left),
        ("max pause ms", Align::Right),
        ("p50 ms", Align::Right),
        ("p99 ms", Align::Right),
        ("pauses", Align::Right),
        ("max/first", Align::Right),
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
    ]);
    let mmu = |r: &ModeResult, w: f64| {
        mmu_at(&r.mmu, w).map_or_else(|| "-".into(), |u| format!("{u:.3}"))
    };
    for r in results {
        t.push(vec![
            format!("{:?}", r.mode).to_lowercase(),
            output::ms(r.max_pause_ms),
            output::ms(r.pause_ms.p50),
            output::ms(r.pause_ms.p99),
            format!("{:.0}", r.pauses_per_round),
            format!("{:.3}", r.max_pause_ratio),
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
        ]);
    }
    t
}

/// What the columns mean.
const NOTES: &str = "\
max pause: the longest pause of any round; p50, p99: over every pause of every round;
pauses: per round (median); max/first: median over rounds of the longest pause over the first mode's, same round;
MMU w: the least mutator fraction of any w-long window of any round (Cheng & Blelloch);
GC CPU: process CPU time minus the mutator threads', per round (median);
writes/s: per mutator thread over a round, pauses included; marking, idle: per thread while marking (pauses
excluded; barrier on) and outside marking (no barrier); slowdown: 1 - marking/idle (the barrier, plus the
workers' share of the machine); CPU slowdown: the same per CPU second of the mutator threads (the barrier and
the shared caches, not the workers' share); marked: objects marked, allocated black included.
";

/// Runs `stealmark bench FILE --mode ...`.
pub fn run(a: &BenchArgs) -> CliResult {
    args::distinct("--mode", &a.mode)?;
    let modes = a.mode.clone();
    if a.mutators == 0 {
        return Err(CliError::usage("--mutators must be at least 1"));
    }
    let setup = Setup {
        workers: a.threads.first().copied().unwrap_or_else(args::ncpu),
        mutators: a.mutators,
        rates: Rates {
            writes: a.write_rate,
            allocs: a.alloc_rate,
        },
        lead: Duration::from_millis(a.lead_ms),
        step_budget: a.step_budget,
        step_interval: Duration::from_micros(a.step_interval_us),
        side_capacity: usize::try_from(a.side_capacity)
            .map_err(|_| CliError::usage("--side-capacity is too large"))?,
    };
    let results = measure(&a.file, &modes, &setup, a.runs)?;
    let name = a.file.file_name().map_or_else(
        || a.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(path) = &a.plot {
        let curves: Vec<MmuCurve> = results
            .iter()
            .map(|r| MmuCurve {
                name: format!("{:?}", r.mode).to_lowercase(),
                points: r.mmu.iter().map(|p| (p.window_ms, p.utilization)).collect(),
            })
            .collect();
        let title = format!(
            "{name}: worst MMU of {} rounds, {} mutator(s) at {} writes/s, {} worker(s)",
            a.runs, setup.mutators, a.write_rate, setup.workers
        );
        plot::write_mmu_plot(path, &title, &curves)?;
    }
    match a.format {
        Format::Json => output::print_json(&serde_json::json!({
            "file": a.file.display().to_string(),
            "time_unit": "ms",
            "ncpu": args::ncpu(),
            "workers": setup.workers,
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
                    "{name}: {} worker(s), {} mutator thread(s) at {} writes/s and {} allocations/s each; \
                     {} alternated rounds per mode after a warm-up round\n",
                    setup.workers,
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
