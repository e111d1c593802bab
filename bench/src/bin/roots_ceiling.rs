//! What this machine can give the root phase of target (a) at all: ten
//! million random roots in a thousand chunks (the `roots` group of
//! `contract_targets`), marked in a side bitmap by hand-written loops with
//! no engine around them, alternated in one process after a warm-up round.
//!
//! ```text
//! cargo run --release -p stealmark-bench --bin roots_ceiling -- [RUNS]
//! ```
//!
//! Subjects (each thread first clears its own part of the bitmap, untimed,
//! as the engine's workers do; "own" roots are those whose mark word lies
//! in the thread's half of the bitmap):
//! - `1t plain`: one thread marks every root with a plain load and store
//!   ([`MarkBitmap::set_unshared`], what one engine worker does);
//! - `1t plain+push`: the same, pushing each newly marked root on a grey
//!   stack that is emptied after each chunk (the engine's trace and drain,
//!   for objects without slots);
//! - `1t atomic`: one thread, atomic marks ([`MarkBitmap::set`]);
//! - `1t half filter`, `1t half compact`: one thread doing what one of the
//!   two threads of `2t filter`, `2t compact` does (its share, alone);
//! - `2t filter`: two threads, each reading every chunk and marking, with a
//!   plain load and store, only its own roots (a branch per root);
//! - `2t compact`: the same, each chunk's own roots first copied to a
//!   buffer without a branch, then marked;
//! - `2t routed`: two threads claiming chunks through a counter, each
//!   marking its own roots at once and copying the others to an outbox
//!   (without a branch); after a barrier each marks its inbox (plain);
//! - `2t parted`: two threads, each reading only its own roots, split by
//!   mark word beforehand (no sharing, no filter: the hardware's bound);
//! - `2t atomic`: two threads claiming chunks through a counter and marking
//!   with atomic read-modify-writes (today's path at 2 workers);
//! - `engine w1`, `engine w2`: the engine's root phase itself.
//!
//! Each subject reports its wall time (from the common start to the last
//! thread's end), the largest CPU time of one of its threads, and how long
//! its threads waited for a CPU (`/proc/.../schedstat`). On a loaded
//! machine the wall time of two threads says little (they rarely run at
//! once); the CPU time says what each would take on a CPU of its own, but
//! misses what running at once costs (shared caches, memory bandwidth,
//! cache lines moving between cores). Runs whose threads waited less than
//! 2% of their wall time are "clean" and reported apart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use stealmark_marker::bench::median_f64;
use stealmark_marker::{Collection, MarkBitmap, Marker, MarkerConfig, ObjRef};

use leaves::Leaves;
use stealmark_bench::leaves;

/// The number of roots (and leaf objects).
const N: usize = 10_000_000;

/// How one thread marks.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// Claims chunks through the shared counter; plain load and store.
    Plain,
    /// The same, pushing newly marked roots on a grey stack.
    PlainPush,
    /// Claims chunks through the shared counter; atomic marks.
    Atomic,
    /// Reads every chunk; marks, plain, the roots whose word is its own.
    Filter,
    /// [`Way::Filter`] without a branch per root: each chunk's own roots
    /// are first copied, branch-free, into a buffer, then marked.
    Compact,
    /// Claims chunks through the shared counter, marks its own roots at
    /// once and appends the others to an outbox for their owner; after a
    /// barrier marks the roots the others sent it. Plain marks.
    Routed,
    /// Reads every chunk of its own source (roots split beforehand); plain.
    Own,
}

/// What a run's threads share.
struct Shared<'a> {
    bitmap: &'a MarkBitmap,
    next: AtomicUsize,
    start: Barrier,
    routed: Barrier,
    outboxes: Vec<Mutex<Vec<ObjRef>>>,
}

/// This thread's CPU time and time spent waiting for a CPU so far, in ns
/// (the first two fields of `/proc/thread-self/schedstat`; zeros where
/// there is none).
fn sched() -> (u64, u64) {
    schedstat("/proc/thread-self/schedstat")
}

/// The first two fields of a `schedstat` file.
fn schedstat(path: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut f = text.split_whitespace().map(|x| x.parse().unwrap_or(0));
    (f.next().unwrap_or(0), f.next().unwrap_or(0))
}

/// The time every thread of this process has spent waiting for a CPU.
fn waited_all() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .map(|t| schedstat(&format!("{}/schedstat", t.path().display())).1)
        .sum()
}

/// One measurement of a subject.
#[derive(Clone, Copy, Default)]
struct Sample {
    /// From the common start to the last thread's end.
    wall: u64,
    /// The largest CPU time of one thread.
    cpu: u64,
    /// The time the threads spent runnable but waiting for a CPU (another
    /// process had it): near zero when the threads really ran at once.
    wait: u64,
}

impl Sample {
    /// Whether the threads waited for a CPU less than 2% of the wall time.
    fn clean(&self) -> bool {
        self.wait * 50 < self.wall
    }
}

/// Thread `t` of `threads`, reading `chunks`: clears its part of the
/// bitmap, waits for the start, marks; returns when it finished, and the
/// CPU time it took.
fn work(
    s: &Shared<'_>,
    chunks: &[Vec<ObjRef>],
    way: Way,
    (t, threads): (usize, usize),
    grey: &mut Vec<ObjRef>,
) -> (Instant, u64, u64) {
    s.bitmap.clear_part(t, threads);
    s.start.wait();
    let (c0, w0) = sched();
    mark_part(s, chunks, way, (t, threads), grey);
    let end = Instant::now();
    let (c1, w1) = sched();
    (end, c1.saturating_sub(c0), w1.saturating_sub(w0))
}

/// [`work`]'s marking.
fn mark_part(
    s: &Shared<'_>,
    chunks: &[Vec<ObjRef>],
    way: Way,
    (t, threads): (usize, usize),
    grey: &mut Vec<ObjRef>,
) {
    let words = s.bitmap.len().div_ceil(64);
    let own = words * t / threads..words * (t + 1) / threads;
    if way == Way::Compact {
        let mut buf: Vec<ObjRef> = Vec::with_capacity(N);
        for chunk in chunks {
            let n = compact(chunk, &own, &mut buf);
            for r in &buf[..n] {
                s.bitmap.set_unshared(r.index());
            }
        }
        return;
    }
    if way == Way::Routed {
        let mut out = std::mem::take(&mut *grey);
        let mut mine: Vec<ObjRef> = Vec::new();
        // Relaxed: as below.
        while let Some(chunk) = chunks.get(s.next.fetch_add(1, Ordering::Relaxed)) {
            let at = out.len();
            out.resize(at + chunk.len(), ObjRef::from_index(0));
            mine.resize(chunk.len().max(mine.len()), ObjRef::from_index(0));
            let (n_own, n_out) = split(chunk, &own, &mut mine, &mut out[at..]);
            out.truncate(at + n_out);
            for r in &mine[..n_own] {
                s.bitmap.set_unshared(r.index());
            }
        }
        *s.outboxes[1 - t].lock().expect("outbox") = out;
        s.routed.wait();
        let inbox = std::mem::take(&mut *s.outboxes[t].lock().expect("outbox"));
        for r in &inbox {
            s.bitmap.set_unshared(r.index());
        }
        *grey = inbox;
        grey.clear();
        return;
    }
    if matches!(way, Way::Filter | Way::Own) {
        for r in chunks.iter().flatten() {
            let i = r.index();
            if way == Way::Own || own.contains(&(i / 64)) {
                s.bitmap.set_unshared(i);
            }
        }
        return;
    }
    // Relaxed: hands out distinct chunk indices; the chunks were published
    // to the threads by their spawn.
    while let Some(chunk) = chunks.get(s.next.fetch_add(1, Ordering::Relaxed)) {
        for r in chunk {
            match way {
                Way::Atomic => {
                    s.bitmap.set(r.index());
                }
                Way::PlainPush => {
                    if s.bitmap.set_unshared(r.index()) {
                        grey.push(*r);
                    }
                }
                _ => {
                    s.bitmap.set_unshared(r.index());
                }
            }
        }
        while let Some(r) = grey.pop() {
            std::hint::black_box(r);
        }
    }
}

/// Runs `way` on one thread per source, thread `t` reading `sources[t]`;
/// returns the time from the common start to the last thread's end and the
/// largest CPU time of a thread (what the wall time would be if every
/// thread had a CPU of its own and nothing shared slowed it), and checks that every root is marked.
fn run(
    bitmap: &MarkBitmap,
    sources: &[&[Vec<ObjRef>]],
    way: Way,
    greys: &mut [Vec<ObjRef>],
) -> Sample {
    run_parts(bitmap, sources, way, greys, sources.len())
}

/// [`run`] with the bitmap in `parts` parts, thread `t` owning part `t`:
/// with fewer threads than parts, the roots of the other parts stay
/// unmarked (one thread's share of a `parts`-thread run).
fn run_parts(
    bitmap: &MarkBitmap,
    sources: &[&[Vec<ObjRef>]],
    way: Way,
    greys: &mut [Vec<ObjRef>],
    parts: usize,
) -> Sample {
    let threads = sources.len();
    for p in threads..parts {
        bitmap.clear_part(p, parts);
    }
    let s = Shared {
        bitmap,
        next: AtomicUsize::new(0),
        start: Barrier::new(threads + 1),
        routed: Barrier::new(threads),
        outboxes: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
    };
    let ns = std::thread::scope(|scope| {
        let handles: Vec<_> = greys
            .iter_mut()
            .zip(sources)
            .enumerate()
            .map(|(t, (grey, &chunks))| {
                let s = &s;
                scope.spawn(move || work(s, chunks, way, (t, parts), grey))
            })
            .collect();
        s.start.wait();
        let t0 = Instant::now();
        let ends: Vec<(Instant, u64, u64)> = handles
            .into_iter()
            .map(|h| h.join().expect("a marking thread panicked"))
            .collect();
        let end = ends.iter().map(|e| e.0).max().expect("a thread");
        Sample {
            wall: end.duration_since(t0).as_nanos() as u64,
            cpu: ends.iter().map(|e| e.1).max().expect("a thread"),
            wait: ends.iter().map(|e| e.2).sum(),
        }
    });
    if threads == parts {
        assert_eq!(bitmap.count(), N as u64, "every root is marked");
    }
    ns
}

/// Copies the roots of `chunk` whose mark words lie in `own` to the front
/// of `buf` without a branch per root; returns how many.
fn compact(chunk: &[ObjRef], own: &std::ops::Range<usize>, buf: &mut Vec<ObjRef>) -> usize {
    buf.resize(chunk.len().max(buf.len()), ObjRef::from_index(0));
    let mut n = 0;
    for r in chunk {
        buf[n] = *r;
        n += usize::from(is_own(*r, own));
    }
    n
}

/// Whether `r`'s mark word lies in `own`, in one compare.
#[inline(always)]
fn is_own(r: ObjRef, own: &std::ops::Range<usize>) -> bool {
    (r.index() / 64).wrapping_sub(own.start) < own.end - own.start
}

/// Splits `chunk` without a branch per root: its roots in `own` to the
/// front of `mine`, the others to the front of `out` (each at least as
/// long as `chunk`); returns how many of each.
fn split(
    chunk: &[ObjRef],
    own: &std::ops::Range<usize>,
    mine: &mut [ObjRef],
    out: &mut [ObjRef],
) -> (usize, usize) {
    let (mut a, mut b) = (0, 0);
    for r in chunk {
        mine[a] = *r;
        out[b] = *r;
        let m = usize::from(is_own(*r, own));
        a += m;
        b += 1 - m;
    }
    (a, b)
}

/// The roots of `chunks` whose mark words lie in part `t` of `threads`,
/// in the same chunks (each about `1 / threads` as long).
fn part_of(chunks: &[Vec<ObjRef>], t: usize, threads: usize) -> Vec<Vec<ObjRef>> {
    let words = N.div_ceil(64);
    let own = words * t / threads..words * (t + 1) / threads;
    chunks
        .iter()
        .map(|c| {
            c.iter()
                .copied()
                .filter(|r| own.contains(&(r.index() / 64)))
                .collect()
        })
        .collect()
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(9, |a| a.parse().expect("RUNS is a number"));
    let mut order: Vec<usize> = (0..N).collect();
    order.shuffle(&mut Pcg64::seed_from_u64(7));
    let chunks: Vec<Vec<ObjRef>> = order
        .chunks(N / 1000)
        .map(|c| c.iter().map(|&i| ObjRef::from_index(i)).collect())
        .collect();
    let parts = [part_of(&chunks, 0, 2), part_of(&chunks, 1, 2)];
    let bitmap = MarkBitmap::new(N);
    let heap = Leaves(N);
    let (mut m1, mut m2) = (marker(1), marker(2));
    let mut greys = vec![Vec::new(), Vec::new()];
    let all: &[Vec<ObjRef>] = &chunks;
    let names = [
        "1t plain",
        "1t plain+push",
        "1t atomic",
        "1t half filter",
        "1t half compact",
        "2t filter",
        "2t compact",
        "2t routed",
        "2t parted",
        "2t atomic",
        "engine w1",
        "engine w2",
    ];
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); names.len()];
    println!(
        "roots-ceiling: {N} random roots in {} chunks, {runs} runs",
        chunks.len()
    );
    for round in 0..=runs {
        let engine = |m: &mut Marker| {
            let w0 = waited_all();
            let st = m.collect(&heap, &Collection::new(all)).stats;
            let wait = waited_all().saturating_sub(w0);
            assert_eq!(st.live_objects, N as u64);
            let ns = st.root_phase_ns();
            // The engine's workers' CPU time is not measured (0: n/a).
            Sample {
                wall: ns,
                cpu: 0,
                wait,
            }
        };
        let x = [
            run(&bitmap, &[all], Way::Plain, &mut greys[..1]),
            run(&bitmap, &[all], Way::PlainPush, &mut greys[..1]),
            run(&bitmap, &[all], Way::Atomic, &mut greys[..1]),
            run_parts(&bitmap, &[all], Way::Filter, &mut greys[..1], 2),
            run_parts(&bitmap, &[all], Way::Compact, &mut greys[..1], 2),
            run(&bitmap, &[all, all], Way::Filter, &mut greys),
            run(&bitmap, &[all, all], Way::Compact, &mut greys),
            run(&bitmap, &[all, all], Way::Routed, &mut greys),
            run(&bitmap, &[&parts[0], &parts[1]], Way::Own, &mut greys),
            run(&bitmap, &[all, all], Way::Atomic, &mut greys),
            engine(&mut m1),
            engine(&mut m2),
        ];
        if round > 0 {
            for (v, x) in samples.iter_mut().zip(x) {
                v.push(x);
            }
        }
    }
    let ms = |v: Vec<f64>| median_f64(v) / 1e6;
    println!("  subject           wall ms: median (min-max)  | largest thread CPU ms | clean runs: n, wall median ms");
    for (name, v) in names.iter().zip(&samples) {
        let walls: Vec<f64> = v.iter().map(|x| x.wall as f64).collect();
        let (lo, hi) = walls
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        let clean: Vec<f64> = v
            .iter()
            .filter(|x| x.clean())
            .map(|x| x.wall as f64)
            .collect();
        let cpu = ms(v.iter().map(|x| x.cpu as f64).collect());
        let cpu = if cpu > 0.0 {
            format!("{cpu:8.2}")
        } else {
            "     n/a".to_string()
        };
        println!(
            "  {name:<16} {:8.2} ({:.2}-{:.2}) | {cpu} | {:3}, {:8.2}",
            ms(walls.clone()),
            lo / 1e6,
            hi / 1e6,
            clean.len(),
            ms(clean),
        );
    }
    let paired = |a: usize, b: usize, f: &dyn Fn(&Sample) -> u64, only_clean: bool| {
        let r: Vec<f64> = samples[a]
            .iter()
            .zip(&samples[b])
            .filter(|(x, y)| !only_clean || (x.clean() && y.clean()))
            .map(|(x, y)| f(x) as f64 / f(y).max(1) as f64)
            .collect();
        (r.len(), median_f64(r))
    };
    println!("  paired ratios (medians): wall | CPU | wall over runs where both are clean (n)");
    for (a, b) in [
        (0, 3),
        (0, 4),
        (0, 5),
        (0, 6),
        (0, 7),
        (0, 8),
        (0, 9),
        (1, 6),
        (1, 7),
        (1, 8),
        (2, 9),
        (10, 11),
    ] {
        let wall = paired(a, b, &|x| x.wall, false).1;
        let cpu = paired(a, b, &|x| x.cpu, false).1;
        let (n, clean) = paired(a, b, &|x| x.wall, true);
        let cpu = if cpu > 0.0 {
            format!("{cpu:.3}")
        } else {
            "n/a".to_string()
        };
        println!(
            "  {} / {}: {wall:.3} | {cpu} | {clean:.3} ({n})",
            names[a], names[b]
        );
    }
}

fn marker(workers: usize) -> Marker {
    Marker::new(MarkerConfig::with_workers(workers)).expect("valid configuration")
}
