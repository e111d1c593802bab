//! `stealmark bench --mode`: pause times of stop-the-world, incremental and
//! concurrent marking with a synthetic mutator running (`mutator`), and
//! their minimum mutator utilization (`mmu`); the incremental and the
//! concurrent marking each with either write-barrier family, snapshot at
//! the beginning or incremental update.
//!
//! Each configuration (a worker count and a mode) has its own copy-on-write
//! mapping of the snapshot (so the mutator writes without changing the
//! file), side arena, mark bitmap and marker. A round of a configuration
//! is: the mutator runs for `--lead-ms` without a barrier; one collection
//! in that mode; the mutator runs another `--lead-ms`. The configurations'
//! rounds alternate, after a warm-up round each, so that their ratios are
//! paired. A pause is what the mutator threads see: from the first thread
//! stopping to the last one running again (conservative with several
//! threads).
//!
//! The worker count is the marker's: the GC workers of a stop-the-world
//! collection, of the background marking (the concurrent modes) and of the
//! start and the remark (every mode but stop-the-world). Incremental steps
//! run on mutator 0's thread alone whatever the count, so in the
//! incremental modes the count changes the remark, not the steps.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde::Serialize;
use stealmark_heap::{mark_sequential, HeapGraph, MarkIndex, ObjRef, Snapshot, SnapshotError};
use stealmark_marker::{Collection, MarkBitmap, MarkCycle, Marker, MarkerConfig};

use super::mmu::{self, MmuPoint, Pause};
use super::mut_heap::{MutHeap, Side};
use super::mutator::{Barrier, Gc, Mutator, NoGc, Rates, Satb, Share, Until, Update, UpdateMarked};
use crate::error::{CliError, CliResult};
use crate::pause::{median, PauseStats};

/// How a collection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, strum::Display)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Mode {
    /// Stop the world and mark (`Marker::collect_with`).
    Stw,
    /// Steps on the mutator's thread between its operations;
    /// snapshot-at-the-beginning barrier (old values logged, new objects
    /// black).
    Incremental,
    /// Background workers while the mutator runs;
    /// snapshot-at-the-beginning barrier.
    Concurrent,
    /// Steps on the mutator's thread between its operations;
    /// incremental-update barrier (values stored into marked holders
    /// shaded, new objects white).
    IncrementalIu,
    /// Background workers while the mutator runs; incremental-update
    /// barrier on every store.
    ConcurrentIu,
}

/// Where a mark cycle's marking runs beside the mutators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marking {
    /// Steps on mutator 0's thread.
    Steps,
    /// The marker's workers, in the background.
    Background,
}

/// A mark cycle's write-barrier family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// Snapshot at the beginning ([`Satb`]).
    Satb,
    /// Incremental update ([`Update`], [`UpdateMarked`]).
    Update,
}

impl Mode {
    /// How a mark cycle of this mode marks, and its barrier; `None` for
    /// stop-the-world.
    fn cycle(self) -> Option<(Marking, Family)> {
        match self {
            Mode::Stw => None,
            Mode::Incremental => Some((Marking::Steps, Family::Satb)),
            Mode::Concurrent => Some((Marking::Background, Family::Satb)),
            Mode::IncrementalIu => Some((Marking::Steps, Family::Update)),
            Mode::ConcurrentIu => Some((Marking::Background, Family::Update)),
        }
    }

    /// Whether it marks in incremental steps (which `--step-budget` and
    /// `--step-interval-us` tune).
    pub fn steps(self) -> bool {
        matches!(self.cycle(), Some((Marking::Steps, _)))
    }
}

/// The knobs of one benchmark that every configuration shares.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub mutators: usize,
    pub rates: Rates,
    pub lead: Duration,
    pub step_budget: usize,
    pub step_interval: Duration,
    /// New objects the side arena holds per round.
    pub side_capacity: usize,
}

/// One round of one mode.
struct Round {
    len_s: f64,
    pauses: Vec<Pause>,
    gc_cpu_ms: f64,
    /// Operations per second per thread outside marking (no barrier).
    idle_rate: f64,
    /// Operations per second per thread while marking, pauses excluded.
    marking_rate: f64,
    /// Operations per second per thread over the round, pauses included.
    rate: f64,
    /// Operations per CPU second of the mutator threads outside marking
    /// and while marking (increments' CPU time excluded).
    idle_cpu_rate: f64,
    marking_cpu_rate: f64,
    marked: u64,
    /// Objects of the snapshot marked (the rest are new objects).
    marked_snapshot: u64,
    /// The engine's own part of the pauses: the start's and the remark's
    /// (the whole collection's, stop-the-world), ms.
    engine_ms: (f64, f64),
    allocated: u64,
}

/// One configuration of the benchmark: a mode at a worker count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeConfig {
    /// GC workers of the configuration's marker.
    pub workers: usize,
    /// How it collects.
    pub mode: Mode,
}

/// Every configuration of `modes` at every count of `workers`: by worker
/// count, then by mode (the order of the rows and of a round).
pub fn configs(workers: &[usize], modes: &[Mode]) -> Vec<ModeConfig> {
    workers
        .iter()
        .flat_map(|&w| {
            modes
                .iter()
                .map(move |&mode| ModeConfig { workers: w, mode })
        })
        .collect()
}

/// A configuration's summary over its measured rounds.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: Mode,
    /// GC workers of the marker that ran it (its configuration's count).
    pub workers: usize,
    pub rounds: usize,
    /// The longest pause of any round.
    pub max_pause_ms: f64,
    /// Every pause of every round.
    pub pause_ms: PauseStats,
    /// Pauses per round (median).
    pub pauses_per_round: f64,
    /// Median over rounds of this mode's longest pause over the first
    /// mode's at the same worker count in the same round.
    pub max_pause_ratio: f64,
    /// Median over rounds of the same mode's longest pause at the fewest
    /// workers listed over its longest pause here, in the same round
    /// (above 1: shorter here).
    pub max_pause_speedup: f64,
    /// CPU time of the process not spent by the mutator threads, per round
    /// (median): the collector's.
    pub gc_cpu_ms: f64,
    /// Reference writes per second per mutator thread over a round, pauses
    /// included (median).
    pub mutator_ops_per_s: f64,
    /// Writes per second per thread while marking, pauses excluded, and
    /// outside marking (no barrier); medians.
    pub marking_ops_per_s: f64,
    pub idle_ops_per_s: f64,
    /// 1 - marking / idle, per round, median: the throughput the mutator
    /// loses while marking (the barrier, and the workers' share of the
    /// machine).
    pub marking_slowdown: f64,
    /// 1 - (writes per CPU second of the mutator threads while marking) /
    /// (the same outside marking), per round, median: what the barrier
    /// (and the caches shared with the workers) costs each write, without
    /// the workers' share of the machine.
    pub cpu_slowdown: f64,
    /// Objects marked (new objects included: allocated black, or reached
    /// from the roots), median.
    pub marked_objects: u64,
    /// Objects of the snapshot marked (new objects excluded), median:
    /// `reachable_objects` when the mutator kept the heap's size.
    pub marked_snapshot_objects: u64,
    /// Objects reachable in the snapshot before the mutator ran (the
    /// sequential oracle, roots only, as the benchmark's collections).
    pub reachable_objects: u64,
    /// The engine's part of the start pause and of the remark (the whole
    /// collection, stop-the-world), medians, ms: the rest of a pause is the
    /// mutator's stopping and restarting.
    pub start_ms: f64,
    pub remark_ms: f64,
    /// Objects allocated during a round, median.
    pub allocated_objects: u64,
    /// The worst MMU over the rounds, per window.
    pub mmu: Vec<MmuPoint>,
}

/// Process CPU time, or one thread's, in seconds.
fn cpu_s(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids used are
    // the process's and the calling thread's CPU clocks, always present on
    // Linux. On failure `ts` stays zero.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// What one mutator thread did in one phase.
#[derive(Clone, Copy)]
struct Ran {
    start: Instant,
    end: Instant,
    writes: u64,
    cpu_s: f64,
    /// Time in incremental steps (counted as pauses).
    paused_s: f64,
}

impl Ran {
    /// Seconds it ran, incremental steps excluded.
    fn running_s(&self) -> f64 {
        (self.end - self.start).as_secs_f64() - self.paused_s
    }
}

/// Writes per second of the phases `rs`, the seconds of each thread's
/// phase counted by `secs`; 0 without any.
fn writes_per_s(rs: &[&[Ran]], secs: impl Fn(&Ran) -> f64) -> f64 {
    let (w, t) = rs
        .iter()
        .flat_map(|r| r.iter())
        .fold((0, 0.0), |(w, t), r| (w + r.writes, t + secs(r)));
    if t > 0.0 {
        w as f64 / t
    } else {
        0.0
    }
}

/// 1 - marking / idle: the fraction of the idle rate lost while marking
/// (0 when nothing was measured while marking: stop-the-world).
fn loss(marking: f64, idle: f64) -> f64 {
    if marking > 0.0 {
        1.0 - marking / idle
    } else {
        0.0
    }
}

fn run_one(
    m: &mut Mutator,
    heap: &MutHeap<'_>,
    rates: Rates,
    until: &Until<'_>,
    gc: &mut impl Gc,
) -> Ran {
    let c0 = cpu_s(libc::CLOCK_THREAD_CPUTIME_ID);
    let w0 = m.writes;
    let start = Instant::now();
    m.run(heap, rates, until, gc);
    Ran {
        start,
        end: Instant::now(),
        writes: m.writes - w0,
        cpu_s: cpu_s(libc::CLOCK_THREAD_CPUTIME_ID) - c0,
        paused_s: 0.0,
    }
}

/// Runs one phase: mutator 0 on the calling thread (so that no thread is
/// started or joined inside its pauses) with `gc(0)`, the others on scoped
/// threads with theirs; each until `until`.
fn phase<G: Gc>(
    ms: &mut [Mutator],
    heap: &MutHeap<'_>,
    s: &Setup,
    until: &Until<'_>,
    gc: &(dyn Fn(usize) -> G + Sync),
) -> Vec<Ran> {
    let (first, rest) = ms.split_first_mut().expect("a mutator");
    std::thread::scope(|sc| {
        let hs: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(i, m)| sc.spawn(move || run_one(m, heap, s.rates, until, &mut gc(i + 1))))
            .collect();
        let mut out = vec![run_one(first, heap, s.rates, until, &mut gc(0))];
        out.extend(hs.into_iter().map(|h| h.join().expect("mutator thread")));
        out
    })
}

/// Runs every mutator without a barrier for `d`.
fn plain(ms: &mut [Mutator], heap: &MutHeap<'_>, s: &Setup, d: Duration) -> Vec<Ran> {
    phase(ms, heap, s, &Until::Elapsed(d), &|_| NoGc)
}

/// The background modes' mutator: its barrier, and a stop once the
/// background marking is quiet.
struct Quiet<'c, 'm, B> {
    barrier: B,
    cycle: &'c MarkCycle<'m, MutHeap<'m>, MarkBitmap>,
}

impl<B: Barrier> Gc for Quiet<'_, '_, B> {
    #[inline(always)]
    fn write(&mut self, holder: ObjRef, old: Option<ObjRef>, new: ObjRef) -> bool {
        self.barrier.write(holder, old, new)
    }
    #[inline(always)]
    fn allocated(&mut self, obj: ObjRef) {
        self.barrier.allocated(obj);
    }
    fn poll(&mut self) -> bool {
        self.cycle.is_quiet()
    }
}

/// The step modes' mutator 0: its barrier, and a step every interval.
struct Stepping<'c, 'm, B> {
    barrier: B,
    cycle: &'c MarkCycle<'m, MutHeap<'m>, MarkBitmap>,
    budget: usize,
    /// Mutator threads, and barrier calls on this one since the last step
    /// (the calls into the cycle's buffer: an incremental-update barrier
    /// that skips an unmarked holder makes none): each step's budget grows
    /// by their product (the entries the mutators logged meanwhile, if
    /// they write alike), so that the steps keep up with the barrier and
    /// the cycle ends however fast the mutators write.
    mutators: usize,
    barrier_calls: usize,
    interval: Duration,
    last: Instant,
    steps: Vec<(Instant, Instant)>,
    /// CPU time of the steps (the collector's, on this thread), seconds.
    step_cpu_s: f64,
}

impl<B: Barrier> Gc for Stepping<'_, '_, B> {
    #[inline(always)]
    fn write(&mut self, holder: ObjRef, old: Option<ObjRef>, new: ObjRef) -> bool {
        let called = self.barrier.write(holder, old, new);
        self.barrier_calls += usize::from(called);
        called
    }
    #[inline(always)]
    fn allocated(&mut self, obj: ObjRef) {
        self.barrier.allocated(obj);
    }
    fn poll(&mut self) -> bool {
        if self.last.elapsed() < self.interval {
            return false;
        }
        // Entries recorded so far go to the step too.
        self.barrier.flush();
        let c0 = cpu_s(libc::CLOCK_THREAD_CPUTIME_ID);
        let t0 = Instant::now();
        let budget = self.budget + self.barrier_calls * self.mutators;
        self.barrier_calls = 0;
        let done = self
            .cycle
            .step(budget)
            .expect("a fresh cycle of the benchmark's heap is never poisoned");
        self.last = Instant::now();
        self.step_cpu_s += cpu_s(libc::CLOCK_THREAD_CPUTIME_ID) - c0;
        self.steps.push((t0, self.last));
        done
    }
}

/// The roots of a collection: the snapshot's, then each mutator thread's
/// own, one chunk each (taken while the mutators are stopped).
fn all_roots(snapshot: &[ObjRef], mutators: &[Mutator]) -> Vec<Vec<ObjRef>> {
    std::iter::once(snapshot.to_vec())
        .chain(mutators.iter().map(Mutator::roots))
        .collect()
}

/// What the mutators did during a mark cycle, and its pauses.
struct CycleRun {
    /// Each mutator thread's run while marking (mutator 0's first).
    marking: Vec<Ran>,
    /// The incremental steps on mutator 0's thread, each a pause.
    steps: Vec<(Instant, Instant)>,
    /// The engine's part of the start pause and of the remark, ms.
    engine_ms: (f64, f64),
}

/// A mark cycle of `heap` into `marks` (cleared), from its start to its
/// remark, the mutators `ms` running in between: marking as `how` says,
/// each mutator through the barrier of `how`'s family. Its roots at the
/// start and at the remark are `all_roots` of the moment. On return the
/// mutators have not run since the remark.
fn mark_cycle(
    how: (Marking, Family),
    marker: &mut Marker,
    heap: &MutHeap<'_>,
    roots: &[ObjRef],
    marks: &MarkBitmap,
    ms: &mut [Mutator],
    s: &Setup,
) -> CycleRun {
    let cycle = marker.start(heap, marks, &all_roots(roots, ms)[..]);
    let c = &cycle;
    let (marking, steps) = match how {
        (Marking::Background, Family::Satb) => (
            in_background(c, ms, heap, s, &|| Satb(c.mutator())),
            Vec::new(),
        ),
        (Marking::Background, Family::Update) => (
            in_background(c, ms, heap, s, &|| Update(c.mutator())),
            Vec::new(),
        ),
        (Marking::Steps, Family::Satb) => {
            in_steps(c, ms, heap, s, Satb(c.mutator()), &|| Satb(c.mutator()))
        }
        // Alone, mutator 0 stores only between its own steps, so it may
        // skip unmarked holders. Beside other mutators it may not: their
        // assists (`Backpressure::Assist`) mark on their threads while it
        // stores; and they store while it steps, so they never skip.
        (Marking::Steps, Family::Update) if ms.len() == 1 => {
            let first = UpdateMarked {
                buffer: c.mutator(),
                heap,
                marks,
            };
            in_steps(c, ms, heap, s, first, &|| Update(c.mutator()))
        }
        (Marking::Steps, Family::Update) => {
            in_steps(c, ms, heap, s, Update(c.mutator()), &|| Update(c.mutator()))
        }
    };
    let all = all_roots(roots, ms);
    let (_, stats) = cycle
        .finish(&Collection::new(&all[..]))
        .expect("every mutator buffer is dropped before the remark");
    CycleRun {
        marking,
        steps,
        engine_ms: (
            stats.start_pause_ns as f64 * 1e-6,
            stats.remark_ns as f64 * 1e-6,
        ),
    }
}

/// Runs the mutators `ms`, each through a barrier from `barrier`, while
/// the cycle's workers mark in the background, until the background
/// marking is quiet.
fn in_background<'m, B: Barrier>(
    cycle: &MarkCycle<'m, MutHeap<'m>, MarkBitmap>,
    ms: &mut [Mutator],
    heap: &MutHeap<'_>,
    s: &Setup,
    barrier: &(dyn Fn() -> B + Sync),
) -> Vec<Ran> {
    let never = AtomicBool::new(false);
    cycle
        .concurrently(|| {
            phase(ms, heap, s, &Until::Flag(&never), &|_| Quiet {
                barrier: barrier(),
                cycle,
            })
        })
        .expect("one background phase of a fresh cycle")
}

/// Runs the mutators `ms` while mutator 0 marks in steps between its
/// operations, through the barrier `first`, until a step finds no work
/// left; the others run on scoped threads until then, each through a
/// barrier from `others`. Returns their runs (mutator 0's without its
/// steps) and the steps.
fn in_steps<'m, F: Barrier, B: Barrier>(
    cycle: &MarkCycle<'m, MutHeap<'m>, MarkBitmap>,
    ms: &mut [Mutator],
    heap: &MutHeap<'_>,
    s: &Setup,
    first: F,
    others: &(dyn Fn() -> B + Sync),
) -> (Vec<Ran>, Vec<(Instant, Instant)>) {
    let flag = AtomicBool::new(false);
    let flag = &flag;
    let (m0, rest) = ms.split_first_mut().expect("a mutator");
    std::thread::scope(|sc| {
        let hs: Vec<_> = rest
            .iter_mut()
            .map(|m| sc.spawn(move || run_one(m, heap, s.rates, &Until::Flag(flag), &mut others())))
            .collect();
        let mut gc = Stepping {
            barrier: first,
            cycle,
            budget: s.step_budget,
            mutators: s.mutators,
            barrier_calls: 0,
            interval: s.step_interval,
            last: Instant::now(),
            steps: Vec::new(),
            step_cpu_s: 0.0,
        };
        let mut ran = run_one(m0, heap, s.rates, &Until::Flag(flag), &mut gc);
        flag.store(true, Relaxed);
        ran.paused_s = gc.steps.iter().map(|(a, b)| (*b - *a).as_secs_f64()).sum();
        ran.cpu_s -= gc.step_cpu_s;
        let mut all = vec![ran];
        all.extend(hs.into_iter().map(|h| h.join().expect("mutator thread")));
        (all, gc.steps)
    })
}

/// A round's mutator threads, each with its share of the snapshot.
fn mutators(heap: &MutHeap<'_>, roots: &[ObjRef], s: &Setup) -> Vec<Mutator> {
    (0..s.mutators)
        .map(|i| {
            let share = Share {
                index: i,
                of: s.mutators,
            };
            Mutator::new(heap, roots, 0x5EED + i as u64, share)
        })
        .collect()
}

/// One round of `mode`.
fn round(
    mode: Mode,
    marker: &mut Marker,
    heap: &MutHeap<'_>,
    roots: &[ObjRef],
    marks: &mut MarkBitmap,
    s: &Setup,
) -> Round {
    marks.reset(heap.mark_index_bound());
    heap.side.reset();
    let mut ms = mutators(heap, roots, s);
    let t0 = Instant::now();
    let cpu0 = cpu_s(libc::CLOCK_PROCESS_CPUTIME_ID);
    let before = plain(&mut ms, heap, s, s.lead);
    let stop = |r: &[Ran]| r.iter().map(|r| r.end).min().expect("a mutator");
    let resume = |r: &[Ran]| r.iter().map(|r| r.start).max().expect("a mutator");
    let mut pauses: Vec<(Instant, Instant)> = Vec::new();
    let marks = &*marks;
    let (marking, after, engine_ms) = match mode.cycle() {
        None => {
            let t = Instant::now();
            let all = all_roots(roots, &ms);
            marker.collect_with(heap, marks, &Collection::new(&all[..]));
            let collection_ms = t.elapsed().as_secs_f64() * 1e3;
            let after = plain(&mut ms, heap, s, s.lead);
            pauses.push((stop(&before), resume(&after)));
            (Vec::new(), after, (0.0, collection_ms))
        }
        Some(how) => {
            let run = mark_cycle(how, marker, heap, roots, marks, &mut ms, s);
            pauses.extend(run.steps);
            pauses.push((stop(&before), resume(&run.marking)));
            let after = plain(&mut ms, heap, s, s.lead);
            pauses.push((stop(&run.marking), resume(&after)));
            (run.marking, after, run.engine_ms)
        }
    };
    let end = Instant::now();
    let cpu = cpu_s(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    let mutator_cpu: f64 = [&before, &marking, &after]
        .iter()
        .flat_map(|p| p.iter())
        .map(|r| r.cpu_s)
        .sum();
    pauses.sort_by_key(|p| p.0);
    let pauses: Vec<Pause> = pauses
        .iter()
        .map(|(a, b)| Pause {
            start: (*a - t0).as_secs_f64(),
            end: (*b - t0).as_secs_f64().max((*a - t0).as_secs_f64()),
        })
        .collect();
    let len_s = (end - t0).as_secs_f64();
    let writes: u64 = [&before, &marking, &after]
        .iter()
        .flat_map(|p| p.iter())
        .map(|r| r.writes)
        .sum();
    Round {
        len_s,
        gc_cpu_ms: (cpu - mutator_cpu).max(0.0) * 1e3,
        idle_rate: writes_per_s(&[&before, &after], Ran::running_s),
        marking_rate: writes_per_s(&[&marking], Ran::running_s),
        idle_cpu_rate: writes_per_s(&[&before, &after], |r| r.cpu_s),
        marking_cpu_rate: writes_per_s(&[&marking], |r| r.cpu_s),
        rate: writes as f64 / len_s / s.mutators as f64,
        marked: marks.count(),
        marked_snapshot: marks
            .iter()
            .filter(|&i| i < heap.view.mark_index_bound())
            .count() as u64,
        engine_ms,
        allocated: ms.iter().map(|m| m.allocs).sum(),
        pauses,
    }
}

/// Runs `rounds` measured rounds of every configuration, alternated, after
/// one warm-up round each; summarises each, in the order of `configs`
/// (which must not be empty).
pub fn measure(
    path: &std::path::Path,
    configs: &[ModeConfig],
    s: &Setup,
    rounds: usize,
) -> CliResult<Vec<ModeResult>> {
    let open = |path| {
        Snapshot::open_copy_on_write(path).map_err(|e| match e {
            SnapshotError::Io { source, .. } => CliError::io("open", path, source),
            invalid => CliError::snapshot(path, invalid),
        })
    };
    let snapshots: Vec<Snapshot> = configs
        .iter()
        .map(|_| open(path))
        .collect::<CliResult<_>>()?;
    // Before any mutator wrote to the mappings.
    let reachable = snapshots
        .first()
        .map_or(0, |sn| mark_sequential(&sn.view(), sn.roots()).objects);
    let sides: Vec<Side> = configs.iter().map(|_| Side::new(s.side_capacity)).collect();
    let heaps: Vec<MutHeap<'_>> = snapshots
        .iter()
        .zip(&sides)
        .map(|(sn, side)| MutHeap::new(sn.view(), side))
        .collect();
    let mut marks: Vec<MarkBitmap> = configs.iter().map(|_| MarkBitmap::default()).collect();
    let mut markers = Vec::new();
    for c in configs {
        let config = MarkerConfig::with_workers(c.workers);
        markers.push(Marker::new(config).map_err(|e| CliError::usage(e.to_string()))?);
    }
    let mut results: Vec<Vec<Round>> = configs.iter().map(|_| Vec::new()).collect();
    for r in 0..=rounds {
        for (i, c) in configs.iter().enumerate() {
            let roots = snapshots[i].roots();
            let round = round(c.mode, &mut markers[i], &heaps[i], roots, &mut marks[i], s);
            if r > 0 {
                results[i].push(round);
            }
        }
    }
    let max_pause = |r: &Round| r.pauses.iter().map(|p| p.end - p.start).fold(0.0, f64::max) * 1e3;
    let fewest = configs.iter().map(|c| c.workers).min().unwrap_or(1);
    // The rounds of the configuration `pick` chooses, by its index.
    let rounds_of = |pick: &dyn Fn(&ModeConfig) -> bool| -> &[Round] {
        configs
            .iter()
            .position(pick)
            .map_or(&[], |j| results[j].as_slice())
    };
    // Median over paired rounds of f(this round's max pause, the other's).
    let paired = |rs: &[Round], other: &[Round], f: &dyn Fn(f64, f64) -> f64| {
        median(
            &rs.iter()
                .zip(other)
                .map(|(r, o)| f(max_pause(r), max_pause(o)))
                .collect::<Vec<_>>(),
        )
    };
    Ok(configs
        .iter()
        .zip(&markers)
        .zip(&results)
        .map(|((c, marker), rs)| {
            let all: Vec<f64> = rs
                .iter()
                .flat_map(|r| r.pauses.iter().map(|p| (p.end - p.start) * 1e3))
                .collect();
            let med = |f: &dyn Fn(&Round) -> f64| median(&rs.iter().map(f).collect::<Vec<_>>());
            let first_mode = rounds_of(&|o| o.workers == c.workers);
            let fewest_workers = rounds_of(&|o| o.workers == fewest && o.mode == c.mode);
            ModeResult {
                mode: c.mode,
                workers: marker.config().workers(),
                rounds: rs.len(),
                max_pause_ms: rs.iter().map(max_pause).fold(0.0, f64::max),
                pause_ms: PauseStats::from_ms(&all)
                    .unwrap_or(PauseStats::from_ms(&[0.0]).expect("one")),
                pauses_per_round: med(&|r| r.pauses.len() as f64),
                max_pause_ratio: paired(rs, first_mode, &|m, b| m / b.max(1e-9)),
                max_pause_speedup: paired(rs, fewest_workers, &|m, f| f / m.max(1e-9)),
                gc_cpu_ms: med(&|r| r.gc_cpu_ms),
                mutator_ops_per_s: med(&|r| r.rate),
                marking_ops_per_s: med(&|r| r.marking_rate),
                idle_ops_per_s: med(&|r| r.idle_rate),
                marking_slowdown: med(&|r| loss(r.marking_rate, r.idle_rate)),
                cpu_slowdown: med(&|r| loss(r.marking_cpu_rate, r.idle_cpu_rate)),
                marked_objects: med(&|r| r.marked as f64) as u64,
                marked_snapshot_objects: med(&|r| r.marked_snapshot as f64) as u64,
                reachable_objects: reachable,
                start_ms: med(&|r| r.engine_ms.0),
                remark_ms: med(&|r| r.engine_ms.1),
                allocated_objects: med(&|r| r.allocated as f64) as u64,
                mmu: mmu::worst(
                    &rs.iter()
                        .map(|r| mmu::curve(&r.pauses, r.len_s))
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::mutator::tests::runtime_heap;
    use super::*;

    #[test]
    fn configs_nest_worker_counts_then_modes() {
        let c = configs(&[4, 1], &[Mode::Stw, Mode::Concurrent]);
        let got: Vec<(usize, Mode)> = c.iter().map(|c| (c.workers, c.mode)).collect();
        assert_eq!(
            got,
            [
                (4, Mode::Stw),
                (4, Mode::Concurrent),
                (1, Mode::Stw),
                (1, Mode::Concurrent)
            ]
        );
    }

    /// Every object reachable from the roots at the remark (the snapshot's
    /// and the mutators' own, in the heap as it is then) is marked, in each
    /// mode with a mark cycle, with one mutator and with two: neither
    /// barrier family, nor the incremental-update barrier's skipping of
    /// unmarked holders, loses an object. The incremental modes interleave
    /// many small steps with the stores, so that a barrier that logs
    /// nothing loses objects there in every run; the concurrent modes race
    /// the background marking, which marks this small heap within a few of
    /// the mutator's batches, so they check soundness more than they
    /// catch a missing barrier.
    #[test]
    fn every_cycle_mode_marks_all_the_remark_can_reach() {
        let built = runtime_heap();
        let roots = built.roots();
        let cycle_modes = Mode::value_variants()
            .iter()
            .filter_map(|&m| Some((m, m.cycle()?)));
        for (mode, how) in cycle_modes {
            for threads in [1, 2] {
                let s = Setup {
                    mutators: threads,
                    rates: Rates {
                        writes: 0,
                        allocs: 100_000,
                    },
                    lead: Duration::from_millis(5),
                    step_budget: 64,
                    step_interval: Duration::ZERO,
                    side_capacity: 1 << 14,
                };
                let side = Side::new(s.side_capacity);
                let heap = MutHeap::new(built.view(), &side);
                let mut marks = MarkBitmap::default();
                marks.reset(heap.mark_index_bound());
                let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
                let mut ms = mutators(&heap, roots, &s);
                plain(&mut ms, &heap, &s, s.lead);
                let run = mark_cycle(how, &mut marker, &heap, roots, &marks, &mut ms, &s);
                let writes: u64 = run.marking.iter().map(|r| r.writes).sum();
                assert!(writes > 0, "{mode}: no write while marking");
                // The mutators have not run since the remark.
                let at_remark = all_roots(roots, &ms).concat();
                let reachable = mark_sequential(&heap, &at_remark).marked;
                let lost = reachable.iter().filter(|&i| !marks.contains(i)).count();
                assert_eq!(
                    lost,
                    0,
                    "{mode} with {threads} mutator(s): {lost} of {} reachable objects unmarked",
                    reachable.count()
                );
            }
        }
    }
}
