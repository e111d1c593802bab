//! Solo collections (`Collection::solo`): on a marker with several workers,
//! a collection marked on the calling thread alone gives exactly the
//! oracle's results, for every shape, deque and soft policy, and no other
//! thread runs any part of it; the marker then collects in parallel as
//! before.

use crate::common;

use std::ops::Range;
use std::sync::Mutex;
use std::thread::ThreadId;

use common::{check, check_as, expect, forward_mark_index, forward_reads, matrix, policies, Dyn};
use stealmark_heap::{generate_heap, GenConfig, HeapGraph, OracleInput, Shape};
use stealmark_marker::{
    Collection, MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind,
};

/// A model that records which threads scanned objects.
struct Threads<'m, M> {
    inner: &'m M,
    seen: Mutex<Vec<ThreadId>>,
}

impl<M: ObjectModel> ObjectModel for Threads<'_, M> {
    const LEAF_SLOTS: bool = M::LEAF_SLOTS;
    forward_reads!();
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, v: V) {
        let me = std::thread::current().id();
        let mut seen = self.seen.lock().unwrap();
        if !seen.contains(&me) {
            seen.push(me);
        }
        drop(seen);
        self.inner.scan_slots(o, s, v)
    }
}

impl<M: MarkIndex> MarkIndex for Threads<'_, M> {
    forward_mark_index!();
}

#[test]
fn solo_collections_match_the_oracle_and_parallel_ones_still_do() {
    for &shape in Shape::ALL {
        let g = generate_heap(&GenConfig::new(shape, 5_000).seed(3)).expect("generator");
        let view = g.heap.view();
        for (deque, workers) in matrix(&[2, 3, 8]) {
            let mut c = MarkerConfig::with_workers(workers);
            c.set_deque(deque);
            c.set_array_chunk(64);
            let mut marker = Marker::new(c).expect("valid config");
            for soft_refs in policies() {
                let input = OracleInput {
                    roots: g.heap.roots(),
                    finalizable: g.heap.finalizable(),
                    soft_refs,
                };
                let e = expect(&view, &input);
                let what = format!("{shape} deque={deque} workers={workers} {soft_refs:?}");
                check_as(
                    &mut marker,
                    &view,
                    &input,
                    &e,
                    &format!("solo {what}"),
                    true,
                );
                check(&mut marker, &view, &input, &e, &what);
            }
        }
    }
}

#[test]
fn a_solo_collection_runs_on_the_calling_thread_alone() {
    let g = generate_heap(&GenConfig::new(Shape::Weak, 20_000).seed(5)).expect("generator");
    let view = g.heap.view();
    let model = Threads {
        inner: &view,
        seen: Mutex::new(Vec::new()),
    };
    let mut marker = Marker::new(MarkerConfig::with_workers(4)).expect("valid config");
    let c = Collection::new(g.heap.roots())
        .finalizable(g.heap.finalizable())
        .solo(true);
    for _ in 0..3 {
        let m = marker.collect(&Dyn::of(&model), &c);
        assert!(m.bitmap.count() > 1000);
        assert_eq!(m.stats.workers.len(), 4, "a list per configured worker");
        for (i, w) in m.stats.workers.iter().enumerate().skip(1) {
            assert_eq!(
                w.stats.objects_scanned + w.stats.idle_ns + w.stats.parks,
                0,
                "worker {i} ran"
            );
        }
        assert_eq!(*model.seen.lock().unwrap(), [std::thread::current().id()]);
    }
    // Without `solo`, the other workers take part in a heap this size.
    let m = marker.collect(&Dyn::of(&model), &c.solo(false));
    assert!(m
        .stats
        .workers
        .iter()
        .skip(1)
        .any(|w| w.stats.idle_ns + w.stats.objects_scanned + w.stats.steal_attempts > 0));
}
