//! Sequential model test of the idempotent deque's tickets and horizons
//! (`stealmark_deques::copies`): random operations on two deques that
//! steal from each other, checked against `VecDeque` models whose entries
//! carry a flag, set on every item a deque holds when a copy arrives (a
//! `steal_half` into it, or a `push_copy`): an item popped with the flag set
//! must have a ticket that the horizon says may share, and one without it
//! must not (single-threaded, no theft races a pop, so thefts never make a
//! popped ticket share). Popped tickets are also held across later
//! horizons, each of which [`flag`](stealmark_deques::copies::Horizon::flag)s
//! them, as a marker holds its prefetch FIFO's: a held ticket stays shared
//! if it was, and an exactly-once kind's never becomes shared. (A horizon
//! may flag a held ticket whose item no theft took: one that saw a theft
//! of a later item at the same index. That costs a claim, never a count.)
//! Every exactly-once kind's tickets never share.
#![cfg(not(loom))]

use std::collections::VecDeque;

use proptest::prelude::*;
use stealmark_deques::copies::Ticket;
use stealmark_deques::idempotent::Idempotent;
use stealmark_deques::steal_half::StealHalf;
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

#[derive(Debug, Clone)]
enum Op {
    /// `push` of this many new items onto deque `a` (0) or `b` (1).
    Push(usize, usize),
    /// `push_copy` of one new item.
    PushCopy(usize),
    /// This many pops.
    Pop(usize, usize),
    /// A single steal from the deque, pushed onto the other with `push_copy`
    /// (as the marker does).
    Steal(usize),
    /// A `steal_half` from the deque into the other.
    StealHalf(usize),
    /// Settles the tickets held from the deque's pops (flagged by every
    /// horizon since).
    Settle(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let side = 0..2usize;
    prop_oneof![
        4 => (side.clone(), 1..=40usize).prop_map(|(s, n)| Op::Push(s, n)),
        1 => side.clone().prop_map(Op::PushCopy),
        4 => (side.clone(), 1..=40usize).prop_map(|(s, n)| Op::Pop(s, n)),
        1 => side.clone().prop_map(Op::Steal),
        2 => side.clone().prop_map(Op::StealHalf),
        1 => side.prop_map(Op::Settle),
    ]
}

/// A deque's model: items, oldest first, each with its flag (a copy
/// arrived while it was held, or it is one).
type Model = VecDeque<(usize, bool)>;

/// Adds a copy to `m`: it and everything held get the flag.
fn add_copy(m: &mut Model, item: usize) {
    for e in m.iter_mut() {
        e.1 = true;
    }
    m.push_back((item, true));
}

/// Runs `ops` on two deques of kind `D` made `before_wrap` steps before
/// their wraps; `copies` says whether `D` marks tickets (else none ever
/// shares).
fn check<D: WorkDeque>(ops: &[Op], copies: bool, before_wrap: usize) {
    let (a, ta) = D::with_capacity_near_wrap(2, before_wrap);
    let (b, tb) = D::with_capacity_near_wrap(2, before_wrap);
    let mut owners = [a, b];
    let thieves = [ta, tb];
    let mut models = [Model::new(), Model::new()];
    // Per deque: the tickets popped and not yet settled, each with its item
    // and its model flag.
    let mut held: [Vec<(usize, Ticket, bool)>; 2] = [Vec::new(), Vec::new()];
    let mut next = 1;
    let mut stats = ThiefStats::default();
    for op in ops {
        match *op {
            Op::Push(s, n) => {
                for _ in 0..n {
                    owners[s].push(next).unwrap();
                    models[s].push_back((next, false));
                    next += 1;
                }
            }
            Op::PushCopy(s) => {
                owners[s].push_copy(next).unwrap();
                add_copy(&mut models[s], next);
                next += 1;
            }
            Op::Pop(s, n) => {
                for _ in 0..n {
                    let got = owners[s].pop_ticketed();
                    let horizon = owners[s].horizon();
                    for (_, t, _) in &mut held[s] {
                        *t = horizon.flag(*t);
                    }
                    let want = models[s].pop_back();
                    match (got, want) {
                        (None, None) => break,
                        (Some((item, ticket)), Some((want, flagged))) => {
                            assert_eq!(item, want, "{op:?}");
                            assert_eq!(
                                horizon.may_share(ticket),
                                copies && flagged,
                                "{op:?}: item {item}, ticket {ticket:?}, horizon {horizon:?}"
                            );
                            held[s].push((item, horizon.flag(ticket), flagged));
                        }
                        (got, want) => panic!("{op:?}: popped {got:?}, model {want:?}"),
                    }
                }
            }
            Op::Steal(s) => match thieves[s].steal(&mut stats) {
                Steal::Success(item) => {
                    assert_eq!(Some(item), models[s].pop_front().map(|e| e.0));
                    owners[1 - s].push_copy(item).unwrap();
                    add_copy(&mut models[1 - s], item);
                }
                Steal::Empty => assert!(models[s].is_empty()),
                Steal::Abort => panic!("a single-threaded steal aborted"),
            },
            Op::StealHalf(s) => {
                let [x, y] = &mut owners;
                let dest = if s == 0 { y } else { x };
                let moved = match thieves[s].steal_half(dest, &mut stats) {
                    Steal::Success(n) => n,
                    Steal::Empty => 0,
                    Steal::Abort => panic!("a single-threaded steal aborted"),
                };
                // The idempotent deque moves half, rounded up; StealHalf
                // moves its steal range, at most that.
                let half = models[s].len().div_ceil(2);
                assert!(if copies { moved == half } else { moved <= half });
                for _ in 0..moved {
                    let (item, _) = models[s].pop_front().unwrap();
                    add_copy(&mut models[1 - s], item);
                }
            }
            Op::Settle(s) => {
                for (item, ticket, flagged) in held[s].drain(..) {
                    if copies {
                        assert!(
                            ticket.is_shared() || !flagged,
                            "{op:?}: held item {item}, ticket {ticket:?} lost its flag"
                        );
                    } else {
                        assert!(!ticket.is_shared(), "{op:?}: held item {item}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn idempotent_tickets_share_exactly_when_a_copy_arrived(
        ops in prop::collection::vec(op(), 1..60),
    ) {
        check::<Idempotent>(&ops, true, 0);
    }

    /// The same across the wraps of the full index (and of the 32-bit head
    /// and the tag): tickets and horizons compare on a circle.
    #[test]
    fn idempotent_tickets_across_the_wraps(
        ops in prop::collection::vec(op(), 1..60),
        before_wrap in 0..40usize,
    ) {
        check::<Idempotent>(&ops, true, before_wrap);
    }

    /// An exactly-once kind: no ticket ever shares.
    #[test]
    fn exactly_once_tickets_never_share(ops in prop::collection::vec(op(), 1..60)) {
        check::<StealHalf>(&ops, false, 0);
    }
}
