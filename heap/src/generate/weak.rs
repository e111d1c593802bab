//! The shapes of the whole runtime contract: `weak` (every slot kind,
//! ephemeron tables with chains, finalizable objects) and `ephemeron-chain`
//! (one chain through one table, as long as the heap).
//!
//! # `weak`
//!
//! Every object has a role, drawn in fixed proportions and shuffled through
//! the arena, so that reachability is known by construction (as the
//! [`oracle`](crate::oracle()) marks it, soft references cleared):
//!
//! | role | share | slots | live? |
//! |---|---|---|---|
//! | L: `Node`, references, `WeakMap` tables | the rest | strong slots to L only (a spanning forest from the roots, cross edges, null) | yes |
//! | references (`WeakReference` 50%, `SoftReference`, `PhantomReference` 25% each) | 3% (in L) | slot 0 the referent: an L object, a W object or a cluster root F; slot 1 strong | yes |
//! | `WeakMap` tables | as many as hold the values at load 0.8 (in L) | (key, value) entries | yes |
//! | values (`Value`) | 5% | strong to L | with a live key |
//! | W (`Weakly`) | 4% | strong to L | no: only weak, soft and phantom slots and dead keys refer to it |
//! | F (`Finalizable`, cluster root) | 0.5% | strong to its two members | resurrected: finalizable, reachable from nothing live |
//! | members: finalizable (`Finalizable`) or not (`Node`), two per F | 1% | strong to L | resurrected with their F |
//! | garbage (`Node`, references, 4-entry tables) | `g` (0.2) | strong to garbage only; other kinds anywhere | no |
//!
//! Each value sits in exactly one table entry; its key makes it live or
//! dead: an L object or the previous live value (a chain, with probability
//! 0.75), a W object or the previous dead value (dead), an F or the previous
//! resurrected value (live once finalization resurrects F). Spare entries
//! are empty or hold an L key and an L value. Half a percent of the objects
//! are L objects registered as finalizable too (reachable finalizable
//! objects, never finalized), picked with repetition.
//!
//! So the oracle marks L, the values with live or resurrected keys, and
//! every cluster (F and its two members). With every slot strong and no
//! finalizable objects (`all_strong`), it marks L, every value, the W
//! objects that an L object refers to, and the clusters whose F an L object
//! refers to.

use rand::Rng;
use rand_pcg::Pcg64;

use super::runtime::pick_weighted;
use super::{setup, GenConfig, GenError, GenInfo, Shape};
use crate::arena::{ArenaLayout, ObjectHeader, Pos, Slot, TypeKind};
use crate::sink::{HeapSink, Layout};

/// The fewest objects `weak` makes.
pub(super) const MIN_OBJECTS: u64 = 100;

/// The most objects `ephemeron-chain` makes: its table holds two slots per
/// link, at most `u32::MAX`.
pub(super) const CHAIN_MAX_OBJECTS: u64 = (1 << 31) + 2;

/// Ephemeron values, as a share of the objects.
const VALUE_SHARE: f64 = 0.05;
/// W objects.
const WEAKLY_SHARE: f64 = 0.04;
/// Cluster roots F (each with two members).
const CLUSTER_SHARE: f64 = 0.005;
/// Reference objects among the live objects.
const REF_SHARE: f64 = 0.03;
/// Finalizable entries for live objects.
const REACHABLE_FINALIZABLE: f64 = 0.005;
/// Values per table entry.
const TABLE_LOAD: f64 = 0.8;
/// The probability that a value's key is the previous value of its class.
const CHAIN: f64 = 0.75;
/// Entries per table, with relative frequencies.
const TABLE_CLASSES: &[(u32, u32)] = &[(4, 30), (8, 30), (16, 20), (64, 12), (256, 6), (1024, 2)];
/// Entries of a garbage table.
const GARBAGE_TABLE: u32 = 4;
/// A strong slot of a live object: tree edge, cross edge, else null.
const TREE_SHARE: f64 = 0.4;
const CROSS_SHARE: f64 = 0.35;
/// Half the cross edges go at most this many live objects away.
const NEAR: u64 = 256;
/// Extra roots pointing at random live objects.
const STATIC_ROOTS: u64 = 32;

/// Roles, one byte per object.
const L_NODE: u8 = 0;
const L_WEAK: u8 = 1;
const L_SOFT: u8 = 2;
const L_PHANTOM: u8 = 3;
const L_TABLE: u8 = 4;
const VALUE: u8 = 5;
const WEAKLY: u8 = 6;
const CLUSTER: u8 = 7;
const MEMBER_FINALIZABLE: u8 = 8;
const MEMBER: u8 = 9;
const G_NODE: u8 = 10;
const G_REF: u8 = 11;
const G_TABLE: u8 = 12;

/// Value classes: what the key of a value's entry is.
const LIVE_KEY: u8 = 0;
const DEAD_KEY: u8 = 1;
const RESURRECTED_KEY: u8 = 2;

/// The types, by name, and their kinds when not `all_strong`.
const TYPES: [(&str, TypeKind); 8] = [
    ("Node", TypeKind::Plain),
    ("WeakReference", TypeKind::WeakRef),
    ("SoftReference", TypeKind::SoftRef),
    ("PhantomReference", TypeKind::PhantomRef),
    ("WeakMap", TypeKind::EphemeronTable),
    ("Value", TypeKind::Plain),
    ("Weakly", TypeKind::Plain),
    ("Finalizable", TypeKind::Plain),
];

/// The type (index into [`TYPES`]), slot count and payload of a role; a
/// table's slot count is its entries times two.
fn shape_of(role: u8, entries: u32) -> (usize, u32, u32) {
    match role {
        L_NODE | MEMBER | G_NODE => (0, 3, 1),
        L_WEAK | G_REF => (1, 2, 0),
        L_SOFT => (2, 2, 0),
        L_PHANTOM => (3, 2, 0),
        L_TABLE | G_TABLE => (4, 2 * entries, 0),
        VALUE => (5, 2, 1),
        WEAKLY => (6, 1, 1),
        _ => (7, 2, 1),
    }
}

/// `round(n * share)`.
fn share(n: u64, share: f64) -> u64 {
    ((n as f64) * share).round() as u64
}

/// A uniform pick from `table`, if it is not empty.
fn any(table: &[Pos], rng: &mut Pcg64) -> Option<Pos> {
    if table.is_empty() {
        None
    } else {
        Some(table[rng.random_range(0..table.len() as u64) as usize])
    }
}

/// The roles of every object, in arena order, and the entries of each live
/// table in table order.
struct Plan {
    roles: Vec<u8>,
    tables: Vec<u32>,
    garbage: u64,
    values: u64,
    clusters: u64,
}

fn plan(n: u64, garbage_fraction: f64, rng: &mut Pcg64) -> Plan {
    let values = share(n, VALUE_SHARE);
    let weakly = share(n, WEAKLY_SHARE);
    let clusters = share(n, CLUSTER_SHARE);
    let refs = share(n, REF_SHARE);
    let mut tables = Vec::new();
    let mut capacity = 0u64;
    while (capacity as f64) * TABLE_LOAD < values as f64 {
        let entries = pick_weighted(TABLE_CLASSES, rng);
        tables.push(entries);
        capacity += u64::from(entries);
    }
    let special = values + weakly + 3 * clusters + refs + tables.len() as u64;
    // At least one live node, for the roots (MIN_OBJECTS leaves room).
    let garbage = share(n, garbage_fraction).min(n.saturating_sub(special + 1));
    let nodes = n - special - garbage;
    let mut roles = Vec::with_capacity(n as usize);
    let mut put = |role: u8, count: u64| roles.extend(std::iter::repeat_n(role, count as usize));
    put(L_NODE, nodes);
    put(L_WEAK, refs / 2);
    put(L_SOFT, refs / 4);
    put(L_PHANTOM, refs - refs / 2 - refs / 4);
    put(L_TABLE, tables.len() as u64);
    put(VALUE, values);
    put(WEAKLY, weakly);
    put(CLUSTER, clusters);
    put(MEMBER_FINALIZABLE, clusters);
    put(MEMBER, clusters);
    let garbage_refs = garbage / 5;
    let garbage_tables = garbage / 10;
    put(G_NODE, garbage - garbage_refs - garbage_tables);
    put(G_REF, garbage_refs);
    put(G_TABLE, garbage_tables);
    // Fisher-Yates, so that every role is spread through the arena.
    for i in (1..roles.len()).rev() {
        let j = rng.random_range(0..=i as u64) as usize;
        roles.swap(i, j);
    }
    Plan {
        roles,
        tables,
        garbage,
        values,
        clusters,
    }
}

/// Positions of the objects by role, in arena order.
#[derive(Default)]
struct Groups {
    live: Vec<Pos>,
    values: Vec<Pos>,
    weakly: Vec<Pos>,
    clusters: Vec<Pos>,
    members: Vec<Pos>,
    garbage: Vec<Pos>,
}

pub(super) fn generate<S: HeapSink>(
    config: &GenConfig,
    garbage_fraction: f64,
    rng: &mut Pcg64,
    sink: &mut S,
) -> Result<GenInfo, GenError<S::Error>> {
    let n = config.objects;
    let p = plan(n, garbage_fraction, rng);
    let entries_of = |table: &mut usize, role: u8| match role {
        L_TABLE => {
            *table += 1;
            p.tables[*table - 1]
        }
        G_TABLE => GARBAGE_TABLE,
        _ => 0,
    };
    let header = |role: u8, entries: u32| {
        let (_, slots, payload) = shape_of(role, entries);
        ObjectHeader::new(0, slots, payload)
    };
    let mut words = [1u64; 2];
    let mut table = 0;
    for &role in &p.roles {
        let h = header(role, entries_of(&mut table, role));
        for (w, layout) in words.iter_mut().zip(ArenaLayout::ALL) {
            *w += h.size_words(layout);
        }
    }
    let mut types = [0u32; TYPES.len()];
    for (t, &(name, kind)) in types.iter_mut().zip(&TYPES) {
        *t = sink.type_name(name)?;
        if !config.all_strong && kind != TypeKind::Plain {
            sink.type_kind(*t, kind)?;
        }
    }
    let layout = setup(sink, config.layout, |l| words[l as usize])?;
    let arena_words = words[layout as usize];
    sink.reserve(n, arena_words);

    // Positions by group.
    let mut g = Groups::default();
    let mut placer = Layout::with_layout(layout);
    let mut table = 0;
    for &role in &p.roles {
        let pos = placer.push_header(header(role, entries_of(&mut table, role)));
        match role {
            L_NODE | L_WEAK | L_SOFT | L_PHANTOM | L_TABLE => g.live.push(pos),
            VALUE => g.values.push(pos),
            WEAKLY => g.weakly.push(pos),
            CLUSTER => g.clusters.push(pos),
            MEMBER_FINALIZABLE | MEMBER => g.members.push(pos),
            _ => g.garbage.push(pos),
        }
    }
    // Value classes, in arena (= queue) order.
    let classes: Vec<u8> = (0..g.values.len())
        .map(|_| match rng.random_range(0..20u32) {
            0..12 => LIVE_KEY,
            12..17 if !g.weakly.is_empty() => DEAD_KEY,
            17.. if !g.clusters.is_empty() => RESURRECTED_KEY,
            _ => LIVE_KEY,
        })
        .collect();

    let mut e = Emitter {
        rng,
        g: &g,
        classes: &classes,
        next_value: 0,
        last_of_class: [None; 3],
        weakly_held: vec![false; g.weakly.len()],
        cluster_held: vec![false; g.clusters.len()],
        next_child: 0,
        buf: Vec::new(),
    };
    let mut roots = 0u64;
    let (mut live_index, mut cluster_index, mut table) = (0usize, 0usize, 0usize);
    for &role in &p.roles {
        let entries = entries_of(&mut table, role);
        let (type_index, slots, payload) = shape_of(role, entries);
        e.buf.clear();
        match role {
            L_NODE | L_WEAK | L_SOFT | L_PHANTOM | L_TABLE => {
                let j = live_index;
                live_index += 1;
                if e.next_child <= j {
                    // Not attached to the forest: a root.
                    sink.root(g.live[j])?;
                    roots += 1;
                    e.next_child = j + 1;
                }
                match role {
                    L_NODE => (0..3).for_each(|_| e.live_slot(j)),
                    L_TABLE => (0..entries).for_each(|_| e.entry()),
                    _ => {
                        e.referent();
                        e.live_slot(j);
                    }
                }
            }
            CLUSTER => {
                let k = cluster_index;
                cluster_index += 1;
                e.buf.push(Slot::strong(g.members[2 * k]));
                e.buf.push(Slot::strong(g.members[2 * k + 1]));
            }
            VALUE | WEAKLY | MEMBER_FINALIZABLE | MEMBER => {
                for _ in 0..slots {
                    e.slot_to_live();
                }
            }
            G_NODE => (0..slots).for_each(|_| e.slot_to_garbage()),
            G_REF => {
                e.slot_to_anything();
                e.slot_to_garbage();
            }
            _ => {
                for _ in 0..entries {
                    e.slot_to_anything();
                    if e.buf.last() == Some(&Slot::NULL) {
                        e.buf.push(Slot::NULL);
                    } else {
                        e.slot_to_anything();
                    }
                }
            }
        }
        debug_assert_eq!(e.buf.len(), slots as usize);
        sink.object(types[type_index], &e.buf, payload)?;
    }
    for _ in 0..STATIC_ROOTS.min(g.live.len() as u64) {
        sink.root(any(&g.live, e.rng).expect("live objects"))?;
        roots += 1;
    }
    let mut finalizable = 0u64;
    if !config.all_strong {
        for _ in 0..share(n, REACHABLE_FINALIZABLE) {
            sink.finalizable(any(&g.live, e.rng).expect("live objects"))?;
            finalizable += 1;
        }
        sink_all(sink, &g.clusters, &mut finalizable)?;
        for (i, &role) in p
            .roles
            .iter()
            .filter(|&&r| r == MEMBER_FINALIZABLE || r == MEMBER)
            .enumerate()
        {
            if role == MEMBER_FINALIZABLE {
                sink.finalizable(g.members[i])?;
                finalizable += 1;
            }
        }
    }
    let counted = |class: u8| classes.iter().filter(|&&c| c == class).count() as u64;
    let live = g.live.len() as u64;
    let reachable = if config.all_strong {
        let held = |bits: &[bool]| bits.iter().filter(|&&b| b).count() as u64;
        live + p.values + held(&e.weakly_held) + 3 * held(&e.cluster_held)
    } else {
        live + counted(LIVE_KEY) + counted(RESURRECTED_KEY) + 3 * p.clusters
    };
    Ok(GenInfo {
        shape: Shape::Weak,
        objects: n,
        garbage: p.garbage,
        roots,
        arena_words,
        reachable: Some(reachable),
        layout,
        finalizable,
    })
}

/// Registers every position of `positions` as finalizable.
fn sink_all<S: HeapSink>(sink: &mut S, positions: &[Pos], count: &mut u64) -> Result<(), S::Error> {
    for &p in positions {
        sink.finalizable(p)?;
        *count += 1;
    }
    Ok(())
}

/// The state of `weak`'s emission: the slots of the current object go to
/// `buf`.
struct Emitter<'a> {
    rng: &'a mut Pcg64,
    g: &'a Groups,
    classes: &'a [u8],
    /// The next value to put in a table entry.
    next_value: usize,
    /// The last value of each class put in an entry (a chain continues it).
    last_of_class: [Option<Pos>; 3],
    /// W objects and clusters an L object refers to.
    weakly_held: Vec<bool>,
    cluster_held: Vec<bool>,
    /// The next live object not yet attached to the forest.
    next_child: usize,
    buf: Vec<Slot>,
}

impl Emitter<'_> {
    /// A strong slot of live object `j`: a tree edge, a cross edge or null.
    fn live_slot(&mut self, j: usize) {
        let live = &self.g.live;
        let r: f64 = self.rng.random();
        let slot = if r < TREE_SHARE && self.next_child < live.len() {
            self.next_child += 1;
            Slot::strong(live[self.next_child - 1])
        } else if r < TREE_SHARE + CROSS_SHARE / 2.0 {
            let lo = (j as u64).saturating_sub(NEAR);
            let hi = (j as u64 + NEAR).min(live.len() as u64 - 1);
            Slot::strong(live[self.rng.random_range(lo..=hi) as usize])
        } else if r < TREE_SHARE + CROSS_SHARE {
            Slot::strong(live[self.rng.random_range(0..live.len() as u64) as usize])
        } else {
            Slot::NULL
        };
        self.buf.push(slot);
    }

    /// A W object the live objects refer to.
    fn weakly(&mut self) -> Option<Pos> {
        if self.g.weakly.is_empty() {
            return None;
        }
        let i = self.rng.random_range(0..self.g.weakly.len() as u64) as usize;
        self.weakly_held[i] = true;
        Some(self.g.weakly[i])
    }

    /// A cluster root the live objects refer to.
    fn cluster(&mut self) -> Option<Pos> {
        if self.g.clusters.is_empty() {
            return None;
        }
        let i = self.rng.random_range(0..self.g.clusters.len() as u64) as usize;
        self.cluster_held[i] = true;
        Some(self.g.clusters[i])
    }

    /// The referent of a live reference object: live, W or a cluster root.
    fn referent(&mut self) {
        let r: f64 = self.rng.random();
        let target = if r < 0.4 {
            None
        } else if r < 0.85 {
            self.weakly()
        } else {
            self.cluster()
        };
        let target = target.or_else(|| any(&self.g.live, self.rng));
        self.buf.push(target.map_or(Slot::NULL, Slot::strong));
    }

    /// One (key, value) entry of a live table.
    fn entry(&mut self) {
        let Some(&value) = self.g.values.get(self.next_value) else {
            // A spare entry: empty, or an L key with an L value.
            if self.rng.random_bool(0.5) {
                self.buf.extend([Slot::NULL, Slot::NULL]);
            } else {
                let key = any(&self.g.live, self.rng).map_or(Slot::NULL, Slot::strong);
                let value = any(&self.g.live, self.rng).map_or(Slot::NULL, Slot::strong);
                self.buf.extend([key, value]);
            }
            return;
        };
        let class = self.classes[self.next_value];
        self.next_value += 1;
        let chained = self.last_of_class[class as usize].filter(|_| self.rng.random_bool(CHAIN));
        let key = chained.or_else(|| match class {
            DEAD_KEY => self.weakly(),
            RESURRECTED_KEY => self.cluster(),
            _ => any(&self.g.live, self.rng),
        });
        let key = key.expect("the class's key group is not empty");
        self.last_of_class[class as usize] = Some(value);
        self.buf.extend([Slot::strong(key), Slot::strong(value)]);
    }

    /// A strong slot to a live object, or null.
    fn slot_to_live(&mut self) {
        let slot = if self.rng.random_bool(0.5) {
            any(&self.g.live, self.rng).map_or(Slot::NULL, Slot::strong)
        } else {
            Slot::NULL
        };
        self.buf.push(slot);
    }

    /// A strong slot of a garbage object: garbage, or null.
    fn slot_to_garbage(&mut self) {
        let slot = if self.rng.random_bool(0.8) {
            any(&self.g.garbage, self.rng).map_or(Slot::NULL, Slot::strong)
        } else {
            Slot::NULL
        };
        self.buf.push(slot);
    }

    /// A non-strong slot of a garbage object: anything, or null.
    fn slot_to_anything(&mut self) {
        let group = match self.rng.random_range(0..5u32) {
            0 => &self.g.live,
            1 => &self.g.weakly,
            2 => &self.g.values,
            3 => &self.g.garbage,
            _ => &self.g.clusters,
        };
        let slot = any(group, self.rng).map_or(Slot::NULL, Slot::strong);
        self.buf.push(slot);
    }
}

/// `ephemeron-chain`: a root `Holder` with slots to the table and to the
/// first key; one `WeakMap` of `n - 3` entries, entry `p` holding link
/// `n - 4 - p` (key `k[l]`, value `k[l + 1]`), so that the chain runs
/// backwards through the table; `n - 2` keys, each with one null slot and
/// one payload word (the size of a `list` node). Everything is reachable.
pub(super) fn chain<S: HeapSink>(
    config: &GenConfig,
    sink: &mut S,
) -> Result<GenInfo, GenError<S::Error>> {
    let n = config.objects;
    let links = n - 3;
    let holder_t = sink.type_name("Holder")?;
    let table_t = sink.type_name("WeakMap")?;
    let key_t = sink.type_name("ChainKey")?;
    if !config.all_strong {
        sink.type_kind(table_t, TypeKind::EphemeronTable)?;
    }
    // At most 2^32 - 2 slots (CHAIN_MAX_OBJECTS).
    let table_slots = (2 * links) as u32;
    let holder = ObjectHeader::new(holder_t, 2, 0);
    let table = ObjectHeader::new(table_t, table_slots, 0);
    let key = ObjectHeader::new(key_t, 1, 1);
    let words =
        |l| 1 + holder.size_words(l) + table.size_words(l) + (links + 1) * key.size_words(l);
    let layout = setup(sink, config.layout, words)?;
    sink.reserve(n, words(layout));
    let start = sink.next_pos();
    let at = |p: Pos, w: u64| p.add_words(w).expect("the arena fits");
    let table_pos = at(start, holder.size_words(layout));
    let first_key = at(table_pos, table.size_words(layout));
    let key_size = key.size_words(layout);
    let key_at = |i: u64| at(first_key, i * key_size);
    sink.object(
        holder_t,
        &[Slot::strong(table_pos), Slot::strong(first_key)],
        0,
    )?;
    sink.begin_object(table)?;
    let mut buf = Vec::with_capacity(4096);
    for p in 0..links {
        let l = links - 1 - p;
        buf.push(Slot::strong(key_at(l)));
        buf.push(Slot::strong(key_at(l + 1)));
        if buf.len() >= 4096 {
            sink.slots(&buf)?;
            buf.clear();
        }
    }
    sink.slots(&buf)?;
    for _ in 0..=links {
        sink.object(key_t, &[Slot::NULL], 1)?;
    }
    sink.root(start)?;
    Ok(GenInfo {
        shape: Shape::EphemeronChain,
        objects: n,
        garbage: 0,
        roots: 1,
        arena_words: words(layout),
        reachable: Some(n),
        layout,
        finalizable: 0,
    })
}
