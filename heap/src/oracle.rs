//! The sequential oracle: a plain depth-first marker.
//!
//! It is the correctness reference every parallel result is compared with,
//! and the speed baseline: a `Vec` stack, a [`MarkBitmap`], no prefetching,
//! and nothing clever.

use stealmark_model::{MarkBitmap, WeakRef};
use stealmark_model::{ObjRef, ObjectModel, SlotKind};

/// What the oracle found.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OracleResult {
    /// The marked set, by mark index.
    pub marked: MarkBitmap,
    /// Objects marked.
    pub objects: u64,
    /// Bytes of the objects marked (their `size_bytes`).
    pub bytes: u64,
    /// Non-null reference slots scanned in marked objects, weak ones included.
    pub references: u64,
    /// The weak references held by marked objects, in discovery order (sort
    /// them to compare with another marker's).
    pub weak_refs: Vec<WeakRef>,
}

/// Marks everything reachable from `roots` through strong slots, depth
/// first, one object at a time.
///
/// ```
/// use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
///
/// let g = generate_heap(&GenConfig::new(Shape::BinaryTree, 1000)).unwrap();
/// let result = mark_sequential(&g.heap.view(), g.heap.roots());
/// assert_eq!(Some(result.objects), g.info.reachable);
/// ```
pub fn mark_sequential<M: ObjectModel>(model: &M, roots: &[ObjRef]) -> OracleResult {
    let mut marked = MarkBitmap::new(model.mark_index_bound());
    let mut stack: Vec<ObjRef> = Vec::with_capacity(1024);
    let mut weak_refs = Vec::new();
    let mut objects = 0u64;
    let mut bytes = 0u64;
    let mut references = 0u64;
    for &root in roots {
        if marked.insert(model.mark_index(root)) {
            stack.push(root);
        }
    }
    while let Some(obj) = stack.pop() {
        objects += 1;
        bytes += model.size_bytes(obj) as u64;
        model.scan_slots(obj, 0..usize::MAX, |target, kind| {
            references += 1;
            match kind {
                SlotKind::Strong => {
                    if marked.insert(model.mark_index(target)) {
                        stack.push(target);
                    }
                }
                SlotKind::Weak => weak_refs.push(WeakRef {
                    holder: obj,
                    target,
                }),
            }
        });
    }
    OracleResult {
        marked,
        objects,
        bytes,
        references,
        weak_refs,
    }
}
