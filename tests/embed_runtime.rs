//! Runs the `embed_runtime` example (a toy runtime with weak fields,
//! WeakMaps and finalizers, checked against the oracle after every
//! collection) for a few collections, so that CI keeps it honest.

#[allow(dead_code)]
#[path = "../examples/embed_runtime.rs"]
mod embed_runtime;

#[test]
fn the_toy_runtime_keeps_its_invariants() {
    let s = embed_runtime::run(60, false);
    assert_eq!(s.collections, 60);
    assert!(s.freed > 0 && s.cleared > 0 && s.finalized > 0, "{s:?}");
}
