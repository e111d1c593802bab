//! Times the sequential oracle (`mark_sequential`) on snapshot files, for
//! paired comparisons between layouts and between builds.
//!
//! ```text
//! cargo run --release -p stealmark-bench --bin oracle_ab -- gen SHAPE N FILE [wide|compressed]
//! cargo run --release -p stealmark-bench --bin oracle_ab -- time ITERATIONS FILE...
//! ```
//!
//! `time` maps each file, validates it, then marks it `ITERATIONS` times
//! and prints the minimum and median milliseconds of one marking.

use std::time::Instant;

use stealmark_heap::{
    generate, mark_sequential, ArenaLayout, GenConfig, HeapGraph, Shape, Snapshot, SnapshotWriter,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: oracle_ab gen SHAPE N FILE [wide|compressed] | time ITERATIONS FILE...";
    match args.first().map(String::as_str) {
        Some("gen") if args.len() >= 4 => {
            let shape: Shape = args[1].parse()?;
            let n: u64 = args[2].parse()?;
            let layout = match args.get(4).map(String::as_str) {
                None => None,
                Some("wide") => Some(ArenaLayout::Wide),
                Some("compressed") => Some(ArenaLayout::Compressed),
                Some(other) => return Err(format!("unknown layout {other}; {usage}").into()),
            };
            let mut w = SnapshotWriter::create(&args[3])?;
            generate(&GenConfig::new(shape, n).layout(layout), &mut w)?;
            w.finish()?;
        }
        Some("time") if args.len() >= 3 => {
            let iterations: usize = args[1].parse()?;
            for file in &args[2..] {
                let snap = Snapshot::open(file)?;
                let view = snap.view();
                let mut ms = Vec::with_capacity(iterations);
                let mut objects = 0;
                for _ in 0..iterations.max(1) {
                    let t = Instant::now();
                    objects = mark_sequential(&view, snap.roots()).objects;
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
                ms.sort_by(f64::total_cmp);
                println!(
                    "{file} objects {objects} min_ms {:.2} median_ms {:.2}",
                    ms[0],
                    ms[ms.len() / 2]
                );
            }
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
