//! `stealmark import` end to end: real dumps made at test time by Node.js
//! and Java are imported through the CLI, the snapshots are opened, and
//! marking them with every deque at 2 and 8 workers must equal the
//! sequential oracle exactly (marked set, object count, weak references).

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fails_with, stealmark, V8_SNAPSHOT};
use stealmark_heap::{mark_sequential, HeapGraph, Snapshot};
use stealmark_marker::{DequeKind, Marker, MarkerConfig};

/// The programs the heap importer tests use, shared with them.
const GENERATE_JS: &str = include_str!("../../../import/tests/it/import_common/generate.js");
const DUMP_JAVA: &str = include_str!("../../../import/tests/it/import_common/Dump.java");

/// Whether `program` runs. If not: in CI (`CI=true`) the test fails,
/// saying which program is missing; elsewhere it says clearly that the test
/// is skipped.
fn have(program: &str, version_flag: &str, test: &str) -> bool {
    let ok = Command::new(program)
        .arg(version_flag)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        assert!(
            !ci,
            "{test}: `{program}` is not installed, and CI (CI=true) must run these tests; \
             install it (see .ci/run)"
        );
        // Straight to the process's stderr: the test harness captures
        // `eprintln!` of passing tests, and a skip must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: `{program}` is not installed (CI installs it; see .ci/run)"
        );
    }
    ok
}

/// Runs a command that must succeed.
fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Node.js heap snapshot in `dir`.
fn node_snapshot(dir: &Path) -> PathBuf {
    let script = dir.join("generate.js");
    std::fs::write(&script, GENERATE_JS).unwrap();
    let out = dir.join("node.heapsnapshot");
    run(Command::new("node").arg(&script).arg(&out));
    out
}

/// A HotSpot heap dump in `dir`.
fn java_dump(dir: &Path) -> PathBuf {
    let src = dir.join("Dump.java");
    std::fs::write(&src, DUMP_JAVA).unwrap();
    run(Command::new("javac").arg("-d").arg(dir).arg(&src));
    let out = dir.join("java.hprof");
    run(Command::new("java")
        .arg("-Xmx256m")
        .arg("-cp")
        .arg(dir)
        .arg("Dump")
        .arg(&out));
    out
}

/// Imports through the CLI with `--reachable`; returns standard output.
fn import(format: &str, input: &Path, output: &Path) -> String {
    let out = stealmark()
        .args(["import", format])
        .arg(input)
        .arg("-o")
        .arg(output)
        .arg("--reachable")
        .output()
        .expect("stealmark runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!output.with_extension("smk.partial").exists());
    stdout
}

/// The number in the summary line that starts with `label`.
fn summary_count(stdout: &str, label: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in {stdout}"));
    let field = line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default();
    field
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("bad `{label}` line: {line}"))
}

/// Marks the snapshot with every deque at 2 and 8 workers and compares
/// each result with the oracle. Returns the oracle's object count.
fn every_deque_matches_the_oracle(path: &Path) -> u64 {
    let snap = Snapshot::open(path).expect("the imported snapshot validates");
    let view = snap.view();
    let oracle = mark_sequential(&view, snap.roots());
    let mut oracle_weak: Vec<(usize, usize)> = oracle
        .weak_refs
        .iter()
        .map(|w| (w.holder.word(), w.target.word()))
        .collect();
    oracle_weak.sort_unstable();
    for &deque in DequeKind::ALGORITHMS.iter() {
        for workers in [2, 8] {
            let what = format!("{} deque={deque} workers={workers}", path.display());
            let mut config = MarkerConfig::with_workers(workers);
            config.set_deque(deque);
            let mut marker = Marker::new(config).expect("valid config");
            let m = marker.mark(&view, snap.roots());
            assert!(
                *m.bitmap == oracle.marked,
                "{what}: marked {} objects, oracle {}",
                m.bitmap.count(),
                oracle.objects
            );
            assert_eq!(m.stats.objects_marked(), oracle.objects, "{what}");
            let mut weak: Vec<(usize, usize)> = m
                .weak_refs()
                .map(|w| (w.holder.word(), w.target.word()))
                .collect();
            weak.sort_unstable();
            assert_eq!(weak, oracle_weak, "{what}: weak references");
        }
    }
    oracle.objects
}

#[test]
fn node_snapshot_imports_and_marks_like_the_oracle() {
    if !have(
        "node",
        "--version",
        "node_snapshot_imports_and_marks_like_the_oracle",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = node_snapshot(dir.path());
    let output = dir.path().join("node.smk");
    let stdout = import("v8", &input, &output);
    assert!(stdout.contains("imported V8 heap snapshot"), "{stdout}");
    let reachable = every_deque_matches_the_oracle(&output);
    assert_eq!(summary_count(&stdout, "strongly reachable"), reachable);
    // Nothing is finalizable in a V8 heap: both counts agree.
    assert_eq!(summary_count(&stdout, "live"), reachable);
    assert_eq!(summary_count(&stdout, "roots"), 1);
    let snap = Snapshot::open(&output).unwrap();
    assert_eq!(
        summary_count(&stdout, "objects"),
        snap.view().object_count()
    );
}

#[test]
fn java_dump_imports_and_marks_like_the_oracle() {
    let test = "java_dump_imports_and_marks_like_the_oracle";
    if !have("java", "-version", test) || !have("javac", "-version", test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = java_dump(dir.path());
    let output = dir.path().join("java.smk");
    let stdout = import("hprof", &input, &output);
    assert!(stdout.contains("imported HPROF heap dump"), "{stdout}");
    assert!(
        stdout.contains("references to objects missing from the dump"),
        "{stdout}"
    );
    let reachable = every_deque_matches_the_oracle(&output);
    assert_eq!(summary_count(&stdout, "strongly reachable"), reachable);
    assert_live_as_info_says(&stdout, &output);
    assert!(
        reachable < summary_count(&stdout, "objects"),
        "the dump holds garbage"
    );

    // Gzip-compressed input gives the same snapshot, byte for byte.
    if !have("gzip", "--version", test) {
        return;
    }
    run(Command::new("gzip").arg("-k").arg("-1").arg(&input));
    let gz = dir.path().join("java.hprof.gz");
    let from_gz = dir.path().join("java-gz.smk");
    import("hprof", &gz, &from_gz);
    assert_eq!(
        std::fs::read(&from_gz).unwrap(),
        std::fs::read(&output).unwrap()
    );
}

/// The `live` line of `import --reachable` is the oracle's count under the
/// runtime contract, as `info` reports it, and the strongly reachable one
/// is `info`'s too; the HotSpot dump has finalizable objects, so they
/// differ.
fn assert_live_as_info_says(stdout: &str, snapshot: &Path) {
    let out = stealmark()
        .arg("info")
        .arg(snapshot)
        .arg("--json")
        .output()
        .expect("stealmark runs");
    assert!(out.status.success());
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let live = summary_count(stdout, "live");
    let strong = summary_count(stdout, "strongly reachable");
    assert_eq!(info["reachable_objects"], live);
    assert_eq!(info["strongly_reachable_objects"], strong);
    assert!(live > strong, "finalizable objects reach more: {stdout}");
}

#[test]
fn malformed_input_is_one_line_with_an_offset_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.heapsnapshot");
    std::fs::write(&bad, br#"{"snapshot":{"meta":{}}, "nodes":[1,2]}"#).unwrap();
    let out = dir.path().join("out.smk");
    let (bad_s, out_s) = (bad.to_str().unwrap(), out.to_str().unwrap());
    let err = fails_with(&["import", "v8", bad_s, "-o", out_s], 1);
    assert!(err.contains("at byte 12"), "{err}");
    assert!(
        err.contains("; check that it is a complete V8 .heapsnapshot"),
        "says what to do: {err}"
    );
    let junk = dir.path().join("junk.hprof");
    std::fs::write(&junk, b"JAVA PROFILE 9.9\0 not really").unwrap();
    let err = fails_with(&["import", "hprof", junk.to_str().unwrap(), "-o", out_s], 1);
    assert!(
        err.contains("at byte 0") && err.contains("JAVA PROFILE"),
        "{err}"
    );
    assert!(err.contains("; check that it is a complete HPROF"), "{err}");
    assert!(!out.exists());
    assert!(!dir.path().join("out.smk.partial").exists());
    let missing = dir.path().join("missing.hprof");
    let err = fails_with(
        &["import", "hprof", missing.to_str().unwrap(), "-o", out_s],
        1,
    );
    assert!(err.contains("cannot open"), "{err}");
    assert!(err.contains("; check the path of the heap dump"), "{err}");
    assert!(!err.contains("stealmark gen"), "{err}");
}

#[test]
fn a_truncated_dump_is_reported_as_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.smk");
    // Cut inside the last edge's to_node: 10 becomes 1.
    let at = V8_SNAPSHOT.find("1,1,10").unwrap() + 5;
    let cut = dir.path().join("cut.heapsnapshot");
    std::fs::write(&cut, &V8_SNAPSHOT[..at]).unwrap();
    let err = fails_with(
        &[
            "import",
            "v8",
            cut.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("cut.heapsnapshot is truncated"), "{err}");
    assert!(!err.contains("to_node"), "{err}");
    assert!(err.contains("again completely"), "{err}");
    assert!(!out.exists());

    // A compressed dump cut short: the decompressor finds the end.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(V8_SNAPSHOT.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let cut_gz = dir.path().join("cut.heapsnapshot.gz");
    std::fs::write(&cut_gz, &gz[..gz.len() / 2]).unwrap();
    let err = fails_with(
        &[
            "import",
            "v8",
            cut_gz.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("cut.heapsnapshot.gz is truncated"), "{err}");
}

#[test]
fn the_output_is_never_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("app.heapsnapshot");
    std::fs::write(&input, V8_SNAPSHOT).unwrap();
    let hard = dir.path().join("hard.smk");
    std::fs::hard_link(&input, &hard).unwrap();
    let dotted = dir.path().join(".").join("app.heapsnapshot");
    #[allow(unused_mut)]
    let mut outputs = vec![input.clone(), dotted, hard];
    #[cfg(unix)]
    {
        let soft = dir.path().join("soft.smk");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        outputs.push(soft);
    }
    let input_s = input.to_str().unwrap();
    for output in &outputs {
        let err = fails_with(
            &["import", "v8", input_s, "-o", output.to_str().unwrap()],
            1,
        );
        assert!(
            err.contains("is the input file"),
            "{}: {err}",
            output.display()
        );
        // --force does not override it.
        fails_with(
            &[
                "import",
                "v8",
                input_s,
                "-o",
                output.to_str().unwrap(),
                "--force",
            ],
            1,
        );
    }
    // Nor is the temporary file beside it.
    let beside = dir.path().join("app");
    std::fs::rename(&input, dir.path().join("app.partial")).unwrap();
    let err = fails_with(
        &[
            "import",
            "v8",
            dir.path().join("app.partial").to_str().unwrap(),
            "-o",
            beside.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("is the input file"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.partial")).unwrap(),
        V8_SNAPSHOT,
        "the input is untouched"
    );
}

#[test]
fn an_existing_file_is_replaced_only_if_it_is_a_snapshot_or_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("app.heapsnapshot");
    std::fs::write(&input, V8_SNAPSHOT).unwrap();
    let other = dir.path().join("other.hprof");
    std::fs::write(&other, b"JAVA PROFILE 1.0.2\0").unwrap();
    let (input_s, other_s) = (input.to_str().unwrap(), other.to_str().unwrap());
    let err = fails_with(&["import", "v8", input_s, "-o", other_s], 1);
    assert!(
        err.contains(
            "exists and is not a stealmark snapshot (it looks like a Java HPROF heap dump)"
        ),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&other).unwrap(), b"JAVA PROFILE 1.0.2\0");
    // A snapshot is replaced without --force; anything with it.
    let ok = |out: &str, extra: &[&str]| {
        stealmark()
            .args(["import", "v8", input_s, "-o", out])
            .args(extra)
            .assert()
            .success();
    };
    let smk = dir.path().join("app.smk");
    ok(smk.to_str().unwrap(), &[]);
    ok(smk.to_str().unwrap(), &[]);
    ok(other_s, &["--force"]);
    assert!(std::fs::read(&other).unwrap().starts_with(b"\x89SMH"));
}

#[test]
fn the_wrong_format_is_named_with_the_right_command() {
    let dir = tempfile::tempdir().unwrap();
    let v8 = dir.path().join("app.heapsnapshot");
    std::fs::write(&v8, V8_SNAPSHOT).unwrap();
    let out = dir.path().join("out.smk");
    let out_s = out.to_str().unwrap();
    let err = fails_with(&["import", "hprof", v8.to_str().unwrap(), "-o", out_s], 1);
    assert!(err.contains("looks like a V8 heap snapshot"), "{err}");
    assert!(err.contains("`stealmark import v8 "), "{err}");
    let hprof = dir.path().join("java.hprof");
    std::fs::write(&hprof, b"JAVA PROFILE 1.0.2\0\0\0\x08").unwrap();
    let err = fails_with(&["import", "v8", hprof.to_str().unwrap(), "-o", out_s], 1);
    assert!(err.contains("`stealmark import hprof "), "{err}");
    // A stealmark snapshot needs no import.
    let smk = dir.path().join("app.smk");
    stealmark()
        .args(["import", "v8"])
        .arg(&v8)
        .arg("-o")
        .arg(&smk)
        .assert()
        .success();
    let err = fails_with(&["import", "v8", smk.to_str().unwrap(), "-o", out_s], 1);
    assert!(err.contains("already a stealmark snapshot"), "{err}");
    let err = fails_with(
        &["import", "v8", dir.path().to_str().unwrap(), "-o", out_s],
        1,
    );
    assert!(err.contains("is a directory"), "{err}");
    assert!(!out.exists());
}
