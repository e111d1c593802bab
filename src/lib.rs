//! # stealmark
//!
//! A parallel garbage-collector marking engine in the style of Flood et al.
//! (2001): GC worker threads share grey objects through work-stealing deques
//! (Arora-Blumofe-Plaxton, Chase-Lev, Hendler-Shavit StealHalf) and trace a
//! heap graph that is either provided by a runtime (through
//! [`model::ObjectModel`]) or loaded zero-copy from a memory-mapped snapshot.
//!
//! This facade re-exports the workspace crates:
//!
//! - [`model`]: what a runtime implements (object references, the object
//!   model, mark stores); no dependencies;
//! - [`deques`]: the work-stealing deques;
//! - [`marker`]: the parallel mark engine;
//! - [`heap`]: the arena, snapshot format, loader, writer, generators and the
//!   sequential oracle;
//! - [`import`]: the V8 and HPROF importers;
//! - [`models`]: simulations of the balancing analyses that justify the policies.
//!
//! A runtime that embeds the engine needs only `stealmark-model` and
//! `stealmark-marker`.

pub use stealmark_deques as deques;
pub use stealmark_heap as heap;
pub use stealmark_import as import;
pub use stealmark_marker as marker;
pub use stealmark_model as model;
pub use stealmark_models as models;
