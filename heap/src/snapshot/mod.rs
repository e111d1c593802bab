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

use memmap2::{Mmap, MmapOptions};

use self::format::{
    field, file_checksum, Header, ENTRY_LEN, HEADER_LEN, KIND_ARENA, KIND_ROOTS, KIND_TYPE_NAMES,
    MAGIC, VERSION,
};
use crate::arena::{check_reference, validate_arena, WEAK_BIT};
use crate::error::{Problem, Section, SnapshotError};
use crate::graph::HeapGraph;
use crate::view::HeapView;
use stealmark_model::ObjRef;

pub use self::writer::{write_heap, Progress, SnapshotWriter, WriteSummary};

/// The memory a snapshot lives in.
enum Storage {
    /// A read-only file mapping.
    Mapped(Mmap),
    /// An owned, 8-aligned copy (from [`Snapshot::from_bytes`]).
    Owned(Vec<u64>),
}

impl Storage {
    fn bytes(&self, len: usize) -> &[u8] {
        match self {
            Storage::Mapped(map) => &map[..len],
            Storage::Owned(words) => {
                // SAFETY: any initialised `u64` memory may be read as bytes;
                // `len <= words.len() * 8` by construction in `from_bytes`.
                let all = unsafe {
                    std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8)
                };
                &all[..len]
            }
        }
    }
}

/// A validated snapshot: the object arena in place (memory-mapped, no copy),
/// the roots, and the type names.
///
/// [`Snapshot::open`] checks everything memory safety and the
/// [`crate::ObjectModel`] contract depend on before handing out the heap:
///
/// - the magic, the version, the reserved flags and fields;
/// - the file length, the section table, every section's bounds and 8-byte
///   alignment, and that the sections tile the file without gap or overlap;
/// - every count against its section's length, with no integer overflow;
/// - that objects tile the arena exactly and every object lies within it;
/// - that every slot and every root is null (slots only) or points at an
///   object start, with only the defined tag bit;
/// - that type ids are below the type count, and type names are UTF-8;
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
    storage: Storage,
    len: usize,
    header: Header,
    arena: Range<usize>,
    roots: Vec<ObjRef>,
    /// Byte offset of the name-offset array, and the byte range of the names.
    name_offsets: usize,
    names: Range<usize>,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("mapped", &matches!(self.storage, Storage::Mapped(_)))
            .field("header", &self.header)
            .finish()
    }
}

impl Snapshot {
    /// Maps the file at `path` read-only and validates it.
    pub fn open(path: impl AsRef<Path>) -> Result<Snapshot, SnapshotError> {
        let path = path.as_ref();
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
        // SAFETY: the mapping is read-only and private to this process. The
        // file must not be modified while mapped; that is the documented
        // condition of `Snapshot` (validation happens once, here).
        let map = unsafe { MmapOptions::new().populate().map(&file) }.map_err(io)?;
        let len = map.len();
        Snapshot::validate(Storage::Mapped(map), len)
    }

    /// Validates a snapshot held in memory (copied into an 8-aligned buffer
    /// first). The same checks as [`Snapshot::open`]; for tests, fuzzing
    /// and snapshots that do not come from a file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(b);
        }
        Snapshot::validate(Storage::Owned(words), bytes.len())
    }

    /// The decoded file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        self.storage.bytes(self.len)
    }

    /// Whether the snapshot is memory-mapped (rather than copied).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(_))
    }

    /// The byte range of the arena section in the file.
    pub fn arena_range(&self) -> Range<usize> {
        self.arena.clone()
    }

    fn validate(storage: Storage, len: usize) -> Result<Snapshot, SnapshotError> {
        let bytes = storage.bytes(len);
        let parsed = parse(bytes)?;
        let Parsed {
            header,
            arena,
            roots: roots_range,
            name_offsets,
            names,
        } = parsed;
        let words = arena_words(bytes, &arena);
        let summary = validate_arena(words, header.type_count).map_err(|(index, problem)| {
            SnapshotError::Invalid {
                section: Section::Arena,
                offset: arena.start as u64 + index * 8,
                problem,
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
        let base = words.as_ptr() as usize;
        let arena_bytes = words.len() as u64 * 8;
        let mut roots = Vec::with_capacity(roots_range.len() / 8);
        for at in roots_range.clone().step_by(8) {
            let word = read_u64(bytes, at);
            let offset = at as u64;
            if word == 0 || word & WEAK_BIT != 0 {
                return Err(invalid(
                    Section::Roots,
                    offset,
                    Problem::BadRoot { value: word },
                ));
            }
            check_reference(word, arena_bytes, &summary.starts)
                .map_err(|p| invalid(Section::Roots, offset, p))?;
            roots.push(ObjRef::from_word(base + word as usize).expect("validated root"));
        }
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
            name_offsets,
            names,
        })
    }
}

impl HeapGraph for Snapshot {
    fn view(&self) -> HeapView<'_> {
        HeapView::new_validated(
            arena_words(self.bytes(), &self.arena),
            self.header.object_count,
        )
    }

    fn roots(&self) -> &[ObjRef] {
        &self.roots
    }

    fn type_count(&self) -> usize {
        self.header.type_count as usize
    }

    fn type_name(&self, type_id: u32) -> Option<&str> {
        if u64::from(type_id) >= self.header.type_count {
            return None;
        }
        let bytes = self.bytes();
        let at = self.name_offsets + type_id as usize * 8;
        let start = read_u64(bytes, at) as usize;
        let end = read_u64(bytes, at + 8) as usize;
        let names = &bytes[self.names.clone()];
        // Validated at open: offsets in order, in range, on char boundaries.
        std::str::from_utf8(&names[start..end]).ok()
    }
}

/// The arena section as words.
fn arena_words<'a>(bytes: &'a [u8], arena: &Range<usize>) -> &'a [u64] {
    let section = &bytes[arena.clone()];
    // SAFETY: every bit pattern is a valid `u64`; `align_to` only yields the
    // aligned middle part. The storage is 8-aligned (page-aligned mapping or
    // a `Vec<u64>`) and `parse` checked that the arena offset and length are
    // multiples of 8, so prefix and suffix are empty (asserted below).
    let (prefix, words, suffix) = unsafe { section.align_to::<u64>() };
    assert!(
        prefix.is_empty() && suffix.is_empty(),
        "arena section is 8-aligned"
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

/// The layout `parse` found: byte ranges of the sections.
struct Parsed {
    header: Header,
    arena: Range<usize>,
    roots: Range<usize>,
    name_offsets: usize,
    names: Range<usize>,
}

fn section_of(kind: u32) -> Section {
    match kind {
        KIND_ROOTS => Section::Roots,
        KIND_ARENA => Section::Arena,
        KIND_TYPE_NAMES => Section::TypeNames,
        _ => Section::SectionTable,
    }
}

/// Checks the header, the section table and the type-name section, and
/// locates the sections. Everything but the arena contents, the roots and the
/// checksum.
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
    if version != VERSION {
        return Err(invalid(
            Section::Header,
            field::VERSION,
            Problem::UnsupportedVersion {
                found: version,
                supported: VERSION,
            },
        ));
    }
    let header = Header {
        flags: u32_at(field::FLAGS),
        file_len: u64_at(field::FILE_LEN),
        object_count: u64_at(field::OBJECT_COUNT),
        root_count: u64_at(field::ROOT_COUNT),
        type_count: u64_at(field::TYPE_COUNT),
        arena_words: u64_at(field::ARENA_WORDS),
        section_count: u32_at(field::SECTION_COUNT),
        checksum: u32_at(field::CHECKSUM),
    };
    if header.flags != 0 {
        return Err(invalid(
            Section::Header,
            field::FLAGS,
            Problem::ReservedNotZero {
                value: u64::from(header.flags),
            },
        ));
    }
    if !(2..=3).contains(&header.section_count) {
        return Err(invalid(
            Section::Header,
            field::SECTION_COUNT,
            Problem::CountOutOfRange {
                what: "section count (2 or 3)",
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
    let mut found: [Option<(u64, u64, u64)>; 4] = [None; 4];
    for i in 0..u64::from(header.section_count) {
        let entry = HEADER_LEN + i * ENTRY_LEN;
        let kind = u32_at(entry);
        if !(KIND_ROOTS..=KIND_TYPE_NAMES).contains(&kind) {
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
    let mut sections: Vec<(u64, u64, u32, u64)> = (KIND_ROOTS..=KIND_TYPE_NAMES)
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
    Ok(Parsed {
        header,
        arena: arena_off as usize..(arena_off + arena_len) as usize,
        roots: roots_off as usize..(roots_off + roots_len) as usize,
        name_offsets,
        names,
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
