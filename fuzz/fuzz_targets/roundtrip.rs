//! The writer round trip: import the fuzz input into a [`RecordSink`], then
//! again with the real [`SnapshotWriter`] (into memory), open what it wrote
//! with the loader, and check that the snapshot holds exactly what was
//! imported: the format, every object's position and header (type, slots,
//! payload, runtime size), every slot's target and kind, the roots, the
//! finalizable objects, the type names and kinds; that the import summary
//! counts them right; and that the writer's summary and checksum match the
//! file. In both layouts.

// Shared by several targets, each of which uses a part.
#![allow(dead_code)]

use std::io::Cursor;

use stealmark_heap::snapshot::format::file_checksum;
use stealmark_heap::{ArenaLayout, HeapGraph, HeapSink, SlotKind, Snapshot, SnapshotWriter};
use stealmark_import::{ImportError, ImportOptions, ImportSummary};

use crate::record_sink::{RecordSink, Recorded};

/// The largest arena written, in words (16 MiB): importers size objects
/// by their runtime sizes, which a few bytes of input can make gigabytes.
const MAX_ARENA_WORDS: u64 = 1 << 21;

/// One of the importers.
pub trait Importer {
    fn import<S: HeapSink>(
        data: &[u8],
        sink: &mut S,
        options: &ImportOptions,
    ) -> Result<ImportSummary, ImportError>;
}

/// Runs the round trip on `data` in both layouts.
pub fn check<I: Importer>(data: &[u8]) {
    for layout in ArenaLayout::ALL {
        let options = ImportOptions::layout(Some(layout));
        let mut rec = RecordSink::default();
        let Ok(summary) = I::import(data, &mut rec, &options) else {
            continue;
        };
        let rec = rec.finish();
        assert_eq!(rec.format.layout, layout);
        if rec.arena_words > MAX_ARENA_WORDS {
            continue;
        }
        let mut file = Cursor::new(Vec::new());
        let mut w = SnapshotWriter::new(&mut file).expect("writing to memory");
        let again = I::import(data, &mut w, &options)
            .unwrap_or_else(|e| panic!("the writer rejected what the importer emitted: {e}"));
        assert_eq!(again, summary, "the import into the writer differs");
        let written = w
            .finish()
            .unwrap_or_else(|e| panic!("the writer rejected what the importer emitted: {e}"));
        let bytes = file.into_inner();
        let snap = Snapshot::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("the loader rejected what the writer wrote: {e}"));
        // Built for fuzzing, the loader does not enforce the checksum.
        let checksum = file_checksum(&bytes);
        assert_eq!(snap.header().checksum, checksum, "checksum");
        assert_eq!(written.checksum, checksum);
        assert_eq!(written.file_len, bytes.len() as u64);
        assert_eq!(written.objects, rec.objects.len() as u64);
        assert_eq!(written.arena_words, rec.arena_words);
        assert_eq!(written.roots, rec.roots.len() as u64);
        assert_eq!(written.type_names, rec.names.len() as u64);
        assert_eq!(written.finalizable, rec.finalizable.len() as u64);
        assert_eq!(written.format, rec.format);
        compare(data, &rec, &summary, &snap);
    }
}

/// Checks that `snap` holds exactly `rec`, and that `summary` counts it.
fn compare(data: &[u8], rec: &Recorded, summary: &ImportSummary, snap: &Snapshot) {
    let view = snap.view();
    assert_eq!(view.format(), rec.format, "format");
    assert_eq!(view.object_count(), rec.objects.len() as u64, "objects");
    let mut counts = [0u64; 4]; // non-null, weak, soft, phantom
    let mut runtime_bytes = 0u64;
    let mut n = 0;
    for (i, obj) in view.objects().enumerate() {
        let (pos, header) = rec.objects[i];
        assert_eq!(view.pos(obj), pos, "object {i}'s position");
        assert_eq!(view.header(obj), header, "object {i}'s header");
        runtime_bytes += u64::from(header.runtime_size.expect("runtime sizes"));
        let kind = rec.kind(header.type_id);
        let want = rec.slots_of(i);
        assert_eq!(view.slots(obj).len(), want.len(), "object {i}'s slot count");
        for (j, (got, &slot)) in view.slots(obj).zip(want).enumerate() {
            let got = got.map(|(target, k)| (view.pos(target), k));
            let expected = slot
                .target()
                .map(|t| (t, Recorded::slot_kind(kind, slot, j)));
            assert_eq!(got, expected, "object {i}'s slot {j}");
            if let Some((_, k)) = expected {
                counts[0] += 1;
                match k {
                    SlotKind::Weak => counts[1] += 1,
                    SlotKind::Soft => counts[2] += 1,
                    SlotKind::Phantom => counts[3] += 1,
                    _ => {}
                }
            }
        }
        n += 1;
    }
    assert_eq!(n, rec.objects.len(), "objects walked");
    assert_eq!(view.runtime_bytes(), runtime_bytes, "runtime bytes");
    let positions =
        |refs: &[stealmark_heap::ObjRef]| -> Vec<_> { refs.iter().map(|&r| view.pos(r)).collect() };
    assert_eq!(positions(snap.roots()), rec.roots, "roots");
    assert_eq!(
        positions(snap.finalizable()),
        rec.finalizable,
        "finalizable"
    );
    assert_eq!(snap.type_count(), rec.names.len(), "type count");
    for (t, name) in rec.names.iter().enumerate() {
        let t = t as u32;
        assert_eq!(snap.type_name(t), Some(name.as_str()), "type {t}'s name");
        assert_eq!(view.type_kind(t), rec.kind(t), "type {t}'s kind");
    }
    let want = ImportSummary {
        input_bytes: data.len() as u64,
        objects: rec.objects.len() as u64,
        references: counts[0],
        weak_references: counts[1],
        soft_references: counts[2],
        phantom_references: counts[3],
        finalizable: rec.finalizable.len() as u64,
        layout: rec.format.layout,
        roots: rec.roots.len() as u64,
        types: rec.names.len() as u64,
        ..summary.clone()
    };
    assert_eq!(*summary, want, "the import summary");
}
