//! # stealmark
//!
//! A parallel garbage-collector marking engine in the style of Flood et al.
//! (2001): GC worker threads share grey objects through work-stealing deques
//! (Arora-Blumofe-Plaxton, Chase-Lev, Hendler-Shavit StealHalf) and trace a
//! heap graph that is either provided by a runtime (through
//! [`heap::ObjectModel`]) or loaded zero-copy from a memory-mapped snapshot.
//!
//! This facade re-exports the workspace crates:
//!
//! - [`deques`]: the work-stealing deques;
//! - [`heap`]: the object model, snapshot format, loader and generators;
//! - [`marker`]: the parallel mark engine;
//! - [`models`]: simulations of the balancing analyses that justify the policies.

pub use stealmark_deques as deques;
pub use stealmark_heap as heap;
pub use stealmark_marker as marker;
pub use stealmark_models as models;
