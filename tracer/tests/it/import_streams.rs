//! `stealmark import` from streams: standard input (`-`), `/dev/stdin` and
//! a FIFO give the same snapshot as the file; `-o -` is refused.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::Command;

use common::{fails_with, stealmark, V8_SNAPSHOT};

/// Imports `input` (a path, or `-`) with `stdin` as standard input; returns
/// the snapshot's bytes, checking that the import succeeded.
fn import_with_stdin(input: &str, stdin: &[u8], output: &Path) -> Vec<u8> {
    let out = stealmark()
        .args(["import", "v8", input, "-o"])
        .arg(output)
        .write_stdin(stdin)
        .output()
        .expect("stealmark runs");
    assert!(
        out.status.success(),
        "import {input} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(output).unwrap()
}

/// The snapshot of [`V8_SNAPSHOT`] imported from a file.
fn from_file(dir: &Path) -> Vec<u8> {
    let input = dir.join("app.heapsnapshot");
    std::fs::write(&input, V8_SNAPSHOT).unwrap();
    let output = dir.join("file.smk");
    import_with_stdin(input.to_str().unwrap(), b"", &output)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn standard_input_imports_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let want = from_file(dir.path());
    let got = import_with_stdin("-", V8_SNAPSHOT.as_bytes(), &dir.path().join("stdin.smk"));
    assert_eq!(got, want);
    // Compressed, through the pipe.
    let gz = gzip(V8_SNAPSHOT.as_bytes());
    let got = import_with_stdin("-", &gz, &dir.path().join("stdin-gz.smk"));
    assert_eq!(got, want);
    #[cfg(target_os = "linux")]
    {
        let got = import_with_stdin(
            "/dev/stdin",
            V8_SNAPSHOT.as_bytes(),
            &dir.path().join("dev-stdin.smk"),
        );
        assert_eq!(got, want);
    }
}

#[test]
fn a_wrong_format_on_standard_input_is_named_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let out = stealmark()
        .args(["import", "hprof", "-", "-o"])
        .arg(dir.path().join("x.smk"))
        .write_stdin(V8_SNAPSHOT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stealmark import v8"), "{err}");
}

#[test]
fn a_fifo_imports_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let want = from_file(dir.path());
    let fifo = dir.path().join("dump.fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        assert!(!ci, "`mkfifo` is needed in CI for the FIFO test");
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED a_fifo_imports_like_the_file: no `mkfifo`"
        );
        return;
    }
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(V8_SNAPSHOT.as_bytes()).unwrap();
    });
    let got = import_with_stdin(fifo.to_str().unwrap(), b"", &dir.path().join("fifo.smk"));
    writer.join().unwrap();
    assert_eq!(got, want);
    // The FIFO as its own output is refused, without opening it.
    let err = fails_with(
        &[
            "import",
            "v8",
            fifo.to_str().unwrap(),
            "-o",
            fifo.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("is the input"), "{err}");
}

#[test]
fn standard_output_is_refused_as_the_snapshot() {
    let err = fails_with(&["import", "v8", "-", "-o", "-"], 1);
    assert!(err.contains("-o -"), "{err}");
    assert!(err.contains("file name"), "{err}");
}
