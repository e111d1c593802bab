//! With the test-only `inject-delays` feature, workers yield and sleep at
//! random points (before steals, while idle, while marking). Marking must
//! still find exactly the oracle's set and must never hang.
//!
//! Run: `cargo test -p stealmark-marker --features inject-delays --test delays`

#![cfg(feature = "inject-delays")]

use std::sync::mpsc;
use std::time::Duration;

use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
use stealmark_marker::{BalancePolicy, DequeKind, Marker, MarkerConfig, StealAmount};
use strum::VariantArray;

#[test]
fn delayed_workers_never_lose_work_or_hang() {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let shapes = [
            Shape::Random,
            Shape::BinaryTree,
            Shape::List,
            Shape::BigArray,
            Shape::Wide,
        ];
        let heaps: Vec<_> = shapes
            .iter()
            .map(|&s| {
                let g = generate_heap(&GenConfig::new(s, 4000).seed(5)).unwrap();
                let o = mark_sequential(&g.heap.view(), g.heap.roots());
                (g, o)
            })
            .collect();
        for &deque in DequeKind::VARIANTS.iter().filter(|d| d.exactly_once()) {
            for &workers in &[2, 3, 8, 16] {
                for &policy in BalancePolicy::VARIANTS {
                    let mut c = MarkerConfig::with_workers(workers);
                    c.deque = deque;
                    c.policy = policy;
                    c.steal = StealAmount::VARIANTS[workers % 2];
                    c.deque_capacity = 32;
                    c.array_chunk = 128;
                    c.balance_interval = 4;
                    c.seed = workers as u64;
                    let mut marker = Marker::new(c).unwrap();
                    for (g, o) in &heaps {
                        let m = marker.mark(&g.heap.view(), g.heap.roots());
                        assert!(
                            *m.bitmap == o.marked,
                            "{} {deque} {workers} {policy}: {} marked, oracle {}",
                            g.info.shape,
                            m.bitmap.count(),
                            o.objects
                        );
                    }
                    tx.send(()).unwrap();
                }
            }
        }
    });
    let configs = DequeKind::VARIANTS
        .iter()
        .filter(|d| d.exactly_once())
        .count()
        * 4
        * BalancePolicy::VARIANTS.len();
    for i in 0..configs {
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            assert!(worker.is_finished(), "configuration {i} hung for 60 s");
            break;
        }
    }
    worker.join().expect("a marking assertion failed");
}
