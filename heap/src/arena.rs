//! The object arena: the word layout shared by in-memory heaps and snapshots.
//!
//! An arena is an array of little-endian 64-bit words laid out like a
//! runtime heap (see `docs/snapshot-format.md` for the byte-level
//! specification):
//!
//! ```text
//! word 0            reserved, always 0 (so that offset 0 can mean null)
//! word h            layout word: slot count S (bits 0..32), payload words P (bits 32..64)
//! word h+1          type word:   type id (bits 0..32), bits 32..64 reserved (0)
//! words h+2..h+2+S  reference slots
//! then P words      payload (opaque to the marker)
//! ```
//!
//! Objects follow each other with no gaps; an object is `2 + S + P` words.
//! A slot is `0` (null) or the byte offset of the target's layout word, with
//! bit 0 set for a weak reference. Bits 1 and 2 of a slot are always zero.
//!
//! The loader and the builder validate all of that; every heap handed out by this crate
//! went through it.

use std::fmt;
use std::num::NonZeroU64;

use crate::error::Problem;

/// Words in an object header (the layout word and the type word).
pub const HEADER_WORDS: u64 = 2;

/// Bit 0 of a slot: set for a weak reference.
pub const WEAK_BIT: u64 = 1;

/// Bits 1 and 2 of a slot: reserved, always zero.
pub const RESERVED_SLOT_BITS: u64 = 0b110;

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

/// A reference slot as stored in the arena: null, or a position plus the
/// weak bit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Slot(u64);

impl Slot {
    /// The null reference.
    pub const NULL: Slot = Slot(0);

    /// A strong reference to the object at `target`.
    #[inline]
    pub const fn strong(target: Pos) -> Slot {
        Slot(target.offset())
    }

    /// A weak reference to the object at `target`.
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

    /// The slot word exactly as stored (before little-endian conversion).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// Decodes a stored slot word. Returns `None` for a word that is not a
    /// valid slot encoding (reserved bits set, or a weak null).
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

    /// Whether the slot is a weak reference.
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

/// The fixed part of an object: its type, slot count and payload size.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ObjectHeader {
    /// The type id (an index into the heap's type-name table, if it has one).
    pub type_id: u32,
    /// The number of reference slots.
    pub slots: u32,
    /// The number of payload words after the slots.
    pub payload_words: u32,
}

impl ObjectHeader {
    /// A header with the given fields.
    #[inline]
    pub const fn new(type_id: u32, slots: u32, payload_words: u32) -> ObjectHeader {
        ObjectHeader {
            type_id,
            slots,
            payload_words,
        }
    }

    /// The object's size in words, header included. Never overflows.
    #[inline]
    pub const fn size_words(self) -> u64 {
        HEADER_WORDS + self.slots as u64 + self.payload_words as u64
    }

    /// The layout word (before little-endian conversion).
    #[inline]
    pub const fn layout_word(self) -> u64 {
        self.slots as u64 | (self.payload_words as u64) << 32
    }

    /// The type word (before little-endian conversion).
    #[inline]
    pub const fn type_word(self) -> u64 {
        self.type_id as u64
    }

    /// Decodes a layout word and a type word. Returns `None` if the type
    /// word's reserved bits are set.
    #[inline]
    pub const fn decode(layout: u64, type_word: u64) -> Option<ObjectHeader> {
        if type_word >> 32 != 0 {
            return None;
        }
        Some(ObjectHeader {
            type_id: type_word as u32,
            slots: layout as u32,
            payload_words: (layout >> 32) as u32,
        })
    }
}

/// The slot count stored in a layout word.
#[inline(always)]
pub(crate) const fn layout_slots(layout: u64) -> u64 {
    layout & 0xffff_ffff
}

/// The object size in words stored in a layout word.
#[inline(always)]
pub(crate) const fn layout_size_words(layout: u64) -> u64 {
    HEADER_WORDS + (layout & 0xffff_ffff) + (layout >> 32)
}

/// What [`validate_arena`] learnt about a valid arena.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct ArenaSummary {
    /// The number of objects.
    pub objects: u64,
    /// The object-start bitmap: bit `i % 64` of word `i / 64` is set iff an
    /// object's layout word is arena word `i`. For checking roots.
    pub starts: Vec<u64>,
}

/// An arena problem: the word index it was found at, and what is wrong.
pub(crate) type ArenaFault = (u64, Problem);

/// Checks that `words` is a well-formed arena:
///
/// - word 0 is zero, and the arena is at most `isize::MAX` bytes;
/// - objects tile the rest exactly, each header's reserved bits are zero and
///   (when `type_count > 0`) each type id is below `type_count`;
/// - every slot is null or a correctly tagged reference to an object start.
///
/// Two passes: the first walks the headers and records every object start in
/// a bitmap (one bit per word); the second checks every slot against it.
/// Errors carry the word index of the offending word.
pub(crate) fn validate_arena(words: &[u64], type_count: u64) -> Result<ArenaSummary, ArenaFault> {
    let len = words.len() as u64;
    if len == 0 {
        return Err((0, Problem::EmptyArena));
    }
    if len > (isize::MAX as u64) / 8 {
        return Err((0, Problem::ArenaTooLarge { words: len }));
    }
    if words[0] != 0 {
        return Err((
            0,
            Problem::ReservedWordNotZero {
                value: u64::from_le(words[0]),
            },
        ));
    }
    let mut starts = vec![0u64; words.len().div_ceil(64)];
    let mut objects = 0u64;
    let mut at = 1u64;
    while at < len {
        prefetch_ahead(words, at as usize);
        let remaining = len - at;
        if remaining < HEADER_WORDS {
            return Err((
                at,
                Problem::ObjectOverrun {
                    size_words: HEADER_WORDS,
                    remaining,
                },
            ));
        }
        let i = at as usize;
        let layout = u64::from_le(words[i]);
        let type_word = u64::from_le(words[i + 1]);
        if type_word >> 32 != 0 {
            return Err((at + 1, Problem::ReservedHeaderBits { value: type_word }));
        }
        if type_count > 0 && type_word >= type_count {
            return Err((
                at + 1,
                Problem::TypeIdOutOfRange {
                    type_id: type_word as u32,
                    type_count,
                },
            ));
        }
        let size = layout_size_words(layout);
        if size > remaining {
            return Err((
                at,
                Problem::ObjectOverrun {
                    size_words: size,
                    remaining,
                },
            ));
        }
        starts[i / 64] |= 1 << (i % 64);
        objects += 1;
        at += size;
    }
    let arena_bytes = len * 8;
    let mut probes = StartProbes::new(words, &starts);
    let mut at = 1usize;
    while at < words.len() {
        prefetch_ahead(words, at);
        let layout = u64::from_le(words[at]);
        let first = at + HEADER_WORDS as usize;
        let slots = &words[first..first + layout_slots(layout) as usize];
        for (k, &raw) in slots.iter().enumerate() {
            let slot = u64::from_le(raw);
            if slot != 0 {
                let slot_at = first + k;
                if let Err(problem) = check_encoding(slot, arena_bytes) {
                    // Report the earliest bad slot: those queued come first.
                    probes.drain()?;
                    return Err((slot_at as u64, problem));
                }
                probes.push(slot_at, slot)?;
            }
        }
        at += layout_size_words(layout) as usize;
    }
    probes.drain()?;
    Ok(ArenaSummary { objects, starts })
}

/// How far ahead of the object being checked the arena walks prefetch, in
/// words. Each header's address depends on the previous header's contents, a
/// chain of dependent loads that the hardware prefetcher does not always
/// keep ahead of (it stops at page boundaries).
const WALK_AHEAD: usize = 512;

/// Prefetches the arena `WALK_AHEAD` words past word `at`.
#[inline(always)]
fn prefetch_ahead(words: &[u64], at: usize) {
    stealmark_model::prefetch_read(words.as_ptr().wrapping_add(at + WALK_AHEAD).cast());
}

/// Slots in flight between the prefetch of their object-start bit and its
/// test. References are random, so each test is a likely cache miss; issuing
/// the prefetch this many slots ahead overlaps the misses (about 2.5 times
/// faster on random heaps than testing each bit as the slot is read).
const PROBE_DEPTH: usize = 64;

/// A FIFO of slots whose target's object-start bit has been prefetched but
/// not yet tested. Slots are tested in the order they were pushed, so the
/// first failure is the first bad slot in arena order.
struct StartProbes<'a> {
    words: &'a [u64],
    starts: &'a [u64],
    /// Word indices of queued slots; `len` of them end at `head`.
    ring: [usize; PROBE_DEPTH],
    head: usize,
    len: usize,
}

impl<'a> StartProbes<'a> {
    fn new(words: &'a [u64], starts: &'a [u64]) -> StartProbes<'a> {
        StartProbes {
            words,
            starts,
            ring: [0; PROBE_DEPTH],
            head: 0,
            len: 0,
        }
    }

    /// Tests the queued slot at `slot_at`, whose encoding was checked.
    #[inline(always)]
    fn test(&self, slot_at: usize) -> Result<(), ArenaFault> {
        let value = u64::from_le(self.words[slot_at]);
        let index = (value / 8) as usize;
        if self.starts[index / 64] & (1 << (index % 64)) == 0 {
            return Err((slot_at as u64, Problem::NotAnObjectStart { value }));
        }
        Ok(())
    }

    /// Queues a slot with a correctly encoded, in-range reference, testing
    /// the oldest queued slot if the queue is full.
    #[inline(always)]
    fn push(&mut self, slot_at: usize, value: u64) -> Result<(), ArenaFault> {
        let index = (value / 8) as usize;
        stealmark_model::prefetch_read(self.starts[index / 64..].as_ptr().cast());
        if self.len == PROBE_DEPTH {
            self.test(self.ring[self.head])?;
        } else {
            self.len += 1;
        }
        self.ring[self.head] = slot_at;
        self.head = (self.head + 1) % PROBE_DEPTH;
        Ok(())
    }

    /// Tests every queued slot, oldest first.
    fn drain(&mut self) -> Result<(), ArenaFault> {
        while self.len > 0 {
            let oldest = (self.head + PROBE_DEPTH - self.len) % PROBE_DEPTH;
            self.len -= 1;
            self.test(self.ring[oldest])?;
        }
        Ok(())
    }
}

/// Checks a non-zero reference word's tag bits and range, everything but
/// whether it lands on an object start.
#[inline(always)]
fn check_encoding(word: u64, arena_bytes: u64) -> Result<(), Problem> {
    if word & RESERVED_SLOT_BITS != 0 {
        return Err(Problem::ReservedSlotBits { value: word });
    }
    let offset = word & !WEAK_BIT;
    if offset == 0 {
        return Err(Problem::WeakNull);
    }
    if offset >= arena_bytes {
        return Err(Problem::ReferenceOutOfRange {
            value: word,
            arena_bytes,
        });
    }
    Ok(())
}

/// Checks one non-zero reference word (a slot or a root) against the
/// object-start bitmap of an arena of `arena_bytes` bytes.
#[inline(always)]
pub(crate) fn check_reference(word: u64, arena_bytes: u64, starts: &[u64]) -> Result<(), Problem> {
    check_encoding(word, arena_bytes)?;
    let index = (word / 8) as usize;
    if starts[index / 64] & (1 << (index % 64)) == 0 {
        return Err(Problem::NotAnObjectStart { value: word });
    }
    Ok(())
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
    fn header_round_trips() {
        let h = ObjectHeader::new(7, 3, u32::MAX);
        assert_eq!(
            ObjectHeader::decode(h.layout_word(), h.type_word()),
            Some(h)
        );
        assert_eq!(h.size_words(), 2 + 3 + u32::MAX as u64);
        assert_eq!(layout_size_words(h.layout_word()), h.size_words());
        assert_eq!(ObjectHeader::decode(0, 1 << 32), None);
    }

    #[test]
    fn validate_catches_each_arena_problem() {
        // Two objects: A (2 slots) at word 1, B (0 slots, 1 payload) at word 5.
        let a = ObjectHeader::new(0, 2, 0);
        let b = ObjectHeader::new(1, 0, 1);
        let good = [
            0,
            a.layout_word(),
            a.type_word(),
            40,
            8 | 1,
            b.layout_word(),
            b.type_word(),
            99,
        ];
        assert_eq!(validate_arena(&good, 2).unwrap().objects, 2);
        let mut w = good;
        w[3] = 16;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((3, Problem::NotAnObjectStart { .. }))
        ));
        w[3] = 64;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((3, Problem::ReferenceOutOfRange { .. }))
        ));
        w[3] = 42;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((3, Problem::ReservedSlotBits { .. }))
        ));
        w[3] = 1;
        assert!(matches!(validate_arena(&w, 2), Err((3, Problem::WeakNull))));
        // The first bad slot in arena order is reported, whatever the kind.
        w[3] = 16;
        w[4] = 64;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((3, Problem::NotAnObjectStart { .. }))
        ));
        w[3] = 64;
        w[4] = 16;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((3, Problem::ReferenceOutOfRange { .. }))
        ));
        assert!(matches!(
            validate_arena(&good, 1),
            Err((6, Problem::TypeIdOutOfRange { .. }))
        ));
        assert!(matches!(
            validate_arena(&good[..7], 2),
            Err((5, Problem::ObjectOverrun { .. }))
        ));
        let mut w = good;
        w[0] = 5;
        assert!(matches!(
            validate_arena(&w, 2),
            Err((0, Problem::ReservedWordNotZero { .. }))
        ));
        assert!(matches!(
            validate_arena(&[], 0),
            Err((0, Problem::EmptyArena))
        ));
        assert_eq!(validate_arena(&[0], 0).unwrap().objects, 0);
    }
}
