//! Repeated mark phases with one configuration, and what the tool keeps of
//! each: the pause, the balance, the termination latency, and (on request)
//! the whole statistics for traces and plots.

use serde::Serialize;
use stealmark_heap::{MarkIndex, ObjRef, ObjectModel};
use stealmark_marker::{MarkStats, Marker, MarkerConfig, Marking, WorkerStats};

use crate::error::{CliError, CliResult};

/// What one measured mark phase produced.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RunSample {
    /// Wall time of the `mark` call, ns.
    pub pause_ns: u64,
    /// Max over mean of objects scanned per worker.
    pub balance: f64,
    /// From the last object scanned to the end of the pause, ns.
    pub termination_latency_ns: u64,
    /// Objects marked (set bits).
    pub marked_objects: u64,
}

impl RunSample {
    /// The sample of a finished phase.
    pub fn of(marking: &Marking<'_>) -> RunSample {
        RunSample {
            pause_ns: marking.stats.pause_ns,
            balance: marking.stats.balance(),
            termination_latency_ns: marking.stats.termination_latency_ns,
            marked_objects: marking.bitmap.count(),
        }
    }

    /// The pause in milliseconds.
    pub fn pause_ms(&self) -> f64 {
        self.pause_ns as f64 / 1e6
    }
}

/// Creates a marker for `config`, turning a configuration the marker
/// rejects into a usage error.
pub fn new_marker(config: MarkerConfig) -> CliResult<Marker> {
    Marker::new(config).map_err(|e| CliError::usage(e.to_string()))
}

/// Runs one mark phase and returns its sample. `expected` is the object
/// count of an earlier phase: every phase must mark the same set.
pub fn mark_once<'m, H: ObjectModel + MarkIndex>(
    marker: &'m mut Marker,
    heap: &H,
    roots: &[ObjRef],
    expected: Option<u64>,
) -> CliResult<(RunSample, Marking<'m>)> {
    let marking = marker.mark(heap, roots);
    let sample = RunSample::of(&marking);
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
