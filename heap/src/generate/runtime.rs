//! The `runtime` shape: a heap like a managed runtime's.
//!
//! Objects come from a small class table with size classes (boxes, pairs,
//! tree nodes with parent pointers, hash entries, records, strings and byte
//! arrays of varying length, object arrays from 4 to 65 536 slots, weak
//! references). A fraction of them, spread through the heap, is garbage.
//!
//! Reachability is known by construction: the live objects form a
//! breadth-first spanning forest (each live object takes the next live
//! objects not yet attached as the children of some of its strong slots),
//! every forest root is a heap root, and live objects only ever strongly
//! reference live objects. Other slots of live objects are cross edges to
//! live objects (half of them near in allocation order, as in a real heap,
//! half anywhere), parent pointers (cycles), or null. The referents of
//! `WeakReference` objects (a type of kind weak-ref: slot 0 is weak) are
//! live or garbage objects alike. Garbage points anywhere.

use rand::Rng;
use rand_pcg::Pcg64;

use super::{setup, GenError, GenInfo, Shape};
use crate::arena::{ArenaLayout, ObjectHeader, Pos, Slot, TypeKind};

use crate::sink::{HeapSink, Layout};

/// A class of the class table.
struct Class {
    name: &'static str,
    /// Relative frequency.
    weight: u32,
    /// Fixed slot and payload counts, unless `kind` varies them.
    slots: u32,
    payload: u32,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    /// Slot `slots - 1` points to the tree parent.
    TreeNode,
    /// Payload length from the string size classes.
    Bytes,
    /// Slot count from the array size classes.
    Array,
    /// Slot 0 is weak: the type's kind is weak-ref.
    WeakRef,
}

const CLASSES: &[Class] = &[
    Class {
        name: "Object",
        weight: 5,
        slots: 0,
        payload: 0,
        kind: Kind::Plain,
    },
    Class {
        name: "Box",
        weight: 10,
        slots: 1,
        payload: 1,
        kind: Kind::Plain,
    },
    Class {
        name: "Pair",
        weight: 12,
        slots: 2,
        payload: 0,
        kind: Kind::Plain,
    },
    Class {
        name: "TreeNode",
        weight: 12,
        slots: 3,
        payload: 1,
        kind: Kind::TreeNode,
    },
    Class {
        name: "HashEntry",
        weight: 12,
        slots: 3,
        payload: 1,
        kind: Kind::Plain,
    },
    Class {
        name: "Record",
        weight: 8,
        slots: 6,
        payload: 2,
        kind: Kind::Plain,
    },
    Class {
        name: "LargeRecord",
        weight: 2,
        slots: 12,
        payload: 6,
        kind: Kind::Plain,
    },
    Class {
        name: "String",
        weight: 20,
        slots: 0,
        payload: 0,
        kind: Kind::Bytes,
    },
    Class {
        name: "byte[]",
        weight: 5,
        slots: 0,
        payload: 0,
        kind: Kind::Bytes,
    },
    Class {
        name: "Object[]",
        weight: 8,
        slots: 0,
        payload: 0,
        kind: Kind::Array,
    },
    Class {
        name: "WeakReference",
        weight: 3,
        slots: 2,
        payload: 0,
        kind: Kind::WeakRef,
    },
];

/// Payload words of strings and byte arrays (size classes, 8 to 1024 bytes),
/// with relative frequencies: most are small.
const BYTE_CLASSES: &[(u32, u32)] = &[
    (1, 20),
    (2, 20),
    (3, 15),
    (4, 15),
    (6, 10),
    (8, 8),
    (16, 6),
    (32, 3),
    (64, 2),
    (128, 1),
];
/// Object array lengths, with relative frequencies.
const ARRAY_CLASSES: &[(u32, u32)] = &[
    (4, 30),
    (8, 25),
    (16, 20),
    (32, 12),
    (64, 8),
    (256, 4),
    (1024, 1),
];
/// One object array in this many is a large one.
const LARGE_ARRAY_ODDS: u64 = 50_000;
const LARGE_ARRAY_SLOTS: u32 = 65_536;

/// A strong slot of a live object: the share that becomes a tree edge (while
/// unattached live objects remain) and the share of cross edges; the rest is
/// null.
const TREE_SHARE: f64 = 0.4;
const CROSS_SHARE: f64 = 0.35;
/// Weak referents that are garbage (when there is garbage).
const WEAK_TO_GARBAGE: f64 = 0.5;
/// Extra roots (static fields) pointing at random live objects.
const STATIC_ROOTS: u64 = 32;

/// Half the cross edges go to a live object at most this many live objects
/// away in allocation order.
const NEAR: u64 = 256;

const LIVE: u8 = 0x80;
const NO_PARENT: u32 = u32::MAX;

/// Uniform random picks from a table of positions, drawn `PICK_AHEAD` picks
/// in advance so that the table entry can be prefetched: the tables are far
/// larger than the caches and the picks are random, so each pick would
/// otherwise wait for memory. The picks are still i.i.d. uniform and
/// deterministic (the draws are only made earlier).
struct RandomPicks {
    ahead: [u32; PICK_AHEAD],
    next: usize,
}

const PICK_AHEAD: usize = 32;

impl RandomPicks {
    fn new(table: &[Pos], rng: &mut Pcg64) -> RandomPicks {
        let mut ahead = [0; PICK_AHEAD];
        if !table.is_empty() {
            for a in &mut ahead {
                *a = rng.random_range(0..table.len() as u64) as u32;
            }
        }
        RandomPicks { ahead, next: 0 }
    }

    /// The next pick from `table` (which must be the non-empty table given to
    /// `new`).
    #[inline]
    fn next(&mut self, table: &[Pos], rng: &mut Pcg64) -> Pos {
        let pick = table[self.ahead[self.next] as usize];
        let fresh = rng.random_range(0..table.len() as u64) as u32;
        stealmark_model::prefetch_read(table[fresh as usize..].as_ptr().cast());
        self.ahead[self.next] = fresh;
        self.next = (self.next + 1) % PICK_AHEAD;
        pick
    }
}

/// Picks a value from `(value, weight)` pairs in proportion to the weights.
pub(super) fn pick_weighted<T: Copy>(table: &[(T, u32)], rng: &mut Pcg64) -> T {
    let total: u64 = table.iter().map(|&(_, w)| u64::from(w)).sum();
    let mut pick = rng.random_range(0..total);
    for &(value, weight) in table {
        if pick < u64::from(weight) {
            return value;
        }
        pick -= u64::from(weight);
    }
    table[table.len() - 1].0
}

pub(super) fn generate<S: HeapSink>(
    n: u64,
    garbage_fraction: f64,
    pref: Option<ArenaLayout>,
    rng: &mut Pcg64,
    sink: &mut S,
) -> Result<GenInfo, GenError<S::Error>> {
    let class_weights: Vec<(usize, u32)> = CLASSES
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.weight))
        .collect();
    // Plan: class, slot count, payload and liveness of every object; then,
    // once the layout is chosen, the positions of the live and of the
    // garbage objects.
    let n_us = n as usize;
    let mut class_of: Vec<u8> = Vec::with_capacity(n_us);
    let mut slots_of: Vec<u32> = Vec::with_capacity(n_us);
    let mut payload_of: Vec<u32> = Vec::with_capacity(n_us);
    let mut words = [1u64; 2];
    for i in 0..n {
        let c = pick_weighted(&class_weights, rng);
        let class = &CLASSES[c];
        let (slots, payload) = match class.kind {
            Kind::Bytes => (0, pick_weighted(BYTE_CLASSES, rng)),
            Kind::Array => {
                let len = if rng.random_range(0..LARGE_ARRAY_ODDS) == 0 {
                    LARGE_ARRAY_SLOTS
                } else {
                    pick_weighted(ARRAY_CLASSES, rng)
                };
                (len, 0)
            }
            _ => (class.slots, class.payload),
        };
        let is_live = i == 0 || !rng.random_bool(garbage_fraction);
        for (w, layout) in words.iter_mut().zip(ArenaLayout::ALL) {
            *w += ObjectHeader::new(0, slots, payload).size_words(layout);
        }
        class_of.push(c as u8 | if is_live { LIVE } else { 0 });
        slots_of.push(slots);
        payload_of.push(payload);
    }
    let mut type_ids = Vec::with_capacity(CLASSES.len());
    for class in CLASSES {
        let id = sink.type_name(class.name)?;
        if class.kind == Kind::WeakRef {
            sink.type_kind(id, TypeKind::WeakRef)?;
        }
        type_ids.push(id);
    }
    let arena_layout = setup(sink, pref, |l| words[l as usize])?;
    let arena_words = words[arena_layout as usize];
    let mut live: Vec<Pos> = Vec::with_capacity(n_us);
    let mut garbage: Vec<Pos> = Vec::new();
    let mut layout = Layout::with_layout(arena_layout);
    for i in 0..n_us {
        let pos = layout.push(slots_of[i], payload_of[i]);
        if class_of[i] & LIVE != 0 {
            live.push(pos);
        } else {
            garbage.push(pos);
        }
    }
    sink.reserve(n, arena_words);
    let n_live = live.len() as u64;
    let n_garbage = garbage.len() as u64;
    let mut parent: Vec<u32> = vec![NO_PARENT; live.len()];
    let mut next_child = 0usize;
    let mut roots = 0u64;
    let mut live_index = 0usize;
    let mut buf: Vec<Slot> = Vec::with_capacity(LARGE_ARRAY_SLOTS as usize);
    let mut any_live = RandomPicks::new(&live, rng);
    let mut any_garbage = RandomPicks::new(&garbage, rng);
    for i in 0..n_us {
        let c = class_of[i];
        let class = &CLASSES[(c & !LIVE) as usize];
        let slots = slots_of[i];
        buf.clear();
        if c & LIVE != 0 {
            let j = live_index;
            live_index += 1;
            if next_child <= j {
                // Not attached to the forest: a root.
                sink.root(live[j])?;
                roots += 1;
                next_child = j + 1;
            }
            for k in 0..slots {
                let slot = if class.kind == Kind::WeakRef && k == 0 {
                    let target = if n_garbage > 0 && rng.random_bool(WEAK_TO_GARBAGE) {
                        any_garbage.next(&garbage, rng)
                    } else {
                        any_live.next(&live, rng)
                    };
                    Slot::strong(target)
                } else if class.kind == Kind::TreeNode && k == slots - 1 && parent[j] != NO_PARENT {
                    Slot::strong(live[parent[j] as usize])
                } else {
                    let r: f64 = rng.random();
                    if r < TREE_SHARE && next_child < live.len() {
                        parent[next_child] = j as u32;
                        next_child += 1;
                        Slot::strong(live[next_child - 1])
                    } else if r < TREE_SHARE + CROSS_SHARE / 2.0 {
                        // A neighbour in allocation order: heaps have locality.
                        let lo = (j as u64).saturating_sub(NEAR);
                        let hi = (j as u64 + NEAR).min(n_live - 1);
                        Slot::strong(live[rng.random_range(lo..=hi) as usize])
                    } else if r < TREE_SHARE + CROSS_SHARE {
                        Slot::strong(any_live.next(&live, rng))
                    } else {
                        Slot::NULL
                    }
                };
                buf.push(slot);
            }
        } else {
            for _ in 0..slots {
                let r: f64 = rng.random();
                let target = if r < 0.4 && n_garbage > 0 {
                    any_garbage.next(&garbage, rng)
                } else if r < 0.7 {
                    any_live.next(&live, rng)
                } else {
                    buf.push(Slot::NULL);
                    continue;
                };
                buf.push(Slot::strong(target));
            }
        }
        sink.object(type_ids[(c & !LIVE) as usize], &buf, payload_of[i])?;
    }
    for _ in 0..STATIC_ROOTS.min(n_live) {
        sink.root(live[rng.random_range(0..n_live) as usize])?;
        roots += 1;
    }
    Ok(GenInfo {
        shape: Shape::Runtime,
        objects: n,
        garbage: n - n_live,
        roots,
        arena_words,
        reachable: Some(n_live),
        layout: arena_layout,
        finalizable: 0,
    })
}
