//! Heap graphs for stealmark.
//!
//! - [`model`]: the [`ObjectModel`] trait that the marker is generic over. A
//!   language runtime implements it to embed the engine.
//! - snapshots: the on-disk format (see `docs/snapshot-format.md`), the
//!   memory-mapped loader, the streaming writer and the in-memory builder.
//! - generators: seeded synthetic heap shapes.
//! - the sequential marker, the oracle every parallel result is checked against.
//!
//! This crate knows nothing of threads.

pub mod model;

pub use model::{ObjRef, ObjectModel, SlotKind};

/// Importers of foreign heap dumps (V8 `.heapsnapshot`, Java HPROF).
pub mod import;
