//! With the test-only `inject-delays` feature, workers yield and sleep at
//! random points (before steals, while idle, while marking, when they find
//! non-strong slots, when they check the ephemeron key index). A collection
//! must still produce exactly the oracle's results (marked set, slots
//! scanned per object, so array chunks; non-strong slots found, slots
//! cleared, objects to finalize, counts) and must never hang.
//!
//! With the `idempotent` deque, the feature also delivers one popped item
//! in eight a second time, so that objects and array tokens are taken twice
//! on every run and the results must still be exact.
//!
//! Run: `cargo test -p stealmark-marker --features inject-delays --test delays`

use crate::common;

use std::sync::mpsc;
use std::time::Duration;

use common::{check, expect, inputs, policies, random_graph};
use stealmark_heap::{generate_heap, GenConfig, HeapGraph, OracleInput, Shape};
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
            Shape::Weak,
            Shape::EphemeronChain,
        ];
        let heaps: Vec<_> = shapes
            .iter()
            .map(|&s| {
                let g = generate_heap(&GenConfig::new(s, 4000).seed(5)).unwrap();
                let soft_refs = policies()[s as usize % 3];
                let input = OracleInput {
                    roots: g.heap.roots(),
                    finalizable: g.heap.finalizable(),
                    soft_refs,
                };
                let e = expect(&g.heap.view(), &input);
                (g, soft_refs, e)
            })
            .collect();
        let graphs: Vec<_> = (0..2).map(|s| random_graph(100 + s, 600)).collect();
        for &deque in DequeKind::VARIANTS.iter() {
            // Scans beyond one per object, and holder scans dropped as
            // duplicates: `check` asserts them zero for the exactly-once
            // kinds; the injected duplicates must make some here.
            let mut duplicates = (0, 0);
            for &workers in &[2, 3, 8, 16] {
                for &policy in BalancePolicy::VARIANTS {
                    let mut c = MarkerConfig::with_workers(workers);
                    c.set_deque(deque);
                    c.set_policy(policy);
                    c.set_steal(StealAmount::VARIANTS[workers % 2]);
                    c.set_deque_capacity(32);
                    c.set_array_chunk(128);
                    c.set_balance_interval(4);
                    c.set_private_work(workers != 3);
                    c.set_ephemeron_frozen_rounds([4, 0][workers % 2]);
                    c.set_seed(workers as u64);
                    let mut marker = Marker::new(c).unwrap();
                    for (g, soft_refs, e) in &heaps {
                        let what = format!("{} {deque} {workers} {policy}", g.info.shape);
                        let input = OracleInput {
                            roots: g.heap.roots(),
                            finalizable: g.heap.finalizable(),
                            soft_refs: *soft_refs,
                        };
                        let d = check(&mut marker, &g.heap.view(), &input, e, &what);
                        duplicates = (duplicates.0 + d.0, duplicates.1 + d.1);
                    }
                    marker
                        .reconfigure({
                            let mut c = marker.config().clone();
                            c.set_array_chunk(16);
                            c
                        })
                        .unwrap();
                    for (s, (g, roots, finalizable)) in graphs.iter().enumerate() {
                        for input in inputs(roots, finalizable) {
                            let soft_refs = input.soft_refs;
                            let what =
                                format!("graph {s} {deque} {workers} {policy} {soft_refs:?}");
                            let d = check(&mut marker, g, &input, &expect(g, &input), &what);
                            duplicates = (duplicates.0 + d.0, duplicates.1 + d.1);
                        }
                    }
                    tx.send(()).unwrap();
                }
            }
            if !deque.exactly_once() {
                assert!(
                    duplicates.0 > 0 && duplicates.1 > 0,
                    "{deque}: no duplicate scans ({duplicates:?}): the injection did not reach the defences"
                );
            }
        }
    });
    let configs = DequeKind::VARIANTS.len() * 4 * BalancePolicy::VARIANTS.len();
    for i in 0..configs {
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            assert!(worker.is_finished(), "configuration {i} hung for 60 s");
            break;
        }
    }
    worker.join().expect("a marking assertion failed");
}
