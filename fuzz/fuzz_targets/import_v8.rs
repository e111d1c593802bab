//! Fuzzes the V8 `.heapsnapshot` importer: any input either fails with an
//! error or yields a well-formed heap; it never panics, hangs or allocates
//! without bound. The input is read in short, uneven chunks through the
//! fuzzing build's 64-byte buffer (`stealmark_import::test_support::Chunked`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stealmark_import as import;
use stealmark_import::test_support::Chunked;

#[path = "import_sink.rs"]
mod import_sink;

fuzz_target!(|data: &[u8]| {
    let mut sink = import_sink::CheckSink::default();
    if let Ok(summary) = import::v8(Chunked::new(data), &mut sink) {
        sink.check();
        assert_eq!(summary.roots, 1);
    }
});
