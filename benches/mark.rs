//! Criterion benchmarks of the mark engine: one collection of a generated
//! heap per iteration, for the sequential oracle, the sequential prefetching
//! marker, the replay floor and the engine over each deque kind at 1 and 2
//! workers. The heap size defaults to 1,000,000 objects; set
//! `STEALMARK_BENCH_OBJECTS` to change it.
//!
//! `cargo bench --bench mark`. For the targets as alternating
//! ratios, use `cargo run --release -p stealmark-bench --bin targets`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use stealmark::heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
use stealmark::marker::sequential::{Replay, SequentialMarker};
use stealmark::marker::{DequeKind, Marker, MarkerConfig};

fn objects() -> u64 {
    std::env::var("STEALMARK_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn mark(c: &mut Criterion) {
    let n = objects();
    for shape in [
        Shape::Random,
        Shape::PowerLaw,
        Shape::Runtime,
        Shape::BinaryTree,
        Shape::Wide,
    ] {
        let g = generate_heap(&GenConfig::new(shape, n)).expect("generator");
        let view = g.heap.view();
        let roots = g.heap.roots();
        let mut group = c.benchmark_group(format!("mark/{shape}"));
        group.sample_size(10);
        group.bench_function("oracle", |b| {
            b.iter(|| mark_sequential(&view, roots).objects)
        });
        let mut seq = SequentialMarker::new(8);
        group.bench_function("sequential-pf8", |b| {
            b.iter(|| seq.mark(&view, roots).count())
        });
        let mut replay = Replay::record(&view, roots);
        group.bench_function("replay-floor", |b| {
            b.iter(|| replay.run(&view, roots, 8).count())
        });
        for &deque in DequeKind::ALGORITHMS.iter() {
            for workers in [1, 2] {
                let mut config = MarkerConfig::with_workers(workers);
                config.set_deque(deque);
                let mut marker = Marker::new(config).expect("valid configuration");
                group.bench_function(BenchmarkId::new(deque.to_string(), workers), |b| {
                    b.iter(|| marker.mark(&view, roots).stats.objects_marked())
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, mark);
criterion_main!(benches);
