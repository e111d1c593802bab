//! Writes the seed corpus of the `snapshot_open` fuzz target: a few small,
//! valid snapshots covering every section and slot kind.
//!
//! `cargo run -p stealmark-heap --example fuzz_seeds -- fuzz/corpus/snapshot_open`

use std::path::PathBuf;

use stealmark_heap::{generate, GenConfig, HeapSink, Shape, Slot, SnapshotWriter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus/snapshot_open".into()),
    );
    std::fs::create_dir_all(&dir)?;
    SnapshotWriter::create(dir.join("empty.smh"))?.finish()?;
    let mut w = SnapshotWriter::create(dir.join("pair.smh"))?;
    let t = w.type_name("Pair")?;
    let a = w.next_pos();
    let b = a.add_words(4).ok_or("overflow")?;
    w.object(t, &[Slot::strong(b), Slot::NULL], 0)?;
    w.object(t, &[Slot::weak(a), Slot::strong(a)], 0)?;
    w.root(a)?;
    w.finish()?;
    for (shape, objects) in [
        (Shape::Runtime, 40),
        (Shape::List, 6),
        (Shape::Wide, 8),
        (Shape::Dag, 12),
        (Shape::PowerLaw, 10),
        (Shape::Random, 10),
    ] {
        let mut w = SnapshotWriter::create(dir.join(format!("{shape}.smh")))?;
        let config = GenConfig::new(shape, objects).seed(1).garbage(0.2);
        generate(&config, &mut w)?;
        w.finish()?;
    }
    Ok(())
}
