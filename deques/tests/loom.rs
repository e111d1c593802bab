//! loom models of the lock-free deques, with tiny capacities so that growth,
//! shrink, the ABP reset, StealHalf's power-of-two and steal-detection CAS
//! paths, chained thieves, index and tag wraps, epoch reclamation and the
//! idempotent deque's overwritten thefts all run inside the explored
//! interleavings.
//!
//! ```text
//! RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom \
//!     CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
//!     cargo test -p stealmark-deques --release --test loom
//! ```
//!
//! Release for speed, with debug assertions on, so that StealHalf's
//! invariant checks (`len(stealRange) >= len(deque) / 8`) run in every
//! explored interleaving; `debug_assertions_are_on` fails otherwise.
//!
//! Every model counts the branches its executions reach (the deques'
//! `coverage` counters) and asserts that the risky ones it is written for
//! were reached at least once: a model that never reaches a branch checks
//! nothing about it. `--nocapture` prints each model's counts.
//!
//! The preemption bound is `LOOM_MAX_PREEMPTIONS`, 3 by default and in
//! `.ci/run`; the three models of the epoch kinds run one below it (see
//! `epoch_model`). The whole file then runs in about a minute on two cores
//! (see `docs/design.md`). The epoch kinds run with crossbeam-epoch built on
//! loom's atomics (`--cfg crossbeam_loom`), and under loom a freed array is
//! poisoned rather than freed, so a steal that reads an array after the
//! epoch (or `quiesce`) freed it fails the model.
//!
//! loom's preemption-bounded search does not schedule a long run of one
//! thread's steps before one step of another (a whole steal before the
//! owner's next push, say) unless a model forces it: the models that need
//! such a starting point wait for it with a `Signal`, and the counters
//! show that each model reaches what it is written for.
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealmark_deques::abp::Abp;
use stealmark_deques::chase_lev::{ChaseLev, ChaseLevQuiescent};
use stealmark_deques::copies::{Horizon, Ticket};
use stealmark_deques::coverage::{self, Branch};
use stealmark_deques::idempotent::{
    Idempotent, IdempotentOwner, IdempotentThief, Quiescent as IdQuiescent,
};
use stealmark_deques::steal_half::{StealHalf, StealHalfQuiescent};
use stealmark_deques::{DequeKind, Owner, Steal, Thief, ThiefStats, WorkDeque};

/// The idempotent deque with quiescent reclamation: its steals pin nothing,
/// which keeps the state space of most idempotent models small (with
/// crossbeam-epoch on loom's atomics, a last-items race took over 5 million
/// executions). One model runs the shipped epoch kind.
struct IdempotentQ;

impl WorkDeque for IdempotentQ {
    type Owner = IdempotentOwner<IdQuiescent>;
    type Thief = IdempotentThief<IdQuiescent>;
    const KIND: DequeKind = DequeKind::Idempotent;

    fn with_capacity(capacity: usize) -> (Self::Owner, Self::Thief) {
        IdempotentOwner::new_pair(capacity, 0)
    }

    fn with_capacity_near_wrap(capacity: usize, before_wrap: usize) -> (Self::Owner, Self::Thief) {
        IdempotentOwner::new_pair(capacity, before_wrap)
    }
}

/// The preemption bound: `LOOM_MAX_PREEMPTIONS`, else 3.
fn bound() -> usize {
    loom::model::Builder::new().preemption_bound.unwrap_or(3)
}

/// Runs `f` under loom at the preemption bound, then asserts that the
/// executions reached every branch in `reach`.
fn model(name: &str, reach: &[Branch], f: impl Fn() + Sync + Send + 'static) {
    model_at(name, bound(), reach, f);
}

/// `model` one preemption below the bound, for the models of the epoch
/// kinds: crossbeam-epoch's own atomics (pin, unpin, the deferred free's
/// epoch advance) multiply the interleavings, about tenfold per preemption
/// (9 s at bound 2, 132 s at bound 3 for the idempotent one).
fn epoch_model(name: &str, reach: &[Branch], f: impl Fn() + Sync + Send + 'static) {
    model_at(name, bound().saturating_sub(1).max(1), reach, f);
}

fn model_at(
    name: &str,
    preemptions: usize,
    reach: &[Branch],
    f: impl Fn() + Sync + Send + 'static,
) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    coverage::take();
    builder.check(f);
    let hits = coverage::take();
    eprintln!("{name} (bound {preemptions}): {hits}");
    hits.assert_reached(name, reach);
}

/// Asserts that `got` holds each of `1..=n` exactly once. Items start at 1,
/// so that reading a slot that was never written (zero) shows up as a wrong
/// item.
fn assert_exactly_once(mut got: Vec<usize>, n: usize) {
    got.sort_unstable();
    assert_eq!(got, (1..=n).collect::<Vec<_>>());
}

/// Asserts that `got` holds each of `1..=n` at least once and nothing else;
/// returns the number of duplicates.
fn assert_at_least_once(mut got: Vec<usize>, n: usize) -> usize {
    got.sort_unstable();
    let mut distinct = got.clone();
    distinct.dedup();
    assert_eq!(
        distinct,
        (1..=n).collect::<Vec<_>>(),
        "lost or invented: {got:?}"
    );
    got.len() - n
}

/// A one-shot signal between two model threads. loom's preemption-bounded
/// search rarely schedules several steps of one thread before a given step
/// of another (here: a whole steal before the owner's next push), so a
/// model that needs that order as its starting point waits for it: the
/// waiter spins with `yield_now`, which loom treats as letting the others
/// run, and everything after the signal still races.
#[derive(Clone, Default)]
struct Signal(Arc<AtomicBool>);

impl Signal {
    fn set(&self) {
        // Release: pairs with the acquire load in `wait`.
        self.0.store(true, Ordering::Release);
    }

    fn wait(&self) {
        // Acquire: pairs with the release store in `set`: the waiter sees
        // everything the setter did before it.
        while !self.0.load(Ordering::Acquire) {
            thread::yield_now();
        }
    }
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

/// One `steal_half` into a new deque of the same kind; returns what it
/// moved, popped back out.
fn steal_half_once<D: WorkDeque>(thief: &D::Thief) -> Vec<usize> {
    let (mut mine, _) = D::with_capacity(2);
    let mut stats = ThiefStats::default();
    let result = thief.steal_half(&mut mine, &mut stats);
    assert!(stats.cas_attempted <= 1);
    let got: Vec<usize> = std::iter::from_fn(|| mine.pop()).collect();
    if let Steal::Success(n) = result {
        assert_eq!(n, got.len());
    }
    got
}

/// The owner pushes past the capacity (growth) while a thief steals, then
/// pops everything (the last pop shrinks the array back, in the kinds that
/// shrink: not the idempotent one). Returns every item that came out.
fn push_grow_pop_vs_steal<D: WorkDeque>(n: usize, before_wrap: Option<usize>) -> Vec<usize> {
    let (mut owner, thief) = match before_wrap {
        Some(w) => D::with_capacity_near_wrap(2, w),
        None => D::with_capacity(2),
    };
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
    got
}

/// The owner pushes `1..=pushed` into a deque of `capacity`, a thief runs
/// `steal` on its own thread, and the owner runs `race` meanwhile (which
/// returns what it popped); then the owner pops the rest. Returns every item
/// that came out.
fn owner_vs_thief<D: WorkDeque>(
    capacity: usize,
    pushed: usize,
    steal: fn(&D::Thief) -> Vec<usize>,
    race: impl FnOnce(&mut D::Owner) -> Vec<usize>,
) -> Vec<usize> {
    let (mut owner, thief) = D::with_capacity(capacity);
    for i in 1..=pushed {
        owner.push(i).unwrap();
    }
    let stealer = thread::spawn(move || steal(&thief));
    let mut got = race(&mut owner);
    got.extend(stealer.join().unwrap());
    got.extend(std::iter::from_fn(|| owner.pop()));
    got
}

/// The owner's push of a third item into an array of two grows it while a
/// thief runs `steal`; with an epoch kind, the owner then tries to advance
/// the epoch, so that loom explores the deferred free of the retired array
/// racing the steal. Returns every item that came out.
fn growth_vs_steal<D: WorkDeque>(steal: fn(&D::Thief) -> Vec<usize>) -> Vec<usize> {
    owner_vs_thief::<D>(2, 2, steal, |owner| {
        owner.push(3).unwrap();
        coverage::collect_epoch(2);
        Vec::new()
    })
}

/// Two thieves and the owner race for the last two items.
fn last_items_race<D: WorkDeque>(before_wrap: usize) -> Vec<usize> {
    let (mut owner, thief) = D::with_capacity_near_wrap(2, before_wrap);
    owner.push(1).unwrap();
    owner.push(2).unwrap();
    let other = thief.clone();
    let a = thread::spawn(move || steal_all(&thief, 1));
    let b = thread::spawn(move || steal_all(&other, 1));
    let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
    got.extend(a.join().unwrap());
    got.extend(b.join().unwrap());
    // The deque is usable afterwards (ABP has reset its indices).
    owner.push(7).unwrap();
    assert_eq!(owner.pop(), Some(7));
    got
}

// ---------------------------------------------------------------- Chase-Lev

#[test]
fn chase_lev_push_grow_pop_vs_steal() {
    model(
        "chase_lev_push_grow_pop_vs_steal",
        &[Branch::ClStealFromRetiredArray, Branch::ClLastItemLost],
        || assert_exactly_once(push_grow_pop_vs_steal::<ChaseLevQuiescent>(3, None), 3),
    );
}

#[test]
fn chase_lev_last_items_race() {
    model(
        "chase_lev_last_items_race",
        &[
            Branch::ClStealAborted,
            Branch::ClLastItemWon,
            Branch::ClLastItemLost,
        ],
        || assert_exactly_once(last_items_race::<ChaseLevQuiescent>(0), 2),
    );
}

/// The epoch kind: growth retires the first array through crossbeam-epoch
/// while a thief may hold it; the owner then tries to advance the epoch, so
/// loom explores the deferred free racing with the steal.
#[test]
fn chase_lev_epoch_reclaims_an_array_a_thief_read() {
    epoch_model(
        "chase_lev_epoch_reclaims_an_array_a_thief_read",
        &[
            Branch::ClStealFromRetiredArray,
            Branch::ArrayFreed,
            Branch::FreedArrayAThiefReadAfterRetire,
        ],
        || assert_exactly_once(growth_vs_steal::<ChaseLev>(|t| steal_all(t, 1)), 3),
    );
}

/// `bottom` crosses `isize::MAX` while a thief steals.
#[test]
fn chase_lev_index_wrap() {
    model("chase_lev_index_wrap", &[Branch::ClIndexWrapped], || {
        assert_exactly_once(push_grow_pop_vs_steal::<ChaseLevQuiescent>(3, Some(1)), 3)
    });
}

// ---------------------------------------------------------------------- ABP

#[test]
fn abp_push_pop_vs_steal() {
    model("abp_push_pop_vs_steal", &[Branch::AbpLastItemLost], || {
        assert_exactly_once(push_grow_pop_vs_steal::<Abp>(3, None), 3)
    });
}

/// The last-items race with the tag one reset before it wraps: the owner's
/// reset takes the tag from `u32::MAX` to 0 while thieves hold ages with the
/// old tag.
#[test]
fn abp_last_items_race_across_the_tag_wrap() {
    model(
        "abp_last_items_race_across_the_tag_wrap",
        &[
            Branch::AbpStealAborted,
            Branch::AbpLastItemWon,
            Branch::AbpLastItemLost,
            Branch::AbpTagWrapped,
        ],
        || assert_exactly_once(last_items_race::<Abp>(1), 2),
    );
}

// --------------------------------------------------------------- StealHalf

#[test]
fn steal_half_push_grow_pop_vs_steal() {
    model(
        "steal_half_push_grow_pop_vs_steal",
        &[
            Branch::ShPopWithoutCas,
            Branch::ShRearmAfterSteal,
            Branch::ShPopFoundEmptied,
        ],
        || assert_exactly_once(push_grow_pop_vs_steal::<StealHalfQuiescent>(3, None), 3),
    );
}

#[test]
fn steal_half_last_items_race() {
    model(
        "steal_half_last_items_race",
        &[Branch::ShStealAborted, Branch::ShPopCasRetried],
        || assert_exactly_once(last_items_race::<StealHalfQuiescent>(0), 2),
    );
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
    model(
        "steal_half_batch_vs_pop",
        &[Branch::ShPopWithoutCas, Branch::ShPopCasRetried],
        || {
            let got = owner_vs_thief::<StealHalfQuiescent>(
                2,
                4,
                steal_half_once::<StealHalfQuiescent>,
                |owner| std::iter::from_fn(|| owner.pop()).collect(),
            );
            assert_exactly_once(got, 4);
        },
    );
}

/// Steals in a row by one thief (each replacing a thief-written range)
/// while the owner pushes, detects the steal through `prevStealRange`,
/// re-arms and pops. The owner's push waits until the first steal is done
/// (`Signal`), so that it sees a thief's word; the later steals race with
/// its re-arm and pops.
#[test]
fn steal_half_chained_steals_vs_owner() {
    model(
        "steal_half_chained_steals_vs_owner",
        &[
            Branch::ShRearmAfterSteal,
            Branch::ShOptimisticRange,
            Branch::ShStealAborted,
        ],
        || {
            let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
            for i in 1..=3 {
                owner.push(i).unwrap();
            }
            let first = Signal::default();
            let stolen = first.clone();
            let stealer = thread::spawn(move || {
                let (mut mine, _) = StealHalfQuiescent::with_capacity(2);
                let mut stats = ThiefStats::default();
                let mut got = Vec::new();
                if let Steal::Success(item) = thief.steal(&mut stats) {
                    got.push(item);
                }
                stolen.set();
                let _ = thief.steal_half(&mut mine, &mut stats);
                if let Steal::Success(item) = thief.steal(&mut stats) {
                    got.push(item);
                }
                got.extend(std::iter::from_fn(|| mine.pop()));
                got
            });
            first.wait();
            owner.push(4).unwrap();
            let mut got: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
            got.extend(stealer.join().unwrap());
            assert_exactly_once(got, 4);
        },
    );
}

/// Two different thief threads chain on a range of two items: with 8 items
/// the owner arms `[0, 2)` (floor 4); thief A takes one item and, having
/// seen 7 above its new top, leaves `[1, 3)`, still under the floor; thief
/// B's `steal_half` then takes both items of A's range with one CAS, while
/// the owner pops above the floor without a CAS. Exactly once throughout.
#[test]
fn steal_half_two_thieves_chain_on_a_range_of_two() {
    model(
        "steal_half_two_thieves_chain_on_a_range_of_two",
        &[Branch::ShChainedStealOfSeveral, Branch::ShPopWithoutCas],
        || {
            let (mut owner, thief) = StealHalfQuiescent::with_capacity(8);
            for i in 1..=8 {
                owner.push(i).unwrap();
            }
            let other = thief.clone();
            let a = thread::spawn(move || steal_all(&thief, 1));
            let b = thread::spawn(move || steal_half_once::<StealHalfQuiescent>(&other));
            let mut got: Vec<usize> = owner.pop().into_iter().collect();
            got.extend(a.join().unwrap());
            got.extend(b.join().unwrap());
            got.extend(std::iter::from_fn(|| owner.pop()));
            assert_exactly_once(got, 8);
        },
    );
}

/// The owner's push-side range growth: at 8 items the owner re-arms from a
/// range of 1 to a range of 2 with a CAS, while a thief takes the range into
/// its own deque; then the owner pops twice (above the new floor, without a
/// CAS, unless the steal came first).
#[test]
fn steal_half_push_range_growth_vs_steal_half() {
    model(
        "steal_half_push_range_growth_vs_steal_half",
        &[Branch::ShRearmRetried, Branch::ShPopWithoutCas],
        || {
            let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
            for i in 1..=7 {
                owner.push(i).unwrap();
            }
            assert_eq!(owner.steal_range_len(), 1);
            let stealer = thread::spawn(move || steal_half_once::<StealHalfQuiescent>(&thief));
            owner.push(8).unwrap();
            let mut got: Vec<usize> = owner.pop().into_iter().chain(owner.pop()).collect();
            got.extend(stealer.join().unwrap());
            got.extend(std::iter::from_fn(|| owner.pop()));
            assert_exactly_once(got, 8);
        },
    );
}

/// The victim's array grows while a `steal_half` copies from it: two items
/// in an array of two, range `[0, 1)`; the owner's third push grows the
/// array (retiring the one the thief may be copying from) without a CAS (3
/// items, no re-arm), so the thief's CAS can still succeed after copying
/// from the retired array. The epoch kind: the owner then tries to advance
/// the epoch, so the deferred free races with the steal, and a read after
/// the free would hit a poisoned array.
#[test]
fn steal_half_victim_grows_during_steal_half() {
    epoch_model(
        "steal_half_victim_grows_during_steal_half",
        &[
            Branch::ShStealHalfFromRetiredArray,
            Branch::ThiefReadRetiredArray,
            Branch::ArrayFreed,
            Branch::FreedArrayAThiefReadAfterRetire,
        ],
        || {
            assert_exactly_once(
                growth_vs_steal::<StealHalf>(steal_half_once::<StealHalf>),
                3,
            )
        },
    );
}

/// The full index and the word's 28-bit top wrap after two pushes and the
/// 30-bit tag after two owner CASes, while a thief steals and the owner
/// pushes, re-arms and pops across the wraps.
#[test]
fn steal_half_index_and_tag_wrap() {
    model(
        "steal_half_index_and_tag_wrap",
        &[
            Branch::ShIndexWrapped,
            Branch::ShTopFieldWrapped,
            Branch::ShTagWrapped,
        ],
        || {
            let got = push_grow_pop_vs_steal::<StealHalfQuiescent>(3, Some(1));
            assert_exactly_once(got, 3);
        },
    );
}

/// Reliability item 2: a thief's steal races the owner's push of a second
/// item that does not re-arm. Whatever the interleaving, once both are done
/// and the owner stays idle (a marker working from its private stack), an
/// item left in the deque can be stolen: the thief never leaves an empty
/// range over it.
#[test]
fn steal_half_items_left_are_stealable_while_the_owner_idles() {
    model(
        "steal_half_items_left_are_stealable_while_the_owner_idles",
        &[Branch::ShOptimisticRange, Branch::ShClaimClamped],
        || {
            let (mut owner, thief) = StealHalfQuiescent::with_capacity(2);
            owner.push(1).unwrap();
            let t = thief.clone();
            let stealer = thread::spawn(move || steal_all(&t, 1));
            owner.push(2).unwrap();
            let mut got = stealer.join().unwrap();
            if owner.len() > 0 {
                assert!(owner.steal_range_len() > 0, "items left, empty range");
                let mut stats = ThiefStats::default();
                match thief.steal(&mut stats) {
                    Steal::Success(item) => got.push(item),
                    other => panic!("an item is left but the steal says {other:?}"),
                }
            }
            // No item left: the range may be one slot at the bottom, which
            // must not hand out anything.
            let mut stats = ThiefStats::default();
            assert_eq!(thief.steal(&mut stats), Steal::Empty);
            got.extend(std::iter::from_fn(|| owner.pop()));
            assert_exactly_once(got, 2);
        },
    );
}

/// A `steal_half` commits two items into its own deque while another thief
/// steals from that deque. `commit` re-arms the deque's range before it
/// publishes the new bottom when the range must grow or a steal was seen,
/// and only checks the invariant otherwise. The destination starts with
/// `prefill` items: 0 (the re-armed range reaches above the bottom the other
/// thief may still read), 1 (no re-arm unless the other thief stole first)
/// or 6 (the range grows from 1 to 2 at 8 items).
fn commit_vs_steal_from_dest(prefill: usize) {
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
}

#[test]
fn steal_half_commit_vs_steal_from_dest() {
    use Branch::*;
    let reach: [&[Branch]; 3] = [
        // The other thief reads the re-armed range before the new bottom.
        &[ShClaimClamped],
        // The other thief steals the one item first: commit re-arms.
        &[ShRearmAfterSteal, ShClaimClamped],
        // The range grows at 8 items while the other thief steals.
        &[ShRearmAfterSteal, ShRearmRetried],
    ];
    for (prefill, reach) in [0, 1, 6].into_iter().zip(reach) {
        model(
            &format!("steal_half_commit_vs_steal_from_dest({prefill})"),
            reach,
            move || commit_vs_steal_from_dest(prefill),
        );
    }
}

// -------------------------------------------------------------- Idempotent

/// The owner pushes (growing the array) and pops while a thief steals single
/// items: every item at least once, none invented, and some executions do
/// return an item twice (an owner store overwrote a theft).
#[test]
fn idempotent_push_grow_pop_vs_steal() {
    model(
        "idempotent_push_grow_pop_vs_steal",
        &[
            Branch::IdOwnerOverwroteSteal,
            Branch::IdDuplicateReturned,
            Branch::IdStealFromRetiredArray,
        ],
        || {
            let got = push_grow_pop_vs_steal::<IdempotentQ>(3, None);
            if assert_at_least_once(got, 3) > 0 {
                coverage::note(Branch::IdDuplicateReturned);
            }
        },
    );
}

/// Two thieves and the owner race for the last two items.
#[test]
fn idempotent_last_items_race() {
    model(
        "idempotent_last_items_race",
        &[Branch::IdStealAborted, Branch::IdOwnerOverwroteSteal],
        || {
            assert_at_least_once(last_items_race::<IdempotentQ>(0), 2);
        },
    );
}

/// A `steal_half` races a push that grows the array (two items in an array
/// of two) and a pop: the thief may copy from the retired array, take two
/// items with its CAS, and have its theft overwritten by the owner's store.
#[test]
fn idempotent_steal_half_vs_growth_and_pop() {
    model(
        "idempotent_steal_half_vs_growth_and_pop",
        &[
            Branch::IdStealOfSeveral,
            Branch::IdStealFromRetiredArray,
            Branch::IdOwnerOverwroteSteal,
            Branch::IdDuplicateReturned,
        ],
        || {
            let got =
                owner_vs_thief::<IdempotentQ>(2, 2, steal_half_once::<IdempotentQ>, |owner| {
                    owner.push(3).unwrap();
                    owner.pop().into_iter().collect()
                });
            if assert_at_least_once(got, 3) > 0 {
                coverage::note(Branch::IdDuplicateReturned);
            }
        },
    );
}

/// A pop and a push reuse the slot of the one item while a thief steals
/// it: pushes store no anchor, so the pop's new tag alone must fail a
/// theft that copied the slot before the push wrote it again.
#[test]
fn idempotent_pop_and_push_reuse_a_slot_a_thief_copied() {
    model(
        "idempotent_pop_and_push_reuse_a_slot_a_thief_copied",
        &[
            Branch::IdStaleCopyRejected,
            Branch::IdOwnerOverwroteSteal,
            Branch::IdDuplicateReturned,
        ],
        || {
            let got = owner_vs_thief::<IdempotentQ>(
                2,
                1,
                |t| steal_all(t, 1),
                |owner| {
                    let mut popped: Vec<usize> = owner.pop().into_iter().collect();
                    owner.push(2).unwrap();
                    popped.extend(owner.pop());
                    popped
                },
            );
            if assert_at_least_once(got, 2) > 0 {
                coverage::note(Branch::IdDuplicateReturned);
            }
        },
    );
}

/// The shipped epoch kind: growth retires the first array through
/// crossbeam-epoch while a thief may hold it; the owner then tries to
/// advance the epoch, so loom explores the deferred free racing the steal.
#[test]
fn idempotent_epoch_reclaims_an_array_a_thief_read() {
    epoch_model(
        "idempotent_epoch_reclaims_an_array_a_thief_read",
        &[
            Branch::IdStealFromRetiredArray,
            Branch::ArrayFreed,
            Branch::FreedArrayAThiefReadAfterRetire,
        ],
        || {
            assert_at_least_once(growth_vs_steal::<Idempotent>(|t| steal_all(t, 1)), 3);
        },
    );
}

/// The 32-bit head, the full index and the tag wrap within the run.
#[test]
fn idempotent_index_and_tag_wrap() {
    model(
        "idempotent_index_and_tag_wrap",
        &[Branch::IdHeadFieldWrapped, Branch::IdTagWrapped],
        || {
            assert_at_least_once(push_grow_pop_vs_steal::<IdempotentQ>(3, Some(1)), 3);
        },
    );
}

/// Settles popped items as a marker's live count does: those whose ticket
/// `horizon` says may share go to `claimed` (one claim per item wins in a
/// shared set), the others to `direct`.
fn settle(
    horizon: Horizon,
    popped: &mut Vec<(usize, Ticket)>,
    direct: &mut Vec<usize>,
    claimed: &mut Vec<usize>,
) {
    for (item, ticket) in popped.drain(..) {
        if horizon.may_share(ticket) {
            claimed.push(item);
        } else {
            direct.push(item);
        }
    }
}

/// Asserts that the count of `direct` and `claimed` gives each of `1..=n`
/// exactly once: an item counts once per direct settle, plus once if any
/// claim of it was made (the first wins, the others lose). Notes
/// `IdDuplicateReturned` when some item was settled more than once.
fn assert_counted_once(direct: &[usize], claimed: &[usize], n: usize) {
    let all = direct.iter().chain(claimed).copied().collect();
    if assert_at_least_once(all, n) > 0 {
        coverage::note(Branch::IdDuplicateReturned);
    }
    for item in 1..=n {
        let counted =
            direct.iter().filter(|&&d| d == item).count() + usize::from(claimed.contains(&item));
        assert_eq!(
            counted, 1,
            "item {item}: direct {direct:?}, claimed {claimed:?}"
        );
    }
}

/// A model thread that settles what it stole: whether it stole, and its
/// direct and claimed counts.
type SettlingThief = thread::JoinHandle<(bool, Vec<usize>, Vec<usize>)>;

/// The start of the exact-count models: an idempotent deque holding items
/// 1, 2 and 3, and a model thread that `steal_half`s from it into a deque
/// of its own, then pops and settles everything it took.
fn three_items_and_a_settling_thief() -> (IdempotentOwner<IdQuiescent>, SettlingThief) {
    let (mut owner, thief) = IdempotentQ::with_capacity(4);
    for i in 1..=3 {
        owner.push(i).unwrap();
    }
    let stealer = thread::spawn(move || {
        let (mut mine, _) = IdempotentQ::with_capacity(4);
        let mut stats = ThiefStats::default();
        let stole = thief.steal_half(&mut mine, &mut stats).success().is_some();
        let mut popped: Vec<_> = std::iter::from_fn(|| mine.pop_ticketed()).collect();
        let (mut direct, mut claimed) = (Vec::new(), Vec::new());
        settle(mine.horizon(), &mut popped, &mut direct, &mut claimed);
        (stole, direct, claimed)
    });
    (owner, stealer)
}

/// The exact count with thieves: the owner pops one of three items, takes
/// its horizon (one fence) and settles it, then pops the rest and settles
/// them after another horizon,
/// while a thief's `steal_half` takes two items into its own deque (whose
/// tickets are then marked stolen) and the thief settles them. Every item
/// is counted exactly once, whichever pops a theft overwrote, and whether
/// the owner's fence saw the thief's announcement or not.
#[test]
fn idempotent_horizon_counts_each_item_once() {
    model(
        "idempotent_horizon_counts_each_item_once",
        &[
            Branch::IdOwnerOverwroteSteal,
            Branch::IdDuplicateReturned,
            Branch::IdHorizonSawTheft,
            Branch::IdTheftAfterHorizon,
            Branch::IdStealOfSeveral,
        ],
        || {
            let (mut owner, stealer) = three_items_and_a_settling_thief();
            let (mut direct, mut claimed) = (Vec::new(), Vec::new());
            let mut popped: Vec<_> = owner.pop_ticketed().into_iter().collect();
            let early = owner.horizon();
            settle(early, &mut popped, &mut direct, &mut claimed);
            popped.extend(std::iter::from_fn(|| owner.pop_ticketed()));
            settle(owner.horizon(), &mut popped, &mut direct, &mut claimed);
            // The owner's deque received no copy: its claims are the items
            // its fences saw a theft announced for.
            if !claimed.is_empty() {
                coverage::note(Branch::IdHorizonSawTheft);
            }
            let (stole, thief_direct, thief_claimed) = stealer.join().unwrap();
            direct.extend(thief_direct);
            claimed.extend(thief_claimed);
            if stole && owner.horizon() != early {
                coverage::note(Branch::IdTheftAfterHorizon);
            }
            assert_counted_once(&direct, &claimed, 3);
        },
    );
}

/// A ticket held across a horizon, as a marker holds the tickets of the
/// objects in its prefetch FIFO: the owner pops two of three items and
/// holds them unsettled while it takes a horizon (the count of an earlier
/// batch), keeping each ticket as that horizon [`Horizon::flag`]s it; then
/// it pops the last item and settles all three after a second horizon. A
/// thief's `steal_half` takes two items into its own deque and settles
/// them. When the owner's second pop overwrote the theft, the first horizon
/// sees the announcement and the second sees nothing new: settled against
/// the second alone, the held duplicate would be counted directly by the
/// owner and through a claim by the thief (`IdHeldAcrossHorizon` counts
/// those executions). Every item is counted exactly once.
#[test]
fn idempotent_ticket_held_across_a_horizon_counts_once() {
    model(
        "idempotent_ticket_held_across_a_horizon_counts_once",
        &[
            Branch::IdOwnerOverwroteSteal,
            Branch::IdDuplicateReturned,
            Branch::IdHorizonSawTheft,
            Branch::IdHeldAcrossHorizon,
        ],
        || {
            let (mut owner, stealer) = three_items_and_a_settling_thief();
            let held: Vec<(usize, Ticket)> = std::iter::from_fn(|| owner.pop_ticketed())
                .take(2)
                .collect();
            let first = owner.horizon();
            if first != Horizon::NONE {
                coverage::note(Branch::IdHorizonSawTheft);
            }
            let mut popped: Vec<_> = held.iter().map(|&(w, t)| (w, first.flag(t))).collect();
            popped.extend(owner.pop_ticketed());
            let second = owner.horizon();
            let (mut direct, mut claimed) = (Vec::new(), Vec::new());
            settle(second, &mut popped, &mut direct, &mut claimed);
            let (_, thief_direct, thief_claimed) = stealer.join().unwrap();
            let thief_took = |w: usize| thief_direct.contains(&w) || thief_claimed.contains(&w);
            if held
                .iter()
                .any(|&(w, t)| thief_took(w) && first.may_share(t) && !second.may_share(t))
            {
                coverage::note(Branch::IdHeldAcrossHorizon);
            }
            direct.extend(thief_direct);
            claimed.extend(thief_claimed);
            assert_counted_once(&direct, &claimed, 3);
        },
    );
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
