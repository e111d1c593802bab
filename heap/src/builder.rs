//! The in-memory heap: [`HeapBuilder`] lays objects out in a bumpalo arena,
//! [`Heap`] owns the result.

use std::fmt;
use std::ptr::NonNull;

use bumpalo::Bump;

use crate::arena::{check_reference, validate_arena, ObjectHeader, Pos, Slot, HEADER_WORDS};
use crate::error::BuildError;
use crate::graph::HeapGraph;
use crate::sink::HeapSink;
use crate::view::HeapView;
use stealmark_model::ObjRef;

/// Builds a heap in memory, object by object, in the arena layout of
/// `docs/snapshot-format.md`.
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
    objects: u64,
    /// Where the next slot of the current object goes, and how many remain.
    cursor: usize,
    pending: usize,
    roots: Vec<Pos>,
    types: Vec<String>,
}

// SAFETY: the builder exclusively owns its bump arena (`Bump` is `Send`) and
// the region allocated from it; nothing in it is tied to a thread.
unsafe impl Send for HeapBuilder {}

impl fmt::Debug for HeapBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeapBuilder")
            .field("objects", &self.objects)
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
            objects: 0,
            cursor: 0,
            pending: 0,
            roots: Vec::new(),
            types: Vec::new(),
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
        let needed = (self.len as u64)
            .checked_add(extra)
            .filter(|&n| n <= (isize::MAX as u64) / 8);
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

    fn check_no_pending(&self, what: &str) -> Result<(), BuildError> {
        if self.pending != 0 {
            return Err(BuildError::Misuse(format!(
                "{what}: the object begun last still expects {} slots",
                self.pending
            )));
        }
        Ok(())
    }

    /// Allocates an object whose slots are all null, and returns its position.
    pub fn alloc(
        &mut self,
        type_id: u32,
        slots: u32,
        payload_words: u32,
    ) -> Result<Pos, BuildError> {
        let pos = self.begin_object(ObjectHeader::new(type_id, slots, payload_words))?;
        self.pending = 0;
        Ok(pos)
    }

    /// Sets slot `index` of the object at `obj`.
    pub fn set_slot(&mut self, obj: Pos, index: u32, slot: Slot) -> Result<(), BuildError> {
        let at = usize::try_from(obj.word_index()).unwrap_or(usize::MAX);
        if at >= self.len {
            return Err(BuildError::Misuse(format!("set_slot: no object at {obj}")));
        }
        let slots = u64::from_le(self.words()[at]) as u32;
        if index >= slots {
            return Err(BuildError::Misuse(format!(
                "set_slot: slot {index} of the object at {obj}, which has {slots} slots"
            )));
        }
        let i = at + HEADER_WORDS as usize + index as usize;
        self.words_mut()[i] = slot.raw().to_le();
        Ok(())
    }

    /// The number of objects so far.
    pub fn object_count(&self) -> u64 {
        self.objects
    }

    /// Validates the arena and the roots and returns the heap.
    pub fn finish(self) -> Result<Heap, BuildError> {
        self.check_no_pending("finish")?;
        let words = self.words();
        let summary =
            validate_arena(words, self.types.len() as u64).map_err(|(index, problem)| {
                BuildError::Invalid {
                    offset: index * 8,
                    problem,
                }
            })?;
        let arena_bytes = words.len() as u64 * 8;
        let view = HeapView::new_validated(words, summary.objects);
        let mut roots = Vec::with_capacity(self.roots.len());
        for root in &self.roots {
            check_reference(root.offset(), arena_bytes, &summary.starts).map_err(|problem| {
                BuildError::Invalid {
                    offset: root.offset(),
                    problem,
                }
            })?;
            roots.push(view.obj_ref(*root).expect("checked against the arena"));
        }
        Ok(Heap {
            region: self.region,
            len: self.len,
            objects: summary.objects,
            roots,
            types: self.types,
            bump: self.bump,
        })
    }
}

impl HeapSink for HeapBuilder {
    type Error = BuildError;

    fn reserve(&mut self, _objects: u64, arena_words: u64) {
        // A hint: if it is absurd, growing later reports the error.
        let _ = self.grow(arena_words.saturating_sub(self.len as u64));
    }

    fn begin_object(&mut self, header: ObjectHeader) -> Result<Pos, BuildError> {
        self.check_no_pending("begin_object")?;
        let size = header.size_words();
        self.grow(size)?;
        let at = self.len;
        let pos = Pos::from_word_index(at as u64).expect("arena index fits");
        self.len += size as usize;
        let words = self.words_mut();
        words[at] = header.layout_word().to_le();
        words[at + 1] = header.type_word().to_le();
        self.cursor = at + HEADER_WORDS as usize;
        self.pending = header.slots as usize;
        self.objects += 1;
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), BuildError> {
        if slots.len() > self.pending {
            return Err(BuildError::Misuse(format!(
                "slots: {} slots given, the current object expects {} more",
                slots.len(),
                self.pending
            )));
        }
        let at = self.cursor;
        let dst = &mut self.words_mut()[at..at + slots.len()];
        for (d, s) in dst.iter_mut().zip(slots) {
            *d = s.raw().to_le();
        }
        self.cursor += slots.len();
        self.pending -= slots.len();
        Ok(())
    }

    fn too_many_slots(&self, count: usize) -> BuildError {
        BuildError::Misuse(format!(
            "an object cannot have {count} slots (at most {})",
            u32::MAX
        ))
    }

    fn root(&mut self, target: Pos) -> Result<(), BuildError> {
        self.roots.push(target);
        Ok(())
    }

    fn type_name(&mut self, name: &str) -> Result<u32, BuildError> {
        let id = u32::try_from(self.types.len())
            .map_err(|_| BuildError::Misuse("too many type names".into()))?;
        self.types.push(name.to_owned());
        Ok(id)
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.len as u64).expect("arena index fits")
    }
}

/// A validated heap in memory: a bump-allocated arena, its roots and type
/// names.
pub struct Heap {
    /// The arena: `len` words inside `bump`.
    region: NonNull<u64>,
    len: usize,
    objects: u64,
    roots: Vec<ObjRef>,
    types: Vec<String>,
    /// Owns the arena memory; never allocated from again, never reset.
    bump: Bump,
}

// SAFETY: the heap exclusively owns its bump arena (`Bump` is `Send`) and the
// region in it; nothing in it is tied to a thread.
unsafe impl Send for Heap {}
// SAFETY: through `&Heap` the arena is only read, and the `Bump` is never
// touched (no allocation happens after `finish`), so shared access from
// several threads is plain concurrent reading of immutable memory.
unsafe impl Sync for Heap {}

impl fmt::Debug for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Heap")
            .field("objects", &self.objects)
            .field("words", &self.len)
            .field("roots", &self.roots.len())
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
        // allocated from again, so the words are immutable for `'_`.
        let words = unsafe { std::slice::from_raw_parts(self.region.as_ptr(), self.len) };
        HeapView::new_validated(words, self.objects)
    }

    fn roots(&self) -> &[ObjRef] {
        &self.roots
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

    #[test]
    fn builder_grows_and_keeps_contents() {
        let mut b = HeapBuilder::with_capacity(1);
        let mut prev = None;
        for _ in 0..1000 {
            let p = b.alloc(0, 1, 3).unwrap();
            if let Some(q) = prev {
                b.set_slot(p, 0, Slot::strong(q)).unwrap();
            }
            prev = Some(p);
        }
        b.root(prev.unwrap()).unwrap();
        let heap = b.finish().unwrap();
        assert_eq!(heap.view().object_count(), 1000);
        assert_eq!(heap.view().mark_index_bound(), 1 + 1000 * 6);
        assert_eq!(
            crate::mark_sequential(&heap.view(), heap.roots()).objects,
            1000
        );
    }

    #[test]
    fn builder_rejects_misuse_and_bad_references() {
        let mut b = HeapBuilder::new();
        let p = b.alloc(0, 2, 0).unwrap();
        assert!(matches!(
            b.set_slot(p, 2, Slot::NULL),
            Err(BuildError::Misuse(_))
        ));
        assert!(matches!(
            b.set_slot(Pos::from_offset(800).unwrap(), 0, Slot::NULL),
            Err(BuildError::Misuse(_))
        ));
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
            Err(BuildError::Misuse(_))
        ));
        assert!(matches!(b.alloc(0, 0, 0), Err(BuildError::Misuse(_))));
        b.slots(&[Slot::NULL]).unwrap();
        b.root(Pos::from_offset(64).unwrap()).unwrap();
        assert!(matches!(
            b.finish(),
            Err(BuildError::Invalid {
                problem: Problem::ReferenceOutOfRange { .. },
                ..
            })
        ));
    }
}
