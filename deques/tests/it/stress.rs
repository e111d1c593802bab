//! Exactly-once stress tests: the owner pushes and pops at random while 1 to
//! 7 thieves steal one item or half, on more threads than this machine has
//! cores. Every item must come out exactly once: none lost, none duplicated.
//! The idempotent deque must give every item at least once and invent none;
//! its test counts the duplicates (`--nocapture` prints the rate).
//!
//! Every kind must also *count* each item exactly once, as a marker counts
//! live objects: every thread pops with tickets, holds the 16 newest (a
//! prefetch FIFO: each horizon flags their tickets) and settles the older
//! ones in batches of 32 against its deque's horizon
//! (`stealmark_deques::copies`); an item whose ticket may share, or that a
//! single steal took, is counted only through a claim (the first claim of
//! an item wins), every other directly.
//!
//! The default run takes 6 seeds per thief count. For longer runs:
//!
//! ```text
//! STEALMARK_STRESS_SEEDS=200 STEALMARK_STRESS_THIEVES=15 \
//!     cargo test -p stealmark-deques --release --test it -- stress::
//! ```
//!
//! `STEALMARK_STRESS_SEEDS=N` runs seeds `0..N` and `=A..B` runs seeds
//! `A..B` (per thief count); `STEALMARK_STRESS_THIEVES=N` runs 1 to `N`
//! thieves. A failure names its seed and thief count.
#![cfg(not(loom))]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_deques::abp::Abp;
use stealmark_deques::chase_lev::{ChaseLev, ChaseLevQuiescent};
use stealmark_deques::copies::Ticket;
use stealmark_deques::idempotent::Idempotent;
use stealmark_deques::locked::Locked;
use stealmark_deques::peer::Crossbeam;
use stealmark_deques::steal_half::{StealHalf, StealHalfQuiescent};
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

/// Items per run, and the default seeds per thief count and most thieves
/// (see the module docs for the overrides), reduced under Miri.
const ITEMS: usize = if cfg!(miri) { 200 } else { 30_000 };
const SEEDS: u64 = if cfg!(miri) { 1 } else { 6 };
const MAX_THIEVES: usize = if cfg!(miri) { 2 } else { 7 };

/// Reads `name`, parsed by `parse`; `default` if unset. Panics on a value
/// that does not parse, so that a typo does not silently run the defaults.
fn env_or<T>(name: &str, default: T, parse: impl FnOnce(&str) -> Option<T>) -> T {
    match std::env::var(name) {
        Ok(value) => parse(value.trim())
            .unwrap_or_else(|| panic!("{name}={value:?}: expected a number or a range A..B")),
        Err(_) => default,
    }
}

/// The seeds to run per thief count: `STEALMARK_STRESS_SEEDS` (`N` or
/// `A..B`), else `0..SEEDS`.
fn seeds() -> std::ops::Range<u64> {
    env_or("STEALMARK_STRESS_SEEDS", 0..SEEDS, |v| {
        match v.split_once("..") {
            Some((a, b)) => Some(a.parse().ok()?..b.parse().ok()?),
            None => Some(0..v.parse().ok()?),
        }
    })
}

/// The most thieves: `STEALMARK_STRESS_THIEVES`, else `MAX_THIEVES`.
fn max_thieves() -> usize {
    env_or("STEALMARK_STRESS_THIEVES", MAX_THIEVES, |v| v.parse().ok())
}

/// Popped items settled together against their deque's horizon, as a
/// marker's batch of scanned objects waits for its count.
const SETTLE_BATCH: usize = 32;

/// Popped items held before they join the batch, as a marker's prefetch
/// FIFO holds objects popped and not yet scanned.
const HELD: usize = 16;

/// What one thread took: each item, with whether it is counted only through
/// a claim (`true`) or directly.
type Taken = Vec<(usize, bool)>;

/// Popped items on their way to the count, as in a marker: the newest
/// [`HELD`] wait, in pop order, and the older ones fill a batch that is
/// settled every [`SETTLE_BATCH`] items against the deque's horizon (one
/// fence). A horizon judges every ticket not yet settled: the batch's
/// at once, the held ones' by
/// [`Horizon::flag`](stealmark_deques::copies::Horizon::flag), kept in the
/// ticket.
#[derive(Default)]
struct Counter {
    held: VecDeque<(usize, Ticket)>,
    batch: Vec<(usize, Ticket)>,
}

impl Counter {
    /// Pops from `owner` into the held items, settling a full batch;
    /// `None` when the deque looked empty.
    fn pop<O: Owner>(&mut self, owner: &mut O, out: &mut Taken) -> Option<()> {
        self.held.push_back(owner.pop_ticketed()?);
        if self.held.len() > HELD {
            self.batch.extend(self.held.pop_front());
            if self.batch.len() == SETTLE_BATCH {
                self.settle_batch(owner, out);
            }
        }
        Some(())
    }

    /// Takes `owner`'s horizon, flags the held tickets with it and settles
    /// the batch into `out`.
    fn settle_batch<O: Owner>(&mut self, owner: &mut O, out: &mut Taken) {
        let horizon = owner.horizon();
        for (_, ticket) in &mut self.held {
            *ticket = horizon.flag(*ticket);
        }
        out.extend(
            self.batch
                .drain(..)
                .map(|(item, t)| (item, horizon.may_share(t))),
        );
    }

    /// Settles everything, the held items too.
    fn settle_all<O: Owner>(&mut self, owner: &mut O, out: &mut Taken) {
        self.batch.extend(self.held.drain(..));
        self.settle_batch(owner, out);
    }
}

/// How each item came out of one run: `extractions[i]` times in all, and
/// `counted[i]` times counted (its direct counts, plus one if any claim of
/// it was made), for item `i + 1`.
struct Outcome {
    extractions: Vec<u32>,
    counted: Vec<u32>,
}

/// One run: returns how many times each item came out (index `i` for item
/// `i + 1`: items start at 1, so that a slot read before it was ever written,
/// which holds 0, shows up as an invented item; so does anything above
/// `ITEMS`).
///
/// Each thief has its own deque of the same kind, which `steal_half` fills
/// and which the other thieves also steal from, so that batch steals into a
/// deque race with steals out of it.
///
/// With `before_wrap`, every deque is made by `with_capacity_near_wrap`, so
/// that its indices and tags wrap early in the run.
fn run<D: WorkDeque>(
    seed: u64,
    thieves: usize,
    half: bool,
    capacity: usize,
    before_wrap: Option<usize>,
) -> Outcome {
    let make = || match before_wrap {
        Some(n) => D::with_capacity_near_wrap(capacity, n),
        None => D::with_capacity(capacity),
    };
    let (mut owner, victim) = make();
    let (own_deques, peers): (Vec<D::Owner>, Vec<D::Thief>) = (0..thieves).map(|_| make()).unzip();
    let done = AtomicBool::new(false);
    let start = Barrier::new(thieves + 1);
    let mut outputs: Vec<Taken> = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = own_deques
            .into_iter()
            .enumerate()
            .map(|(k, mut mine)| {
                let (victim, peers) = (victim.clone(), peers.clone());
                let (done, start) = (&done, &start);
                s.spawn(move || {
                    let mut stats = ThiefStats::default();
                    let mut got = Taken::new();
                    let mut counter = Counter::default();
                    let mut rng = Pcg64::seed_from_u64(seed ^ ((k as u64 + 1) << 32));
                    start.wait();
                    loop {
                        // Read the flag before stealing: once it is set, the
                        // owner has drained its deque, so an empty steal
                        // from it after that means nothing is left there.
                        let finished = done.load(Ordering::Acquire);
                        let from_peer = !finished && thieves > 1 && rng.random_bool(0.25);
                        let target = if from_peer {
                            &peers[rng.random_range(0..thieves)]
                        } else {
                            &victim
                        };
                        let result = if half && rng.random_bool(0.5) {
                            target.steal_half(&mut mine, &mut stats)
                        } else {
                            match target.steal(&mut stats) {
                                Steal::Success(item) => {
                                    // A copy of it may come out of the
                                    // victim too: counted through a claim.
                                    got.push((item, true));
                                    Steal::Success(1)
                                }
                                other => other,
                            }
                        };
                        // Keep some items around for the other thieves,
                        // unless it is time to finish.
                        let keep = if finished { 0 } else { rng.random_range(0..16) };
                        while mine.len() > keep {
                            if counter.pop(&mut mine, &mut got).is_none() {
                                break;
                            }
                        }
                        counter.settle_batch(&mut mine, &mut got);
                        match result {
                            Steal::Empty if finished && mine.is_empty() => break,
                            Steal::Success(_) => {}
                            _ => std::thread::yield_now(),
                        }
                    }
                    counter.settle_all(&mut mine, &mut got);
                    if std::env::var_os("STRESS_VERBOSE").is_some() {
                        eprintln!("{} thief {k}: {stats:?}", D::KIND);
                    }
                    got
                })
            })
            .collect();
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut got = Taken::new();
        let mut counter = Counter::default();
        start.wait();
        let mut next = 0;
        let mut push_bias = 0.5;
        for op in 0usize.. {
            if next == ITEMS {
                break;
            }
            if op % 128 == 0 {
                // Change phase: shrink, hover or grow, so the length crosses
                // power-of-two (and growth/shrink) boundaries in both
                // directions and often empties; let the thieves run.
                push_bias = [0.3, 0.5, 0.7][rng.random_range(0..3)];
                std::thread::yield_now();
            }
            if rng.random_bool(push_bias) {
                if let Err(item) = owner.push(next + 1) {
                    got.push((item, false)); // a full bounded deque: consume it here
                }
                next += 1;
            } else {
                counter.pop(&mut owner, &mut got);
            }
        }
        while counter.pop(&mut owner, &mut got).is_some() {}
        counter.settle_all(&mut owner, &mut got);
        // The owner may see an empty deque while a thief has claimed the
        // last items; those come out through the thief.
        done.store(true, Ordering::Release);
        outputs.push(got);
        outputs.extend(handles.into_iter().map(|h| h.join().unwrap()));
    });
    let mut extractions = vec![0u32; ITEMS];
    let mut counted = vec![0u32; ITEMS];
    let mut claimed = vec![false; ITEMS];
    for (item, claim) in outputs.into_iter().flatten() {
        assert!(
            (1..=ITEMS).contains(&item),
            "{}: invented item {item} (seed {seed}, {thieves} thieves, half {half})",
            D::KIND
        );
        extractions[item - 1] += 1;
        if !claim {
            counted[item - 1] += 1;
        } else if !claimed[item - 1] {
            claimed[item - 1] = true;
            counted[item - 1] += 1;
        }
    }
    Outcome {
        extractions,
        counted,
    }
}

/// What names a run in a failure: its seed, thief count and steal mode.
#[derive(Clone, Copy)]
struct RunId {
    seed: u64,
    thieves: usize,
    half: bool,
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let RunId {
            seed,
            thieves,
            half,
        } = self;
        write!(f, "seed {seed}, {thieves} thieves, half {half}")
    }
}

/// Runs `run::<D>` for every thief count (1 to `max_thieves()`), seed and
/// steal mode (single, or single and half), checks that each run counted
/// every item exactly once, and hands each run's extractions to `check`.
fn each_run<D: WorkDeque>(
    capacity: usize,
    before_wrap: Option<usize>,
    mut check: impl FnMut(RunId, &[u32]),
) {
    for thieves in 1..=max_thieves() {
        for seed in seeds() {
            for half in [false, true] {
                let outcome = run::<D>(
                    seed * 101 + thieves as u64,
                    thieves,
                    half,
                    capacity,
                    before_wrap,
                );
                let id = RunId {
                    seed,
                    thieves,
                    half,
                };
                if let Some((i, &n)) = outcome.counted.iter().enumerate().find(|(_, &n)| n != 1) {
                    panic!("{}: item {} was counted {n} times ({id})", D::KIND, i + 1);
                }
                check(id, &outcome.extractions);
            }
        }
    }
}

fn exactly_once<D: WorkDeque>(capacity: usize) {
    exactly_once_from::<D>(capacity, None);
}

/// `exactly_once` on deques whose indices and tags start `before_wrap`
/// steps before they wrap.
fn exactly_once_from<D: WorkDeque>(capacity: usize, before_wrap: Option<usize>) {
    each_run::<D>(capacity, before_wrap, |id, counts| {
        if let Some((i, &n)) = counts.iter().enumerate().find(|(_, &n)| n != 1) {
            panic!("{}: item {} came out {n} times ({id})", D::KIND, i + 1);
        }
    });
}

/// At least once: every item comes out, none is invented (checked by
/// `run`); returns the duplicates (extractions beyond the first) and the
/// items, summed over the runs.
fn at_least_once<D: WorkDeque>(capacity: usize, before_wrap: Option<usize>) -> (u64, u64) {
    // Duplicates by thief count.
    let mut rows = vec![0u64; max_thieves() + 1];
    let mut items = 0;
    each_run::<D>(capacity, before_wrap, |id, counts| {
        if let Some(i) = counts.iter().position(|&n| n == 0) {
            panic!("{}: item {} was lost ({id})", D::KIND, i + 1);
        }
        rows[id.thieves] += counts.iter().map(|&n| u64::from(n - 1)).sum::<u64>();
        items += counts.len() as u64;
    });
    for (thieves, row) in rows.iter().enumerate().skip(1) {
        eprintln!("{}: {thieves} thieves: {row} duplicates", D::KIND);
    }
    let duplicates = rows.iter().sum::<u64>();
    eprintln!(
        "{}: {duplicates} duplicates in {items} items ({:.4}%)",
        D::KIND,
        100.0 * duplicates as f64 / items as f64
    );
    (duplicates, items)
}

#[test]
fn idempotent_at_least_once() {
    at_least_once::<Idempotent>(2, None);
}

#[test]
#[cfg_attr(miri, ignore = "the same code paths as the run above, other numbers")]
fn idempotent_at_least_once_across_wraps() {
    at_least_once::<Idempotent>(2, Some(if cfg!(miri) { 20 } else { 500 }));
}

/// One `#[test]` a kind, with its attributes: `exactly_once::<Kind>` at the
/// given initial capacity.
macro_rules! exactly_once_tests {
    ($($(#[$attr:meta])* $name:ident: $kind:ty, $capacity:expr;)*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                exactly_once::<$kind>($capacity);
            }
        )*
    };
}

exactly_once_tests! {
    locked_exactly_once: Locked, 16;
    #[cfg_attr(miri, ignore = "crossbeam-deque reads slots racily")]
    crossbeam_exactly_once: Crossbeam, 16;
    chase_lev_exactly_once: ChaseLev, 2;
    chase_lev_quiescent_exactly_once: ChaseLevQuiescent, 2;
    steal_half_exactly_once: StealHalf, 2;
    steal_half_quiescent_exactly_once: StealHalfQuiescent, 2;
    abp_exactly_once: Abp, 64;
}

/// Indices and tags start 500 steps before they wrap: StealHalf's full index
/// and 28-bit top wrap after 500 pushes and its 30-bit tag after 500 owner
/// CASes, Chase-Lev's `isize` indices after 500 pushes, ABP's tag after 500
/// resets.
#[test]
#[cfg_attr(miri, ignore = "the same code paths as the runs above, other numbers")]
fn every_lock_free_kind_exactly_once_across_wraps() {
    let before_wrap = Some(if cfg!(miri) { 20 } else { 500 });
    exactly_once_from::<StealHalf>(2, before_wrap);
    exactly_once_from::<ChaseLev>(2, before_wrap);
    exactly_once_from::<Abp>(64, before_wrap);
}
