//! `stealmark demo`, on a small heap (the hidden `--objects` and `--runs`
//! exist for this test), and the top-level help.

use crate::common;

use common::{fails_with, help_of, stealmark};
use predicates::prelude::*;

#[test]
fn demo_prints_the_table_and_writes_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = stealmark()
        .current_dir(dir.path())
        .args(["demo", "--objects", "30000", "--runs", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("marked exactly the sequential oracle's"),
        "{text}"
    );
    for deque in ["steal-half", "chase-lev", "abp", "locked", "crossbeam"] {
        assert!(text.contains(deque), "{deque} missing: {text}");
    }
    assert!(
        text.contains("balance") && text.contains("p50 ms"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "demo wrote files"
    );
}

#[test]
fn demo_takes_no_arguments() {
    fails_with(&["demo", "heap.smk"], 2);
    help_of(&["demo"])
        .stdout(predicate::str::contains("stealmark demo"))
        .stdout(predicate::str::contains("--runs").not());
}

#[test]
fn top_level_help_lists_every_command() {
    let assert = stealmark().arg("--help").assert().success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    // The names at the start of the lines of the "Commands:" section.
    let listed: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for cmd in ["gen", "info", "mark", "bench", "demo", "import", "simulate"] {
        assert!(listed.contains(&cmd), "{cmd} not listed: {out}");
    }
    fails_with(&["frobnicate"], 2);
    fails_with(&[], 2);
}
