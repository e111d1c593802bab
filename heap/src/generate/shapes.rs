//! The regular shapes, and the appended garbage of every shape but `runtime`
//! and `weak`.

use rand::Rng;
use rand_pcg::Pcg64;

use super::{setup, GenError, GenInfo, Shape};
use crate::arena::{ArenaLayout, ObjectHeader, Pos, Slot};
use crate::sink::HeapSink;

/// Slots are emitted in batches of this many, so that a huge object never
/// needs a huge buffer.
const BATCH: usize = 4096;

/// How many random picks are drawn ahead of their use, to prefetch them.
const PICK_AHEAD: usize = 32;

/// The header of an appended garbage object: 2 slots, no payload.
pub(super) const GARBAGE: ObjectHeader = ObjectHeader::new(0, 2, 0);

/// Words of `garbage` appended garbage objects in `layout`.
pub(super) fn garbage_words(garbage: u64, layout: ArenaLayout) -> u64 {
    garbage * GARBAGE.size_words(layout)
}

/// The position of object `index` of a run of equal-sized objects starting
/// at `start`.
#[inline]
fn nth(start: Pos, size_words: u64, index: u64) -> Pos {
    start
        .add_words(index * size_words)
        .expect("generator arenas stay far below u64::MAX bytes")
}

fn info(
    objects: u64,
    roots: u64,
    arena_words: u64,
    reachable: Option<u64>,
    layout: ArenaLayout,
) -> GenInfo {
    GenInfo {
        shape: Shape::Random,
        objects,
        garbage: 0,
        roots,
        arena_words,
        reachable,
        layout,
        finalizable: 0,
    }
}

/// The result of a shape: its info, or a configuration or sink error.
type ShapeResult<S> = Result<GenInfo, GenError<<S as HeapSink>::Error>>;

/// What a regular shape generates from: how many live objects it lays out,
/// how many garbage objects follow them (the arena must hold those too),
/// the layout asked for, the random source and the sink.
pub(super) struct Gen<'a, S> {
    pub(super) live: u64,
    pub(super) garbage: u64,
    pub(super) pref: Option<ArenaLayout>,
    pub(super) rng: &'a mut Pcg64,
    pub(super) sink: &'a mut S,
}

impl<S: HeapSink> Gen<'_, S> {
    /// Chooses the layout (`pref`, else compressed when the heap fits) for
    /// `live_words(layout)` live arena words followed by the garbage, and
    /// reserves room in the sink for `objects` objects; returns the layout
    /// and the live words.
    fn lay_out(
        &mut self,
        objects: u64,
        live_words: impl Fn(ArenaLayout) -> u64,
    ) -> Result<(ArenaLayout, u64), GenError<S::Error>> {
        let garbage = self.garbage;
        let layout = setup(self.sink, self.pref, |l| {
            live_words(l) + garbage_words(garbage, l)
        })?;
        let words = live_words(layout);
        self.sink
            .reserve(objects, words + garbage_words(garbage, layout));
        Ok((layout, words))
    }

    /// Roots the object at `start`, from which all `objects` objects are
    /// reachable, and says what was generated.
    fn rooted(self, start: Pos, objects: u64, words: u64, layout: ArenaLayout) -> ShapeResult<S> {
        self.sink.root(start)?;
        Ok(info(objects, 1, words, Some(objects), layout))
    }
}

/// `n` objects of one header, laid out one after another in the layout the
/// sink was set up for.
struct Uniform {
    header: ObjectHeader,
    start: Pos,
    size_words: u64,
    n: u64,
    arena_words: u64,
    layout: ArenaLayout,
}

impl Uniform {
    /// Names the type `name` and lays out all of `g`'s live objects as
    /// objects of it with `slots` slots and `payload_words` payload words,
    /// from the sink's next position.
    fn named<S: HeapSink>(
        g: &mut Gen<'_, S>,
        name: &str,
        slots: u32,
        payload_words: u32,
    ) -> Result<Uniform, GenError<S::Error>> {
        let header = ObjectHeader::new(g.sink.type_name(name)?, slots, payload_words);
        let n = g.live;
        let (layout, arena_words) = g.lay_out(n, |l| 1 + n * header.size_words(l))?;
        Ok(Uniform {
            header,
            start: g.sink.next_pos(),
            size_words: header.size_words(layout),
            n,
            arena_words,
            layout,
        })
    }

    /// The position of object `index`.
    #[inline]
    fn nth(&self, index: u64) -> Pos {
        nth(self.start, self.size_words, index)
    }

    /// A strong slot to object `index`, or null past the last object.
    #[inline]
    fn slot_to(&self, index: u64) -> Slot {
        if index < self.n {
            Slot::strong(self.nth(index))
        } else {
            Slot::NULL
        }
    }

    /// Roots the first object, from which every object is reachable.
    fn root_first<S: HeapSink>(&self, g: Gen<'_, S>) -> ShapeResult<S> {
        g.rooted(self.start, self.n, self.arena_words, self.layout)
    }
}

/// Emits an object whose slots come from `slot(i)`, in batches.
fn emit<S: HeapSink>(
    sink: &mut S,
    header: ObjectHeader,
    buf: &mut Vec<Slot>,
    mut slot: impl FnMut(u64) -> Slot,
) -> Result<Pos, S::Error> {
    let pos = sink.begin_object(header)?;
    let n = u64::from(header.slots);
    let mut i = 0;
    while i < n {
        let end = n.min(i + BATCH as u64);
        buf.clear();
        buf.extend((i..end).map(&mut slot));
        sink.slots(buf)?;
        i = end;
    }
    Ok(pos)
}

pub(super) fn random<S: HeapSink>(mut g: Gen<'_, S>, degree: u32) -> ShapeResult<S> {
    let objects = Uniform::named(&mut g, "Node", degree, 0)?;
    let Gen {
        live: n, rng, sink, ..
    } = g;
    let mut buf = Vec::with_capacity(degree as usize);
    for _ in 0..n {
        emit(sink, objects.header, &mut buf, |_| {
            objects.slot_to(rng.random_range(0..n))
        })?;
    }
    let roots = n.min(8);
    for _ in 0..roots {
        sink.root(objects.nth(rng.random_range(0..n)))?;
    }
    Ok(info(n, roots, objects.arena_words, None, objects.layout))
}

pub(super) fn power_law<S: HeapSink>(mut g: Gen<'_, S>, degree: u32) -> ShapeResult<S> {
    let objects = Uniform::named(&mut g, "Node", degree, 0)?;
    let n = g.live;
    // The backbone (slots 0 and 1) is a breadth-first binary tree, so that
    // every object is reachable from object 0; with degree 1 it is a chain.
    let tree_slots = u64::from(degree.min(2));
    let backbone = |i: u64, k: u64| objects.slot_to(tree_slots * i + 1 + k);
    // Every preferential target so far: a uniform pick from it is a pick in
    // proportion to in-degree.
    let mut targets: Vec<u32> =
        Vec::with_capacity((n * u64::from(degree - degree.min(2))) as usize);
    // The edge picks are drawn PICK_AHEAD picks before they are used, so
    // that the (random, cache-missing) read of `targets` can be prefetched.
    let mut ahead = [0usize; PICK_AHEAD];
    let mut drawn = 0usize;
    let mut buf = Vec::with_capacity(degree as usize);
    let rng = &mut *g.rng;
    for i in 0..n {
        emit(g.sink, objects.header, &mut buf, |k| {
            if k < tree_slots {
                return backbone(i, k);
            }
            if i == 0 {
                return Slot::NULL;
            }
            let t = if targets.is_empty() || rng.random_bool(0.5) {
                rng.random_range(0..i)
            } else {
                let fresh = rng.random_range(0..targets.len() as u64) as usize;
                stealmark_model::prefetch_read(targets[fresh..].as_ptr().cast());
                let slot = drawn % PICK_AHEAD;
                let pick = if drawn < PICK_AHEAD {
                    // Warming up: nothing drawn ahead yet.
                    rng.random_range(0..targets.len() as u64) as usize
                } else {
                    ahead[slot]
                };
                ahead[slot] = fresh;
                drawn += 1;
                u64::from(targets[pick])
            };
            targets.push(t as u32);
            objects.slot_to(t)
        })?;
    }
    objects.root_first(g)
}

pub(super) fn binary_tree<S: HeapSink>(mut g: Gen<'_, S>) -> ShapeResult<S> {
    let objects = Uniform::named(&mut g, "TreeNode", 2, 1)?;
    for i in 0..g.live {
        let children = [objects.slot_to(2 * i + 1), objects.slot_to(2 * i + 2)];
        g.sink.object(objects.header.type_id, &children, 1)?;
    }
    objects.root_first(g)
}

pub(super) fn list<S: HeapSink>(mut g: Gen<'_, S>) -> ShapeResult<S> {
    let objects = Uniform::named(&mut g, "ListNode", 1, 1)?;
    for i in 0..g.live {
        g.sink
            .object(objects.header.type_id, &[objects.slot_to(i + 1)], 1)?;
    }
    objects.root_first(g)
}

pub(super) fn wide<S: HeapSink>(mut g: Gen<'_, S>) -> ShapeResult<S> {
    let n = g.live;
    let root_ty = g.sink.type_name("Object[]")?;
    let leaf_ty = g.sink.type_name("Leaf")?;
    let root = ObjectHeader::new(root_ty, (n - 1) as u32, 0);
    let leaf = ObjectHeader::new(leaf_ty, 0, 1);
    let (layout, words) =
        g.lay_out(n, |l| 1 + root.size_words(l) + (n - 1) * leaf.size_words(l))?;
    let start = g.sink.next_pos();
    let first_leaf = nth(start, root.size_words(layout), 1);
    let mut buf = Vec::with_capacity(BATCH);
    emit(g.sink, root, &mut buf, |i| {
        Slot::strong(nth(first_leaf, leaf.size_words(layout), i))
    })?;
    for _ in 1..n {
        g.sink.begin_object(leaf)?;
    }
    g.rooted(start, n, words, layout)
}

/// The minimum length of the `big-array` array.
pub(super) const BIG_ARRAY_SLOTS: u64 = 1 << 20;

pub(super) fn big_array<S: HeapSink>(mut g: Gen<'_, S>) -> ShapeResult<S> {
    let n = g.live;
    let sink = &mut *g.sink;
    let holder_ty = sink.type_name("Holder")?;
    let array_ty = sink.type_name("Object[]")?;
    let element_ty = sink.type_name("Element")?;
    let leaf_ty = sink.type_name("Leaf")?;
    // Objects: holder, array, then `pairs` (element, leaf) pairs, plus one
    // lone element if the count is odd.
    let pairs = (n - 2) / 2;
    let lone = (n - 2) % 2;
    let elements = pairs + lone;
    let len = elements.max(BIG_ARRAY_SLOTS);
    let holder = ObjectHeader::new(holder_ty, 1, 0);
    let array = ObjectHeader::new(array_ty, len as u32, 0);
    let element = ObjectHeader::new(element_ty, 1, 1);
    let leaf = ObjectHeader::new(leaf_ty, 0, 1);
    let pair = |l| element.size_words(l) + leaf.size_words(l);
    let live = |l| {
        1 + holder.size_words(l)
            + array.size_words(l)
            + pairs * pair(l)
            + lone * element.size_words(l)
    };
    let (layout, words) = g.lay_out(n, live)?;
    let sink = &mut *g.sink;
    let pair_words = pair(layout);
    let start = sink.next_pos();
    let array_pos = nth(start, holder.size_words(layout), 1);
    let first_element = nth(array_pos, array.size_words(layout), 1);
    sink.object(holder_ty, &[Slot::strong(array_pos)], 0)?;
    let mut buf = Vec::with_capacity(BATCH);
    emit(sink, array, &mut buf, |i| {
        if elements == 0 {
            Slot::NULL
        } else {
            Slot::strong(nth(first_element, pair_words, i % elements))
        }
    })?;
    for _ in 0..pairs {
        let e = sink.next_pos();
        sink.object(
            element_ty,
            &[Slot::strong(nth(e, element.size_words(layout), 1))],
            1,
        )?;
        sink.begin_object(leaf)?;
    }
    if lone == 1 {
        sink.object(element_ty, &[Slot::NULL], 1)?;
    }
    g.rooted(start, n, words, layout)
}

/// The smallest depth whose expected DAG size reaches `n`, or the deepest
/// useful one.
fn auto_depth(n: u64, branch: u32) -> u32 {
    for depth in 1..=64u32 {
        let mut level = 1.0f64;
        let mut total = 1.0f64;
        for d in 0..depth {
            level *= f64::from(branch) * (1.0 - f64::from(d) / f64::from(depth));
            total += level;
        }
        if total >= n as f64 {
            return depth;
        }
    }
    64
}

pub(super) fn dag<S: HeapSink>(
    mut g: Gen<'_, S>,
    branch: u32,
    depth: Option<u32>,
) -> ShapeResult<S> {
    let n = g.live;
    let rng = &mut *g.rng;
    let depth = depth.unwrap_or_else(|| auto_depth(n, branch));
    // Plan breadth first: the child count of every node, level by level,
    // until the DAG dies out or reaches `n` nodes.
    let mut children: Vec<u8> = Vec::with_capacity(n as usize);
    let mut count = 1u64;
    let mut level_start = 0usize;
    let mut level_end = 1usize;
    let mut d = 0u32;
    children.push(0);
    while level_start < level_end {
        for i in level_start..level_end {
            let p = 1.0 - f64::from(d) / f64::from(depth);
            let mut k = 0u64;
            if p > 0.0 {
                for _ in 0..branch {
                    k += u64::from(rng.random_bool(p));
                }
            }
            let k = k.min(n - count);
            children[i] = k as u8;
            count += k;
            children.extend(std::iter::repeat_n(0, k as usize));
        }
        level_start = level_end;
        level_end = children.len();
        d += 1;
    }
    let ty = g.sink.type_name("DagNode")?;
    let size_in = |k: u8, l| ObjectHeader::new(ty, u32::from(k), 1).size_words(l);
    let (layout, words) = g.lay_out(count, |l| {
        1 + children.iter().map(|&k| size_in(k, l)).sum::<u64>()
    })?;
    let size = |k: u8| size_in(k, layout);
    let start = g.sink.next_pos();
    // Children of node i are the next nodes after those of node i - 1; a
    // second cursor walks the nodes as they are handed out as children.
    let mut next_child = 1usize;
    let mut next_child_pos = nth(start, size(children[0]), 1);
    let mut buf = Vec::with_capacity(64);
    for &k in &children {
        buf.clear();
        for _ in 0..k {
            buf.push(Slot::strong(next_child_pos));
            next_child_pos = nth(next_child_pos, size(children[next_child]), 1);
            next_child += 1;
        }
        g.sink.object(ty, &buf, 1)?;
    }
    g.rooted(start, count, words, layout)
}

/// Appends `n` garbage objects: 2 slots each, pointing at random garbage
/// objects (so garbage has cycles) or null.
pub(super) fn garbage<S: HeapSink>(n: u64, rng: &mut Pcg64, sink: &mut S) -> Result<(), S::Error> {
    if n == 0 {
        return Ok(());
    }
    let ty = sink.type_name("Garbage")?;
    let start = sink.next_pos();
    let size = GARBAGE.size_words(sink.format().layout);
    let mut pick = || {
        if rng.random_bool(0.8) {
            Slot::strong(nth(start, size, rng.random_range(0..n)))
        } else {
            Slot::NULL
        }
    };
    for _ in 0..n {
        let slots = [pick(), pick()];
        sink.object(ty, &slots, 0)?;
    }
    Ok(())
}
