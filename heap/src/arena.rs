//! The object arena: the word layout shared by in-memory heaps and snapshots.
//!
//! An arena is an array of little-endian 64-bit words laid out like a
//! runtime heap, in one of two layouts ([`ArenaLayout`]); see
//! `docs/snapshot-format.md` for the byte-level specification:
//!
//! ```text
//! word 0              reserved, always 0 (so that offset 0 can mean null)
//!
//! wide layout (8-byte references):
//! word h              layout word: slot count S (bits 0..32), payload words P (bits 32..64)
//! word h+1            type word:   type id (bits 0..32), bits 32..64 reserved (0)
//! words h+2..h+2+S    reference slots: byte offset of the target (bit 0: weak, format v1
//!                     and weak-slots types only)
//! then P words        payload (opaque to the marker)
//!
//! compressed layout (4-byte references, HotSpot's compressed oops):
//! word h              layout word, as above
//! bytes 8..12 of h    type id (u32)
//! then S u32 slots    word index of the target (byte offset >> 3), 0 for null
//! then 0 or 4 bytes   zero padding to a word boundary
//! then P words        payload
//! ```
//!
//! In a file that records runtime sizes ([`ArenaFormat::runtime_sizes`]),
//! bits 32..64 of the layout word hold the object's size in the runtime, in
//! bytes, instead of `P`, and the object occupies as many words as that
//! size, but never fewer than its header and slots.
//!
//! What a slot means (strong, weak, soft, phantom, ephemeron) is a property
//! of the object's type: its [`TypeKind`]. The loader and the builder
//! validate all of that; every heap handed out by this crate went through
//! it.

use std::fmt;
use std::num::NonZeroU64;

/// Bit 0 of a wide slot: set for a weak reference (format v1, and objects
/// whose type is [`TypeKind::WeakSlots`]).
pub const WEAK_BIT: u64 = 1;

/// Bits 1 and 2 of a wide slot: reserved, always zero.
pub const RESERVED_SLOT_BITS: u64 = 0b110;

/// The largest arena, in words, that the compressed layout addresses: a
/// compressed reference is a 32-bit word index, so 2³² words (32 GiB).
pub const COMPRESSED_MAX_WORDS: u64 = 1 << 32;

/// The position of an object in an arena: the byte offset of its layout word
/// from the start of the arena.
///
/// Always a non-zero multiple of 8 (word 0 of an arena is reserved).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Pos(NonZeroU64);

impl Pos {
    /// The position of the first object of every arena (word 1).
    pub const FIRST: Pos = Pos(NonZeroU64::MIN.saturating_add(7));

    /// The position at byte offset `offset`, if it is a non-zero multiple of 8.
    #[inline]
    pub const fn from_offset(offset: u64) -> Option<Pos> {
        if offset % 8 != 0 {
            return None;
        }
        match NonZeroU64::new(offset) {
            Some(o) => Some(Pos(o)),
            None => None,
        }
    }

    /// The position of the object whose layout word is word `index` of the
    /// arena, if `index` is not 0 and the offset does not overflow.
    #[inline]
    pub const fn from_word_index(index: u64) -> Option<Pos> {
        match index.checked_mul(8) {
            Some(offset) => Pos::from_offset(offset),
            None => None,
        }
    }

    /// The byte offset from the start of the arena.
    #[inline]
    pub const fn offset(self) -> u64 {
        self.0.get()
    }

    /// The word index of the object's layout word.
    #[inline]
    pub const fn word_index(self) -> u64 {
        self.0.get() / 8
    }

    /// The position `words` words further on, if it does not overflow.
    #[inline]
    pub const fn add_words(self, words: u64) -> Option<Pos> {
        match words.checked_mul(8) {
            Some(bytes) => match self.0.get().checked_add(bytes) {
                Some(offset) => Pos::from_offset(offset),
                None => None,
            },
            None => None,
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.offset())
    }
}

/// A reference slot as a producer emits it: null, or a position plus a
/// per-slot weak flag.
///
/// The weak flag is for runtimes whose weak references are per slot (V8's
/// weak edges): an object with a weak slot must have a type of kind
/// [`TypeKind::Plain`] (which the sink turns into [`TypeKind::WeakSlots`]) or
/// [`TypeKind::WeakSlots`]. Soft, phantom and ephemeron slots, and the
/// referents of reference objects, come from the type's [`TypeKind`].
/// [`Slot::raw`] is the wide layout's encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Slot(u64);

impl Slot {
    /// The null reference.
    pub const NULL: Slot = Slot(0);

    /// A reference to the object at `target` (strong unless the type's kind
    /// says otherwise).
    #[inline]
    pub const fn strong(target: Pos) -> Slot {
        Slot(target.offset())
    }

    /// A per-slot weak reference to the object at `target`.
    #[inline]
    pub const fn weak(target: Pos) -> Slot {
        Slot(target.offset() | WEAK_BIT)
    }

    /// A strong or weak reference, by flag.
    #[inline]
    pub const fn new(target: Pos, weak: bool) -> Slot {
        if weak {
            Slot::weak(target)
        } else {
            Slot::strong(target)
        }
    }

    /// The slot as a wide-layout slot word (before little-endian conversion).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// Decodes a wide-layout slot word. Returns `None` for a word that is not
    /// a valid slot encoding (reserved bits set, or a weak null).
    #[inline]
    pub const fn from_raw(word: u64) -> Option<Slot> {
        if word & RESERVED_SLOT_BITS != 0 || word == WEAK_BIT {
            None
        } else {
            Some(Slot(word))
        }
    }

    /// Whether the slot is null.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// Whether the slot carries the per-slot weak flag.
    #[inline]
    pub const fn is_weak(self) -> bool {
        self.0 & WEAK_BIT != 0
    }

    /// The target, or `None` for null.
    #[inline]
    pub const fn target(self) -> Option<Pos> {
        Pos::from_offset(self.0 & !WEAK_BIT)
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target() {
            None => f.write_str("null"),
            Some(p) if self.is_weak() => write!(f, "weak {p}"),
            Some(p) => write!(f, "{p}"),
        }
    }
}

/// How wide an arena's references are.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArenaLayout {
    /// 8-byte slots holding byte offsets, a two-word header (format v1's
    /// only layout).
    #[default]
    Wide,
    /// 4-byte slots holding word indices (byte offset >> 3, up to 32 GiB of
    /// arena, as HotSpot's compressed oops), a 12-byte header.
    Compressed,
}

impl ArenaLayout {
    /// Both layouts.
    pub const ALL: [ArenaLayout; 2] = [ArenaLayout::Wide, ArenaLayout::Compressed];

    /// The layout's name: `wide` or `compressed`.
    pub const fn name(self) -> &'static str {
        match self {
            ArenaLayout::Wide => "wide",
            ArenaLayout::Compressed => "compressed",
        }
    }

    /// The header's size in 4-byte units (half words).
    #[inline(always)]
    pub(crate) const fn header_halves(self) -> u64 {
        match self {
            ArenaLayout::Wide => 4,
            ArenaLayout::Compressed => 3,
        }
    }

    /// A slot's size in 4-byte units.
    #[inline(always)]
    pub(crate) const fn slot_halves(self) -> u64 {
        match self {
            ArenaLayout::Wide => 2,
            ArenaLayout::Compressed => 1,
        }
    }

    /// The words an object's header and `slots` slots take, padding
    /// included.
    #[inline(always)]
    pub const fn fixed_words(self, slots: u32) -> u64 {
        (self.header_halves() + slots as u64 * self.slot_halves()).div_ceil(2)
    }
}

impl fmt::Display for ArenaLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an arena is encoded: its [`ArenaLayout`], and whether layout words
/// hold runtime sizes instead of payload lengths.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ArenaFormat {
    /// The slot width.
    pub layout: ArenaLayout,
    /// Whether every object records its size in the runtime (V8
    /// `self_size`, an HPROF shallow size), in bytes, in bits 32..64 of its
    /// layout word; the object then occupies `max(ceil(size / 8), header and
    /// slot words)` words.
    pub runtime_sizes: bool,
}

impl ArenaFormat {
    /// The wide layout without runtime sizes (format v1's encoding).
    pub const WIDE: ArenaFormat = ArenaFormat {
        layout: ArenaLayout::Wide,
        runtime_sizes: false,
    };

    /// The compressed layout without runtime sizes.
    pub const COMPRESSED: ArenaFormat = ArenaFormat {
        layout: ArenaLayout::Compressed,
        runtime_sizes: false,
    };

    /// The format with `layout`, without runtime sizes.
    pub const fn new(layout: ArenaLayout) -> ArenaFormat {
        ArenaFormat {
            layout,
            runtime_sizes: false,
        }
    }

    /// The same format, recording runtime sizes.
    pub const fn with_runtime_sizes(self) -> ArenaFormat {
        ArenaFormat {
            layout: self.layout,
            runtime_sizes: true,
        }
    }

    /// Whether an arena of `arena_words` words (the reserved word 0
    /// included) can be encoded in this format: up to
    /// [`COMPRESSED_MAX_WORDS`] for the compressed layout, up to the address
    /// space (`isize::MAX` bytes) for the wide one.
    pub const fn fits(self, arena_words: u64) -> bool {
        match self.layout {
            ArenaLayout::Wide => arena_words <= isize::MAX as u64 / 8,
            ArenaLayout::Compressed => arena_words <= COMPRESSED_MAX_WORDS,
        }
    }

    /// The words of an object whose layout word is `layout_word`. Never
    /// overflows.
    #[inline(always)]
    pub(crate) const fn object_words(self, layout_word: u64) -> u64 {
        let fixed = self.layout.fixed_words(layout_word as u32);
        let high = layout_word >> 32;
        if self.runtime_sizes {
            let sized = high.div_ceil(8);
            if sized > fixed {
                sized
            } else {
                fixed
            }
        } else {
            fixed + high
        }
    }
}

/// What the slots of objects of a type mean: the reference kind is a
/// property of the type, as in real runtimes (Java's `Reference`
/// subclasses, V8's `EphemeronHashTable` map). Stored as one byte per type
/// in a snapshot's type-kind section.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum TypeKind {
    /// Every slot is strong.
    #[default]
    Plain = 0,
    /// Slot 0 is a weak referent (`java.lang.ref.WeakReference`); the other
    /// slots are strong. An object of this kind has at least one slot.
    WeakRef = 1,
    /// Slot 0 is a soft referent (`SoftReference`); the others are strong.
    SoftRef = 2,
    /// Slot 0 is a phantom referent (`PhantomReference`); the others are
    /// strong.
    PhantomRef = 3,
    /// Slots come in (key, value) pairs, a WeakMap's entries: the key is
    /// weak, the value an ephemeron of that key. The slot count is even, and
    /// a null key has a null value.
    EphemeronTable = 4,
    /// Any slot may be weak, marked per slot (V8's weak edges, format v1):
    /// bit 0 of a wide slot, or the weak-slot section for the compressed
    /// layout. The others are strong.
    WeakSlots = 5,
}

impl TypeKind {
    /// Every kind, by code.
    pub const ALL: [TypeKind; 6] = [
        TypeKind::Plain,
        TypeKind::WeakRef,
        TypeKind::SoftRef,
        TypeKind::PhantomRef,
        TypeKind::EphemeronTable,
        TypeKind::WeakSlots,
    ];

    /// The kind's byte in the type-kind section.
    #[inline(always)]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The kind with byte `code`, if there is one.
    #[inline]
    pub const fn from_code(code: u8) -> Option<TypeKind> {
        if (code as usize) < TypeKind::ALL.len() {
            Some(TypeKind::ALL[code as usize])
        } else {
            None
        }
    }

    /// The kind's name in the format document and the tools.
    pub const fn name(self) -> &'static str {
        match self {
            TypeKind::Plain => "plain",
            TypeKind::WeakRef => "weak-ref",
            TypeKind::SoftRef => "soft-ref",
            TypeKind::PhantomRef => "phantom-ref",
            TypeKind::EphemeronTable => "ephemeron-table",
            TypeKind::WeakSlots => "weak-slots",
        }
    }

    /// Whether slot 0 is a referent and the kind needs at least one slot.
    #[inline]
    pub const fn is_reference(self) -> bool {
        matches!(
            self,
            TypeKind::WeakRef | TypeKind::SoftRef | TypeKind::PhantomRef
        )
    }
}

impl fmt::Display for TypeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The fixed part of an object: its type, slot count and size.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ObjectHeader {
    /// The type id (an index into the heap's type-name table, if it has one).
    pub type_id: u32,
    /// The number of reference slots.
    pub slots: u32,
    /// The number of payload words after the slots (and their padding).
    pub payload_words: u32,
    /// The object's size in the runtime, in bytes, for an arena that records
    /// runtime sizes; `None` otherwise.
    pub runtime_size: Option<u32>,
}

impl ObjectHeader {
    /// A header with the given fields, for an arena without runtime sizes.
    #[inline]
    pub const fn new(type_id: u32, slots: u32, payload_words: u32) -> ObjectHeader {
        ObjectHeader {
            type_id,
            slots,
            payload_words,
            runtime_size: None,
        }
    }

    /// A header for an arena that records runtime sizes: the object is
    /// `runtime_size` bytes in the runtime and occupies as many words in
    /// `layout`, but never fewer than its header and slots; the payload is
    /// what is left.
    #[inline]
    pub const fn sized(
        type_id: u32,
        slots: u32,
        runtime_size: u32,
        layout: ArenaLayout,
    ) -> ObjectHeader {
        let fixed = layout.fixed_words(slots);
        let sized = (runtime_size as u64).div_ceil(8);
        ObjectHeader {
            type_id,
            slots,
            // At most ceil((2^32 - 1) / 8) words: fits in u32.
            payload_words: sized.saturating_sub(fixed) as u32,
            runtime_size: Some(runtime_size),
        }
    }

    /// The object's size in words in `layout`, header included. Never
    /// overflows.
    #[inline]
    pub const fn size_words(self, layout: ArenaLayout) -> u64 {
        layout.fixed_words(self.slots) + self.payload_words as u64
    }

    /// The layout word (before little-endian conversion): the slot count,
    /// and the runtime size if there is one, else the payload words.
    #[inline]
    pub const fn layout_word(self) -> u64 {
        let high = match self.runtime_size {
            Some(size) => size,
            None => self.payload_words,
        };
        self.slots as u64 | (high as u64) << 32
    }

    /// Decodes a header from its layout word and type id, in `format`.
    #[inline]
    pub(crate) const fn decode(format: ArenaFormat, layout_word: u64, type_id: u32) -> Self {
        let slots = layout_word as u32;
        let fixed = format.layout.fixed_words(slots);
        if format.runtime_sizes {
            ObjectHeader {
                type_id,
                slots,
                payload_words: (format.object_words(layout_word) - fixed) as u32,
                runtime_size: Some((layout_word >> 32) as u32),
            }
        } else {
            ObjectHeader::new(type_id, slots, (layout_word >> 32) as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_encoding_round_trips() {
        let p = Pos::from_offset(24).unwrap();
        assert_eq!(Slot::strong(p).target(), Some(p));
        assert!(!Slot::strong(p).is_weak());
        assert!(Slot::weak(p).is_weak());
        assert_eq!(Slot::weak(p).target(), Some(p));
        assert_eq!(Slot::NULL.target(), None);
        assert_eq!(Slot::from_raw(1), None);
        assert_eq!(Slot::from_raw(26), None);
        assert_eq!(Slot::from_raw(25), Some(Slot::weak(p)));
        assert_eq!(Pos::FIRST.offset(), 8);
        assert_eq!(Pos::from_offset(0), None);
        assert_eq!(Pos::from_offset(12), None);
    }

    #[test]
    fn header_sizes_in_both_layouts() {
        let h = ObjectHeader::new(7, 3, u32::MAX);
        assert_eq!(h.size_words(ArenaLayout::Wide), 2 + 3 + u32::MAX as u64);
        assert_eq!(
            ObjectHeader::decode(ArenaFormat::WIDE, h.layout_word(), 7),
            h
        );
        // Compressed: 12 header bytes and 4 bytes a slot, padded to a word.
        for (slots, words) in [(0, 2), (1, 2), (2, 3), (3, 3), (4, 4), (5, 4)] {
            assert_eq!(ArenaLayout::Compressed.fixed_words(slots), words);
        }
        let c = ObjectHeader::new(1, 4, 2);
        assert_eq!(c.size_words(ArenaLayout::Compressed), 6);
        assert_eq!(
            ArenaFormat::COMPRESSED.object_words(c.layout_word()),
            c.size_words(ArenaLayout::Compressed)
        );
        // Runtime sizes: as large as the size says, never smaller than the
        // header and slots.
        for layout in ArenaLayout::ALL {
            let format = ArenaFormat::new(layout).with_runtime_sizes();
            for (slots, size) in [(2, 64), (2, 0), (9, 20), (0, 13), (1, u32::MAX)] {
                let s = ObjectHeader::sized(3, slots, size, layout);
                let words = format.object_words(s.layout_word());
                assert_eq!(words, s.size_words(layout), "{layout} {slots} {size}");
                assert_eq!(
                    words,
                    layout.fixed_words(slots).max(u64::from(size).div_ceil(8))
                );
                assert_eq!(ObjectHeader::decode(format, s.layout_word(), 3), s);
            }
        }
    }

    #[test]
    fn kinds_round_trip_and_fit() {
        for k in TypeKind::ALL {
            assert_eq!(TypeKind::from_code(k.code()), Some(k));
        }
        assert_eq!(TypeKind::from_code(6), None);
        assert!(ArenaFormat::COMPRESSED.fits(COMPRESSED_MAX_WORDS));
        assert!(!ArenaFormat::COMPRESSED.fits(COMPRESSED_MAX_WORDS + 1));
        assert!(ArenaFormat::WIDE.fits(COMPRESSED_MAX_WORDS + 1));
    }
}
