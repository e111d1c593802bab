//! The worked example of `docs/snapshot-format.md`, byte for byte.

use stealmark_heap::snapshot::format::file_checksum;
use stealmark_heap::{HeapGraph, HeapSink, MarkIndex, Slot, Snapshot, SnapshotWriter};

/// The file of section 9 of the format document, as listed there.
const EXAMPLE: &str = "
89 53 4d 48 0d 0a 1a 0a  01 00 00 00 00 00 00 00
f0 00 00 00 00 00 00 00  02 00 00 00 00 00 00 00
01 00 00 00 00 00 00 00  01 00 00 00 00 00 00 00
09 00 00 00 00 00 00 00  03 00 00 00 CC CC CC CC
02 00 00 00 00 00 00 00  88 00 00 00 00 00 00 00
48 00 00 00 00 00 00 00  01 00 00 00 00 00 00 00
d0 00 00 00 00 00 00 00  08 00 00 00 00 00 00 00
03 00 00 00 00 00 00 00  d8 00 00 00 00 00 00 00
18 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
02 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
28 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
02 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
09 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
08 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
04 00 00 00 00 00 00 00  50 61 69 72 00 00 00 00
";

fn example_bytes() -> Vec<u8> {
    EXAMPLE
        .split_whitespace()
        .map(|h| {
            if h == "CC" {
                0
            } else {
                u8::from_str_radix(h, 16).unwrap()
            }
        })
        .collect()
}

#[test]
fn format_example_is_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pair.smh");
    let mut w = SnapshotWriter::create(&path).unwrap();
    let t = w.type_name("Pair").unwrap();
    let a = w.next_pos();
    let b = a.add_words(4).unwrap();
    w.object(t, &[Slot::strong(b), Slot::NULL], 0).unwrap();
    w.object(t, &[Slot::weak(a), Slot::NULL], 0).unwrap();
    w.root(a).unwrap();
    let summary = w.finish().unwrap();
    let written = std::fs::read(&path).unwrap();
    let mut expected = example_bytes();
    assert_eq!(expected.len(), 240);
    let checksum = file_checksum(&expected);
    // The spec's CRC, computed bit by bit over the file with a zero checksum
    // field, agrees with the library's.
    assert_eq!(crc32(&expected), checksum);
    expected[60..64].copy_from_slice(&checksum.to_le_bytes());
    assert_eq!(written, expected);
    assert_eq!(summary.checksum, checksum);
    assert_eq!(
        checksum, 0x3E38_B5A7,
        "update section 9 of docs/snapshot-format.md"
    );
    // The CRC-32 check value quoted in section 7.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    let snap = Snapshot::from_bytes(&written).unwrap();
    let view = snap.view();
    assert_eq!(view.object_count(), 2);
    assert_eq!(view.mark_index(snap.roots()[0]), 1);
}

/// CRC-32/ISO-HDLC, bit by bit, as section 7 defines it.
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
