//! Single-threaded markers for comparison: a sequential marker with the
//! engine's prefetch FIFO (the baseline for the parallel overhead), and a
//! replay of a recorded mark order with perfect prefetching (the floor).
//! Each can count live objects as the engine does
//! ([`MarkerConfig::count_live`](crate::MarkerConfig::count_live)), so that
//! a comparison with the engine is like for like either way.

use stealmark_model::{MarkIndex, ObjRef, ObjectModel};

use crate::delay::DelayLine;
use crate::fifo::{Batch, Fifo, ACCOUNT_BATCH};
use crate::stats::TypeCount;
use crate::worker::count_live;
use stealmark_model::{MarkBitmap, MarkStore};

/// The live objects a reference marker counted in its last run: the
/// engine's live figures ([`Report::live_bytes`](crate::Report::live_bytes)
/// and the rest), counted the same way (the objects scanned, in batches of
/// the engine's size, by the engine's loop). All zero, and `by_type` empty,
/// when counting is off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveCount {
    /// Objects counted.
    pub objects: u64,
    /// Their [`ObjectModel::size_bytes`], summed.
    pub bytes: u64,
    /// Their [`ObjectModel::footprint_bytes`], summed.
    pub footprint_bytes: u64,
    /// Per type id, the objects and bytes counted (empty when the heap has
    /// no types).
    pub by_type: Vec<TypeCount>,
}

impl LiveCount {
    /// Empties the count for a heap of `types` types, keeping its buffer.
    fn reset(&mut self, types: usize) {
        self.objects = 0;
        self.bytes = 0;
        self.footprint_bytes = 0;
        self.by_type.clear();
        self.by_type.resize(types, TypeCount::default());
    }

    /// Counts the objects `words` (the engine's `Worker::account`).
    fn add_batch<H: ObjectModel>(&mut self, heap: &H, words: &[usize]) {
        let (bytes, footprint) = count_live(heap, words, &mut self.by_type);
        self.objects += words.len() as u64;
        self.bytes += bytes;
        self.footprint_bytes += footprint;
    }
}

/// A [`LiveCount`] being filled as the engine fills its counts: scanned
/// objects wait in a batch, counted when it is full and at the end.
struct LiveCounter<'c> {
    count: &'c mut LiveCount,
    scanned: Batch,
}

impl<'c> LiveCounter<'c> {
    /// Starts counting into `count`, emptied for a heap of `types` types.
    fn new(count: &'c mut LiveCount, types: usize) -> LiveCounter<'c> {
        count.reset(types);
        LiveCounter {
            count,
            scanned: Batch::new(),
        }
    }

    /// Queues a scanned object.
    #[inline(always)]
    fn push<H: ObjectModel>(&mut self, heap: &H, obj: ObjRef) {
        self.scanned.push(obj.word());
        if self.scanned.len() == ACCOUNT_BATCH {
            self.flush(heap);
        }
    }

    /// Counts the queued objects.
    fn flush<H: ObjectModel>(&mut self, heap: &H) {
        self.count.add_batch(heap, self.scanned.as_slice());
        self.scanned.clear();
    }
}

/// A sequential marker: a private `Vec` mark stack, the engine's side
/// bitmap and the same prefetching (the object FIFO, and the edge delay
/// line that prefetches targets' mark words), without deques, stealing or
/// termination. It sets marks as the engine does with one worker
/// ([`MarkBitmap::set_unshared`]: no atomic read-modify-write), but pushes
/// a target it marked with a branch, as a plain marker does (the engine's
/// one worker pushes without one, `PrivateStack::push_if`), and with
/// [`SequentialMarker::count_live`] counts live objects as the engine does.
/// Its buffers are reused from one call to the next. It pushes and scans
/// the targets of
/// [`SlotKind::StrongLeaf`](stealmark_model::SlotKind::StrongLeaf) slots
/// like any other (a scan without slots): the engine's shortcut for leaves
/// is its own.
#[derive(Debug, Default)]
pub struct SequentialMarker {
    stack: Vec<ObjRef>,
    bitmap: MarkBitmap,
    prefetch: usize,
    count_live: bool,
    live: LiveCount,
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

    /// Counts live objects (bytes, footprint, types) in every run, as the
    /// engine does with [`MarkerConfig::count_live`](crate::MarkerConfig::count_live),
    /// or not (`false`, the default).
    pub fn count_live(mut self, on: bool) -> SequentialMarker {
        self.count_live = on;
        self
    }

    /// The live objects the last run counted (all zero if counting is off).
    pub fn live(&self) -> &LiveCount {
        &self.live
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
        self.live.reset(0);
        let mut live = self
            .count_live
            .then(|| LiveCounter::new(&mut self.live, heap.type_count()));
        let bitmap = &self.bitmap;
        let stack = &mut self.stack;
        for &r in roots {
            if bitmap.set_unshared(heap.mark_index(r)) {
                stack.push(r);
            }
        }
        let mut fifo = Fifo::new();
        let mut edges = DelayLine::new(MarkStore::<H>::prefetch_distance(bitmap));
        let edge_delay = self.prefetch > 0;
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
                let obj = fifo.pop().and_then(ObjRef::from_word);
                // The engine's second stage (`ObjectModel::prefetch_slots`).
                if H::PREFETCHES_SLOTS {
                    if let Some(o) = fifo.peek(self.prefetch / 2).and_then(ObjRef::from_word) {
                        heap.prefetch_slots(o);
                    }
                }
                obj
            };
            let Some(obj) = obj else {
                // Mark the targets still waiting in the edge delay line.
                edges.take_all(|w| {
                    if let Some(t) = ObjRef::from_word(w) {
                        if bitmap.set_unshared(heap.mark_index(t)) {
                            stack.push(t);
                        }
                    }
                });
                if stack.is_empty() {
                    break;
                }
                continue;
            };
            on_scan(obj);
            if let Some(live) = live.as_mut() {
                live.push(heap, obj);
            }
            heap.scan_slots(
                obj,
                0..heap.slot_count(obj),
                #[inline(always)]
                |_, t, kind| {
                    if !kind.is_strong() {
                        return;
                    }
                    let t = if edge_delay {
                        bitmap.prefetch(heap, t);
                        match edges.swap(t.word()).and_then(ObjRef::from_word) {
                            Some(t) => t,
                            None => return,
                        }
                    } else {
                        t
                    };
                    if bitmap.set_unshared(heap.mark_index(t)) {
                        stack.push(t);
                    }
                },
            );
        }
        if let Some(live) = live.as_mut() {
            live.flush(heap);
        }
    }
}

/// The floor: replays a recorded mark order, prefetching `distance` objects
/// ahead (perfect prefetching, since the future is known) and doing the same
/// per-slot work as a marker (testing and setting the targets' mark bits,
/// unshared as the engine's one worker does; with [`Replay::count_live`],
/// counting each object live as the engine does), but no stack, FIFO,
/// stealing or termination.
#[derive(Debug, Default)]
pub struct Replay {
    order: Vec<ObjRef>,
    bitmap: MarkBitmap,
    count_live: bool,
    live: LiveCount,
}

impl Replay {
    /// Records the mark order of `heap` from `roots` (sequential, depth-first).
    pub fn record<H: ObjectModel + MarkIndex>(heap: &H, roots: &[ObjRef]) -> Replay {
        let mut order = Vec::new();
        SequentialMarker::new(0).mark_recording(heap, roots, &mut order);
        Replay {
            order,
            ..Replay::default()
        }
    }

    /// Counts live objects in every run, as
    /// [`SequentialMarker::count_live`] does, or not (`false`, the default).
    pub fn count_live(mut self, on: bool) -> Replay {
        self.count_live = on;
        self
    }

    /// The live objects the last run counted (all zero if counting is off).
    pub fn live(&self) -> &LiveCount {
        &self.live
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
        self.live.reset(0);
        let mut live = self
            .count_live
            .then(|| LiveCounter::new(&mut self.live, heap.type_count()));
        let bitmap = &self.bitmap;
        for &r in roots {
            bitmap.set_unshared(heap.mark_index(r));
        }
        let order = &self.order;
        for (i, &obj) in order.iter().enumerate() {
            if let Some(&ahead) = order.get(i + distance) {
                heap.prefetch(ahead);
            }
            if let Some(live) = live.as_mut() {
                live.push(heap, obj);
            }
            heap.scan_slots(
                obj,
                0..heap.slot_count(obj),
                #[inline(always)]
                |_, t, kind| {
                    if kind.is_strong() {
                        bitmap.set_unshared(heap.mark_index(t));
                    }
                },
            );
        }
        if let Some(live) = live.as_mut() {
            live.flush(heap);
        }
        &self.bitmap
    }
}
