//! The runtime contract through the engine, against the sequential oracle:
//! small graphs worked out by hand, random graphs with every slot kind
//! (proptest, and a fixed matrix over every deque kind, worker count, soft
//! policy and both mark stores), a panicked collection leaving nothing
//! behind, the mark store's range check, and ten million roots in chunks.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{
    check, check_with_headers, expect, inputs, matrix, policies, policies_for, r, random_graph,
    workers, Dyn, Graph, Kind,
};
use proptest::prelude::*;
use stealmark_heap::{oracle, OracleInput};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{
    Collection, DequeKind, MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel, RootSource,
    SlotKind, StepKind,
};
use strum::VariantArray;

fn config(workers: usize, deque: DequeKind, n: usize) -> MarkerConfig {
    let mut c = MarkerConfig::with_workers(workers);
    c.set_deque(deque);
    c.set_deque_capacity(16);
    c.set_array_chunk(16);
    c.set_balance_interval(1 + (n % 7) as u32);
    c.set_private_work(n % 2 == 0);
    c.set_prefetch([8, 0, 3][n % 3]);
    c.set_seed(n as u64);
    // A third of the configurations share the ephemeron key index at once,
    // a third after one frozen round (whose entries, in the dense table
    // where the heap is small, the shared round then takes).
    c.set_ephemeron_frozen_rounds([4, 0, 1][(n / 2) % 3]);
    c
}

/// Root 0 holds weak and phantom references to the finalizable 1, which
/// reaches 2 (also finalizable) and holds weak references to 3 (dead) and 2;
/// 4 is finalizable and reachable. A WeakMap 5 (reachable) has entries
/// (6 -> 7), key reachable from the resurrected 1, and (8 -> 9), key dead; a
/// chain (9 -> 10 -> 11) hangs off the dead key.
fn hand_made() -> Graph {
    use Kind::*;
    Graph(vec![
        vec![
            (1, Weak),
            (1, Phantom),
            (4, Strong),
            (5, Strong),
            (12, Soft),
        ],
        vec![(2, Strong), (3, Weak), (2, Weak), (6, Strong)],
        vec![(3, Phantom)],
        vec![],
        vec![],
        vec![
            (6, Weak),
            (7, Ephemeron(6)),
            (8, Weak),
            (9, Ephemeron(8)),
            (10, Ephemeron(9)),
            (11, Ephemeron(10)),
        ],
        vec![],
        vec![(13, Soft)],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![(7, Soft)],
        vec![],
    ])
}

#[test]
fn the_hand_made_graph_matches_the_oracle_everywhere() {
    let g = hand_made();
    let roots = [r(0)];
    let finalizable = [r(4), r(2), r(1), r(2)];
    let mut n = 0;
    for (deque, workers) in matrix(&[1, 2, 3, 8, 16]) {
        n += 1;
        let mut marker = Marker::new(config(workers, deque, n)).unwrap();
        for soft_refs in policies_for(n) {
            for fin in [&finalizable[..], &[]] {
                let input = OracleInput {
                    roots: &roots,
                    finalizable: fin,
                    soft_refs,
                };
                let e = expect(&g, &input);
                let what = format!("{deque} w={workers} {soft_refs:?} fin={}", fin.len());
                check(&mut marker, &Dyn::of(&g), &input, &e, &what);
                // Under Miri, the bitmap only.
                if !cfg!(miri) {
                    check_with_headers(&mut marker, &g, &input, &e, &what);
                }
            }
        }
    }
    // The figures worked out by hand, once.
    let input = OracleInput {
        roots: &roots,
        finalizable: &finalizable,
        soft_refs: SoftRefs::ClearAll,
    };
    let o = oracle(&g, &input);
    assert_eq!(o.to_finalize, vec![r(1), r(2)]);
    assert_eq!(
        o.marked.iter().collect::<Vec<_>>(),
        vec![0, 1, 2, 4, 5, 6, 7]
    );
}

/// Java's reference order (`docs/design.md`, "Why this order") as a
/// property of the engine's output on the hand-made graph, soft references
/// cleared: a weak reference to an object that finalization resurrects is
/// cleared (J1 comes first), a phantom reference to it is not (J2 comes
/// after resurrection), an ephemeron whose key only a resurrected object
/// reaches keeps its value, and a weak slot found only while resurrecting
/// is judged against the resurrected set.
#[test]
fn java_order_weak_before_finalization_phantom_and_ephemerons_after() {
    let g = hand_made();
    let roots = [r(0)];
    let finalizable = [r(4), r(2), r(1), r(2)];
    let c = Collection::new(&roots[..]).finalizable(&finalizable[..]);
    for workers in workers(&[1, 2, 8]) {
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        let m = marker.collect(&Dyn::of(&g), &c);
        let report = m.report();
        let mut cleared: Vec<(usize, usize)> = report
            .cleared()
            .map(|w| (w.holder.index(), w.slot))
            .collect();
        cleared.sort_unstable();
        let mut to_finalize: Vec<usize> = report.to_finalize().map(|o| o.index()).collect();
        to_finalize.sort_unstable();
        assert_eq!(to_finalize, [1, 2], "w={workers}");
        assert!(
            m.is_marked(&g, r(1)) && m.is_marked(&g, r(2)),
            "resurrected"
        );
        assert!(
            cleared.contains(&(0, 0)),
            "weak to the resurrected 1: cleared at J1"
        );
        assert!(
            !cleared.contains(&(0, 1)),
            "phantom to the resurrected 1: kept"
        );
        assert!(
            !cleared.contains(&(5, 1)),
            "key 6 reached from the resurrected 1"
        );
        assert!(m.is_marked(&g, r(7)), "so its value 7 is live");
        assert!(
            !cleared.contains(&(1, 2)),
            "weak 1 -> 2 found resurrecting, 2 live"
        );
        assert!(
            cleared.contains(&(2, 0)),
            "phantom to the dead 3: cleared at J2"
        );
        assert_eq!(
            cleared,
            [
                (0, 0),
                (0, 4),
                (1, 1),
                (2, 0),
                (5, 0),
                (5, 2),
                (5, 3),
                (5, 4),
                (5, 5),
                (7, 0)
            ],
            "w={workers}"
        );
    }
}

/// WeakMap entries judged at both ends of finalization (J1 keeps listed
/// for J2 only the entries whose key it found dead): root 0 reaches the
/// WeakMap 1, whose entries are (3 -> 4), its key the finalizable 3 (dead
/// at J1, resurrected), and (5 -> 6), key dead. The resurrected 3 holds the
/// WeakMap 7, found only while resurrecting: (8 -> 9), key dead, and
/// (3 -> 10), key resurrected.
#[test]
fn weak_map_entries_are_judged_before_and_after_resurrection() {
    use Kind::*;
    let g = Graph(vec![
        vec![(1, Strong)],
        vec![(3, Weak), (4, Ephemeron(3)), (5, Weak), (6, Ephemeron(5))],
        vec![],
        vec![(7, Strong)],
        vec![],
        vec![],
        vec![],
        vec![(8, Weak), (9, Ephemeron(8)), (3, Weak), (10, Ephemeron(3))],
        vec![],
        vec![],
        vec![],
    ]);
    let roots = [r(0)];
    let finalizable = [r(3)];
    let input = OracleInput {
        roots: &roots,
        finalizable: &finalizable,
        soft_refs: SoftRefs::ClearAll,
    };
    let e = expect(&g, &input);
    let mut n = 0;
    for (deque, workers) in matrix(&[1, 2, 3, 8]) {
        n += 1;
        let mut marker = Marker::new(config(workers, deque, n)).unwrap();
        check(
            &mut marker,
            &Dyn::of(&g),
            &input,
            &e,
            &format!("{deque} w={workers}"),
        );
        let c = Collection::new(&roots[..]).finalizable(&finalizable[..]);
        let m = marker.collect(&Dyn::of(&g), &c);
        let mut cleared: Vec<(usize, usize)> = m
            .report()
            .cleared()
            .map(|w| (w.holder.index(), w.slot))
            .collect();
        cleared.sort_unstable();
        assert_eq!(
            cleared,
            [(1, 0), (1, 2), (1, 3), (7, 0), (7, 1)],
            "{deque} w={workers}: the key slot of the resurrected 3 at J1, \
                 the dead keys' entries and key slots, found before J1 and after"
        );
        let marked: Vec<usize> = (0..11).filter(|&i| m.is_marked(&g, r(i))).collect();
        assert_eq!(marked, [0, 1, 3, 4, 7, 10], "{deque} w={workers}");
    }
}

/// A frozen step after every registered entry was released checks
/// nothing: root 0 reaches the WeakMap 1, entry (2 -> 4), whose key only
/// the soft referent 3 reaches; the finalizable 6 is dead. When the policy
/// keeps 3 (asked: `KeepThirds`), the `soft` step marks the key and
/// releases the entry, and the `finalize` step does not watch the index;
/// when soft referents are cleared, the entry still waits then, and it
/// watches.
#[test]
fn finalizing_after_every_entry_was_released_checks_nothing() {
    use Kind::*;
    let g = Graph(vec![
        vec![(1, Strong), (3, Soft)],
        vec![(2, Weak), (4, Ephemeron(2))],
        vec![],
        vec![(2, Strong)],
        vec![(5, Strong)],
        vec![],
        vec![(5, Weak)],
    ]);
    let roots = [r(0)];
    let finalizable = [r(6)];
    let [clear, _, ask] = policies();
    for (deque, workers) in matrix(&[1, 2, 3, 8]) {
        let mut c = MarkerConfig::with_workers(workers);
        c.set_deque(deque);
        let mut marker = Marker::new(c).unwrap();
        for (soft_refs, released) in [(ask, true), (clear, false)] {
            let input = OracleInput {
                roots: &roots,
                finalizable: &finalizable,
                soft_refs,
            };
            let what = format!("{deque} w={workers} {soft_refs:?}");
            check(
                &mut marker,
                &Dyn::of(&g),
                &input,
                &expect(&g, &input),
                &what,
            );
            let c = Collection::new(&roots[..])
                .finalizable(&finalizable[..])
                .soft_refs(soft_refs);
            let m = marker.collect(&Dyn::of(&g), &c);
            let steps: Vec<(StepKind, bool)> =
                m.stats.steps.iter().map(|s| (s.kind, s.watch)).collect();
            let mut want = vec![
                (StepKind::Roots, false),
                (StepKind::Register, false),
                (StepKind::Resolve, true),
            ];
            if released {
                want.push((StepKind::Soft, true));
            }
            want.extend([(StepKind::Finalize, !released), (StepKind::Judge, false)]);
            assert_eq!(steps, want, "{what}");
            assert_eq!(m.is_marked(&g, r(4)), released, "{what}: the value");
        }
    }
}

#[test]
fn a_long_ephemeron_chain_resolves_in_one_round() {
    // Table 0: entry k has key k + 1 and value k + 2; the chain runs
    // backwards through the table, as the `ephemeron-chain` shape's.
    let n = if cfg!(miri) { 200 } else { 20_000 };
    let table = (0..n)
        .rev()
        .map(|k| (k + 2, Kind::Ephemeron(k + 1)))
        .collect();
    let mut objects = vec![table];
    objects.extend((0..n + 1).map(|_| Vec::new()));
    let g = Graph(objects);
    let roots = [r(0), r(1)];
    let input = OracleInput::roots(&roots);
    let e = expect(&g, &input);
    for workers in workers(&[1, 2, 8]) {
        let mut c = MarkerConfig::with_workers(workers);
        c.set_array_chunk(64);
        let mut marker = Marker::new(c).unwrap();
        check(
            &mut marker,
            &Dyn::of(&g),
            &input,
            &e,
            &format!("chain w={workers}"),
        );
        let m = marker.mark(&Dyn::of(&g), &roots);
        let steps: Vec<StepKind> = m.stats.steps.iter().map(|s| s.kind).collect();
        assert_eq!(
            steps,
            [
                StepKind::Roots,
                StepKind::Register,
                StepKind::Resolve,
                StepKind::Judge
            ]
        );
        let eph = m.report().ephemerons();
        assert_eq!(
            (eph.pairs, eph.values_traced, eph.rounds),
            (n as u64, n as u64, 1)
        );
        assert_eq!(eph.registered, eph.released);
    }
}

/// `levels` nested WeakMaps: value `V_i` holds the map `M_{i+1}` and, 20
/// objects down a list, its entry's key `K_{i+1}`; so each map is found
/// with its key unmarked (one worker scans `M_{i+1}` before the list) and
/// each level takes a round of its own.
fn nested_maps(levels: usize) -> (Graph, Vec<ObjRef>) {
    use Kind::*;
    let mut objects: Vec<Vec<(usize, Kind)>> = Vec::new();
    let mut new = |slots: Vec<(usize, Kind)>| {
        objects.push(slots);
        objects.len() - 1
    };
    // Built from the innermost level out: `value` is V_i.
    let mut value = new(vec![]);
    for _ in 0..levels {
        let key = new(vec![]);
        let map = new(vec![(key, Weak), (value, Ephemeron(key))]);
        let mut path = key;
        for _ in 0..20 {
            path = new(vec![(path, Strong)]);
        }
        // Slot order: the list first, the map last, so the map is popped
        // (and scanned) first.
        value = new(vec![(path, Strong), (map, Strong)]);
    }
    (Graph(objects), vec![r(value)])
}

#[test]
fn nested_weak_maps_take_rounds_then_share_the_index() {
    let levels = 12;
    let (g, roots) = nested_maps(levels);
    for soft_refs in policies_for(0) {
        let input = OracleInput {
            roots: &roots,
            finalizable: &[],
            soft_refs,
        };
        let e = expect(&g, &input);
        assert_eq!(
            e.oracle.objects as usize,
            g.0.len(),
            "everything is reachable"
        );
        for (deque, workers) in matrix(&[1, 2, 3, 8, 16]) {
            let mut c = MarkerConfig::with_workers(workers);
            c.set_deque(deque);
            let mut marker = Marker::new(c).unwrap();
            let what = format!("nested {deque} w={workers} {soft_refs:?}");
            check(&mut marker, &Dyn::of(&g), &input, &e, &what);
            // Under Miri, the bitmap only.
            if !cfg!(miri) {
                check_with_headers(&mut marker, &g, &input, &e, &what);
            }
        }
    }
    // One worker scans each map before its key's list: every level is a
    // round, so the frozen rounds run out and a shared round finishes.
    let mut c = MarkerConfig::with_workers(1);
    c.set_prefetch(0);
    let mut marker = Marker::new(c).unwrap();
    let m = marker.mark(&Dyn::of(&g), &roots);
    let eph = m.report().ephemerons();
    let registers = m
        .stats
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Register)
        .count();
    assert_eq!(registers, 4, "{:?}", m.stats.steps);
    assert_eq!(eph.rounds, 5, "four frozen rounds and a shared one");
    assert_eq!(eph.values_traced, levels as u64);
}

#[test]
fn without_live_counting_the_marks_are_the_same_and_bytes_are_zero() {
    let (g, roots, finalizable) = random_graph(9, if cfg!(miri) { 60 } else { 500 });
    let input = OracleInput {
        roots: &roots,
        finalizable: &finalizable,
        soft_refs: SoftRefs::ClearAll,
    };
    let o = oracle(&g, &input);
    let mut c = MarkerConfig::with_workers(2);
    c.set_count_live(false);
    let mut marker = Marker::new(c).unwrap();
    let collection = Collection::new(&roots[..]).finalizable(&finalizable[..]);
    let m = marker.collect(&Dyn::of(&g), &collection);
    assert!(*m.bitmap == o.marked);
    let report = m.report();
    assert_eq!(report.live_objects(), o.objects);
    assert_eq!(report.live_bytes(), 0);
    assert!(report.live_by_type().is_empty());
}

/// The finalizable objects' chunks are shared out by worker index, not
/// claimed: every worker resurrects (and then traces from) its share, even
/// when one of them ends its J1 long before the others. Four chunks of
/// unreachable objects: with 2 workers each finalizes two chunks' worth,
/// with 3 workers worker 0 two and the others one.
#[test]
fn finalizable_chunks_are_shared_out_by_worker() {
    let chunk = stealmark_marker::model::ROOT_CHUNK;
    let n = 1 + 4 * chunk;
    let g = Graph(vec![Vec::new(); n]);
    let roots = [r(0)];
    let finalizable: Vec<ObjRef> = (1..n).map(r).collect();
    let c = Collection::new(&roots[..]).finalizable(&finalizable[..]);
    for (workers, shares) in [(1, vec![4]), (2, vec![2, 2]), (3, vec![2, 1, 1])] {
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        let m = marker.collect(&Dyn::of(&g), &c);
        let finalized: Vec<u64> = m.stats.workers.iter().map(|w| w.stats.finalized).collect();
        let expect: Vec<u64> = shares.iter().map(|&k| (k * chunk) as u64).collect();
        assert_eq!(finalized, expect, "w={workers}");
        assert_eq!(m.report().to_finalize().count(), n - 1);
    }
}

#[test]
fn a_heap_of_strong_slots_takes_one_step() {
    let g = Graph(
        (0..100)
            .map(|i| vec![((i + 1) % 100, Kind::Strong)])
            .collect(),
    );
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    let m = marker.mark(&Dyn::of(&g), &[r(0)]);
    assert_eq!(m.bitmap.count(), 100);
    assert_eq!(m.stats.steps.len(), 1);
    assert_eq!(m.stats.steps[0].kind, StepKind::Roots);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random graphs with every slot kind, random roots, finalizable objects
    /// and soft policy, on a random configuration.
    #[test]
    #[cfg_attr(miri, ignore = "proptest's failure persistence reads and writes files, which Miri's isolation does not allow")]
    fn random_graphs_match_the_oracle(
        seed in any::<u64>(),
        n in 1usize..400,
        policy in 0usize..3,
        deque in prop::sample::select(DequeKind::VARIANTS.to_vec()),
        workers in prop::sample::select(vec![1usize, 2, 3, 8, 16]),
        headers in any::<bool>(),
    ) {
        let (g, roots, finalizable) = random_graph(seed, n);
        let input = OracleInput { roots: &roots, finalizable: &finalizable, soft_refs: policies()[policy] };
        let e = expect(&g, &input);
        let mut marker = Marker::new(config(workers, deque, seed as usize)).unwrap();
        let what = format!("seed {seed} n {n} {deque} w={workers} policy {policy}");
        check(&mut marker, &Dyn::of(&g), &input, &e, &what);
        if headers {
            check_with_headers(&mut marker, &g, &input, &e, &what);
        }
    }
}

#[test]
fn random_graphs_match_the_oracle_for_every_deque_worker_count_and_policy() {
    // Under Miri, graphs of 40 to 80 objects (still with arrays of 40 or
    // more slots, scanned in 16-slot chunks).
    let size = |s: u64| if cfg!(miri) { 40 + 20 * s } else { 300 + 200 * s } as usize;
    let graphs: Vec<_> = (0..3).map(|s| random_graph(s, size(s))).collect();
    let mut n = 0;
    for (deque, workers) in matrix(&[1, 2, 3, 8, 16]) {
        n += 1;
        let mut marker = Marker::new(config(workers, deque, n)).unwrap();
        for (s, (g, roots, finalizable)) in graphs.iter().enumerate() {
            for input in inputs(roots, finalizable) {
                let e = expect(g, &input);
                let what = format!("graph {s} {deque} w={workers} {:?}", input.soft_refs);
                check(&mut marker, &Dyn::of(g), &input, &e, &what);
                check_with_headers(&mut marker, g, &input, &e, &what);
            }
        }
    }
}

/// A graph whose `scan_slots` panics at one object, after the workers have
/// filled their deques.
struct Exploding {
    inner: Graph,
    at: usize,
}

impl ObjectModel for Exploding {
    fn size_bytes(&self, o: ObjRef) -> usize {
        self.inner.size_bytes(o)
    }
    fn slot_count(&self, o: ObjRef) -> usize {
        self.inner.slot_count(o)
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        o: ObjRef,
        s: std::ops::Range<usize>,
        v: V,
    ) {
        assert!(
            o.index() != self.at,
            "the heap breaks its contract at object {}",
            self.at
        );
        self.inner.scan_slots(o, s, v);
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for Exploding {
    fn mark_index_bound(&self) -> usize {
        self.inner.0.len()
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}

#[test]
fn a_collection_that_panicked_leaves_nothing_behind() {
    // A wide tree: the root has 2,000 children (under Miri 30), each with
    // 8; object 50 panics.
    let children = if cfg!(miri) { 30 } else { 2000 };
    let n = 1 + children + 8 * children;
    let mut objects: Vec<Vec<(usize, Kind)>> =
        vec![(1..=children).map(|c| (c, Kind::Strong)).collect()];
    for c in 1..=children {
        objects.push(
            (0..8)
                .map(|k| (1 + children + (c - 1) * 8 + k, Kind::Strong))
                .collect(),
        );
    }
    objects.resize(n, Vec::new());
    let heap = Exploding {
        inner: Graph(objects),
        at: 50,
    };
    for (deque, workers) in matrix(&[1, 2]) {
        let mut c = MarkerConfig::with_workers(workers);
        c.set_deque(deque);
        c.set_deque_capacity(64);
        c.set_private_work(false);
        let mut marker = Marker::new(c).unwrap();
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            marker.mark(&Dyn::of(&heap), &[r(0)]).stats.objects_marked()
        }));
        std::panic::set_hook(hook);
        let message = result.expect_err("object 50 panics");
        let message = message
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert!(message.contains("breaks its contract"), "{message}");
        let m = marker.mark(&Dyn::of(&heap), &[]);
        assert_eq!(
            m.bitmap.count(),
            0,
            "{deque} w={workers}: left-over work was marked"
        );
        assert_eq!(m.stats.objects_marked(), 0, "{deque} w={workers}");
        // And the marker still marks correctly.
        let heap_ok = &heap.inner;
        assert_eq!(
            marker.mark(&Dyn::of(heap_ok), &[r(0)]).bitmap.count(),
            n as u64
        );
    }
}

/// Runs `f`, which must panic with the mark store's contract message.
fn panics_naming_the_contract(what: &str, f: impl FnOnce()) {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    let payload = result.expect_err(what);
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("MarkIndex::mark_index broke its contract"),
        "{what}: {message}"
    );
}

#[test]
fn a_reference_outside_the_heap_panics_naming_the_contract() {
    use Kind::*;
    let out = 1000;
    let cases: [(&str, Graph, Vec<ObjRef>, Vec<ObjRef>); 5] = [
        (
            "strong slot",
            Graph(vec![vec![(out, Strong)]]),
            vec![r(0)],
            vec![],
        ),
        (
            "weak referent",
            Graph(vec![vec![(out, Weak)]]),
            vec![r(0)],
            vec![],
        ),
        (
            "ephemeron key",
            Graph(vec![vec![(0, Ephemeron(out))]]),
            vec![r(0)],
            vec![],
        ),
        ("root", Graph(vec![vec![]]), vec![r(out)], vec![]),
        ("finalizable", Graph(vec![vec![]]), vec![r(0)], vec![r(out)]),
    ];
    for (what, g, roots, finalizable) in cases {
        for workers in workers(&[1, 2]) {
            let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
            panics_naming_the_contract(what, || {
                marker.collect(
                    &Dyn::of(&g),
                    &Collection::new(&roots[..]).finalizable(&finalizable[..]),
                );
            });
        }
    }
}

/// `n` objects, object `i` pointing to `(7i + 3) mod n` if `i` is a
/// multiple of 5; no slots otherwise.
struct Sparse(usize);

impl ObjectModel for Sparse {
    fn size_bytes(&self, _: ObjRef) -> usize {
        16
    }
    fn slot_count(&self, o: ObjRef) -> usize {
        usize::from(o.index() % 5 == 0)
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        o: ObjRef,
        s: std::ops::Range<usize>,
        mut v: V,
    ) {
        if o.index() % 5 == 0 && s.start == 0 && s.end > 0 {
            v(0, r((7 * o.index() + 3) % self.0), SlotKind::Strong);
        }
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for Sparse {
    fn mark_index_bound(&self) -> usize {
        self.0
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}

/// Ten million roots in a thousand chunks, computed (root `j` is object
/// `j * 2654435761 mod 3n`, when below `n`, else object `j mod n`), and
/// counting the chunks claimed.
struct ManyRoots {
    n: usize,
    chunks: usize,
    per_chunk: usize,
    claimed: AtomicUsize,
}

impl ManyRoots {
    fn root(&self, j: usize) -> ObjRef {
        let x = j.wrapping_mul(2_654_435_761) % (3 * self.n);
        r(if x < self.n { x } else { j % self.n })
    }
}

impl RootSource for ManyRoots {
    fn chunk_count(&self) -> usize {
        self.chunks
    }
    fn scan_chunk<V: FnMut(ObjRef)>(&self, chunk: usize, mut visit: V) {
        self.claimed.fetch_add(1, Ordering::Relaxed);
        for j in chunk * self.per_chunk..(chunk + 1) * self.per_chunk {
            visit(self.root(j));
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "ten million roots are too many for Miri; the other tests take roots in chunks"
)]
fn ten_million_roots_in_a_thousand_chunks_mark_exactly_the_oracles_set() {
    let n = 12_000_000;
    let heap = Sparse(n);
    let roots = ManyRoots {
        n,
        chunks: 1000,
        per_chunk: 10_000,
        claimed: AtomicUsize::new(0),
    };
    let flat: Vec<ObjRef> = (0..10_000_000).map(|j| roots.root(j)).collect();
    let o = stealmark_heap::mark_sequential(&heap, &flat);
    drop(flat);
    for workers in workers(&[1, 2, 8]) {
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        roots.claimed.store(0, Ordering::Relaxed);
        let m = marker.collect(&Dyn::of(&heap), &Collection::new(&roots));
        assert!(
            *m.bitmap == o.marked,
            "w={workers}: {} marked, oracle {}",
            m.bitmap.count(),
            o.objects
        );
        assert_eq!(m.stats.roots, 10_000_000);
        assert_eq!(m.stats.total().root_chunks, 1000);
        assert_eq!(
            roots.claimed.load(Ordering::Relaxed),
            1000,
            "each chunk scanned once"
        );
        assert_eq!(m.report().live_objects(), o.objects);
    }
}
