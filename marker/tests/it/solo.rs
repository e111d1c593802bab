//! Solo collections (`Collection::solo`): on a marker with several workers,
//! a collection marked on the calling thread alone gives exactly the
//! oracle's results, for every shape, deque and soft policy, and no other
//! thread runs any part of it; the marker then collects in parallel as
//! before. Solo cycles (`CycleOptions::solo`): every step and the remark
//! on the calling thread, the background marking on one thread.

use crate::common;

use std::ops::Range;
use std::sync::Mutex;
use std::thread::ThreadId;

use common::{check, check_as, expect, forward_mark_index, forward_reads, matrix, policies, Dyn};
use stealmark_heap::{generate_heap, oracle, GenConfig, HeapGraph, OracleInput, Shape};
use stealmark_marker::{
    Collection, CycleOptions, MarkBitmap, MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel,
    SlotKind,
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

/// A solo cycle on a four-worker marker, its steps asked to run on every
/// worker, with black allocation on and off: every step and the remark
/// scan on the calling thread alone, the other workers record nothing, and
/// the marks are the oracle's. Its background marking scans on one thread,
/// the coordinator. The same cycle without `solo` spreads its steps.
#[test]
fn a_solo_cycle_runs_each_part_on_one_thread() {
    let g = generate_heap(&GenConfig::new(Shape::Weak, 20_000).seed(7)).expect("generator");
    let view = g.heap.view();
    let roots = g.heap.roots();
    let fin = g.heap.finalizable();
    let want = oracle(
        &view,
        &OracleInput {
            finalizable: fin,
            ..OracleInput::roots(roots)
        },
    );
    let mut marker = Marker::new(MarkerConfig::with_workers(4)).expect("valid config");
    for (solo, black_allocation, background) in [
        (true, true, false),
        (true, false, false),
        (true, true, true),
        (false, true, false),
    ] {
        let what =
            format!("solo {solo}, black allocation {black_allocation}, background {background}");
        let model = Threads {
            inner: &view,
            seen: Mutex::new(Vec::new()),
        };
        let marks = MarkBitmap::new(view.mark_index_bound());
        let mut options = CycleOptions::default();
        options.parallel_steps = true;
        options.black_allocation = black_allocation;
        options.solo = solo;
        let dyn_model = Dyn::of(&model);
        let cycle = marker.start_with(&dyn_model, &marks, roots, options);
        if background {
            cycle.concurrently(|| ()).expect("background marking");
        }
        let mut steps = 1;
        while !cycle.step(500).expect("step") {
            steps += 1;
        }
        assert!(background || steps > 4, "{what}: {steps} steps");
        let (report, _) = cycle
            .finish(&Collection::new(roots).finalizable(fin))
            .expect("remark");
        assert_eq!(marks.first_difference(&want.marked), None, "{what}");
        let others: u64 = report.stats.workers[1..]
            .iter()
            .map(|w| w.stats.objects_scanned + w.stats.idle_ns + w.stats.parks)
            .sum();
        assert_eq!(others == 0, solo, "{what}: the other workers' records");
        let seen = model.seen.lock().unwrap().clone();
        if solo && !background {
            assert_eq!(seen, [std::thread::current().id()], "{what}");
        } else if solo {
            assert!(seen.len() <= 2, "{what}: {} threads scanned", seen.len());
        } else {
            assert!(seen.len() > 1, "{what}: one thread scanned");
        }
    }
}
