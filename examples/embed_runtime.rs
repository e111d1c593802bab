//! A toy runtime that uses stealmark as its mark phase, with the whole
//! runtime contract: weak fields, WeakMaps (ephemerons) and finalizers.
//!
//! Objects live in a bumpalo arena, 8-aligned, so their addresses are their
//! [`ObjRef`]s. A header byte holds the mark bit ([`MarkStore`] over
//! headers, so the engine runs through [`Marker::collect_with`]); a kind byte
//! says whether the object is a plain node (some of whose fields are weak)
//! or a WeakMap (field pairs: a weak key slot and an ephemeron value slot).
//! Some objects have finalizers, registered with the runtime.
//!
//! A randomized mutator allocates, links, unlinks, fills WeakMaps and drops
//! roots. Each collection then
//!
//! 1. runs the engine over the roots (one chunk per mutator "thread") and
//!    the registered finalizable objects;
//! 2. clears every slot the engine reported, one thread per worker's list;
//! 3. runs the finalizers of the objects reported, each exactly once (a
//!    finalizer may resurrect its object by storing it in a global root;
//!    the object is unregistered, so it is never finalized again);
//! 4. sweeps: an unmarked object is freed (its slot goes on a free list that
//!    allocation reuses), a marked one has its bit cleared;
//!
//! and checks its invariants: no field of a live object, weak or strong,
//! refers to a freed object; no finalizer ran twice; and the engine's
//! marks, cleared slots, objects to finalize and live bytes equal the
//! sequential oracle's.
//!
//! Run with `cargo run --release --example embed_runtime [-- COLLECTIONS]`
//! (1,000 by default); `cargo test` runs it with a few.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use bumpalo::Bump;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark::heap::{oracle, MarkIndex, ObjRef, ObjectModel, OracleInput, SlotKind};
use stealmark::marker::{Collection, MarkStore, Marker, MarkerConfig};
use stealmark::model::SoftRefs;

/// Fields per object: a node's references, or a WeakMap's two entries.
const FIELDS: usize = 4;
/// `Object::kind` of a plain node.
const NODE: u8 = 0;
/// `Object::kind` of a WeakMap: fields 0 and 2 are keys (weak), 1 and 3
/// their values (ephemerons).
const WEAK_MAP: u8 = 1;

/// An object of the toy runtime. Its address is its [`ObjRef`]. Every field
/// is atomic: the collector's workers read them while no mutator runs, and
/// the runtime clears reported slots from several threads.
#[repr(C, align(8))]
struct Object {
    /// Bit 0: the mark bit.
    header: AtomicU8,
    /// `NODE` or `WEAK_MAP`.
    kind: AtomicU8,
    /// Nodes: bit `i` set when field `i` is weak.
    weak_mask: AtomicU8,
    /// Whether the object is allocated (not on the free list).
    live: AtomicBool,
    /// Whether its finalizer has run since it was allocated.
    finalized: AtomicBool,
    /// A dense id: the object's mark index for the oracle.
    id: u32,
    /// Addresses of other objects, 0 for null.
    fields: [AtomicUsize; FIELDS],
}

impl Object {
    fn field(&self, i: usize) -> Option<ObjRef> {
        ObjRef::from_word(self.fields[i].load(Ordering::Relaxed))
    }

    /// The kind of slot `i`, or `None` for a null slot.
    fn slot(&self, i: usize) -> Option<(ObjRef, SlotKind)> {
        let target = self.field(i)?;
        let kind = match self.kind.load(Ordering::Relaxed) {
            WEAK_MAP if i % 2 == 0 => SlotKind::Weak,
            WEAK_MAP => match self.field(i - 1) {
                Some(key) => SlotKind::Ephemeron { key },
                // An entry without a key holds its value strongly.
                None => SlotKind::Strong,
            },
            _ if self.weak_mask.load(Ordering::Relaxed) & (1 << i) != 0 => SlotKind::Weak,
            _ => SlotKind::Strong,
        };
        Some((target, kind))
    }
}

/// The runtime's objects, as the collector sees them.
#[derive(Clone, Copy)]
struct Space<'s, 'a> {
    objects: &'s [&'a Object],
}

impl<'a> Space<'_, 'a> {
    fn get(&self, obj: ObjRef) -> &'a Object {
        // SAFETY: every ObjRef the runtime hands out (roots, fields, the
        // finalizable list) is the address of an `Object` in its arena,
        // which outlives the runtime; objects are never moved or
        // deallocated (freed ones are recycled in place).
        unsafe { &*(obj.word() as *const Object) }
    }
}

impl MarkIndex for Space<'_, '_> {
    fn mark_index_bound(&self) -> usize {
        self.objects.len()
    }
    fn mark_index(&self, obj: ObjRef) -> usize {
        self.get(obj).id as usize
    }
}

impl ObjectModel for Space<'_, '_> {
    fn size_bytes(&self, _obj: ObjRef) -> usize {
        std::mem::size_of::<Object>()
    }
    fn slot_count(&self, _obj: ObjRef) -> usize {
        FIELDS
    }
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        let o = self.get(obj);
        for i in slots.start.min(FIELDS)..slots.end.min(FIELDS) {
            if let Some((target, kind)) = o.slot(i) {
                visit(i, target, kind);
            }
        }
    }
    fn type_count(&self) -> usize {
        2
    }
    fn type_id(&self, obj: ObjRef) -> usize {
        self.get(obj).kind.load(Ordering::Relaxed) as usize
    }
}

/// Mark bits in object headers.
struct HeaderMarks;

impl<'s, 'a> MarkStore<Space<'s, 'a>> for HeaderMarks {
    fn try_mark(&self, rt: &Space<'s, 'a>, obj: ObjRef) -> bool {
        let h = &rt.get(obj).header;
        // Relaxed: the bit publishes nothing (see MarkBitmap::set); test
        // before the read-modify-write so marked objects stay shared in cache.
        h.load(Ordering::Relaxed) & 1 == 0 && h.fetch_or(1, Ordering::Relaxed) & 1 == 0
    }
    fn is_marked(&self, rt: &Space<'s, 'a>, obj: ObjRef) -> bool {
        // Relaxed: the same bit `try_mark` sets with an atomic
        // read-modify-write, as the MarkStore contract asks.
        rt.get(obj).header.load(Ordering::Relaxed) & 1 != 0
    }
}

/// What the runtime saw over a run, for its caller.
#[derive(Debug, Default)]
pub struct Summary {
    /// Collections run.
    pub collections: usize,
    /// Objects freed by the sweeps.
    pub freed: u64,
    /// Slots cleared from the engine's reports.
    pub cleared: u64,
    /// Finalizers run.
    pub finalized: u64,
    /// Objects their finalizer resurrected.
    pub resurrected: u64,
}

/// The runtime: an arena, every object ever allocated, a free list, roots
/// per mutator thread, a global root list (where finalizers resurrect), and
/// the objects registered for finalization.
struct Runtime<'a> {
    arena: &'a Bump,
    objects: Vec<&'a Object>,
    free: Vec<&'a Object>,
    stacks: Vec<Vec<ObjRef>>,
    finalizable: Vec<ObjRef>,
    rng: Pcg64,
}

impl<'a> Runtime<'a> {
    fn get(&self, obj: ObjRef) -> &'a Object {
        self.space().get(obj)
    }

    fn space(&self) -> Space<'_, 'a> {
        Space {
            objects: &self.objects,
        }
    }

    fn obj_ref(o: &Object) -> ObjRef {
        ObjRef::from_word(o as *const Object as usize).expect("objects are 8-aligned")
    }

    /// Allocates an object of `kind`, reusing a freed one if any; registers
    /// it for finalization with probability `finalizer`.
    fn alloc(&mut self, kind: u8, finalizer: f64) -> ObjRef {
        let obj: &'a Object = match self.free.pop() {
            Some(o) => o,
            None => {
                let id = u32::try_from(self.objects.len()).expect("fewer than 2^32 objects");
                let o = self.arena.alloc(Object {
                    header: AtomicU8::new(0),
                    kind: AtomicU8::new(NODE),
                    weak_mask: AtomicU8::new(0),
                    live: AtomicBool::new(false),
                    finalized: AtomicBool::new(false),
                    id,
                    fields: Default::default(),
                });
                self.objects.push(o);
                o
            }
        };
        assert!(
            !obj.live.load(Ordering::Relaxed),
            "allocating a live object"
        );
        obj.kind.store(kind, Ordering::Relaxed);
        obj.weak_mask
            .store(self.rng.random_range(0..16), Ordering::Relaxed);
        obj.live.store(true, Ordering::Relaxed);
        obj.finalized.store(false, Ordering::Relaxed);
        for f in &obj.fields {
            f.store(0, Ordering::Relaxed);
        }
        let r = Self::obj_ref(obj);
        if self.rng.random_bool(finalizer) {
            self.finalizable.push(r);
        }
        r
    }

    /// A random live object reachable from a root, by a short random walk,
    /// or any live object.
    fn some_object(&mut self) -> Option<ObjRef> {
        if self.rng.random_bool(0.3) {
            let live: Vec<&Object> = self
                .objects
                .iter()
                .copied()
                .filter(|o| o.live.load(Ordering::Relaxed))
                .take(64)
                .collect();
            return (!live.is_empty())
                .then(|| Self::obj_ref(live[self.rng.random_range(0..live.len())]));
        }
        let stack = &self.stacks[self.rng.random_range(0..self.stacks.len())];
        let mut at = *stack.get(self.rng.random_range(0..stack.len().max(1)))?;
        for _ in 0..self.rng.random_range(0..4) {
            match self.get(at).field(self.rng.random_range(0..FIELDS)) {
                Some(next) => at = next,
                None => break,
            }
        }
        Some(at)
    }

    /// One burst of mutation: allocate and link objects, fill WeakMaps,
    /// overwrite fields, push and drop roots.
    fn mutate(&mut self, steps: usize) {
        for _ in 0..steps {
            let kind = if self.rng.random_bool(0.1) {
                WEAK_MAP
            } else {
                NODE
            };
            let new = self.alloc(kind, 0.05);
            // Link it from something reachable (or root it).
            match self.some_object() {
                Some(parent) if self.rng.random_bool(0.8) => {
                    let i = self.rng.random_range(0..FIELDS);
                    self.get(parent).fields[i].store(new.word(), Ordering::Relaxed);
                }
                _ => {
                    let s = self.rng.random_range(0..self.stacks.len());
                    self.stacks[s].push(new);
                }
            }
            // Give it some fields: keys and values for maps.
            for i in 0..FIELDS {
                if self.rng.random_bool(0.5) {
                    let target = self.some_object().map_or(0, ObjRef::word);
                    self.get(new).fields[i].store(target, Ordering::Relaxed);
                }
            }
            if self.rng.random_bool(0.1) {
                // Drop a root.
                let s = self.rng.random_range(0..self.stacks.len());
                if !self.stacks[s].is_empty() {
                    let k = self.rng.random_range(0..self.stacks[s].len());
                    self.stacks[s].swap_remove(k);
                }
            }
        }
    }

    /// Frees every unmarked object and clears the marks of the others.
    /// Returns the number freed.
    fn sweep(&mut self) -> u64 {
        let mut freed = 0;
        for &o in &self.objects {
            if !o.live.load(Ordering::Relaxed) {
                continue;
            }
            if o.header.load(Ordering::Relaxed) & 1 != 0 {
                o.header.store(0, Ordering::Relaxed);
            } else {
                o.live.store(false, Ordering::Relaxed);
                self.free.push(o);
                freed += 1;
            }
        }
        freed
    }

    /// No field of a live object, weak or strong, refers to a freed object;
    /// every root and registered finalizable object is live.
    fn check_invariants(&self) {
        for &o in &self.objects {
            if !o.live.load(Ordering::Relaxed) {
                continue;
            }
            for i in 0..FIELDS {
                if let Some(t) = o.field(i) {
                    assert!(
                        self.get(t).live.load(Ordering::Relaxed),
                        "object {} field {i} ({:?}) refers to freed object {}",
                        o.id,
                        o.slot(i).map(|(_, k)| k),
                        self.get(t).id
                    );
                }
            }
        }
        for &r in self.stacks.iter().flatten().chain(&self.finalizable) {
            assert!(self.get(r).live.load(Ordering::Relaxed), "a root was freed");
        }
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v
}

/// Runs `collections` cycles of mutation and collection; panics if an
/// invariant breaks or the engine disagrees with the oracle.
pub fn run(collections: usize, verbose: bool) -> Summary {
    let arena = Bump::new();
    let mut rt = Runtime {
        arena: &arena,
        objects: Vec::new(),
        free: Vec::new(),
        stacks: vec![Vec::new(); 4],
        finalizable: Vec::new(),
        rng: Pcg64::seed_from_u64(2026),
    };
    let mut config = MarkerConfig::with_workers(2);
    config.set_array_chunk(16);
    let mut marker = Marker::new(config).expect("a valid configuration");
    let mut summary = Summary::default();
    for cycle in 0..collections {
        rt.mutate(400);
        // The global root list, where finalizers resurrect objects, is the
        // last "stack".
        let flat: Vec<ObjRef> = rt.stacks.iter().flatten().copied().collect();
        let expect = oracle(
            &rt.space(),
            &OracleInput {
                roots: &flat,
                finalizable: &rt.finalizable,
                soft_refs: SoftRefs::ClearAll,
            },
        );
        let space = rt.space();
        let collection =
            Collection::new(rt.stacks.as_slice()).finalizable(rt.finalizable.as_slice());
        let report = marker.collect_with(&space, &HeaderMarks, &collection);

        // The engine against the oracle.
        let marked: Vec<usize> = rt
            .objects
            .iter()
            .filter(|o| o.header.load(Ordering::Relaxed) & 1 != 0)
            .map(|o| o.id as usize)
            .collect();
        assert_eq!(
            marked,
            expect.marked.iter().collect::<Vec<_>>(),
            "cycle {cycle}: marks"
        );
        let cleared = sorted(report.cleared().copied().collect());
        assert_eq!(cleared, expect.cleared, "cycle {cycle}: cleared slots");
        let to_finalize = sorted(report.to_finalize().collect());
        assert_eq!(
            to_finalize, expect.to_finalize,
            "cycle {cycle}: to finalize"
        );
        assert_eq!(
            report.live_bytes(),
            expect.bytes,
            "cycle {cycle}: live bytes"
        );

        // Clear the reported slots, one thread per worker's list.
        std::thread::scope(|s| {
            for list in report.cleared_by_worker().filter(|l| !l.is_empty()) {
                s.spawn(move || {
                    for w in list {
                        space.get(w.holder).fields[w.slot].store(0, Ordering::Relaxed);
                    }
                });
            }
        });
        summary.cleared += cleared.len() as u64;

        // Run the finalizers: each object once, then unregistered. One in
        // four resurrects its object into the global roots.
        for f in to_finalize {
            let o = rt.get(f);
            assert!(
                !o.finalized.swap(true, Ordering::Relaxed),
                "cycle {cycle}: object {} finalized twice",
                o.id
            );
            summary.finalized += 1;
            if rt.rng.random_bool(0.25) {
                rt.stacks[3].push(f);
                summary.resurrected += 1;
            }
        }
        let space = rt.space();
        let finalizable: Vec<ObjRef> = rt
            .finalizable
            .iter()
            .copied()
            .filter(|&f| !space.get(f).finalized.load(Ordering::Relaxed))
            .collect();
        rt.finalizable = finalizable;

        let freed = rt.sweep();
        summary.freed += freed;
        rt.check_invariants();
        summary.collections += 1;
        if verbose && (cycle % 100 == 0 || cycle + 1 == collections) {
            let st = report.stats;
            println!(
                "collection {cycle}: {} objects, {} live ({} KiB), {} slots cleared, {} finalized, {} freed, {} steps, {:.0} us",
                rt.objects.len(),
                report.live_objects(),
                report.live_bytes() / 1024,
                cleared.len(),
                st.total().finalized,
                freed,
                st.steps.len(),
                st.pause_ns as f64 / 1e3
            );
        }
        // Keep the heap from growing without bound: drop old roots.
        for s in &mut rt.stacks {
            if s.len() > 64 {
                s.drain(..s.len() - 64);
            }
        }
    }
    summary
}

fn main() {
    let collections = std::env::args()
        .nth(1)
        .map_or(1000, |a| a.parse().expect("COLLECTIONS"));
    let s = run(collections, true);
    println!(
        "{} collections: {} objects freed, {} slots cleared, {} finalizers run ({} resurrected); every invariant held",
        s.collections, s.freed, s.cleared, s.finalized, s.resurrected
    );
}

/// A few collections under `cargo test`, so that the example stays honest.
#[cfg(test)]
mod tests {
    #[test]
    fn the_toy_runtime_keeps_its_invariants() {
        let s = super::run(60, false);
        assert_eq!(s.collections, 60);
        assert!(s.freed > 0 && s.cleared > 0 && s.finalized > 0, "{s:?}");
    }
}
