//! Fuzzes the snapshot loader: any input is either rejected with a typed
//! error or yields a heap that is safe to mark with the whole runtime
//! contract (roots, finalizable objects, every slot kind). Built with
//! `--cfg fuzzing`, the loader computes but does not enforce the checksum, so
//! the fuzzer can reach the structural checks behind it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stealmark_heap::{oracle, HeapGraph, MarkIndex, ObjectModel, OracleInput, Snapshot, SoftRefs};

fuzz_target!(|data: &[u8]| {
    if let Ok(snap) = Snapshot::from_bytes(data) {
        let view = snap.view();
        let input = OracleInput {
            roots: snap.roots(),
            finalizable: snap.finalizable(),
            soft_refs: SoftRefs::KeepAll,
        };
        let result = oracle(&view, &input);
        assert!(result.objects <= view.object_count());
        for obj in view.objects() {
            assert!(view.mark_index(obj) < view.mark_index_bound());
            assert!(view.slots(obj).len() == view.slot_count(obj));
        }
        for t in 0..snap.type_count() {
            assert!(snap.type_name(t as u32).is_some());
        }
    }
});
