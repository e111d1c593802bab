//! `MarkStore::prefetch_distance`: how many found targets wait, their
//! marks prefetched, before the engine marks the oldest. A store that logs
//! its prefetches and marks shows the distance the engine kept (one
//! worker); the marks
//! must equal the oracle's at every distance, odd ones included.

use crate::common;

use std::collections::HashMap;

use parking_lot::Mutex;

use common::{inputs, random_graph, Dyn, DynStore};
use stealmark_heap::oracle;
use stealmark_marker::{
    Collection, MarkBitmap, MarkIndex, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel,
};

/// A side bitmap with a chosen prefetch distance that logs, with one
/// worker, each prefetch and each mark in order.
struct LoggingStore {
    bits: MarkBitmap,
    distance: usize,
    log: Mutex<Vec<(bool, ObjRef)>>,
}

impl LoggingStore {
    /// The delay the engine kept: the most common number of prefetches
    /// between a target's prefetch and its mark (the mark loop's; the
    /// contract's steps prefetch marks they only test).
    fn usual_delay(&self) -> usize {
        let log = self.log.lock();
        let mut prefetches = 0usize;
        let mut when = HashMap::new();
        let mut delays: HashMap<usize, usize> = HashMap::new();
        for &(prefetch, obj) in log.iter() {
            if prefetch {
                prefetches += 1;
                when.insert(obj, prefetches);
            } else if let Some(at) = when.remove(&obj) {
                *delays.entry(prefetches - at).or_default() += 1;
            }
        }
        delays
            .into_iter()
            .max_by_key(|&(_, n)| n)
            .map_or(0, |(d, _)| d)
    }
}

impl<H: ObjectModel + MarkIndex> MarkStore<H> for LoggingStore {
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool {
        self.log.lock().push((false, obj));
        self.bits.try_mark(heap, obj)
    }
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool {
        self.bits.is_marked(heap, obj)
    }
    fn prefetch(&self, _: &H, obj: ObjRef) {
        self.log.lock().push((true, obj));
    }
    fn prefetch_distance(&self) -> usize {
        self.distance
    }
    fn dense_bound(&self, heap: &H) -> Option<usize> {
        self.bits.dense_bound(heap)
    }
    fn dense_index(&self, heap: &H, obj: ObjRef) -> Option<usize> {
        self.bits.dense_index(heap, obj)
    }
}

#[test]
fn the_engine_keeps_the_stores_distance_rounded_to_a_power_of_two() {
    let (g, roots, fin) = random_graph(3, 3000);
    for input in inputs(&roots, &fin) {
        let expected = oracle(&g, &input);
        for (distance, depth) in [
            (0, 1),
            (1, 1),
            (3, 2),
            (8, 8),
            (32, 32),
            (64, 64),
            (1000, 64),
        ] {
            for workers in [1, 2] {
                let store = LoggingStore {
                    bits: MarkBitmap::new(g.mark_index_bound()),
                    distance,
                    log: Mutex::new(Vec::new()),
                };
                let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
                let c = Collection::new(input.roots)
                    .finalizable(input.finalizable)
                    .soft_refs(input.soft_refs);
                marker.collect_with(&Dyn::of(&g), &DynStore(&store), &c);
                let what = format!("distance {distance}, {workers} workers");
                assert_eq!(store.bits, expected.marked, "{what}: marks");
                if workers == 1 {
                    assert_eq!(store.usual_delay(), depth, "{what}: the delay kept");
                }
            }
        }
    }
}
