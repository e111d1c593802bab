//! The tests that need the test-only `inject-delays` feature, in their own
//! binary so that a delayed build compiles only them: the delay suite and
//! the mark-cycle matrix of the `it` binary, whose module it shares.
//!
//! Run: `cargo test -p stealmark-marker --features inject-delays --test delays`

// The `it` binary's helpers; this binary uses a part of them.
#[allow(dead_code)]
#[path = "../it/common/mod.rs"]
mod common;
#[path = "../it/concurrent.rs"]
mod concurrent;
mod delays;
