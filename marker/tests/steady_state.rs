//! Steady state: 1,000 back-to-back collections with one marker leave the
//! resident set flat (each deque kind). A correctness test, not a timing
//! test: it reads `/proc/self/statm`, so it only runs on Linux.

#![cfg(target_os = "linux")]

use stealmark_heap::{generate_heap, GenConfig, HeapGraph, Shape};
use stealmark_marker::{DequeKind, Marker, MarkerConfig};
use strum::VariantArray;

/// Resident pages of this process.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm's second field is the resident page count");
    pages * 4096
}

#[test]
fn a_thousand_collections_leave_resident_memory_flat() {
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 20_000).seed(3)).unwrap();
    let view = g.heap.view();
    let roots = g.heap.roots();
    for &deque in DequeKind::VARIANTS.iter() {
        let mut c = MarkerConfig::with_workers(4);
        c.set_deque(deque);
        c.set_deque_capacity(256);
        let mut marker = Marker::new(c).unwrap();
        // Warm up: buffers reach their steady-state capacity.
        let expect = marker.mark(&view, roots).stats.objects_marked();
        for _ in 0..100 {
            marker.mark(&view, roots);
        }
        let before = resident_bytes();
        for _ in 0..1000 {
            let m = marker.mark(&view, roots);
            assert_eq!(m.stats.objects_marked(), expect);
        }
        let after = resident_bytes();
        let growth = after.saturating_sub(before);
        eprintln!("{deque}: resident memory {before} -> {after} bytes over 1,000 collections");
        // Buffers whose high-water marks depend on scheduling (private
        // stacks, weak-reference lists, retired deque arrays awaiting epoch
        // reclamation) may still grow a little; anything that leaked even
        // 4 KiB per collection, let alone a word per object (16,000 live
        // objects), would exceed this bound.
        assert!(
            growth <= 4 << 20,
            "{deque}: resident memory grew by {growth} bytes over 1,000 collections ({before} -> {after})"
        );
    }
}
