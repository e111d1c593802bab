//! loom models of the lock-free deques, with tiny capacities so that growth,
//! shrink, the ABP reset and StealHalf's power-of-two and steal-detection
//! CAS paths all run inside the explored interleavings.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
//!     cargo test -p stealmark-deques --release --test loom
//! ```
//!
//! Release for speed, with debug assertions on, so that StealHalf's
//! invariant checks (`len(stealRange) >= len(deque) / 8`) run in every
//! explored interleaving; `debug_assertions_are_on` fails otherwise.
//!
//! The preemption bound defaults to 4 (`LOOM_MAX_PREEMPTIONS` overrides it).
//! The models use the quiescent-reclamation kinds: crossbeam-epoch is not
//! instrumented for loom (and its pin is not what is being checked).
#![cfg(loom)]

use loom::thread;
use stealmark_deques::abp::Abp;
use stealmark_deques::chase_lev::ChaseLevQuiescent;
use stealmark_deques::steal_half::StealHalfQuiescent;
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(4);
    }
    builder.check(f);
}

/// Asserts that `got` holds each of `1..=n` exactly once. Items start at 1,
/// so that reading a slot that was never written (zero) shows up as a wrong
/// item.
fn assert_exactly_once(mut got: Vec<usize>, n: usize) {
    got.sort_unstable();
    assert_eq!(got, (1..=n).collect::<Vec<_>>());
}

/// Steals until the deque looks empty, retrying aborts.
fn steal_all<T: Thief>(thief: &T, limit: usize) -> Vec<usize> {
    let mut stats = ThiefStats::default();
    let mut got = Vec::new();
    for _ in 0..limit {
        match thief.steal(&mut stats) {
            Steal::Success(item) => got.push(item),
            Steal::Empty => break,
            Steal::Abort => thread::yield_now(),
        }
    }
    got
}

/// The owner pushes past the capacity (growth) while a thief steals, then
/// pops everything (the last pop shrinks the array back).
fn push_grow_pop_vs_steal<D: WorkDeque>(n: usize) {
    model(move || {
        let (mut owner, thief) = D::with_capacity(2);
        owner.push(1).unwrap();
        let stealer = thread::spawn(move || steal_all(&thief, 2));
        let mut got = Vec::new();
        for i in 2..=n {
            if let Err(item) = owner.push(i) {
                got.push(item);
            }
        }
        while let Some(item) = owner.pop() {
            got.push(item);
        }
        got.extend(stealer.join().unwrap());
        assert_exactly_once(got, n);
    });
}

/// Two thieves and the owner race for the last two items.
fn last_items_race<D: WorkDeque>() {
    model(|| {
        let (mut owner, thief) = D::with_capacity(2);
        owner.push(1).unwrap();
        owner.push(2).unwrap();
        let other = thief.clone();
        let a = thread::spawn(move || steal_all(&thief, 1));
        let b = thread::spawn(move || steal_all(&other, 1));
        let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
        got.extend(a.join().unwrap());
        got.extend(b.join().unwrap());
        assert_exactly_once(got, 2);
        // The deque is usable afterwards (ABP has reset its indices).
        owner.push(7).unwrap();
        assert_eq!(owner.pop(), Some(7));
    });
}

#[test]
fn chase_lev_push_grow_pop_vs_steal() {
    push_grow_pop_vs_steal::<ChaseLevQuiescent>(3);
}

#[test]
fn chase_lev_last_items_race() {
    last_items_race::<ChaseLevQuiescent>();
}

#[test]
fn abp_push_pop_vs_steal() {
    push_grow_pop_vs_steal::<Abp>(3);
}

#[test]
fn abp_last_items_race() {
    last_items_race::<Abp>();
}

#[test]
fn steal_half_push_grow_pop_vs_steal() {
    push_grow_pop_vs_steal::<StealHalfQuiescent>(3);
}

#[test]
fn steal_half_last_items_race() {
    last_items_race::<StealHalfQuiescent>();
}

/// A thief takes the steal range of four items into its own deque while the
/// owner pops them all. Below 8 items the owner arms a range of one item
/// (indices `[0, 1)`, floor 2), so the thief takes one item with one CAS.
/// The owner pops indices 3 and 2 without a CAS (at or above the floor, if
/// no steal has happened yet), claims index 1 with the CAS that re-arms at
/// the floor, and takes index 0 with the last-item CAS; a steal that
/// happened first sends these pops to the CAS path instead.
#[test]
fn steal_half_batch_vs_pop() {
    model(|| {
        let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
        for i in 1..=4 {
            owner.push(i).unwrap();
        }
        let stealer = thread::spawn(move || {
            let (mut mine, _) = StealHalfQuiescent::with_capacity(2);
            let mut stats = ThiefStats::default();
            let result = thief.steal_half(&mut mine, &mut stats);
            assert!(stats.cas_attempted <= 1);
            let got: Vec<usize> = std::iter::from_fn(|| mine.pop()).collect();
            if let Steal::Success(n) = result {
                assert_eq!(n, got.len());
            }
            got
        });
        let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
        got.extend(stealer.join().unwrap());
        assert_exactly_once(got, 4);
    });
}

/// Two thieves in a row (the second replaces a thief-written range) while
/// the owner pushes, detects the steal through `prevStealRange` and pops.
#[test]
fn steal_half_chained_steals_vs_owner() {
    model(|| {
        let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
        for i in 1..=3 {
            owner.push(i).unwrap();
        }
        let stealer = thread::spawn(move || {
            let (mut mine, _) = StealHalfQuiescent::with_capacity(2);
            let mut stats = ThiefStats::default();
            let mut got = Vec::new();
            for _ in 0..2 {
                if let Steal::Success(item) = thief.steal(&mut stats) {
                    got.push(item);
                }
                let _ = thief.steal_half(&mut mine, &mut stats);
            }
            got.extend(std::iter::from_fn(|| mine.pop()));
            got
        });
        owner.push(4).unwrap();
        let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
        got.extend(stealer.join().unwrap());
        assert_exactly_once(got, 4);
    });
}

/// The owner's push-side range growth: at 8 items the owner re-arms from a
/// range of 1 to a range of 2 with a CAS, while a thief takes the range into
/// its own deque; then the owner pops twice (above the new floor, without a
/// CAS, unless the steal came first).
#[test]
fn steal_half_push_range_growth_vs_steal_half() {
    model(|| {
        let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
        for i in 1..=7 {
            owner.push(i).unwrap();
        }
        assert_eq!(owner.steal_range_len(), 1);
        let stealer = thread::spawn(move || {
            let (mut mine, _) = StealHalfQuiescent::with_capacity(2);
            let mut stats = ThiefStats::default();
            let _ = thief.steal_half(&mut mine, &mut stats);
            assert!(stats.cas_attempted <= 1);
            std::iter::from_fn(|| mine.pop()).collect::<Vec<usize>>()
        });
        owner.push(8).unwrap();
        let mut got: Vec<usize> = owner.pop().into_iter().chain(owner.pop()).collect();
        got.extend(stealer.join().unwrap());
        got.extend(std::iter::from_fn(|| owner.pop()));
        assert_exactly_once(got, 8);
    });
}

/// A `steal_half` commits two items into its own deque while another thief
/// steals from that deque. `commit` re-arms the deque's range before it
/// publishes the new bottom when the range must grow or a steal was seen,
/// and only checks the invariant otherwise. The destination starts with
/// `prefill` items: 0 (the re-armed range reaches above the bottom the other
/// thief may still read), 1 (no re-arm unless the other thief stole first)
/// or 6 (the range grows from 1 to 2 at 8 items).
fn commit_vs_steal_from_dest(prefill: usize) {
    model(move || {
        let (mut victim, victim_thief) = StealHalfQuiescent::with_capacity(2);
        // 8 items: the owner arms a range of 2.
        for i in 1..=8 {
            victim.push(i).unwrap();
        }
        let (mut mine, mine_thief) = StealHalfQuiescent::with_capacity(2);
        for i in 0..prefill {
            mine.push(9 + i).unwrap();
        }
        let batch = thread::spawn(move || {
            let mut stats = ThiefStats::default();
            let result = victim_thief.steal_half(&mut mine, &mut stats);
            assert_eq!(result, Steal::Success(2));
            let got: Vec<usize> = mine.pop().into_iter().collect();
            (got, mine)
        });
        let other = thread::spawn(move || steal_all(&mine_thief, 2));
        let (mut got, mut mine) = batch.join().unwrap();
        got.extend(other.join().unwrap());
        got.extend(std::iter::from_fn(|| mine.pop()));
        got.extend(std::iter::from_fn(|| victim.pop()));
        assert_exactly_once(got, 8 + prefill);
    });
}

#[test]
fn steal_half_commit_vs_steal_from_dest() {
    for prefill in [0, 1, 6] {
        commit_vs_steal_from_dest(prefill);
    }
}

/// The loom run keeps debug assertions on, so that the StealHalf invariant
/// checks run (`.ci/run` sets `CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS`).
#[test]
fn debug_assertions_are_on() {
    let mut checked = false;
    debug_assert!({
        checked = true;
        checked
    });
    assert!(
        checked,
        "run the loom models with CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true"
    );
}
