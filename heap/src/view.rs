//! [`HeapView`]: a validated arena seen through the [`ObjectModel`] trait.

use std::fmt;
use std::num::NonZeroUsize;
use std::ops::Range;

use crate::arena::{layout_size_words, layout_slots, ObjectHeader, Pos, HEADER_WORDS, WEAK_BIT};
use stealmark_model::{MarkIndex, ObjRef, ObjectModel, SlotKind};

/// A borrowed, validated object arena.
///
/// An [`ObjRef`] of this view is the address of the object's layout word
/// inside the arena memory, so marking reads the object's own memory, as a
/// collector does. The mark index is the word offset of that layout word
/// (one mark bit per heap word, as in HotSpot's mark bitmap), so
/// [`MarkIndex::mark_index_bound`] is the arena's length in words.
///
/// A view exists only over an arena that passed validation (every slot null
/// or a reference to an object start, objects within the arena), so the
/// scanning methods do no per-slot checks. Passing an `ObjRef` that did not
/// come from this view (a root or a slot of it) gives meaningless results or
/// a panic, never undefined behaviour.
#[derive(Clone, Copy)]
pub struct HeapView<'a> {
    words: &'a [u64],
    objects: u64,
}

impl fmt::Debug for HeapView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeapView")
            .field("base", &self.words.as_ptr())
            .field("words", &self.words.len())
            .field("objects", &self.objects)
            .finish()
    }
}

impl<'a> HeapView<'a> {
    /// Wraps an arena that [`crate::arena::validate_arena`] accepted, with
    /// the object count it found. Crate-internal: the type's existence is the
    /// proof of validation.
    pub(crate) fn new_validated(words: &'a [u64], objects: u64) -> HeapView<'a> {
        debug_assert!(!words.is_empty());
        HeapView { words, objects }
    }

    /// The arena words (little-endian values).
    pub fn words(&self) -> &'a [u64] {
        self.words
    }

    /// The arena size in bytes.
    pub fn arena_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The number of objects in the arena.
    pub fn object_count(&self) -> u64 {
        self.objects
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
    pub fn pos(&self, obj: ObjRef) -> Pos {
        Pos::from_offset(obj.word().wrapping_sub(self.base()) as u64)
            .expect("ObjRef is not of this heap view")
    }

    /// The word index of `obj`'s layout word, checked against the arena.
    #[inline(always)]
    fn index(&self, obj: ObjRef) -> usize {
        let index = obj.word().wrapping_sub(self.base()) / 8;
        assert!(index < self.words.len(), "ObjRef is not of this heap view");
        index
    }

    /// The object's header: type id, slot count and payload size.
    pub fn header(&self, obj: ObjRef) -> ObjectHeader {
        let i = self.index(obj);
        let layout = u64::from_le(self.words[i]);
        let type_word = u64::from_le(self.words[i + 1]);
        ObjectHeader::new(type_word as u32, layout as u32, (layout >> 32) as u32)
    }

    /// The object's type id.
    pub fn type_id(&self, obj: ObjRef) -> u32 {
        self.header(obj).type_id
    }

    /// The object's slots, raw (little-endian words).
    #[inline(always)]
    fn slot_words(&self, obj: ObjRef) -> &'a [u64] {
        let i = self.index(obj);
        let first = i + HEADER_WORDS as usize;
        let count = layout_slots(u64::from_le(self.words[i])) as usize;
        &self.words[first..first + count]
    }

    /// The object's slots, null ones included, as (target, kind) pairs.
    pub fn slots(
        &self,
        obj: ObjRef,
    ) -> impl ExactSizeIterator<Item = Option<(ObjRef, SlotKind)>> + 'a {
        let base = self.base();
        self.slot_words(obj)
            .iter()
            .map(move |&raw| decode_slot(base, u64::from_le(raw)))
    }

    /// Every object of the arena, in address order.
    pub fn objects(&self) -> Objects<'a> {
        Objects {
            words: self.words,
            at: 1,
        }
    }
}

/// Turns a slot word into a reference. The base is non-zero and 8-aligned
/// and the offset is a multiple of 8, so the result is a valid `ObjRef`
/// unless the addition wraps to zero (impossible for a validated arena).
#[inline(always)]
fn decode_slot(base: usize, slot: u64) -> Option<(ObjRef, SlotKind)> {
    if slot == 0 {
        return None;
    }
    let kind = if slot & WEAK_BIT == 0 {
        SlotKind::Strong
    } else {
        SlotKind::Weak
    };
    let word = NonZeroUsize::new(base.wrapping_add((slot & !WEAK_BIT & !7) as usize))?;
    Some((ObjRef::from_aligned(word), kind))
}

/// Iterator over the objects of a [`HeapView`], in address order.
#[derive(Clone, Debug)]
pub struct Objects<'a> {
    words: &'a [u64],
    at: usize,
}

impl Iterator for Objects<'_> {
    type Item = ObjRef;

    fn next(&mut self) -> Option<ObjRef> {
        if self.at >= self.words.len() {
            return None;
        }
        let obj = ObjRef::from_word(self.words.as_ptr() as usize + self.at * 8);
        self.at += layout_size_words(u64::from_le(self.words[self.at])) as usize;
        obj
    }
}

impl MarkIndex for HeapView<'_> {
    #[inline(always)]
    fn mark_index_bound(&self) -> usize {
        self.words.len()
    }

    #[inline(always)]
    fn mark_index(&self, obj: ObjRef) -> usize {
        obj.word().wrapping_sub(self.base()) / 8
    }
}

impl ObjectModel for HeapView<'_> {
    #[inline(always)]
    fn size_bytes(&self, obj: ObjRef) -> usize {
        let i = self.index(obj);
        layout_size_words(u64::from_le(self.words[i])) as usize * 8
    }

    #[inline(always)]
    fn slot_count(&self, obj: ObjRef) -> usize {
        self.slot_words(obj).len()
    }

    #[inline(always)]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        let all = self.slot_words(obj);
        let end = slots.end.min(all.len());
        let start = slots.start.min(end);
        let base = self.base();
        for (i, &raw) in all[start..end].iter().enumerate() {
            if let Some((target, kind)) = decode_slot(base, u64::from_le(raw)) {
                visit(start + i, target, kind);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::HeapSink;
    use crate::{HeapBuilder, HeapGraph, Slot};

    #[test]
    fn view_reads_objects_in_place() {
        let mut b = HeapBuilder::new();
        let t = b.type_name("T").unwrap();
        let a = b.next_pos();
        let bpos = a.add_words(2 + 3 + 1).unwrap();
        b.object(t, &[Slot::strong(bpos), Slot::NULL, Slot::weak(a)], 1)
            .unwrap();
        b.object(t, &[], 4).unwrap();
        b.root(a).unwrap();
        let heap = b.finish().unwrap();
        let v = heap.view();
        let ra = v.obj_ref(a).unwrap();
        let rb = v.obj_ref(bpos).unwrap();
        assert_eq!(heap.roots(), &[ra]);
        assert_eq!(v.mark_index(ra), 1);
        assert_eq!(v.mark_index(rb), 7);
        assert_eq!(v.mark_index_bound(), 13);
        assert_eq!(v.size_bytes(ra), 48);
        assert_eq!(v.size_bytes(rb), 48);
        assert_eq!(v.slot_count(ra), 3);
        let mut seen = Vec::new();
        v.scan_slots(ra, 0..usize::MAX, |i, t, k| seen.push((i, t, k)));
        assert_eq!(
            seen,
            vec![(0, rb, SlotKind::Strong), (2, ra, SlotKind::Weak)]
        );
        seen.clear();
        v.scan_slots(ra, 1..3, |i, t, k| seen.push((i, t, k)));
        assert_eq!(seen, vec![(2, ra, SlotKind::Weak)]);
        seen.clear();
        let (from, to) = (5, 2);
        v.scan_slots(ra, from..to, |i, t, k| seen.push((i, t, k)));
        assert!(seen.is_empty());
        assert_eq!(v.objects().collect::<Vec<_>>(), vec![ra, rb]);
        assert_eq!(v.pos(rb), bpos);
        assert_eq!(v.type_id(rb), t);
        assert_eq!(v.slots(ra).len(), 3);
        // ObjRef addresses are the header's address in the arena.
        assert_eq!(ra.word(), v.words().as_ptr() as usize + 8);
    }
}
