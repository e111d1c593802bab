//! The worked examples of `docs/snapshot-format.md`, byte for byte: the
//! listings are read from the document itself, so the document, the writer
//! and the reader cannot drift apart. And version 1 files, written by the
//! version 1 writer, open and mark as their version 2 equivalents do.

use stealmark_heap::snapshot::format::file_checksum;
use stealmark_heap::{
    generate_heap, mark_sequential, oracle, ArenaFormat, ArenaLayout, GenConfig, HeapGraph,
    HeapSink, MarkIndex, ObjRef, ObjectHeader, OracleInput, OracleResult, Pos, Shape, Slot,
    SlotKind, Snapshot, SnapshotWriter, SoftRefs, TypeKind,
};

/// The format document.
const DOC: &str = include_str!("../../../docs/snapshot-format.md");

/// The bytes of the listing in the first code block after `heading`: each
/// row is an offset, then two-digit hex bytes, then a meaning. The offsets
/// must follow the bytes exactly.
fn listing(heading: &str) -> Vec<u8> {
    let at = DOC.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let rest = &DOC[at..];
    let start = rest.find("```\noffset").expect("a listing") + 4;
    let len = rest[start..].find("```").expect("the listing's end");
    let mut bytes = Vec::new();
    for line in rest[start..start + len].lines().skip(1) {
        let mut tokens = line.split_whitespace();
        let offset: usize = tokens.next().expect("an offset").parse().expect("a number");
        assert_eq!(
            offset,
            bytes.len(),
            "{heading}: the row at {offset} is misplaced"
        );
        let hex = |t: &&str| t.len() == 2 && t.chars().all(|c| c.is_ascii_hexdigit());
        bytes.extend(
            tokens
                .take_while(hex)
                .map(|t| u8::from_str_radix(t, 16).unwrap()),
        );
    }
    bytes
}

/// Checks a listed file's checksum field against the spec's CRC.
fn check_checksum(bytes: &[u8]) -> u32 {
    let stored = u32::from_le_bytes(bytes[60..64].try_into().unwrap());
    let mut zeroed = bytes.to_vec();
    zeroed[60..64].fill(0);
    // The spec's CRC, computed bit by bit over the file with a zero checksum
    // field, agrees with the library's and with the listing.
    assert_eq!(crc32(&zeroed), stored);
    assert_eq!(file_checksum(bytes), stored);
    stored
}

/// Writes the heap of section 12.1 and returns the file.
fn write_pair(dir: &std::path::Path) -> Vec<u8> {
    let path = dir.join("pair.smh");
    let mut w = SnapshotWriter::create(&path).unwrap();
    let t = w.type_name("Pair").unwrap();
    let a = w.next_pos();
    let b = a.add_words(4).unwrap();
    w.object(t, &[Slot::strong(b), Slot::NULL], 0).unwrap();
    w.object(t, &[Slot::weak(a), Slot::NULL], 0).unwrap();
    w.root(a).unwrap();
    let summary = w.finish().unwrap();
    let written = std::fs::read(&path).unwrap();
    assert_eq!(summary.checksum, file_checksum(&written));
    written
}

#[test]
fn wide_example_is_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let expected = listing("### 12.1");
    assert_eq!(expected.len(), 320);
    assert_eq!(check_checksum(&expected), 0x2600_0570);
    assert_eq!(write_pair(dir.path()), expected);
    let snap = Snapshot::from_bytes(&expected).unwrap();
    let view = snap.view();
    assert_eq!(view.object_count(), 2);
    assert_eq!(view.mark_index(snap.roots()[0]), 0);
    assert_eq!(view.mark_index_bound(), 5);
    assert_eq!(view.type_kind(0), TypeKind::WeakSlots);
    // The CRC-32 check value quoted in section 10.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}

#[test]
fn compressed_example_is_byte_exact_and_marks_as_described() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("weakmap.smh");
    let expected = listing("### 12.2");
    assert_eq!(expected.len(), 384);
    assert_eq!(check_checksum(&expected), 0x9EC7_5DD1);

    let layout = ArenaLayout::Compressed;
    let mut w = SnapshotWriter::create(&path).unwrap();
    w.set_format(ArenaFormat::COMPRESSED.with_runtime_sizes())
        .unwrap();
    let map = w.type_name("Map").unwrap();
    let weak_ref = w.type_name("WeakRef").unwrap();
    let node = w.type_name("Node").unwrap();
    w.type_kind(map, TypeKind::EphemeronTable).unwrap();
    w.type_kind(weak_ref, TypeKind::WeakRef).unwrap();
    let headers = [
        ObjectHeader::sized(map, 2, 24, layout),
        ObjectHeader::sized(weak_ref, 1, 16, layout),
        ObjectHeader::sized(node, 2, 16, layout),
        ObjectHeader::sized(node, 0, 16, layout),
    ];
    let mut pos = vec![w.next_pos()];
    for h in &headers[..3] {
        let next = pos.last().unwrap().add_words(h.size_words(layout)).unwrap();
        pos.push(next);
    }
    let [m, r, k, v] = [pos[0], pos[1], pos[2], pos[3]];
    assert_eq!(
        [m, r, k, v].map(Pos::offset),
        [8, 32, 48, 72],
        "the positions of section 12.2"
    );
    let slots: [&[Slot]; 4] = [
        &[Slot::strong(k), Slot::strong(v)],
        &[Slot::strong(v)],
        &[Slot::strong(r), Slot::weak(m)],
        &[],
    ];
    for (h, s) in headers.iter().zip(slots) {
        w.begin_object(*h).unwrap();
        w.slots(s).unwrap();
    }
    w.root(m).unwrap();
    w.root(r).unwrap();
    w.finalizable(v).unwrap();
    w.finish().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected);

    let snap = Snapshot::open(&path).unwrap();
    let view = snap.view();
    let refs: Vec<ObjRef> = [m, r, k, v].map(|p| view.obj_ref(p).unwrap()).to_vec();
    assert_eq!(
        refs.iter().map(|&o| view.mark_index(o)).collect::<Vec<_>>(),
        [0, 2, 3, 4]
    );
    assert_eq!(view.type_kind(node), TypeKind::WeakSlots);
    let res = oracle(
        &view,
        &OracleInput {
            roots: snap.roots(),
            finalizable: snap.finalizable(),
            soft_refs: SoftRefs::ClearAll,
        },
    );
    let (rm, rr, rk, rv) = (refs[0], refs[1], refs[2], refs[3]);
    assert_eq!(res.to_finalize, vec![rv]);
    assert_eq!((res.objects, res.bytes), (3, 56));
    assert!(!res.marked.contains(view.mark_index(rk)));
    let mut cleared: Vec<(ObjRef, usize, SlotKind)> = res
        .cleared
        .iter()
        .map(|w| (w.holder, w.slot, w.kind))
        .collect();
    cleared.sort();
    let mut want = vec![
        (rm, 0, SlotKind::Weak),
        (rm, 1, SlotKind::Ephemeron { key: rk }),
        (rr, 0, SlotKind::Weak),
    ];
    want.sort();
    assert_eq!(cleared, want);
}

/// A marking by positions: the marked objects, and the non-strong slots as
/// (holder, slot, target, kind with positions).
type ByPosition = (Vec<u64>, Vec<(u64, usize, u64, String)>);

/// A marking by positions (see [`ByPosition`]).
fn by_position<G: HeapGraph>(g: &G, r: &OracleResult) -> ByPosition {
    let view = g.view();
    let marked = view
        .objects()
        .filter(|&o| r.marked.contains(view.mark_index(o)))
        .map(|o| view.pos(o).offset())
        .collect();
    let mut weak: Vec<_> = r
        .weak_refs
        .iter()
        .map(|w| {
            let kind = match w.kind {
                SlotKind::Ephemeron { key } => format!("ephemeron {}", view.pos(key)),
                k => format!("{k:?}"),
            };
            (
                view.pos(w.holder).offset(),
                w.slot,
                view.pos(w.target).offset(),
                kind,
            )
        })
        .collect();
    weak.sort();
    (marked, weak)
}

#[test]
fn version_1_example_opens_and_marks_as_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = listing("## 13. Version 1");
    assert_eq!(v1.len(), 240);
    assert_eq!(&v1[8..12], &1u32.to_le_bytes());
    assert_eq!(check_checksum(&v1), 0x3E38_B5A7);
    let old = Snapshot::from_bytes(&v1).unwrap();
    assert_eq!(old.header().version, 1);
    assert_eq!(old.view().type_kind(0), TypeKind::WeakSlots);
    let new = Snapshot::from_bytes(&write_pair(dir.path())).unwrap();
    let a = mark_sequential(&old.view(), old.roots());
    let b = mark_sequential(&new.view(), new.roots());
    assert_eq!(by_position(&old, &a), by_position(&new, &b));
    assert_eq!(
        (a.objects, a.bytes, a.references),
        (b.objects, b.bytes, b.references)
    );
}

#[test]
fn a_runtime_heap_written_by_the_version_1_writer_marks_as_today() {
    // `heap/tests/data/runtime-500-v1.smh` was written by the format v1
    // writer (commit 1b393d0): `generate(&GenConfig::new(Shape::Runtime,
    // 500), &mut SnapshotWriter)`. Today's generator makes the same graph
    // (`WeakReference` is now a weak-ref type instead of a weak bit in its
    // slot 0).
    let old = Snapshot::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/runtime-500-v1.smh"
    ))
    .unwrap();
    assert_eq!(old.header().version, 1);
    let config = GenConfig::new(Shape::Runtime, 500).layout(Some(ArenaLayout::Wide));
    let new = generate_heap(&config).unwrap();
    assert_eq!(old.type_count(), new.heap.type_count());
    for t in 0..old.type_count() as u32 {
        assert_eq!(old.type_name(t), new.heap.type_name(t));
    }
    let a = mark_sequential(&old.view(), old.roots());
    let b = mark_sequential(&new.heap.view(), new.heap.roots());
    assert!(!a.weak_refs.is_empty());
    assert_eq!(by_position(&old, &a), by_position(&new.heap, &b));
    assert_eq!(
        (a.objects, a.bytes, a.references),
        (b.objects, b.bytes, b.references)
    );
    assert_eq!(Some(a.objects), new.info.reachable);
    // The arenas differ only in the weak bit of the weak references' slot 0.
    let (x, y) = (old.view().to_words(), new.heap.view().to_words());
    assert_eq!(x.len(), y.len());
    let differ: Vec<_> = x.iter().zip(&y).filter(|(p, q)| p != q).collect();
    assert!(differ.iter().all(|(p, q)| **p == **q | 1));
    let view = old.view();
    let weak_slots = view
        .objects()
        .flat_map(|o| view.slots(o))
        .flatten()
        .filter(|s| s.1 == SlotKind::Weak)
        .count();
    assert_eq!(differ.len(), weak_slots);
}

/// CRC-32/ISO-HDLC, bit by bit, as section 10 defines it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}
