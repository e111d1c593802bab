//! Which marking path the engine takes: a whole collection with one worker
//! marks through `MarkStore::try_mark_unshared` (no other thread marks);
//! more workers, and every part of a mark cycle whose mutators may
//! allocate black (incremental or concurrent: their black allocation marks
//! too), through the atomic `MarkStore::try_mark`. A cycle without black
//! allocation marks unshared in the increments that run on one thread. A
//! store that counts its calls tells them apart; the marks must equal the
//! oracle's either way.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};

use common::mutable::{Family, MutHeap, Mutator};
use common::{inputs, random_graph, Dyn, DynStore};
use stealmark_heap::{oracle, OracleInput};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{
    Collection, CycleOptions, MarkBitmap, MarkIndex, MarkStore, Marker, MarkerConfig, ObjRef,
    ObjectModel,
};

/// A side bitmap that counts the calls of each marking path.
struct CountingStore {
    bits: MarkBitmap,
    atomic: AtomicU64,
    unshared: AtomicU64,
}

impl CountingStore {
    fn new(n: usize) -> CountingStore {
        CountingStore {
            bits: MarkBitmap::new(n),
            atomic: AtomicU64::new(0),
            unshared: AtomicU64::new(0),
        }
    }

    /// The calls of `try_mark` and of `try_mark_unshared`.
    fn calls(&self) -> (u64, u64) {
        (
            self.atomic.load(Ordering::Relaxed),
            self.unshared.load(Ordering::Relaxed),
        )
    }
}

impl<H: ObjectModel + MarkIndex> MarkStore<H> for CountingStore {
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool {
        self.atomic.fetch_add(1, Ordering::Relaxed);
        self.bits.try_mark(heap, obj)
    }
    fn try_mark_unshared(&self, heap: &H, obj: ObjRef) -> bool {
        self.unshared.fetch_add(1, Ordering::Relaxed);
        self.bits.try_mark_unshared(heap, obj)
    }
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool {
        self.bits.is_marked(heap, obj)
    }
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        self.bits.prefetch(heap, obj);
    }
    fn dense_bound(&self, heap: &H) -> Option<usize> {
        self.bits.dense_bound(heap)
    }
    fn dense_index(&self, heap: &H, obj: ObjRef) -> Option<usize> {
        self.bits.dense_index(heap, obj)
    }
}

#[test]
fn one_worker_collections_mark_unshared_and_more_workers_atomically() {
    for seed in 0..6 {
        let (g, roots, fin) = random_graph(seed, 2000);
        for input in inputs(&roots, &fin) {
            let expected = oracle(&g, &input);
            for workers in [1, 2, 3] {
                let store = CountingStore::new(g.mark_index_bound());
                let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
                let c = Collection::new(input.roots)
                    .finalizable(input.finalizable)
                    .soft_refs(input.soft_refs);
                marker.collect_with(&Dyn::of(&g), &DynStore(&store), &c);
                let what = format!("seed {seed}, {workers} workers");
                assert_eq!(store.bits, expected.marked, "{what}: marks");
                let (atomic, unshared) = store.calls();
                if workers == 1 {
                    assert_eq!(atomic, 0, "{what}: an atomic mark with one worker");
                    assert!(
                        unshared >= expected.objects,
                        "{what}: {unshared} unshared marks"
                    );
                } else {
                    assert_eq!(
                        unshared, 0,
                        "{what}: an unshared mark with {workers} workers"
                    );
                    assert!(atomic >= expected.objects, "{what}: {atomic} atomic marks");
                }
            }
        }
    }
}

/// A mark cycle with one worker and black allocation (the default),
/// incremental (steps interleaved with a mutator) or concurrent (a mutator
/// thread beside the background worker), then its remark: every mark is
/// atomic.
#[test]
fn mark_cycles_with_black_allocation_never_mark_unshared() {
    for incremental in [true, false] {
        let heap = MutHeap::random(1500, 3000, 7);
        let roots: Vec<ObjRef> = (0..12).map(|k| ObjRef::from_index(k * 97)).collect();
        let mut mutator = Mutator::new(roots.clone(), 11);
        let store = CountingStore::new(3000);
        let mut marker = Marker::new(MarkerConfig::with_workers(1)).unwrap();
        let model = Dyn::of(&heap);
        let marks = DynStore(&store);
        let cycle = marker.start(&model, &marks, &roots[..]);
        if incremental {
            let mut buffer = cycle.mutator();
            for i in 0..2000 {
                mutator.op(&heap, &mut buffer, Family::Satb);
                if i % 16 == 0 {
                    cycle.step(32).unwrap();
                }
            }
            drop(buffer);
            while !cycle.step(1000).unwrap() {}
        } else {
            cycle
                .concurrently(|| {
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            let mut buffer = cycle.mutator();
                            for _ in 0..2000 {
                                mutator.op(&heap, &mut buffer, Family::Satb);
                            }
                        });
                    });
                })
                .unwrap();
        }
        cycle.finish(&Collection::new(&mutator.roots[..])).unwrap();
        let (atomic, unshared) = store.calls();
        assert_eq!(
            unshared, 0,
            "incremental {incremental}: an unshared mark in a cycle"
        );
        assert!(
            atomic >= store.bits.count(),
            "incremental {incremental}: {atomic} atomic marks, {} marked",
            store.bits.count()
        );
    }
}

/// A cycle without black allocation, its mutator (incremental update,
/// allocating white) between steps: each step that runs on one thread (on
/// the caller's alone, or on every worker of one) marks unshared, a
/// parallel step of two workers atomically; and the marks hold everything
/// reachable at the end.
#[test]
fn increments_without_black_allocation_mark_unshared_on_one_thread() {
    for (workers, parallel) in [(1, false), (1, true), (2, false), (2, true)] {
        let heap = MutHeap::random(1500, 3000, 5);
        let roots: Vec<ObjRef> = (0..12).map(|k| ObjRef::from_index(k * 97)).collect();
        let mut mutator = Mutator::new(roots.clone(), 13);
        let store = CountingStore::new(3000);
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        let (model, marks) = (Dyn::of(&heap), DynStore(&store));
        let mut options = CycleOptions::default();
        options.parallel_steps = parallel;
        options.black_allocation = false;
        let cycle = marker.start_with(&model, &marks, &roots[..], options);
        let family = Family::IncrementalUpdate {
            marks: Some(&store.bits),
            black_allocation: false,
        };
        let mut buffer = cycle.mutator();
        for i in 0..2000 {
            mutator.op(&heap, &mut buffer, family);
            if i % 16 == 0 {
                cycle.step(32).unwrap();
            }
        }
        drop(buffer);
        while !cycle.step(1000).unwrap() {}
        let (atomic, unshared) = store.calls();
        let what = format!("{workers} workers, parallel steps {parallel}");
        if workers == 1 || !parallel {
            assert_eq!(atomic, 0, "{what}: an atomic mark in a step on one thread");
            assert!(unshared > 0, "{what}: no unshared mark");
        } else {
            assert_eq!(unshared, 0, "{what}: an unshared mark in a parallel step");
            assert!(atomic > 0, "{what}: no atomic mark");
        }
        cycle.finish(&Collection::new(&mutator.roots[..])).unwrap();
        let input = OracleInput {
            roots: &mutator.roots,
            finalizable: &[],
            soft_refs: SoftRefs::ClearAll,
        };
        let end = oracle(&heap, &input);
        for i in end.marked.iter() {
            assert!(
                store.bits.contains(i),
                "{what}: {i}, reachable at the end, unmarked"
            );
        }
    }
}
