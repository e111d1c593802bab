//! Every subcommand whose standard output is a pipe nobody reads any more
//! (`stealmark ... | head -c1` after head exits) stops quietly with exit
//! code 0, instead of panicking.

mod common;

use std::process::{Command, Stdio};

use common::{gen, without_load_warning};

/// Runs `stealmark args...` with standard output a pipe whose read end is
/// already closed, and returns its exit code and standard error.
fn run_into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    // The write end of a pipe whose reader has exited: the standard input
    // of a process that never reads it (`std::io::pipe` is newer than the
    // workspace's rust-version).
    let mut reader = Command::new(env!("CARGO_BIN_EXE_stealmark"))
        .arg("--version")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("stealmark runs");
    let writer = reader.stdin.take().expect("a piped stdin");
    assert!(reader.wait().expect("stealmark --version ends").success());
    let out = Command::new(env!("CARGO_BIN_EXE_stealmark"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("stealmark runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A three-node V8 heap snapshot (the heap crate's example).
const V8_SNAPSHOT: &str = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
  "node_types":[["hidden","object"],"string","number","number","number"],
  "edge_fields":["type","name_or_index","to_node"],
  "edge_types":[["property","weak"],"string_or_number","node"]},
  "node_count":3,"edge_count":2},
  "nodes":[0,0,1,0,2, 1,1,3,16,0, 1,1,5,16,0],
  "edges":[0,1,5, 1,1,10],
  "strings":["(root)","Foo"]}"#;

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let heap = gen(dir.path(), "random", 2_000);
    let heap = heap.to_str().unwrap();
    let out = dir.path().join("out.smk");
    let out = out.to_str().unwrap();
    let v8 = dir.path().join("app.heapsnapshot");
    std::fs::write(&v8, V8_SNAPSHOT).unwrap();
    let v8 = v8.to_str().unwrap();
    let imported = dir.path().join("app.smk");
    let imported = imported.to_str().unwrap();
    let commands: [&[&str]; 12] = [
        &["info", heap],
        &["info", heap, "--json"],
        &["mark", heap, "--threads", "2", "--runs", "1"],
        &["mark", heap, "--runs", "1", "--json"],
        &["mark", heap, "--sequential", "--runs", "1"],
        &[
            "bench",
            heap,
            "--threads",
            "1",
            "--deques",
            "abp",
            "--runs",
            "1",
        ],
        &[
            "bench",
            heap,
            "--threads",
            "1",
            "--runs",
            "1",
            "--format",
            "json",
        ],
        &["demo", "--objects", "2000", "--runs", "1"],
        &["gen", "--shape", "list", "--objects", "100", "-o", out],
        &["import", "v8", v8, "-o", imported, "--reachable"],
        &[
            "simulate",
            "hendler-shavit",
            "--processors",
            "8",
            "--mu",
            "0.5",
            "--steal",
            "half",
            "--steps",
            "100",
        ],
        &[
            "simulate",
            "berenbrink",
            "--processors",
            "8",
            "--generator-hosts",
            "1",
            "--lambda",
            "0.5",
            "--steal",
            "one",
            "--steps",
            "100",
            "--json",
        ],
    ];
    for args in commands {
        let (code, stderr) = run_into_closed_pipe(args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("internal error"), "{args:?}: {stderr}");
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(without_load_warning(&stderr), "", "{args:?}");
    }
}

#[test]
fn a_command_that_fails_still_reports_with_stdout_closed() {
    let (code, stderr) = run_into_closed_pipe(&["info", "/nonexistent/heap.smk"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.starts_with("error: cannot open"), "{stderr}");
}
