//! `stealmark gen`: every shape, the options, and bad arguments.

use crate::common;

use common::{fails_with, gen, gen_to, help_of, info_json, stealmark};
use predicates::prelude::*;
use stealmark_heap::Shape;

/// Runs `stealmark gen --shape SHAPE --objects OBJECTS EXTRA... -o OUT`,
/// which must fail as [`fails_with`] checks, with `code`; returns standard
/// error.
fn gen_fails(shape: &str, objects: &str, extra: &[&str], out: &str, code: i32) -> String {
    let mut args = vec!["gen", "--shape", shape, "--objects", objects];
    args.extend(extra);
    args.extend(["-o", out]);
    fails_with(&args, code)
}

#[test]
fn every_shape_generates_a_valid_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    for shape in Shape::ALL.iter().map(|s| s.name()) {
        let path = gen(dir.path(), shape, 3000);
        let info = info_json(&path);
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
    let info = info_json(&path);
    assert_eq!(info["objects"], 4000);
    assert_eq!(info["reachable_objects"], 3000);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.smk");
    let out = out.to_str().unwrap();
    let err = gen_fails("circle", "10", &[], out, 2);
    assert!(err.contains("power-law"), "lists the shapes: {err}");
    gen_fails("random", "many", &[], out, 2);
    gen_fails("random", "0", &[], out, 2);
    gen_fails("random", "10", &["--garbage", "1.5"], out, 2);
    fails_with(&["gen", "--shape", "random", "--objects", "10"], 2);
    fails_with(&["gen", "--objects", "10", "-o", out], 2);
    let err = gen_fails("random", "-5", &[], out, 2);
    assert!(err.contains("must be positive"), "{err}");
    assert!(err.ends_with("see `stealmark gen --help`\n"), "{err}");
    gen_fails("random", "10", &["--degree", "-2"], out, 2);
    assert!(!dir.path().join("x.smk").exists(), "no file on failure");
}

#[test]
fn options_the_shape_ignores_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.smk");
    let out = out.to_str().unwrap();
    let err = gen_fails("list", "10", &["--degree", "5"], out, 2);
    assert!(
        err.contains("--degree applies to the random and power-law shapes only, not to list"),
        "{err}"
    );
    gen_fails("random", "10", &["--branch", "3"], out, 2);
    assert!(!dir.path().join("x.smk").exists());
    // The shapes that use them take them.
    for args in [
        ["--shape", "power-law", "--degree", "5"],
        ["--shape", "dag", "--branch", "3"],
    ] {
        stealmark()
            .arg("gen")
            .args(args)
            .args(["--objects", "100", "-o", out])
            .assert()
            .success();
    }
}

#[test]
fn a_heap_larger_than_the_free_space_is_refused_with_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("huge.smk");
    // 4.29 billion objects of 1024 slots: about 32 TiB.
    let err = gen_fails(
        "random",
        "4294967295",
        &["--degree", "1024"],
        out.to_str().unwrap(),
        1,
    );
    assert!(
        err.contains("would need about 32.") && err.contains("TiB for 4,294,967,295 objects"),
        "{err}"
    );
    assert!(err.contains("free;") && err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn an_existing_file_is_replaced_only_if_it_is_a_snapshot_or_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "keep me\n").unwrap();
    let gen_to = |path: &std::path::Path, extra: &[&str]| {
        stealmark()
            .args(["gen", "--shape", "list", "--objects", "10", "-o"])
            .arg(path)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = gen_to(&notes, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a stealmark snapshot") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me\n");
    // An earlier snapshot is replaced, and so is anything with --force.
    let heap = gen(dir.path(), "list", 10);
    assert!(gen_to(&heap, &[]).status.success());
    assert!(gen_to(&notes, &["--force"]).status.success());
    assert!(std::fs::read(&notes).unwrap().starts_with(b"\x89SMH"));
}

#[test]
fn sigterm_removes_the_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.smk");
    let partial = dir.path().join("big.smk.partial");
    // Large enough to be still writing when the signal comes (--force:
    // whatever the free space, this test never lets it finish).
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_stealmark"))
        .args([
            "gen",
            "--shape",
            "wide",
            "--objects",
            "100M",
            "--force",
            "-o",
        ])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) for the partial file to have data.
    let mut started = false;
    for _ in 0..600 {
        if std::fs::metadata(&partial).is_ok_and(|m| m.len() > 0) {
            started = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let out_status = child.wait_with_output().unwrap();
    assert!(started, "gen never started writing");
    assert_eq!(out_status.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out_status.stderr);
    assert!(err.contains("interrupted; removed"), "{err}");
    assert!(!partial.exists(), "the partial file was left behind");
    assert!(!out.exists());
}

#[test]
fn off_a_terminal_long_runs_print_progress_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.smk");
    // A zero-length interval would turn the lines off; a tiny one makes
    // every progress report a line, however fast the machine.
    let run = |secs: &str| {
        stealmark()
            .env("STEALMARK_PROGRESS_SECS", secs)
            .args(["gen", "--shape", "random", "--objects", "2M", "-o"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let loud = run("0.000001");
    assert!(loud.status.success());
    let err = String::from_utf8(loud.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("gen: ") && l.contains(" of 2,000,000 objects (")),
        "{err}"
    );
    let quiet = run("0");
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty());
}

#[test]
fn unwritable_output_is_an_error_naming_the_file() {
    let err = gen_fails("list", "10", &[], "/nonexistent-dir/x.smk", 1);
    assert!(err.contains("/nonexistent-dir/x.smk"), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = gen_fails("list", "10", &[], dir.path().to_str().unwrap(), 1);
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn help_shows_an_example() {
    help_of(&["gen"]).stdout(predicate::str::contains("stealmark gen --shape"));
}

#[test]
fn compressed_is_the_default_and_wide_is_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        let mut cmd = stealmark();
        cmd.args(["gen", "--shape", "random", "--objects", "5000", "-o"])
            .arg(&path)
            .args(extra);
        let out = cmd.assert().success().get_output().stdout.clone();
        (path, String::from_utf8(out).unwrap())
    };
    let (compressed, stdout) = run("c.smk", &[]);
    assert!(stdout.contains("compressed layout"), "{stdout}");
    let (wide, stdout) = run("w.smk", &["--wide"]);
    assert!(stdout.contains("wide layout"), "{stdout}");
    let (forced, _) = run("f.smk", &["--compressed"]);
    assert_eq!(
        std::fs::read(&forced).unwrap(),
        std::fs::read(&compressed).unwrap()
    );
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&compressed) * 3 < size(&wide) * 2 + 3 * 1024);
    let c = info_json(&compressed);
    let w = info_json(&wide);
    assert_eq!(
        (c["layout"].as_str(), w["layout"].as_str()),
        (Some("compressed"), Some("wide"))
    );
    assert_eq!(c["reachable_objects"], w["reachable_objects"]);
    gen_fails("list", "10", &["--wide", "--compressed"], "x.smk", 2);
}

#[test]
fn weak_and_ephemeron_chain_shapes_and_their_strong_twins() {
    let dir = tempfile::tempdir().unwrap();
    for shape in ["weak", "ephemeron-chain"] {
        let weak = gen(dir.path(), shape, 20_000);
        let strong = dir.path().join(format!("{shape}-strong.smk"));
        gen_to(&strong, shape, 20_000, &["--all-strong"]);
        let w = info_json(&weak);
        let s = info_json(&strong);
        assert_eq!(w["objects"], s["objects"], "{shape}");
        assert_eq!(
            w["reference_slots"], s["reference_slots"],
            "{shape}: the same graph"
        );
        assert!(w["ephemeron_slots"].as_u64().unwrap() > 0, "{shape}: {w}");
        assert_eq!(s["ephemeron_slots"], 0, "{shape}: {s}");
        assert_eq!(s["finalizable"], 0, "{shape}");
    }
    let w = info_json(&dir.path().join("weak-20000.smk"));
    for key in ["weak_slots", "soft_slots", "phantom_slots", "finalizable"] {
        assert!(w[key].as_u64().unwrap() > 0, "{key}: {w}");
    }
    gen_fails("list", "10", &["--all-strong"], "x.smk", 2);
}
