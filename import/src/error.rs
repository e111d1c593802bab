//! Errors of the importers: every malformed input names what is wrong and the
//! byte offset where it was found.

use std::fmt;
use std::io;

/// The foreign format an error was found in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    /// A V8 `.heapsnapshot` (JSON).
    V8,
    /// A Java HPROF heap dump (offsets count decompressed bytes for `.gz`).
    Hprof,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::V8 => "V8 heap snapshot",
            Format::Hprof => "HPROF heap dump",
        })
    }
}

/// What is wrong with a malformed input.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum Malformed {
    /// The input ended in the middle of `expected`.
    #[error("unexpected end of input, expected {expected}")]
    UnexpectedEof {
        /// What the parser was reading.
        expected: &'static str,
    },
    /// A byte that cannot start or continue what the parser expected.
    #[error("unexpected byte {found:#04x}, expected {expected}")]
    UnexpectedByte {
        /// The byte found.
        found: u8,
        /// What the parser expected there.
        expected: &'static str,
    },
    /// A number that does not fit the field it belongs to.
    #[error("number out of range for {field}")]
    NumberOutOfRange {
        /// The field being read.
        field: &'static str,
    },
    /// A string with an invalid escape sequence.
    #[error("invalid string escape")]
    BadEscape,
    /// Data nested deeper than the parser allows.
    #[error("nesting deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// A value larger than the parser buffers.
    #[error("{what} longer than {limit} bytes")]
    TooLong {
        /// What was being read.
        what: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// `snapshot.meta` does not describe a layout the importer can read.
    #[error("bad snapshot.meta: {0}")]
    BadMeta(String),
    /// A required top-level section is absent.
    #[error("missing section `{0}`")]
    MissingSection(&'static str),
    /// A top-level section occurs twice, or before the sections it needs.
    #[error("section `{section}` {problem}")]
    SectionOrder {
        /// The section.
        section: &'static str,
        /// What is wrong with its place.
        problem: &'static str,
    },
    /// A count in the header disagrees with the data.
    #[error("{what}: header says {declared}, data has {found}")]
    CountMismatch {
        /// What was counted.
        what: &'static str,
        /// The count the header declares.
        declared: u64,
        /// The count found in the data.
        found: u64,
    },
    /// An enum-valued field holds an index outside its enum.
    #[error("{field} {value} is outside its enum of {len} values")]
    BadEnum {
        /// The field.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The number of enum values.
        len: usize,
    },
    /// An edge's `to_node` is not the offset of a node in `nodes`.
    #[error("to_node {0} is not the offset of a node")]
    BadToNode(u64),
    /// The file does not start with a supported HPROF header.
    #[error("not an HPROF file of a supported version (want `JAVA PROFILE 1.0.1` or `1.0.2`)")]
    BadHprofHeader,
    /// An identifier size other than 4 or 8.
    #[error("unsupported identifier size {0}")]
    BadIdSize(u32),
    /// A heap-dump sub-record tag the importer does not know.
    #[error("unknown heap-dump sub-record tag {0:#04x}")]
    UnknownSubRecord(u8),
    /// A field or element type code outside the HPROF basic types.
    #[error("unknown basic type {0}")]
    BadBasicType(u8),
    /// A sub-record runs past the end of its HEAP_DUMP record.
    #[error("sub-record runs past the end of its heap-dump record")]
    SubRecordOverrun,
    /// Two objects with the same identifier.
    #[error("duplicate object id {0:#x}")]
    DuplicateId(u64),
    /// An instance whose field data does not match its class layout.
    #[error("instance {id:#x} has {found} bytes of field data, its class layout needs {expected}")]
    InstanceSize {
        /// The instance.
        id: u64,
        /// Bytes the class layouts declare.
        expected: u64,
        /// Bytes the record holds.
        found: u64,
    },
    /// An object array whose class is a `java.lang.ref.Reference` class (an
    /// array's class is an array class): its type would make its first
    /// slot a referent.
    #[error("object array {id:#x} has class {class_id:#x}, a java.lang.ref.Reference class")]
    ReferenceClassArray {
        /// The array.
        id: u64,
        /// Its class.
        class_id: u64,
    },
    /// A superclass chain that loops.
    #[error("superclass chain of class {0:#x} loops")]
    SuperclassCycle(u64),
    /// The input has no objects at all.
    #[error("no objects")]
    Empty,
    /// More objects or slots than a snapshot can hold.
    #[error("too many {0} for a snapshot")]
    TooMany(&'static str),
}

/// An import failure.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input is not a well-formed file of its format.
    #[error("malformed {format} at byte {offset}: {kind}")]
    Malformed {
        /// The input format.
        format: Format,
        /// Byte offset in the (decompressed) input where the problem was found.
        offset: u64,
        /// What is wrong.
        kind: Malformed,
    },
    /// Reading the input failed.
    #[error("reading the input failed near byte {offset}: {source}")]
    Read {
        /// Byte offset in the (decompressed) input.
        offset: u64,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The heap does not fit the arena layout asked for.
    #[error("the heap needs {words} arena words, more than the {layout} layout holds (2^32 words, 32 GiB, for compressed)")]
    TooLarge {
        /// The layout.
        layout: stealmark_heap::ArenaLayout,
        /// The arena words it needs (at least).
        words: u64,
    },
    /// The [`HeapSink`](stealmark_heap::HeapSink) failed (writing the snapshot).
    #[error("writing the imported heap failed: {0}")]
    Sink(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ImportError {
    /// The input byte offset the error refers to (`None` for sink errors).
    pub fn offset(&self) -> Option<u64> {
        match self {
            ImportError::Malformed { offset, .. } | ImportError::Read { offset, .. } => {
                Some(*offset)
            }
            ImportError::Sink(_) | ImportError::TooLarge { .. } => None,
        }
    }
}
