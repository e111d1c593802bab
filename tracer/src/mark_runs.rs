//! Repeated mark phases with one configuration, and what the tool keeps of
//! each: the pause, the balance, the termination latency, and (on request)
//! the whole statistics for traces and plots.

use serde::Serialize;
use stealmark_heap::{MarkIndex, ObjectModel};
use stealmark_marker::{Collection, MarkStats, Marker, MarkerConfig, Marking, WorkerStats};

use crate::cputime::{self, CpuTime};
use crate::error::{CliError, CliResult};
use crate::output;
use crate::pause::median;

/// What one measured mark phase produced.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RunSample {
    /// Wall time of the `mark` call, ns.
    pub pause_ns: u64,
    /// CPU time in user mode during the call, all GC workers summed, ns
    /// (`None` where the platform does not report CPU time).
    pub user_ns: Option<u64>,
    /// CPU time in the kernel during the call, all GC workers summed, ns.
    pub sys_ns: Option<u64>,
    /// Wall time the workers spent marking or stealing, summed over the
    /// workers: the time they wanted a CPU for.
    #[serde(skip)]
    pub active_ns: u64,
    /// Max over mean of objects scanned per worker.
    pub balance: f64,
    /// From the last object scanned to the end of the pause, ns.
    pub termination_latency_ns: u64,
    /// Objects marked (set bits).
    pub marked_objects: u64,
    /// Live bytes counted (0 where the marker did not count live objects).
    #[serde(skip)]
    pub live_bytes: u64,
    /// Successful steals, all workers.
    pub steals: u64,
    /// Items moved by those steals.
    pub items_stolen: u64,
    /// CAS operations attempted by owners and thieves, all workers.
    pub cas: u64,
}

impl RunSample {
    /// The sample of a finished phase that used `cpu`.
    pub fn of(marking: &Marking<'_>, cpu: Option<CpuTime>) -> RunSample {
        let total = marking.stats.total();
        RunSample {
            pause_ns: marking.stats.pause_ns,
            user_ns: cpu.map(|c| c.user_ns),
            sys_ns: cpu.map(|c| c.sys_ns),
            active_ns: total.busy_ns + total.steal_ns,
            balance: marking.stats.balance(),
            termination_latency_ns: marking.stats.termination_latency_ns,
            marked_objects: marking.bitmap.count(),
            live_bytes: total.live_bytes,
            steals: total.steal_successes,
            items_stolen: total.items_stolen,
            cas: total.cas,
        }
    }

    /// The sample of a one-threaded marker's run (the sequential oracle, a
    /// reference marker): busy for the whole pause, perfectly balanced.
    pub fn single(pause_ns: u64, cpu: Option<CpuTime>, marked_objects: u64) -> RunSample {
        RunSample {
            pause_ns,
            user_ns: cpu.map(|c| c.user_ns),
            sys_ns: cpu.map(|c| c.sys_ns),
            active_ns: pause_ns,
            balance: 1.0,
            termination_latency_ns: 0,
            marked_objects,
            live_bytes: 0,
            steals: 0,
            items_stolen: 0,
            cas: 0,
        }
    }

    /// The sample with `live_bytes` counted.
    pub fn with_live_bytes(self, live_bytes: u64) -> RunSample {
        RunSample { live_bytes, ..self }
    }

    /// The pause in milliseconds.
    pub fn pause_ms(&self) -> f64 {
        self.pause_ns as f64 / 1e6
    }

    /// The CPU time of the pause, if measured.
    pub fn cpu(&self) -> Option<CpuTime> {
        Some(CpuTime {
            user_ns: self.user_ns?,
            sys_ns: self.sys_ns?,
        })
    }

    /// Whether the workers got much less CPU time than they were active:
    /// see [`cputime::descheduled`].
    pub fn descheduled(&self) -> bool {
        self.cpu()
            .is_some_and(|cpu| cputime::descheduled(cpu, self.active_ns))
    }
}

/// The medians over `samples` of the user and system CPU time and of the
/// ratio (user + sys) / real, in ms, ms and a plain ratio; `None` where CPU
/// time was not measured.
pub fn cpu_medians(samples: &[RunSample]) -> Option<CpuMedians> {
    let cpus: Vec<(CpuTime, u64)> = samples
        .iter()
        .map(|s| s.cpu().map(|c| (c, s.pause_ns)))
        .collect::<Option<_>>()?;
    if cpus.is_empty() {
        return None;
    }
    let of = |f: &dyn Fn(&(CpuTime, u64)) -> f64| median(&cpus.iter().map(f).collect::<Vec<_>>());
    Some(CpuMedians {
        user_ms: of(&|(c, _)| c.user_ns as f64 / 1e6),
        sys_ms: of(&|(c, _)| c.sys_ns as f64 / 1e6),
        cpu_over_real: of(&|(c, real)| c.total_ns() as f64 / (*real).max(1) as f64),
    })
}

/// Medians over runs of a pause's CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CpuMedians {
    /// User-mode CPU time, all workers summed, ms.
    pub user_ms: f64,
    /// Kernel CPU time, all workers summed, ms.
    pub sys_ms: f64,
    /// (user + sys) / real: about the worker count when every worker had a
    /// CPU of its own the whole pause.
    pub cpu_over_real: f64,
}

impl CpuMedians {
    /// HotSpot's form: `user=12.3 ms sys=0.40 ms, real=6.21 ms`, with
    /// `real_ms` the wall time.
    pub fn times(&self, real_ms: f64) -> String {
        format!(
            "user={} ms sys={} ms, real={} ms",
            output::ms(self.user_ms),
            output::ms(self.sys_ms),
            output::ms(real_ms)
        )
    }
}

/// Warns on standard error when `threads` GC workers are more than the
/// CPUs available to the process (`ncpu`).
pub fn warn_if_oversubscribed(threads: usize, ncpu: usize) {
    if threads > ncpu {
        eprintln!(
            "warning: {threads} GC workers on {} available: the workers will take turns on the CPUs, so pauses measure the scheduler as much as the marker",
            output::counted(ncpu as u64, "CPU")
        );
    }
}

/// Warns on standard error when, in some of `runs` (each a configuration's
/// name and its samples), the workers were descheduled: their CPU time was
/// well below the time they spent marking or stealing.
pub fn warn_if_descheduled<'a>(runs: impl IntoIterator<Item = (String, &'a [RunSample])>) {
    let mut total = 0;
    let mut hit = 0;
    let mut names = Vec::new();
    for (name, samples) in runs {
        let n = samples.iter().filter(|s| s.descheduled()).count();
        total += samples.len();
        hit += n;
        if n > 0 {
            names.push(format!("{name}: {n}"));
        }
    }
    if hit == 0 {
        return;
    }
    let listed = if names.len() > 4 {
        format!("{}, ...", names[..4].join(", "))
    } else {
        names.join(", ")
    };
    eprintln!(
        "warning: in {hit} of {total} runs ({listed}) the GC workers were on a CPU for less than {:.0}% of the time they spent marking or stealing: they were descheduled (other processes competed for the CPUs), so those pauses overstate the marker's cost; compare user+sys with real, or rerun on a quieter machine",
        cputime::MIN_ON_CPU * 100.0
    );
}

/// Creates a marker for `config`, turning a configuration the marker
/// rejects into a usage error.
pub fn new_marker(config: MarkerConfig) -> CliResult<Marker> {
    Marker::new(config).map_err(|e| CliError::usage(e.to_string()))
}

/// Runs one collection (roots, finalizable objects, soft-reference policy)
/// and returns its sample. `expected` is the object count of an earlier
/// collection: every collection must mark the same set.
pub fn mark_once<'m, H: ObjectModel + MarkIndex>(
    marker: &'m mut Marker,
    heap: &H,
    collection: &Collection<'_>,
    expected: Option<u64>,
) -> CliResult<(RunSample, Marking<'m>)> {
    let (marking, cpu) = cputime::measure(|| marker.collect(heap, collection));
    let sample = RunSample::of(&marking, cpu);
    if let Some(expected) = expected {
        if expected != sample.marked_objects {
            return Err(CliError::failed(
                "marking",
                format!(
                    "two phases over the same heap marked {expected} and {} objects; this is a bug in the marker, please report it with the snapshot",
                    sample.marked_objects
                ),
            ));
        }
    }
    Ok((sample, marking))
}

/// The per-worker counters of a phase, in the JSON shape `mark --json` and
/// `bench --format json` use.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerReport {
    /// Worker index.
    pub worker: usize,
    /// The marker's counters.
    #[serde(flatten)]
    pub stats: WorkerStats,
    /// Deque-length samples the timeline kept.
    pub timeline_samples: usize,
}

/// The per-worker reports of a phase.
pub fn worker_reports(stats: &MarkStats) -> Vec<WorkerReport> {
    stats
        .workers
        .iter()
        .enumerate()
        .map(|(worker, rec)| WorkerReport {
            worker,
            stats: rec.stats,
            timeline_samples: rec.timeline.len(),
        })
        .collect()
}

/// The index of the sample with the median pause (the lower median for an
/// even count), whose statistics represent the configuration.
pub fn median_index(samples: &[RunSample]) -> usize {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| samples[i].pause_ns);
    order[(order.len().saturating_sub(1)) / 2]
}
