//! Every subcommand whose standard output is a pipe nobody reads any more
//! (`stealmark ... | head -c1` after head exits) stops quietly with exit
//! code 0, instead of panicking.

use crate::common;

use std::process::{Command, Stdio};

use common::{berenbrink_args, gen, hendler_shavit_args, without_load_warning, V8_SNAPSHOT};

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
    let mut hendler_shavit = vec!["simulate"];
    hendler_shavit.extend(hendler_shavit_args("8", "0.5", "half", "100"));
    let mut berenbrink = vec!["simulate"];
    berenbrink.extend(berenbrink_args("8", "1", "0.5", "one", "100"));
    berenbrink.push("--json");
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
        &hendler_shavit,
        &berenbrink,
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
