//! Snapshot round trips, and the corruption suite: every malformed input is a
//! typed error naming the section and byte offset, never a panic.

use std::io::Cursor;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_heap::snapshot::format::{file_checksum, ENTRY_LEN, HEADER_LEN};
use stealmark_heap::{
    generate, generate_heap, mark_sequential, oracle, write_heap, ArenaLayout, GenConfig,
    HeapGraph, HeapSink, HeapView, MarkIndex, ObjRef, OracleInput, Problem, Section, Shape,
    Snapshot, SnapshotError, SnapshotWriter,
};

/// The snapshot file that `write` makes, written to memory (no file: the
/// tests that use it also run under Miri, whose isolation has no files).
fn written(write: impl FnOnce(&mut SnapshotWriter<&mut Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let mut w = SnapshotWriter::new(&mut out).unwrap();
    write(&mut w);
    w.finish().unwrap();
    out.into_inner()
}

/// A small valid snapshot of `shape` in `layout`, and the snapshot itself.
fn sample_of(shape: Shape, objects: u64, layout: ArenaLayout) -> (Vec<u8>, Snapshot) {
    let config = GenConfig::new(shape, objects).seed(5).layout(Some(layout));
    let bytes = written(|w| {
        generate(&config, w).unwrap();
    });
    let snap = Snapshot::from_bytes(&bytes).unwrap();
    (bytes, snap)
}

/// The objects of the samples. Under Miri, where each test copies and
/// validates its sample dozens of times, fewer: still every section, and
/// the weak shape's minimum.
const RUNTIME_OBJECTS: u64 = if cfg!(miri) { 40 } else { 300 };
const WEAK_OBJECTS: u64 = if cfg!(miri) { 100 } else { 400 };

/// A small valid wide snapshot with every section, and the snapshot itself.
fn sample() -> (Vec<u8>, Snapshot) {
    sample_of(Shape::Runtime, RUNTIME_OBJECTS, ArenaLayout::Wide)
}

fn reseal(bytes: &mut [u8]) {
    let c = file_checksum(bytes);
    bytes[60..64].copy_from_slice(&c.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// A copy of `bytes` changed by `edit`, opened: the error's section, offset
/// and problem.
fn fails_edited(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> (Section, u64, Problem) {
    let mut b = bytes.to_vec();
    edit(&mut b);
    fails(&b)
}

/// `bytes` with the word at `at` set to `value`, resealed, opened.
fn fails_with_u64(bytes: &[u8], at: usize, value: u64) -> (Section, u64, Problem) {
    fails_edited(bytes, |b| {
        put_u64(b, at, value);
        reseal(b);
    })
}

/// `bytes` with the half word at `at` set to `value`, resealed, opened.
fn fails_with_u32(bytes: &[u8], at: usize, value: u32) -> (Section, u64, Problem) {
    fails_edited(bytes, |b| {
        put_u32(b, at, value);
        reseal(b);
    })
}

/// `bytes` with the byte at `at` set to `value`, resealed, opened.
fn fails_with_byte(bytes: &[u8], at: usize, value: u8) -> (Section, u64, Problem) {
    fails_edited(bytes, |b| {
        b[at] = value;
        reseal(b);
    })
}

/// `bytes` with header byte `at` set to `value`, resealed, opened: the
/// problem, which must be reported at that byte of the header.
fn header_fault(bytes: &[u8], at: usize, value: u8) -> Problem {
    let (section, offset, problem) = fails_with_byte(bytes, at, value);
    assert_eq!((section, offset), (Section::Header, at as u64), "{problem}");
    problem
}

/// Opens `bytes` and returns the error's section, offset and problem.
fn fails(bytes: &[u8]) -> (Section, u64, Problem) {
    match Snapshot::from_bytes(bytes) {
        Ok(_) => panic!("corrupt snapshot accepted"),
        Err(SnapshotError::Invalid {
            section,
            offset,
            problem,
        }) => (section, offset, problem),
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// Section table entries: (kind, entry offset, section offset, length).
fn sections(bytes: &[u8]) -> Vec<(u32, usize, u64, u64)> {
    let count = u32::from_le_bytes(bytes[56..60].try_into().unwrap()) as usize;
    (0..count)
        .map(|i| {
            let e = HEADER_LEN as usize + i * ENTRY_LEN as usize;
            let kind = u32::from_le_bytes(bytes[e..e + 4].try_into().unwrap());
            (kind, e, get_u64(bytes, e + 8), get_u64(bytes, e + 16))
        })
        .collect()
}

/// The file offset of the first non-null slot, and of its target.
fn first_slot(snap: &Snapshot) -> (usize, u64) {
    let view = snap.view();
    let arena = snap.arena_range().start;
    for obj in view.objects() {
        for (k, slot) in view.slots(obj).enumerate() {
            if let Some((target, _)) = slot {
                let at = arena + view.pos(obj).offset() as usize + 16 + 8 * k;
                return (at, view.pos(target).offset());
            }
        }
    }
    panic!("no slot")
}

#[test]
#[cfg_attr(
    miri,
    ignore = "maps or writes files, which Miri's isolation does not allow"
)]
fn round_trip_every_shape_through_the_streaming_writer() {
    let dir = tempfile::tempdir().unwrap();
    for &shape in Shape::ALL {
        let garbage = if shape == Shape::EphemeronChain {
            0.0
        } else {
            0.1
        };
        let config = GenConfig::new(shape, 3_000).seed(9).garbage(garbage);
        let mem = generate_heap(&config).unwrap();
        let path = dir.path().join(format!("{shape}.smh"));
        let mut w = SnapshotWriter::create(&path).unwrap();
        let info = generate(&config, &mut w).unwrap();
        let summary = w.finish().unwrap();
        assert_eq!(info, mem.info);
        assert_eq!(summary.objects, info.objects);
        let snap = Snapshot::open(&path).unwrap();
        assert!(snap.is_mapped());
        assert_eq!(
            snap.view().to_words(),
            mem.heap.view().to_words(),
            "{shape}"
        );
        assert_eq!(snap.type_count(), mem.heap.type_count());
        for t in 0..snap.type_count() as u32 {
            assert_eq!(snap.type_name(t), mem.heap.type_name(t));
        }
        let positions = |view: HeapView<'_>, objs: &[ObjRef]| -> Vec<_> {
            objs.iter().map(|&o| view.pos(o)).collect()
        };
        assert_eq!(
            positions(snap.view(), snap.finalizable()),
            positions(mem.heap.view(), mem.heap.finalizable()),
            "{shape}"
        );
        let contract = |roots, finalizable| OracleInput {
            finalizable,
            ..OracleInput::roots(roots)
        };
        let a = oracle(&snap.view(), &contract(snap.roots(), snap.finalizable()));
        let b = oracle(
            &mem.heap.view(),
            &contract(mem.heap.roots(), mem.heap.finalizable()),
        );
        assert_eq!(a.marked, b.marked, "{shape}");
        assert_eq!(
            (
                a.objects,
                a.bytes,
                a.weak_refs.len(),
                a.cleared.len(),
                a.to_finalize.len()
            ),
            (
                b.objects,
                b.bytes,
                b.weak_refs.len(),
                b.cleared.len(),
                b.to_finalize.len()
            ),
            "{shape}"
        );
        // write_heap of the in-memory heap gives the identical file.
        let again = dir.path().join("again.smh");
        write_heap(&mem.heap, &again).unwrap();
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&path).unwrap(),
            "{shape}"
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "writes a 200,000-object file, which Miri's isolation does not allow"
)]
fn progress_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.smh");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut w = SnapshotWriter::create(&path)
        .unwrap()
        .on_progress(move |p| log.lock().unwrap().push(p));
    generate(&GenConfig::new(Shape::List, 200_000), &mut w).unwrap();
    let summary = w.finish().unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 4, "{} reports", seen.len());
    assert!(seen
        .windows(2)
        .all(|p| p[0].bytes <= p[1].bytes && p[0].objects <= p[1].objects));
    assert_eq!(seen.last().unwrap().bytes, summary.file_len);
    assert_eq!(seen.last().unwrap().objects, 200_000);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "maps or writes files, which Miri's isolation does not allow"
)]
fn empty_heap_and_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.smh");
    SnapshotWriter::create(&path).unwrap().finish().unwrap();
    let snap = Snapshot::open(&path).unwrap();
    assert_eq!(snap.view().object_count(), 0);
    assert!(snap.roots().is_empty());
    assert!(matches!(
        Snapshot::open(dir.path().join("nope")),
        Err(SnapshotError::Io { .. })
    ));
    std::fs::write(&path, b"").unwrap();
    let err = Snapshot::open(&path).unwrap_err();
    assert_eq!(err.location(), Some((Section::Header, 0)));
}

#[test]
fn truncation_at_every_section_boundary() {
    let (bytes, _) = sample();
    let secs = sections(&bytes);
    let table_end = HEADER_LEN + ENTRY_LEN * secs.len() as u64;
    let mut cuts = vec![
        (0, Section::Header),
        (8, Section::Header),
        (63, Section::Header),
    ];
    cuts.push((HEADER_LEN, Section::SectionTable));
    cuts.push((table_end - 8, Section::SectionTable));
    for &(kind, _, offset, length) in secs.iter().filter(|s| s.3 > 0) {
        // Cut exactly at the start of the section, inside it, and one word
        // before its end: the section is reported as truncated.
        for cut in [offset, offset + length / 2, offset + length - 8] {
            cuts.push((cut, section_kind(kind)));
        }
    }
    for (cut, section) in cuts {
        let (s, offset, problem) = fails(&bytes[..cut as usize]);
        assert_eq!(s, section, "cut at {cut}: {problem}");
        assert!(
            matches!(problem, Problem::Truncated { .. }),
            "cut at {cut}: {problem}"
        );
        assert!(offset <= cut, "cut at {cut}: offset {offset}");
    }
    // Every other length fails too (without panicking); under Miri, every
    // 257th (each cut copies and validates the file).
    for cut in (0..bytes.len()).step_by(if cfg!(miri) { 257 } else { 1 }) {
        assert!(Snapshot::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // And a longer file (trailing bytes) as well.
    let long = |b: &mut Vec<u8>| {
        b.extend_from_slice(&[0; 8]);
        reseal(b);
    };
    assert!(matches!(
        fails_edited(&bytes, long),
        (Section::File, 16, Problem::LengthMismatch { .. })
    ));
}

#[test]
fn wrong_magic() {
    let (bytes, _) = sample();
    assert!(matches!(
        fails_edited(&bytes, |b| b[1] = b'X'),
        (Section::Header, 0, Problem::BadMagic { .. })
    ));
    assert!(matches!(
        fails(b"{\"not\": \"a snapshot\"}"),
        (Section::Header, 0, Problem::BadMagic { .. })
    ));
}

/// The version 1 sample file (`tests/data`).
fn v1_sample() -> Vec<u8> {
    include_bytes!("../data/runtime-500-v1.smh").to_vec()
}

/// A header byte set to a value its field cannot hold is reported at that
/// byte of the header, with the field's problem: the version, the flags
/// (none in version 1), the section count (at most three in version 1).
#[test]
fn bad_header_fields_are_reported_at_their_byte() {
    let (v2, _) = sample();
    let v1 = v1_sample();
    type Expected = fn(&Problem) -> bool;
    let cases: [(&str, &[u8], usize, u8, Expected); 5] = [
        ("v2 version 3", &v2, 8, 3, |p| {
            matches!(p, Problem::UnsupportedVersion { found: 3, .. })
        }),
        ("v2 reserved flag", &v2, 12, 4, |p| {
            matches!(p, Problem::ReservedNotZero { .. })
        }),
        ("v2 section count", &v2, 56, 7, |p| {
            matches!(p, Problem::CountOutOfRange { .. })
        }),
        ("v1 flags", &v1, 12, 1, |p| {
            matches!(p, Problem::ReservedNotZero { value: 1 })
        }),
        ("v1 fourth section", &v1, 56, 4, |p| {
            matches!(p, Problem::CountOutOfRange { .. })
        }),
    ];
    for (what, bytes, at, value, expected) in cases {
        let problem = header_fault(bytes, at, value);
        assert!(expected(&problem), "{what}: {problem}");
    }
}

#[test]
fn reference_out_of_range_and_not_at_an_object_start() {
    let (bytes, snap) = sample();
    let (at, target) = first_slot(&snap);
    let arena_bytes = snap.view().arena_bytes();
    let slot_fails = |value| fails_with_u64(&bytes, at, value);
    assert_eq!(slot_fails(arena_bytes).0, Section::Arena);
    assert!(
        matches!(slot_fails(arena_bytes), (_, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64)
    );
    assert!(
        matches!(slot_fails(!7), (_, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64)
    );
    assert!(
        matches!(slot_fails(target + 8), (Section::Arena, o, Problem::NotAnObjectStart { .. }) if o == at as u64)
    );
    assert!(matches!(
        slot_fails(target | 2),
        (Section::Arena, _, Problem::ReservedSlotBits { .. })
    ));
    assert!(matches!(
        slot_fails(1),
        (Section::Arena, _, Problem::WeakNull)
    ));
    // Roots: out of range, weak, null.
    let roots = sections(&bytes).into_iter().find(|s| s.0 == 1).unwrap().2 as usize;
    for (value, weak_or_null) in [
        (arena_bytes + 8, false),
        (get_u64(&bytes, roots) | 1, true),
        (0, true),
    ] {
        let (s, o, p) = fails_with_u64(&bytes, roots, value);
        assert_eq!((s, o), (Section::Roots, roots as u64));
        assert_eq!(matches!(p, Problem::BadRoot { .. }), weak_or_null, "{p}");
    }
}

#[test]
fn misaligned_overlapping_and_missing_sections() {
    let (bytes, _) = sample();
    for (kind, entry, offset, length) in sections(&bytes) {
        let (_, o, p) = fails_with_u64(&bytes, entry + 8, offset + 4);
        assert_eq!(o, entry as u64 + 8);
        assert!(matches!(p, Problem::Misaligned { .. }), "kind {kind}: {p}");
        assert!(
            matches!(fails_with_u64(&bytes, entry + 16, length + 4), (_, o, Problem::Misaligned { .. }) if o == entry as u64 + 16)
        );
        let p = fails_with_u64(&bytes, entry + 8, offset + 8).2;
        assert!(
            matches!(p, Problem::NotContiguous { .. } | Problem::Truncated { .. }),
            "{p}"
        );
        assert!(matches!(
            fails_with_u64(&bytes, entry + 16, u64::MAX - 7).2,
            Problem::OutOfFile { .. }
        ));
        assert!(
            matches!(fails_with_byte(&bytes, entry, 9), (Section::SectionTable, o, Problem::UnknownSectionKind { kind: 9 }) if o == entry as u64)
        );
    }
    let secs = sections(&bytes);
    assert!(matches!(
        fails_with_byte(&bytes, secs[1].1, secs[0].0 as u8).2,
        Problem::DuplicateSection { .. }
    ));
}

#[test]
fn counts_near_u64_max() {
    let (bytes, _) = sample();
    for (field, expect_overflow) in [(32usize, true), (48, true), (40, false), (24, false)] {
        for value in [u64::MAX, u64::MAX - 1, u64::MAX / 8 + 1, 1 << 63] {
            let (section, offset, problem) = fails_with_u64(&bytes, field, value);
            assert_eq!(
                (section, offset),
                (Section::Header, field as u64),
                "{problem}"
            );
            if expect_overflow {
                assert!(
                    matches!(problem, Problem::CountOutOfRange { .. }),
                    "{problem}"
                );
            }
        }
    }
    // An arena section claiming a huge object.
    let (bytes, snap) = sample();
    let first = snap.arena_range().start + 8;
    assert!(
        matches!(fails_with_u64(&bytes, first, u64::MAX), (Section::Arena, o, Problem::ObjectOverrun { .. }) if o == first as u64)
    );
}

#[test]
fn checksum_mismatch() {
    let (bytes, snap) = sample();
    let view = snap.view();
    let obj = view
        .objects()
        .find(|&o| view.header(o).payload_words > 0)
        .unwrap();
    let h = view.header(obj);
    let at = snap.arena_range().start + view.pos(obj).offset() as usize + 16 + 8 * h.slots as usize;
    assert!(matches!(
        fails_edited(&bytes, |b| b[at] ^= 0x40),
        (Section::Header, 60, Problem::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        fails_edited(&bytes, |b| b[61] ^= 1),
        (Section::Header, 60, Problem::ChecksumMismatch { .. })
    ));
}

#[test]
fn type_table_and_header_errors() {
    let (bytes, snap) = sample();
    let types = sections(&bytes).into_iter().find(|s| s.0 == 3).unwrap();
    // A type id past the table.
    let first_type_word = snap.arena_range().start + 16;
    assert!(matches!(
        fails_with_u64(&bytes, first_type_word, 1000),
        (Section::Arena, _, Problem::TypeIdOutOfRange { .. })
    ));
    assert!(matches!(
        fails_with_u64(&bytes, first_type_word, 1 << 40),
        (Section::Arena, _, Problem::ReservedHeaderBits { .. })
    ));
    // Name offsets out of order, and invalid UTF-8.
    assert!(matches!(
        fails_with_u64(&bytes, types.2 as usize + 8, 1 << 20),
        (Section::TypeNames, _, Problem::BadNameOffset { .. })
    ));
    let count = get_u64(&bytes, 40) as usize;
    let names = types.2 as usize + (count + 1) * 8;
    assert!(matches!(
        fails_with_byte(&bytes, names, 0xff),
        (Section::TypeNames, _, Problem::InvalidUtf8)
    ));
    // Object count disagreeing with the arena.
    assert!(matches!(
        fails_with_u64(&bytes, 24, get_u64(&bytes, 24) + 1),
        (Section::Header, 24, Problem::ObjectCountMismatch { .. })
    ));
    // Arena word 0.
    assert!(matches!(
        fails_with_u64(&bytes, snap.arena_range().start, 8),
        (Section::Arena, _, Problem::ReservedWordNotZero { .. })
    ));
}

/// Overwrites one to three random bytes of `bytes`, `runs` times (every
/// other copy resealed, so that the checksum does not catch it), and hands
/// every copy that opens to `accepted`.
fn corrupt_randomly(bytes: &[u8], rng: &mut Pcg64, runs: usize, accepted: impl Fn(&Snapshot)) {
    for i in 0..runs {
        let mut b = bytes.to_vec();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..b.len() as u64) as usize;
            b[at] = rng.random();
        }
        if i % 2 == 0 {
            reseal(&mut b);
        }
        if let Ok(snap) = Snapshot::from_bytes(&b) {
            accepted(&snap);
        }
    }
}

#[test]
fn random_corruption_never_panics() {
    let (bytes, _) = sample();
    let mut rng = Pcg64::seed_from_u64(1);
    let runs = if cfg!(miri) { 16 } else { 3000 };
    corrupt_randomly(&bytes, &mut rng, runs, |snap| {
        // Whatever was accepted is safe to mark.
        let r = mark_sequential(&snap.view(), snap.roots());
        assert!(r.objects <= snap.view().object_count());
        assert!(snap.view().mark_index_bound() > 0);
    });
}

/// The whole contract on a snapshot: roots, finalizable objects, soft
/// references cleared.
fn contract(snap: &Snapshot) -> stealmark_heap::OracleResult {
    oracle(
        &snap.view(),
        &OracleInput {
            roots: snap.roots(),
            finalizable: snap.finalizable(),
            soft_refs: stealmark_heap::SoftRefs::ClearAll,
        },
    )
}

/// The section entry of `kind`: (entry offset, section offset, length).
fn section(bytes: &[u8], kind: u32) -> (usize, usize, usize) {
    let (_, e, o, l) = sections(bytes).into_iter().find(|s| s.0 == kind).unwrap();
    (e, o as usize, l as usize)
}

/// The file offset of slot `k` of `obj` in a compressed snapshot.
fn compressed_slot(snap: &Snapshot, obj: stealmark_heap::ObjRef, k: usize) -> usize {
    snap.arena_range().start + snap.view().pos(obj).offset() as usize + 12 + 4 * k
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "maps or writes files, which Miri's isolation does not allow"
)]
fn round_trip_every_shape_in_both_layouts() {
    let dir = tempfile::tempdir().unwrap();
    for &shape in Shape::ALL {
        for layout in ArenaLayout::ALL {
            let config = GenConfig::new(shape, 2_000)
                .seed(9)
                .garbage(if shape == Shape::EphemeronChain {
                    0.0
                } else {
                    0.1
                })
                .layout(Some(layout));
            let mem = generate_heap(&config).unwrap();
            let path = dir.path().join(format!("{shape}-{layout}.smh"));
            let mut w = SnapshotWriter::create(&path).unwrap();
            assert_eq!(generate(&config, &mut w).unwrap(), mem.info);
            let summary = w.finish().unwrap();
            assert_eq!(summary.format.layout, layout);
            let snap = Snapshot::open(&path).unwrap();
            assert_eq!(
                snap.view().to_words(),
                mem.heap.view().to_words(),
                "{shape} {layout}"
            );
            assert_eq!(snap.finalizable().len(), mem.heap.finalizable().len());
            let a = contract(&snap);
            if let Some(reachable) = mem.info.reachable {
                assert_eq!(a.objects, reachable, "{shape} {layout}");
            }
            assert_eq!(snap.view().runtime_bytes(), mem.heap.view().runtime_bytes());
            let again = dir.path().join("again.smh");
            write_heap(&mem.heap, &again).unwrap();
            assert_eq!(
                std::fs::read(&again).unwrap(),
                std::fs::read(&path).unwrap()
            );
        }
    }
}

#[test]
fn compressed_truncation_at_every_section_boundary() {
    let (bytes, _) = sample_of(Shape::Weak, WEAK_OBJECTS, ArenaLayout::Compressed);
    assert_eq!(bytes[12], 1, "the compressed flag");
    for (kind, _, offset, length) in sections(&bytes).into_iter().filter(|s| s.3 > 0) {
        for cut in [offset, offset + length / 2, offset + length - 8] {
            let (section, at, problem) = fails(&bytes[..cut as usize]);
            assert_eq!(section, section_kind(kind), "cut at {cut}: {problem}");
            assert!(matches!(problem, Problem::Truncated { .. }), "{problem}");
            assert!(at <= cut);
        }
    }
    for cut in (0..bytes.len()).step_by(if cfg!(miri) { 257 } else { 3 }) {
        assert!(Snapshot::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
}

/// The section a section kind names.
fn section_kind(kind: u32) -> Section {
    match kind {
        1 => Section::Roots,
        2 => Section::Arena,
        3 => Section::TypeNames,
        4 => Section::TypeKinds,
        5 => Section::Finalizable,
        _ => Section::WeakSlots,
    }
}

#[test]
fn compressed_references_padding_and_headers() {
    let (bytes, snap) = sample_of(Shape::Weak, WEAK_OBJECTS, ArenaLayout::Compressed);
    let view = snap.view();
    let arena_words = snap.header().arena_words as u32;
    // A plain object with an even slot count (so, padding) and a slot.
    let obj = view
        .objects()
        .find(|&o| {
            let h = view.header(o);
            view.type_kind(h.type_id) == stealmark_heap::TypeKind::Plain
                && h.slots % 2 == 0
                && h.slots > 0
        })
        .unwrap();
    let slots = view.header(obj).slots as usize;
    let at = compressed_slot(&snap, obj, 0);
    let fails_with = |value: u32, at: usize| fails_with_u32(&bytes, at, value);
    assert!(matches!(
        fails_with(arena_words, at),
        (Section::Arena, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64
    ));
    assert!(matches!(
        fails_with(u32::MAX, at),
        (Section::Arena, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64
    ));
    let target = (view.pos(obj).offset() / 8) as u32;
    assert!(matches!(
        fails_with(target + 1, at),
        (Section::Arena, o, Problem::NotAnObjectStart { .. }) if o == at as u64
    ));
    let pad = compressed_slot(&snap, obj, slots);
    assert!(matches!(
        fails_with(7, pad),
        (Section::Arena, o, Problem::ReservedNotZero { value: 7 }) if o == pad as u64
    ));
    // A slot count that runs past the arena.
    let layout_word = snap.arena_range().start + view.pos(obj).offset() as usize;
    assert!(matches!(
        fails_with(u32::MAX, layout_word),
        (Section::Arena, o, Problem::ObjectOverrun { .. }) if o == layout_word as u64
    ));
    // A type id past the type names.
    assert!(matches!(
        fails_with(1000, layout_word + 8),
        (Section::Arena, o, Problem::TypeIdOutOfRange { .. }) if o == layout_word as u64 + 8
    ));
}

#[test]
fn bad_kinds_and_objects_that_break_their_kind() {
    let (bytes, snap) = sample_of(Shape::Weak, WEAK_OBJECTS, ArenaLayout::Compressed);
    let view = snap.view();
    let (_, kinds, len) = section(&bytes, 4);
    assert_eq!(len, 8);
    let types = snap.type_count();
    assert!(matches!(
        fails_with_byte(&bytes, kinds + 1, 9),
        (Section::TypeKinds, o, Problem::BadTypeKind { value: 9 }) if o == kinds as u64 + 1
    ));
    assert_eq!(types, 8, "no padding byte to corrupt");
    // `Node` (type 0, three slots) made an ephemeron table: an odd slot count.
    let first_node = view.objects().find(|&o| view.type_id(o) == 0).unwrap();
    let at = (snap.arena_range().start as u64) + view.pos(first_node).offset();
    assert!(matches!(
        fails_with_byte(&bytes, kinds, 4),
        (Section::Arena, o, Problem::OddEphemeronTable { slots: 3, .. }) if o == at
    ));
    // An entry whose key is null but whose value is not.
    let table = view
        .objects()
        .find(|&o| {
            view.type_kind(view.type_id(o)) == stealmark_heap::TypeKind::EphemeronTable
                && view.slots(o).next().flatten().is_some()
                && view.slots(o).nth(1).flatten().is_some()
        })
        .unwrap();
    let value = compressed_slot(&snap, table, 1) as u64;
    assert!(matches!(
        fails_with_u32(&bytes, compressed_slot(&snap, table, 0), 0),
        (Section::Arena, o, Problem::EphemeronValueWithoutKey) if o == value
    ));
    // A weak-ref type whose object has no slot: in the wide runtime heap,
    // type 0 (`Object`) has objects without slots. And a kind for a type
    // past the 11 type names, in the padding of the kinds.
    let (bytes, snap) = sample();
    let (_, kinds, len) = section(&bytes, 4);
    let types = snap.type_count();
    assert_eq!((types, len), (11, 16));
    assert!(matches!(
        fails_with_byte(&bytes, kinds + types, 1),
        (Section::TypeKinds, o, Problem::KindPastTypeCount { .. }) if o == (kinds + types) as u64
    ));
    let view = snap.view();
    let first = view.objects().find(|&o| view.type_id(o) == 0).unwrap();
    let at = (snap.arena_range().start as u64) + view.pos(first).offset();
    assert!(matches!(
        fails_with_byte(&bytes, kinds, 1),
        (Section::Arena, o, Problem::ReferenceWithoutReferent { .. }) if o == at
    ));
    // A wide weak bit in a plain type.
    let plain = view
        .objects()
        .find(|&o| {
            view.type_kind(view.type_id(o)) == stealmark_heap::TypeKind::Plain
                && view.slots(o).next().flatten().is_some()
        })
        .unwrap();
    let at = snap.arena_range().start + view.pos(plain).offset() as usize + 16;
    assert!(matches!(
        fails_with_u64(&bytes, at, get_u64(&bytes, at) | 1),
        (Section::Arena, o, Problem::WeakSlotNotAllowed { .. }) if o == at as u64
    ));
}

#[test]
fn finalizable_entries_are_checked_like_roots() {
    for layout in ArenaLayout::ALL {
        let (bytes, snap) = sample_of(Shape::Weak, WEAK_OBJECTS, layout);
        assert!(!snap.finalizable().is_empty());
        let (_, fin, _) = section(&bytes, 5);
        let first = get_u64(&bytes, fin);
        let arena_bytes = snap.view().arena_bytes();
        for (value, problem) in [
            (0, "bad"),
            (first | 1, "bad"),
            (first + 8, "start"),
            (arena_bytes, "range"),
        ] {
            let (s, o, p) = fails_with_u64(&bytes, fin, value);
            assert_eq!((s, o), (Section::Finalizable, fin as u64), "{p}");
            match problem {
                "bad" => assert!(matches!(p, Problem::BadFinalizable { .. }), "{p}"),
                "start" => assert!(matches!(p, Problem::NotAnObjectStart { .. }), "{p}"),
                _ => assert!(matches!(p, Problem::ReferenceOutOfRange { .. }), "{p}"),
            }
        }
    }
}

/// A compressed snapshot with per-slot weak references: an array whose
/// every third slot is weak, and a plain object.
fn weak_slots_sample() -> Vec<u8> {
    written(weak_slots)
}

fn weak_slots(w: &mut SnapshotWriter<&mut Cursor<Vec<u8>>>) {
    w.set_format(stealmark_heap::ArenaFormat::COMPRESSED)
        .unwrap();
    let array = w.type_name("WeakArray").unwrap();
    let plain = w.type_name("Plain").unwrap();
    let a = w.next_pos();
    let p = a
        .add_words(
            stealmark_heap::ObjectHeader::new(array, 9, 0).size_words(ArenaLayout::Compressed),
        )
        .unwrap();
    let slots: Vec<stealmark_heap::Slot> = (0..9)
        .map(|i| stealmark_heap::Slot::new(if i % 2 == 0 { p } else { a }, i % 3 == 0))
        .collect();
    w.object(array, &slots, 0).unwrap();
    w.object(plain, &[stealmark_heap::Slot::strong(a)], 1)
        .unwrap();
    w.root(a).unwrap();
}

#[test]
fn weak_slot_list_entries_are_checked() {
    let bytes = weak_slots_sample();
    let snap = Snapshot::from_bytes(&bytes).unwrap();
    let r = mark_sequential(&snap.view(), snap.roots());
    assert_eq!(r.weak_refs.len(), 3);
    let (_, list, len) = section(&bytes, 6);
    assert_eq!(len, 24);
    // Half words 5, 8, 11: slots 0, 3, 6 of the array at word 1.
    assert_eq!([0, 8, 16].map(|i| get_u64(&bytes, list + i)), [5, 8, 11]);
    for (entry, value, check) in [
        (1, 5, "order"),
        (1, 4, "order"),
        (1, 6, "ok"),
        (2, 14, "slot"),      // the padding half word after the array
        (2, 17, "kind"),      // the plain object's slot
        (2, 18, "slot"),      // past the plain object's slots
        (2, 1 << 40, "slot"), // past the arena
    ] {
        let mut b = bytes.clone();
        put_u64(&mut b, list + 8 * entry, value);
        reseal(&mut b);
        if check == "ok" {
            Snapshot::from_bytes(&b).unwrap();
            continue;
        }
        let (s, o, p) = fails(&b);
        assert_eq!(
            (s, o),
            (Section::WeakSlots, (list + 8 * entry) as u64),
            "{p}"
        );
        match check {
            "order" => assert!(matches!(p, Problem::WeakSlotsNotIncreasing { .. }), "{p}"),
            "kind" => assert!(matches!(p, Problem::WeakSlotNotAllowed { .. }), "{p}"),
            _ => assert!(matches!(p, Problem::WeakSlotNotASlot { .. }), "{p}"),
        }
    }
    // A null slot named weak.
    let mut b = bytes.clone();
    let array_slot_3 = snap.arena_range().start + 8 + 12 + 12;
    put_u32(&mut b, array_slot_3, 0);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::WeakSlots, o, Problem::WeakSlotNotASlot { value: 8 }) if o == (list + 8) as u64
    ));
    // A weak-slot section in a wide file.
    let (mut b, _) = sample();
    let (entry, offset, _) = section(&b, 6);
    assert_eq!(offset, b.len());
    b.extend_from_slice(&40u64.to_le_bytes());
    put_u64(&mut b, entry + 16, 8);
    let len = b.len() as u64;
    put_u64(&mut b, 16, len);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::WeakSlots, o, Problem::WeakSlotsInWideLayout { count: 1 }) if o == offset as u64
    ));
}

#[test]
fn version_1_rules_hold_for_version_1_files() {
    let v1 = v1_sample();
    Snapshot::from_bytes(&v1).unwrap();
    // No section kinds past 3 (its flags and section count:
    // `bad_header_fields_are_reported_at_their_byte`).
    assert!(matches!(
        fails_with_byte(&v1, HEADER_LEN as usize, 4),
        (
            Section::SectionTable,
            64,
            Problem::UnknownSectionKind { kind: 4 }
        )
    ));
    // A version 2 file read as version 1 fails on its sections, typed.
    assert!(matches!(
        fails_with_byte(&sample().0, 8, 1),
        (Section::Header, 56, Problem::CountOutOfRange { .. })
    ));
}

#[test]
fn flags_that_lie_are_errors_not_panics() {
    for layout in ArenaLayout::ALL {
        let (bytes, _) = sample_of(Shape::Weak, WEAK_OBJECTS, layout);
        for flip in [1u8, 2, 3] {
            let mut b = bytes.clone();
            b[12] ^= flip;
            reseal(&mut b);
            assert!(Snapshot::from_bytes(&b).is_err(), "{layout} flags ^ {flip}");
        }
    }
}

#[test]
fn random_corruption_of_v2_files_never_panics() {
    let samples = [
        sample_of(Shape::Weak, WEAK_OBJECTS.min(300), ArenaLayout::Compressed).0,
        sample_of(Shape::Weak, WEAK_OBJECTS.min(300), ArenaLayout::Wide).0,
        sample_of(Shape::EphemeronChain, 50, ArenaLayout::Compressed).0,
        weak_slots_sample(),
    ];
    let mut rng = Pcg64::seed_from_u64(2);
    for bytes in &samples {
        corrupt_randomly(bytes, &mut rng, if cfg!(miri) { 8 } else { 1500 }, |snap| {
            // Whatever was accepted is safe to mark, with the whole
            // contract.
            let r = contract(snap);
            assert!(r.objects <= snap.view().object_count());
        });
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "maps a file copy-on-write (mmap), which Miri's isolation does not allow"
)]
fn copy_on_write_snapshots_take_stores_and_leave_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cow.smh");
    let config = GenConfig::new(Shape::BinaryTree, 10_000);
    let mut w = SnapshotWriter::create(&path).unwrap();
    generate(&config, &mut w).unwrap();
    w.finish().unwrap();
    let before = std::fs::read(&path).unwrap();
    let ro = Snapshot::open(&path).unwrap();
    let root = ro.roots()[0];
    assert_eq!(
        ro.view().store_slot(root, 0, None),
        Err(stealmark_heap::StoreError::ReadOnly)
    );
    assert!(ro.bytes().is_some());
    let snap = Snapshot::open_copy_on_write(&path).unwrap();
    assert!(snap.bytes().is_none() && snap.view().is_writable());
    let view = snap.view();
    let root = snap.roots()[0];
    // Cut the tree below the root's left child while another thread marks
    // again and again: every marking sees a valid heap.
    let left = view.slots(root).next().flatten().unwrap().0;
    std::thread::scope(|s| {
        let marker = s.spawn(|| {
            (0..20)
                .map(|_| mark_sequential(&view, snap.roots()).objects)
                .collect::<Vec<_>>()
        });
        for _ in 0..200 {
            assert!(view.store_slot(root, 0, None).is_ok());
            assert_eq!(view.store_slot(root, 0, Some(left)), Ok(None));
        }
        let counts = marker.join().unwrap();
        assert!(counts.iter().all(|&c| c <= 10_000 && c > 0));
    });
    assert_eq!(view.store_slot(root, 0, None), Ok(Some(left)));
    let marked = mark_sequential(&view, snap.roots()).objects;
    assert!(marked < 10_000 / 2 + 1);
    drop(snap);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is unchanged"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "maps or writes files, which Miri's isolation does not allow"
)]
fn the_fuzz_seeds_open_and_mark() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/snapshot_open");
    let mut versions = std::collections::BTreeSet::new();
    let mut layouts = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "smh") {
            let snap = Snapshot::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            versions.insert(snap.header().version);
            layouts.insert(snap.view().layout().name());
            contract(&snap);
        }
    }
    assert_eq!(versions.into_iter().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(layouts.len(), 2);
}
