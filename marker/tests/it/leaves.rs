//! Leaves: a model that reports its strong slots to objects without slots
//! as [`SlotKind::StrongLeaf`] (the engine marks those targets and never
//! pushes or scans them) gives exactly the oracle's outcome on the same
//! heap read with plain strong slots: marks, slot visits, clearing,
//! finalization, and live objects, bytes and types, for every shape, deque
//! and worker count. A wrong hint fails the collection in debug builds.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common;

use common::{check, expect, forward_mark_index, forward_reads, matrix};
use stealmark_heap::{generate_heap, GenConfig, HeapGraph, OracleInput, Shape};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};

/// The inner model, with each strong slot whose target has no slots
/// reported as a leaf (or, `lie`, every strong slot). Counts the leaf
/// slots it reported. `ON` is its [`ObjectModel::LEAF_SLOTS`]: with
/// `false`, the marker reads its leaf slots as strong ones.
struct Leafy<'m, M, const ON: bool = true> {
    inner: &'m M,
    lie: bool,
    leaf_slots: AtomicU64,
}

impl<'m, M: ObjectModel, const ON: bool> Leafy<'m, M, ON> {
    fn new(inner: &'m M) -> Self {
        Leafy {
            inner,
            lie: false,
            leaf_slots: AtomicU64::new(0),
        }
    }
}

impl<M: ObjectModel, const ON: bool> ObjectModel for Leafy<'_, M, ON> {
    const LEAF_SLOTS: bool = ON;
    forward_reads!();
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        self.inner.scan_slots(obj, slots, |i, t, k| {
            let leaf = k == SlotKind::Strong && (self.lie || self.inner.slot_count(t) == 0);
            if leaf {
                self.leaf_slots.fetch_add(1, Ordering::Relaxed);
                visit(i, t, SlotKind::StrongLeaf);
            } else {
                visit(i, t, k);
            }
        });
    }
}

impl<M: ObjectModel + MarkIndex, const ON: bool> MarkIndex for Leafy<'_, M, ON> {
    forward_mark_index!();
}

/// Small heaps: under Miri, tiny ones and two shapes.
const OBJECTS: u64 = if cfg!(miri) { 100 } else { 5_000 };

fn shapes() -> &'static [Shape] {
    if cfg!(miri) {
        &[Shape::Weak, Shape::Dag]
    } else {
        Shape::ALL
    }
}

#[test]
fn leaf_slots_give_the_oracles_outcome_for_every_shape_deque_and_worker_count() {
    let counts: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 3, 8] };
    let mut shapes_with_leaves = 0;
    for &shape in shapes() {
        let g = generate_heap(&GenConfig::new(shape, OBJECTS).seed(5)).expect("generator");
        let view = g.heap.view();
        let input = OracleInput {
            roots: g.heap.roots(),
            finalizable: g.heap.finalizable(),
            soft_refs: SoftRefs::ClearAll,
        };
        // The oracle reads the plain heap: no leaf hints.
        let e = expect(&view, &input);
        let leafy: Leafy<'_, _> = Leafy::new(&view);
        for (n, (deque, workers)) in matrix(counts).into_iter().enumerate() {
            let mut c = MarkerConfig::with_workers(workers);
            c.set_deque(deque);
            c.set_prefetch([8, 0][n % 2]);
            c.set_private_work((n / 2) % 2 == 0);
            c.set_array_chunk(64);
            let mut marker = Marker::new(c).expect("valid config");
            let what = format!("{shape} leaves deque={deque} workers={workers} n={n}");
            check(&mut marker, &leafy, &input, &e, &what);
            // A model that does not declare its leaf slots: traced as
            // strong ones, with the same outcome.
            if n % 4 == 0 {
                let undeclared: Leafy<'_, _, false> = Leafy::new(&view);
                check(
                    &mut marker,
                    &undeclared,
                    &input,
                    &e,
                    &format!("{what} undeclared"),
                );
            }
        }
        if leafy.leaf_slots.load(Ordering::Relaxed) > 0 {
            shapes_with_leaves += 1;
        }
    }
    // Some shapes (`random`, `binary-tree`) have no object without slots;
    // `wide`, `big-array`, `dag` and `runtime` have many.
    assert!(
        shapes_with_leaves >= if cfg!(miri) { 1 } else { 4 },
        "only {shapes_with_leaves} shapes reported leaf slots"
    );
}

#[test]
fn without_live_counting_leaves_are_marked_and_counted_as_objects() {
    let g = generate_heap(&GenConfig::new(Shape::Runtime, OBJECTS).seed(3)).expect("generator");
    let view = g.heap.view();
    let roots = g.heap.roots();
    let leafy: Leafy<'_, _> = Leafy::new(&view);
    for workers in [1, 2] {
        let mut plain = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        let want = plain.mark(&view, roots).bitmap.clone();
        let mut c = MarkerConfig::with_workers(workers);
        c.set_count_live(false);
        let mut marker = Marker::new(c).unwrap();
        let m = marker.mark(&leafy, roots);
        assert!(*m.bitmap == want, "workers={workers}: marked set");
        let report = m.report();
        assert_eq!(report.live_objects(), want.count() as u64);
        assert_eq!(report.live_bytes(), 0, "nothing counted live");
    }
    assert!(leafy.leaf_slots.load(Ordering::Relaxed) > 0);
}

/// A leaf hint on an object with slots breaks the contract: debug builds
/// check it at the mark and fail the collection (the worker's panic is
/// re-raised), instead of leaving what the slots reach unmarked.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "has reference slots")]
fn a_leaf_hint_on_an_object_with_slots_fails_the_collection_in_debug_builds() {
    let g = generate_heap(&GenConfig::new(Shape::Dag, 100)).expect("generator");
    let view = g.heap.view();
    let mut liar: Leafy<'_, _> = Leafy::new(&view);
    liar.lie = true;
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    marker.mark(&liar, g.heap.roots());
}
