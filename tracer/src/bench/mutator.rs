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
    /// A mutator whose roots are a sample of `roots`.
    pub fn new(roots: &[ObjRef], seed: u64) -> Mutator {
        let mut m = Mutator {
            old: Vec::with_capacity(STACK),
            new: Vec::with_capacity(STACK),
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            writes: 0,
            allocs: 0,
        };
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
    /// another root, which sometimes becomes a root: the roots drift
    /// through the heap.
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
        let n = heap.view.slot_count(obj);
        if n == 0 {
            return;
        }
        // Slots other than strong ones are refused; the write is skipped.
        if let Ok(old) = heap.view.store_slot(obj, self.below(n), Some(target)) {
            gc.pre_write(old);
            self.writes += 1;
            if self.below(8) == 0 {
                self.push_root(target);
            }
        }
    }

    fn push_root(&mut self, obj: ObjRef) {
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
    /// the writes and allocations done in `self`.
    pub fn run(&mut self, heap: &MutHeap<'_>, rates: Rates, until: &Until<'_>, gc: &mut impl Gc) {
        let start = Instant::now();
        let alloc_every = rates
            .writes
            .max(rates.allocs)
            .checked_div(rates.allocs)
            .map_or(u64::MAX, |n| n.max(1));
        let mut ops = 0u64;
        loop {
            for _ in 0..BATCH {
                self.write(heap, gc);
                ops += 1;
                if ops % alloc_every == 0 {
                    self.allocate(heap, gc);
                }
            }
            if gc.poll() {
                return;
            }
            let elapsed = start.elapsed();
            match until {
                Until::Flag(f) if f.load(Relaxed) => return,
                Until::Elapsed(d) if elapsed >= *d => return,
                _ => {}
            }
            if rates.writes > 0 {
                // Ahead of schedule: sleep until the schedule catches up
                // (in steps of at least 200 µs, so the sleeps are few).
                let due = Duration::from_secs_f64(ops as f64 / rates.writes as f64);
                if due > elapsed + Duration::from_micros(200) {
                    std::thread::sleep(due - elapsed);
                }
            }
        }
    }
}
