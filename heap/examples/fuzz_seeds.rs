//! Writes the seed corpus of the `snapshot_open` fuzz target: a few small,
//! valid snapshots covering every section, both layouts, runtime sizes,
//! every type kind, and a version 1 file.
//!
//! `cargo run -p stealmark-heap --example fuzz_seeds -- fuzz/corpus/snapshot_open`

use std::path::PathBuf;

use stealmark_heap::{generate, ArenaLayout, GenConfig, HeapSink, Shape, Slot, SnapshotWriter};

/// The format document, whose sections 12.2 and 13 list a compressed file
/// and a version 1 file.
const FORMAT: &str = include_str!("../../docs/snapshot-format.md");

/// The bytes of the listing in the first code block after `heading` (each
/// row: an offset, two-digit hex bytes, a meaning); `tests/it/format_doc.rs`
/// checks that the listings are what the writer writes.
fn listing(heading: &str) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let at = FORMAT
        .find(heading)
        .ok_or_else(|| format!("no {heading}"))?;
    let rest = &FORMAT[at..];
    let start = rest.find("```\noffset").ok_or("no listing")? + 4;
    let len = rest[start..].find("```").ok_or("no listing end")?;
    let mut bytes = Vec::new();
    for line in rest[start..start + len].lines().skip(1) {
        let hex = line
            .split_whitespace()
            .skip(1)
            .take_while(|t| t.len() == 2 && t.chars().all(|c| c.is_ascii_hexdigit()));
        for t in hex {
            bytes.push(u8::from_str_radix(t, 16)?);
        }
    }
    Ok(bytes)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus/snapshot_open".into()),
    );
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("v1-pair.smh"), listing("## 13. Version 1")?)?;
    SnapshotWriter::create(dir.join("empty.smh"))?.finish()?;
    let mut w = SnapshotWriter::create(dir.join("pair.smh"))?;
    let t = w.type_name("Pair")?;
    let a = w.next_pos();
    let b = a.add_words(4).ok_or("overflow")?;
    w.object(t, &[Slot::strong(b), Slot::NULL], 0)?;
    w.object(t, &[Slot::weak(a), Slot::strong(a)], 0)?;
    w.root(a)?;
    w.finish()?;
    // The compressed example of the format document: an ephemeron table, a
    // weak reference, a per-slot weak slot, runtime sizes, a finalizable
    // object.
    std::fs::write(dir.join("weakmap-compressed.smh"), listing("### 12.2")?)?;
    for (shape, objects) in [
        (Shape::Runtime, 40),
        (Shape::List, 6),
        (Shape::Wide, 8),
        (Shape::Dag, 12),
        (Shape::PowerLaw, 10),
        (Shape::Random, 10),
        (Shape::Weak, 100),
        (Shape::EphemeronChain, 8),
    ] {
        for layout in ArenaLayout::ALL {
            let name = format!("{shape}-{layout}.smh");
            let mut w = SnapshotWriter::create(dir.join(name))?;
            let garbage = if shape == Shape::EphemeronChain {
                0.0
            } else {
                0.2
            };
            let config = GenConfig::new(shape, objects)
                .seed(1)
                .garbage(garbage)
                .layout(Some(layout));
            generate(&config, &mut w)?;
            w.finish()?;
        }
    }
    Ok(())
}
