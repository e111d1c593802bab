//! loom models of the lock-free deques, with tiny capacities so that growth,
//! shrink, the ABP reset and StealHalf's power-of-two and steal-detection
//! CAS paths all run inside the explored interleavings.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p stealmark-deques --release --test loom
//! ```
//!
//! The preemption bound defaults to 4 (about 20 s on 2 cores; `LOOM_MAX_PREEMPTIONS`
//! overrides it: 5 takes about a minute).
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

/// Asserts that `got` holds each of `0..n` exactly once.
fn assert_exactly_once(mut got: Vec<usize>, n: usize) {
    got.sort_unstable();
    assert_eq!(got, (0..n).collect::<Vec<_>>());
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
        owner.push(0).unwrap();
        let stealer = thread::spawn(move || steal_all(&thief, 2));
        let mut got = Vec::new();
        for i in 1..n {
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
        owner.push(0).unwrap();
        owner.push(1).unwrap();
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

/// A thief takes half of four items into its own deque (growing it) while
/// the owner pops, crossing the power-of-two boundaries at 4, 2 and 1.
#[test]
fn steal_half_batch_vs_pop() {
    model(|| {
        let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
        for i in 0..4 {
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
        for i in 0..3 {
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
        owner.push(3).unwrap();
        let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
        got.extend(stealer.join().unwrap());
        assert_exactly_once(got, 4);
    });
}
