//! Importers of foreign heap dumps: V8 `.heapsnapshot` files and Java HPROF
//! heap dumps (optionally gzip-compressed).
//!
//! Both stream their input with a fixed buffer and emit the heap into a
//! [`HeapSink`] object by object (a [`SnapshotWriter`](stealmark_heap::SnapshotWriter)
//! to stream it to a snapshot file, or a [`HeapBuilder`](stealmark_heap::HeapBuilder)
//! to build it in memory); neither ever holds the whole input. The V8 importer
//! makes one pass, keeping the nodes and edges as compact columns (28 bytes
//! a node, 9 an edge) until the names that come last have said which edges
//! are WeakMap entries; the HPROF importer makes three (see
//! [`hprof`](fn@crate::hprof)), because a slot count is only known once the
//! whole id set is.
//!
//! The mapping rules follow issue 6, so that reachable counts can be
//! compared with other tools:
//!
//! - **V8**: every node is an object of size `self_size`; every edge is a
//!   slot, weak (per slot: the node's type becomes `weak-slots`) if its
//!   type is `weak` or `shortcut`; node 0, the synthetic root, is the only
//!   root. WeakMap and WeakSet entries (the internal edges V8 names "part
//!   of key ... -> value ... pair in WeakMap") are ephemerons: the table
//!   becomes an ephemeron table of (key, value) slot pairs, the value keyed
//!   by its key, and the key's own edge to the value is weak.
//! - **HPROF**: classes, instances, object arrays and primitive arrays are
//!   objects; instance fields (superclasses' included), instance → class,
//!   array → class and elements, class → super, loader, signers, protection
//!   domain, constant-pool and static references are slots; the roots are
//!   the distinct objects named by ROOT_* records; nulls are not slots, and
//!   references to objects missing from the dump are dropped and counted.
//!   The `referent` field of instances of `java.lang.ref.SoftReference`,
//!   `WeakReference`, `PhantomReference` and `FinalReference` (and their
//!   subclasses) is their slot 0 (null when the referent is null or
//!   missing), and their class's type is `soft-ref`, `weak-ref` or
//!   `phantom-ref`; a `FinalReference`'s referent is registered finalizable
//!   and its slot is phantom (see [`hprof`](fn@crate::hprof)).
//!
//! **Sizes.** Snapshots record runtime sizes: V8's `self_size`; for HPROF
//! an estimate of HotSpot's layout (see [`hprof`](fn@crate::hprof)). An
//! arena object is as large as its runtime size, rounded up to whole words
//! and never smaller than its header and slots.
//!
//! **Layout.** Both importers write the compressed layout when the heap fits
//! in it (32 GiB of arena), else the wide one, unless
//! [`ImportOptions::layout`] says which.
//!
//! Malformed input yields an [`ImportError`] naming the problem and its byte
//! offset; the importers never panic on any input.

mod error;
mod hprof;
mod input;
mod json;
#[cfg(feature = "test-support")]
pub mod test_support;
mod v8;

use std::io::Read;

use stealmark_heap::{ArenaFormat, ArenaLayout, HeapSink, ObjectHeader, Pos};

pub use error::{Format, ImportError, Malformed};
pub use hprof::Reopen;
pub use input::InputFile;

/// What an import found and did.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ImportSummary {
    /// Bytes of (decompressed) input read.
    pub input_bytes: u64,
    /// Objects imported.
    pub objects: u64,
    /// Non-null reference slots imported, of every kind.
    pub references: u64,
    /// Weak reference slots among them (V8 weak and shortcut edges, WeakMap
    /// keys' edges to their values and the key slots of WeakMap tables;
    /// HPROF weak referents).
    pub weak_references: u64,
    /// Ephemeron value slots among them (V8 WeakMap and WeakSet tables:
    /// their entries' values, and their other edges, as values keyed by
    /// the table itself).
    pub ephemeron_references: u64,
    /// Soft referents among them (HPROF).
    pub soft_references: u64,
    /// Phantom referents among them (HPROF `PhantomReference`s and
    /// `FinalReference`s).
    pub phantom_references: u64,
    /// Finalizable objects registered (HPROF `FinalReference` referents).
    pub finalizable: u64,
    /// The arena layout written.
    pub layout: ArenaLayout,
    /// Distinct roots.
    pub roots: u64,
    /// Distinct type names.
    pub types: u64,
    /// References to objects missing from the dump, dropped (HPROF).
    pub dropped_references: u64,
    /// Distinct root ids missing from the dump, dropped (HPROF).
    pub dropped_roots: u64,
    /// Instances whose class layout is missing from the dump, so that their
    /// fields could not be decoded; only their class reference is kept
    /// (HPROF).
    pub undecoded_instances: u64,
}

/// How to import.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ImportOptions {
    /// The arena layout; `None` (the default) means compressed when the heap
    /// fits in it (2³² words, 32 GiB), else wide.
    pub layout: Option<ArenaLayout>,
    /// The size in bytes of the buffer the input is read through; `None`
    /// (the default) means [`DEFAULT_BUFFER_LEN`]. Sizes below
    /// [`MIN_BUFFER_LEN`] are raised to it. The result does not depend on
    /// it: tiny buffers are for tests, so that tokens and records cross
    /// refills everywhere.
    pub buffer_len: Option<usize>,
}

/// The default input buffer size: 256 KiB, large enough that refills cost
/// little and small enough to stay in L2. Built for fuzzing (`--cfg
/// fuzzing`), 64 bytes, so that the few-KiB inputs a fuzzer makes cross
/// many refills.
pub const DEFAULT_BUFFER_LEN: usize = if cfg!(fuzzing) { 64 } else { 256 * 1024 };

/// The smallest input buffer: the HPROF reader takes fixed fields of up to
/// 8 bytes from its buffer in one piece.
pub const MIN_BUFFER_LEN: usize = 16;

impl ImportOptions {
    /// Options with the given layout (`None`: compressed when it fits).
    pub fn layout(layout: Option<ArenaLayout>) -> ImportOptions {
        ImportOptions {
            layout,
            ..ImportOptions::default()
        }
    }

    /// These options with an input buffer of `len` bytes (at least
    /// [`MIN_BUFFER_LEN`]).
    pub fn with_buffer_len(self, len: usize) -> ImportOptions {
        ImportOptions {
            buffer_len: Some(len),
            ..self
        }
    }

    /// The input buffer size to use.
    fn buffer(&self) -> usize {
        self.buffer_len
            .unwrap_or(DEFAULT_BUFFER_LEN)
            .max(MIN_BUFFER_LEN)
    }
}

/// Imports a V8 `.heapsnapshot` from `input` into `sink`, in one pass, with
/// the default [`ImportOptions`].
///
/// The type names are added to the sink at the end (V8 writes its string
/// table last), numbered after any names the sink already has.
///
/// ```
/// use stealmark_heap::{mark_sequential, HeapBuilder, HeapGraph};
/// use stealmark_import as import;
///
/// let json = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
///   "node_types":[["hidden","object"],"string","number","number","number"],
///   "edge_fields":["type","name_or_index","to_node"],
///   "edge_types":[["property","weak"],"string_or_number","node"]},
///   "node_count":3,"edge_count":2},
///   "nodes":[0,0,1,0,2, 1,1,3,16,0, 1,1,5,16,0],
///   "edges":[0,1,5, 1,1,10],
///   "strings":["(root)","Foo"]}"#;
/// let mut builder = HeapBuilder::new();
/// let summary = import::v8(json.as_bytes(), &mut builder)?;
/// assert_eq!((summary.objects, summary.references, summary.weak_references), (3, 2, 1));
/// let heap = builder.finish()?;
/// // The weak edge does not keep the third node alive.
/// assert_eq!(mark_sequential(&heap.view(), heap.roots()).objects, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn v8<R: Read, S: HeapSink + ?Sized>(
    input: R,
    sink: &mut S,
) -> Result<ImportSummary, ImportError> {
    v8_with(input, sink, &ImportOptions::default())
}

/// [`v8()`] with options.
pub fn v8_with<R: Read, S: HeapSink + ?Sized>(
    input: R,
    sink: &mut S,
    options: &ImportOptions,
) -> Result<ImportSummary, ImportError> {
    v8::import(input, sink, options)
}

/// Imports a Java HPROF dump into `sink` with the default
/// [`ImportOptions`], reading it three times from the start (see
/// [`Reopen`]). `pass` is called as each pass starts, with its name:
///
/// 1. `scan`: object ids, class layouts, roots, and the names that identify
///    `java.lang.ref.Reference.referent`;
/// 2. `count`: every object's slot count (dropping references to objects
///    missing from the dump needs the whole id set) and arena position;
/// 3. `emit`: the objects, in dump order, then the roots.
///
/// Memory: 16 bytes per object for the id → position map (sorted pairs with
/// a directory on the high bits), plus the class layouts; never a record
/// more than once at a time. Type names (Java names of the dumped classes,
/// `java.lang.Class` for class objects, `int[]` and so on for primitive
/// arrays) are added to the sink before the objects. Runtime sizes estimate
/// HotSpot's 64-bit layout for the arena layout written: with the
/// compressed layout, HotSpot's default for heaps under 32 GiB (compressed
/// oops and class pointers: a 12-byte header, 16 for arrays, 4-byte
/// references); with the wide one, a header of two identifiers and
/// identifier-sized references; plus the primitive values the dump holds,
/// rounded up to 8 bytes. If the compressed arena does not fit, the count
/// pass runs again for the wide layout.
pub fn hprof<Src: Reopen + ?Sized, S: HeapSink + ?Sized>(
    src: &Src,
    sink: &mut S,
    pass: &mut dyn FnMut(&'static str),
) -> Result<ImportSummary, ImportError> {
    hprof_with(src, sink, pass, &ImportOptions::default())
}

/// [`hprof()`] with options.
pub fn hprof_with<Src: Reopen + ?Sized, S: HeapSink + ?Sized>(
    src: &Src,
    sink: &mut S,
    pass: &mut dyn FnMut(&'static str),
    options: &ImportOptions,
) -> Result<ImportSummary, ImportError> {
    hprof::import(src, sink, pass, options)
}

/// Positions objects for a sink that may already hold objects: a
/// [`Layout`](stealmark_heap::Layout) in the import's arena layout, shifted
/// to start at the sink's next position.
struct Placer {
    layout: stealmark_heap::Layout,
    arena: ArenaLayout,
    /// Bytes to add to a layout position.
    shift: u64,
}

impl Placer {
    fn new<S: HeapSink + ?Sized>(sink: &S, arena: ArenaLayout) -> Placer {
        let shift = sink.next_pos().offset() - Pos::FIRST.offset();
        Placer {
            layout: stealmark_heap::Layout::with_layout(arena),
            arena,
            shift,
        }
    }

    /// The arena words placed so far, from the sink's first word.
    fn arena_words(&self) -> u64 {
        self.layout.arena_words() + self.shift / 8
    }

    /// Places the next object, or `None` if the arena would overflow its
    /// layout.
    fn push(&mut self, header: ObjectHeader) -> Option<Pos> {
        let end = self
            .arena_words()
            .checked_add(header.size_words(self.arena))?;
        if !ArenaFormat::new(self.arena).fits(end) {
            return None;
        }
        let pos = self.layout.push_header(header);
        pos.add_words(self.shift / 8)
    }
}

/// The header of an object of `slots` slots and `runtime_size` bytes in
/// `layout` (sizes of 4 GiB or more are recorded as `u32::MAX`).
fn sized(type_id: u32, slots: u32, runtime_size: u64, layout: ArenaLayout) -> ObjectHeader {
    let size = u32::try_from(runtime_size).unwrap_or(u32::MAX);
    ObjectHeader::sized(type_id, slots, size, layout)
}

/// Chooses the layout for an arena of `compressed_words` words in the
/// compressed layout, and tells the sink (with runtime sizes).
fn choose_layout<S: HeapSink + ?Sized>(
    sink: &mut S,
    options: &ImportOptions,
    compressed_words: Option<u64>,
) -> Result<ArenaLayout, ImportError> {
    let fits = compressed_words.is_some_and(|w| ArenaFormat::COMPRESSED.fits(w));
    let layout = match options.layout {
        Some(ArenaLayout::Compressed) if !fits => {
            return Err(ImportError::TooLarge {
                layout: ArenaLayout::Compressed,
                words: compressed_words.unwrap_or(u64::MAX),
            })
        }
        Some(layout) => layout,
        None if fits => ArenaLayout::Compressed,
        None => ArenaLayout::Wide,
    };
    sink.set_format(ArenaFormat::new(layout).with_runtime_sizes())
        .map_err(sink_error)?;
    Ok(layout)
}

/// The error for a sink that put an object elsewhere than its layout said
/// (a broken [`HeapSink`] implementation).
fn misplaced(ordinal: u64, placed: Pos, expected: Pos) -> ImportError {
    ImportError::Sink(
        format!("the sink placed object {ordinal} at {placed}, its layout says {expected}").into(),
    )
}

/// Wraps a sink's error.
fn sink_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> ImportError {
    ImportError::Sink(Box::new(e))
}
