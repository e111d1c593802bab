//! Heap graphs for stealmark.
//!
//! - [`model`]: the [`ObjectModel`] trait that the marker is generic over. A
//!   language runtime implements it to embed the engine.
//! - [`arena`]: the object layout shared by in-memory heaps and snapshots
//!   (header words, reference slots, payload), and [`HeapView`], which
//!   implements [`ObjectModel`] over it. `docs/snapshot-format.md` specifies
//!   it byte for byte.
//! - [`HeapBuilder`] / [`Heap`]: a heap in a bumpalo arena; [`Snapshot`]: a
//!   memory-mapped, validated snapshot file; [`SnapshotWriter`]: the
//!   streaming writer ([`snapshot::format`] has the format constants).
//!   Producers emit into either through [`HeapSink`].
//! - [`generate`](mod@generate): seeded synthetic heap shapes ([`Shape`]).
//! - [`mark_sequential`]: the sequential marker, the oracle every parallel
//!   result is checked against.
//!
//! This crate knows nothing of threads.
//!
//! ```
//! use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
//!
//! let g = generate_heap(&GenConfig::new(Shape::Runtime, 10_000).seed(7)).unwrap();
//! let view = g.heap.view(); // implements ObjectModel
//! let oracle = mark_sequential(&view, g.heap.roots());
//! assert_eq!(Some(oracle.objects), g.info.reachable);
//! ```

pub mod arena;
mod bitmap;
mod builder;
mod error;
pub mod generate;
pub mod model;
mod oracle;
mod sink;
pub mod snapshot;
mod view;

pub use arena::{ObjectHeader, Pos, Slot};
pub use bitmap::MarkBitmap;
pub use builder::{Heap, HeapBuilder};
pub use error::{BuildError, Problem, Section, SnapshotError, WriteError};
pub use generate::{generate, generate_heap, GenConfig, GenError, GenInfo, Generated, Shape};
pub use model::{ObjRef, ObjectModel, SlotKind};
pub use oracle::{mark_sequential, OracleResult, WeakRef};
pub use sink::{HeapSink, Layout};
pub use snapshot::{write_heap, Progress, Snapshot, SnapshotWriter, WriteSummary};
pub use view::{HeapView, Objects};

/// Importers of foreign heap dumps (V8 `.heapsnapshot`, Java HPROF).
pub mod import;

/// A validated heap with its roots: what a marker traces.
///
/// Implemented by the in-memory [`Heap`] and by the memory-mapped
/// `Snapshot`. The view and the roots borrow from the heap.
pub trait HeapGraph {
    /// The arena, as an [`ObjectModel`].
    fn view(&self) -> HeapView<'_>;
    /// The roots, as references into [`HeapGraph::view`].
    fn roots(&self) -> &[ObjRef];
    /// The number of type names (0 if the heap has no type-name table).
    fn type_count(&self) -> usize;
    /// The name of a type id, if the heap has one for it.
    fn type_name(&self, type_id: u32) -> Option<&str>;
}
