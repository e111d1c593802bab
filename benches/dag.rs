//! The DAG benchmark of Chase and Lev (SPAA 2005, §5), for every deque at
//! 1, 2 and 4 threads (`STEALMARK_DAG_THREADS`, a comma-separated list such
//! as `1,2,4,8,16`, picks others).
//!
//! One deque starts with a single root node. Workers pop nodes from their own
//! deque and steal when it is empty. Popping a node of depth `d` generates
//! each of up to `B` children with probability `1 - d / D`, so a node has
//! `B * (1 - d / D)` children on average, and pushes them; no other work is
//! done, so the benchmark measures the load-balancing overhead alone. The
//! paper's parameters are `B = 13` (branch) and `D = 10` (depth). Children
//! are derived by hashing the parent, so the DAG (about 1.1e8 nodes) is the
//! same whichever worker expands a node, and every run checks that exactly
//! that many nodes were processed.
//!
//! Steal policy: the paper's single steal for ABP and Chase-Lev; `steal_half`
//! for StealHalf, the locked baseline and crossbeam (`steal_batch` with no
//! cap).
//!
//! `cargo bench --bench dag` runs the criterion group, then an alternating
//! pass (every configuration once per round, `STEALMARK_BENCH_ROUNDS` rounds,
//! default 3) that prints median nodes/s and ratios. `cargo bench --bench dag
//! -- ratios` runs only the alternating pass. `STEALMARK_DAG_DEPTH` overrides
//! `D` for a quick run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use stealmark::deques::abp::Abp;
use stealmark::deques::chase_lev::{ChaseLev, ChaseLevQuiescent};
use stealmark::deques::locked::Locked;
use stealmark::deques::peer::Crossbeam;
use stealmark::deques::steal_half::{StealHalf, StealHalfQuiescent};
use stealmark::deques::{DequeKind, Owner, Steal, Thief, ThiefStats, WorkDeque};

/// The maximum branch `B`.
const BRANCH: u64 = 13;
/// Thread counts when `STEALMARK_DAG_THREADS` does not name others.
const THREADS: [usize; 3] = [1, 2, 4];
/// Initial deque capacity (the paper used 64 for Chase-Lev, 72 for ABP).
const CAPACITY: usize = 64;
/// Capacity of the bounded ABP deques: enough for a depth-first expansion
/// (`B * D` items), so that overflow stays rare.
const ABP_CAPACITY: usize = 256;

/// The thread counts: `STEALMARK_DAG_THREADS` (comma-separated, each at
/// least 1), else [`THREADS`].
fn thread_counts() -> Vec<usize> {
    match std::env::var("STEALMARK_DAG_THREADS") {
        Ok(list) => list
            .split(',')
            .map(|t| match t.trim().parse() {
                Ok(n) if n >= 1 => n,
                _ => panic!("STEALMARK_DAG_THREADS: `{t}` is not a thread count of at least 1"),
            })
            .collect(),
        Err(_) => THREADS.to_vec(),
    }
}

fn depth_limit() -> u64 {
    std::env::var("STEALMARK_DAG_DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// splitmix64.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A node is one word: a 60-bit identity and a 4-bit depth.
fn node(id: u64, depth: u64) -> usize {
    ((id << 4) | depth) as usize
}

/// Calls `f` on each child of `n` in a DAG of depth `limit`. Child `i`
/// exists when 16 bits of a hash of the parent, read as a fraction of 1, are
/// at least `depth / limit`; its identity is `id * B + i + 1`, unique below
/// depth 14.
#[inline]
fn children(n: usize, limit: u64, mut f: impl FnMut(usize)) {
    let (id, depth) = (n as u64 >> 4, n as u64 & 0xf);
    if depth >= limit {
        return;
    }
    let threshold = (depth << 16) / limit;
    let mut bits = 0;
    for i in 0..BRANCH {
        if i % 4 == 0 {
            bits = mix(id ^ (i << 56));
        }
        if bits & 0xffff >= threshold {
            f(node(id * BRANCH + i + 1, depth + 1));
        }
        bits >>= 16;
    }
}

const ROOT: usize = 1 << 4;

/// The number of nodes in the DAG, counted sequentially.
fn count_nodes(limit: u64) -> u64 {
    let mut stack = vec![ROOT];
    let mut count = 0;
    while let Some(n) = stack.pop() {
        count += 1;
        children(n, limit, |c| stack.push(c));
    }
    count
}

#[derive(Clone, Copy)]
enum Policy {
    One,
    Half,
}

/// Expands the DAG on `threads` workers; returns the elapsed time.
fn run<D: WorkDeque>(threads: usize, policy: Policy, limit: u64, expected: u64) -> Duration {
    let capacity = if D::KIND == DequeKind::Abp {
        ABP_CAPACITY
    } else {
        CAPACITY
    };
    let (mut owners, thieves): (Vec<D::Owner>, Vec<D::Thief>) =
        (0..threads).map(|_| D::with_capacity(capacity)).unzip();
    owners[0].push(ROOT).expect("empty deque");
    let processed = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for (k, mut owner) in owners.into_iter().enumerate() {
            let (thieves, processed) = (&thieves, &processed);
            s.spawn(move || {
                let mut local = 0u64;
                // Children that did not fit a bounded deque.
                let mut overflow: Vec<usize> = Vec::new();
                let mut stats = ThiefStats::default();
                let mut rng = mix(k as u64 + 1);
                let mut failures = 0u32;
                loop {
                    while let Some(n) = owner.pop().or_else(|| overflow.pop()) {
                        local += 1;
                        children(n, limit, |c| {
                            if let Err(c) = owner.push(c) {
                                overflow.push(c);
                            }
                        });
                        if local == 4096 {
                            processed.fetch_add(local, Ordering::Relaxed);
                            local = 0;
                        }
                    }
                    processed.fetch_add(local, Ordering::Relaxed);
                    local = 0;
                    if processed.load(Ordering::Relaxed) == expected {
                        break;
                    }
                    if threads == 1 {
                        continue;
                    }
                    rng = mix(rng);
                    let victim = (k + 1 + (rng as usize) % (threads - 1)) % threads;
                    let got = match policy {
                        Policy::One => match thieves[victim].steal(&mut stats) {
                            Steal::Success(n) => {
                                if let Err(n) = owner.push(n) {
                                    overflow.push(n);
                                }
                                true
                            }
                            _ => false,
                        },
                        Policy::Half => thieves[victim]
                            .steal_half(&mut owner, &mut stats)
                            .success()
                            .is_some(),
                    };
                    if got {
                        failures = 0;
                    } else {
                        failures += 1;
                        if failures < 64 {
                            std::hint::spin_loop();
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
            });
        }
    });
    let elapsed = start.elapsed();
    assert_eq!(
        processed.load(Ordering::Relaxed),
        expected,
        "{}: lost or duplicated nodes",
        D::KIND
    );
    elapsed
}

/// One timed expansion: `(threads, depth limit, expected nodes)`.
type RunFn = fn(usize, u64, u64) -> Duration;

/// A named configuration: deque, policy, threads.
struct Config {
    name: String,
    threads: usize,
    run: RunFn,
}

fn configs() -> Vec<Config> {
    fn with<D: WorkDeque>(policy: Policy) -> RunFn {
        match policy {
            Policy::One => |t, l, e| run::<D>(t, Policy::One, l, e),
            Policy::Half => |t, l, e| run::<D>(t, Policy::Half, l, e),
        }
    }
    let kinds: [(&str, RunFn); 7] = [
        ("steal-half (half)", with::<StealHalf>(Policy::Half)),
        ("crossbeam (batch)", with::<Crossbeam>(Policy::Half)),
        ("chase-lev (one)", with::<ChaseLev>(Policy::One)),
        ("abp (one)", with::<Abp>(Policy::One)),
        ("locked (half)", with::<Locked>(Policy::Half)),
        (
            "steal-half-q (half)",
            with::<StealHalfQuiescent>(Policy::Half),
        ),
        ("chase-lev-q (one)", with::<ChaseLevQuiescent>(Policy::One)),
    ];
    thread_counts()
        .into_iter()
        .flat_map(|threads| {
            kinds.iter().map(move |&(name, run)| Config {
                name: name.to_string(),
                threads,
                run,
            })
        })
        .collect()
}

fn criterion_group(c: &mut Criterion, limit: u64, expected: u64) {
    let mut group = c.benchmark_group(format!("dag/b{BRANCH}-d{limit}"));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(100));
    group.measurement_time(Duration::from_secs(5));
    group.throughput(criterion::Throughput::Elements(expected));
    for config in configs() {
        group.bench_function(BenchmarkId::new(&config.name, config.threads), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| (config.run)(config.threads, limit, expected))
                    .sum()
            })
        });
    }
    group.finish();
}

fn ratios(limit: u64, expected: u64) {
    let rounds: usize = std::env::var("STEALMARK_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let configs = configs();
    println!(
        "\n== DAG B={BRANCH} D={limit}: {expected} nodes; alternating pass, {rounds} rounds =="
    );
    let mut samples = vec![Vec::new(); configs.len()];
    for _ in 0..rounds {
        for (config, samples) in configs.iter().zip(&mut samples) {
            let t = (config.run)(config.threads, limit, expected);
            samples.push(expected as f64 / t.as_secs_f64() / 1e6);
        }
    }
    for threads in thread_counts() {
        println!("\n{threads} thread(s): median Mnodes/s (ratio to crossbeam)");
        let rows: Vec<(&str, f64)> = configs
            .iter()
            .zip(&samples)
            .filter(|(c, _)| c.threads == threads)
            .map(|(c, s)| {
                let mut s = s.clone();
                s.sort_by(f64::total_cmp);
                (c.name.as_str(), s[s.len() / 2])
            })
            .collect();
        let base = rows
            .iter()
            .find(|(n, _)| n.starts_with("crossbeam"))
            .map(|r| r.1)
            .expect("crossbeam row");
        for (name, v) in rows {
            println!("  {name:<22} {v:>8.2} Mnodes/s   x{:.3}", v / base);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--test" || a == "--list");
    let ratios_only = args.iter().any(|a| a == "ratios");
    let limit = if quick { 5 } else { depth_limit() };
    let expected = count_nodes(limit);
    if !ratios_only {
        let mut c = Criterion::default().configure_from_args();
        criterion_group(&mut c, limit, expected);
        c.final_summary();
    }
    if !quick {
        ratios(limit, expected);
    }
}
