//! Measures the marker's benchmark targets (issue 4) as ratios from
//! alternating runs (`stealmark_marker::bench::compare`) and prints one line
//! per comparison.
//!
//! ```text
//! cargo run --release -p stealmark-bench --bin targets -- [OBJECTS] [RUNS] [GROUP...]
//! ```
//!
//! Groups (default: all but `variants` and `profile`):
//! - `prefetch`: targets 1, 2 and 4 — the engine at 1 worker against the
//!   heap crate's oracle, the sequential prefetching marker and the replay
//!   floor;
//! - `scaling`: target 3 — 1 against 2 workers;
//! - `multiprogramming`: target 6 — 16 against 2 workers;
//! - `peer`: target 5 — steal-half against crossbeam at 2 workers, every shape;
//! - `balance`: targets 7 and 8 — balance and termination latency at 2
//!   workers, every shape;
//! - `variants`: the engine at 1 worker with each deque kind, with private
//!   work off, with no deque reserve and with prefetching off, against the
//!   sequential marker;
//! - `profile`: only the engine at 1 worker and the sequential marker;
//! - `detail`: per-worker statistics of three collections at 2 workers,
//!   every shape.
//!
//! `prefetch`, `scaling`, `multiprogramming`, `variants` and `profile` use
//! the `random`, `power-law` and `runtime` shapes. Defaults: 8,000,000
//! objects, 7 runs.

use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
use stealmark_marker::bench::{compare, BenchReport, Subject};
use stealmark_marker::{DequeKind, MarkerConfig};

fn engine(workers: usize, deque: DequeKind) -> MarkerConfig {
    let mut c = MarkerConfig::with_workers(workers);
    c.set_deque(deque);
    c
}

fn subject(name: &str, config: MarkerConfig) -> Subject<'static> {
    Subject::engine(config)
        .expect("valid configuration")
        .named(name)
}

/// Prints the paired ratio `a / b` with both medians.
fn line(report: &BenchReport, what: &str, a: &str, b: &str) {
    let r = report.ratio(a, b).expect("subjects present");
    let ma = report.get(a).unwrap().median_ns as f64 / 1e6;
    let mb = report.get(b).unwrap().median_ns as f64 / 1e6;
    println!("  {what}: {r:.3}  ({a} {ma:.2} ms, {b} {mb:.2} ms)");
}

fn all(report: &BenchReport) {
    for x in &report.results {
        println!(
            "  {}: {:.2} ms, {:.3} x {}",
            x.name,
            x.median_ns as f64 / 1e6,
            x.ratio_to_first,
            report.results[0].name
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let objects: u64 = args
        .next()
        .map_or(8_000_000, |a| a.parse().expect("OBJECTS"));
    let runs: usize = args.next().map_or(7, |a| a.parse().expect("RUNS"));
    let mut groups: Vec<String> = args.collect();
    if groups.is_empty() {
        groups = ["prefetch", "scaling", "multiprogramming", "peer", "balance"]
            .map(String::from)
            .to_vec();
    }
    let has = |g: &str| groups.iter().any(|x| x == g);
    println!(
        "objects={objects} runs={runs} cores={}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let main_shapes = [Shape::Random, Shape::PowerLaw, Shape::Runtime];
    for &shape in Shape::ALL {
        let is_main = main_shapes.contains(&shape);
        if !(is_main || has("peer") || has("balance") || has("detail")) {
            continue;
        }
        let g = generate_heap(&GenConfig::new(shape, objects)).expect("generator");
        let view = g.heap.view();
        let roots = g.heap.roots();
        println!("{shape}: {} objects", g.info.objects);
        if is_main && has("prefetch") {
            let mut s = vec![
                subject("engine-1", engine(1, DequeKind::StealHalf)),
                Subject::custom("oracle", || mark_sequential(&view, roots).objects),
                Subject::sequential(8).named("sequential-pf8"),
                Subject::replay(8).named("replay-floor"),
            ];
            let r = compare(&view, roots, &mut s, runs).unwrap();
            line(
                &r,
                "T1 prefetch: oracle / engine-1 (goal >= 3)",
                "oracle",
                "engine-1",
            );
            line(
                &r,
                "T2 overhead: engine-1 / sequential-pf8 (goal <= 1.05)",
                "engine-1",
                "sequential-pf8",
            );
            line(
                &r,
                "T4 floor: engine-1 / replay (goal <= 1.2)",
                "engine-1",
                "replay-floor",
            );
        }
        if is_main && has("scaling") {
            let mut s = vec![
                subject("engine-1", engine(1, DequeKind::StealHalf)),
                subject("engine-2", engine(2, DequeKind::StealHalf)),
            ];
            let r = compare(&view, roots, &mut s, runs).unwrap();
            line(
                &r,
                "T3 scaling: engine-1 / engine-2 (goal >= 1.85)",
                "engine-1",
                "engine-2",
            );
        }
        if is_main && has("multiprogramming") {
            let mut s = vec![
                subject("engine-2", engine(2, DequeKind::StealHalf)),
                subject("engine-16", engine(16, DequeKind::StealHalf)),
            ];
            let r = compare(&view, roots, &mut s, runs).unwrap();
            line(
                &r,
                "T6 multiprogramming: engine-16 / engine-2 (goal <= 1.3)",
                "engine-16",
                "engine-2",
            );
        }
        if has("peer") {
            let mut s = vec![
                subject("steal-half-2", engine(2, DequeKind::StealHalf)),
                subject("crossbeam-2", engine(2, DequeKind::Crossbeam)),
            ];
            let r = compare(&view, roots, &mut s, runs).unwrap();
            line(
                &r,
                "T5 peer: crossbeam-2 / steal-half-2 (goal >= 1; >= 1.2 on wide, big-array, binary-tree)",
                "crossbeam-2",
                "steal-half-2",
            );
        }
        if has("balance") {
            let mut s = vec![subject("engine-2", engine(2, DequeKind::StealHalf))];
            let r = compare(&view, roots, &mut s, runs).unwrap();
            let e = r.get("engine-2").unwrap();
            println!(
                "  T7 balance: max/mean objects scanned at 2 workers (goal <= 1.2 except list): {:.3}",
                e.balance.unwrap()
            );
            println!(
                "  T8 termination: median latency at 2 workers (goal <= 50 us): {:.1} us",
                e.termination_latency_ns.unwrap() as f64 / 1e3
            );
        }
        if has("detail") {
            let mut m = stealmark_marker::Marker::new(engine(2, DequeKind::StealHalf)).unwrap();
            for _ in 0..3 {
                let st = m.mark(&view, roots).stats;
                println!(
                    "  pause {:.2} ms, balance {:.3}, termination latency {:.1} us",
                    st.pause_ns as f64 / 1e6,
                    st.balance(),
                    st.termination_latency_ns as f64 / 1e3
                );
                for (i, w) in st.workers.iter().enumerate() {
                    let s = &w.stats;
                    println!(
                        "    w{i}: scanned {} stolen {}/{} attempts, items {} parks {} wakeups {} busy {:.2} steal {:.2} idle {:.2} ms, last work {:.2} ms",
                        s.objects_scanned,
                        s.steal_successes,
                        s.steal_attempts,
                        s.items_stolen,
                        s.parks,
                        s.wakeups_sent,
                        s.busy_ns as f64 / 1e6,
                        s.steal_ns as f64 / 1e6,
                        s.idle_ns as f64 / 1e6,
                        s.last_work_ns as f64 / 1e6
                    );
                }
            }
        }
        if is_main && has("variants") {
            let mut s = vec![Subject::sequential(8).named("sequential-pf8")];
            for &d in DequeKind::ALGORITHMS.iter() {
                s.push(subject(&format!("{d}-1"), engine(1, d)));
            }
            let mut c = engine(1, DequeKind::StealHalf);
            c.set_private_work(false);
            s.push(subject("steal-half-1-no-private", c));
            let mut c = engine(1, DequeKind::StealHalf);
            c.set_deque_reserve(0);
            s.push(subject("steal-half-1-reserve-0", c));
            let mut c = engine(1, DequeKind::StealHalf);
            c.set_prefetch(0);
            s.push(subject("steal-half-1-no-prefetch", c));
            s.push(Subject::sequential(0).named("sequential-pf0"));
            all(&compare(&view, roots, &mut s, runs).unwrap());
        }
        if is_main && has("profile") {
            let mut s = vec![
                subject("engine-1", engine(1, DequeKind::StealHalf)),
                Subject::sequential(8).named("sequential-pf8"),
            ];
            all(&compare(&view, roots, &mut s, runs).unwrap());
        }
    }
}
