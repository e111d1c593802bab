//! Inputs that are streams (pipes, FIFOs): looking at their first bytes
//! does not consume them, they are read from the start once, and a spill
//! file lets the HPROF importer read them again.
#![cfg(unix)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::JoinHandle;

use stealmark_heap::HeapBuilder;
use stealmark_import::{self as import, InputFile};

const JSON: &[u8] =
    br#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
  "node_types":[["hidden","object"],"string","number","number","number"],
  "edge_fields":["type","name_or_index","to_node"],
  "edge_types":[["property","weak"],"string_or_number","node"]},
  "node_count":3,"edge_count":2},
  "nodes":[0,0,1,0,2, 1,1,3,16,0, 1,1,5,16,0],
  "edges":[0,1,5, 1,1,10],
  "strings":["(root)","Foo"]}"#;

/// A FIFO in `dir` that a thread fills with `bytes` once a reader opens
/// it, or `None` (the test says it is skipped) without `mkfifo`.
fn fifo(dir: &Path, bytes: Vec<u8>) -> Option<(PathBuf, JoinHandle<()>)> {
    let path = dir.join("dump.fifo");
    let made = Command::new("mkfifo")
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true")),
            "`mkfifo` is needed in CI for the FIFO tests"
        );
        let _ = writeln!(std::io::stderr(), "SKIPPED a FIFO test: no `mkfifo`");
        return None;
    }
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        // Blocks until the reader opens the FIFO; the reader may close it
        // early, so a broken pipe is not an error here.
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&writer_path) {
            let _ = f.write_all(&bytes);
        }
    });
    Some((path, writer))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_fifo_is_peeked_then_read_once_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let Some((path, writer)) = fifo(dir.path(), JSON.to_vec()) else {
        return;
    };
    let input = InputFile::open(&path).unwrap();
    assert!(input.is_stream() && !input.is_gzip());
    assert_eq!(input.peek(12).unwrap(), b"{\"snapshot\":");
    assert_eq!(input.peek(2).unwrap(), b"{\"", "peeking twice");
    let mut builder = HeapBuilder::new();
    let summary = import::v8(input.reader().unwrap(), &mut builder).unwrap();
    assert_eq!(
        (summary.objects, summary.input_bytes),
        (3, JSON.len() as u64)
    );
    let err = input.reader().err().expect("a stream is read only once");
    assert!(err.to_string().contains("cannot be read again"), "{err}");
    writer.join().unwrap();
}

#[test]
fn a_compressed_fifo_is_peeked_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that the first 64 decompressed bytes need more than the
    // first read of the compressed stream.
    let mut long = JSON.to_vec();
    long.extend(std::iter::repeat_n(b' ', 100_000));
    let Some((path, writer)) = fifo(dir.path(), gzip(&long)) else {
        return;
    };
    let input = InputFile::open(&path).unwrap();
    assert!(input.is_stream() && input.is_gzip());
    assert_eq!(input.peek(64).unwrap(), &long[..64]);
    let mut all = Vec::new();
    input.reader().unwrap().read_to_end(&mut all).unwrap();
    assert_eq!(all, long);
    writer.join().unwrap();
}

#[test]
fn a_spilled_stream_is_read_again_from_the_spill() {
    let dir = tempfile::tempdir().unwrap();
    let Some((path, writer)) = fifo(dir.path(), gzip(JSON)) else {
        return;
    };
    let spill = dir.path().join("spill");
    let input = InputFile::open(&path).unwrap().spill_to(&spill);
    for pass in 0..3 {
        let mut all = Vec::new();
        input.reader().unwrap().read_to_end(&mut all).unwrap();
        assert_eq!(all, JSON, "pass {pass}");
    }
    assert!(spill.exists());
    drop(input);
    assert!(!spill.exists(), "the spill is deleted with its input");
    writer.join().unwrap();
}

/// A pipe opened by path, as `/dev/stdin` and `<(...)` are.
#[cfg(target_os = "linux")]
#[test]
fn a_pipe_opened_by_path_imports() {
    use std::os::fd::AsRawFd;
    let (reader, mut writer) = std::io::pipe().unwrap();
    let feeder = std::thread::spawn(move || writer.write_all(JSON).unwrap());
    let input = InputFile::open(format!("/proc/self/fd/{}", reader.as_raw_fd())).unwrap();
    drop(reader);
    assert!(input.is_stream());
    assert_eq!(input.peek(1).unwrap(), b"{");
    let mut builder = HeapBuilder::new();
    let summary = import::v8(input.reader().unwrap(), &mut builder).unwrap();
    assert_eq!(summary.objects, 3);
    feeder.join().unwrap();
}

/// A tiny HPROF dump: a class with one object field, an instance of it
/// pointing at an array that holds the instance, the array a root.
fn tiny_hprof() -> Vec<u8> {
    let be = |words: &[u32]| -> Vec<u8> { words.iter().flat_map(|w| w.to_be_bytes()).collect() };
    let mut heap = vec![0x20];
    heap.extend(be(&[0x10, 0, 0, 0, 0, 0, 0, 0, 0]));
    heap.extend_from_slice(&[0, 0, 0, 0, 0, 1]);
    heap.extend(be(&[1]));
    heap.push(2);
    heap.push(0x21);
    heap.extend(be(&[0x20, 0, 0x10, 4, 0x30]));
    heap.push(0x22);
    heap.extend(be(&[0x30, 0, 1, 0x10, 0x20]));
    heap.push(0xFF);
    heap.extend(be(&[0x30]));
    let mut dump = b"JAVA PROFILE 1.0.2\0".to_vec();
    dump.extend(be(&[4, 0, 0]));
    for (tag, body) in [(0x1C, heap), (0x2C, Vec::new())] {
        dump.push(tag);
        dump.extend(be(&[0, body.len() as u32]));
        dump.extend(body);
    }
    dump
}

#[test]
fn an_hprof_fifo_imports_through_its_spill() {
    let dir = tempfile::tempdir().unwrap();
    let dump = tiny_hprof();
    let mut from_bytes = HeapBuilder::new();
    let want = import::hprof(dump.as_slice(), &mut from_bytes, &mut |_| {}).unwrap();
    assert_eq!((want.objects, want.roots), (3, 1));
    let Some((path, writer)) = fifo(dir.path(), dump) else {
        return;
    };
    let spill = dir.path().join("spill");
    let input = InputFile::open(&path).unwrap().spill_to(&spill);
    let mut builder = HeapBuilder::new();
    let got = import::hprof(&input, &mut builder, &mut |_| {}).unwrap();
    assert_eq!(got, want);
    writer.join().unwrap();

    // Without a spill, the second pass cannot read the stream again.
    let dir = tempfile::tempdir().unwrap();
    let Some((path, writer)) = fifo(dir.path(), tiny_hprof()) else {
        return;
    };
    let input = InputFile::open(&path).unwrap();
    let err = import::hprof(&input, &mut HeapBuilder::new(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("cannot be read again"), "{err}");
    writer.join().unwrap();
}
