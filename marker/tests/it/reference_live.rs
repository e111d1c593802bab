//! The reference markers (the sequential marker and the replay floor) count
//! live objects exactly as the engine does when asked to, and not at all
//! otherwise, so that `stealmark bench --reference` compares like with like.

use crate::common::Dyn;

use stealmark_heap::{generate_heap, ArenaLayout, GenConfig, HeapGraph, Shape};
use stealmark_marker::sequential::{LiveCount, Replay, SequentialMarker};
use stealmark_marker::{Marker, MarkerConfig};

#[test]
fn reference_markers_count_live_as_the_engine_does() {
    for shape in [
        Shape::Runtime,
        Shape::Weak,
        Shape::BinaryTree,
        Shape::PowerLaw,
    ] {
        for layout in [ArenaLayout::Compressed, ArenaLayout::Wide] {
            // The reference markers trace strong slots only.
            let g = generate_heap(
                &GenConfig::new(shape, 5000)
                    .seed(11)
                    .layout(Some(layout))
                    .all_strong(shape == Shape::Weak),
            )
            .unwrap();
            let (view, roots) = (g.heap.view(), g.heap.roots());
            let what = format!("{shape:?} {layout:?}");
            for workers in [1, 2] {
                let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
                let report = marker.mark(&Dyn::of(&view), roots).report();
                let engine = LiveCount {
                    objects: report.live_objects(),
                    bytes: report.live_bytes(),
                    footprint_bytes: report.live_footprint_bytes(),
                    by_type: report.live_by_type().to_vec(),
                };
                assert!(engine.objects > 0 && engine.bytes > 0, "{what}");
                assert!(!engine.by_type.is_empty(), "{what}: a typed heap");
                let mut seq = SequentialMarker::new(8).count_live(true);
                seq.mark(&view, roots);
                assert_eq!(seq.live(), &engine, "{what}: sequential, {workers} workers");
                let mut floor = Replay::record(&view, roots).count_live(true);
                floor.run(&view, roots, 8);
                assert_eq!(floor.live(), &engine, "{what}: floor, {workers} workers");
            }
            let mut seq = SequentialMarker::new(8);
            let marked = seq.mark(&view, roots).count();
            assert!(marked > 0);
            assert_eq!(seq.live(), &LiveCount::default(), "{what}: not counting");
            let mut floor = Replay::record(&view, roots);
            floor.run(&view, roots, 8);
            assert_eq!(floor.live(), &LiveCount::default(), "{what}: not counting");
        }
    }
}
