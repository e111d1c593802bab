//! The sequential oracle: a plain depth-first marker that implements the
//! whole runtime contract (strong, soft, weak, phantom and ephemeron slots,
//! finalization) in the order `docs/design.md` ("Runtime contract") gives.
//!
//! It is the correctness reference every parallel result is compared with,
//! so it is written to be obviously right rather than fast: one `Vec` stack,
//! a [`MarkBitmap`], ephemerons waiting in a map from key to values, and
//! each step of the contract as its own loop. It is still linear in the
//! heap (no step rescans what an earlier one saw), so it can check heaps of
//! millions of objects.

use std::collections::HashMap;

use stealmark_model::{MarkBitmap, MarkIndex, ObjRef, ObjectModel, SlotKind, SoftRefs, WeakRef};

/// What a collection starts from, beyond the heap.
#[derive(Clone, Copy, Debug)]
pub struct OracleInput<'a> {
    /// The roots.
    pub roots: &'a [ObjRef],
    /// The registered finalizable objects (duplicates allowed).
    pub finalizable: &'a [ObjRef],
    /// The soft-reference policy.
    pub soft_refs: SoftRefs<'a>,
}

impl<'a> OracleInput<'a> {
    /// Roots only: nothing finalizable, soft references cleared.
    pub fn roots(roots: &'a [ObjRef]) -> OracleInput<'a> {
        OracleInput {
            roots,
            finalizable: &[],
            soft_refs: SoftRefs::ClearAll,
        }
    }
}

/// What the oracle found.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OracleResult {
    /// The marked set, by mark index.
    pub marked: MarkBitmap,
    /// Objects marked.
    pub objects: u64,
    /// Bytes of the objects marked (their `size_bytes`): the live bytes.
    pub bytes: u64,
    /// The marked objects' `footprint_bytes` (their arena bytes in a snapshot
    /// that records runtime sizes; else the same as `bytes`).
    pub footprint_bytes: u64,
    /// Non-null reference slots scanned in marked objects, of every kind.
    pub references: u64,
    /// Every soft, weak, phantom and ephemeron slot of a marked object, in
    /// discovery order (sort them to compare with another marker's).
    pub weak_refs: Vec<WeakRef>,
    /// The slots to clear (J1 and J2 of the contract), sorted.
    pub cleared: Vec<WeakRef>,
    /// The finalizable objects that were not reachable before finalization,
    /// sorted and without duplicates; they are marked (resurrected).
    pub to_finalize: Vec<ObjRef>,
    /// Ephemeron slots of marked holders whose key is marked at the end, so
    /// that their value was traced through them (whether or not something
    /// else marked the value first): the live entries.
    pub ephemeron_values_traced: u64,
    /// Per type id: (live objects, live bytes); empty when the model has no
    /// types.
    pub live_by_type: Vec<(u64, u64)>,
}

/// The *strongly reachable* set: marks everything reachable from `roots`
/// through strong slots (and ephemerons whose keys are reachable), depth
/// first, one object at a time. Soft references are cleared, nothing is
/// finalizable: this is [`oracle`] with [`OracleInput::roots`], and it is
/// smaller than the set *live under the runtime contract* when
/// finalizable objects reach more than the roots do.
///
/// ```
/// use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
///
/// let g = generate_heap(&GenConfig::new(Shape::BinaryTree, 1000)).unwrap();
/// let result = mark_sequential(&g.heap.view(), g.heap.roots());
/// assert_eq!(Some(result.objects), g.info.reachable);
/// ```
pub fn mark_sequential<M: ObjectModel + MarkIndex>(model: &M, roots: &[ObjRef]) -> OracleResult {
    oracle(model, &OracleInput::roots(roots))
}

/// Runs a whole collection as the contract defines it: strong closure, soft
/// references, J1 (soft and weak clearing), finalization (resurrection,
/// then the soft-reference policy again for the soft slots found while
/// resurrecting), J2 (phantom and ephemeron clearing, and the soft and weak
/// slots found while resurrecting whose referents are dead).
pub fn oracle<M: ObjectModel + MarkIndex>(model: &M, input: &OracleInput<'_>) -> OracleResult {
    let mut o = Oracle::new(model);
    // 1. The strong closure.
    for &r in input.roots {
        o.mark(r);
    }
    o.closure();
    // 2. Soft references, until the policy keeps nothing new.
    o.keep_soft(input.soft_refs, 0);
    // 3. J1: soft and weak slots found so far whose referents are dead.
    let judged = o.found.len();
    let mut cleared: Vec<WeakRef> = o.found[..judged]
        .iter()
        .filter(|w| matches!(w.kind, SlotKind::Soft | SlotKind::Weak) && !o.is_marked(w.target))
        .copied()
        .collect();
    // 4. Finalization: the set is taken before anything is resurrected.
    let mut to_finalize: Vec<ObjRef> = input
        .finalizable
        .iter()
        .copied()
        .filter(|&f| !o.is_marked(f))
        .collect();
    to_finalize.sort_unstable();
    to_finalize.dedup();
    for &f in &to_finalize {
        o.mark(f);
    }
    o.closure();
    // The soft slots found while resurrecting get the policy too, as
    // HotSpot's Parallel GC does: a kept referent is marked, with what it
    // reaches.
    o.keep_soft(input.soft_refs, judged);
    // 5. J2: phantom and ephemeron slots, and the soft and weak slots found
    // while resurrecting.
    let mut ephemeron_values_traced = 0;
    for (i, w) in o.found.iter().enumerate() {
        let dead = match w.kind {
            SlotKind::Phantom => !o.is_marked(w.target),
            SlotKind::Ephemeron { key } => {
                let live = o.is_marked(key);
                ephemeron_values_traced += u64::from(live);
                !live
            }
            SlotKind::Soft | SlotKind::Weak => i >= judged && !o.is_marked(w.target),
            SlotKind::Strong | SlotKind::StrongLeaf => false,
        };
        if dead {
            cleared.push(*w);
        }
    }
    cleared.sort_unstable();
    OracleResult {
        marked: o.marked,
        objects: o.objects,
        bytes: o.bytes,
        footprint_bytes: o.footprint_bytes,
        references: o.references,
        weak_refs: o.found,
        cleared,
        to_finalize,
        ephemeron_values_traced,
        live_by_type: o.by_type,
    }
}

/// Whether the policy keeps a soft referent.
fn keeps(policy: SoftRefs<'_>, referent: ObjRef) -> bool {
    match policy {
        SoftRefs::ClearAll => false,
        SoftRefs::KeepAll => true,
        SoftRefs::Ask(p) => p.keep(referent),
    }
}

/// The oracle's state during one collection.
struct Oracle<'m, M> {
    model: &'m M,
    marked: MarkBitmap,
    /// Marked objects not yet scanned.
    stack: Vec<ObjRef>,
    /// Ephemeron values waiting for their key, by key.
    waiting: HashMap<ObjRef, Vec<ObjRef>>,
    /// Non-strong slots of scanned objects, in discovery order.
    found: Vec<WeakRef>,
    objects: u64,
    bytes: u64,
    footprint_bytes: u64,
    references: u64,
    by_type: Vec<(u64, u64)>,
}

impl<'m, M: ObjectModel + MarkIndex> Oracle<'m, M> {
    fn new(model: &'m M) -> Self {
        Oracle {
            model,
            marked: MarkBitmap::new(model.mark_index_bound()),
            stack: Vec::with_capacity(1024),
            waiting: HashMap::new(),
            found: Vec::new(),
            objects: 0,
            bytes: 0,
            footprint_bytes: 0,
            references: 0,
            by_type: vec![(0, 0); model.type_count()],
        }
    }

    fn is_marked(&self, obj: ObjRef) -> bool {
        self.marked.contains(self.model.mark_index(obj))
    }

    /// Marks `obj`; `true` if it was not marked before. A marked object is
    /// scanned by the next [`Oracle::closure`].
    fn mark(&mut self, obj: ObjRef) -> bool {
        let new = self.marked.insert(self.model.mark_index(obj));
        if new {
            self.stack.push(obj);
        }
        new
    }

    /// Offers the soft slots found from `found[from]` on to `policy`, marking
    /// and tracing the referents it keeps, until it keeps nothing new. A
    /// slot is asked about once: the policy's answer for a referent does
    /// not change within a collection, and a referent marked since is
    /// simply skipped.
    fn keep_soft(&mut self, policy: SoftRefs<'_>, from: usize) {
        let mut asked = from;
        while asked < self.found.len() {
            let end = self.found.len();
            for i in asked..end {
                let w = self.found[i];
                if w.kind == SlotKind::Soft && !self.is_marked(w.target) && keeps(policy, w.target)
                {
                    self.mark(w.target);
                }
            }
            asked = end;
            self.closure();
        }
    }

    /// Scans marked objects until none is left unscanned. An object that is
    /// the key of waiting ephemerons releases their values when it is
    /// scanned (it is marked by then, so no later ephemeron waits on it).
    fn closure(&mut self) {
        let model = self.model;
        while let Some(obj) = self.stack.pop() {
            self.objects += 1;
            let size = model.size_bytes(obj) as u64;
            self.bytes += size;
            self.footprint_bytes += model.footprint_bytes(obj) as u64;
            if !self.by_type.is_empty() {
                let t = &mut self.by_type[model.type_id(obj)];
                t.0 += 1;
                t.1 += size;
            }
            if let Some(values) = self.waiting.remove(&obj) {
                for v in values {
                    self.mark(v);
                }
            }
            model.scan_slots(obj, 0..usize::MAX, |slot, target, kind| {
                self.references += 1;
                if kind.is_strong() {
                    self.mark(target);
                    return;
                }
                self.found.push(WeakRef {
                    holder: obj,
                    slot,
                    target,
                    kind,
                });
                if let SlotKind::Ephemeron { key } = kind {
                    if self.is_marked(key) {
                        self.mark(target);
                    } else {
                        self.waiting.entry(key).or_default().push(target);
                    }
                }
            });
        }
    }
}
