//! [`ObjRef`]: the engine's name for an object.

use std::num::NonZeroUsize;

/// A reference to an object: a non-null word that is a multiple of
/// [`ObjRef::ALIGN`].
///
/// For a runtime this is usually the object's address; for a memory-mapped
/// snapshot it is the address of the object's header inside the mapping; for
/// a heap whose objects are numbered it is [`ObjRef::from_index`]. The low
/// three bits are always zero, so the engine may use them as tags on its mark
/// stacks: a runtime never sees a tagged word.
///
/// ```
/// use stealmark_model::ObjRef;
///
/// let r = ObjRef::from_index(41);
/// assert_eq!(r.index(), 41);
/// assert_eq!(ObjRef::from_word(r.word()), Some(r));
/// assert_eq!(ObjRef::from_word(12), None); // not a multiple of 8
/// assert_eq!(ObjRef::from_word(0), None); // null
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(transparent)]
pub struct ObjRef(NonZeroUsize);

impl ObjRef {
    /// Every object reference is a multiple of this many bytes.
    pub const ALIGN: usize = 8;

    /// The largest index [`ObjRef::from_index`] accepts.
    pub const MAX_INDEX: usize = usize::MAX / Self::ALIGN - 1;

    /// Wraps a word. Returns `None` for zero or a word that is not a
    /// multiple of [`ObjRef::ALIGN`].
    #[inline]
    pub const fn from_word(word: usize) -> Option<ObjRef> {
        if word % Self::ALIGN != 0 {
            return None;
        }
        match NonZeroUsize::new(word) {
            Some(w) => Some(ObjRef(w)),
            None => None,
        }
    }

    /// Wraps a non-zero word that the caller knows is a multiple of
    /// [`ObjRef::ALIGN`] (an aligned base plus an aligned offset), without
    /// the check of [`ObjRef::from_word`].
    ///
    /// Debug builds panic on an unaligned word. In release builds the
    /// reference is kept as given; the engine then mistakes it for one of its
    /// tagged words and panics or marks wrongly, but it never causes
    /// undefined behaviour.
    #[inline(always)]
    pub const fn from_aligned(word: NonZeroUsize) -> ObjRef {
        debug_assert!(word.get() % Self::ALIGN == 0, "ObjRef word not aligned");
        ObjRef(word)
    }

    /// The reference for object number `index`, for heaps whose objects are
    /// numbered `0..n` rather than addressed: the word `(index + 1) * 8`.
    ///
    /// # Panics
    ///
    /// If `index > ObjRef::MAX_INDEX`.
    #[inline]
    pub const fn from_index(index: usize) -> ObjRef {
        assert!(index <= Self::MAX_INDEX, "ObjRef index out of range");
        match NonZeroUsize::new((index + 1) * Self::ALIGN) {
            Some(w) => ObjRef(w),
            None => unreachable!(),
        }
    }

    /// The object number of a reference made by [`ObjRef::from_index`].
    #[inline]
    pub const fn index(self) -> usize {
        self.0.get() / Self::ALIGN - 1
    }

    /// The reference as a word.
    #[inline]
    pub const fn word(self) -> usize {
        self.0.get()
    }

    /// The reference as an address, for models whose references are addresses.
    #[inline]
    pub fn addr(self) -> *const u8 {
        self.0.get() as *const u8
    }
}
