//! Measures the runtime contract's benchmark targets as paired ratios: the
//! subjects of a group alternate within each run (after one untimed
//! warm-up round), and a ratio is the median over runs of one subject's
//! time over the other's in the same run, so that a noisy, shared machine
//! affects both alike.
//!
//! ```text
//! cargo run --release -p stealmark-bench --bin contract_targets -- [--scale F] [RUNS] [GROUP...]
//! ```
//!
//! `--scale F` multiplies every group's object and root count (default 1:
//! the sizes below), for a quick check of the program itself.
//!
//! Groups (default: all):
//! - `roots`: ten million roots in a thousand chunks (a random permutation
//!   of ten million objects without slots), at 1 and 2 workers: the root
//!   phase (the longest of any worker's) and the pause (goal: 2 workers at
//!   least 1.8 times faster);
//! - `roots-scaling` (not in the default): the same roots at 1, 2, 4, 8
//!   and 16 workers, each against 1 worker (for a machine with that many
//!   cores);
//! - `roots-diag` (not in the default): where the root phase's time goes:
//!   the same roots in random order and in mark-index order, and a
//!   thousand empty chunks, at 1 and 2 workers;
//! - `chain`: the `ephemeron-chain` shape, 1M objects (one chain of
//!   999,997 links through one table), against the `list` shape, 1M
//!   objects, at 1 and 2 workers (goal: the chain at most 3 times the list);
//! - `chain-profile` (not in the default): the chain alone at 1 worker,
//!   collected RUNS times after a warm-up, then the median of each step:
//!   a steady state to run under `perf record`;
//! - `count`: the cost of counting live bytes and types while marking
//!   (`MarkerConfig::count_live` on against off), `random` and `runtime`,
//!   4M objects, at 1 and 2 workers;
//! - `contract`: the `weak` shape, 8M objects (5% of them ephemeron values;
//!   weak, soft and phantom references; finalizable objects), against the
//!   same graph with every slot strong and nothing finalizable
//!   (`all_strong`), at 2 workers (goal: at most 1.1 times); and the
//!   `weak` heap's steps;
//! - `weak-profile` and `strong-profile` (not in the default): the `weak`
//!   heap, or its all-strong twin, alone at 2 workers, collected RUNS
//!   times after a warm-up, then the median of the pause and of each step
//!   and the process's CPU time per collection (`/proc/self/stat`, user and
//!   system, all threads): a steady state to run under `perf record`, and
//!   a figure that time-slicing by other processes inflates less than the
//!   wall clock.

use std::time::Instant;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use stealmark_heap::{generate_heap, GenConfig, Generated, HeapGraph, Shape};
use stealmark_marker::bench::median_f64;
use stealmark_marker::{Collection, MarkStats, Marker, MarkerConfig, ObjRef};

use leaves::Leaves;
use stealmark_bench::leaves;

/// One measurement: the pause, and a second figure (the root phase).
#[derive(Clone, Copy)]
struct Sample {
    pause_ns: u64,
    part_ns: u64,
}

type Run<'a> = Box<dyn FnMut() -> Sample + 'a>;

/// Runs every subject once per run, alternating, after a warm-up round;
/// returns each subject's samples.
fn alternate(runs: usize, subjects: &mut [Run<'_>]) -> Vec<Vec<Sample>> {
    let mut samples = vec![Vec::with_capacity(runs); subjects.len()];
    for run in 0..=runs {
        for (i, s) in subjects.iter_mut().enumerate() {
            let x = s();
            if run > 0 {
                samples[i].push(x);
            }
        }
    }
    samples
}

/// The paired ratio `a / b` of the figure `f`, with both medians in ms.
fn ratio(a: &[Sample], b: &[Sample], f: impl Fn(&Sample) -> u64) -> (f64, f64, f64) {
    let r = median_f64(
        a.iter()
            .zip(b)
            .map(|(x, y)| f(x) as f64 / f(y).max(1) as f64)
            .collect(),
    );
    let ms = |v: &[Sample]| median_f64(v.iter().map(|s| f(s) as f64 / 1e6).collect());
    (r, ms(a), ms(b))
}

fn print(what: &str, (r, a, b): (f64, f64, f64), an: &str, bn: &str) {
    println!("  {what}: {r:.3}  ({an} {a:.2} ms, {bn} {b:.2} ms)");
}

fn marker(workers: usize) -> Marker {
    Marker::new(MarkerConfig::with_workers(workers)).expect("valid configuration")
}

/// The root source of the `roots` groups: `n` leaf objects, in random
/// order, in a thousand chunks.
fn random_chunks(n: usize) -> Vec<Vec<ObjRef>> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut Pcg64::seed_from_u64(7));
    order
        .chunks(n / 1000)
        .map(|c| c.iter().map(|&i| ObjRef::from_index(i)).collect())
        .collect()
}

/// A subject collecting `heap` from `chunks` with `workers` workers,
/// checking that every leaf is marked; the part is the root phase.
fn roots_subject<'a>(heap: &'a Leaves, chunks: &'a [Vec<ObjRef>], workers: usize) -> Run<'a> {
    let mut m = marker(workers);
    let live: usize = chunks.iter().map(Vec::len).sum();
    Box::new(move || {
        let st = m.collect(heap, &Collection::new(chunks)).stats;
        assert_eq!(st.live_objects, live as u64);
        Sample {
            pause_ns: st.pause_ns,
            part_ns: st.root_phase_ns(),
        }
    })
}

/// The `roots` group: ten million roots in a thousand chunks at 1 and 2
/// workers, the target's ratio.
fn roots(runs: usize) {
    roots_at("roots", runs, &[1, 2]);
}

/// The `roots` group's source at 1, 2, 4, 8 and 16 workers.
fn roots_scaling(runs: usize) {
    roots_at("roots-scaling", runs, &[1, 2, 4, 8, 16]);
}

/// Ten million random roots in a thousand chunks at each count of
/// `workers` (the first is 1), alternated: the root phase and the pause of
/// 1 worker over those of each other count, paired.
fn roots_at(group: &str, runs: usize, workers: &[usize]) {
    let n = usize::try_from(scaled(10_000_000)).expect("root count");
    let heap = Leaves(n);
    let chunks = random_chunks(n);
    println!("{group}: {n} roots in {} chunks", chunks.len());
    let (heap, chunks) = (&heap, chunks.as_slice());
    let mut subjects: Vec<Run<'_>> = workers
        .iter()
        .map(|&w| roots_subject(heap, chunks, w))
        .collect();
    let s = alternate(runs, &mut subjects);
    for (i, w) in workers.iter().enumerate().skip(1) {
        let wn = format!("w{w}");
        let goal = if *w == 2 { " (goal >= 1.8)" } else { "" };
        print(
            &format!("root phase, 1 / {w} workers{goal}"),
            ratio(&s[0], &s[i], |x| x.part_ns),
            "w1",
            &wn,
        );
        print(
            &format!("pause, 1 / {w} workers"),
            ratio(&s[0], &s[i], |x| x.pause_ns),
            "w1",
            &wn,
        );
    }
}

/// Where the root phase's time goes: the `roots` source against the same
/// roots in mark-index order (each chunk a range of the bitmap of its own,
/// so the two workers share no bitmap line but at a chunk's edges) and
/// against a thousand empty chunks (the step's fixed costs), at 1 and 2
/// workers.
fn roots_diag(runs: usize) {
    let n = usize::try_from(scaled(10_000_000)).expect("root count");
    let heap = Leaves(n);
    let random = random_chunks(n);
    let sorted: Vec<Vec<ObjRef>> = (0..n)
        .collect::<Vec<_>>()
        .chunks(n / 1000)
        .map(|c| c.iter().map(|&i| ObjRef::from_index(i)).collect())
        .collect();
    let empty: Vec<Vec<ObjRef>> = vec![Vec::new(); 1000];
    println!("roots-diag: {n} roots in 1000 chunks, random and in order; 1000 empty chunks");
    let heap = &heap;
    let s = alternate(
        runs,
        &mut [
            roots_subject(heap, &random, 1),
            roots_subject(heap, &random, 2),
            roots_subject(heap, &sorted, 1),
            roots_subject(heap, &sorted, 2),
            roots_subject(heap, &empty, 1),
            roots_subject(heap, &empty, 2),
        ],
    );
    let phase = |x: &Sample| x.part_ns;
    print(
        "random: root phase, 1 / 2 workers",
        ratio(&s[0], &s[1], phase),
        "w1",
        "w2",
    );
    print(
        "in order: root phase, 1 / 2 workers",
        ratio(&s[2], &s[3], phase),
        "w1",
        "w2",
    );
    print(
        "1 worker: random / in order",
        ratio(&s[0], &s[2], phase),
        "random",
        "in order",
    );
    print(
        "2 workers: random / in order",
        ratio(&s[1], &s[3], phase),
        "random",
        "in order",
    );
    print(
        "empty chunks: pause, 1 / 2 workers",
        ratio(&s[4], &s[5], |x| x.pause_ns),
        "w1",
        "w2",
    );
}

/// A subject collecting `g` (its roots and finalizable objects) with `m`.
fn collect_subject(g: &Generated, mut m: Marker) -> Run<'_> {
    let view = g.heap.view();
    let expect = g.info.reachable;
    Box::new(move || {
        let t0 = Instant::now();
        let c = Collection::new(g.heap.roots()).finalizable(g.heap.finalizable());
        let st = m.collect(&view, &c).stats;
        let pause_ns = t0.elapsed().as_nanos() as u64;
        if let Some(e) = expect {
            assert_eq!(st.live_objects, e, "{}", g.info.shape);
        }
        Sample {
            pause_ns,
            part_ns: st.pause_ns,
        }
    })
}

fn chain(runs: usize) {
    let chain = generate_heap(&GenConfig::new(Shape::EphemeronChain, scaled(1_000_000)))
        .expect("generator");
    let list = generate_heap(&GenConfig::new(Shape::List, scaled(1_000_000))).expect("generator");
    println!(
        "chain: ephemeron-chain {} objects, list {} objects",
        chain.info.objects, list.info.objects
    );
    for workers in [1, 2] {
        let s = alternate(
            runs,
            &mut [
                collect_subject(&chain, marker(workers)),
                collect_subject(&list, marker(workers)),
            ],
        );
        print(
            &format!("chain / list, {workers} worker(s) (goal <= 3)"),
            ratio(&s[0], &s[1], |x| x.pause_ns),
            "chain",
            "list",
        );
    }
    print_steps(&chain, 1);
    print_steps(&chain, 2);
}

/// A collection's pause and steps, in ms, named.
fn step_times(st: &MarkStats) -> Vec<(String, f64)> {
    let mut all = vec![("pause".to_string(), st.pause_ns as f64 / 1e6)];
    all.extend(
        st.steps
            .iter()
            .map(|s| (format!("{:?}", s.kind), s.ns as f64 / 1e6)),
    );
    all
}

/// The median of each figure of [`step_times`] over collections with the
/// same steps.
fn step_medians(steps: &[Vec<(String, f64)>]) -> String {
    let medians: Vec<String> = (0..steps.first().map_or(0, Vec::len))
        .map(|i| {
            let name = &steps[0][i].0;
            let ms = median_f64(steps.iter().map(|s| s[i].1).collect());
            format!("{name} {ms:.2} ms")
        })
        .collect();
    medians.join(", ")
}

fn chain_profile(runs: usize) {
    let chain = generate_heap(&GenConfig::new(Shape::EphemeronChain, scaled(1_000_000)))
        .expect("generator");
    let view = chain.heap.view();
    let mut m = marker(1);
    let mut steps: Vec<Vec<(String, f64)>> = Vec::new();
    for run in 0..=runs {
        let c = Collection::new(chain.heap.roots());
        let st = &m.collect(&view, &c).stats;
        if run > 0 {
            steps.push(step_times(st));
        }
    }
    println!(
        "  chain alone, 1 worker, median of {runs}: {}",
        step_medians(&steps)
    );
}

/// The process's CPU time so far (user and system, every thread), in ms,
/// from `/proc/self/stat` (clock ticks of 10 ms); `None` where it cannot
/// be read.
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may hold spaces) end it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

/// Collects the `weak` heap (or its all-strong twin) alone at 2 workers,
/// `runs` times after a warm-up; prints the medians of the pause and each
/// step, and the CPU time per collection.
fn contract_profile(runs: usize, all_strong: bool) {
    let g = generate_heap(&GenConfig::new(Shape::Weak, scaled(8_000_000)).all_strong(all_strong))
        .expect("generator");
    let view = g.heap.view();
    let mut m = marker(2);
    let mut steps: Vec<Vec<(String, f64)>> = Vec::new();
    let mut cpu0 = None;
    for run in 0..=runs {
        if run == 1 {
            cpu0 = cpu_ms();
        }
        let c = Collection::new(g.heap.roots()).finalizable(g.heap.finalizable());
        let st = &m.collect(&view, &c).stats;
        if run > 0 {
            steps.push(step_times(st));
        }
    }
    let cpu = match (cpu0, cpu_ms()) {
        (Some(a), Some(b)) => format!("{:.1} ms", (b - a) / runs.max(1) as f64),
        _ => "unknown".to_string(),
    };
    println!(
        "  {} alone, 2 workers, median of {runs}: {}; CPU per collection {cpu}",
        if all_strong { "all-strong" } else { "weak" },
        step_medians(&steps)
    );
}

fn contract(runs: usize) {
    let n = scaled(8_000_000);
    let weak = generate_heap(&GenConfig::new(Shape::Weak, n)).expect("generator");
    let strong =
        generate_heap(&GenConfig::new(Shape::Weak, n).all_strong(true)).expect("generator");
    println!(
        "contract: weak {} objects ({} finalizable), all-strong {} objects",
        weak.info.objects,
        weak.heap.finalizable().len(),
        strong.info.objects
    );
    let s = alternate(
        runs,
        &mut [
            collect_subject(&weak, marker(2)),
            collect_subject(&strong, marker(2)),
        ],
    );
    print(
        "weak / all-strong, 2 workers (goal <= 1.1)",
        ratio(&s[0], &s[1], |x| x.pause_ns),
        "weak",
        "strong",
    );
    print_steps(&weak, 2);
}

/// Collects `g` three times with `workers` workers and prints each
/// collection's steps and contract figures.
fn print_steps(g: &Generated, workers: usize) {
    let mut m = marker(workers);
    for _ in 0..3 {
        let view = g.heap.view();
        let c = Collection::new(g.heap.roots()).finalizable(g.heap.finalizable());
        let marking = m.collect(&view, &c);
        let report = marking.report();
        let steps: Vec<String> = marking
            .stats
            .steps
            .iter()
            .map(|s| format!("{:?} {:.2} ms", s.kind, s.ns as f64 / 1e6))
            .collect();
        let e = report.ephemerons();
        println!(
            "  {}, {workers} workers: pause {:.2} ms; steps {}; {} live, {} cleared, {} to finalize; ephemerons {} found, {} registered, {} live",
            g.info.shape,
            marking.stats.pause_ns as f64 / 1e6,
            steps.join(", "),
            report.live_objects(),
            report.cleared().count(),
            report.to_finalize().count(),
            e.pairs,
            e.registered,
            e.values_traced
        );
    }
}

fn count(runs: usize) {
    for shape in [Shape::Random, Shape::Runtime] {
        let g = generate_heap(&GenConfig::new(shape, scaled(4_000_000))).expect("generator");
        println!("count: {shape} {} objects", g.info.objects);
        for workers in [1, 2] {
            let mut off = MarkerConfig::with_workers(workers);
            off.set_count_live(false);
            let off = Marker::new(off).expect("valid configuration");
            let s = alternate(
                runs,
                &mut [
                    collect_subject(&g, marker(workers)),
                    collect_subject(&g, off),
                ],
            );
            print(
                &format!("count_live on / off, {workers} worker(s)"),
                ratio(&s[0], &s[1], |x| x.pause_ns),
                "on",
                "off",
            );
        }
    }
}

/// The factor of `--scale` on every group's object and root count.
static SCALE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();

/// `n` times `--scale`, at least 1.
fn scaled(n: u64) -> u64 {
    let f = SCALE.get().copied().unwrap_or(1.0);
    ((n as f64 * f).round() as u64).max(1)
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--scale") {
        args.next();
        let f: f64 = args
            .next()
            .and_then(|a| a.parse().ok())
            .filter(|f: &f64| *f > 0.0 && f.is_finite())
            .expect("--scale takes a positive factor");
        SCALE.set(f).expect("set once");
    }
    let runs: usize = match args.peek().and_then(|a| a.parse().ok()) {
        Some(r) => {
            args.next();
            r
        }
        None => 7,
    };
    let mut groups: Vec<String> = args.collect();
    if groups.is_empty() {
        groups = ["roots", "chain", "count", "contract"]
            .map(String::from)
            .to_vec();
    }
    println!(
        "runs={runs} cores={}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for g in &groups {
        match g.as_str() {
            "roots" => roots(runs),
            "roots-scaling" => roots_scaling(runs),
            "roots-diag" => roots_diag(runs),
            "chain" => chain(runs),
            "chain-profile" => chain_profile(runs),
            "count" => count(runs),
            "contract" => contract(runs),
            "weak-profile" => contract_profile(runs, false),
            "strong-profile" => contract_profile(runs, true),
            other => {
                panic!("unknown group `{other}`: roots, roots-scaling, roots-diag, chain, chain-profile, count, contract, weak-profile or strong-profile")
            }
        }
    }
}
