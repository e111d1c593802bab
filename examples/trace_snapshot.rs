//! Loading a heap snapshot and marking it through the library.
//!
//! ```sh
//! cargo run --release --example trace_snapshot -- heap.smk [workers]
//! cargo run --release --example trace_snapshot            # writes a small demo snapshot first
//! ```
//!
//! The steps a tool or a test harness takes to trace a snapshot:
//! 1. map and validate the file ([`Snapshot::open`]): after this, every
//!    reference in it is known to point at an object, so the marker reads the
//!    mapping directly, without a copy and without per-slot checks;
//! 2. start a [`Marker`] once (its workers park between collections);
//! 3. mark from the snapshot's roots, as often as needed, and read the
//!    bitmap and the statistics;
//! 4. check the marked set against the sequential oracle.

use std::error::Error;
use std::path::PathBuf;

use stealmark::heap::{
    generate, mark_sequential, GenConfig, HeapGraph, MarkIndex, Shape, Snapshot, SnapshotWriter,
};
use stealmark::marker::{DequeKind, Marker, MarkerConfig};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let path = match args.next() {
        Some(path) => PathBuf::from(path),
        None => write_demo_snapshot()?,
    };
    let workers: usize = match args.next() {
        Some(w) => w.parse()?,
        None => std::thread::available_parallelism().map_or(2, |n| n.get()),
    };

    // 1. Map and validate.
    let snapshot = Snapshot::open(&path)?;
    let heap = snapshot.view();
    let roots = snapshot.roots();
    println!(
        "{}: {} objects, {} roots, {} arena bytes",
        path.display(),
        heap.object_count(),
        roots.len(),
        heap.arena_bytes()
    );

    // 2. Start the engine: StealHalf deques, the default balancing policy.
    let mut config = MarkerConfig::with_workers(workers);
    config.set_deque(DequeKind::StealHalf);
    let mut marker = Marker::new(config)?;

    // 3. Mark a few times (the first phase warms caches and threads).
    for phase in 1..=3 {
        let marking = marker.mark(&heap, roots);
        let stats = marking.stats;
        println!(
            "phase {phase}: marked {} objects in {:.3} ms, balance {:.3} (max/mean objects scanned per worker), {} weak references seen",
            marking.bitmap.count(),
            stats.pause_ns as f64 / 1e6,
            stats.balance(),
            marking.weak_refs().count(),
        );
    }
    let marking = marker.mark(&heap, roots);
    for (i, worker) in marking.stats.workers.iter().enumerate() {
        let s = &worker.stats;
        println!(
            "  worker {i}: scanned {} objects, stole {} items in {}/{} steals, busy {:.3} ms",
            s.objects_scanned,
            s.items_stolen,
            s.steal_successes,
            s.steal_attempts,
            s.busy_ns as f64 / 1e6
        );
    }

    // 4. The oracle: a plain depth-first marker. The sets must be equal.
    let oracle = mark_sequential(&heap, roots);
    let same = heap
        .objects()
        .all(|o| oracle.marked.contains(heap.mark_index(o)) == marking.is_marked(&heap, o));
    println!(
        "oracle: {} objects; parallel marked set {} the oracle's",
        oracle.objects,
        if same { "equals" } else { "DIFFERS FROM" }
    );
    if !same {
        return Err("the parallel marker disagrees with the oracle".into());
    }
    Ok(())
}

/// Streams a 200,000-object `runtime` heap to a temporary file.
fn write_demo_snapshot() -> Result<PathBuf, Box<dyn Error>> {
    let path = std::env::temp_dir().join("stealmark-example.smk");
    let mut writer = SnapshotWriter::create(&path)?;
    let info = generate(&GenConfig::new(Shape::Runtime, 200_000), &mut writer)?;
    writer.finish()?;
    println!(
        "wrote {} ({} objects, {} garbage)",
        path.display(),
        info.objects,
        info.garbage
    );
    Ok(path)
}
