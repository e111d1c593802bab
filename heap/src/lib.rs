//! Heap graphs for stealmark.
//!
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
//! The object model itself ([`ObjRef`], [`ObjectModel`], [`MarkBitmap`])
//! lives in `stealmark-model` and is re-exported here. The importers of
//! foreign dumps are in `stealmark-import`. This crate knows nothing of
//! threads.
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
mod builder;
mod error;
pub mod generate;
mod graph;
mod oracle;
mod sink;
pub mod snapshot;
mod view;

pub use arena::{ObjectHeader, Pos, Slot};
pub use builder::{Heap, HeapBuilder};
pub use error::{BuildError, Problem, Section, SnapshotError, WriteError};
pub use generate::{generate, generate_heap, GenConfig, GenError, GenInfo, Generated, Shape};
pub use graph::HeapGraph;
pub use oracle::{mark_sequential, oracle, OracleInput, OracleResult};
pub use sink::{HeapSink, Layout};
pub use snapshot::{write_heap, Progress, Snapshot, SnapshotWriter, WriteSummary};
pub use stealmark_model::{
    MarkBitmap, MarkIndex, ObjRef, ObjectModel, RootSource, SlotKind, SoftRefPolicy, SoftRefs,
    WeakRef,
};
pub use view::{HeapView, Objects};
