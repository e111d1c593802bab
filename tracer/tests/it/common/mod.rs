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

/// `stealmark command... --help`, checked to succeed; the caller checks
/// what it printed.
pub fn help_of(command: &[&str]) -> Assert {
    stealmark().args(command).arg("--help").assert().success()
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

/// The arguments of `stealmark simulate hendler-shavit` with `processors`,
/// balancing parameter `mu` (a process with L items balances with
/// probability µ/L), steal policy `steal` and `steps` steps.
pub fn hendler_shavit_args<'a>(
    processors: &'a str,
    mu: &'a str,
    steal: &'a str,
    steps: &'a str,
) -> [&'a str; 9] {
    [
        "hendler-shavit",
        "--processors",
        processors,
        "--mu",
        mu,
        "--steal",
        steal,
        "--steps",
        steps,
    ]
}

/// The arguments of `stealmark simulate berenbrink` with `processors`,
/// `hosts` generator hosts, each generator's task probability `lambda`
/// per step, steal policy `steal` and `steps` steps.
pub fn berenbrink_args<'a>(
    processors: &'a str,
    hosts: &'a str,
    lambda: &'a str,
    steal: &'a str,
    steps: &'a str,
) -> [&'a str; 11] {
    [
        "berenbrink",
        "--processors",
        processors,
        "--generator-hosts",
        hosts,
        "--lambda",
        lambda,
        "--steal",
        steal,
        "--steps",
        steps,
    ]
}

/// A three-node V8 heap snapshot (the import crate's example): a root with
/// a property edge to one `Foo` and a weak edge to another.
pub const V8_SNAPSHOT: &str = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
  "node_types":[["hidden","object"],"string","number","number","number"],
  "edge_fields":["type","name_or_index","to_node"],
  "edge_types":[["property","weak"],"string_or_number","node"]},
  "node_count":3,"edge_count":2},
  "nodes":[0,0,1,0,2, 1,1,3,16,0, 1,1,5,16,0],
  "edges":[0,1,5, 1,1,10],
  "strings":["(root)","Foo"]}"#;

/// `stderr` without the warning `mark` and `bench` print when the GC
/// workers were descheduled (it depends on the machine's load, not on the
/// command): what a quiet machine would have printed.
pub fn without_load_warning(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !(l.starts_with("warning: in ") && l.contains("they were descheduled")))
        .map(|l| format!("{l}\n"))
        .collect()
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
