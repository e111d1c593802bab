//! The mark stack's word ([`Word`]): an object, or a large array's token,
//! with its tags. A leaf of `worker`: it imports none of its sibling
//! modules, which all share it.

use stealmark_model::ObjRef;

/// A word of a worker's mark stack (private stack, deque, overflow
/// storage), of its prefetch FIFO and of its batch of objects to count:
/// an object, or the token of a large array being scanned in chunks
/// (`crate::arrays`).
///
/// Its tags live in the low bits that an object reference always has
/// clear ([`ObjRef::ALIGN`] is 8):
///
/// - bit 0 ([`Word::TOKEN`]) makes the word a token, whose other bits
///   name the array's descriptor;
/// - bit 1 ([`Word::MAY_COPY`]), on an object only, says that the object
///   may have another copy, delivered to another worker, so that counting
///   it live takes a claim (`counting`). It is set only in the prefetch
///   FIFO and the count batch, never on the stack: a word goes back onto
///   the stack without it.
/// - bit 2 ([`Word::LEAF`]), on an object only, says that the object has no
///   reference slots ([`SlotKind::StrongLeaf`](stealmark_model::SlotKind)):
///   it is marked, never pushed or scanned. It is set only in the edge
///   FIFO, between a slot's visit and its target's mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Word(usize);

impl Word {
    /// The tag of a token.
    const TOKEN: usize = 1;
    /// The tag of an object that may have another copy.
    const MAY_COPY: usize = 2;
    /// The tag of an edge to a leaf.
    const LEAF: usize = 4;
    /// Every tag bit: the bits an object reference has clear.
    const TAGS: usize = ObjRef::ALIGN - 1;
    /// How far a descriptor index is shifted in a token.
    const DESCRIPTOR_SHIFT: u32 = ObjRef::ALIGN.trailing_zeros();

    /// The word of object `obj`, untagged.
    #[inline(always)]
    pub(crate) const fn object(obj: ObjRef) -> Word {
        Word(obj.word())
    }

    /// The token of the large array whose descriptor is `descriptor`.
    #[inline]
    pub(crate) const fn token(descriptor: usize) -> Word {
        Word((descriptor << Self::DESCRIPTOR_SHIFT) | Self::TOKEN)
    }

    /// The word as the containers hold it (deques, private stack, FIFOs).
    #[inline(always)]
    pub(crate) const fn raw(self) -> usize {
        self.0
    }

    /// The word that a container held as `raw`.
    #[inline(always)]
    pub(crate) const fn from_raw(raw: usize) -> Word {
        Word(raw)
    }

    /// Whether the word is a large array's token.
    #[inline(always)]
    pub(crate) const fn is_token(self) -> bool {
        self.0 & Self::TOKEN != 0
    }

    /// A token's descriptor index.
    #[inline]
    pub(crate) fn descriptor(self) -> usize {
        debug_assert!(self.is_token());
        self.0 >> Self::DESCRIPTOR_SHIFT
    }

    /// The object a word that is not a token names, whatever its tags.
    #[inline(always)]
    pub(crate) fn obj(self) -> ObjRef {
        debug_assert!(!self.is_token(), "a token names no object");
        match ObjRef::from_word(self.0 & !Self::TAGS) {
            Some(o) => o,
            None => unreachable!("an object's word is never zero"),
        }
    }

    /// The word tagged [`Word::MAY_COPY`] if `may_copy`.
    #[inline(always)]
    pub(crate) fn tagged_if(self, may_copy: bool) -> Word {
        Word(self.0 | (usize::from(may_copy) * Self::MAY_COPY))
    }

    /// The word tagged [`Word::MAY_COPY`].
    #[inline]
    pub(crate) fn tagged(self) -> Word {
        Word(self.0 | Self::MAY_COPY)
    }

    /// Whether the word is tagged [`Word::MAY_COPY`].
    #[inline(always)]
    pub(crate) const fn may_copy(self) -> bool {
        self.0 & Self::MAY_COPY != 0
    }

    /// The word without the tag [`Word::MAY_COPY`].
    #[inline(always)]
    pub(crate) const fn untagged(self) -> Word {
        Word(self.0 & !Self::MAY_COPY)
    }

    /// The word tagged [`Word::LEAF`] if `leaf`.
    #[inline(always)]
    pub(crate) fn leaf_if(self, leaf: bool) -> Word {
        Word(self.0 | (usize::from(leaf) * Self::LEAF))
    }

    /// Whether the word is tagged [`Word::LEAF`].
    #[inline(always)]
    pub(crate) const fn is_leaf(self) -> bool {
        self.0 & Self::LEAF != 0
    }

    /// Whether any of the `raw` words is tagged [`Word::MAY_COPY`].
    #[inline(always)]
    pub(crate) fn any_may_copy(raw: &[usize]) -> bool {
        raw.iter().fold(0, |tags, &w| tags | w) & Self::MAY_COPY != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        let o = ObjRef::from_index(5);
        let w = Word::object(o);
        assert!(!w.is_token() && !w.may_copy());
        assert_eq!(w.obj(), o);
        let t = w.tagged();
        assert!(t.may_copy() && !t.is_token());
        assert_eq!(t.obj(), o);
        assert_eq!(t.untagged(), w);
        assert_eq!(w.tagged_if(false), w);
        assert_eq!(w.tagged_if(true), t);
        assert!(Word::any_may_copy(&[w.raw(), t.raw()]));
        assert!(!Word::any_may_copy(&[w.raw()]));
        let k = Word::token(4095);
        assert!(k.is_token() && !k.may_copy());
        assert_eq!(k.descriptor(), 4095);
        assert_eq!(Word::from_raw(k.raw()), k);
        let l = w.leaf_if(true);
        assert!(l.is_leaf() && !l.may_copy() && !l.is_token());
        assert_eq!(l.obj(), o);
        assert_eq!(w.leaf_if(false), w);
        assert!(!w.is_leaf() && !t.is_leaf());
    }
}
