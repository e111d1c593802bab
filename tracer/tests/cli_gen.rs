//! `stealmark gen`: every shape, the options, and bad arguments.

mod common;

use common::{fails_with, gen, json_of, stealmark};
use predicates::prelude::*;
use stealmark_heap::Shape;

#[test]
fn every_shape_generates_a_valid_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    for shape in Shape::ALL.iter().map(|s| s.name()) {
        let path = gen(dir.path(), shape, 3000);
        let info = json_of(stealmark().arg("info").arg(&path).arg("--json"));
        let objects = info["objects"].as_u64().unwrap();
        assert!(objects > 0, "{shape}: {info}");
        assert!(info["roots"].as_u64().unwrap() >= 1, "{shape}: {info}");
        assert!(info["reachable_objects"].as_u64().unwrap() <= objects);
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let path = dir.path().join(name);
        stealmark()
            .args([
                "gen",
                "--shape",
                "random",
                "--objects",
                "2k",
                "--seed",
                seed,
                "-o",
            ])
            .arg(&path)
            .assert()
            .success();
        std::fs::read(path).unwrap()
    };
    let a = run("1", "a.smk");
    assert_eq!(a, run("1", "b.smk"));
    assert_ne!(a, run("2", "c.smk"));
}

#[test]
fn garbage_fraction_leaves_objects_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.smk");
    stealmark()
        .args([
            "gen",
            "--shape",
            "binary-tree",
            "--objects",
            "4000",
            "--garbage",
            "0.25",
            "-o",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("binary-tree"))
        .stderr(predicate::str::is_empty().from_utf8());
    let info = json_of(stealmark().arg("info").arg(&path).arg("--json"));
    assert_eq!(info["objects"], 4000);
    assert_eq!(info["reachable_objects"], 3000);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.smk");
    let out = out.to_str().unwrap();
    let err = fails_with(
        &["gen", "--shape", "circle", "--objects", "10", "-o", out],
        2,
    );
    assert!(err.contains("power-law"), "lists the shapes: {err}");
    fails_with(
        &["gen", "--shape", "random", "--objects", "many", "-o", out],
        2,
    );
    fails_with(
        &["gen", "--shape", "random", "--objects", "0", "-o", out],
        2,
    );
    fails_with(
        &[
            "gen",
            "--shape",
            "random",
            "--objects",
            "10",
            "--garbage",
            "1.5",
            "-o",
            out,
        ],
        2,
    );
    fails_with(&["gen", "--shape", "random", "--objects", "10"], 2);
    fails_with(&["gen", "--objects", "10", "-o", out], 2);
    assert!(!dir.path().join("x.smk").exists(), "no file on failure");
}

#[test]
fn unwritable_output_is_an_error_naming_the_file() {
    let err = fails_with(
        &[
            "gen",
            "--shape",
            "list",
            "--objects",
            "10",
            "-o",
            "/nonexistent-dir/x.smk",
        ],
        1,
    );
    assert!(err.contains("/nonexistent-dir/x.smk"), "{err}");
}

#[test]
fn help_shows_an_example() {
    stealmark()
        .args(["gen", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("stealmark gen --shape"));
}
