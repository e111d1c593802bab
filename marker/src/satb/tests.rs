//! The barrier buffers' queue: against a sequential model (proptest), and
//! under stress with more threads than cores (every entry taken exactly
//! once).

use proptest::prelude::*;
use stealmark_model::ObjRef;

use super::{Queue, Work};

/// An operation of one mutator thread (of three) on the queue, or of the
/// marker taking full buffers.
#[derive(Clone, Debug)]
enum Op {
    Record(usize),
    HandOff(usize),
    Release(usize),
    Acquire(usize),
    Take,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize).prop_map(Op::Record),
        1 => (0..3usize).prop_map(Op::HandOff),
        1 => (0..3usize).prop_map(Op::Release),
        1 => (0..3usize).prop_map(Op::Acquire),
        1 => Just(Op::Take),
    ]
}

proptest! {
    /// Entries recorded come out exactly once, through `take_full` or the
    /// remark's `take_remaining`, which fails exactly while a buffer is held.
    #[test]
    #[cfg_attr(miri, ignore = "proptest's failure persistence reads and writes files, which Miri's isolation does not allow")]
    fn queue_matches_its_model(ops in proptest::collection::vec(op(), 0..200)) {
        let q = Queue::new();
        let mut held: [Option<Vec<ObjRef>>; 3] = [None, None, None];
        let (mut recorded, mut taken) = (Vec::new(), Vec::new());
        let mut next = 0;
        for op in ops {
            match op {
                Op::Acquire(t) if held[t].is_none() => {
                    let b = q.acquire();
                    prop_assert!(b.is_empty());
                    held[t] = Some(b);
                }
                Op::Record(t) => if let Some(b) = &mut held[t] {
                    b.push(ObjRef::from_index(next));
                    recorded.push(next);
                    next += 1;
                },
                Op::HandOff(t) => if let Some(b) = &mut held[t] {
                    q.hand_off(b);
                    prop_assert!(b.is_empty());
                },
                Op::Release(t) => if let Some(b) = held[t].take() {
                    q.release(b, 1);
                },
                Op::Take => {
                    let full = q.take_full();
                    taken.extend(full.iter().flatten().map(|o| o.index()));
                    q.recycle(full.into_iter());
                }
                Op::Acquire(_) => {}
            }
        }
        let outstanding = held.iter().filter(|b| b.is_some()).count();
        match q.take_remaining() {
            Err(n) => prop_assert_eq!(n, outstanding),
            Ok(rest) => {
                prop_assert_eq!(outstanding, 0);
                taken.extend(rest.iter().flatten().map(|o| o.index()));
            }
        }
        for b in held.iter_mut() {
            if let Some(b) = b.take() {
                q.release(b, 0);
            }
        }
        taken.extend(q.take_remaining().unwrap().iter().flatten().map(|o| o.index()));
        taken.sort_unstable();
        prop_assert_eq!(taken, recorded);
    }
}

/// Sixteen mutator threads (more than the machine's cores) record and hand
/// off while a coordinator takes buffers and parks; every entry is taken
/// exactly once, by the coordinator or by the remark.
#[test]
fn sixteen_threads_hand_off_every_entry_exactly_once() {
    // Under Miri, fewer (it runs one thread at a time, slowly).
    const THREADS: usize = if cfg!(miri) { 3 } else { 16 };
    const PER_THREAD: usize = if cfg!(miri) { 800 } else { 20_000 };
    let q = Queue::new();
    let (mut seen, rest) = std::thread::scope(|s| {
        let coordinator = s.spawn(|| {
            let mut seen = Vec::new();
            while let Work::Buffers(full) = q.next_work() {
                seen.extend(full.iter().flatten().map(|o| o.index()));
                q.recycle(full.into_iter());
            }
            seen
        });
        let mutators: Vec<_> = (0..THREADS)
            .map(|t| {
                let q = &q;
                s.spawn(move || {
                    let mut b = q.acquire();
                    for i in 0..PER_THREAD {
                        b.push(ObjRef::from_index(t * PER_THREAD + i));
                        if b.len() == super::BUFFER_CAPACITY || i % 777 == 0 {
                            q.hand_off(&mut b);
                        }
                        if i % 5000 == 0 {
                            q.release(std::mem::take(&mut b), 0);
                            b = q.acquire();
                        }
                    }
                    q.release(b, 0);
                })
            })
            .collect();
        for m in mutators {
            m.join().unwrap();
        }
        q.stop();
        let seen = coordinator.join().unwrap();
        (seen, q.take_remaining().unwrap())
    });
    seen.extend(rest.iter().flatten().map(|o| o.index()));
    seen.sort_unstable();
    assert_eq!(seen.len(), THREADS * PER_THREAD);
    assert!(seen.iter().enumerate().all(|(i, &v)| i == v));
    assert!(q.is_quiet());
}
