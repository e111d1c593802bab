//! The synthetic mutator of `stealmark bench --mode`: reference writes into
//! a copy-on-write mapping of the snapshot, and allocation into a side
//! arena of new objects that the heap model traces along with the
//! snapshot's (`MutHeap`).
//!
//! New objects have [`NEW_SLOTS`] strong slots and live in the side arena;
//! they may refer to snapshot objects and to each other. Snapshot slots
//! only ever receive snapshot objects ([`HeapView::store_slot`] checks
//! that), so new objects are reachable from the mutator's own roots and
//! from other new objects.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use stealmark_heap::{HeapView, MarkIndex, ObjRef, ObjectModel, SlotKind};
use stealmark_marker::{MarkStore, MutatorBuffer};

/// Slots of a new object.
pub const NEW_SLOTS: usize = 2;

/// Roots a mutator thread keeps of each kind (snapshot objects, new ones).
const STACK: usize = 256;

/// Operations between two looks at the clock and the stop flag.
const BATCH: u64 = 64;

/// The side arena: room for `capacity` new objects of [`NEW_SLOTS`] words.
pub struct Side {
    words: Box<[AtomicUsize]>,
    next: AtomicUsize,
}

impl Side {
    /// An arena for `capacity` objects.
    pub fn new(capacity: usize) -> Side {
        Side {
            words: (0..capacity.max(1) * NEW_SLOTS)
                .map(|_| AtomicUsize::new(0))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// The address range of the arena.
    fn range(&self) -> Range<usize> {
        let lo = self.words.as_ptr() as usize;
        lo..lo + self.words.len() * 8
    }

    /// New objects the arena has room for.
    pub fn capacity(&self) -> usize {
        self.words.len() / NEW_SLOTS
    }

    /// Forgets every object (between rounds: nothing refers to them then;
    /// snapshot slots never do, and each round's mutators start afresh).
    pub fn reset(&self) {
        // Relaxed: called while no mutator runs (between rounds, after the
        // threads were joined).
        self.next.store(0, Relaxed);
    }

    fn slot(&self, obj: ObjRef, i: usize) -> &AtomicUsize {
        &self.words[(obj.word() - self.range().start) / 8 + i]
    }

    /// Allocates an object whose slots are `init`; `None` when full.
    fn allocate(&self, init: [Option<ObjRef>; NEW_SLOTS]) -> Option<ObjRef> {
        // Relaxed: hands out distinct indices; the object is published to
        // other threads (and the marker) only through later stores, and to
        // the marker only once marked black.
        let i = self.next.fetch_add(1, Relaxed);
        if i >= self.capacity() {
            return None;
        }
        let obj = ObjRef::from_word(self.range().start + i * NEW_SLOTS * 8)?;
        for (k, v) in init.into_iter().enumerate() {
            // Relaxed: see `MutHeap::scan_slots`.
            self.slot(obj, k).store(v.map_or(0, ObjRef::word), Relaxed);
        }
        Some(obj)
    }
}

/// The snapshot (a copy-on-write mapping) and the side arena, as one heap.
pub struct MutHeap<'a> {
    pub view: HeapView<'a>,
    pub side: &'a Side,
    side_at: Range<usize>,
    view_bound: usize,
}

impl<'a> MutHeap<'a> {
    pub fn new(view: HeapView<'a>, side: &'a Side) -> MutHeap<'a> {
        MutHeap {
            view_bound: view.mark_index_bound(),
            side_at: side.range(),
            view,
            side,
        }
    }

    #[inline(always)]
    fn is_new(&self, obj: ObjRef) -> bool {
        self.side_at.contains(&obj.word())
    }
}

impl ObjectModel for MutHeap<'_> {
    #[inline(always)]
    fn size_bytes(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            NEW_SLOTS * 8
        } else {
            self.view.size_bytes(obj)
        }
    }

    #[inline(always)]
    fn slot_count(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            NEW_SLOTS
        } else {
            self.view.slot_count(obj)
        }
    }

    #[inline(always)]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        if !self.is_new(obj) {
            return self.view.scan_slots(obj, slots, visit);
        }
        for i in slots.start..slots.end.min(NEW_SLOTS) {
            // Relaxed: mutators store these slots while workers scan; the
            // write barrier and its hand-offs carry the ordering.
            if let Some(t) = ObjRef::from_word(self.side.slot(obj, i).load(Relaxed)) {
                visit(i, t, SlotKind::Strong);
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, obj: ObjRef) {
        if !self.is_new(obj) {
            self.view.prefetch(obj);
        }
    }
}

impl MarkIndex for MutHeap<'_> {
    fn mark_index_bound(&self) -> usize {
        self.view_bound + self.side.capacity()
    }

    #[inline(always)]
    fn mark_index(&self, obj: ObjRef) -> usize {
        if self.is_new(obj) {
            self.view_bound + (obj.word() - self.side_at.start) / (NEW_SLOTS * 8)
        } else {
            self.view.mark_index(obj)
        }
    }
}

/// The mutator's rates.
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    /// Reference writes per second per thread (0: as fast as it can).
    pub writes: u64,
    /// Allocations per second per thread.
    pub allocs: u64,
}

/// When a mutator thread stops.
pub enum Until<'s> {
    /// When the flag is set.
    Flag(&'s AtomicBool),
    /// After this long.
    Elapsed(Duration),
}

/// What marking the mutator serves while it runs.
pub trait Gc {
    /// The barrier before overwriting a slot whose old value was `old`.
    fn pre_write(&mut self, old: Option<ObjRef>);
    /// A new object, to mark black.
    fn allocated(&mut self, obj: ObjRef);
    /// Called every [`BATCH`] operations: `true` to stop (the marking is
    /// done, as far as the mutator can tell). May run an increment.
    fn poll(&mut self) -> bool;
}

/// No marking: no barrier.
pub struct NoGc;

impl Gc for NoGc {
    #[inline(always)]
    fn pre_write(&mut self, _: Option<ObjRef>) {}
    #[inline(always)]
    fn allocated(&mut self, _: ObjRef) {}
    fn poll(&mut self) -> bool {
        false
    }
}

impl<H: ObjectModel, S: MarkStore<H>> Gc for MutatorBuffer<'_, '_, H, S> {
    #[inline(always)]
    fn pre_write(&mut self, old: Option<ObjRef>) {
        MutatorBuffer::pre_write(self, old);
    }
    #[inline(always)]
    fn allocated(&mut self, obj: ObjRef) {
        self.allocate_black(obj);
    }
    fn poll(&mut self) -> bool {
        false
    }
}

/// One mutator thread: its roots and random stream (xorshift: no
/// allocation, a few instructions).
pub struct Mutator {
    old: Vec<ObjRef>,
    new: Vec<ObjRef>,
    rng: u64,
    /// Reference writes done.
    pub writes: u64,
    /// Objects allocated.
    pub allocs: u64,
}

impl Mutator {
    /// A mutator whose roots are a sample of those of `roots` that have
    /// slots (a write stores into a root's slot).
    pub fn new(heap: &MutHeap<'_>, roots: &[ObjRef], seed: u64) -> Mutator {
        let mut m = Mutator {
            old: Vec::with_capacity(STACK),
            new: Vec::with_capacity(STACK),
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            writes: 0,
            allocs: 0,
        };
        let roots: Vec<ObjRef> = roots
            .iter()
            .copied()
            .filter(|&r| heap.view.slot_count(r) > 0)
            .collect();
        for _ in 0..STACK.min(roots.len()) {
            let r = roots[m.below(roots.len())];
            m.old.push(r);
        }
        m
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 32) as usize * n) >> 32
    }

    /// A snapshot object this thread can reach: a root, or up to `depth`
    /// strong edges from one.
    fn reach(&mut self, heap: &MutHeap<'_>, depth: usize) -> Option<ObjRef> {
        if self.old.is_empty() {
            return None;
        }
        let i = self.below(self.old.len());
        let mut o = self.old[i];
        for _ in 0..self.below(depth + 1) {
            let n = heap.view.slot_count(o);
            if n == 0 {
                break;
            }
            let k = self.below(n);
            let mut next = None;
            heap.view.scan_slots(o, k..k + 1, |_, t, kind| {
                if kind == SlotKind::Strong {
                    next = Some(t);
                }
            });
            match next {
                Some(t) => o = t,
                None => break,
            }
        }
        Some(o)
    }

    /// One reference write: a random slot of one of this thread's roots (a
    /// new object, one time in four) gets an object at most one edge from
    /// another root, which sometimes becomes a root (if it has slots): the
    /// roots drift through the heap. Skipped (not counted) when the slot is
    /// not a strong one.
    fn write(&mut self, heap: &MutHeap<'_>, gc: &mut impl Gc) {
        let Some(target) = self.reach(heap, 1) else {
            return;
        };
        if !self.new.is_empty() && self.below(4) == 0 {
            let i = self.below(self.new.len());
            let obj = self.new[i];
            let slot = heap.side.slot(obj, self.below(NEW_SLOTS));
            // Relaxed: see `MutHeap::scan_slots`.
            let old = slot.swap(target.word(), Relaxed);
            gc.pre_write(ObjRef::from_word(old));
            self.writes += 1;
            return;
        }
        let Some(obj) = self.reach(heap, 0) else {
            return;
        };
        // Every root has slots (`new`, `push_root`).
        let n = heap.view.slot_count(obj);
        // Slots other than strong ones are refused; the write is skipped.
        if let Ok(old) = heap.view.store_slot(obj, self.below(n), Some(target)) {
            gc.pre_write(old);
            self.writes += 1;
            if self.below(8) == 0 {
                self.push_root(heap, target);
            }
        }
    }

    /// Makes `obj` a root, in place of a random one once the roots are
    /// [`STACK`]; not if it has no slots (nothing could be written into it).
    /// This thread's roots (its "stack"): the snapshot objects and the new
    /// objects it holds. A collection must mark from them as well as from the
    /// snapshot's roots, as a runtime scans its threads' stacks: a root may
    /// have become unreachable from the snapshot's roots, and the thread may
    /// still store it into the heap.
    pub fn roots(&self) -> Vec<ObjRef> {
        self.old.iter().chain(&self.new).copied().collect()
    }

    fn push_root(&mut self, heap: &MutHeap<'_>, obj: ObjRef) {
        if heap.view.slot_count(obj) == 0 {
            return;
        }
        if self.old.len() < STACK {
            self.old.push(obj);
        } else {
            let i = self.below(STACK);
            self.old[i] = obj;
        }
    }

    /// One allocation, marked black, kept as a root.
    fn allocate(&mut self, heap: &MutHeap<'_>, gc: &mut impl Gc) {
        let init = [self.reach(heap, 1), self.new.last().copied()];
        if let Some(obj) = heap.side.allocate(init) {
            gc.allocated(obj);
            self.allocs += 1;
            if self.new.len() < STACK {
                self.new.push(obj);
            } else {
                let i = self.below(STACK);
                self.new[i] = obj;
            }
        }
    }

    /// Runs at `rates` until `until`, or until `gc` says to stop; counts
    /// the writes and allocations done in `self`. Both rates are kept in
    /// time: the writes done (not the attempts, some of which are skipped)
    /// against `rates.writes`, the allocations tried against
    /// `rates.allocs`, so that either holds whatever the other is.
    pub fn run(&mut self, heap: &MutHeap<'_>, rates: Rates, until: &Until<'_>, gc: &mut impl Gc) {
        let start = Instant::now();
        let writes0 = self.writes;
        let (mut allocs_tried, mut allocs_due) = (0u64, 0u64);
        loop {
            for _ in 0..BATCH {
                self.write(heap, gc);
                if allocs_tried < allocs_due {
                    allocs_tried += 1;
                    self.allocate(heap, gc);
                }
            }
            if gc.poll() {
                return;
            }
            let mut elapsed = start.elapsed();
            match until {
                Until::Flag(f) if f.load(Relaxed) => return,
                Until::Elapsed(d) if elapsed >= *d => return,
                _ => {}
            }
            if rates.writes > 0 {
                // Ahead of schedule: sleep until the schedule catches up
                // (in steps of at least 200 µs, so the sleeps are few).
                let done = self.writes - writes0;
                let due = Duration::from_secs_f64(done as f64 / rates.writes as f64);
                if due > elapsed + Duration::from_micros(200) {
                    std::thread::sleep(due - elapsed);
                    elapsed = start.elapsed();
                }
            }
            allocs_due = (elapsed.as_secs_f64() * rates.allocs as f64) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stealmark_heap::{generate_heap, GenConfig, HeapGraph, Shape};

    /// A runtime-shaped heap: many of its objects have no slots, so a
    /// mutator whose roots drifted onto them would skip most writes.
    fn runtime_heap() -> stealmark_heap::Heap {
        generate_heap(&GenConfig::new(Shape::Runtime, 20_000))
            .unwrap()
            .heap
    }

    fn run_for(m: &mut Mutator, heap: &MutHeap<'_>, rates: Rates, ms: u64) -> f64 {
        let start = Instant::now();
        m.run(
            heap,
            rates,
            &Until::Elapsed(Duration::from_millis(ms)),
            &mut NoGc,
        );
        start.elapsed().as_secs_f64()
    }

    #[test]
    fn roots_keep_slots_and_the_write_rate_counts_writes_done() {
        let built = runtime_heap();
        let leaves: u64 = built
            .view()
            .objects()
            .filter(|&o| built.view().slot_count(o) == 0)
            .count() as u64;
        assert!(leaves > built.view().object_count() / 4, "{leaves} leaves");
        let side = Side::new(1000);
        let heap = MutHeap::new(built.view(), &side);
        let mut m = Mutator::new(&heap, built.roots(), 7);
        let rate = 20_000;
        let rates = Rates {
            writes: rate,
            allocs: 0,
        };
        let secs = run_for(&mut m, &heap, rates, 300);
        assert!(!m.old.is_empty());
        assert!(m.old.iter().all(|&r| heap.view.slot_count(r) > 0));
        // Paced on writes done: never ahead of the schedule by more than a
        // batch, and not far behind it (each write takes well under 1 µs,
        // so half the rate leaves room for a loaded machine). Pacing on
        // attempts, or roots without slots, wrote about a third of it.
        let asked = rate as f64 * secs;
        assert!(
            m.writes as f64 <= asked + BATCH as f64,
            "{} > {asked}",
            m.writes
        );
        assert!(m.writes as f64 >= asked / 2.0, "{} < {asked} / 2", m.writes);
    }

    #[test]
    fn allocations_keep_their_own_rate_when_writes_are_unpaced() {
        let built = runtime_heap();
        let side = Side::new(1 << 16);
        let heap = MutHeap::new(built.view(), &side);
        let mut m = Mutator::new(&heap, built.roots(), 9);
        let rates = Rates {
            writes: 0,
            allocs: 1000,
        };
        let secs = run_for(&mut m, &heap, rates, 100);
        // Unpaced writes number in the thousands at least; the allocations
        // follow the clock, not one per write.
        assert!(m.writes > 10_000, "{} writes", m.writes);
        assert!(
            m.allocs as f64 <= 1000.0 * secs + 1.0,
            "{} allocations",
            m.allocs
        );
    }
}
