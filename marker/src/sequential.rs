//! Single-threaded markers for comparison: a sequential marker with the
//! engine's prefetch FIFO (the baseline for the parallel overhead), and a
//! replay of a recorded mark order with perfect prefetching (the floor).

use stealmark_model::{MarkIndex, ObjRef, ObjectModel, SlotKind};

use crate::fifo::Fifo;
use stealmark_model::{MarkBitmap, MarkStore};

/// A sequential marker: a private `Vec` mark stack, the engine's side
/// bitmap and the same prefetching (the object FIFO, and the edge FIFO that
/// prefetches targets' mark words), without deques, stealing or
/// termination. It sets marks as the engine does with one worker
/// ([`MarkBitmap::set_unshared`]: no atomic read-modify-write). Its buffers
/// are reused from one call to the next.
#[derive(Debug, Default)]
pub struct SequentialMarker {
    stack: Vec<ObjRef>,
    bitmap: MarkBitmap,
    prefetch: usize,
}

impl SequentialMarker {
    /// A marker with a prefetch FIFO of `prefetch` entries (0 turns it off;
    /// clamped to [`crate::MarkerConfig::MAX_PREFETCH`]).
    pub fn new(prefetch: usize) -> SequentialMarker {
        SequentialMarker {
            prefetch: prefetch.min(crate::MarkerConfig::MAX_PREFETCH),
            ..SequentialMarker::default()
        }
    }

    /// Marks everything reachable from `roots`; returns the bitmap.
    pub fn mark<H: ObjectModel + MarkIndex>(&mut self, heap: &H, roots: &[ObjRef]) -> &MarkBitmap {
        self.run(heap, roots, |_| {});
        &self.bitmap
    }

    /// Like [`SequentialMarker::mark`], and appends every object to `order`
    /// in the order it is scanned.
    pub fn mark_recording<H: ObjectModel + MarkIndex>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        order: &mut Vec<ObjRef>,
    ) -> &MarkBitmap {
        self.run(heap, roots, |o| order.push(o));
        &self.bitmap
    }

    fn run<H: ObjectModel + MarkIndex>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        mut on_scan: impl FnMut(ObjRef),
    ) {
        self.bitmap.reset(heap.mark_index_bound());
        self.stack.clear();
        let bitmap = &self.bitmap;
        let stack = &mut self.stack;
        for &r in roots {
            if bitmap.set_unshared(heap.mark_index(r)) {
                stack.push(r);
            }
        }
        let mut fifo = Fifo::new();
        let mut edges = Fifo::new();
        let edge_depth = if self.prefetch > 0 {
            crate::worker::EDGE_DEPTH
        } else {
            0
        };
        loop {
            while fifo.len() < self.prefetch {
                match stack.pop() {
                    Some(o) => {
                        heap.prefetch(o);
                        fifo.push(o.word());
                    }
                    None => break,
                }
            }
            let obj = if self.prefetch == 0 {
                stack.pop()
            } else {
                fifo.pop().and_then(ObjRef::from_word)
            };
            let Some(obj) = obj else {
                // Mark the targets still waiting in the edge FIFO.
                while let Some(t) = edges.pop().and_then(ObjRef::from_word) {
                    if bitmap.set_unshared(heap.mark_index(t)) {
                        stack.push(t);
                    }
                }
                if stack.is_empty() {
                    break;
                }
                continue;
            };
            on_scan(obj);
            heap.scan_slots(
                obj,
                0..heap.slot_count(obj),
                #[inline(always)]
                |_, t, kind| {
                    if kind != SlotKind::Strong {
                        return;
                    }
                    let t = if edge_depth == 0 {
                        t
                    } else {
                        bitmap.prefetch(heap, t);
                        edges.push(t.word());
                        if edges.len() <= edge_depth {
                            return;
                        }
                        match edges.pop().and_then(ObjRef::from_word) {
                            Some(t) => t,
                            None => return,
                        }
                    };
                    if bitmap.set_unshared(heap.mark_index(t)) {
                        stack.push(t);
                    }
                },
            );
        }
    }
}

/// The floor: replays a recorded mark order, prefetching `distance` objects
/// ahead (perfect prefetching, since the future is known) and doing the same
/// per-slot work as a marker (testing and setting the targets' mark bits,
/// unshared as the engine's one worker does),
/// but no stack, FIFO, stealing or termination.
#[derive(Debug, Default)]
pub struct Replay {
    order: Vec<ObjRef>,
    bitmap: MarkBitmap,
}

impl Replay {
    /// Records the mark order of `heap` from `roots` (sequential, depth-first).
    pub fn record<H: ObjectModel + MarkIndex>(heap: &H, roots: &[ObjRef]) -> Replay {
        let mut order = Vec::new();
        SequentialMarker::new(0).mark_recording(heap, roots, &mut order);
        Replay {
            order,
            bitmap: MarkBitmap::default(),
        }
    }

    /// The recorded order.
    pub fn order(&self) -> &[ObjRef] {
        &self.order
    }

    /// Replays the order over `heap` with prefetch distance `distance`;
    /// returns the bitmap, which equals the marked set of a real marker.
    pub fn run<H: ObjectModel + MarkIndex>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        distance: usize,
    ) -> &MarkBitmap {
        self.bitmap.reset(heap.mark_index_bound());
        let bitmap = &self.bitmap;
        for &r in roots {
            bitmap.set_unshared(heap.mark_index(r));
        }
        let order = &self.order;
        for (i, &obj) in order.iter().enumerate() {
            if let Some(&ahead) = order.get(i + distance) {
                heap.prefetch(ahead);
            }
            heap.scan_slots(
                obj,
                0..heap.slot_count(obj),
                #[inline(always)]
                |_, t, kind| {
                    if kind == SlotKind::Strong {
                        bitmap.set_unshared(heap.mark_index(t));
                    }
                },
            );
        }
        &self.bitmap
    }
}
