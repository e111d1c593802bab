//! Snapshot format v2 (and v1, which it reads): constants and header
//! encoding.
//!
//! `docs/snapshot-format.md` is the specification; this module mirrors it.

/// The eight magic bytes a snapshot starts with: `\x89 S M H \r \n \x1a \n`.
/// The high byte and the line endings catch text-mode and 7-bit mangling.
pub const MAGIC: [u8; 8] = *b"\x89SMH\r\n\x1a\n";

/// The format version this crate writes.
pub const VERSION: u32 = 2;

/// The previous version, which this crate still reads: the wide layout,
/// three sections, the per-slot weak bit on every slot.
pub const VERSION_1: u32 = 1;

/// Header flag (v2): the arena uses the compressed layout (4-byte
/// references).
pub const FLAG_COMPRESSED: u32 = 1;

/// Header flag (v2): layout words hold runtime sizes in bytes instead of
/// payload lengths.
pub const FLAG_RUNTIME_SIZES: u32 = 2;

/// Every flag version 2 defines.
pub const FLAGS_V2: u32 = FLAG_COMPRESSED | FLAG_RUNTIME_SIZES;

/// The size of the file header in bytes.
pub const HEADER_LEN: u64 = 64;

/// The size of one section-table entry in bytes.
pub const ENTRY_LEN: u64 = 24;

/// Section kind of the roots section.
pub const KIND_ROOTS: u32 = 1;
/// Section kind of the object arena.
pub const KIND_ARENA: u32 = 2;
/// Section kind of the type-name table.
pub const KIND_TYPE_NAMES: u32 = 3;
/// Section kind of the type-kind table (v2).
pub const KIND_TYPE_KINDS: u32 = 4;
/// Section kind of the finalizable objects (v2).
pub const KIND_FINALIZABLE: u32 = 5;
/// Section kind of the weak-slot list of a compressed arena (v2).
pub const KIND_WEAK_SLOTS: u32 = 6;

/// The largest section kind of each version.
pub(crate) const fn last_kind(version: u32) -> u32 {
    if version == VERSION_1 {
        KIND_TYPE_NAMES
    } else {
        KIND_WEAK_SLOTS
    }
}

/// Byte offsets of the header fields.
pub(crate) mod field {
    pub const MAGIC: u64 = 0;
    pub const VERSION: u64 = 8;
    pub const FLAGS: u64 = 12;
    pub const FILE_LEN: u64 = 16;
    pub const OBJECT_COUNT: u64 = 24;
    pub const ROOT_COUNT: u64 = 32;
    pub const TYPE_COUNT: u64 = 40;
    pub const ARENA_WORDS: u64 = 48;
    pub const SECTION_COUNT: u64 = 56;
    pub const CHECKSUM: u64 = 60;
}

/// The decoded file header.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Header {
    /// The format version (1 or 2).
    pub version: u32,
    /// Flags: [`FLAG_COMPRESSED`], [`FLAG_RUNTIME_SIZES`] (none in version 1).
    pub flags: u32,
    /// The file length in bytes.
    pub file_len: u64,
    /// The number of objects in the arena.
    pub object_count: u64,
    /// The number of roots.
    pub root_count: u64,
    /// The number of type names (0 if there is no type-name section).
    pub type_count: u64,
    /// The arena length in words (the reserved word 0 included).
    pub arena_words: u64,
    /// The number of section-table entries.
    pub section_count: u32,
    /// CRC-32 of the whole file, computed with this field set to zero.
    pub checksum: u32,
}

impl Header {
    /// Encodes the header (magic included).
    pub fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let mut b = [0u8; HEADER_LEN as usize];
        put(&mut b, field::MAGIC, &MAGIC);
        put(&mut b, field::VERSION, &self.version.to_le_bytes());
        put(&mut b, field::FLAGS, &self.flags.to_le_bytes());
        put(&mut b, field::FILE_LEN, &self.file_len.to_le_bytes());
        put(
            &mut b,
            field::OBJECT_COUNT,
            &self.object_count.to_le_bytes(),
        );
        put(&mut b, field::ROOT_COUNT, &self.root_count.to_le_bytes());
        put(&mut b, field::TYPE_COUNT, &self.type_count.to_le_bytes());
        put(&mut b, field::ARENA_WORDS, &self.arena_words.to_le_bytes());
        put(
            &mut b,
            field::SECTION_COUNT,
            &self.section_count.to_le_bytes(),
        );
        put(&mut b, field::CHECKSUM, &self.checksum.to_le_bytes());
        b
    }
}

fn put(buf: &mut [u8], at: u64, bytes: &[u8]) {
    buf[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
}

/// One section-table entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SectionEntry {
    /// The section kind (`KIND_*`).
    pub kind: u32,
    /// The absolute byte offset of the section.
    pub offset: u64,
    /// The section length in bytes.
    pub length: u64,
}

impl SectionEntry {
    /// Encodes the entry.
    pub fn encode(&self) -> [u8; ENTRY_LEN as usize] {
        let mut b = [0u8; ENTRY_LEN as usize];
        put(&mut b, 0, &self.kind.to_le_bytes());
        put(&mut b, 8, &self.offset.to_le_bytes());
        put(&mut b, 16, &self.length.to_le_bytes());
        b
    }
}

/// The CRC-32 (IEEE 802.3, as in zlib and PNG) of `bytes` with the checksum
/// field (header bytes 60..64) read as zero. `bytes` must be a whole file of
/// at least [`HEADER_LEN`] bytes.
pub fn file_checksum(bytes: &[u8]) -> u32 {
    let c = field::CHECKSUM as usize;
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..c]);
    h.update(&[0; 4]);
    h.update(&bytes[c + 4..]);
    h.finalize()
}
