//! A small runtime whose heap mutator threads change while the marker
//! marks: a fixed-capacity arena of objects with atomic slots (read and
//! written with `Relaxed` loads and stores on both sides), allocation by
//! bumping an atomic counter, per-thread root stacks, and a randomized
//! mutator that goes through either barrier family ([`Family`]).
//!
//! Object layout: `SLOTS` words. Slots 0 and 1 are strong, slot 2 is weak,
//! slot 3 is an ephemeron value whose key is the object's fixed key (set at
//! allocation; no key makes slot 3 strong). A word is 0 for null, else the
//! target's index + 1.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_marker::{
    MarkBitmap, MarkIndex, MarkStore, MutatorBuffer, ObjRef, ObjectModel, SlotKind,
};

/// Reference slots per object.
pub const SLOTS: usize = 4;
/// The weak slot.
const WEAK: usize = 2;
/// The ephemeron value slot.
const VALUE: usize = 3;

/// The arena: `capacity` objects, of which the first `allocated` exist.
pub struct MutHeap {
    slots: Vec<AtomicUsize>,
    /// Per object: its ephemeron key (index + 1), or 0.
    keys: Vec<AtomicUsize>,
    allocated: AtomicUsize,
    /// Yield the scanning thread every this many objects (0: never), so
    /// that marking a small heap lasts long enough for mutators to race it.
    pub yield_every: usize,
}

fn word(r: Option<ObjRef>) -> usize {
    r.map_or(0, |r| r.index() + 1)
}

fn target(w: usize) -> Option<ObjRef> {
    (w != 0).then(|| ObjRef::from_index(w - 1))
}

impl MutHeap {
    /// A random heap of `objects` objects (room for `capacity`): each slot
    /// points to a random object with probability 3/4; one object in five
    /// has an ephemeron key.
    pub fn random(objects: usize, capacity: usize, seed: u64) -> MutHeap {
        let mut rng = Pcg64::seed_from_u64(seed);
        let heap = MutHeap {
            slots: (0..capacity * SLOTS).map(|_| AtomicUsize::new(0)).collect(),
            keys: (0..capacity).map(|_| AtomicUsize::new(0)).collect(),
            allocated: AtomicUsize::new(objects),
            yield_every: 0,
        };
        for i in 0..objects {
            for s in 0..SLOTS {
                if rng.random_range(0..4) != 0 {
                    let t = rng.random_range(0..objects);
                    heap.slots[i * SLOTS + s].store(t + 1, Relaxed);
                }
            }
            if rng.random_range(0..5) == 0 {
                heap.keys[i].store(rng.random_range(0..objects) + 1, Relaxed);
            }
        }
        heap
    }

    /// A copy of the heap as it is now (taken while no mutator runs).
    pub fn freeze(&self) -> MutHeap {
        let copy = |v: &Vec<AtomicUsize>| {
            v.iter()
                .map(|a| AtomicUsize::new(a.load(Relaxed)))
                .collect()
        };
        MutHeap {
            slots: copy(&self.slots),
            keys: copy(&self.keys),
            allocated: AtomicUsize::new(self.allocated()),
            yield_every: 0,
        }
    }

    /// Objects allocated so far.
    pub fn allocated(&self) -> usize {
        self.allocated.load(Relaxed)
    }

    fn slot(&self, o: ObjRef, s: usize) -> &AtomicUsize {
        &self.slots[o.index() * SLOTS + s]
    }

    /// Slot `s` of `o`, read atomically.
    pub fn load(&self, o: ObjRef, s: usize) -> Option<ObjRef> {
        target(self.slot(o, s).load(Relaxed))
    }

    /// The non-strong slots of the objects allocated so far that hold a
    /// reference: holder, slot, target and kind, as a scan reports them.
    pub fn non_strong_slots(&self) -> Vec<(ObjRef, usize, ObjRef, SlotKind)> {
        let mut found = Vec::new();
        for i in 0..self.allocated() {
            let o = ObjRef::from_index(i);
            self.scan_slots(o, 0..SLOTS, |s, t, kind| {
                if !kind.is_strong() {
                    found.push((o, s, t, kind));
                }
            });
        }
        found
    }

    /// Clears slot `s` of `o` (the caller has recorded the old value).
    pub fn clear_slot(&self, o: ObjRef, s: usize) {
        self.slot(o, s).store(0, Relaxed);
    }

    /// Allocates an object whose slots are `init` and whose key is `key`,
    /// black if `black`; `None` when the arena is full.
    fn allocate<H: ObjectModel, S: MarkStore<H>>(
        &self,
        buffer: &mut MutatorBuffer<'_, '_, H, S>,
        init: [Option<ObjRef>; SLOTS],
        key: Option<ObjRef>,
        black: bool,
    ) -> Option<ObjRef> {
        let i = self.allocated.fetch_add(1, Relaxed);
        if i >= self.keys.len() {
            self.allocated.fetch_sub(1, Relaxed);
            return None;
        }
        let o = ObjRef::from_index(i);
        for (s, v) in init.into_iter().enumerate() {
            self.slot(o, s).store(word(v), Relaxed);
        }
        self.keys[i].store(word(key), Relaxed);
        if black {
            buffer.allocate_black(o);
        }
        Some(o)
    }
}

impl ObjectModel for MutHeap {
    fn size_bytes(&self, _: ObjRef) -> usize {
        8 + 8 * SLOTS
    }
    fn slot_count(&self, _: ObjRef) -> usize {
        SLOTS
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        o: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        if self.yield_every != 0 && o.index() % self.yield_every == 0 {
            std::thread::yield_now();
        }
        for s in slots.start..slots.end.min(SLOTS) {
            let Some(t) = self.load(o, s) else { continue };
            let kind = match s {
                WEAK => SlotKind::Weak,
                VALUE => match target(self.keys[o.index()].load(Relaxed)) {
                    Some(key) => SlotKind::Ephemeron { key },
                    None => SlotKind::Strong,
                },
                _ => SlotKind::Strong,
            };
            visit(s, t, kind);
        }
    }
    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for MutHeap {
    fn mark_index_bound(&self) -> usize {
        self.keys.len()
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.index()
    }
}

/// The write barrier a mutator goes through.
#[derive(Clone, Copy)]
pub enum Family<'a> {
    /// Snapshot at the beginning: the old value of every strong or
    /// ephemeron-value slot overwritten; every allocation black.
    Satb,
    /// Incremental update: for a store into a marked holder (every store
    /// when `marks` is `None`, as a concurrent mutator must), the value
    /// stored (forward) or the holder (backward), at random, whatever the
    /// slot's kind; allocations white, or, if `black_allocation`, white or
    /// black at random (a black one shades its initial values).
    IncrementalUpdate {
        marks: Option<&'a MarkBitmap>,
        black_allocation: bool,
    },
}

/// One mutator thread: its root stack and its random stream.
pub struct Mutator {
    pub roots: Vec<ObjRef>,
    rng: Pcg64,
    /// Objects this thread allocated black during the cycle.
    pub allocated: Vec<ObjRef>,
    /// Holders this thread handed to the backward barrier.
    pub rescans: u64,
}

impl Mutator {
    pub fn new(roots: Vec<ObjRef>, seed: u64) -> Mutator {
        Mutator {
            roots,
            rng: Pcg64::seed_from_u64(seed),
            allocated: Vec::new(),
            rescans: 0,
        }
    }

    /// An object this thread can reach: a root, or a few strong edges away
    /// from one (read atomically).
    fn reach(&mut self, heap: &MutHeap) -> Option<ObjRef> {
        let mut o = *self
            .roots
            .get(self.rng.random_range(0..self.roots.len().max(1)))?;
        for _ in 0..self.rng.random_range(0..4) {
            match heap.load(o, self.rng.random_range(0..2)) {
                Some(next) => o = next,
                None => break,
            }
        }
        Some(o)
    }

    /// One random operation: mostly reference writes through the barrier,
    /// some allocations, root pushes and pops.
    pub fn op<H: ObjectModel, S: MarkStore<H>>(
        &mut self,
        heap: &MutHeap,
        buffer: &mut MutatorBuffer<'_, '_, H, S>,
        family: Family<'_>,
    ) {
        let Some(x) = self.reach(heap) else { return };
        match self.rng.random_range(0..16) {
            0..=9 => {
                let s = self.rng.random_range(0..SLOTS);
                let new = match self.rng.random_range(0..4) {
                    0 => None,
                    _ => self.reach(heap),
                };
                let slot = heap.slot(x, s);
                match family {
                    // Strong and ephemeron-value slots: the weak slot's
                    // old target loses no strong path.
                    Family::Satb if s != WEAK => buffer.pre_write(target(slot.load(Relaxed))),
                    Family::Satb => {}
                    Family::IncrementalUpdate { marks, .. } => {
                        if marks.is_none_or(|m| m.contains(x.index())) {
                            if self.rng.random_bool(0.5) {
                                self.rescans += 1;
                                buffer.rescan(x);
                            } else if let Some(new) = new {
                                buffer.shade(new);
                            }
                        }
                    }
                }
                slot.store(word(new), Relaxed);
            }
            10 | 11 => {
                let init = [
                    self.reach(heap),
                    Some(x),
                    self.reach(heap),
                    self.reach(heap),
                ];
                let key = if self.rng.random_bool(0.3) {
                    self.reach(heap)
                } else {
                    None
                };
                let black = match family {
                    Family::Satb => true,
                    Family::IncrementalUpdate {
                        black_allocation, ..
                    } => black_allocation && self.rng.random_bool(0.5),
                };
                if black {
                    if let Family::IncrementalUpdate { .. } = family {
                        // A black object's initial values are stores into
                        // a marked holder.
                        init.iter()
                            .chain([&key])
                            .flatten()
                            .for_each(|&v| buffer.shade(v));
                    }
                }
                if let Some(o) = heap.allocate(buffer, init, key, black) {
                    if black {
                        self.allocated.push(o);
                    }
                    self.roots.push(o);
                }
            }
            12 | 13 => self.roots.push(x),
            _ => {
                if self.roots.len() > 2 {
                    let i = self.rng.random_range(0..self.roots.len());
                    self.roots.swap_remove(i);
                }
            }
        }
    }
}
