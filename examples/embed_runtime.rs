//! A toy runtime that uses stealmark as its mark phase.
//!
//! Objects live in a bumpalo arena. Each has a header with its mark bit, an
//! id, and reference fields (the last `weak` of them are weak references).
//! The runtime implements [`ObjectModel`] over its objects and [`MarkStore`]
//! over their header bits, marks with the parallel engine, then sweeps: live
//! objects get their mark bit cleared, dead ones go on a free list that
//! allocation reuses. Each cycle is checked against the sequential oracle.
//!
//! Run with `cargo run --release --example embed_runtime`.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use bumpalo::Bump;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark::heap::{mark_sequential, MarkIndex, ObjRef, ObjectModel, SlotKind};
use stealmark::marker::{MarkStore, Marker, MarkerConfig};

/// Fields per object.
const FIELDS: usize = 4;

/// An object of the toy runtime. Its address is its [`ObjRef`].
#[repr(C, align(8))]
struct Object {
    /// Bit 0: the mark bit.
    header: AtomicU8,
    /// Fields at index `FIELDS - weak..` are weak references (set at
    /// allocation; the runtime's stand-in for a class pointer).
    weak: AtomicU8,
    /// A dense id, the object's mark index for side bitmaps and the oracle.
    id: u32,
    /// Addresses of other objects, 0 for null.
    fields: [AtomicUsize; FIELDS],
}

/// The runtime: an arena, every object ever allocated, a free list and roots.
struct Runtime<'a> {
    arena: &'a Bump,
    objects: Vec<&'a Object>,
    free: Vec<&'a Object>,
    roots: Vec<ObjRef>,
}

impl<'a> Runtime<'a> {
    fn new(arena: &'a Bump) -> Runtime<'a> {
        Runtime {
            arena,
            objects: Vec::new(),
            free: Vec::new(),
            roots: Vec::new(),
        }
    }

    /// Allocates an object with null fields, reusing a swept one if any.
    fn alloc(&mut self, weak: u8) -> ObjRef {
        let obj: &'a Object = match self.free.pop() {
            Some(o) => o,
            None => {
                let id = self.objects.len() as u32;
                let o = self.arena.alloc(Object {
                    header: AtomicU8::new(0),
                    weak: AtomicU8::new(0),
                    id,
                    fields: Default::default(),
                });
                self.objects.push(o);
                o
            }
        };
        // A recycled object is unreachable, so no marker reads it now.
        obj.weak.store(weak, Ordering::Relaxed);
        for f in &obj.fields {
            f.store(0, Ordering::Relaxed);
        }
        ObjRef::from_word(obj as *const Object as usize).expect("objects are 8-aligned")
    }

    /// Any object of the runtime, live or not.
    fn random_object(&self, rng: &mut Pcg64) -> ObjRef {
        let o = self.objects[rng.random_range(0..self.objects.len())];
        ObjRef::from_word(o as *const Object as usize).expect("objects are 8-aligned")
    }

    fn set_field(&self, obj: ObjRef, i: usize, target: Option<ObjRef>) {
        self.get(obj).fields[i].store(target.map_or(0, ObjRef::word), Ordering::Relaxed);
    }

    fn get(&self, obj: ObjRef) -> &'a Object {
        self.space().get(obj)
    }

    /// What the collector sees: the objects, without the (unshareable)
    /// allocator.
    fn space(&self) -> Space<'_, 'a> {
        Space {
            objects: &self.objects,
        }
    }

    /// Clears the mark bits of live objects and puts dead ones on the free
    /// list. Returns (live, freed).
    fn sweep(&mut self) -> (usize, usize) {
        self.free.clear();
        let mut live = 0;
        for &o in &self.objects {
            if o.header.load(Ordering::Relaxed) & 1 != 0 {
                o.header.store(0, Ordering::Relaxed);
                live += 1;
            } else {
                self.free.push(o);
            }
        }
        (live, self.free.len())
    }
}

/// The runtime's objects, as the collector sees them.
#[derive(Clone, Copy)]
struct Space<'s, 'a> {
    objects: &'s [&'a Object],
}

impl<'a> Space<'_, 'a> {
    fn get(&self, obj: ObjRef) -> &'a Object {
        // SAFETY: every ObjRef the runtime hands out is the address of an
        // `Object` in its arena, which outlives the runtime; objects are never
        // moved or freed (dead ones are recycled in place).
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
        let weak_from = FIELDS - o.weak.load(Ordering::Relaxed) as usize;
        for i in slots.start.min(FIELDS)..slots.end.min(FIELDS) {
            if let Some(t) = ObjRef::from_word(o.fields[i].load(Ordering::Relaxed)) {
                visit(
                    i,
                    t,
                    if i >= weak_from {
                        SlotKind::Weak
                    } else {
                        SlotKind::Strong
                    },
                );
            }
        }
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
        rt.get(obj).header.load(Ordering::Relaxed) & 1 != 0
    }
}

fn main() {
    let arena = Bump::new();
    let mut rt = Runtime::new(&arena);
    let mut rng = Pcg64::seed_from_u64(2026);
    let mut marker = Marker::new(MarkerConfig::default()).expect("default configuration is valid");

    let mut all = Vec::new();
    for _ in 0..200_000 {
        all.push(rt.alloc(1));
    }
    for &o in &all {
        for i in 0..FIELDS {
            if rng.random_bool(0.6) {
                rt.set_field(o, i, Some(all[rng.random_range(0..all.len())]));
            }
        }
    }
    rt.roots = all[..64].to_vec();
    drop(all);

    for cycle in 0..5 {
        // Mutate: drop some roots, rewire some fields, allocate new objects.
        for _ in 0..8 {
            let k = rng.random_range(0..rt.roots.len());
            rt.roots.swap_remove(k);
        }
        for _ in 0..20_000 {
            let n = rt.alloc(1);
            let parent = rt.random_object(&mut rng);
            rt.set_field(parent, rng.random_range(0..FIELDS), Some(n));
            for i in 0..FIELDS {
                if rng.random_bool(0.5) {
                    rt.set_field(n, i, Some(rt.random_object(&mut rng)));
                }
            }
        }
        let roots = rt.roots.clone();

        let oracle = mark_sequential(&rt.space(), &roots);
        let stats = marker.mark_with(&rt.space(), &roots, &HeaderMarks).stats;
        let marked = stats.objects_marked();
        let weak = stats.total().weak_refs;
        let pause_us = stats.pause_ns as f64 / 1e3;
        assert_eq!(marked, oracle.objects, "engine and oracle disagree");
        let (live, freed) = rt.sweep();
        assert_eq!(live as u64, marked);
        println!(
            "cycle {cycle}: {} objects, marked {marked} ({weak} weak refs seen) in {pause_us:.0} µs, swept {freed} to the free list",
            rt.objects.len()
        );
    }
}
