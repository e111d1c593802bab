//! Fuzzes gzip-compressed input through [`InputFile`] (the only way the
//! importers take gzip: a file, sniffed by its magic bytes, decompressed on
//! the fly, optionally spilled to a temporary file that the HPROF
//! importer's later passes read instead).
//!
//! Two modes, by the input's first bytes:
//!
//! - **Plain** (anything not starting with the gzip magic): the input is a
//!   V8 snapshot or (starting with `JAVA PROFILE`) an HPROF dump. It is
//!   compressed as one to three gzip members, split where its bytes say,
//!   and imported from the file, with and (HPROF) without a spill. The
//!   result must be exactly that of importing the plain bytes: the same
//!   heap and summary, or the same error at the same offset. The fuzzer
//!   mutates the plain text, so this reaches deep into the importers while
//!   checking the gzip layer against the plain one.
//! - **Raw** (starting with `1f 8b`): the input is the compressed file
//!   itself, so mutations hit headers, deflate blocks, CRCs, lengths, member
//!   boundaries and trailing bytes. Decompressed in memory as a reference
//!   (up to 4 MiB): if that succeeds, the file import must match the plain
//!   import as above; if it fails, the file import must fail too.
//!
//! In both modes progress reports never exceed the file's size, and the
//! spill file is gone once the `InputFile` is dropped.
#![no_main]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use stealmark_import::test_support::{Chunked, ChunkedSource};
use stealmark_import::{self as import, ImportError, ImportSummary, InputFile};

#[path = "import_sink.rs"]
mod import_sink;
#[path = "record_sink.rs"]
mod record_sink;

use record_sink::{RecordSink, Recorded};

/// The most decompressed bytes the raw mode deals with.
const MAX_PLAIN: u64 = 4 << 20;

/// This process's scratch directory (in `/dev/shm` when there is one).
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = PathBuf::from("/dev/shm");
        let base = if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("stealmark-fuzz-gzip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

/// `plain` as one to three gzip members, split where its bytes say.
fn compress(plain: &[u8]) -> Vec<u8> {
    let h = plain.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let len = plain.len();
    let mut cuts = vec![0, len];
    if h & 1 != 0 {
        cuts.push((h as usize >> 1) % (len + 1));
    }
    if h & 2 != 0 {
        cuts.push((h as usize >> 9) % (len + 1));
    }
    cuts.sort_unstable();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let mut e = GzEncoder::new(&mut out, Compression::fast());
        e.write_all(&plain[w[0]..w[1]]).expect("in memory");
        e.finish().expect("in memory");
    }
    out
}

/// Decompresses `gz` in memory: `Ok` with the bytes, or `Err` if it is not
/// valid gzip; `None` if it decompresses to more than [`MAX_PLAIN`] bytes.
fn decompress(gz: &[u8]) -> Option<Result<Vec<u8>, ()>> {
    let mut out = Vec::new();
    match MultiGzDecoder::new(gz)
        .take(MAX_PLAIN + 1)
        .read_to_end(&mut out)
    {
        Ok(_) if out.len() as u64 > MAX_PLAIN => None,
        Ok(_) => Some(Ok(out)),
        Err(_) => Some(Err(())),
    }
}

type Outcome = Result<(ImportSummary, Recorded), String>;

fn outcome(r: Result<ImportSummary, ImportError>, sink: RecordSink) -> Outcome {
    match r {
        Ok(summary) => Ok((summary, sink.finish())),
        Err(e) => Err(e.to_string()),
    }
}

fn is_hprof(plain: &[u8]) -> bool {
    plain.starts_with(b"JAVA PROFILE")
}

/// Imports `plain` from memory.
fn import_plain(plain: &[u8]) -> Outcome {
    let mut sink = RecordSink::default();
    let r = if is_hprof(plain) {
        import::hprof(&ChunkedSource(plain), &mut sink, &mut |_| {})
    } else {
        import::v8(Chunked::new(plain), &mut sink)
    };
    outcome(r, sink)
}

/// Imports the gzip file `gz` (whose plain text is `hprof` or V8) through an
/// `InputFile`, spilling or not.
fn import_file(gz: &[u8], hprof: bool, spill: bool) -> Outcome {
    let dir = scratch();
    let path = dir.join("input.gz");
    let spill_path = dir.join("spill");
    std::fs::write(&path, gz).expect("writing the scratch file");
    let len = gz.len() as u64;
    let mut file = InputFile::open(&path)
        .expect("opening the scratch file")
        .on_progress(move |p| assert!(p <= len, "progress {p} beyond the file's {len} bytes"));
    assert!(file.is_gzip(), "the gzip magic was not recognised");
    assert_eq!(file.len(), len);
    if spill {
        file = file.spill_to(&spill_path);
    }
    let mut sink = RecordSink::default();
    let r = if hprof {
        import::hprof(&file, &mut sink, &mut |_| {})
    } else {
        match file.reader() {
            Ok(reader) => import::v8(reader, &mut sink),
            Err(e) => panic!("opening the scratch file again: {e}"),
        }
    };
    drop(file);
    assert!(
        !spill_path.exists(),
        "the spill file outlived its InputFile"
    );
    outcome(r, sink)
}

fuzz_target!(|data: &[u8]| {
    let (gz, plain) = if data.starts_with(&[0x1f, 0x8b]) {
        let Some(plain) = decompress(data) else {
            return;
        };
        (data.to_vec(), plain)
    } else {
        (compress(data), Ok(data.to_vec()))
    };
    match plain {
        Ok(plain) => {
            let hprof = is_hprof(&plain);
            let want = import_plain(&plain);
            for spill in [true, false] {
                if spill || hprof {
                    let got = import_file(&gz, hprof, spill);
                    assert_eq!(
                        got, want,
                        "gzip import (spill: {spill}) differs from the plain one"
                    );
                }
            }
        }
        Err(()) => {
            // Which importer reads it does not matter: both must fail.
            let hprof = data.len() % 2 == 0;
            let got = import_file(&gz, hprof, true);
            assert!(got.is_err(), "invalid gzip imported: {got:?}");
        }
    }
});
