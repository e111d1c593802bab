//! The in-memory heap: [`HeapBuilder`] lays objects out in a bumpalo arena,
//! [`Heap`] owns the result.

use std::collections::BTreeSet;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use bumpalo::Bump;

use crate::arena::{
    ArenaFormat, ArenaLayout, ObjectHeader, Pos, Slot, TypeKind, COMPRESSED_MAX_WORDS,
};
use crate::error::{BuildError, SinkError};
use crate::graph::HeapGraph;
use crate::sink::HeapSink;
use crate::sink_state::{compressed_index, next_type_id, too_many_slots, SinkState};
use crate::validate::{check_reference, validate_arena, ArenaSpec, Fault};
use crate::view::{HeapView, ViewParts};
use stealmark_model::ObjRef;

/// Builds a heap in memory, object by object, in the arena layout of
/// `docs/snapshot-format.md` (wide by default; see
/// [`HeapSink::set_format`]).
///
/// The arena is one contiguous, zeroed slice of words bump-allocated from a
/// [`bumpalo::Bump`], as a runtime allocates its heap. Give a size hint
/// ([`HeapBuilder::with_capacity`] or [`HeapSink::reserve`]) to allocate it
/// once; without one it doubles as needed, and the outgrown slices stay in
/// the bump arena until the heap is dropped.
///
/// Objects can be emitted whole through [`HeapSink`] (slots referring to
/// positions computed in advance) or allocated with null slots and linked
/// afterwards with [`HeapBuilder::set_slot`]. [`HeapBuilder::finish`]
/// validates the result exactly as a snapshot is validated.
///
/// ```
/// use stealmark_heap::{HeapBuilder, HeapGraph, HeapSink, ObjectModel, Slot};
///
/// let mut b = HeapBuilder::new();
/// let node = b.type_name("Node").unwrap();
/// let a = b.alloc(node, 1, 0).unwrap();
/// let c = b.alloc(node, 1, 0).unwrap();
/// b.set_slot(a, 0, Slot::strong(c)).unwrap();
/// b.set_slot(c, 0, Slot::strong(a)).unwrap(); // a cycle
/// b.root(a).unwrap();
/// let heap = b.finish().unwrap();
/// let marked = stealmark_heap::mark_sequential(&heap.view(), heap.roots());
/// assert_eq!(marked.objects, 2);
/// ```
pub struct HeapBuilder {
    bump: Bump,
    /// The arena: `cap` zero-initialised words in `bump`, `len` in use.
    region: NonNull<u64>,
    cap: usize,
    len: usize,
    /// The format, the current object and its slots still expected, the
    /// declared kinds.
    state: SinkState,
    /// The half word where the next slot of the current object goes.
    cursor: usize,
    roots: Vec<Pos>,
    finalizable: Vec<Pos>,
    types: Vec<String>,
    /// Half-word indices of the compressed arena's weak slots.
    weak_slots: BTreeSet<u64>,
}

// SAFETY: the builder exclusively owns its bump arena (`Bump` is `Send`) and
// the region allocated from it; nothing in it is tied to a thread.
unsafe impl Send for HeapBuilder {}

impl fmt::Debug for HeapBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeapBuilder")
            .field("format", &self.state.format)
            .field("objects", &self.state.objects)
            .field("words", &self.len)
            .field("roots", &self.roots.len())
            .finish()
    }
}

impl Default for HeapBuilder {
    fn default() -> Self {
        HeapBuilder::new()
    }
}

/// Sets half word `j` of `words` (bytes `4j..4j+4`) to `value`.
fn set_half(words: &mut [u64], j: usize, value: u32) {
    let w = u64::from_le(words[j / 2]);
    let shift = 32 * (j % 2);
    let w = (w & !(0xffff_ffff << shift)) | u64::from(value) << shift;
    words[j / 2] = w.to_le();
}

/// A builder call that does not fit.
fn misuse(message: String) -> BuildError {
    SinkError::Misuse(message).into()
}

/// Half word `j` of `words`.
fn get_half(words: &[u64], j: usize) -> u32 {
    (u64::from_le(words[j / 2]) >> (32 * (j % 2))) as u32
}

impl HeapBuilder {
    /// An empty builder.
    pub fn new() -> HeapBuilder {
        HeapBuilder::with_capacity(1024)
    }

    /// An empty builder whose arena holds `words` words (the reserved word 0
    /// included) before it grows.
    pub fn with_capacity(words: usize) -> HeapBuilder {
        let bump = Bump::new();
        let cap = words.max(1);
        let region = NonNull::from(bump.alloc_slice_fill_copy(cap, 0u64)).cast::<u64>();
        HeapBuilder {
            bump,
            region,
            cap,
            len: 1,
            state: SinkState::new(),
            cursor: 0,
            roots: Vec::new(),
            finalizable: Vec::new(),
            types: Vec::new(),
            weak_slots: BTreeSet::new(),
        }
    }

    fn words(&self) -> &[u64] {
        // SAFETY: `region` points at `cap >= len` initialised words allocated
        // from `self.bump`, which lives as long as `self` and is never reset.
        unsafe { std::slice::from_raw_parts(self.region.as_ptr(), self.len) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.region.as_ptr(), self.len) }
    }

    /// Makes room for `extra` more words, moving the arena to a larger bump
    /// allocation if needed.
    fn grow(&mut self, extra: u64) -> Result<(), BuildError> {
        let limit = match self.state.format.layout {
            ArenaLayout::Wide => (isize::MAX as u64) / 8,
            ArenaLayout::Compressed => COMPRESSED_MAX_WORDS,
        };
        let needed = (self.len as u64).checked_add(extra).filter(|&n| n <= limit);
        let Some(needed) = needed else {
            return Err(BuildError::TooLarge {
                words: (self.len as u64).saturating_add(extra),
            });
        };
        let needed = needed as usize;
        if needed <= self.cap {
            return Ok(());
        }
        let cap = needed.max(self.cap.saturating_mul(2));
        let fresh = self.bump.alloc_slice_fill_copy(cap, 0u64);
        fresh[..self.len].copy_from_slice(self.words());
        self.region = NonNull::from(fresh).cast::<u64>();
        self.cap = cap;
        Ok(())
    }

    /// Allocates an object whose slots are all null, and returns its
    /// position (for a format without runtime sizes).
    pub fn alloc(
        &mut self,
        type_id: u32,
        slots: u32,
        payload_words: u32,
    ) -> Result<Pos, BuildError> {
        let pos = self.begin_object(ObjectHeader::new(type_id, slots, payload_words))?;
        self.state.pending = 0;
        Ok(pos)
    }

    /// Sets slot `index` of the object at `obj`.
    pub fn set_slot(&mut self, obj: Pos, index: u32, slot: Slot) -> Result<(), BuildError> {
        let at = usize::try_from(obj.word_index()).unwrap_or(usize::MAX);
        if at >= self.len {
            return Err(misuse(format!("set_slot: no object at {obj}")));
        }
        let slots = u64::from_le(self.words()[at]) as u32;
        if index >= slots {
            return Err(misuse(format!(
                "set_slot: slot {index} of the object at {obj}, which has {slots} slots"
            )));
        }
        let layout = self.state.format.layout;
        let type_id = match layout {
            ArenaLayout::Wide => u64::from_le(self.words()[at + 1]) as u32,
            ArenaLayout::Compressed => get_half(self.words(), 2 * at + 2),
        };
        let first = 2 * at + layout.header_halves() as usize;
        let j = first + index as usize * layout.slot_halves() as usize;
        self.put_slot(j, type_id, slot)
    }

    /// Writes `slot` at half word `j`, a slot of an object of type
    /// `type_id`.
    fn put_slot(&mut self, j: usize, type_id: u32, slot: Slot) -> Result<(), BuildError> {
        self.state.note_slot(type_id, slot);
        match self.state.format.layout {
            ArenaLayout::Wide => self.words_mut()[j / 2] = slot.raw().to_le(),
            ArenaLayout::Compressed => {
                let index = compressed_index(slot)?;
                set_half(self.words_mut(), j, index);
                if slot.is_weak() {
                    self.weak_slots.insert(j as u64);
                } else {
                    self.weak_slots.remove(&(j as u64));
                }
            }
        }
        Ok(())
    }

    /// The number of objects so far.
    pub fn object_count(&self) -> u64 {
        self.state.objects
    }

    /// Validates the arena, the roots and the finalizable objects and
    /// returns the heap.
    pub fn finish(self) -> Result<Heap, BuildError> {
        self.state.check_complete("finish")?;
        let kinds = self.state.resolved_kinds(self.types.len())?;
        let weak_slots: Vec<u64> = self.weak_slots.iter().map(|&j| j.to_le()).collect();
        let words = self.words();
        let format = self.state.format;
        let spec = ArenaSpec {
            format,
            type_count: self.types.len() as u64,
            kinds: &kinds,
            default_kind: TypeKind::Plain,
            weak_slots: &weak_slots,
        };
        let summary = validate_arena(words, &spec).map_err(|fault| match fault {
            Fault::Arena(offset, problem) => BuildError::Invalid { offset, problem },
            Fault::WeakSlots(i, problem) => BuildError::Invalid {
                offset: u64::from_le(weak_slots[i as usize]) * 4,
                problem,
            },
        })?;
        let arena_bytes = words.len() as u64 * 8;
        let base = self.region.as_ptr() as usize;
        let resolve = |positions: &[Pos], what: &'static str| {
            positions
                .iter()
                .map(|&pos| {
                    check_reference(pos.offset(), arena_bytes, &summary.starts)
                        .map_err(|problem| BuildError::BadPosition { what, pos, problem })?;
                    Ok(ObjRef::from_word(base + pos.offset() as usize)
                        .expect("an aligned offset into the arena"))
                })
                .collect::<Result<Vec<ObjRef>, BuildError>>()
        };
        let roots = resolve(&self.roots, "root")?;
        let finalizable = resolve(&self.finalizable, "finalizable object")?;
        Ok(Heap {
            region: self.region,
            len: self.len,
            format,
            objects: summary.objects,
            runtime_bytes: summary.runtime_bytes,
            starts: summary.starts,
            weak_buckets: summary.weak_buckets,
            roots,
            finalizable,
            types: self.types,
            kinds,
            weak_slots,
            bump: self.bump,
        })
    }
}

impl HeapSink for HeapBuilder {
    type Error = BuildError;

    fn set_format(&mut self, format: ArenaFormat) -> Result<(), BuildError> {
        Ok(self.state.set_format(format)?)
    }

    fn format(&self) -> ArenaFormat {
        self.state.format
    }

    fn reserve(&mut self, _objects: u64, arena_words: u64) {
        // A hint: if it is absurd, growing later reports the error.
        let _ = self.grow(arena_words.saturating_sub(self.len as u64));
    }

    fn begin_object(&mut self, header: ObjectHeader) -> Result<Pos, BuildError> {
        self.state.check_begin(header)?;
        let layout = self.state.format.layout;
        let size = header.size_words(layout);
        self.grow(size)?;
        let at = self.len;
        let pos = Pos::from_word_index(at as u64).expect("arena index fits");
        self.len += size as usize;
        let words = self.words_mut();
        words[at] = header.layout_word().to_le();
        match layout {
            ArenaLayout::Wide => words[at + 1] = u64::from(header.type_id).to_le(),
            ArenaLayout::Compressed => set_half(words, 2 * at + 2, header.type_id),
        }
        self.cursor = 2 * at + layout.header_halves() as usize;
        self.state.begun(header);
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), BuildError> {
        self.state.check_slots(slots.len())?;
        let step = self.state.format.layout.slot_halves() as usize;
        for &s in slots {
            self.put_slot(self.cursor, self.state.current_type, s)?;
            self.cursor += step;
        }
        self.state.pending -= slots.len() as u64;
        Ok(())
    }

    fn too_many_slots(&self, count: usize) -> BuildError {
        too_many_slots(count).into()
    }

    fn root(&mut self, target: Pos) -> Result<(), BuildError> {
        self.roots.push(target);
        Ok(())
    }

    fn finalizable(&mut self, target: Pos) -> Result<(), BuildError> {
        self.finalizable.push(target);
        Ok(())
    }

    fn type_name(&mut self, name: &str) -> Result<u32, BuildError> {
        let id = next_type_id(self.types.len())?;
        self.types.push(name.to_owned());
        Ok(id)
    }

    fn type_kind(&mut self, type_id: u32, kind: TypeKind) -> Result<(), BuildError> {
        self.state.type_kind(type_id, kind);
        Ok(())
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.len as u64).expect("arena index fits")
    }
}

/// A validated heap in memory: a bump-allocated arena, its roots,
/// finalizable objects, type names and kinds.
///
/// Its views are writable: [`HeapView::store_slot`] stores to its slots
/// atomically, while other threads scan.
pub struct Heap {
    /// The arena: `len` words inside `bump`.
    region: NonNull<u64>,
    len: usize,
    format: ArenaFormat,
    objects: u64,
    runtime_bytes: u64,
    starts: Vec<u64>,
    roots: Vec<ObjRef>,
    finalizable: Vec<ObjRef>,
    types: Vec<String>,
    kinds: Vec<u8>,
    weak_slots: Vec<u64>,
    /// The weak-slot list's index by arena region.
    weak_buckets: Vec<usize>,
    /// Owns the arena memory; never allocated from again, never reset.
    bump: Bump,
}

// SAFETY: the heap exclusively owns its bump arena (`Bump` is `Send`) and the
// region in it; nothing in it is tied to a thread.
unsafe impl Send for Heap {}
// SAFETY: after `finish` the arena is only accessed through views, with
// atomic loads and stores (see `view.rs`), and the `Bump` is never touched
// (no allocation happens after `finish`), so shared access from several
// threads is data-race free.
unsafe impl Sync for Heap {}

impl fmt::Debug for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Heap")
            .field("format", &self.format)
            .field("objects", &self.objects)
            .field("words", &self.len)
            .field("roots", &self.roots.len())
            .field("finalizable", &self.finalizable.len())
            .field("types", &self.types.len())
            .finish()
    }
}

impl Heap {
    /// A new builder.
    pub fn builder() -> HeapBuilder {
        HeapBuilder::new()
    }

    /// The type names, indexed by type id.
    pub fn type_names(&self) -> &[String] {
        &self.types
    }

    /// Bytes the bump arena holds (the arena plus any outgrown copies).
    pub fn allocated_bytes(&self) -> usize {
        self.bump.allocated_bytes()
    }
}

impl HeapGraph for Heap {
    fn view(&self) -> HeapView<'_> {
        // SAFETY: `region` points at `len` initialised words allocated from
        // `self.bump`, which lives as long as `self` and is never reset or
        // allocated from again. `AtomicU64` has the size and alignment of
        // `u64`, and after `finish` the words are only accessed through
        // atomics (views), so viewing them as atomics is sound.
        let words = unsafe {
            std::slice::from_raw_parts(self.region.as_ptr().cast::<AtomicU64>(), self.len)
        };
        HeapView::new_validated(ViewParts {
            words,
            format: self.format,
            kinds: &self.kinds,
            default_kind: TypeKind::Plain,
            weak_slots: &self.weak_slots,
            weak_buckets: &self.weak_buckets,
            starts: &self.starts,
            type_count: self.types.len(),
            objects: self.objects,
            runtime_bytes: self.runtime_bytes,
            writable: true,
        })
    }

    fn roots(&self) -> &[ObjRef] {
        &self.roots
    }

    fn finalizable(&self) -> &[ObjRef] {
        &self.finalizable
    }

    fn type_count(&self) -> usize {
        self.types.len()
    }

    fn type_name(&self, type_id: u32) -> Option<&str> {
        self.types.get(type_id as usize).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Problem;
    use crate::MarkIndex;

    /// The problem of a build error about the arena or a position.
    fn bad(problem: &BuildError) -> Option<&Problem> {
        match problem {
            BuildError::Invalid { problem, .. } | BuildError::BadPosition { problem, .. } => {
                Some(problem)
            }
            _ => None,
        }
    }

    #[test]
    fn builder_grows_and_keeps_contents() {
        for layout in ArenaLayout::ALL {
            let mut b = HeapBuilder::with_capacity(1);
            b.set_format(ArenaFormat::new(layout)).unwrap();
            let mut prev = None;
            // Under Miri, enough objects to outgrow the 1-word arena a few
            // times (the region moves each time).
            let objects = if cfg!(miri) { 40 } else { 1000 };
            for _ in 0..objects {
                let p = b.alloc(0, 1, 3).unwrap();
                if let Some(q) = prev {
                    b.set_slot(p, 0, Slot::strong(q)).unwrap();
                }
                prev = Some(p);
            }
            b.root(prev.unwrap()).unwrap();
            let heap = b.finish().unwrap();
            assert_eq!(heap.view().object_count(), objects as u64);
            let size = ObjectHeader::new(0, 1, 3).size_words(layout) as usize;
            assert_eq!(
                heap.view().mark_index_bound(),
                (1 + objects * size).div_ceil(2)
            );
            assert_eq!(
                crate::mark_sequential(&heap.view(), heap.roots()).objects,
                objects as u64
            );
        }
    }

    #[test]
    fn builder_rejects_misuse_and_bad_references() {
        let mut b = HeapBuilder::new();
        let p = b.alloc(0, 2, 0).unwrap();
        assert!(matches!(
            b.set_slot(p, 2, Slot::NULL),
            Err(BuildError::Sink(SinkError::Misuse(_)))
        ));
        assert!(matches!(
            b.set_slot(Pos::from_offset(800).unwrap(), 0, Slot::NULL),
            Err(BuildError::Sink(SinkError::Misuse(_)))
        ));
        assert!(b.set_format(ArenaFormat::COMPRESSED).is_err());
        b.set_slot(p, 0, Slot::strong(Pos::from_offset(16).unwrap()))
            .unwrap();
        assert!(matches!(
            b.finish(),
            Err(BuildError::Invalid {
                offset: 24,
                problem: Problem::NotAnObjectStart { .. }
            })
        ));
        let mut b = HeapBuilder::new();
        b.begin_object(ObjectHeader::new(0, 2, 0)).unwrap();
        b.slots(&[Slot::NULL]).unwrap();
        assert!(matches!(
            b.slots(&[Slot::NULL, Slot::NULL]),
            Err(BuildError::Sink(SinkError::Misuse(_)))
        ));
        assert!(matches!(
            b.alloc(0, 0, 0),
            Err(BuildError::Sink(SinkError::Misuse(_)))
        ));
        b.slots(&[Slot::NULL]).unwrap();
        b.root(Pos::from_offset(64).unwrap()).unwrap();
        let err = b.finish().unwrap_err();
        assert!(
            matches!(bad(&err), Some(Problem::ReferenceOutOfRange { .. })),
            "{err}"
        );
        // Runtime sizes: the header must say one, and agree with the layout.
        let mut b = HeapBuilder::new();
        b.set_format(ArenaFormat::COMPRESSED.with_runtime_sizes())
            .unwrap();
        assert!(b.begin_object(ObjectHeader::new(0, 1, 0)).is_err());
        assert!(b
            .begin_object(ObjectHeader::sized(0, 1, 40, ArenaLayout::Wide))
            .is_err());
        b.begin_object(ObjectHeader::sized(0, 1, 40, ArenaLayout::Compressed))
            .unwrap();
        b.slots(&[Slot::NULL]).unwrap();
        // A weak slot in a weak-ref type is refused at the end.
        let mut b = HeapBuilder::new();
        let t = b.type_name("W").unwrap();
        b.type_kind(t, TypeKind::WeakRef).unwrap();
        let p = b.alloc(t, 1, 0).unwrap();
        b.set_slot(p, 0, Slot::weak(p)).unwrap();
        assert!(matches!(
            b.finish(),
            Err(BuildError::Sink(SinkError::WeakSlotNotAllowed {
                kind: TypeKind::WeakRef,
                ..
            }))
        ));
    }
}
