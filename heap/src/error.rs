//! Typed errors: what is wrong with a snapshot or a built heap, and where.

use std::fmt;
use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::arena::TypeKind;

/// The part of a snapshot file an error is about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Section {
    /// The whole file (its length).
    File,
    /// The 64-byte file header.
    Header,
    /// The section table that follows the header.
    SectionTable,
    /// The roots section.
    Roots,
    /// The object arena section.
    Arena,
    /// The type-name table section.
    TypeNames,
    /// The type-kind section (format v2).
    TypeKinds,
    /// The finalizable-object section (format v2).
    Finalizable,
    /// The weak-slot section of a compressed arena (format v2).
    WeakSlots,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::File => "file",
            Section::Header => "header",
            Section::SectionTable => "section table",
            Section::Roots => "roots section",
            Section::Arena => "arena section",
            Section::TypeNames => "type-name section",
            Section::TypeKinds => "type-kind section",
            Section::Finalizable => "finalizable section",
            Section::WeakSlots => "weak-slot section",
        })
    }
}

/// What is wrong at some place of a snapshot or an arena.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[non_exhaustive]
pub enum Problem {
    /// The data ends before a structure it must hold.
    #[error("truncated: {needed} bytes needed, {available} available")]
    Truncated {
        /// Bytes the structure needs from its offset.
        needed: u64,
        /// Bytes actually there from that offset.
        available: u64,
    },
    /// The file does not start with the snapshot magic.
    #[error("bad magic {found:02x?}, not a stealmark snapshot")]
    BadMagic {
        /// The first eight bytes found.
        found: [u8; 8],
    },
    /// A format version this reader does not know.
    #[error("unsupported version {found} (this reader reads versions 1 to {supported})")]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The newest version this reader reads.
        supported: u32,
    },
    /// A reserved field or flag bit is not zero.
    #[error("reserved field is {value:#x}, must be 0")]
    ReservedNotZero {
        /// The value found.
        value: u64,
    },
    /// The length recorded in the header differs from the actual length.
    #[error("header records {recorded} bytes, file has {actual}")]
    LengthMismatch {
        /// The length in the header.
        recorded: u64,
        /// The actual length.
        actual: u64,
    },
    /// A length or offset that must be a multiple of 8 is not.
    #[error("{what} {value} is not a multiple of 8")]
    Misaligned {
        /// What the value is.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// A count whose byte size overflows, or that is out of its range.
    #[error("{what} {value} is out of range")]
    CountOutOfRange {
        /// The count's name.
        what: &'static str,
        /// The count.
        value: u64,
    },
    /// A section-table entry with an unknown kind.
    #[error("unknown section kind {kind}")]
    UnknownSectionKind {
        /// The kind found.
        kind: u32,
    },
    /// A section kind that appears twice in the table.
    #[error("section kind {kind} appears twice")]
    DuplicateSection {
        /// The repeated kind.
        kind: u32,
    },
    /// A required section is missing from the table.
    #[error("required {section} is missing")]
    MissingSection {
        /// The missing section.
        section: Section,
    },
    /// A section's extent lies (partly) outside the file.
    #[error("extends past the end of the file ({offset} + {length} > {file_len})")]
    OutOfFile {
        /// The section's offset.
        offset: u64,
        /// The section's length.
        length: u64,
        /// The file length.
        file_len: u64,
    },
    /// Sections do not tile the file after the table: a gap or an overlap.
    #[error(
        "expected to start at byte {expected}, starts at {found} (sections must be contiguous)"
    )]
    NotContiguous {
        /// Where the section should start.
        expected: u64,
        /// Where it starts.
        found: u64,
    },
    /// A section's length disagrees with the count in the header.
    #[error("length {length} does not match {what} {count}")]
    CountMismatch {
        /// The count's name.
        what: &'static str,
        /// The count in the header.
        count: u64,
        /// The section length in bytes.
        length: u64,
    },
    /// The arena has no words at all (it needs at least the reserved word).
    #[error("the arena is empty (word 0 is required)")]
    EmptyArena,
    /// The arena does not fit in the address space.
    #[error("the arena has {words} words, more than the address space holds")]
    ArenaTooLarge {
        /// The arena's word count.
        words: u64,
    },
    /// Arena word 0 is not zero.
    #[error("reserved arena word 0 is {value:#x}, must be 0")]
    ReservedWordNotZero {
        /// The value found.
        value: u64,
    },
    /// An object's reserved header bits are set.
    #[error("type word {value:#x} has reserved bits 32..64 set")]
    ReservedHeaderBits {
        /// The type word.
        value: u64,
    },
    /// An object's type id is not in the type-name table.
    #[error("type id {type_id} is not below the type count {type_count}")]
    TypeIdOutOfRange {
        /// The type id.
        type_id: u32,
        /// The number of type names.
        type_count: u64,
    },
    /// An object extends past the end of the arena.
    #[error("object of {size_words} words overruns the arena ({remaining} words left)")]
    ObjectOverrun {
        /// The object's size in words.
        size_words: u64,
        /// Words left in the arena from the object's start.
        remaining: u64,
    },
    /// The number of objects differs from the header's count.
    #[error("header records {recorded} objects, the arena holds {found}")]
    ObjectCountMismatch {
        /// The count in the header.
        recorded: u64,
        /// The objects found.
        found: u64,
    },
    /// A reference with reserved bits 1 or 2 set.
    #[error("reference {value:#x} has reserved bits 1..3 set")]
    ReservedSlotBits {
        /// The reference word.
        value: u64,
    },
    /// A weak reference with a null target (only `0` means null).
    #[error("weak null reference (null must be 0)")]
    WeakNull,
    /// A reference past the end of the arena.
    #[error("reference {value:#x} is out of range (arena is {arena_bytes} bytes)")]
    ReferenceOutOfRange {
        /// The reference word.
        value: u64,
        /// The arena size in bytes.
        arena_bytes: u64,
    },
    /// A reference into the arena that is not at an object's layout word.
    #[error("reference {value:#x} does not point at an object start")]
    NotAnObjectStart {
        /// The reference word.
        value: u64,
    },
    /// A root that is null or weak.
    #[error("root {value:#x} must be a strong non-null reference")]
    BadRoot {
        /// The root word.
        value: u64,
    },
    /// A finalizable entry that is null or weak.
    #[error("finalizable entry {value:#x} must be a strong non-null reference")]
    BadFinalizable {
        /// The entry.
        value: u64,
    },
    /// A compressed arena larger than 32-bit word indices address.
    #[error("the compressed arena has {words} words, more than 2^32 (32 GiB)")]
    CompressedArenaTooLarge {
        /// The arena's word count.
        words: u64,
    },
    /// A byte of the type-kind section that is no kind.
    #[error("type kind {value} is not a kind (0 plain .. 5 weak-slots)")]
    BadTypeKind {
        /// The byte.
        value: u8,
    },
    /// A non-plain kind for a type id past the type-name table.
    #[error("type id {type_id} has a kind but is not below the type count {type_count}")]
    KindPastTypeCount {
        /// The type id.
        type_id: u64,
        /// The number of type names.
        type_count: u64,
    },
    /// An object of a reference kind without the referent slot 0.
    #[error("object of type {type_id} ({kind}) has no slots, so no referent")]
    ReferenceWithoutReferent {
        /// The object's type id.
        type_id: u32,
        /// The type's kind.
        kind: TypeKind,
    },
    /// An ephemeron table whose slots do not come in (key, value) pairs.
    #[error("ephemeron table of type {type_id} has an odd slot count {slots}")]
    OddEphemeronTable {
        /// The object's type id.
        type_id: u32,
        /// Its slot count.
        slots: u32,
    },
    /// An ephemeron table entry with a value but a null key.
    #[error("ephemeron value without a key (the key slot before it is null)")]
    EphemeronValueWithoutKey,
    /// A per-slot weak reference in an object whose type is not weak-slots.
    #[error("per-slot weak reference in an object of type {type_id}, whose kind is {kind}, not weak-slots")]
    WeakSlotNotAllowed {
        /// The object's type id.
        type_id: u32,
        /// The type's kind.
        kind: TypeKind,
    },
    /// A weak-slot section in a wide-layout file (wide slots carry the bit).
    #[error(
        "{count} weak-slot entries in a wide-layout file (wide slots mark weakness themselves)"
    )]
    WeakSlotsInWideLayout {
        /// The number of entries.
        count: u64,
    },
    /// Weak-slot entries out of order or repeated.
    #[error("weak-slot entry {value} does not follow {previous} (entries strictly increase)")]
    WeakSlotsNotIncreasing {
        /// The entry.
        value: u64,
        /// The entry before it.
        previous: u64,
    },
    /// A weak-slot entry that is not a non-null slot of an object.
    #[error("weak-slot entry {value} is not a non-null slot (a 4-byte unit index into the arena)")]
    WeakSlotNotASlot {
        /// The entry.
        value: u64,
    },
    /// A type-name offset that decreases or points past the name bytes.
    #[error("name offset {value} is out of order or past the name bytes ({limit})")]
    BadNameOffset {
        /// The offset.
        value: u64,
        /// The limit it had to respect.
        limit: u64,
    },
    /// Type names that are not UTF-8, or split inside a character.
    #[error("type names are not valid UTF-8")]
    InvalidUtf8,
    /// The stored checksum does not match the file's contents.
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the contents.
        computed: u32,
    },
}

/// A snapshot that could not be read or is not valid.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The file could not be opened, measured or mapped.
    #[error("cannot read snapshot {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The contents are not a valid snapshot.
    #[error("invalid snapshot: {section} at byte {offset}: {problem}")]
    Invalid {
        /// The section that is wrong.
        section: Section,
        /// The absolute byte offset in the file of the wrong field or word.
        offset: u64,
        /// What is wrong.
        problem: Problem,
    },
}

impl SnapshotError {
    /// The problem, for an invalid snapshot.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            SnapshotError::Invalid { problem, .. } => Some(problem),
            SnapshotError::Io { .. } => None,
        }
    }

    /// The section and byte offset, for an invalid snapshot.
    pub fn location(&self) -> Option<(Section, u64)> {
        match self {
            SnapshotError::Invalid {
                section, offset, ..
            } => Some((*section, *offset)),
            SnapshotError::Io { .. } => None,
        }
    }
}

/// A heap under construction that is not valid, or a builder call that
/// breaks the layout.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The arena failed validation at the given byte offset.
    #[error("invalid heap at arena byte {offset}: {problem}")]
    Invalid {
        /// The arena byte offset of the wrong word.
        offset: u64,
        /// What is wrong.
        problem: Problem,
    },
    /// A call that does not fit the layout or the object being emitted.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// The arena would exceed the address space, or the 32 GiB of the
    /// compressed layout.
    #[error("the heap is too large for its layout ({words} words)")]
    TooLarge {
        /// The arena size requested, in words.
        words: u64,
    },
    /// A root or finalizable position that is not an object of the heap.
    #[error("{what} {pos} is not an object of the heap: {problem}")]
    BadPosition {
        /// `root` or `finalizable object`.
        what: &'static str,
        /// The position.
        pos: crate::arena::Pos,
        /// What is wrong.
        problem: Problem,
    },
}

/// The streaming writer could not write, or was used out of order.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The output failed.
    #[error("cannot write snapshot: {0}")]
    Io(#[from] io::Error),
    /// A call that does not fit the layout or the object being written.
    #[error(transparent)]
    Sink(#[from] SinkError),
}

/// A [`HeapSink`](crate::HeapSink) call that does not fit the layout or the
/// object being emitted: what [`HeapBuilder`](crate::HeapBuilder)
/// ([`BuildError::Sink`]) and [`SnapshotWriter`](crate::SnapshotWriter)
/// ([`WriteError::Sink`]) both refuse.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[non_exhaustive]
pub enum SinkError {
    /// A slot or object call that does not fit the object being emitted,
    /// or calls out of order.
    #[error("{0}")]
    Misuse(String),
    /// A reference beyond the 32 GiB a compressed slot addresses.
    #[error("position {pos} is beyond the 32 GiB a compressed reference addresses")]
    TooFar {
        /// The position.
        pos: crate::arena::Pos,
    },
    /// A per-slot weak reference in objects of a type whose kind is not
    /// plain or weak-slots.
    #[error("per-slot weak reference in an object of type {type_id}, whose kind is {kind}")]
    WeakSlotNotAllowed {
        /// The type id.
        type_id: u32,
        /// Its kind.
        kind: TypeKind,
    },
}

/// Why [`HeapView::store_slot`](crate::HeapView::store_slot) refused a store.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The view is over read-only memory (a snapshot opened with
    /// [`Snapshot::open`](crate::Snapshot::open) or `from_bytes`).
    #[error("the heap is read-only (open the snapshot with Snapshot::open_copy_on_write)")]
    ReadOnly,
    /// The holder is not an object of this view.
    #[error("holder {0:#x} is not an object of this heap")]
    NotAnObject(usize),
    /// The slot index is past the holder's slots.
    #[error("slot {slot} of an object with {slots} slots")]
    NoSuchSlot {
        /// The index given.
        slot: usize,
        /// The holder's slot count.
        slots: usize,
    },
    /// The slot is not a strong slot of a plain or reference type (soft,
    /// weak and phantom referents, ephemeron tables and weak-slots types
    /// are not stored to).
    #[error("slot {slot} of an object of kind {kind} is not a strong slot")]
    NotAStrongSlot {
        /// The slot index.
        slot: usize,
        /// The holder's type kind.
        kind: TypeKind,
    },
    /// The target is not an object of this view.
    #[error("target {0:#x} is not an object of this heap")]
    TargetNotAnObject(usize),
}
