//! Deque micro-benchmarks: owner push+pop, steal cost per item moved, and
//! CAS per stolen item, for every deque kind against crossbeam-deque.
//!
//! `cargo bench --bench deques` runs the criterion groups, then an
//! alternating pass that times every configuration once per round, round
//! after round, and prints medians and ratios. `cargo bench --bench deques -- ratios` runs only
//! the alternating pass; `STEALMARK_BENCH_ROUNDS` sets its rounds (default 15).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use crossbeam_deque::Worker;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark::deques::abp::Abp;
use stealmark::deques::chase_lev::{ChaseLev, ChaseLevQuiescent};
use stealmark::deques::locked::Locked;
use stealmark::deques::peer::Crossbeam;
use stealmark::deques::steal_half::{StealHalf, StealHalfQuiescent};
use stealmark::deques::{Owner, Thief, ThiefStats, WorkDeque};

/// Items pushed then popped per burst (from an empty deque).
const BURST: usize = 256;
/// Items kept in the deque for the steady pattern.
const STEADY_FILL: usize = 1000;
/// Items in the victim for the steal benchmarks.
const VICTIM: usize = 4096;

// ---------------------------------------------------------------------------
// Owner push + pop.

/// One burst: `BURST` pushes then `BURST` pops, from and back to empty (the
/// length crosses every power of two up to 256 both ways).
fn burst<O: Owner>(owner: &mut O) {
    for i in 0..BURST {
        let _ = owner.push(black_box(i));
    }
    for _ in 0..BURST {
        black_box(owner.pop());
    }
}

/// `BURST` alternating push/pop pairs on a deque holding `STEADY_FILL` items.
fn steady<O: Owner>(owner: &mut O) {
    for i in 0..BURST {
        let _ = owner.push(black_box(i));
        black_box(owner.pop());
    }
}

fn burst_crossbeam(w: &Worker<usize>) {
    for i in 0..BURST {
        w.push(black_box(i));
    }
    for _ in 0..BURST {
        black_box(w.pop());
    }
}

fn steady_crossbeam(w: &Worker<usize>) {
    for i in 0..BURST {
        w.push(black_box(i));
        black_box(w.pop());
    }
}

/// Times `iters` runs of `f` on `owner`; ns per push or pop.
fn time_owner<O: Owner>(owner: &mut O, iters: u64, f: fn(&mut O)) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f(owner);
    }
    start.elapsed()
}

fn filled<D: WorkDeque>() -> (D::Owner, D::Thief) {
    let (mut owner, thief) = D::with_capacity(2 * STEADY_FILL);
    for i in 0..STEADY_FILL {
        let _ = owner.push(i);
    }
    (owner, thief)
}

fn crossbeam_filled() -> Worker<usize> {
    let w = Worker::new_lifo();
    (0..STEADY_FILL).for_each(|i| w.push(i));
    w
}

fn owner_bench<D: WorkDeque>(c: &mut Criterion) {
    let mut group = c.benchmark_group("owner_push_pop");
    group.throughput(Throughput::Elements(2 * BURST as u64));
    let (mut owner, _thief) = D::with_capacity(2 * BURST);
    group.bench_function(BenchmarkId::new("burst", D::KIND), |b| {
        b.iter_custom(|iters| time_owner(&mut owner, iters, burst))
    });
    let (mut owner, _thief) = filled::<D>();
    group.bench_function(BenchmarkId::new("steady", D::KIND), |b| {
        b.iter_custom(|iters| time_owner(&mut owner, iters, steady))
    });
    group.finish();
}

fn owner_benches(c: &mut Criterion) {
    owner_bench::<StealHalf>(c);
    owner_bench::<ChaseLev>(c);
    owner_bench::<Abp>(c);
    owner_bench::<Locked>(c);
    owner_bench::<Crossbeam>(c);
    let mut group = c.benchmark_group("owner_push_pop");
    group.throughput(Throughput::Elements(2 * BURST as u64));
    let w = Worker::new_lifo();
    group.bench_function(BenchmarkId::new("burst", "crossbeam-lifo-raw"), |b| {
        b.iter(|| burst_crossbeam(&w))
    });
    let w = crossbeam_filled();
    group.bench_function(BenchmarkId::new("steady", "crossbeam-lifo-raw"), |b| {
        b.iter(|| steady_crossbeam(&w))
    });
    group.finish();
}

// ---------------------------------------------------------------------------
// Steals: drain a victim of `VICTIM` items, ns per item moved.

/// How a thief drains the victim.
#[derive(Clone, Copy)]
enum Drain {
    One,
    Half,
}

/// Fills a victim, then drains it from the thief side; returns the time and
/// the thief's counters. The destination is pre-sized, so no growth is timed.
fn drain<D: WorkDeque>(mode: Drain) -> (Duration, ThiefStats) {
    let (mut victim, thief) = D::with_capacity(VICTIM);
    for i in 0..VICTIM {
        let _ = victim.push(i);
    }
    let (mut dest, _) = D::with_capacity(VICTIM);
    let mut stats = ThiefStats::default();
    let start = Instant::now();
    match mode {
        Drain::One => while thief.steal(&mut stats).success().map(black_box).is_some() {},
        Drain::Half => while thief.steal_half(&mut dest, &mut stats).success().is_some() {},
    }
    let elapsed = start.elapsed();
    assert_eq!(
        stats.items_stolen,
        VICTIM as u64,
        "{} did not drain",
        D::KIND
    );
    (elapsed, stats)
}

/// crossbeam's own `steal_batch` (its default batch limit) from a LIFO or
/// FIFO worker into a worker of the same flavour; `batch == false` steals one
/// at a time.
fn drain_crossbeam(lifo: bool, batch: bool) -> Duration {
    let new = || {
        if lifo {
            Worker::new_lifo()
        } else {
            Worker::new_fifo()
        }
    };
    let victim = new();
    (0..VICTIM).for_each(|i| victim.push(i));
    let dest = new();
    dest.push(0);
    let _ = dest.pop(); // dest's buffer is allocated before timing
    let stealer = victim.stealer();
    let start = Instant::now();
    if batch {
        while !stealer.steal_batch(&dest).is_empty() {}
    } else {
        while let crossbeam_deque::Steal::Success(item) = stealer.steal() {
            black_box(item);
        }
    }
    let elapsed = start.elapsed();
    assert!(victim.is_empty());
    elapsed
}

fn steal_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("steal_per_item");
    group.throughput(Throughput::Elements(VICTIM as u64));
    fn add<D: WorkDeque>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        mode: Drain,
    ) {
        let label = match mode {
            Drain::One => "steal-one",
            Drain::Half => "steal-half",
        };
        group.bench_function(BenchmarkId::new(label, D::KIND), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| drain::<D>(mode).0).sum())
        });
    }
    add::<StealHalf>(&mut group, Drain::One);
    add::<StealHalf>(&mut group, Drain::Half);
    add::<ChaseLev>(&mut group, Drain::One);
    add::<ChaseLev>(&mut group, Drain::Half);
    add::<Abp>(&mut group, Drain::One);
    add::<Crossbeam>(&mut group, Drain::Half);
    for (lifo, flavour) in [(true, "lifo"), (false, "fifo")] {
        group.bench_function(BenchmarkId::new("crossbeam-steal-one", flavour), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| drain_crossbeam(lifo, false)).sum())
        });
        group.bench_function(BenchmarkId::new("crossbeam-steal_batch", flavour), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| drain_crossbeam(lifo, true)).sum())
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------
// The alternating pass.

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A named measurement returning ns per operation or per item.
struct Config {
    name: &'static str,
    run: Box<dyn FnMut() -> f64>,
}

/// A heap allocation of a size that changes every call, made before a
/// deque is created so that its arrays and index words land at different
/// addresses from round to round: one unlucky placement (4 KiB aliasing
/// between a slot and an index word costs some configurations 2-4x in the
/// steady pattern) then moves the median of no configuration.
fn placement_pad() -> Vec<u64> {
    static ROUND: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let round = ROUND.fetch_add(1, Ordering::Relaxed);
    let mut pad = Vec::with_capacity(8 + (round * 389) % 1024);
    pad.push(round as u64);
    pad
}

/// Owner push+pop: a fresh deque each round, at a varying address (see
/// `placement_pad`), filled outside the timing.
fn owner_config<D: WorkDeque>(name: &'static str, steady_pattern: bool) -> Config {
    let iters = 2000;
    Config {
        name,
        run: Box::new(move || {
            let _pad = placement_pad();
            let (mut owner, _thief) = if steady_pattern {
                filled::<D>()
            } else {
                D::with_capacity(2 * BURST)
            };
            let f: fn(&mut D::Owner) = if steady_pattern { steady } else { burst };
            f(&mut owner); // warm the array
            time_owner(&mut owner, iters, f).as_nanos() as f64 / (iters as f64 * 2.0 * BURST as f64)
        }),
    }
}

fn crossbeam_owner_config(name: &'static str, steady_pattern: bool) -> Config {
    let iters = 2000;
    Config {
        name,
        run: Box::new(move || {
            let _pad = placement_pad();
            let w = if steady_pattern {
                crossbeam_filled()
            } else {
                Worker::new_lifo()
            };
            let f = if steady_pattern {
                steady_crossbeam
            } else {
                burst_crossbeam
            };
            f(&w);
            let start = Instant::now();
            for _ in 0..iters {
                f(&w);
            }
            start.elapsed().as_nanos() as f64 / (iters as f64 * 2.0 * BURST as f64)
        }),
    }
}

fn drain_config<D: WorkDeque>(name: &'static str, mode: Drain) -> Config {
    Config {
        name,
        run: Box::new(move || {
            let reps = 20;
            let total: Duration = (0..reps).map(|_| drain::<D>(mode).0).sum();
            total.as_nanos() as f64 / (reps as f64 * VICTIM as f64)
        }),
    }
}

fn crossbeam_drain_config(name: &'static str, lifo: bool, batch: bool) -> Config {
    Config {
        name,
        run: Box::new(move || {
            let reps = 20;
            let total: Duration = (0..reps).map(|_| drain_crossbeam(lifo, batch)).sum();
            total.as_nanos() as f64 / (reps as f64 * VICTIM as f64)
        }),
    }
}

/// Runs every config once per round, `rounds` times, and returns medians.
fn alternate(configs: &mut [Config], rounds: usize) -> Vec<(&'static str, f64)> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    for _ in 0..rounds {
        for (config, samples) in configs.iter_mut().zip(&mut samples) {
            samples.push((config.run)());
        }
    }
    configs
        .iter()
        .zip(samples)
        .map(|(c, s)| (c.name, median(s)))
        .collect()
}

fn print_table(title: &str, results: &[(&'static str, f64)], baseline: &str, unit: &str) {
    let base = results
        .iter()
        .find(|(n, _)| *n == baseline)
        .map(|r| r.1)
        .expect("baseline in results");
    println!("\n{title} (median {unit}; ratio to {baseline})");
    for (name, v) in results {
        println!("  {name:<34} {v:>8.2} {unit}   x{:.3}", v / base);
    }
}

/// An owner pushing and popping (random walk around a few hundred items)
/// while one thief steals half into its own deque and drains it, for
/// `duration`. Returns the thief's and the owner's counters.
fn contended<D: WorkDeque>(duration: Duration) -> (ThiefStats, u64, u64) {
    let (mut owner, thief) = D::with_capacity(64);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let stealer = s.spawn(|| {
            let (mut mine, _) = D::with_capacity(64);
            let mut stats = ThiefStats::default();
            while !stop.load(Ordering::Relaxed) {
                if thief.steal_half(&mut mine, &mut stats).success().is_none() {
                    std::hint::spin_loop();
                }
                while mine.pop().is_some() {}
            }
            stats
        });
        let mut rng = Pcg64::seed_from_u64(7);
        let start = Instant::now();
        let mut ops = 0u64;
        while start.elapsed() < duration {
            for _ in 0..1024 {
                if owner.len() < 64 || rng.random_bool(0.5) {
                    let _ = owner.push(ops as usize);
                } else {
                    black_box(owner.pop());
                }
                ops += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let stats = stealer.join().expect("thief");
        (stats, owner.stats().cas_attempted, ops)
    })
}

fn ratios() {
    let rounds: usize = std::env::var("STEALMARK_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    println!("\n== alternating pass: {rounds} rounds, every configuration once per round ==");

    for steady_pattern in [false, true] {
        let mut configs = vec![
            owner_config::<StealHalf>("steal-half", steady_pattern),
            crossbeam_owner_config("crossbeam LIFO worker (raw)", steady_pattern),
            owner_config::<ChaseLev>("chase-lev", steady_pattern),
            owner_config::<StealHalfQuiescent>("steal-half-q", steady_pattern),
            owner_config::<ChaseLevQuiescent>("chase-lev-q", steady_pattern),
            owner_config::<Abp>("abp", steady_pattern),
            owner_config::<Locked>("locked", steady_pattern),
            owner_config::<Crossbeam>("crossbeam (adapter)", steady_pattern),
        ];
        let title = if steady_pattern {
            "owner push+pop, steady (1000 items, push/pop pairs)"
        } else {
            "owner push+pop, burst (256 pushes then 256 pops from empty)"
        };
        let results = alternate(&mut configs, rounds);
        print_table(title, &results, "crossbeam LIFO worker (raw)", "ns/op");
    }

    let mut configs = vec![
        drain_config::<StealHalf>("steal-half: steal_half", Drain::Half),
        crossbeam_drain_config("crossbeam LIFO: steal_batch", true, true),
        crossbeam_drain_config("crossbeam FIFO: steal_batch", false, true),
        drain_config::<StealHalfQuiescent>("steal-half-q: steal_half", Drain::Half),
        drain_config::<StealHalf>("steal-half: steal", Drain::One),
        drain_config::<ChaseLev>("chase-lev: steal", Drain::One),
        drain_config::<ChaseLevQuiescent>("chase-lev-q: steal", Drain::One),
        drain_config::<ChaseLev>("chase-lev: steal_batch (half)", Drain::Half),
        drain_config::<Abp>("abp: steal", Drain::One),
        drain_config::<Locked>("locked: steal_half", Drain::Half),
        crossbeam_drain_config("crossbeam LIFO: steal", true, false),
        crossbeam_drain_config("crossbeam FIFO: steal", false, false),
    ];
    let results = alternate(&mut configs, rounds);
    print_table(
        "steal, draining a victim of 4096 items",
        &results,
        "crossbeam LIFO: steal_batch",
        "ns/item",
    );

    println!("\nCAS per stolen item, draining a victim of 4096 items (thief counters)");
    fn cas_line<D: WorkDeque>(label: &str, mode: Drain) {
        let (_, s) = drain::<D>(mode);
        println!(
            "  {label:<34} steals {:>5}  items/steal {:>7.1}  CAS/item {:.4}  CAS/successful steal {:.3}",
            s.steal_successes,
            s.items_stolen as f64 / s.steal_successes as f64,
            s.cas_attempted as f64 / s.items_stolen as f64,
            s.cas_attempted as f64 / s.steal_successes as f64,
        );
    }
    cas_line::<StealHalf>("steal-half: steal_half", Drain::Half);
    cas_line::<StealHalf>("steal-half: steal", Drain::One);
    cas_line::<ChaseLev>("chase-lev: steal_batch (half)", Drain::Half);
    cas_line::<Abp>("abp: steal_half (loop)", Drain::Half);
    cas_line::<Crossbeam>("crossbeam LIFO: steal_batch (all)", Drain::Half);
    println!(
        "  crossbeam FIFO: steal_batch          1 CAS per batch of up to 32 (by construction)"
    );

    println!("\nCAS under contention: owner random walk + one thief stealing half, 300 ms each");
    fn contended_line<D: WorkDeque>() {
        let (s, owner_cas, ops) = contended::<D>(Duration::from_millis(300));
        println!(
            "  {:<12} steals {:>7}  items/steal {:>6.1}  thief CAS/successful steal {:.3} (succeeded {:.3})  CAS/item {:.3}  owner CAS/op {:.4}",
            D::KIND,
            s.steal_successes,
            s.items_stolen as f64 / s.steal_successes.max(1) as f64,
            s.cas_attempted as f64 / s.steal_successes.max(1) as f64,
            s.cas_succeeded as f64 / s.steal_successes.max(1) as f64,
            s.cas_attempted as f64 / s.items_stolen.max(1) as f64,
            owner_cas as f64 / ops as f64,
        );
    }
    contended_line::<StealHalf>();
    contended_line::<ChaseLev>();
    contended_line::<Abp>();
    contended_line::<Crossbeam>();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--test" || a == "--list");
    let ratios_only = args.iter().any(|a| a == "ratios");
    if !ratios_only {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20)
            .configure_from_args();
        owner_benches(&mut c);
        steal_benches(&mut c);
        c.final_summary();
    }
    if !quick {
        ratios();
    }
}
