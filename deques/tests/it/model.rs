//! Sequential model tests: random operation sequences on each deque, checked
//! step by step against `VecDeque` models of the victim and of the thief's
//! own deque. Bursts of up to 70 pushes or pops from an initial capacity of
//! 2 cross every growth, shrink and power-of-two boundary up to a few hundred
//! items; `ramps_cross_every_boundary` checks those crossings explicitly.
#![cfg(not(loom))]

use std::collections::VecDeque;

use proptest::prelude::*;
use proptest::test_runner::Config;
use stealmark_deques::abp::Abp;
use stealmark_deques::chase_lev::{ChaseLev, ChaseLevQuiescent};
use stealmark_deques::idempotent::Idempotent;
use stealmark_deques::locked::Locked;
use stealmark_deques::peer::Crossbeam;
use stealmark_deques::steal_half::{StealHalf, StealHalfQuiescent};
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

#[derive(Debug, Clone)]
enum Op {
    Push(usize),
    Pop(usize),
    Steal,
    StealHalf,
    DestPop(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..=70usize).prop_map(Op::Push),
        3 => (1..=70usize).prop_map(Op::Pop),
        2 => Just(Op::Steal),
        2 => Just(Op::StealHalf),
        1 => (1..=20usize).prop_map(Op::DestPop),
    ]
}

/// How a kind's `steal_half` behaves in a sequential run.
#[derive(Clone, Copy)]
enum Half {
    /// Moves exactly `ceil(len / 2)`, oldest first onto the thief's bottom.
    Ceil,
    /// Moves the steal range: between `len / 8` and `ceil(len / 2)` items.
    Range,
}

/// A model of one deque: the items, plus ABP's `bottom` index, which only
/// resets to 0 when the deque empties (a bounded ABP deque is full when it
/// reaches the capacity).
#[derive(Default)]
struct Model {
    items: VecDeque<usize>,
    abp_bottom: usize,
}

impl Model {
    fn full(&self, bound: Option<usize>) -> bool {
        bound.is_some_and(|cap| self.abp_bottom == cap)
    }

    fn push(&mut self, item: usize) {
        self.items.push_back(item);
        self.abp_bottom += 1;
    }

    fn pop(&mut self) -> Option<usize> {
        let item = self.items.pop_back();
        if self.items.is_empty() {
            self.abp_bottom = 0;
        } else {
            self.abp_bottom -= 1;
        }
        item
    }
}

fn check<D: WorkDeque>(ops: &[Op], bound: Option<usize>, half: Half) {
    check_near_wrap::<D>(ops, bound, half, None);
}

/// `check`, on deques made by `with_capacity_near_wrap(_, before_wrap)`
/// when `before_wrap` is given: their indices and tags wrap within the run.
fn check_near_wrap<D: WorkDeque>(
    ops: &[Op],
    bound: Option<usize>,
    half: Half,
    before_wrap: Option<usize>,
) {
    let capacity = bound.unwrap_or(2);
    let make = || match before_wrap {
        Some(n) => D::with_capacity_near_wrap(capacity, n),
        None => D::with_capacity(capacity),
    };
    let (mut owner, thief) = make();
    let (mut dest, _dest_thief) = make();
    let (mut model, mut dest_model) = (Model::default(), Model::default());
    let mut stats = ThiefStats::default();
    let mut next = 0;
    for op in ops {
        match *op {
            Op::Push(n) => {
                for _ in 0..n {
                    let full = model.full(bound);
                    match owner.push(next) {
                        Ok(()) => {
                            assert!(!full, "{}: push into a full deque", D::KIND);
                            model.push(next);
                        }
                        Err(item) => {
                            assert!(full, "{}: push refused", D::KIND);
                            assert_eq!(item, next);
                        }
                    }
                    next += 1;
                }
            }
            Op::Pop(n) => {
                for _ in 0..n {
                    let expected = if bound.is_some() && model.abp_bottom == 0 {
                        None
                    } else {
                        model.pop()
                    };
                    assert_eq!(owner.pop(), expected, "{}: pop", D::KIND);
                }
            }
            Op::Steal => {
                let expected = match model.items.pop_front() {
                    Some(item) => Steal::Success(item),
                    None => Steal::Empty,
                };
                assert_eq!(thief.steal(&mut stats), expected, "{}: steal", D::KIND);
            }
            Op::StealHalf => {
                let len = model.items.len();
                let room = bound.map_or(usize::MAX, |cap| cap - dest_model.abp_bottom);
                let result = thief.steal_half(&mut dest, &mut stats);
                let moved = match result {
                    Steal::Success(k) => k,
                    Steal::Empty => 0,
                    Steal::Abort => panic!("{}: abort without concurrency", D::KIND),
                };
                let ceil = len.div_ceil(2).min(room);
                match half {
                    Half::Ceil => assert_eq!(moved, ceil, "{}", D::KIND),
                    Half::Range => {
                        assert!(moved <= ceil && 8 * moved >= len, "{moved} of {len}");
                        assert_eq!(moved == 0, len == 0);
                    }
                }
                for item in model.items.drain(..moved) {
                    dest_model.push(item);
                }
            }
            Op::DestPop(n) => {
                for _ in 0..n {
                    assert_eq!(dest.pop(), dest_model.pop(), "{}: dest pop", D::KIND);
                }
            }
        }
        assert_eq!(owner.len(), model.items.len(), "{}: owner len", D::KIND);
        assert_eq!(thief.len(), model.items.len(), "{}: thief len", D::KIND);
        assert_eq!(dest.len(), dest_model.items.len(), "{}: dest len", D::KIND);
    }
    // Drain both and compare the rest.
    let rest: Vec<usize> = std::iter::from_fn(|| owner.pop()).collect();
    let expected: Vec<usize> = model.items.iter().rev().copied().collect();
    assert_eq!(rest, expected, "{}: drain", D::KIND);
    let rest: Vec<usize> = std::iter::from_fn(|| dest.pop()).collect();
    let expected: Vec<usize> = dest_model.items.iter().rev().copied().collect();
    assert_eq!(rest, expected, "{}: dest drain", D::KIND);
}

fn config() -> Config {
    if cfg!(miri) {
        Config {
            cases: 2,
            failure_persistence: None,
            ..Config::default()
        }
    } else {
        Config::with_cases(256)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn steal_half_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<StealHalf>(&ops, None, Half::Range);
    }

    #[test]
    fn steal_half_quiescent_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<StealHalfQuiescent>(&ops, None, Half::Range);
    }

    #[test]
    fn chase_lev_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<ChaseLev>(&ops, None, Half::Ceil);
    }

    #[test]
    fn chase_lev_quiescent_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<ChaseLevQuiescent>(&ops, None, Half::Ceil);
    }

    #[test]
    fn abp_matches_model(ops in prop::collection::vec(op(), 1..60), cap in 1..200usize) {
        check::<Abp>(&ops, Some(cap), Half::Ceil);
    }

    /// Single-threaded, the idempotent deque is exactly a deque: no item
    /// twice (duplicates need a theft racing an owner operation).
    #[test]
    fn idempotent_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<Idempotent>(&ops, None, Half::Ceil);
    }

    #[test]
    #[cfg_attr(miri, ignore = "no unsafe code (a mutex around a VecDeque): the native run covers it")]
    fn locked_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<Locked>(&ops, None, Half::Ceil);
    }

    #[test]
    #[cfg_attr(miri, ignore = "crossbeam-deque reads slots racily")]
    fn crossbeam_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        check::<Crossbeam>(&ops, None, Half::Ceil);
    }

    /// The same sequences on deques whose indices and tags start a few
    /// operations before they wrap (`WorkDeque::with_capacity_near_wrap`):
    /// StealHalf's full index, 28-bit top and 30-bit tag, Chase-Lev's
    /// `isize` indices, ABP's 32-bit tag, the idempotent deque's 32-bit head
    /// and tag.
    #[test]
    #[cfg_attr(miri, ignore = "the same code paths as the tests above, other numbers")]
    fn every_kind_matches_model_across_index_and_tag_wraps(
        ops in prop::collection::vec(op(), 1..60),
        before_wrap in 0..64usize,
        cap in 1..200usize,
    ) {
        let w = Some(before_wrap);
        check_near_wrap::<StealHalf>(&ops, None, Half::Range, w);
        check_near_wrap::<StealHalfQuiescent>(&ops, None, Half::Range, w);
        check_near_wrap::<ChaseLev>(&ops, None, Half::Ceil, w);
        check_near_wrap::<Idempotent>(&ops, None, Half::Ceil, w);
        check_near_wrap::<Abp>(&ops, Some(cap), Half::Ceil, w);
    }
}

/// The wraps really happen in the near-wrap deques: after a few pushes the
/// logical indices have wrapped and everything still comes out in order.
#[test]
fn near_wrap_deques_cross_their_wrap_points() {
    let (mut sh, sh_thief) = StealHalf::with_capacity_near_wrap(2, 3);
    let (mut cl, cl_thief) = ChaseLev::with_capacity_near_wrap(2, 3);
    let (mut id, id_thief) = Idempotent::with_capacity_near_wrap(2, 3);
    let (mut abp, abp_thief) = Abp::with_capacity_near_wrap(4, 2);
    let mut s = ThiefStats::default();
    for round in 0..4 {
        for i in 0..10 {
            sh.push(i).unwrap();
            cl.push(i).unwrap();
            id.push(i).unwrap();
        }
        assert_eq!(sh_thief.steal(&mut s), Steal::Success(0));
        assert_eq!(cl_thief.steal(&mut s), Steal::Success(0));
        assert_eq!(id_thief.steal(&mut s), Steal::Success(0));
        for i in (1..10).rev() {
            assert_eq!((sh.pop(), cl.pop()), (Some(i), Some(i)), "round {round}");
            assert_eq!(id.pop(), Some(i), "round {round}");
        }
        // ABP's tag wraps at the second reset.
        abp.push(round).unwrap();
        abp.push(round + 1).unwrap();
        assert_eq!(abp_thief.steal(&mut s), Steal::Success(round));
        assert_eq!(abp.pop(), Some(round + 1));
        assert_eq!(abp.pop(), None);
    }
    assert_eq!((sh.len(), cl.len(), abp.len(), id.len()), (0, 0, 0, 0));
}

/// Pushes up to 2^10 items and pops them all, checking the capacity of the
/// growable deques and the steal range of StealHalf at every step: every
/// growth and shrink boundary and every power of two is crossed both ways.
#[test]
fn ramps_cross_every_boundary() {
    let top: usize = if cfg!(miri) { 1 << 6 } else { 1 << 10 };
    let (mut sh, _t1) = StealHalf::with_capacity(2);
    let (mut cl, _t2) = ChaseLev::with_capacity(2);
    for n in 1..=top {
        sh.push(n).unwrap();
        cl.push(n).unwrap();
        let expected_capacity = n.next_power_of_two().max(2);
        assert_eq!(
            (sh.capacity(), cl.capacity()),
            (expected_capacity, expected_capacity)
        );
        // The owner keeps the range at the largest power of two <= n / 4
        // (1 below 8 items), re-arming only when n reaches a power of two.
        let expected = if n < 8 { 1 } else { 1 << (n / 4).ilog2() };
        assert_eq!(sh.steal_range_len(), expected, "push {n}");
        assert!(8 * sh.steal_range_len() >= n);
    }
    let (mut sh_cap, mut cl_cap) = (sh.capacity(), cl.capacity());
    for n in (0..top).rev() {
        assert_eq!(sh.pop(), Some(n + 1));
        assert_eq!(cl.pop(), Some(n + 1));
        assert_eq!((sh.len(), cl.len()), (n, n));
        // Shrink by half when fewer than capacity / 4 remain, never below 2.
        if sh_cap > 2 && n < sh_cap / 4 {
            sh_cap /= 2;
        }
        if cl_cap > 2 && n < cl_cap / 4 {
            cl_cap /= 2;
        }
        assert_eq!(
            (sh.capacity(), cl.capacity()),
            (sh_cap, cl_cap),
            "pop to {n}"
        );
        assert!(8 * sh.steal_range_len() >= n);
    }
    assert_eq!((sh.capacity(), cl.capacity()), (2, 2));
    assert_eq!(sh.steal_range_len(), 0);
}

/// Theorem 4.3 of Hendler and Shavit: k pushes, then k pops, without steals
/// cost Θ(log k) owner CAS operations on StealHalf. Pushes CAS once at 1
/// item and once at each power of two from 8 on; pops CAS when the length
/// falls to twice the range (a power of two), each time at least halving it.
#[test]
fn owner_cas_count_is_logarithmic() {
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 7, 64]
    } else {
        &[1, 2, 3, 8, 10, 1000, 1 << 16, 100_000]
    };
    for &k in sizes {
        let (mut owner, _thief) = StealHalf::with_capacity(2);
        for i in 0..k {
            owner.push(i).unwrap();
        }
        let log = u64::from(k.ilog2());
        assert_eq!(
            owner.stats().cas_attempted,
            1 + log.saturating_sub(2),
            "{k} pushes"
        );
        assert_eq!(owner.stats().cas_succeeded, owner.stats().cas_attempted);
        owner.reset_stats();
        while owner.pop().is_some() {}
        let pops_cas = owner.stats().cas_attempted;
        assert!(
            (1..=log + 1).contains(&pops_cas),
            "{k} pops: {pops_cas} CAS"
        );
        assert!(k < 1000 || pops_cas >= log / 2, "{k} pops: {pops_cas} CAS");
        assert_eq!(owner.stats().pops, k as u64);
    }
}

/// Pushes and pops that oscillate around a power of two cost no CAS: the
/// owner re-arms with hysteresis (the range is at most a quarter of the
/// deque, so the floor sits at or below its middle).
#[test]
fn oscillation_costs_no_cas() {
    let (mut owner, _thief) = StealHalf::with_capacity(2);
    for i in 0..64 {
        owner.push(i).unwrap();
    }
    owner.reset_stats();
    for i in 0..1000 {
        owner.push(i).unwrap();
        owner.push(i).unwrap();
        owner.pop().unwrap();
        owner.pop().unwrap();
        owner.pop().unwrap();
        owner.push(i).unwrap();
    }
    assert_eq!(owner.stats().cas_attempted, 0);
}

/// With m successful steals interleaved, a monotonic sequence of k pushes
/// costs O(log k + m) owner CAS (at most `log k + 1 + 2m`), and each steal
/// costs its thief exactly one CAS.
#[test]
fn owner_cas_count_with_steals() {
    let k: usize = if cfg!(miri) { 256 } else { 1 << 16 };
    let (mut owner, thief) = StealHalf::with_capacity(2);
    let (mut mine, _) = StealHalf::with_capacity(2);
    let mut stats = ThiefStats::default();
    for i in 0..k {
        owner.push(i).unwrap();
        if i % 97 == 96 {
            assert!(thief.steal_half(&mut mine, &mut stats).success().is_some());
            while mine.pop().is_some() {}
        }
    }
    let m = stats.steal_successes;
    assert_eq!(stats.cas_attempted, m);
    // One CAS per power of two on the way up, one to re-arm after each
    // steal, and at most one more per steal: a steal takes at most half, so
    // the refill re-crosses at most one power of two.
    let log = u64::from(k.ilog2()) + 1;
    assert!(
        owner.stats().cas_attempted <= log + 2 * m,
        "{:?}, m = {m}",
        owner.stats()
    );
    assert!(owner.stats().cas_attempted >= m);
}
