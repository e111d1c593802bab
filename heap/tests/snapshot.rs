//! Snapshot round trips, and the corruption suite: every malformed input is a
//! typed error naming the section and byte offset, never a panic.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_heap::snapshot::format::{file_checksum, ENTRY_LEN, HEADER_LEN};
use stealmark_heap::{
    generate, generate_heap, mark_sequential, write_heap, GenConfig, HeapGraph, MarkIndex, Problem,
    Section, Shape, Snapshot, SnapshotError, SnapshotWriter,
};

/// A small valid snapshot with every section, and the snapshot itself.
fn sample() -> (Vec<u8>, Snapshot) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.smh");
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 300).seed(5)).unwrap();
    write_heap(&g.heap, &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let snap = Snapshot::from_bytes(&bytes).unwrap();
    (bytes, snap)
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
fn round_trip_every_shape_through_the_streaming_writer() {
    let dir = tempfile::tempdir().unwrap();
    for &shape in Shape::ALL {
        let config = GenConfig::new(shape, 3_000).seed(9).garbage(0.1);
        let mem = generate_heap(&config).unwrap();
        let path = dir.path().join(format!("{shape}.smh"));
        let mut w = SnapshotWriter::create(&path).unwrap();
        let info = generate(&config, &mut w).unwrap();
        let summary = w.finish().unwrap();
        assert_eq!(info, mem.info);
        assert_eq!(summary.objects, info.objects);
        let snap = Snapshot::open(&path).unwrap();
        assert!(snap.is_mapped());
        assert_eq!(snap.view().words(), mem.heap.view().words(), "{shape}");
        assert_eq!(snap.type_count(), mem.heap.type_count());
        for t in 0..snap.type_count() as u32 {
            assert_eq!(snap.type_name(t), mem.heap.type_name(t));
        }
        let a = mark_sequential(&snap.view(), snap.roots());
        let b = mark_sequential(&mem.heap.view(), mem.heap.roots());
        assert_eq!(a.marked, b.marked, "{shape}");
        assert_eq!(
            (a.objects, a.bytes, a.weak_refs.len()),
            (b.objects, b.bytes, b.weak_refs.len())
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
    let section_of = |kind| match kind {
        1 => Section::Roots,
        2 => Section::Arena,
        _ => Section::TypeNames,
    };
    let mut cuts = vec![
        (0, Section::Header),
        (8, Section::Header),
        (63, Section::Header),
    ];
    cuts.push((HEADER_LEN, Section::SectionTable));
    cuts.push((table_end - 8, Section::SectionTable));
    for &(kind, _, offset, length) in &secs {
        // Cut exactly at the start of the section, inside it, and one word
        // before its end: the section is reported as truncated.
        for cut in [offset, offset + length / 2, offset + length - 8] {
            cuts.push((cut, section_of(kind)));
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
    // Every other length fails too (without panicking).
    for cut in 0..bytes.len() {
        assert!(Snapshot::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // And a longer file (trailing bytes) as well.
    let mut long = bytes.clone();
    long.extend_from_slice(&[0; 8]);
    reseal(&mut long);
    assert!(matches!(
        fails(&long),
        (Section::File, 16, Problem::LengthMismatch { .. })
    ));
}

#[test]
fn wrong_magic_and_version_and_flags() {
    let (bytes, _) = sample();
    let mut b = bytes.clone();
    b[1] = b'X';
    assert!(matches!(
        fails(&b),
        (Section::Header, 0, Problem::BadMagic { .. })
    ));
    assert!(matches!(
        fails(b"{\"not\": \"a snapshot\"}"),
        (Section::Header, 0, Problem::BadMagic { .. })
    ));
    let mut b = bytes.clone();
    b[8] = 2;
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (
            Section::Header,
            8,
            Problem::UnsupportedVersion { found: 2, .. }
        )
    ));
    let mut b = bytes.clone();
    b[12] = 1;
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Header, 12, Problem::ReservedNotZero { .. })
    ));
}

#[test]
fn reference_out_of_range_and_not_at_an_object_start() {
    let (bytes, snap) = sample();
    let (at, target) = first_slot(&snap);
    let arena_bytes = snap.view().arena_bytes();
    let mut b = bytes.clone();
    put_u64(&mut b, at, arena_bytes);
    reseal(&mut b);
    assert_eq!(fails(&b).0, Section::Arena);
    assert!(matches!(fails(&b), (_, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64));
    put_u64(&mut b, at, !7);
    reseal(&mut b);
    assert!(matches!(fails(&b), (_, o, Problem::ReferenceOutOfRange { .. }) if o == at as u64));
    put_u64(&mut b, at, target + 8);
    reseal(&mut b);
    assert!(
        matches!(fails(&b), (Section::Arena, o, Problem::NotAnObjectStart { .. }) if o == at as u64)
    );
    put_u64(&mut b, at, target | 2);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Arena, _, Problem::ReservedSlotBits { .. })
    ));
    put_u64(&mut b, at, 1);
    reseal(&mut b);
    assert!(matches!(fails(&b), (Section::Arena, _, Problem::WeakNull)));
    // Roots: out of range, weak, null.
    let roots = sections(&bytes).into_iter().find(|s| s.0 == 1).unwrap().2 as usize;
    for (value, weak_or_null) in [
        (arena_bytes + 8, false),
        (get_u64(&bytes, roots) | 1, true),
        (0, true),
    ] {
        let mut b = bytes.clone();
        put_u64(&mut b, roots, value);
        reseal(&mut b);
        let (s, o, p) = fails(&b);
        assert_eq!((s, o), (Section::Roots, roots as u64));
        assert_eq!(matches!(p, Problem::BadRoot { .. }), weak_or_null, "{p}");
    }
}

#[test]
fn misaligned_overlapping_and_missing_sections() {
    let (bytes, _) = sample();
    for (kind, entry, offset, length) in sections(&bytes) {
        let mut b = bytes.clone();
        put_u64(&mut b, entry + 8, offset + 4);
        reseal(&mut b);
        let (_, o, p) = fails(&b);
        assert_eq!(o, entry as u64 + 8);
        assert!(matches!(p, Problem::Misaligned { .. }), "kind {kind}: {p}");
        let mut b = bytes.clone();
        put_u64(&mut b, entry + 16, length + 4);
        reseal(&mut b);
        assert!(matches!(fails(&b), (_, o, Problem::Misaligned { .. }) if o == entry as u64 + 16));
        let mut b = bytes.clone();
        put_u64(&mut b, entry + 8, offset + 8);
        reseal(&mut b);
        let p = fails(&b).2;
        assert!(
            matches!(p, Problem::NotContiguous { .. } | Problem::Truncated { .. }),
            "{p}"
        );
        let mut b = bytes.clone();
        put_u64(&mut b, entry + 16, u64::MAX - 7);
        reseal(&mut b);
        assert!(matches!(fails(&b).2, Problem::OutOfFile { .. }));
        let mut b = bytes.clone();
        b[entry] = 9;
        reseal(&mut b);
        assert!(
            matches!(fails(&b), (Section::SectionTable, o, Problem::UnknownSectionKind { kind: 9 }) if o == entry as u64)
        );
    }
    let secs = sections(&bytes);
    let mut b = bytes.clone();
    b[secs[1].1] = secs[0].0 as u8;
    reseal(&mut b);
    assert!(matches!(fails(&b).2, Problem::DuplicateSection { .. }));
    let mut b = bytes.clone();
    b[56] = 7;
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Header, 56, Problem::CountOutOfRange { .. })
    ));
}

#[test]
fn counts_near_u64_max() {
    let (bytes, _) = sample();
    for (field, expect_overflow) in [(32usize, true), (48, true), (40, false), (24, false)] {
        for value in [u64::MAX, u64::MAX - 1, u64::MAX / 8 + 1, 1 << 63] {
            let mut b = bytes.clone();
            put_u64(&mut b, field, value);
            reseal(&mut b);
            let (section, offset, problem) = fails(&b);
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
    let mut b = bytes.clone();
    put_u64(&mut b, first, u64::MAX);
    reseal(&mut b);
    assert!(
        matches!(fails(&b), (Section::Arena, o, Problem::ObjectOverrun { .. }) if o == first as u64)
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
    let mut b = bytes.clone();
    b[at] ^= 0x40;
    assert!(matches!(
        fails(&b),
        (Section::Header, 60, Problem::ChecksumMismatch { .. })
    ));
    let mut b = bytes.clone();
    b[61] ^= 1;
    assert!(matches!(
        fails(&b),
        (Section::Header, 60, Problem::ChecksumMismatch { .. })
    ));
}

#[test]
fn type_table_and_header_errors() {
    let (bytes, snap) = sample();
    let types = sections(&bytes).into_iter().find(|s| s.0 == 3).unwrap();
    // A type id past the table.
    let first_type_word = snap.arena_range().start + 16;
    let mut b = bytes.clone();
    put_u64(&mut b, first_type_word, 1000);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Arena, _, Problem::TypeIdOutOfRange { .. })
    ));
    put_u64(&mut b, first_type_word, 1 << 40);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Arena, _, Problem::ReservedHeaderBits { .. })
    ));
    // Name offsets out of order, and invalid UTF-8.
    let mut b = bytes.clone();
    put_u64(&mut b, types.2 as usize + 8, 1 << 20);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::TypeNames, _, Problem::BadNameOffset { .. })
    ));
    let count = get_u64(&bytes, 40) as usize;
    let names = types.2 as usize + (count + 1) * 8;
    let mut b = bytes.clone();
    b[names] = 0xff;
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::TypeNames, _, Problem::InvalidUtf8)
    ));
    // Object count disagreeing with the arena.
    let mut b = bytes.clone();
    put_u64(&mut b, 24, get_u64(&bytes, 24) + 1);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Header, 24, Problem::ObjectCountMismatch { .. })
    ));
    // Arena word 0.
    let mut b = bytes.clone();
    put_u64(&mut b, snap.arena_range().start, 8);
    reseal(&mut b);
    assert!(matches!(
        fails(&b),
        (Section::Arena, _, Problem::ReservedWordNotZero { .. })
    ));
}

#[test]
fn random_corruption_never_panics() {
    let (bytes, _) = sample();
    let mut rng = Pcg64::seed_from_u64(1);
    for i in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..b.len() as u64) as usize;
            b[at] = rng.random();
        }
        if i % 2 == 0 {
            reseal(&mut b);
        }
        if let Ok(snap) = Snapshot::from_bytes(&b) {
            // Whatever was accepted is safe to mark.
            let r = mark_sequential(&snap.view(), snap.roots());
            assert!(r.objects <= snap.view().object_count());
            assert!(snap.view().mark_index_bound() > 0);
        }
    }
}
