//! Support shared by stealmark's benchmark programs (`src/bin/`): the
//! harnesses of the HotSpot and V8 comparisons and a heap of leaves for the
//! root phase.
//! The crate is not published; its programs measure, and the product crates
//! do not depend on it.

pub mod hotspot;
pub mod leaves;
pub mod v8;
