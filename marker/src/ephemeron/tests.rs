//! The key index against a sequential model (proptest), and the protocol
//! under real threads, more of them than cores: every entry whose key ends
//! marked is taken exactly once, no other entry is taken.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_model::{MarkBitmap, ObjRef};

use super::dense::Dense;
use super::{fence, KeyIndex};

#[derive(Clone, Debug)]
enum Op {
    Insert(usize, usize),
    /// Registers a batch (`register`); keys divisible by 5 count as marked
    /// (their values are ready at once).
    Batch(Vec<(usize, usize)>),
    Take(usize),
    /// Looks a key up in a frozen view (nothing is removed).
    Lookup(usize),
    Reset(usize),
}

/// The dense table's bound in the model test: above every key `op` makes.
const DENSE_BOUND: usize = 2000 * 997;

fn op() -> impl Strategy<Value = Op> {
    // Keys spread over a few pages and shards: index i is word (i+1)*8, so
    // 0..2000 spans four 4 KiB pages; every 997th key is far away.
    let key = (0usize..2000, any::<bool>()).prop_map(|(k, far)| if far { k * 997 } else { k });
    prop_oneof![
        8 => (key.clone(), 0usize..10_000).prop_map(|(k, v)| Op::Insert(k, v)),
        2 => proptest::collection::vec((key.clone(), 0usize..10_000), 0..40).prop_map(Op::Batch),
        4 => key.clone().prop_map(Op::Take),
        3 => key.prop_map(Op::Lookup),
        1 => (0usize..500_000).prop_map(Op::Reset),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Inserts and takes match a map from key to the list of its values
    /// (newest first), and the filter never forgets a key; with the hashed
    /// shards and with the dense table (where registering is by batch, as
    /// the engine does, alone or not, and a frozen lookup empties the key,
    /// as the engine looks each marked key up once).
    #[test]
    #[cfg_attr(miri, ignore = "proptest's failure persistence reads and writes files, which Miri's isolation does not allow")]
    fn matches_a_map_of_lists(
        ops in proptest::collection::vec(op(), 1..400),
        dense in any::<bool>(),
        alone in any::<bool>(),
    ) {
        let mut index = KeyIndex::new();
        let bound = dense.then_some(DENSE_BOUND);
        // Enough keys for the dense table (its size per key is bounded).
        index.reset(DENSE_BOUND / 8, bound);
        let mut dense = index.is_dense();
        prop_assert_eq!(dense, bound.is_some());
        let mut model: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let number = |k: ObjRef| bound.map(|_| k.index());
        for op in ops {
            let op = match op {
                Op::Insert(k, v) if dense => Op::Batch(vec![(k, v)]),
                op => op,
            };
            match op {
                Op::Insert(k, v) => {
                    index.insert(ObjRef::from_index(k), ObjRef::from_index(v));
                    model.entry(k).or_default().push(v);
                    prop_assert!(index.may_hold(ObjRef::from_index(k)));
                }
                Op::Batch(entries) => {
                    let mut refs: Vec<(ObjRef, ObjRef)> = entries
                        .iter()
                        .map(|&(k, v)| (ObjRef::from_index(k), ObjRef::from_index(v)))
                        .collect();
                    index.reserve(refs.len());
                    let marked = |k: ObjRef| k.index() % 5 == 0;
                    let mut ready = Vec::new();
                    let n = index.register(&mut refs, marked, number, alone, &mut ready, &mut scratch);
                    let total = entries.len();
                    let mut expect_ready = Vec::new();
                    for (k, v) in entries {
                        if k % 5 == 0 {
                            expect_ready.push(v);
                        } else {
                            model.entry(k).or_default().push(v);
                        }
                    }
                    let ready: Vec<usize> = ready.iter().map(|r| r.index()).collect();
                    prop_assert_eq!(n, total - expect_ready.len());
                    prop_assert_eq!(ready, expect_ready);
                }
                Op::Lookup(k) => {
                    out.clear();
                    let frozen = index.freeze();
                    let n = frozen.lookup(ObjRef::from_index(k), number(ObjRef::from_index(k)), &mut out);
                    let mut expect = if dense {
                        model.remove(&k).unwrap_or_default()
                    } else {
                        model.get(&k).cloned().unwrap_or_default()
                    };
                    expect.reverse();
                    let got: Vec<usize> = out.iter().map(|r| r.index()).collect();
                    prop_assert_eq!(n, got.len());
                    prop_assert_eq!(got, expect);
                    for &k in model.keys() {
                        prop_assert!(frozen.may_hold(ObjRef::from_index(k)));
                    }
                }
                Op::Take(k) => {
                    out.clear();
                    let n = index.take(ObjRef::from_index(k), number(ObjRef::from_index(k)), &mut out);
                    let mut expect = model.remove(&k).unwrap_or_default();
                    expect.reverse();
                    let got: Vec<usize> = out.iter().map(|r| r.index()).collect();
                    prop_assert_eq!(n, got.len());
                    prop_assert_eq!(got, expect);
                }
                Op::Reset(keys) => {
                    index.reset(keys, bound);
                    dense = index.is_dense();
                    model.clear();
                }
            }
            for &k in model.keys() {
                prop_assert!(index.may_hold(ObjRef::from_index(k)));
            }
        }
        prop_assert_eq!(index.waiting(), model.values().map(Vec::len).sum::<usize>());
    }
}

/// One stress run: `threads` threads share `keys` keys; each registers its
/// own entries (entry `e` has value `e`) and marks random keys, following
/// the protocol of the module documentation. Returns how often each entry
/// was taken and the final marks.
/// How the entries were taken, over a stress run: by the registrant after
/// its fence, or by a marker after its fence.
#[derive(Default)]
struct Paths {
    registrant: AtomicU32,
    marker: AtomicU32,
}

/// The key of entry `e` in round `round`: one of the round's `block` keys.
fn entry_key(e: usize, round: usize, block: usize) -> usize {
    round * block + (e.wrapping_mul(0x9E37_79B9) >> 7) % block
}

/// One stress run: `threads` threads, `rounds` rounds separated by a
/// barrier. In each round every thread registers `per_round` entries (entry
/// `e` has value `e`) on the round's `block` keys and marks random keys of
/// the block, following the protocol of the module documentation, so that
/// registrants and markers meet on the same keys. Keys divisible by 3 are
/// never marked. Returns how often each entry was taken and the marks.
fn stress(
    threads: usize,
    rounds: usize,
    block: usize,
    per_round: usize,
    seed: u64,
    paths: &Paths,
) -> (Vec<u32>, MarkBitmap) {
    let keys = rounds * block;
    let mut index = KeyIndex::new();
    index.reset(keys, None);
    let marks = MarkBitmap::new(keys);
    let per_thread = rounds * per_round;
    let taken: Vec<AtomicU32> = (0..threads * per_thread)
        .map(|_| AtomicU32::new(0))
        .collect();
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (index, marks, taken, barrier) = (&index, &marks, &taken, &barrier);
            s.spawn(move || {
                let mut rng = Pcg64::seed_from_u64(seed ^ (t as u64) << 32);
                let mut out = Vec::new();
                let record = |out: &mut Vec<ObjRef>| {
                    for v in out.drain(..) {
                        taken[v.index()].fetch_add(1, Ordering::Relaxed);
                    }
                };
                for round in 0..rounds {
                    barrier.wait();
                    let first = t * per_thread + round * per_round;
                    let mut next = first;
                    while next < first + per_round {
                        if rng.random_bool(0.5) {
                            let (e, key) = (next, entry_key(next, round, block));
                            next += 1;
                            if marks.contains(key) {
                                // Fast path: the key is already marked.
                                taken[e].fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                            if rng.random_bool(0.1) {
                                // A registrant preempted between its first
                                // check and its insert: the window in which
                                // only its re-check can see the mark.
                                std::thread::yield_now();
                            }
                            index.insert(ObjRef::from_index(key), ObjRef::from_index(e));
                            fence();
                            if marks.contains(key) {
                                let n = index.take(ObjRef::from_index(key), None, &mut out);
                                paths.registrant.fetch_add(n as u32, Ordering::Relaxed);
                                record(&mut out);
                            }
                        } else {
                            let key = round * block + rng.random_range(0..block);
                            if key % 3 != 0 && rng.random_bool(0.2) && marks.set(key) {
                                fence();
                                if index.may_hold(ObjRef::from_index(key)) {
                                    let n = index.take(ObjRef::from_index(key), None, &mut out);
                                    paths.marker.fetch_add(n as u32, Ordering::Relaxed);
                                    record(&mut out);
                                }
                            }
                        }
                    }
                }
            });
        }
    });
    let taken = taken.into_iter().map(AtomicU32::into_inner).collect();
    (taken, marks)
}

#[test]
fn every_entry_of_a_marked_key_is_taken_exactly_once_under_contention() {
    // More threads than the machine's cores, meeting on a few keys a round.
    let threads = 2 * std::thread::available_parallelism().map_or(2, |n| n.get()) + 2;
    let (rounds, per_round) = if cfg!(miri) { (4, 8) } else { (300, 64) };
    let paths = Paths::default();
    for seed in 0..if cfg!(miri) { 1 } else { 3 } {
        for block in [3, 16] {
            let (taken, marks) = stress(threads, rounds, block, per_round, seed, &paths);
            for (e, &n) in taken.iter().enumerate() {
                let round = (e % (rounds * per_round)) / per_round;
                let key = entry_key(e, round, block);
                let expect = u32::from(marks.contains(key));
                assert!(key % 3 != 0 || expect == 0);
                assert_eq!(
                    n, expect,
                    "entry {e} (key {key}) taken {n} times, seed {seed}"
                );
            }
        }
    }
    // Both sides of the protocol took entries: the registrant's path needs
    // a mark between its first check and its re-check.
    let (r, m) = (paths.registrant.into_inner(), paths.marker.into_inner());
    eprintln!("entries taken by registrants {r}, by markers {m}");
    assert!(r > 0 && m > 0, "registrant path {r}, marker path {m}");
}

/// The dense table under real threads, more of them than cores: a
/// `register` step's workers insert entries for a few shared keys at once
/// (the heads' swaps), then, after a barrier (the step's hand-off), every
/// thread takes random keys at once (the shared protocol's takes). Every
/// entry is taken exactly once, by whichever thread swapped its key's head.
#[test]
fn dense_entries_are_linked_and_taken_exactly_once_under_contention() {
    let threads = 2 * std::thread::available_parallelism().map_or(2, |n| n.get()) + 2;
    let (keys, per_thread) = if cfg!(miri) { (3, 8) } else { (64, 4000) };
    let mut dense = Dense::new();
    for seed in 0..if cfg!(miri) { 1 } else { 3 } {
        dense.reset(keys);
        dense.reserve(threads * per_thread);
        let taken: Vec<AtomicU32> = (0..threads * per_thread)
            .map(|_| AtomicU32::new(0))
            .collect();
        let takers = AtomicU32::new(0);
        let barrier = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (dense, taken, barrier, takers) = (&dense, &taken, &barrier, &takers);
                s.spawn(move || {
                    let mut rng = Pcg64::seed_from_u64(seed ^ (t as u64) << 32);
                    // Claims in a few batches, as workers of successive
                    // rounds would, so that ids interleave between threads.
                    for batch in 0..4 {
                        let n = per_thread / 4;
                        let base = dense.claim(n);
                        for id in base..base + n {
                            let value = t * per_thread + batch * n + id - base;
                            dense.insert(id, rng.random_range(0..keys), value, false);
                        }
                    }
                    barrier.wait();
                    let mut mine = 0;
                    for _ in 0..keys {
                        dense.take(rng.random_range(0..keys), |v| {
                            taken[v].fetch_add(1, Ordering::Relaxed);
                            mine += 1;
                        });
                    }
                    if mine > 0 {
                        takers.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        for key in 0..keys {
            dense.take(key, |v| {
                taken[v].fetch_add(1, Ordering::Relaxed);
            });
        }
        assert_eq!(dense.waiting(), 0);
        for (v, n) in taken.iter().enumerate() {
            assert_eq!(n.load(Ordering::Relaxed), 1, "entry {v}, seed {seed}");
        }
        // The takes raced: more than one thread took lists.
        assert!(takers.into_inner() > 1, "one thread took every list");
    }
}
