//! The writer round trip of the HPROF importer (see `roundtrip.rs`): what
//! the importer emits, written with the real `SnapshotWriter` and opened
//! with the loader, is exactly what was imported, in both layouts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stealmark_heap::HeapSink;
use stealmark_import::test_support::ChunkedSource;
use stealmark_import::{self as import, ImportError, ImportOptions, ImportSummary};

#[path = "import_sink.rs"]
mod import_sink;
#[path = "record_sink.rs"]
mod record_sink;
#[path = "roundtrip.rs"]
mod roundtrip;

struct Hprof;

impl roundtrip::Importer for Hprof {
    fn import<S: HeapSink>(
        data: &[u8],
        sink: &mut S,
        options: &ImportOptions,
    ) -> Result<ImportSummary, ImportError> {
        import::hprof_with(&ChunkedSource(data), sink, &mut |_| {}, options)
    }
}

fuzz_target!(|data: &[u8]| roundtrip::check::<Hprof>(data));
