//! Alternating benchmarks: several markers over one heap, run by run, so
//! that a noisy, shared machine affects all of them alike. The CLI's
//! `stealmark bench` and the criterion benchmarks build on this.
//!
//! ```
//! # use stealmark_model::{MarkIndex, ObjRef, ObjectModel, SlotKind};
//! # struct Pair;
//! # impl ObjectModel for Pair {
//! #     fn size_bytes(&self, _: ObjRef) -> usize { 16 }
//! #     fn slot_count(&self, _: ObjRef) -> usize { 1 }
//! #     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
//! #         if s.start == 0 && s.end > 0 { v(0, ObjRef::from_index(1 - o.index()), SlotKind::Strong) }
//! #     }
//! #     fn prefetch(&self, _: ObjRef) {}
//! # }
//! # impl MarkIndex for Pair {
//! #     fn mark_index_bound(&self) -> usize { 2 }
//! #     fn mark_index(&self, o: ObjRef) -> usize { o.index() }
//! # }
//! use stealmark_marker::bench::{compare, Subject};
//! use stealmark_marker::MarkerConfig;
//!
//! let heap = Pair;
//! let roots = [ObjRef::from_index(0)];
//! let mut subjects = vec![
//!     Subject::sequential(8),
//!     Subject::engine(MarkerConfig::with_workers(1)).unwrap(),
//!     Subject::replay(8),
//! ];
//! let report = compare(&heap, &roots, &mut subjects, 5).unwrap();
//! assert_eq!(report.results.len(), 3);
//! assert!(report.results.iter().all(|r| r.marked == 2));
//! ```

use std::fmt;
use std::time::Instant;

use serde::Serialize;
use stealmark_model::{MarkIndex, ObjRef, ObjectModel};

use crate::sequential::{Replay, SequentialMarker};
use crate::{ConfigError, Marker, MarkerConfig};

/// A marker under measurement.
pub struct Subject<'a> {
    name: String,
    kind: SubjectKind<'a>,
}

enum SubjectKind<'a> {
    Engine(Box<Marker>),
    Sequential(SequentialMarker),
    Replay {
        distance: usize,
        replay: Option<Replay>,
    },
    Custom(Box<dyn FnMut() -> u64 + 'a>),
}

impl<'a> Subject<'a> {
    /// The parallel engine with `config` (its workers start now, untimed).
    /// Named after its configuration.
    pub fn engine(config: MarkerConfig) -> Result<Subject<'a>, ConfigError> {
        let name = format!(
            "engine {} w={} {} {} {} pf={}",
            config.deque,
            config.workers,
            config.policy,
            config.steal,
            config.victim,
            config.prefetch
        );
        Ok(Subject {
            name,
            kind: SubjectKind::Engine(Box::new(Marker::new(config)?)),
        })
    }

    /// The sequential marker with a prefetch FIFO of `prefetch` entries.
    pub fn sequential(prefetch: usize) -> Subject<'a> {
        Subject {
            name: format!("sequential pf={prefetch}"),
            kind: SubjectKind::Sequential(SequentialMarker::new(prefetch)),
        }
    }

    /// The floor: a replay of the recorded mark order, prefetching
    /// `distance` objects ahead (recorded once, before the timed runs).
    pub fn replay(distance: usize) -> Subject<'a> {
        Subject {
            name: format!("replay d={distance}"),
            kind: SubjectKind::Replay {
                distance,
                replay: None,
            },
        }
    }

    /// Any other marker (for example the heap crate's sequential oracle):
    /// `run` marks once and returns the number of objects marked.
    pub fn custom(name: impl Into<String>, run: impl FnMut() -> u64 + 'a) -> Subject<'a> {
        Subject {
            name: name.into(),
            kind: SubjectKind::Custom(Box::new(run)),
        }
    }

    /// Renames the subject.
    pub fn named(mut self, name: impl Into<String>) -> Subject<'a> {
        self.name = name.into();
        self
    }

    /// The subject's name in reports.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A benchmark that could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum BenchError {
    /// A subject marked a different number of objects than the first one.
    Mismatch {
        /// The subject's name.
        subject: String,
        /// Objects it marked.
        got: u64,
        /// The first subject's name.
        first: String,
        /// Objects the first subject marked.
        expected: u64,
    },
    /// Fewer than one run was asked for.
    NoRuns,
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Mismatch {
                subject,
                got,
                first,
                expected,
            } => write!(
                f,
                "subject `{subject}` marked {got} objects, but `{first}` marked {expected}"
            ),
            BenchError::NoRuns => f.write_str("a benchmark needs at least one run"),
        }
    }
}

impl std::error::Error for BenchError {}

/// One subject's measurements.
#[derive(Debug, Clone, Serialize)]
pub struct SubjectResult {
    /// The subject's name.
    pub name: String,
    /// Pause times in nanoseconds, one per run, in run order.
    pub samples_ns: Vec<u64>,
    /// The median pause.
    pub median_ns: u64,
    /// Median over runs of this subject's time over the first subject's time
    /// in the same run (the paired ratio; > 1 means slower than the first).
    pub ratio_to_first: f64,
    /// Objects marked (the same in every run, checked).
    pub marked: u64,
    /// Engines only: median max/mean objects scanned per worker.
    pub balance: Option<f64>,
    /// Engines only: median time from the last object scanned to the end of
    /// the pause, in nanoseconds.
    pub termination_latency_ns: Option<u64>,
}

/// The results of [`compare`].
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Timed runs per subject.
    pub runs: usize,
    /// One entry per subject, in the order given.
    pub results: Vec<SubjectResult>,
}

impl BenchReport {
    /// The result named `name`.
    pub fn get(&self, name: &str) -> Option<&SubjectResult> {
        self.results.iter().find(|r| r.name == name)
    }

    /// The paired ratio `a / b`: the median over runs of a's time over b's.
    pub fn ratio(&self, a: &str, b: &str) -> Option<f64> {
        let (a, b) = (self.get(a)?, self.get(b)?);
        Some(median_f64(
            a.samples_ns
                .iter()
                .zip(&b.samples_ns)
                .map(|(&x, &y)| x as f64 / y.max(1) as f64)
                .collect(),
        ))
    }
}

/// Runs every subject `runs` times over `heap` from `roots`, alternating
/// subjects within each run (after one untimed warm-up round), and checks
/// that they all mark the same number of objects.
pub fn compare<H: ObjectModel + MarkIndex>(
    heap: &H,
    roots: &[ObjRef],
    subjects: &mut [Subject<'_>],
    runs: usize,
) -> Result<BenchReport, BenchError> {
    if runs == 0 {
        return Err(BenchError::NoRuns);
    }
    for s in subjects.iter_mut() {
        match &mut s.kind {
            SubjectKind::Replay { replay, .. } => *replay = Some(Replay::record(heap, roots)),
            SubjectKind::Engine(_) | SubjectKind::Sequential(_) | SubjectKind::Custom(_) => {}
        }
    }
    let names: Vec<String> = subjects.iter().map(|s| s.name.clone()).collect();
    let n = subjects.len();
    let mut samples = vec![Vec::with_capacity(runs); n];
    let mut marked = vec![0u64; n];
    let mut balance = vec![Vec::new(); n];
    let mut latency = vec![Vec::new(); n];
    for run in 0..=runs {
        for (i, s) in subjects.iter_mut().enumerate() {
            let t0 = Instant::now();
            let (count, engine_stats) = match &mut s.kind {
                SubjectKind::Engine(m) => {
                    let st = m.mark(heap, roots).stats;
                    (
                        st.objects_marked(),
                        Some((st.balance(), st.termination_latency_ns)),
                    )
                }
                SubjectKind::Sequential(m) => (m.mark(heap, roots).count(), None),
                SubjectKind::Replay { distance, replay } => {
                    let r = replay.as_mut().expect("recorded before the runs");
                    r.run(heap, roots, *distance);
                    (r.order().len() as u64, None)
                }
                SubjectKind::Custom(f) => (f(), None),
            };
            let t = t0.elapsed().as_nanos() as u64;
            if run == 0 {
                marked[i] = count;
                if count != marked[0] {
                    return Err(BenchError::Mismatch {
                        subject: names[i].clone(),
                        got: count,
                        first: names[0].clone(),
                        expected: marked[0],
                    });
                }
                continue;
            }
            samples[i].push(t);
            if let Some((b, l)) = engine_stats {
                balance[i].push(b);
                latency[i].push(l);
            }
        }
    }
    let first = samples[0].clone();
    let results = (0..n)
        .map(|i| {
            let ratio = median_f64(
                samples[i]
                    .iter()
                    .zip(&first)
                    .map(|(&x, &y)| x as f64 / y.max(1) as f64)
                    .collect(),
            );
            SubjectResult {
                name: names[i].clone(),
                median_ns: median_u64(samples[i].clone()),
                samples_ns: std::mem::take(&mut samples[i]),
                ratio_to_first: ratio,
                marked: marked[i],
                balance: (!balance[i].is_empty()).then(|| median_f64(balance[i].clone())),
                termination_latency_ns: (!latency[i].is_empty())
                    .then(|| median_u64(latency[i].clone())),
            }
        })
        .collect();
    Ok(BenchReport { runs, results })
}

/// The median of `v` (the upper median for an even count; 0 when empty).
pub fn median_u64(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// The median of `v` (the upper median for an even count; NaN when empty).
pub fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
