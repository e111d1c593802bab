//! The tests that need the test-only `inject-delays` feature, in their own
//! binary so that a delayed build compiles only them: the delay suite and
//! the mark-cycle matrix of the `it` binary, whose helpers it shares.
//!
//! Run: `cargo test -p stealmark-marker --features inject-delays --test delays`

#[path = "../it/common/mod.rs"]
mod common;
#[path = "../it/concurrent.rs"]
mod concurrent;
mod delays;
