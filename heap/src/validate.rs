//! Arena validation: everything a [`HeapView`](crate::HeapView) relies on to
//! scan without per-slot checks, for both layouts and every type kind.

use crate::arena::{
    ArenaFormat, ArenaLayout, TypeKind, COMPRESSED_MAX_WORDS, RESERVED_SLOT_BITS, WEAK_BIT,
};
use crate::error::Problem;
use crate::weak_list::bucket_starts;

/// What an arena is checked against besides its words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArenaSpec<'a> {
    /// The encoding.
    pub format: ArenaFormat,
    /// The number of type names; when non-zero, every type id is below it.
    pub type_count: u64,
    /// The kind byte of each type id (ids past the end: `default_kind`).
    pub kinds: &'a [u8],
    /// The kind of type ids past `kinds` (plain in v2, weak-slots in v1).
    pub default_kind: TypeKind,
    /// The weak-slot section (compressed layout): half-word indices of weak
    /// slots, strictly increasing, as stored (little-endian words).
    pub weak_slots: &'a [u64],
}

impl ArenaSpec<'_> {
    /// The kind of type `type_id`. The kind bytes were checked before.
    #[inline(always)]
    pub(crate) fn kind(&self, type_id: u32) -> TypeKind {
        match self.kinds.get(type_id as usize) {
            Some(&code) => TypeKind::from_code(code).unwrap_or(TypeKind::Plain),
            None => self.default_kind,
        }
    }
}

/// What [`validate_arena`] learnt about a valid arena.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct ArenaSummary {
    /// The number of objects.
    pub objects: u64,
    /// The object-start bitmap: bit `i % 64` of word `i / 64` is set iff an
    /// object's layout word is arena word `i`.
    pub starts: Vec<u64>,
    /// The sum of the objects' runtime sizes (their arena sizes when the
    /// arena records none).
    pub runtime_bytes: u64,
    /// The index of the weak-slot list by arena region
    /// ([`bucket_starts`]; empty without a list).
    pub weak_buckets: Vec<usize>,
}

/// Where a problem was found.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Fault {
    /// At this byte offset from the start of the arena.
    Arena(u64, Problem),
    /// At this entry (0-based) of the weak-slot section.
    WeakSlots(u64, Problem),
}

/// Reads half word `j` (bytes `4j..4j+4`) of little-endian arena words.
#[inline(always)]
fn half(words: &[u64], j: u64) -> u32 {
    let w = u64::from_le(words[(j / 2) as usize]);
    (w >> (32 * (j % 2))) as u32
}

/// Checks that `words` is a well-formed arena in `spec.format`:
///
/// - word 0 is zero, and the arena fits its layout (the address space, or
///   [`COMPRESSED_MAX_WORDS`]);
/// - objects tile the rest exactly; reserved header bits and the compressed
///   layout's padding are zero; type ids are below the type count (when
///   there are type names); reference kinds have a referent slot and
///   ephemeron tables an even slot count;
/// - every slot is null or a correctly encoded reference to an object
///   start; the per-slot weak bit only in weak-slots types; an ephemeron
///   value only with a key;
/// - the weak-slot list (compressed) names non-null slots of weak-slots
///   objects, in increasing order.
///
/// Three passes: the headers (recording every object start in a bitmap, one
/// bit per word), the slots against that bitmap, and the weak-slot list.
pub(crate) fn validate_arena(words: &[u64], spec: &ArenaSpec<'_>) -> Result<ArenaSummary, Fault> {
    let format = spec.format;
    let len = words.len() as u64;
    if len == 0 {
        return Err(Fault::Arena(0, Problem::EmptyArena));
    }
    if len > (isize::MAX as u64) / 8 {
        return Err(Fault::Arena(0, Problem::ArenaTooLarge { words: len }));
    }
    if format.layout == ArenaLayout::Compressed && len > COMPRESSED_MAX_WORDS {
        return Err(Fault::Arena(
            0,
            Problem::CompressedArenaTooLarge { words: len },
        ));
    }
    if words[0] != 0 {
        return Err(Fault::Arena(
            0,
            Problem::ReservedWordNotZero {
                value: u64::from_le(words[0]),
            },
        ));
    }
    let (objects, starts, runtime_bytes) = walk_headers(words, spec)?;
    check_slots(words, spec, &starts)?;
    if !spec.weak_slots.is_empty() {
        check_weak_slots(words, spec)?;
    }
    Ok(ArenaSummary {
        objects,
        starts,
        runtime_bytes,
        weak_buckets: bucket_starts(spec.weak_slots, 2 * len),
    })
}

/// Pass 1: the headers. Returns the object count, the start bitmap and the
/// runtime bytes.
fn walk_headers(words: &[u64], spec: &ArenaSpec<'_>) -> Result<(u64, Vec<u64>, u64), Fault> {
    let format = spec.format;
    let len = words.len() as u64;
    let mut starts = vec![0u64; words.len().div_ceil(64)];
    let mut objects = 0u64;
    let mut runtime_bytes = 0u64;
    let mut at = 1u64;
    while at < len {
        prefetch_ahead(words, at as usize);
        let remaining = len - at;
        // Every header is at least two words (12 bytes rounded up).
        if remaining < 2 {
            return Err(Fault::Arena(
                at * 8,
                Problem::ObjectOverrun {
                    size_words: 2,
                    remaining,
                },
            ));
        }
        let layout = u64::from_le(words[at as usize]);
        let type_id = match format.layout {
            ArenaLayout::Wide => {
                let type_word = u64::from_le(words[at as usize + 1]);
                if type_word >> 32 != 0 {
                    return Err(Fault::Arena(
                        (at + 1) * 8,
                        Problem::ReservedHeaderBits { value: type_word },
                    ));
                }
                type_word as u32
            }
            ArenaLayout::Compressed => half(words, 2 * at + 2),
        };
        if spec.type_count > 0 && u64::from(type_id) >= spec.type_count {
            return Err(Fault::Arena(
                at * 8 + 8,
                Problem::TypeIdOutOfRange {
                    type_id,
                    type_count: spec.type_count,
                },
            ));
        }
        let size = format.object_words(layout);
        if size > remaining {
            return Err(Fault::Arena(
                at * 8,
                Problem::ObjectOverrun {
                    size_words: size,
                    remaining,
                },
            ));
        }
        let slots = layout as u32;
        let kind = spec.kind(type_id);
        if kind.is_reference() && slots == 0 {
            return Err(Fault::Arena(
                at * 8,
                Problem::ReferenceWithoutReferent { type_id, kind },
            ));
        }
        if kind == TypeKind::EphemeronTable && slots % 2 != 0 {
            return Err(Fault::Arena(
                at * 8,
                Problem::OddEphemeronTable { type_id, slots },
            ));
        }
        if format.layout == ArenaLayout::Compressed && slots % 2 == 0 {
            // 3 header halves and an even slot count: one padding half.
            let pad = 2 * at + 3 + u64::from(slots);
            let value = half(words, pad);
            if value != 0 {
                return Err(Fault::Arena(
                    pad * 4,
                    Problem::ReservedNotZero {
                        value: u64::from(value),
                    },
                ));
            }
        }
        runtime_bytes += if format.runtime_sizes {
            layout >> 32
        } else {
            size * 8
        };
        let i = at as usize;
        starts[i / 64] |= 1 << (i % 64);
        objects += 1;
        at += size;
    }
    Ok((objects, starts, runtime_bytes))
}

/// Pass 2: every slot against the start bitmap.
fn check_slots(words: &[u64], spec: &ArenaSpec<'_>, starts: &[u64]) -> Result<(), Fault> {
    let format = spec.format;
    let len = words.len() as u64;
    let arena_bytes = len * 8;
    let mut probes = StartProbes::new(starts);
    let mut at = 1u64;
    while at < len {
        prefetch_ahead(words, at as usize);
        let layout = u64::from_le(words[at as usize]);
        let slots = u64::from(layout as u32);
        let (type_id, first) = match format.layout {
            ArenaLayout::Wide => (u64::from_le(words[at as usize + 1]) as u32, 2 * at + 4),
            ArenaLayout::Compressed => (half(words, 2 * at + 2), 2 * at + 3),
        };
        let kind = spec.kind(type_id);
        let mut key = 0u64;
        for k in 0..slots {
            let (offset, value) = match format.layout {
                ArenaLayout::Wide => {
                    let j = first + 2 * k;
                    let raw = u64::from_le(words[(j / 2) as usize]);
                    if raw != 0 {
                        if let Err(problem) = check_encoding(raw, arena_bytes) {
                            probes.drain()?;
                            return Err(Fault::Arena(j * 4, problem));
                        }
                        if raw & WEAK_BIT != 0 && kind != TypeKind::WeakSlots {
                            probes.drain()?;
                            return Err(Fault::Arena(
                                j * 4,
                                Problem::WeakSlotNotAllowed { type_id, kind },
                            ));
                        }
                    }
                    (j * 4, raw & !WEAK_BIT)
                }
                ArenaLayout::Compressed => {
                    let j = first + k;
                    let raw = u64::from(half(words, j));
                    if raw >= len {
                        probes.drain()?;
                        return Err(Fault::Arena(
                            j * 4,
                            Problem::ReferenceOutOfRange {
                                value: raw * 8,
                                arena_bytes,
                            },
                        ));
                    }
                    (j * 4, raw * 8)
                }
            };
            if kind == TypeKind::EphemeronTable {
                if k % 2 == 0 {
                    key = value;
                } else if key == 0 && value != 0 {
                    probes.drain()?;
                    return Err(Fault::Arena(offset, Problem::EphemeronValueWithoutKey));
                }
            }
            if value != 0 {
                probes.push(offset, value)?;
            }
        }
        at += format.object_words(layout);
    }
    probes.drain()
}

/// Pass 3 (compressed layout): the weak-slot list against the objects.
fn check_weak_slots(words: &[u64], spec: &ArenaSpec<'_>) -> Result<(), Fault> {
    let list = spec.weak_slots;
    let entry = |i: usize| u64::from_le(list[i]);
    if spec.format.layout == ArenaLayout::Wide {
        return Err(Fault::WeakSlots(
            0,
            Problem::WeakSlotsInWideLayout {
                count: list.len() as u64,
            },
        ));
    }
    for i in 1..list.len() {
        if entry(i) <= entry(i - 1) {
            return Err(Fault::WeakSlots(
                i as u64,
                Problem::WeakSlotsNotIncreasing {
                    value: entry(i),
                    previous: entry(i - 1),
                },
            ));
        }
    }
    let len = words.len() as u64;
    let mut next = 0usize;
    let mut at = 1u64;
    while at < len && next < list.len() {
        let layout = u64::from_le(words[at as usize]);
        let first = 2 * at + 3;
        let end = first + u64::from(layout as u32);
        let type_id = half(words, 2 * at + 2);
        let kind = spec.kind(type_id);
        while next < list.len() && entry(next) < end {
            let j = entry(next);
            if j < first || half(words, j) == 0 {
                return Err(Fault::WeakSlots(
                    next as u64,
                    Problem::WeakSlotNotASlot { value: j },
                ));
            }
            if kind != TypeKind::WeakSlots {
                return Err(Fault::WeakSlots(
                    next as u64,
                    Problem::WeakSlotNotAllowed { type_id, kind },
                ));
            }
            next += 1;
        }
        at += spec.format.object_words(layout);
    }
    if next < list.len() {
        return Err(Fault::WeakSlots(
            next as u64,
            Problem::WeakSlotNotASlot { value: entry(next) },
        ));
    }
    Ok(())
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
    starts: &'a [u64],
    /// (slot byte offset, target byte offset) of queued slots; `len` of them
    /// end at `head`.
    ring: [(u64, u64); PROBE_DEPTH],
    head: usize,
    len: usize,
}

impl<'a> StartProbes<'a> {
    fn new(starts: &'a [u64]) -> StartProbes<'a> {
        StartProbes {
            starts,
            ring: [(0, 0); PROBE_DEPTH],
            head: 0,
            len: 0,
        }
    }

    /// Tests a queued slot, whose target is in range.
    #[inline(always)]
    fn test(&self, (offset, value): (u64, u64)) -> Result<(), Fault> {
        let index = (value / 8) as usize;
        if self.starts[index / 64] & (1 << (index % 64)) == 0 {
            return Err(Fault::Arena(offset, Problem::NotAnObjectStart { value }));
        }
        Ok(())
    }

    /// Queues a slot with an in-range target, testing the oldest queued slot
    /// if the queue is full.
    #[inline(always)]
    fn push(&mut self, offset: u64, value: u64) -> Result<(), Fault> {
        let index = (value / 8) as usize;
        stealmark_model::prefetch_read(self.starts[index / 64..].as_ptr().cast());
        if self.len == PROBE_DEPTH {
            self.test(self.ring[self.head])?;
        } else {
            self.len += 1;
        }
        self.ring[self.head] = (offset, value);
        self.head = (self.head + 1) % PROBE_DEPTH;
        Ok(())
    }

    /// Tests every queued slot, oldest first.
    fn drain(&mut self) -> Result<(), Fault> {
        while self.len > 0 {
            let oldest = (self.head + PROBE_DEPTH - self.len) % PROBE_DEPTH;
            self.len -= 1;
            self.test(self.ring[oldest])?;
        }
        Ok(())
    }
}

/// Checks a non-zero wide reference word's tag bits and range, everything
/// but whether it lands on an object start.
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

/// Checks one non-zero reference word (a root or a finalizable entry: a
/// byte offset) against the object-start bitmap of an arena of
/// `arena_bytes` bytes.
#[inline(always)]
pub(crate) fn check_reference(word: u64, arena_bytes: u64, starts: &[u64]) -> Result<(), Problem> {
    check_encoding(word, arena_bytes)?;
    if is_start(starts, word) {
        Ok(())
    } else {
        Err(Problem::NotAnObjectStart { value: word })
    }
}

/// Whether the byte offset `offset` (below the arena's length) is an object
/// start.
#[inline(always)]
pub(crate) fn is_start(starts: &[u64], offset: u64) -> bool {
    let index = (offset / 8) as usize;
    offset % 8 == 0
        && starts
            .get(index / 64)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::ObjectHeader;

    fn spec(format: ArenaFormat, type_count: u64, kinds: &[u8]) -> ArenaSpec<'_> {
        ArenaSpec {
            format,
            type_count,
            kinds,
            default_kind: TypeKind::Plain,
            weak_slots: &[],
        }
    }

    #[test]
    fn validate_catches_each_wide_arena_problem() {
        // Two objects: A (2 slots) at word 1, B (0 slots, 1 payload) at word 5.
        // Type 0 is weak-slots, so A may hold a weak slot.
        let a = ObjectHeader::new(0, 2, 0);
        let b = ObjectHeader::new(1, 0, 1);
        let good = [0, a.layout_word(), 0, 40, 8 | 1, b.layout_word(), 1, 99];
        let kinds = [TypeKind::WeakSlots.code()];
        let s = spec(ArenaFormat::WIDE, 2, &kinds);
        assert_eq!(validate_arena(&good, &s).unwrap().objects, 2);
        let fails = |w: &[u64], s: &ArenaSpec<'_>| match validate_arena(w, s) {
            Err(Fault::Arena(offset, p)) => (offset, p),
            other => panic!("{other:?}"),
        };
        let mut w = good;
        w[3] = 16;
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::NotAnObjectStart { .. })
        ));
        w[3] = 64;
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::ReferenceOutOfRange { .. })
        ));
        w[3] = 42;
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::ReservedSlotBits { .. })
        ));
        w[3] = 1;
        assert!(matches!(fails(&w, &s), (24, Problem::WeakNull)));
        // The first bad slot in arena order is reported, whatever the kind.
        w[3] = 16;
        w[4] = 64;
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::NotAnObjectStart { .. })
        ));
        w[3] = 64;
        w[4] = 16;
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::ReferenceOutOfRange { .. })
        ));
        // A weak bit in a plain type.
        let plain = spec(ArenaFormat::WIDE, 2, &[]);
        assert!(matches!(
            fails(&good, &plain),
            (32, Problem::WeakSlotNotAllowed { .. })
        ));
        assert!(matches!(
            fails(&good, &spec(ArenaFormat::WIDE, 1, &kinds)),
            (48, Problem::TypeIdOutOfRange { .. })
        ));
        assert!(matches!(
            fails(&good[..7], &s),
            (40, Problem::ObjectOverrun { .. })
        ));
        let mut w = good;
        w[0] = 5;
        assert!(matches!(
            fails(&w, &s),
            (0, Problem::ReservedWordNotZero { .. })
        ));
        assert!(matches!(fails(&[], &s), (0, Problem::EmptyArena)));
        assert_eq!(validate_arena(&[0], &s).unwrap().objects, 0);
    }

    #[test]
    fn validate_checks_kinds_and_the_compressed_layout() {
        // Compressed: T (2 slots, table) at word 1 (3 words), U (1 slot,
        // weak-ref) at word 4 (2 words).
        let t = ObjectHeader::new(0, 2, 0);
        let u = ObjectHeader::new(1, 1, 0);
        let word = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
        let good = [
            0,
            t.layout_word(),
            word(0, 4), // type 0, key -> U (word 4)
            word(1, 0), // value -> T (word 1), padding
            u.layout_word(),
            word(1, 1), // type 1, referent -> T
        ];
        let kinds = [TypeKind::EphemeronTable.code(), TypeKind::WeakRef.code()];
        let s = spec(ArenaFormat::COMPRESSED, 2, &kinds);
        let summary = validate_arena(&good, &s).unwrap();
        assert_eq!((summary.objects, summary.runtime_bytes), (2, 40));
        let fails = |w: &[u64], s: &ArenaSpec<'_>| match validate_arena(w, s) {
            Err(Fault::Arena(offset, p)) => (offset, p),
            other => panic!("{other:?}"),
        };
        let mut w = good;
        w[3] = word(1, 7);
        assert!(matches!(
            fails(&w, &s),
            (28, Problem::ReservedNotZero { value: 7 })
        ));
        w[3] = word(6, 0);
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::ReferenceOutOfRange { value: 48, .. })
        ));
        w[3] = word(2, 0);
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::NotAnObjectStart { value: 16 })
        ));
        w[2] = word(0, 0);
        w[3] = word(1, 0);
        assert!(matches!(
            fails(&w, &s),
            (24, Problem::EphemeronValueWithoutKey)
        ));
        let odd = [0, ObjectHeader::new(0, 1, 0).layout_word(), 0];
        assert!(matches!(
            fails(&odd, &s),
            (8, Problem::OddEphemeronTable { .. })
        ));
        let empty_ref = [0, ObjectHeader::new(1, 0, 0).layout_word(), 1];
        assert!(matches!(
            fails(&empty_ref, &s),
            (8, Problem::ReferenceWithoutReferent { .. })
        ));
        // The weak-slot list: only non-null slots of weak-slots objects.
        let kinds = [TypeKind::WeakSlots.code(), TypeKind::WeakRef.code()];
        let list = [5u64, 6];
        let s = ArenaSpec {
            weak_slots: &list,
            ..spec(ArenaFormat::COMPRESSED, 2, &kinds)
        };
        validate_arena(&good, &s).unwrap();
        // The padding, between objects, a weak-ref's slot, not increasing.
        let cases: [(&[u64], u64); 4] = [(&[7], 0), (&[5, 8], 1), (&[11], 0), (&[5, 5], 1)];
        for (entries, at) in cases {
            let s = ArenaSpec {
                weak_slots: entries,
                ..s
            };
            assert!(matches!(validate_arena(&good, &s), Err(Fault::WeakSlots(i, _)) if i == at));
        }
        let wide = spec(ArenaFormat::WIDE, 0, &[]);
        let list = [4u64];
        let wide = ArenaSpec {
            weak_slots: &list,
            ..wide
        };
        assert!(matches!(
            validate_arena(&[0], &wide),
            Err(Fault::WeakSlots(
                0,
                Problem::WeakSlotsInWideLayout { count: 1 }
            ))
        ));
    }
}
