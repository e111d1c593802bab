//! Writes the seed corpus of the `snapshot_open` fuzz target: a few small,
//! valid snapshots covering every section, both layouts, runtime sizes,
//! every type kind, and a version 1 file.
//!
//! `cargo run -p stealmark-heap --example fuzz_seeds -- fuzz/corpus/snapshot_open`

use std::path::PathBuf;

use stealmark_heap::{
    generate, ArenaFormat, ArenaLayout, GenConfig, HeapSink, ObjectHeader, Shape, Slot,
    SnapshotWriter, TypeKind,
};

/// The format document, whose section 13 lists a version 1 file.
const FORMAT: &str = include_str!("../../docs/snapshot-format.md");

/// The bytes of the version 1 example (the listing of section 13).
fn version_1_example() -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let at = FORMAT.find("## 13. Version 1").ok_or("no section 13")?;
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
    std::fs::write(dir.join("v1-pair.smh"), version_1_example()?)?;
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
    let layout = ArenaLayout::Compressed;
    let mut w = SnapshotWriter::create(dir.join("weakmap-compressed.smh"))?;
    w.set_format(ArenaFormat::COMPRESSED.with_runtime_sizes())?;
    let map = w.type_name("Map")?;
    let weak_ref = w.type_name("WeakRef")?;
    let node = w.type_name("Node")?;
    w.type_kind(map, TypeKind::EphemeronTable)?;
    w.type_kind(weak_ref, TypeKind::WeakRef)?;
    let headers = [
        ObjectHeader::sized(map, 2, 24, layout),
        ObjectHeader::sized(weak_ref, 1, 16, layout),
        ObjectHeader::sized(node, 2, 16, layout),
        ObjectHeader::sized(node, 0, 16, layout),
    ];
    let mut pos = vec![w.next_pos()];
    for h in &headers[..3] {
        let next = pos
            .last()
            .and_then(|p| p.add_words(h.size_words(layout)))
            .ok_or("overflow")?;
        pos.push(next);
    }
    let slots: [&[Slot]; 4] = [
        &[Slot::strong(pos[2]), Slot::strong(pos[3])],
        &[Slot::strong(pos[3])],
        &[Slot::strong(pos[1]), Slot::weak(pos[0])],
        &[],
    ];
    for (h, s) in headers.iter().zip(slots) {
        w.begin_object(*h)?;
        w.slots(s)?;
    }
    w.root(pos[0])?;
    w.root(pos[1])?;
    w.finalizable(pos[3])?;
    w.finish()?;
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
