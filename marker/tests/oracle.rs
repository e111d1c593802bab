//! Oracle equality: for every generator shape, deque, policy and steal
//! amount, at 1, 2, 3, 8 and 16 workers, the engine marks exactly the
//! oracle's set, finds exactly its weak references, and counts exactly its
//! objects. Each marker is reused across shapes and collections.

use stealmark_heap::{
    generate_heap, mark_sequential, GenConfig, Generated, HeapGraph, OracleResult, Shape,
};
use stealmark_marker::{
    BalancePolicy, DequeKind, Marker, MarkerConfig, StealAmount, VictimSelection, WeakRef,
};
use strum::VariantArray;

/// Small enough that the whole matrix runs in about a minute on 2 cores.
const OBJECTS: u64 = 10_000;

fn heaps() -> Vec<(Generated, OracleResult)> {
    Shape::ALL
        .iter()
        .map(|&shape| {
            let g = generate_heap(&GenConfig::new(shape, OBJECTS).seed(11)).expect("generator");
            let oracle = mark_sequential(&g.heap.view(), g.heap.roots());
            (g, oracle)
        })
        .collect()
}

fn check(marker: &mut Marker, g: &Generated, oracle: &OracleResult, what: &str) {
    let view = g.heap.view();
    let m = marker.mark(&view, g.heap.roots());
    if *m.bitmap != oracle.marked {
        let first = m.bitmap.first_difference(&oracle.marked);
        panic!(
            "{what}: marked {} objects, oracle {}; first difference near {first:?}",
            m.bitmap.count(),
            oracle.objects
        );
    }
    assert_eq!(
        m.stats.objects_marked(),
        oracle.objects,
        "{what}: objects_marked"
    );
    let t = m.stats.total();
    assert_eq!(t.objects_scanned, oracle.objects, "{what}: objects_scanned");
    let mut weak: Vec<WeakRef> = m.weak_refs().copied().collect();
    let mut expect = oracle.weak_refs.clone();
    weak.sort_unstable();
    expect.sort_unstable();
    assert_eq!(weak, expect, "{what}: weak references");
}

#[test]
fn every_shape_deque_policy_steal_and_worker_count_matches_the_oracle() {
    let heaps = heaps();
    let mut n = 0;
    for &deque in DequeKind::VARIANTS.iter().filter(|d| d.exactly_once()) {
        for &workers in &[1, 2, 3, 8, 16] {
            for &policy in BalancePolicy::VARIANTS {
                for &steal in StealAmount::VARIANTS {
                    n += 1;
                    let mut c = MarkerConfig::with_workers(workers);
                    c.deque = deque;
                    c.policy = policy;
                    c.steal = steal;
                    // Alternate the victim selection and the prefetch FIFO.
                    c.victim = VictimSelection::VARIANTS[n % 2];
                    c.prefetch = [8, 0, 16][n % 3];
                    // A small bounded deque, so that `abp` overflows.
                    c.deque_capacity = 64;
                    c.array_chunk = 64;
                    let mut marker = Marker::new(c.clone()).expect("valid config");
                    for (g, oracle) in &heaps {
                        let what = format!(
                            "{} deque={deque} workers={workers} policy={policy} steal={steal} victim={} prefetch={}",
                            g.info.shape, c.victim, c.prefetch
                        );
                        check(&mut marker, g, oracle, &what);
                        check(&mut marker, g, oracle, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn abp_overflow_is_shared_and_used() {
    let g = generate_heap(&GenConfig::new(Shape::Wide, 20_000)).unwrap();
    let oracle = mark_sequential(&g.heap.view(), g.heap.roots());
    let mut c = MarkerConfig::with_workers(2);
    c.deque = DequeKind::Abp;
    c.deque_capacity = 16;
    let mut marker = Marker::new(c).unwrap();
    check(&mut marker, &g, &oracle, "wide abp cap 16");
    let t = marker.mark(&g.heap.view(), g.heap.roots()).stats.total();
    assert!(
        t.overflow_pushes > 0,
        "a 16-entry deque must overflow on `wide`"
    );
    assert_eq!(
        t.overflow_pushes, t.overflow_takes,
        "every overflowed item is taken back"
    );
}

#[test]
fn big_array_is_scanned_in_chunks_by_several_workers() {
    let g = generate_heap(&GenConfig::new(Shape::BigArray, 50_000)).unwrap();
    let oracle = mark_sequential(&g.heap.view(), g.heap.roots());
    let mut c = MarkerConfig::with_workers(4);
    c.array_chunk = 256;
    let mut marker = Marker::new(c).unwrap();
    check(&mut marker, &g, &oracle, "big-array 4 workers");
    let m = marker.mark(&g.heap.view(), g.heap.roots());
    let chunks: Vec<u64> = m
        .stats
        .workers
        .iter()
        .map(|r| r.stats.array_chunks)
        .collect();
    let total: u64 = chunks.iter().sum();
    assert_eq!(
        total,
        (1u64 << 20).div_ceil(256),
        "every chunk scanned once: {chunks:?}"
    );
}

#[test]
fn reconfigure_switches_deque_and_worker_count() {
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 5000)).unwrap();
    let oracle = mark_sequential(&g.heap.view(), g.heap.roots());
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    for (i, &deque) in DequeKind::VARIANTS
        .iter()
        .filter(|d| d.exactly_once())
        .enumerate()
    {
        let mut c = MarkerConfig::with_workers(1 + i % 3);
        c.deque = deque;
        marker.reconfigure(c).unwrap();
        check(&mut marker, &g, &oracle, &format!("reconfigured {deque}"));
        assert_eq!(
            marker
                .mark(&g.heap.view(), g.heap.roots())
                .stats
                .workers
                .len(),
            1 + i % 3
        );
    }
}
