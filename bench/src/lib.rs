//! Support shared by stealmark's benchmark programs (`src/bin/`): the
//! HotSpot comparison's harness and a heap of leaves for the root phase.
//! The crate is not published; its programs measure, and the product crates
//! do not depend on it.

pub mod hotspot;
pub mod leaves;
