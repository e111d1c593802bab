//! Snapshot files: the validating loader ([`Snapshot`]) and the streaming
//! writer ([`SnapshotWriter`]).
//!
//! The format is specified byte for byte in `docs/snapshot-format.md`.

pub mod format;
mod writer;

use std::fmt;
use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use memmap2::{MmapOptions, MmapRaw};

use self::format::{
    field, file_checksum, last_kind, Header, ENTRY_LEN, FLAGS_V2, FLAG_COMPRESSED,
    FLAG_RUNTIME_SIZES, HEADER_LEN, KIND_ARENA, KIND_FINALIZABLE, KIND_ROOTS, KIND_TYPE_KINDS,
    KIND_TYPE_NAMES, KIND_WEAK_SLOTS, MAGIC, VERSION, VERSION_1,
};
use crate::arena::{ArenaFormat, ArenaLayout, TypeKind, WEAK_BIT};
use crate::error::{Problem, Section, SnapshotError};
use crate::graph::HeapGraph;
use crate::validate::{check_reference, validate_arena, ArenaSpec, Fault};
use crate::view::{HeapView, ViewParts};
use stealmark_model::ObjRef;

pub use self::writer::{write_heap, Progress, SnapshotWriter, WriteSummary};

/// The memory a snapshot lives in.
enum Storage {
    /// A file mapping: read-only, or private copy-on-write (`writable`).
    Mapped { map: MmapRaw, writable: bool },
    /// An owned, 8-aligned copy (from [`Snapshot::from_bytes`]), never
    /// stored to.
    Owned(Box<[AtomicU64]>),
}

impl Storage {
    /// The start of the memory.
    fn ptr(&self) -> NonNull<u8> {
        let p = match self {
            Storage::Mapped { map, .. } => map.as_mut_ptr(),
            Storage::Owned(words) => words.as_ptr().cast::<u8>().cast_mut(),
        };
        NonNull::new(p).unwrap_or(NonNull::dangling())
    }

    fn writable(&self) -> bool {
        matches!(self, Storage::Mapped { writable: true, .. })
    }
}

/// A validated snapshot: the object arena in place (memory-mapped, no copy),
/// the roots, the finalizable objects, the type names and kinds. Reads
/// format versions 1 and 2.
///
/// [`Snapshot::open`] checks everything memory safety and the
/// [`crate::ObjectModel`] contract depend on before handing out the heap:
///
/// - the magic, the version, the flags and reserved fields;
/// - the file length, the section table, every section's bounds and 8-byte
///   alignment, and that the sections tile the file without gap or overlap;
/// - every count against its section's length, with no integer overflow;
/// - that objects tile the arena exactly and every object lies within it;
/// - that every slot, root and finalizable entry is null (slots only) or
///   points at an object start, correctly encoded for the layout;
/// - type ids below the type count, type names in UTF-8, type kinds known
///   and consistent with their objects (referents, ephemeron pairs,
///   per-slot weak marks only where the kind allows them);
/// - the CRC-32 checksum of the whole file.
///
/// After that, [`HeapGraph::view`] scans objects with no per-slot checks.
/// The file must not be modified while it is mapped (the usual condition of
/// memory-mapped files): the loader validates once.
///
/// ```
/// use stealmark_heap::{generate_heap, mark_sequential, write_heap, GenConfig, HeapGraph, Shape, Snapshot};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("tree.smh");
/// let g = generate_heap(&GenConfig::new(Shape::BinaryTree, 1000)).unwrap();
/// write_heap(&g.heap, &path).unwrap();
/// let snap = Snapshot::open(&path).unwrap();
/// assert_eq!(mark_sequential(&snap.view(), snap.roots()).objects, 1000);
/// ```
pub struct Snapshot {
    /// The file in memory ([`Snapshot::ptr`] is its first byte).
    storage: Storage,
    len: usize,
    header: Header,
    arena: Range<usize>,
    roots: Vec<ObjRef>,
    finalizable: Vec<ObjRef>,
    /// Byte offset of the name-offset array, and the byte range of the names.
    name_offsets: usize,
    names: Range<usize>,
    kinds: Range<usize>,
    weak_slots: Range<usize>,
    starts: Vec<u64>,
    /// The weak-slot list's index by arena region.
    weak_buckets: Vec<usize>,
    runtime_bytes: u64,
}

// GC worker threads share a snapshot: it is `Send` and `Sync` because its
// storage is (the mapping, or the boxed atomics) and it keeps no pointer.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Snapshot>();
};

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("mapped", &self.is_mapped())
            .field("writable", &self.storage.writable())
            .field("header", &self.header)
            .finish()
    }
}

impl Snapshot {
    /// Maps the file at `path` read-only and validates it.
    pub fn open(path: impl AsRef<Path>) -> Result<Snapshot, SnapshotError> {
        Snapshot::open_mapped(path.as_ref(), false)
    }

    /// Maps the file at `path` privately, copy-on-write, and validates it:
    /// its views are writable ([`HeapView::store_slot`]), and what is
    /// stored goes to private copies of the touched pages, never to the
    /// file. For a mutator that runs while GC workers scan. (The mapping is
    /// not pre-faulted: pre-faulting a writable private mapping copies every
    /// page.)
    pub fn open_copy_on_write(path: impl AsRef<Path>) -> Result<Snapshot, SnapshotError> {
        Snapshot::open_mapped(path.as_ref(), true)
    }

    fn open_mapped(path: &Path, writable: bool) -> Result<Snapshot, SnapshotError> {
        let io = |source| SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < HEADER_LEN {
            // Too short to map usefully (and an empty file cannot be mapped).
            let bytes = std::fs::read(path).map_err(io)?;
            return Snapshot::from_bytes(&bytes);
        }
        let map = if writable {
            // SAFETY: a private mapping: stores go to private page copies,
            // never to the file. The file must not be modified while mapped;
            // that is the documented condition of `Snapshot` (validation
            // happens once, here).
            MmapRaw::from(unsafe { MmapOptions::new().map_copy(&file) }.map_err(io)?)
        } else {
            // SAFETY: the mapping is read-only and private to this process;
            // the same condition on the file as above.
            MmapRaw::from(unsafe { MmapOptions::new().populate().map(&file) }.map_err(io)?)
        };
        let len = map.len();
        Snapshot::validate(Storage::Mapped { map, writable }, len)
    }

    /// Validates a snapshot held in memory (copied into an 8-aligned buffer
    /// first). The same checks as [`Snapshot::open`]; for tests, fuzzing
    /// and snapshots that do not come from a file. Its views are read-only.
    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
        let words: Box<[AtomicU64]> = bytes
            .chunks(8)
            .map(|chunk| {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                AtomicU64::new(u64::from_ne_bytes(b))
            })
            .collect();
        Snapshot::validate(Storage::Owned(words), bytes.len())
    }

    /// The decoded file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The whole file, unless the snapshot is writable
    /// ([`Snapshot::open_copy_on_write`]): then a mutator may be storing to
    /// the arena, and no plain reference to it may exist.
    pub fn bytes(&self) -> Option<&[u8]> {
        if self.storage.writable() {
            return None;
        }
        // SAFETY: `len` bytes from `ptr` are the storage, which lives as long
        // as `self`; nothing stores to it (it is not writable), so a shared
        // byte view of it is sound beside the views' atomic loads.
        Some(unsafe { std::slice::from_raw_parts(self.ptr().as_ptr(), self.len) })
    }

    /// Bytes `range` of a section that is never stored to (not the arena).
    fn section(&self, range: Range<usize>) -> &[u8] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: the range lies inside the storage (checked above), which
        // lives as long as `self`; only the arena is ever stored to, and
        // callers pass other sections.
        unsafe { std::slice::from_raw_parts(self.ptr().as_ptr().add(range.start), range.len()) }
    }

    /// The file's first byte in memory. The snapshot reads the sections
    /// other than the arena through it, and hands the arena to views as
    /// atomics; it never makes a reference to the whole file of a writable
    /// mapping. Derived from the storage at each use, never kept: a pointer
    /// kept from before the storage moved into the snapshot would be
    /// invalidated by the move of its `Box` (Stacked Borrows treats a
    /// moved `Box` as a unique reference).
    fn ptr(&self) -> NonNull<u8> {
        self.storage.ptr()
    }

    /// Whether the snapshot is memory-mapped (rather than copied).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    /// The byte range of the arena section in the file.
    pub fn arena_range(&self) -> Range<usize> {
        self.arena.clone()
    }

    fn validate(storage: Storage, len: usize) -> Result<Snapshot, SnapshotError> {
        let ptr = storage.ptr();
        // SAFETY: `len` bytes from `ptr` are the storage's initialised memory,
        // owned by this function until the snapshot is built: no view exists
        // yet, so nothing else reads or writes it while this borrow lives.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) };
        let parsed = parse(bytes)?;
        let Parsed {
            header,
            arena,
            roots: roots_range,
            finalizable: finalizable_range,
            name_offsets,
            names,
            kinds,
            weak_slots,
        } = parsed;
        let words = u64s(bytes, &arena);
        let format = format_of(&header);
        let kind_bytes = &bytes[kinds.clone()];
        check_kinds(kind_bytes, header.type_count, kinds.start as u64)?;
        let weak_list = u64s(bytes, &weak_slots);
        let spec = ArenaSpec {
            format,
            type_count: header.type_count,
            kinds: kind_bytes,
            default_kind: if header.version == VERSION_1 {
                TypeKind::WeakSlots
            } else {
                TypeKind::Plain
            },
            weak_slots: weak_list,
        };
        let summary = validate_arena(words, &spec).map_err(|fault| match fault {
            Fault::Arena(offset, problem) => {
                invalid(Section::Arena, arena.start as u64 + offset, problem)
            }
            Fault::WeakSlots(i, problem) => {
                invalid(Section::WeakSlots, weak_slots.start as u64 + 8 * i, problem)
            }
        })?;
        if summary.objects != header.object_count {
            return Err(invalid(
                Section::Header,
                field::OBJECT_COUNT,
                Problem::ObjectCountMismatch {
                    recorded: header.object_count,
                    found: summary.objects,
                },
            ));
        }
        let base = ptr.as_ptr() as usize + arena.start;
        let arena_bytes = words.len() as u64 * 8;
        let references = |range: &Range<usize>, section: Section| {
            let mut refs = Vec::with_capacity(range.len() / 8);
            for at in range.clone().step_by(8) {
                let word = read_u64(bytes, at);
                let offset = at as u64;
                if word == 0 || word & WEAK_BIT != 0 {
                    let problem = match section {
                        Section::Roots => Problem::BadRoot { value: word },
                        _ => Problem::BadFinalizable { value: word },
                    };
                    return Err(invalid(section, offset, problem));
                }
                check_reference(word, arena_bytes, &summary.starts)
                    .map_err(|p| invalid(section, offset, p))?;
                refs.push(ObjRef::from_word(base + word as usize).expect("validated reference"));
            }
            Ok(refs)
        };
        let roots = references(&roots_range, Section::Roots)?;
        let finalizable = references(&finalizable_range, Section::Finalizable)?;
        let computed = file_checksum(bytes);
        if computed != header.checksum && !cfg!(fuzzing) {
            return Err(invalid(
                Section::Header,
                field::CHECKSUM,
                Problem::ChecksumMismatch {
                    stored: header.checksum,
                    computed,
                },
            ));
        }
        Ok(Snapshot {
            storage,
            len,
            header,
            arena,
            roots,
            finalizable,
            name_offsets,
            names,
            kinds,
            weak_slots,
            starts: summary.starts,
            weak_buckets: summary.weak_buckets,
            runtime_bytes: summary.runtime_bytes,
        })
    }
}

/// The arena encoding a header announces.
fn format_of(header: &Header) -> ArenaFormat {
    ArenaFormat {
        layout: if header.flags & FLAG_COMPRESSED != 0 {
            ArenaLayout::Compressed
        } else {
            ArenaLayout::Wide
        },
        runtime_sizes: header.flags & FLAG_RUNTIME_SIZES != 0,
    }
}

impl HeapGraph for Snapshot {
    fn view(&self) -> HeapView<'_> {
        let words = self.arena.len() / 8;
        // SAFETY: the arena section lies inside the storage, which lives as
        // long as `self`; its offset is a multiple of 8 from an 8-aligned (page-
        // or box-aligned) start, so the words are aligned `AtomicU64`s
        // (`AtomicU64` has the size and alignment of `u64`). From now on the
        // arena is only accessed atomically (views), or read while nothing
        // stores to it (`bytes` of read-only storage).
        let arena = unsafe {
            std::slice::from_raw_parts(
                self.ptr()
                    .as_ptr()
                    .add(self.arena.start)
                    .cast::<AtomicU64>(),
                words,
            )
        };
        HeapView::new_validated(ViewParts {
            words: arena,
            format: format_of(&self.header),
            kinds: self.section(self.kinds.clone()),
            default_kind: if self.header.version == VERSION_1 {
                TypeKind::WeakSlots
            } else {
                TypeKind::Plain
            },
            weak_slots: aligned_u64s(self.section(self.weak_slots.clone())),
            weak_buckets: &self.weak_buckets,
            starts: &self.starts,
            type_count: self.header.type_count as usize,
            objects: self.header.object_count,
            runtime_bytes: self.runtime_bytes,
            writable: self.storage.writable(),
        })
    }

    fn roots(&self) -> &[ObjRef] {
        &self.roots
    }

    fn finalizable(&self) -> &[ObjRef] {
        &self.finalizable
    }

    fn type_count(&self) -> usize {
        self.header.type_count as usize
    }

    fn type_name(&self, type_id: u32) -> Option<&str> {
        if u64::from(type_id) >= self.header.type_count {
            return None;
        }
        let offsets = self.section(self.name_offsets..self.names.start);
        let at = type_id as usize * 8;
        let start = read_u64(offsets, at) as usize;
        let end = read_u64(offsets, at + 8) as usize;
        let names = self.section(self.names.clone());
        // Validated at open: offsets in order, in range, on char boundaries.
        std::str::from_utf8(names.get(start..end)?).ok()
    }
}

/// A section of 8-byte words as `u64`s (little-endian values, as stored).
fn u64s<'a>(bytes: &'a [u8], range: &Range<usize>) -> &'a [u64] {
    aligned_u64s(&bytes[range.clone()])
}

/// Bytes at an 8-aligned address, a multiple of 8 long, as `u64`s.
fn aligned_u64s(section: &[u8]) -> &[u64] {
    // SAFETY: every bit pattern is a valid `u64`; `align_to` only yields the
    // aligned middle part. The storage is 8-aligned (page-aligned mapping or
    // a box of `AtomicU64`) and `parse` checked that section offsets and
    // lengths are multiples of 8, so prefix and suffix are empty (asserted
    // below).
    let (prefix, words, suffix) = unsafe { section.align_to::<u64>() };
    assert!(
        prefix.is_empty() && suffix.is_empty(),
        "sections are 8-aligned"
    );
    words
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn invalid(section: Section, offset: u64, problem: Problem) -> SnapshotError {
    SnapshotError::Invalid {
        section,
        offset,
        problem,
    }
}

/// The layout `parse` found: byte ranges of the sections (empty ranges
/// for absent ones).
struct Parsed {
    header: Header,
    arena: Range<usize>,
    roots: Range<usize>,
    finalizable: Range<usize>,
    name_offsets: usize,
    names: Range<usize>,
    kinds: Range<usize>,
    weak_slots: Range<usize>,
}

fn section_of(kind: u32) -> Section {
    match kind {
        KIND_ROOTS => Section::Roots,
        KIND_ARENA => Section::Arena,
        KIND_TYPE_NAMES => Section::TypeNames,
        KIND_TYPE_KINDS => Section::TypeKinds,
        KIND_FINALIZABLE => Section::Finalizable,
        KIND_WEAK_SLOTS => Section::WeakSlots,
        _ => Section::SectionTable,
    }
}

/// Checks the type-kind bytes: known kinds, and none for a type id past the
/// type names (when there are names). `at` is the section's file offset.
fn check_kinds(kinds: &[u8], type_count: u64, at: u64) -> Result<(), SnapshotError> {
    if type_count > 0 && kinds.len() as u64 > type_count.div_ceil(8) * 8 {
        return Err(invalid(
            Section::Header,
            field::TYPE_COUNT,
            Problem::CountMismatch {
                what: "type count (type kinds, padded to 8)",
                count: type_count,
                length: kinds.len() as u64,
            },
        ));
    }
    for (i, &value) in kinds.iter().enumerate() {
        let offset = at + i as u64;
        if TypeKind::from_code(value).is_none() {
            return Err(invalid(
                Section::TypeKinds,
                offset,
                Problem::BadTypeKind { value },
            ));
        }
        if type_count > 0 && i as u64 >= type_count && value != 0 {
            return Err(invalid(
                Section::TypeKinds,
                offset,
                Problem::KindPastTypeCount {
                    type_id: i as u64,
                    type_count,
                },
            ));
        }
    }
    Ok(())
}

/// Checks the header, the section table and the type-name section, and
/// locates the sections. Everything but the type kinds, the arena contents,
/// the roots, the finalizable objects and the checksum.
fn parse(bytes: &[u8]) -> Result<Parsed, SnapshotError> {
    let len = bytes.len() as u64;
    if len >= 8 && bytes[..8] != MAGIC {
        let found = bytes[..8].try_into().expect("8 bytes");
        return Err(invalid(
            Section::Header,
            field::MAGIC,
            Problem::BadMagic { found },
        ));
    }
    if len < HEADER_LEN {
        return Err(invalid(
            Section::Header,
            0,
            Problem::Truncated {
                needed: HEADER_LEN,
                available: len,
            },
        ));
    }
    let u32_at = |f: u64| read_u32(bytes, f as usize);
    let u64_at = |f: u64| read_u64(bytes, f as usize);
    let version = u32_at(field::VERSION);
    if version != VERSION && version != VERSION_1 {
        return Err(invalid(
            Section::Header,
            field::VERSION,
            Problem::UnsupportedVersion {
                found: version,
                supported: VERSION,
            },
        ));
    }
    let last = last_kind(version);
    let header = Header {
        version,
        flags: u32_at(field::FLAGS),
        file_len: u64_at(field::FILE_LEN),
        object_count: u64_at(field::OBJECT_COUNT),
        root_count: u64_at(field::ROOT_COUNT),
        type_count: u64_at(field::TYPE_COUNT),
        arena_words: u64_at(field::ARENA_WORDS),
        section_count: u32_at(field::SECTION_COUNT),
        checksum: u32_at(field::CHECKSUM),
    };
    let defined = if version == VERSION_1 { 0 } else { FLAGS_V2 };
    if header.flags & !defined != 0 {
        return Err(invalid(
            Section::Header,
            field::FLAGS,
            Problem::ReservedNotZero {
                value: u64::from(header.flags & !defined),
            },
        ));
    }
    if !(2..=last).contains(&header.section_count) {
        return Err(invalid(
            Section::Header,
            field::SECTION_COUNT,
            Problem::CountOutOfRange {
                what: if version == VERSION_1 {
                    "section count (2 or 3 in version 1)"
                } else {
                    "section count (2 to 6)"
                },
                value: u64::from(header.section_count),
            },
        ));
    }
    let table_end = HEADER_LEN + ENTRY_LEN * u64::from(header.section_count);
    if len < table_end {
        return Err(invalid(
            Section::SectionTable,
            HEADER_LEN,
            Problem::Truncated {
                needed: table_end - HEADER_LEN,
                available: len - HEADER_LEN,
            },
        ));
    }
    // The section table.
    let mut found: [Option<(u64, u64, u64)>; KIND_WEAK_SLOTS as usize + 1] =
        [None; KIND_WEAK_SLOTS as usize + 1];
    for i in 0..u64::from(header.section_count) {
        let entry = HEADER_LEN + i * ENTRY_LEN;
        let kind = u32_at(entry);
        if !(KIND_ROOTS..=last).contains(&kind) {
            return Err(invalid(
                Section::SectionTable,
                entry,
                Problem::UnknownSectionKind { kind },
            ));
        }
        let reserved = u32_at(entry + 4);
        if reserved != 0 {
            return Err(invalid(
                Section::SectionTable,
                entry + 4,
                Problem::ReservedNotZero {
                    value: u64::from(reserved),
                },
            ));
        }
        if found[kind as usize].is_some() {
            return Err(invalid(
                Section::SectionTable,
                entry,
                Problem::DuplicateSection { kind },
            ));
        }
        let offset = u64_at(entry + 8);
        let length = u64_at(entry + 16);
        let section = section_of(kind);
        if offset % 8 != 0 {
            return Err(invalid(
                section,
                entry + 8,
                Problem::Misaligned {
                    what: "section offset",
                    value: offset,
                },
            ));
        }
        if length % 8 != 0 {
            return Err(invalid(
                section,
                entry + 16,
                Problem::Misaligned {
                    what: "section length",
                    value: length,
                },
            ));
        }
        found[kind as usize] = Some((offset, length, entry));
    }
    for kind in [KIND_ROOTS, KIND_ARENA] {
        if found[kind as usize].is_none() {
            return Err(invalid(
                Section::SectionTable,
                HEADER_LEN,
                Problem::MissingSection {
                    section: section_of(kind),
                },
            ));
        }
    }
    // Bounds, in file order: a section cut short by the end of the file is a
    // truncation of that section; sections must tile the file.
    let mut sections: Vec<(u64, u64, u32, u64)> = (KIND_ROOTS..=last)
        .filter_map(|kind| {
            found[kind as usize].map(|(offset, length, entry)| (offset, length, kind, entry))
        })
        .collect();
    sections.sort_unstable();
    let mut expected = table_end;
    for &(offset, length, kind, entry) in &sections {
        let section = section_of(kind);
        match offset.checked_add(length) {
            None => {
                return Err(invalid(
                    section,
                    entry + 16,
                    Problem::OutOfFile {
                        offset,
                        length,
                        file_len: len,
                    },
                ))
            }
            Some(end) if end > len => {
                return Err(invalid(
                    section,
                    offset.min(len),
                    Problem::Truncated {
                        needed: length,
                        available: len.saturating_sub(offset),
                    },
                ))
            }
            Some(end) => {
                if offset != expected {
                    return Err(invalid(
                        section,
                        entry + 8,
                        Problem::NotContiguous {
                            expected,
                            found: offset,
                        },
                    ));
                }
                expected = end;
            }
        }
    }
    if expected != len || header.file_len != len {
        return Err(invalid(
            Section::File,
            field::FILE_LEN,
            Problem::LengthMismatch {
                recorded: header.file_len,
                actual: len,
            },
        ));
    }
    // Counts against lengths.
    let (roots_off, roots_len, _) = found[KIND_ROOTS as usize].expect("checked");
    let (arena_off, arena_len, _) = found[KIND_ARENA as usize].expect("checked");
    check_count(
        header.root_count,
        field::ROOT_COUNT,
        "root count",
        roots_len,
    )?;
    check_count(
        header.arena_words,
        field::ARENA_WORDS,
        "arena words",
        arena_len,
    )?;
    let (name_offsets, names) = match found[KIND_TYPE_NAMES as usize] {
        Some((off, length, _)) => check_type_names(bytes, header.type_count, off, length)?,
        None if header.type_count != 0 => {
            return Err(invalid(
                Section::Header,
                field::TYPE_COUNT,
                Problem::CountMismatch {
                    what: "type count (no type-name section)",
                    count: header.type_count,
                    length: 0,
                },
            ))
        }
        None => (0, 0..0),
    };
    let range = |kind: u32| {
        found[kind as usize].map_or(0..0, |(off, length, _)| {
            off as usize..(off + length) as usize
        })
    };
    Ok(Parsed {
        header,
        arena: arena_off as usize..(arena_off + arena_len) as usize,
        roots: roots_off as usize..(roots_off + roots_len) as usize,
        finalizable: range(KIND_FINALIZABLE),
        name_offsets,
        names,
        kinds: range(KIND_TYPE_KINDS),
        weak_slots: range(KIND_WEAK_SLOTS),
    })
}

/// Checks that `count` words make exactly `length` bytes.
fn check_count(count: u64, at: u64, what: &'static str, length: u64) -> Result<(), SnapshotError> {
    match count.checked_mul(8) {
        None => Err(invalid(
            Section::Header,
            at,
            Problem::CountOutOfRange { what, value: count },
        )),
        Some(bytes) if bytes != length => Err(invalid(
            Section::Header,
            at,
            Problem::CountMismatch {
                what,
                count,
                length,
            },
        )),
        Some(_) => Ok(()),
    }
}

/// Checks the type-name section: `count + 1` offsets, then the names, padded
/// with zeros to a multiple of 8. Returns the offset array's position and
/// the names' byte range.
fn check_type_names(
    bytes: &[u8],
    count: u64,
    off: u64,
    length: u64,
) -> Result<(usize, Range<usize>), SnapshotError> {
    let table = count
        .checked_add(1)
        .and_then(|n| n.checked_mul(8))
        .filter(|&t| t <= length);
    let Some(table) = table else {
        return Err(invalid(
            Section::Header,
            field::TYPE_COUNT,
            Problem::CountMismatch {
                what: "type count",
                count,
                length,
            },
        ));
    };
    let names_start = off + table;
    let names_cap = length - table;
    let mut prev = 0u64;
    for i in 0..=count {
        let at = off + i * 8;
        let value = read_u64(bytes, at as usize);
        let ok = if i == 0 {
            value == 0
        } else {
            value >= prev && value <= names_cap
        };
        if !ok {
            return Err(invalid(
                Section::TypeNames,
                at,
                Problem::BadNameOffset {
                    value,
                    limit: names_cap,
                },
            ));
        }
        prev = value;
    }
    let names_len = prev;
    if names_len.div_ceil(8) * 8 != names_cap {
        return Err(invalid(
            Section::TypeNames,
            off + count * 8,
            Problem::CountMismatch {
                what: "name bytes (padded to 8)",
                count: names_len,
                length: names_cap,
            },
        ));
    }
    let names = names_start as usize..(names_start + names_len) as usize;
    let padding = &bytes[names.end..(names_start + names_cap) as usize];
    if let Some(i) = padding.iter().position(|&b| b != 0) {
        return Err(invalid(
            Section::TypeNames,
            names.end as u64 + i as u64,
            Problem::ReservedNotZero {
                value: u64::from(padding[i]),
            },
        ));
    }
    let text = std::str::from_utf8(&bytes[names.clone()]).map_err(|e| {
        invalid(
            Section::TypeNames,
            names_start + e.valid_up_to() as u64,
            Problem::InvalidUtf8,
        )
    })?;
    for i in 1..count {
        let at = off + i * 8;
        if !text.is_char_boundary(read_u64(bytes, at as usize) as usize) {
            return Err(invalid(Section::TypeNames, at, Problem::InvalidUtf8));
        }
    }
    Ok((off as usize, names))
}
