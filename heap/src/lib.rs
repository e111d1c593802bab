//! Heap graphs for stealmark.
//!
//! - [`arena`]: the object layouts shared by in-memory heaps and snapshots
//!   (header words, reference slots, payload; wide or compressed), the
//!   [`TypeKind`]s that give slots their meaning, and [`HeapView`], which
//!   implements [`ObjectModel`] and [`MarkIndex`] over either layout with
//!   atomic loads. `docs/snapshot-format.md` specifies it byte for byte.
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

#[cfg(not(target_pointer_width = "64"))]
compile_error!(
    "stealmark-heap needs a 64-bit target: references are addresses of 8-byte words, and read-only \
     mappings are read with 8-byte relaxed atomic loads, which Rust only guarantees to work on \
     read-only memory where they are register-sized"
);

pub mod arena;
mod builder;
mod error;
pub mod generate;
mod graph;
mod oracle;
mod sink;
mod sink_state;
mod slot_lists;
pub mod snapshot;
mod validate;
mod view;
mod weak_list;

pub use arena::{ArenaFormat, ArenaLayout, ObjectHeader, Pos, Slot, TypeKind};
pub use builder::{Heap, HeapBuilder};
pub use error::{BuildError, Problem, Section, SinkError, SnapshotError, StoreError, WriteError};
pub use generate::{generate, generate_heap, GenConfig, GenError, GenInfo, Generated, Shape};
pub use graph::HeapGraph;
pub use oracle::{mark_sequential, oracle, OracleInput, OracleResult};
pub use sink::{HeapSink, Layout};
pub use slot_lists::{ListGraph, ListKind};
pub use snapshot::{write_heap, Progress, Snapshot, SnapshotWriter, WriteSummary};
pub use stealmark_model::{
    MarkBitmap, MarkIndex, ObjRef, ObjectModel, RootSource, SlotKind, SoftRefPolicy, SoftRefs,
    WeakRef,
};
pub use view::{HeapView, Objects};
