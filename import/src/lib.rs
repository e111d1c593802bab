//! Importers of foreign heap dumps: V8 `.heapsnapshot` files and Java HPROF
//! heap dumps (optionally gzip-compressed).
//!
//! Both stream their input with a fixed buffer and emit the heap into a
//! [`HeapSink`] object by object (a [`SnapshotWriter`](stealmark_heap::SnapshotWriter)
//! to stream it to a snapshot file, or a [`HeapBuilder`](stealmark_heap::HeapBuilder)
//! to build it in memory); neither ever holds the whole input. The V8 importer
//! makes one pass; the HPROF importer makes three (see [`hprof`](fn@crate::hprof)),
//! because a slot count is only known once the whole id set is.
//!
//! The mapping rules follow issue 6, so that reachable counts can be
//! compared with other tools:
//!
//! - **V8**: every node is an object of size `self_size`; every edge is a
//!   slot, weak if its type is `weak`; node 0, the synthetic root, is the
//!   only root.
//! - **HPROF**: classes, instances, object arrays and primitive arrays are
//!   objects; instance fields (superclasses' included), instance → class,
//!   array → class and elements, class → super, loader, signers, protection
//!   domain, constant-pool and static references are slots; the `referent`
//!   field of `java.lang.ref.Reference` is weak; the roots are the distinct
//!   objects named by ROOT_* records; nulls are not slots, and references to
//!   objects missing from the dump are dropped and counted.
//!
//! **Sizes.** An arena object is its two header words, its slots and zero
//! payload words; the importers choose the payload so that the object is as
//! large as the source says (V8 `self_size`; for HPROF an estimate of the
//! HotSpot layout, see [`hprof`](fn@crate::hprof)), rounded up to whole words and never
//! smaller than header plus slots.
//!
//! Malformed input yields an [`ImportError`] naming the problem and its byte
//! offset; the importers never panic on any input.

mod error;
mod hprof;
mod input;
mod json;
mod v8;

use std::io::Read;

use stealmark_heap::HeapSink;

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
    /// Reference slots imported, weak ones included.
    pub references: u64,
    /// Weak reference slots among them.
    pub weak_references: u64,
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

/// Imports a V8 `.heapsnapshot` from `input` into `sink`, in one pass.
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
    v8::import(input, sink)
}

/// Imports a Java HPROF dump into `sink`, reading it three times from the
/// start (see [`Reopen`]). `pass` is called as each pass starts, with its
/// name:
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
/// arrays) are added to the sink before the objects. Sizes estimate HotSpot's
/// 64-bit layout: two identifiers of header plus the payload the dump holds
/// (field values; array length and elements; static values), rounded up to
/// 8 bytes.
pub fn hprof<Src: Reopen + ?Sized, S: HeapSink + ?Sized>(
    src: &Src,
    sink: &mut S,
    pass: &mut dyn FnMut(&'static str),
) -> Result<ImportSummary, ImportError> {
    hprof::import(src, sink, pass)
}

/// Positions objects for a sink that may already hold objects: a
/// [`Layout`](stealmark_heap::Layout) shifted to start at the sink's next
/// position.
struct Placer {
    layout: stealmark_heap::Layout,
    /// Bytes to add to a layout position.
    shift: u64,
}

impl Placer {
    fn new<S: HeapSink + ?Sized>(sink: &S) -> Placer {
        let shift = sink.next_pos().offset() - stealmark_heap::Pos::FIRST.offset();
        Placer {
            layout: stealmark_heap::Layout::new(),
            shift,
        }
    }

    /// The arena words placed so far, from the sink's first word.
    fn arena_words(&self) -> u64 {
        self.layout.arena_words() + self.shift / 8
    }

    /// Places the next object, or `None` if the arena would overflow.
    fn push(&mut self, slots: u32, payload_words: u32) -> Option<stealmark_heap::Pos> {
        let size =
            stealmark_heap::arena::HEADER_WORDS + u64::from(slots) + u64::from(payload_words);
        // Keep the arena (shift included) well inside u64 bytes, so that
        // `Layout::push` cannot overflow.
        let end = self
            .layout
            .arena_words()
            .checked_add(size)?
            .checked_add(self.shift / 8)?;
        if end > u64::MAX / 16 {
            return None;
        }
        let pos = self.layout.push(slots, payload_words);
        pos.add_words(self.shift / 8)
    }
}

/// The error for a sink that put an object elsewhere than its layout said
/// (a broken [`HeapSink`] implementation).
fn misplaced(
    ordinal: u64,
    placed: stealmark_heap::Pos,
    expected: stealmark_heap::Pos,
) -> ImportError {
    ImportError::Sink(
        format!("the sink placed object {ordinal} at {placed}, its layout says {expected}").into(),
    )
}

/// Wraps a sink's error.
fn sink_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> ImportError {
    ImportError::Sink(Box::new(e))
}

/// The payload words that make an object with `slots` slots `size` bytes
/// long, as near as the arena layout allows: objects are whole words, and
/// never smaller than their header and slots.
fn payload_words(size: u64, slots: u32) -> Option<u32> {
    let words = size.div_ceil(8);
    u32::try_from(words.saturating_sub(stealmark_heap::arena::HEADER_WORDS + u64::from(slots))).ok()
}
