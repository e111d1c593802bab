//! [`HeapView`]: a validated arena seen through the [`ObjectModel`] trait.
//!
//! # Atomic access
//!
//! A view reads the arena only with `Relaxed` atomic loads, never through a
//! `&[u64]`: a mutator may store to reference slots
//! ([`HeapView::store_slot`]) while GC workers scan them, and a plain read
//! racing with a write is undefined behaviour even when any value read would
//! do. On x86-64 and AArch64 a relaxed load is an ordinary load, so scanning
//! costs the same.
//!
//! Each location is always accessed with the same width, so no mixed-size
//! access ever races with a store:
//!
//! | layout | layout word | type | slots | payload |
//! |---|---|---|---|---|
//! | wide | `AtomicU64`, never stored | `AtomicU64` (type word), never stored | `AtomicU64`, stored by `store_slot` | never accessed |
//! | compressed | `AtomicU64`, never stored | `AtomicU32`, never stored | `AtomicU32`, stored by `store_slot` | never accessed |
//!
//! ([`HeapView::to_words`] reads a compressed arena in 4-byte units for the
//! same reason.) The memory is only ever accessed atomically from the moment
//! a view exists; before that, while the validator reads it with plain
//! loads, it is exclusively owned by the loader or the builder.

use std::fmt;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::arena::{ArenaFormat, ArenaLayout, ObjectHeader, Pos, TypeKind, WEAK_BIT};
use crate::error::StoreError;
use crate::validate::is_start;
use crate::weak_list::WeakList;
use stealmark_model::{prefetch_object, MarkIndex, ObjRef, ObjectModel, SlotKind};

/// The pieces a view is made of, all borrowed from a heap that passed
/// validation.
pub(crate) struct ViewParts<'a> {
    /// The arena, 8-byte aligned.
    pub words: &'a [AtomicU64],
    pub format: ArenaFormat,
    /// Type-kind bytes, validated.
    pub kinds: &'a [u8],
    /// The kind of type ids past `kinds`.
    pub default_kind: TypeKind,
    /// The weak-slot list (compressed layout), validated, little-endian.
    pub weak_slots: &'a [u64],
    /// Its index by arena region, from validation.
    pub weak_buckets: &'a [usize],
    /// The object-start bitmap from validation.
    pub starts: &'a [u64],
    pub type_count: usize,
    pub objects: u64,
    pub runtime_bytes: u64,
    /// Whether the memory may be stored to (not a read-only mapping).
    pub writable: bool,
}

/// A borrowed, validated object arena, in either layout.
///
/// An [`ObjRef`] of this view is the address of the object's layout word
/// inside the arena memory, so marking reads the object's own memory, as a
/// collector does. The mark index is the 16-byte granule of that layout
/// word's offset: every object has at least its layout and type words, so
/// no two objects start in the same granule. A mark bitmap then has one bit
/// per 16 heap bytes ([`MarkIndex::mark_index_bound`] is half the arena's
/// length in words, rounded up), half of HotSpot's one bit per heap word,
/// and more of it stays in cache while marking.
///
/// A view exists only over an arena that passed validation (every slot null
/// or a reference to an object start, objects within the arena, kinds
/// consistent), so scanning does no per-slot checks. A plain object (the
/// common case) scans in a tight loop with no per-slot kind decode; the
/// type's kind is one byte looked up per object, and the layout one
/// predictable branch per object. Passing an `ObjRef` that did not come from
/// this view (a root or a slot of it) gives meaningless results or a panic,
/// never undefined behaviour.
#[derive(Clone, Copy)]
pub struct HeapView<'a> {
    words: &'a [AtomicU64],
    /// The same memory in 4-byte units.
    halves: &'a [AtomicU32],
    format: ArenaFormat,
    kinds: &'a [u8],
    default_code: u8,
    weak_slots: WeakList<'a>,
    starts: &'a [u64],
    type_count: usize,
    objects: u64,
    runtime_bytes: u64,
    writable: bool,
}

impl fmt::Debug for HeapView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeapView")
            .field("base", &self.words.as_ptr())
            .field("words", &self.words.len())
            .field("format", &self.format)
            .field("objects", &self.objects)
            .finish()
    }
}

/// The kind code of plain types, tested on the fast path.
const PLAIN: u8 = TypeKind::Plain as u8;

/// The reference at byte offset `offset` of an arena based at `base`. The
/// base is non-zero and 8-aligned and the offset a multiple of 8, so the
/// result is a valid `ObjRef` unless the addition wraps to zero (impossible
/// for a validated arena, which lies inside the address space).
#[inline(always)]
fn target(base: usize, offset: usize) -> Option<ObjRef> {
    NonZeroUsize::new(base.wrapping_add(offset)).map(ObjRef::from_aligned)
}

/// The kind of a slot of a weak-slots object: weak if it carries the
/// per-slot weak mark, else strong.
#[inline(always)]
fn weak_or_strong(weak: bool) -> SlotKind {
    if weak {
        SlotKind::Weak
    } else {
        SlotKind::Strong
    }
}

impl<'a> HeapView<'a> {
    /// Wraps validated parts. Crate-internal: the type's existence is the
    /// proof of validation.
    pub(crate) fn new_validated(p: ViewParts<'a>) -> HeapView<'a> {
        assert!(!p.words.is_empty(), "an arena has its reserved word");
        assert!(
            p.words.as_ptr().is_aligned(),
            "arena words are 8-byte aligned"
        );
        // SAFETY: `AtomicU32` has the size of `u32` and an alignment of 4,
        // which divides the 8-byte alignment of `AtomicU64`, so the memory of
        // `n` atomic words is `2n` valid atomic half words, borrowed for the
        // same lifetime. Both views are shared references to atomics (interior
        // mutability), and the module's access rules keep every racing access
        // to a location at one width.
        let halves = unsafe {
            std::slice::from_raw_parts(p.words.as_ptr().cast::<AtomicU32>(), p.words.len() * 2)
        };
        HeapView {
            words: p.words,
            halves,
            format: p.format,
            kinds: p.kinds,
            default_code: p.default_kind.code(),
            weak_slots: WeakList::new(p.weak_slots, p.weak_buckets),
            starts: p.starts,
            type_count: p.type_count,
            objects: p.objects,
            runtime_bytes: p.runtime_bytes,
            writable: p.writable,
        }
    }

    /// Word `i` (its numeric value).
    #[inline(always)]
    fn load64(&self, i: usize) -> u64 {
        // Relaxed, pairing with nothing: header words are never stored to
        // after validation, and a slot's value publishes no other memory a
        // reader depends on (every value `store_slot` writes is a validated
        // object start, whose header is never written), so any value read is
        // safe to follow; the ordering a collector needs is the engine's own.
        u64::from_le(self.words[i].load(Ordering::Relaxed))
    }

    /// Half word `j`: bytes `4j..4j+4` of the arena.
    #[inline(always)]
    fn load32(&self, j: usize) -> u32 {
        // Relaxed, pairing with nothing: as in `load64`.
        u32::from_le(self.halves[j].load(Ordering::Relaxed))
    }

    /// A copy of the arena words, as stored (little-endian), for comparing
    /// and hashing arenas. A compressed arena is read in 4-byte units, the
    /// width its slots are stored with.
    pub fn to_words(&self) -> Vec<u64> {
        match self.format.layout {
            ArenaLayout::Wide => self
                .words
                .iter()
                // Relaxed, pairing with nothing: as in `load64`.
                .map(|w| w.load(Ordering::Relaxed))
                .collect(),
            ArenaLayout::Compressed => (0..self.words.len())
                .map(|i| {
                    let lo = u64::from(self.load32(2 * i));
                    let hi = u64::from(self.load32(2 * i + 1));
                    (lo | hi << 32).to_le()
                })
                .collect(),
        }
    }

    /// The arena size in bytes (its reserved word included).
    pub fn arena_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The bytes the objects take in the arena: every word but the reserved
    /// one.
    pub fn object_bytes(&self) -> u64 {
        self.arena_bytes() - 8
    }

    /// The sum of the objects' sizes as [`ObjectModel::size_bytes`] gives
    /// them: their runtime sizes when the arena records them, else
    /// [`HeapView::object_bytes`].
    pub fn runtime_bytes(&self) -> u64 {
        self.runtime_bytes
    }

    /// The arena's encoding.
    pub fn format(&self) -> ArenaFormat {
        self.format
    }

    /// The arena's layout.
    pub fn layout(&self) -> ArenaLayout {
        self.format.layout
    }

    /// The number of objects in the arena.
    pub fn object_count(&self) -> u64 {
        self.objects
    }

    /// Whether [`HeapView::store_slot`] may store (the memory is not a
    /// read-only mapping).
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    #[inline(always)]
    fn kind_code(&self, type_id: u32) -> u8 {
        self.kinds
            .get(type_id as usize)
            .copied()
            .unwrap_or(self.default_code)
    }

    /// The number of type ids the type-kind table covers (ids past it are
    /// plain, or weak-slots in a format v1 file).
    pub fn kinded_types(&self) -> usize {
        self.kinds.len()
    }

    /// The kind of type `type_id`.
    pub fn type_kind(&self, type_id: u32) -> TypeKind {
        TypeKind::from_code(self.kind_code(type_id)).unwrap_or_default()
    }

    #[inline(always)]
    fn base(&self) -> usize {
        self.words.as_ptr() as usize
    }

    /// The reference to the object at `pos`, if `pos` lies in the arena.
    /// (Whether it is an object start is the caller's business: positions
    /// from the same producer are.)
    pub fn obj_ref(&self, pos: Pos) -> Option<ObjRef> {
        if pos.word_index() >= self.words.len() as u64 {
            return None;
        }
        ObjRef::from_word(self.base() + pos.offset() as usize)
    }

    /// The position of an object of this view.
    ///
    /// # Panics
    ///
    /// If `obj` does not point into this view's arena.
    pub fn pos(&self, obj: ObjRef) -> Pos {
        let offset = obj.word().wrapping_sub(self.base()) as u64;
        Pos::from_offset(offset)
            .filter(|p| p.word_index() < self.words.len() as u64)
            .expect("ObjRef is not of this heap view")
    }

    /// Whether `obj` is an object of this view (the start of one).
    pub fn is_object(&self, obj: ObjRef) -> bool {
        self.start_index(obj).is_some()
    }

    /// The word index of `obj`'s layout word, if `obj` is an object start.
    fn start_index(&self, obj: ObjRef) -> Option<usize> {
        let offset = obj.word().wrapping_sub(self.base());
        (offset < self.words.len() * 8 && is_start(self.starts, offset as u64))
            .then_some(offset / 8)
    }

    /// The word index of `obj`'s layout word, checked against the arena.
    #[inline(always)]
    fn index(&self, obj: ObjRef) -> usize {
        let index = obj.word().wrapping_sub(self.base()) / 8;
        assert!(index < self.words.len(), "ObjRef is not of this heap view");
        index
    }

    /// The type id of the object at word `h`.
    #[inline(always)]
    fn type_at(&self, h: usize) -> u32 {
        match self.format.layout {
            ArenaLayout::Wide => self.load64(h + 1) as u32,
            ArenaLayout::Compressed => self.load32(2 * h + 2),
        }
    }

    /// The object's header: type id, slot count, payload and runtime size.
    pub fn header(&self, obj: ObjRef) -> ObjectHeader {
        let h = self.index(obj);
        ObjectHeader::decode(self.format, self.load64(h), self.type_at(h))
    }

    /// The object's type id.
    pub fn type_id(&self, obj: ObjRef) -> u32 {
        self.type_at(self.index(obj))
    }

    /// The object's slots, null ones included, as (target, kind) pairs.
    pub fn slots(
        &self,
        obj: ObjRef,
    ) -> impl ExactSizeIterator<Item = Option<(ObjRef, SlotKind)>> + 'a {
        let view = *self;
        let h = self.index(obj);
        let count = self.load64(h) as u32 as usize;
        let code = self.kind_code(self.type_at(h));
        (0..count).map(move |i| view.slot_at(h, code, i))
    }

    /// The byte offset slot `i` of the object at word `h` refers to (0 for
    /// null), and whether its per-slot weak mark is set.
    #[inline(always)]
    fn raw_slot(&self, h: usize, i: usize) -> (usize, bool) {
        match self.format.layout {
            ArenaLayout::Wide => {
                let v = self.load64(h + 2 + i);
                ((v & !WEAK_BIT) as usize, v & WEAK_BIT != 0)
            }
            ArenaLayout::Compressed => {
                let j = 2 * h + 3 + i;
                let v = self.load32(j) as usize;
                (v << 3, self.weak_slots.contains(j as u64))
            }
        }
    }

    /// Slot `i` of the object at word `h`, whose type kind is `code`.
    fn slot_at(&self, h: usize, code: u8, i: usize) -> Option<(ObjRef, SlotKind)> {
        let (offset, weak) = self.raw_slot(h, i);
        if offset == 0 {
            return None;
        }
        let kind = match TypeKind::from_code(code).unwrap_or_default() {
            TypeKind::Plain => SlotKind::Strong,
            TypeKind::WeakSlots if weak => SlotKind::Weak,
            TypeKind::WeakSlots => SlotKind::Strong,
            TypeKind::WeakRef if i == 0 => SlotKind::Weak,
            TypeKind::SoftRef if i == 0 => SlotKind::Soft,
            TypeKind::PhantomRef if i == 0 => SlotKind::Phantom,
            TypeKind::WeakRef | TypeKind::SoftRef | TypeKind::PhantomRef => SlotKind::Strong,
            TypeKind::EphemeronTable if i % 2 == 0 => SlotKind::Weak,
            TypeKind::EphemeronTable => {
                // Validated: a value's key is not null.
                let key = target(self.base(), self.raw_slot(h, i - 1).0)?;
                SlotKind::Ephemeron { key }
            }
        };
        Some((target(self.base(), offset)?, kind))
    }

    /// Every object of the arena, in address order.
    pub fn objects(&self) -> Objects<'a> {
        Objects { view: *self, at: 1 }
    }

    /// Stores `target` (or null) into strong slot `slot` of `obj`,
    /// atomically, and returns the slot's previous target: for a mutator
    /// that writes a private copy-on-write mapping
    /// ([`Snapshot::open_copy_on_write`](crate::Snapshot::open_copy_on_write))
    /// or an in-memory [`Heap`](crate::Heap) while GC workers scan it.
    ///
    /// Only strong slots of plain types and the non-referent slots of
    /// reference types are stored to, and only references to objects of
    /// this view, so the arena stays valid: every later scan is as safe as
    /// the first. The store is `Relaxed` and is no write barrier: a
    /// concurrent marker that must not miss the new target needs one of its
    /// own.
    pub fn store_slot(
        &self,
        obj: ObjRef,
        slot: usize,
        target_obj: Option<ObjRef>,
    ) -> Result<Option<ObjRef>, StoreError> {
        if !self.writable {
            return Err(StoreError::ReadOnly);
        }
        let h = self
            .start_index(obj)
            .ok_or(StoreError::NotAnObject(obj.word()))?;
        let slots = self.load64(h) as u32 as usize;
        if slot >= slots {
            return Err(StoreError::NoSuchSlot { slot, slots });
        }
        let kind = self.type_kind(self.type_at(h));
        let strong = match kind {
            TypeKind::Plain => true,
            TypeKind::WeakRef | TypeKind::SoftRef | TypeKind::PhantomRef => slot > 0,
            TypeKind::EphemeronTable | TypeKind::WeakSlots => false,
        };
        if !strong {
            return Err(StoreError::NotAStrongSlot { slot, kind });
        }
        let word = match target_obj {
            None => 0,
            Some(t) => self
                .start_index(t)
                .ok_or(StoreError::TargetNotAnObject(t.word()))?,
        };
        let old = match self.format.layout {
            ArenaLayout::Wide => {
                let new = (word as u64 * 8).to_le();
                // Relaxed: the value is a validated object start, so a racing
                // scan reads either the old or the new valid reference; the
                // store publishes no other memory (targets' headers are never
                // written), so it pairs with nothing.
                u64::from_le(self.words[h + 2 + slot].swap(new, Ordering::Relaxed)) as usize
            }
            ArenaLayout::Compressed => {
                // The word index fits: the compressed arena has at most 2^32
                // words (validated).
                let new = (word as u32).to_le();
                // Relaxed, pairing with nothing: as above.
                let old = self.halves[2 * h + 3 + slot].swap(new, Ordering::Relaxed);
                (u32::from_le(old) as usize) << 3
            }
        };
        Ok(if old == 0 {
            None
        } else {
            target(self.base(), old)
        })
    }

    /// The byte offset slot `i` of the object at word `h` refers to (0 for
    /// null), without its per-slot weak mark.
    #[inline(always)]
    fn slot_offset(&self, h: usize, i: usize) -> usize {
        match self.format.layout {
            ArenaLayout::Wide => (self.load64(h + 2 + i) & !WEAK_BIT) as usize,
            ArenaLayout::Compressed => (self.load32(2 * h + 3 + i) as usize) << 3,
        }
    }

    /// The slow path of [`ObjectModel::scan_slots`]: every kind but plain,
    /// the kind decoded once per call. Visits slots `start..end` into `out`
    /// until it is full, and returns the slot after the last one read (`end`
    /// when done).
    ///
    /// Not generic over the visitor, and the visitor is not passed: if the
    /// fast path's closure escaped into an out-of-line call, the locals it
    /// captures by reference (an engine's counters, its edge delay line)
    /// would live in memory on the fast path too, costing loads and stores
    /// per slot there.
    #[inline(never)]
    fn scan_special(
        &self,
        h: usize,
        code: u8,
        start: usize,
        end: usize,
        out: &mut SpecialSlots,
    ) -> usize {
        out.len = 0;
        let base = self.base();
        let referent = match TypeKind::from_code(code).unwrap_or_default() {
            TypeKind::WeakRef => SlotKind::Weak,
            TypeKind::SoftRef => SlotKind::Soft,
            TypeKind::PhantomRef => SlotKind::Phantom,
            TypeKind::EphemeronTable => {
                for i in start..end {
                    if out.is_full() {
                        return i;
                    }
                    let offset = self.slot_offset(h, i);
                    let Some(t) = (offset != 0).then(|| target(base, offset)).flatten() else {
                        continue;
                    };
                    let kind = if i % 2 == 0 {
                        SlotKind::Weak
                    } else {
                        // Validated: a value's key is not null.
                        match target(base, self.slot_offset(h, i - 1)) {
                            Some(key) => SlotKind::Ephemeron { key },
                            None => continue,
                        }
                    };
                    out.push(i, t, kind);
                }
                return end;
            }
            TypeKind::WeakSlots if self.format.layout == ArenaLayout::Compressed => {
                // Walk the weak-slot list alongside the slots.
                let first = (2 * h + 3) as u64;
                let mut k = self.weak_slots.first_at_or_after(first + start as u64);
                for i in start..end {
                    if out.is_full() {
                        return i;
                    }
                    let j = first + i as u64;
                    let weak = self.weak_slots.is_at(k, j);
                    k += usize::from(weak);
                    let v = self.load32(j as usize) as usize;
                    if let Some(t) = (v != 0).then(|| target(base, v << 3)).flatten() {
                        out.push(i, t, weak_or_strong(weak));
                    }
                }
                return end;
            }
            TypeKind::WeakSlots => {
                for i in start..end {
                    if out.is_full() {
                        return i;
                    }
                    let v = self.load64(h + 2 + i);
                    let offset = (v & !WEAK_BIT) as usize;
                    if let Some(t) = (offset != 0).then(|| target(base, offset)).flatten() {
                        let weak = v & WEAK_BIT != 0;
                        out.push(i, t, weak_or_strong(weak));
                    }
                }
                return end;
            }
            TypeKind::Plain => SlotKind::Strong,
        };
        // A reference object: slot 0 is the referent, the others strong.
        for i in start..end {
            if out.is_full() {
                return i;
            }
            let offset = self.slot_offset(h, i);
            if let Some(t) = (offset != 0).then(|| target(base, offset)).flatten() {
                out.push(i, t, if i == 0 { referent } else { SlotKind::Strong });
            }
        }
        end
    }

    /// Visits slots `start..end` (`start <= end`, both within its slot
    /// count) of the object whose header is at word `h`:
    /// [`ObjectModel::scan_slots`] and [`ObjectModel::scan_object`] once
    /// they have read the count.
    #[inline(always)]
    fn scan_at<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        h: usize,
        start: usize,
        end: usize,
        mut visit: V,
    ) {
        let base = self.base();
        match self.format.layout {
            ArenaLayout::Wide => {
                let code = self.kind_code(self.load64(h + 1) as u32);
                if code != PLAIN {
                    return self.scan_special_batched(h, code, start, end, visit);
                }
                let first = h + 2;
                for (i, w) in self.words[first + start..first + end].iter().enumerate() {
                    // Relaxed, pairing with nothing: as in `load64`.
                    let v = u64::from_le(w.load(Ordering::Relaxed)) as usize;
                    if v != 0 {
                        if let Some(t) = target(base, v) {
                            visit(start + i, t, SlotKind::Strong);
                        }
                    }
                }
            }
            ArenaLayout::Compressed => {
                let code = self.kind_code(self.load32(2 * h + 2));
                if code != PLAIN {
                    return self.scan_special_batched(h, code, start, end, visit);
                }
                let first = 2 * h + 3;
                for (i, w) in self.halves[first + start..first + end].iter().enumerate() {
                    // Relaxed, pairing with nothing: as in `load64`.
                    let v = u32::from_le(w.load(Ordering::Relaxed)) as usize;
                    if v != 0 {
                        if let Some(t) = target(base, v << 3) {
                            visit(start + i, t, SlotKind::Strong);
                        }
                    }
                }
            }
        }
    }

    /// [`ObjectModel::scan_slots`] of a type that is not plain: the slow
    /// path fills a batch of slots out of line, and the visitor runs here,
    /// inline, on each batch.
    #[inline(always)]
    fn scan_special_batched<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        h: usize,
        code: u8,
        start: usize,
        end: usize,
        mut visit: V,
    ) {
        let mut batch = SpecialSlots::new();
        let mut from = start;
        while from < end {
            from = self.scan_special(h, code, from, end, &mut batch);
            for &(i, t, kind) in batch.as_slice() {
                visit(i, t, kind);
            }
        }
    }
}

/// The slots one call of the slow path hands back: up to
/// [`SpecialSlots::CAPACITY`] (index, target, kind) triples, in slot order.
struct SpecialSlots {
    slots: [(usize, ObjRef, SlotKind); SpecialSlots::CAPACITY],
    len: usize,
}

impl SpecialSlots {
    /// Slots per batch: enough that the call is amortised, small enough to
    /// stay in the stack's cache lines.
    const CAPACITY: usize = 16;

    fn new() -> SpecialSlots {
        // A placeholder entry, never visited (`len` says which are held).
        let empty = (0, ObjRef::from_index(0), SlotKind::Strong);
        SpecialSlots {
            slots: [empty; SpecialSlots::CAPACITY],
            len: 0,
        }
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.len == SpecialSlots::CAPACITY
    }

    #[inline(always)]
    fn push(&mut self, i: usize, t: ObjRef, kind: SlotKind) {
        self.slots[self.len] = (i, t, kind);
        self.len += 1;
    }

    #[inline(always)]
    fn as_slice(&self) -> &[(usize, ObjRef, SlotKind)] {
        &self.slots[..self.len]
    }
}

/// Iterator over the objects of a [`HeapView`], in address order.
#[derive(Clone, Debug)]
pub struct Objects<'a> {
    view: HeapView<'a>,
    at: usize,
}

impl Iterator for Objects<'_> {
    type Item = ObjRef;

    fn next(&mut self) -> Option<ObjRef> {
        if self.at >= self.view.words.len() {
            return None;
        }
        let obj = ObjRef::from_word(self.view.base() + self.at * 8);
        let layout = self.view.load64(self.at);
        self.at += self.view.format.object_words(layout) as usize;
        obj
    }
}

/// Heap words per mark bit: two, the smallest object in either layout (its
/// layout word, and its type word with, compressed, a first slot or
/// padding). Objects do not overlap (validation), so no two start in one
/// granule.
const MARK_GRANULE_WORDS: usize = 2;

// No object is smaller than the granule, in either layout (with runtime
// sizes an object takes at least its fixed words too): checked at compile
// time, so a change of the header fails here.
const _: () = assert!(
    ArenaLayout::Wide.fixed_words(0) >= MARK_GRANULE_WORDS as u64
        && ArenaLayout::Compressed.fixed_words(0) >= MARK_GRANULE_WORDS as u64
);

impl MarkIndex for HeapView<'_> {
    #[inline(always)]
    fn mark_index_bound(&self) -> usize {
        self.words.len().div_ceil(MARK_GRANULE_WORDS)
    }

    #[inline(always)]
    fn mark_index(&self, obj: ObjRef) -> usize {
        obj.word().wrapping_sub(self.base()) / (8 * MARK_GRANULE_WORDS)
    }
}

impl ObjectModel for HeapView<'_> {
    #[inline(always)]
    fn size_bytes(&self, obj: ObjRef) -> usize {
        let layout = self.load64(self.index(obj));
        if self.format.runtime_sizes {
            (layout >> 32) as usize
        } else {
            self.format.object_words(layout) as usize * 8
        }
    }

    #[inline(always)]
    fn footprint_bytes(&self, obj: ObjRef) -> usize {
        self.format.object_words(self.load64(self.index(obj))) as usize * 8
    }

    #[inline(always)]
    fn live_bytes(&self, obj: ObjRef) -> (usize, usize) {
        let layout = self.load64(self.index(obj));
        let footprint = self.format.object_words(layout) as usize * 8;
        if self.format.runtime_sizes {
            ((layout >> 32) as usize, footprint)
        } else {
            (footprint, footprint)
        }
    }

    #[inline(always)]
    fn slot_count(&self, obj: ObjRef) -> usize {
        self.load64(self.index(obj)) as u32 as usize
    }

    #[inline(always)]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        visit: V,
    ) {
        let h = self.index(obj);
        let count = self.load64(h) as u32 as usize;
        let end = slots.end.min(count);
        self.scan_at(h, slots.start.min(end), end, visit);
    }

    /// The object's header is read once, for its slot count and the scan
    /// (the provided method reads it for each).
    #[inline(always)]
    fn scan_object<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        limit: usize,
        visit: V,
    ) -> Option<usize> {
        let h = self.index(obj);
        let count = self.load64(h) as u32 as usize;
        if count > limit {
            return Some(count);
        }
        self.scan_at(h, 0, count, visit);
        None
    }

    #[inline(always)]
    fn type_count(&self) -> usize {
        self.type_count
    }

    #[inline(always)]
    fn type_id(&self, obj: ObjRef) -> usize {
        self.type_at(self.index(obj)) as usize
    }

    /// The object's first 64 bytes ([`prefetch_object`]): its layout and
    /// type words and first slots, which the scan reads first. Most
    /// objects of real heaps are at most 64 bytes, and at 8-byte alignment
    /// a 32-byte object crosses a cache line at 3 of its 8 offsets: with
    /// the first line alone, the second missed during the scan.
    #[inline(always)]
    fn prefetch(&self, obj: ObjRef) {
        prefetch_object(obj.addr());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::HeapSink;
    use crate::{ArenaFormat, HeapBuilder, HeapGraph, Slot};

    /// Scans `obj` with `slots` and collects what it visits.
    fn scan(v: &HeapView<'_>, obj: ObjRef, slots: Range<usize>) -> Vec<(usize, ObjRef, SlotKind)> {
        let mut seen = Vec::new();
        v.scan_slots(obj, slots, |i, t, k| seen.push((i, t, k)));
        seen
    }

    #[test]
    fn view_reads_objects_in_place_in_both_layouts() {
        for layout in ArenaLayout::ALL {
            let mut b = HeapBuilder::new();
            b.set_format(ArenaFormat::new(layout)).unwrap();
            let t = b.type_name("T").unwrap();
            let a = b.next_pos();
            let bpos = a
                .add_words(ObjectHeader::new(t, 3, 1).size_words(layout))
                .unwrap();
            b.object(t, &[Slot::strong(bpos), Slot::NULL, Slot::weak(a)], 1)
                .unwrap();
            b.object(t, &[], 4).unwrap();
            b.root(a).unwrap();
            let heap = b.finish().unwrap();
            let v = heap.view();
            assert_eq!(v.layout(), layout);
            assert_eq!(
                v.type_kind(t),
                TypeKind::WeakSlots,
                "a weak slot upgrades T"
            );
            let ra = v.obj_ref(a).unwrap();
            let rb = v.obj_ref(bpos).unwrap();
            assert_eq!(heap.roots(), &[ra]);
            assert_eq!(v.mark_index(ra), 0, "position 8, granule 0");
            let (size_a, size_b) = match layout {
                ArenaLayout::Wide => (48, 48),
                ArenaLayout::Compressed => (32, 48),
            };
            assert_eq!(v.mark_index(rb), (8 + size_a) / 16);
            assert_eq!(v.size_bytes(ra), size_a);
            assert_eq!(v.size_bytes(rb), size_b);
            assert_eq!(v.live_bytes(ra), (size_a, size_a));
            assert_eq!(v.live_bytes(rb), (size_b, size_b));
            assert_eq!(v.runtime_bytes(), (size_a + size_b) as u64);
            assert_eq!(v.object_bytes(), (size_a + size_b) as u64);
            assert_eq!(v.slot_count(ra), 3);
            assert_eq!(
                scan(&v, ra, 0..usize::MAX),
                vec![(0, rb, SlotKind::Strong), (2, ra, SlotKind::Weak)]
            );
            assert_eq!(scan(&v, ra, 1..3), vec![(2, ra, SlotKind::Weak)]);
            let (from, to) = (5, 2);
            assert!(scan(&v, ra, from..to).is_empty());
            assert_eq!(v.objects().collect::<Vec<_>>(), vec![ra, rb]);
            assert_eq!(v.pos(rb), bpos);
            assert_eq!(v.type_id(rb), t);
            assert_eq!(ObjectModel::type_count(&v), 1);
            assert_eq!(ObjectModel::type_id(&v, rb), t as usize);
            assert_eq!(v.slots(ra).len(), 3);
            assert_eq!(v.header(ra), ObjectHeader::new(t, 3, 1));
            // ObjRef addresses are the header's address in the arena.
            assert_eq!(ra.word(), v.words.as_ptr() as usize + 8);
            assert_eq!(v.to_words().len().div_ceil(2), v.mark_index_bound());
        }
    }

    #[test]
    fn kinds_give_slots_their_meaning() {
        for layout in ArenaLayout::ALL {
            let mut b = HeapBuilder::new();
            b.set_format(ArenaFormat::new(layout).with_runtime_sizes())
                .unwrap();
            let kinds = [
                TypeKind::WeakRef,
                TypeKind::SoftRef,
                TypeKind::PhantomRef,
                TypeKind::EphemeronTable,
            ];
            let ids: Vec<u32> = kinds
                .iter()
                .map(|&k| {
                    let t = b.type_name(k.name()).unwrap();
                    b.type_kind(t, k).unwrap();
                    t
                })
                .collect();
            let plain = b.type_name("plain").unwrap();
            // Five objects of 2 or 4 slots, 100 runtime bytes each.
            let headers: Vec<ObjectHeader> = ids
                .iter()
                .chain([&plain])
                .map(|&t| {
                    let slots = if t == ids[3] { 4 } else { 2 };
                    ObjectHeader::sized(t, slots, 100, layout)
                })
                .collect();
            let mut at = b.next_pos();
            let pos: Vec<Pos> = headers
                .iter()
                .map(|h| {
                    let p = at;
                    at = at.add_words(h.size_words(layout)).unwrap();
                    p
                })
                .collect();
            for (i, h) in headers.iter().enumerate() {
                b.begin_object(*h).unwrap();
                let slots: Vec<Slot> = if i == 3 {
                    // (key 4 -> value 0), (null -> null)
                    vec![
                        Slot::strong(pos[4]),
                        Slot::strong(pos[0]),
                        Slot::NULL,
                        Slot::NULL,
                    ]
                } else {
                    vec![Slot::strong(pos[4]), Slot::strong(pos[(i + 1) % 5])]
                };
                b.slots(&slots).unwrap();
            }
            b.root(pos[4]).unwrap();
            b.finalizable(pos[1]).unwrap();
            let heap = b.finish().unwrap();
            let v = heap.view();
            let r: Vec<ObjRef> = pos.iter().map(|&p| v.obj_ref(p).unwrap()).collect();
            assert_eq!(heap.finalizable(), &[r[1]]);
            assert_eq!(v.size_bytes(r[0]), 100);
            for (h, &o) in headers.iter().zip(&r) {
                assert_eq!(v.footprint_bytes(o) as u64, h.size_words(layout) * 8);
                assert_eq!(v.live_bytes(o), (v.size_bytes(o), v.footprint_bytes(o)));
            }
            assert_eq!(v.live_bytes(r[0]).0, 100);
            assert_eq!(v.runtime_bytes(), 500);
            assert_eq!(v.object_bytes(), 5 * 104);
            for (i, k) in [SlotKind::Weak, SlotKind::Soft, SlotKind::Phantom]
                .into_iter()
                .enumerate()
            {
                assert_eq!(
                    scan(&v, r[i], 0..2),
                    vec![(0, r[4], k), (1, r[i + 1], SlotKind::Strong)]
                );
                assert_eq!(scan(&v, r[i], 1..2), vec![(1, r[i + 1], SlotKind::Strong)]);
            }
            let entry = vec![
                (0, r[4], SlotKind::Weak),
                (1, r[0], SlotKind::Ephemeron { key: r[4] }),
            ];
            assert_eq!(scan(&v, r[3], 0..4), entry);
            assert_eq!(scan(&v, r[3], 1..4), entry[1..]);
            assert_eq!(
                v.slots(r[3]).collect::<Vec<_>>(),
                vec![
                    Some((r[4], SlotKind::Weak)),
                    Some((r[0], SlotKind::Ephemeron { key: r[4] })),
                    None,
                    None
                ]
            );
            // Stores: strong slots only, objects of this view only.
            assert_eq!(v.store_slot(r[4], 0, Some(r[2])), Ok(Some(r[4])));
            assert_eq!(scan(&v, r[4], 0..1), vec![(0, r[2], SlotKind::Strong)]);
            assert_eq!(v.store_slot(r[4], 0, None), Ok(Some(r[2])));
            assert_eq!(v.store_slot(r[4], 0, None), Ok(None));
            assert_eq!(v.store_slot(r[0], 1, Some(r[0])), Ok(Some(r[1])));
            assert_eq!(
                v.store_slot(r[0], 0, None),
                Err(StoreError::NotAStrongSlot {
                    slot: 0,
                    kind: TypeKind::WeakRef
                })
            );
            assert!(matches!(
                v.store_slot(r[3], 1, None),
                Err(StoreError::NotAStrongSlot { .. })
            ));
            assert_eq!(
                v.store_slot(r[4], 2, None),
                Err(StoreError::NoSuchSlot { slot: 2, slots: 2 })
            );
            let inside = ObjRef::from_word(r[4].word() + 8).unwrap();
            assert!(matches!(
                v.store_slot(inside, 0, None),
                Err(StoreError::NotAnObject(_))
            ));
            assert!(matches!(
                v.store_slot(r[4], 0, Some(inside)),
                Err(StoreError::TargetNotAnObject(_))
            ));
            assert!(!v.is_object(inside) && v.is_object(r[4]));
        }
    }

    /// The slow path hands its slots over in batches of
    /// `SpecialSlots::CAPACITY`: objects of every kind with several batches
    /// of slots, nulls among them, scanned whole and from inside, visit
    /// what the per-slot decoding (`slots`) says, in order; `scan_object`
    /// visits them all up to its limit, and none above it.
    #[test]
    fn special_kinds_scan_across_batches() {
        let n = 3 * SpecialSlots::CAPACITY + 6; // even: ephemeron tables hold pairs
        for layout in ArenaLayout::ALL {
            let mut b = HeapBuilder::new();
            b.set_format(ArenaFormat::new(layout)).unwrap();
            let kinds = TypeKind::ALL;
            let objs: Vec<Pos> = kinds
                .iter()
                .map(|&k| {
                    let t = b.type_name(k.name()).unwrap();
                    b.type_kind(t, k).unwrap();
                    b.alloc(t, n as u32, 0).unwrap()
                })
                .collect();
            for (&k, &o) in kinds.iter().zip(&objs) {
                for i in 0..n {
                    let to = objs[i % objs.len()];
                    let slot = match k {
                        // Whole entries null now and then (a value's key is never null).
                        TypeKind::EphemeronTable if (i / 2) % 5 == 4 => Slot::NULL,
                        TypeKind::EphemeronTable => Slot::strong(to),
                        TypeKind::WeakSlots if i % 3 == 0 => Slot::weak(to),
                        _ if i % 7 == 6 => Slot::NULL,
                        _ => Slot::strong(to),
                    };
                    b.set_slot(o, i as u32, slot).unwrap();
                }
            }
            b.root(objs[0]).unwrap();
            let heap = b.finish().unwrap();
            let v = heap.view();
            for &o in &objs {
                let r = v.obj_ref(o).unwrap();
                let want: Vec<_> = v
                    .slots(r)
                    .enumerate()
                    .filter_map(|(i, s)| s.map(|(t, k)| (i, t, k)))
                    .collect();
                assert!(want.len() > 2 * SpecialSlots::CAPACITY, "{layout:?}");
                for from in [0, 1, SpecialSlots::CAPACITY, n - 3] {
                    let tail: Vec<_> = want.iter().filter(|w| w.0 >= from).copied().collect();
                    assert_eq!(scan(&v, r, from..n), tail, "{layout:?} from {from}");
                }
                // Whole, up to the limit; above it, nothing visited and the
                // count returned.
                for (limit, whole) in [(n - 1, false), (n, true), (usize::MAX, true)] {
                    let mut seen = Vec::new();
                    let large = v.scan_object(r, limit, |i, t, k| seen.push((i, t, k)));
                    let (expect_seen, expect_large) = if whole {
                        (want.clone(), None)
                    } else {
                        (Vec::new(), Some(n))
                    };
                    assert_eq!(
                        (seen, large),
                        (expect_seen, expect_large),
                        "{layout:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn compressed_weak_slots_come_from_the_list() {
        let mut b = HeapBuilder::new();
        b.set_format(ArenaFormat::COMPRESSED).unwrap();
        let t = b.type_name("Array").unwrap();
        let a = b.alloc(t, 200, 0).unwrap();
        for i in 0..200 {
            let slot = if i % 3 == 0 {
                Slot::weak(a)
            } else {
                Slot::strong(a)
            };
            b.set_slot(a, i, slot).unwrap();
        }
        b.set_slot(a, 3, Slot::strong(a)).unwrap();
        b.root(a).unwrap();
        let heap = b.finish().unwrap();
        let v = heap.view();
        let r = v.obj_ref(a).unwrap();
        let weak = |i: usize| i % 3 == 0 && i != 3;
        let want: Vec<_> = (0..200)
            .map(|i| {
                (
                    i,
                    r,
                    if weak(i) {
                        SlotKind::Weak
                    } else {
                        SlotKind::Strong
                    },
                )
            })
            .collect();
        assert_eq!(scan(&v, r, 0..200), want);
        assert_eq!(scan(&v, r, 50..120), want[50..120]);
        let listed: Vec<_> = v.slots(r).map(|s| s.unwrap().1).collect();
        assert_eq!(listed, want.iter().map(|w| w.2).collect::<Vec<_>>());
        assert_eq!(
            v.store_slot(r, 1, None),
            Err(StoreError::NotAStrongSlot {
                slot: 1,
                kind: TypeKind::WeakSlots
            })
        );
    }
}
