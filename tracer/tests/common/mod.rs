//! Helpers shared by the `cli_*` end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::assert::Assert;
use assert_cmd::Command;

/// The `stealmark` binary, with standard error not a terminal (so no
/// progress bars).
pub fn stealmark() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stealmark"))
}

/// Generates a small snapshot of `shape` with `objects` objects in `dir`.
pub fn gen(dir: &Path, shape: &str, objects: u64) -> PathBuf {
    let path = dir.join(format!("{shape}-{objects}.smk"));
    gen_to(&path, shape, objects, &[]);
    path
}

/// Generates a snapshot of `shape` with `objects` objects at `path`, seed
/// 7 (the seed of [`gen`]), with the `gen` options `extra`.
pub fn gen_to(path: &Path, shape: &str, objects: u64, extra: &[&str]) {
    let objects = objects.to_string();
    stealmark()
        .args([
            "gen",
            "--shape",
            shape,
            "--objects",
            &objects,
            "--seed",
            "7",
        ])
        .args(extra)
        .arg("-o")
        .arg(path)
        .assert()
        .success();
}

/// `stealmark info heap --json`, parsed.
pub fn info_json(heap: &Path) -> serde_json::Value {
    json_of(stealmark().arg("info").arg(heap).arg("--json"))
}

/// `stealmark mark heap args...`, checked to succeed; the caller checks
/// what it printed.
pub fn mark_ok(heap: &Path, args: &[&str]) -> Assert {
    stealmark()
        .arg("mark")
        .arg(heap)
        .args(args)
        .assert()
        .success()
}

/// `stealmark mark heap args... --json`: checks that it succeeds and
/// returns the report.
pub fn mark_json(heap: &Path, args: &[&str]) -> serde_json::Value {
    json_of(stealmark().arg("mark").arg(heap).args(args).arg("--json"))
}

/// `stealmark mark heap args...`, checked as [`fails_with`] checks it;
/// returns standard error.
pub fn mark_fails(heap: &str, args: &[&str], code: i32) -> String {
    let mut all = vec!["mark", heap];
    all.extend(args);
    fails_with(&all, code)
}

/// Runs `stealmark args...` and checks that it fails with `code` and a
/// one-line error (no panic, no backtrace; a bare `stealmark` prints the
/// help instead). Returns standard error.
pub fn fails_with(args: &[&str], code: i32) -> String {
    let out = stealmark().args(args).output().expect("stealmark runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "args {args:?}: stderr {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "args {args:?} panicked: {stderr}"
    );
    assert!(
        !stderr.contains("RUST_BACKTRACE"),
        "args {args:?}: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "args {args:?} printed to stdout on failure"
    );
    if !args.is_empty() {
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "not one line: {stderr}"
        );
        assert!(stderr.starts_with("error: "), "{stderr}");
    }
    stderr
}

/// Parses standard output as JSON.
pub fn json_of(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("stealmark runs");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Checks that `path` is well-formed XML with an `<svg>` root, and returns
/// the text of its `<text>` elements.
pub fn assert_svg(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the SVG exists");
    let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}
