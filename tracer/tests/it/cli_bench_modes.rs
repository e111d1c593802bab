//! `stealmark bench --mode`: the pause-time benchmark's JSON document, its
//! MMU plot, the snapshot left unchanged by the mutator, every worker count
//! of `--threads`, and bad input.

use crate::common;

use std::path::Path;

use common::{assert_svg, fails_with, gen, help_of, json_of, mark_json, stealmark};

/// `stealmark bench FILE --mode MODES --threads THREADS`, two short rounds
/// of a gentle mutator (20k writes/s, 1k allocations/s), then `extra`.
fn bench_modes(path: &Path, modes: &str, threads: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = stealmark();
    cmd.arg("bench").arg(path).args([
        "--mode",
        modes,
        "--threads",
        threads,
        "--runs",
        "2",
        "--lead-ms",
        "20",
        "--write-rate",
        "20k",
        "--alloc-rate",
        "1k",
    ]);
    cmd.args(extra);
    cmd
}

#[test]
fn json_has_one_entry_per_mode_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let before = std::fs::read(&path).unwrap();
    let svg = dir.path().join("mmu.svg");
    let doc = json_of(
        stealmark()
            .arg("bench")
            .arg(&path)
            .args([
                "--mode",
                "stw,incremental,concurrent",
                "--mutators",
                "2",
                "--threads",
                "2",
                "--runs",
                "2",
                "--lead-ms",
                "20",
                "--write-rate",
                "200k",
                "--step-budget",
                "256",
                "--format",
                "json",
                "--plot",
            ])
            .arg(&svg),
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the mutator wrote to the file"
    );
    let modes = doc["bench"]["modes"].as_array().unwrap();
    let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(names, ["stw", "incremental", "concurrent"]);
    for m in modes {
        assert_eq!(m["rounds"], 2);
        assert!(m["max_pause_ms"].as_f64().unwrap() > 0.0);
        for key in ["min", "p50", "p99", "max"] {
            assert!(m["pause_ms"][key].as_f64().unwrap() > 0.0, "{m}");
        }
        assert!(m["gc_cpu_ms"].as_f64().unwrap() >= 0.0);
        assert!(m["mutator_ops_per_s"].as_f64().unwrap() > 0.0);
        assert!(m["cpu_slowdown"].as_f64().unwrap() < 1.0, "{m}");
        assert!(m["marked_objects"].as_u64().unwrap() > 0);
        let mmu = m["mmu"].as_array().unwrap();
        assert!(!mmu.is_empty());
        for p in mmu {
            let u = p["utilization"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&u), "{p}");
            assert!(p["window_ms"].as_f64().unwrap() >= 1.0);
        }
    }
    // Stop-the-world: one pause a round; the cycles: the start and the
    // remark at least (and an increment's steps).
    assert_eq!(modes[0]["pauses_per_round"], 1.0);
    assert!(modes[1]["pauses_per_round"].as_f64().unwrap() > 2.0);
    assert!(modes[2]["pauses_per_round"].as_f64().unwrap() >= 2.0);
    assert!(assert_svg(&svg).iter().any(|t| t == "concurrent"));
}

#[test]
fn the_incremental_update_modes_get_rows_and_curves_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let reachable = mark_json(&path, &["--runs", "1"])["marked_objects"]
        .as_u64()
        .unwrap();
    let svg = dir.path().join("mmu.svg");
    let doc = json_of(
        bench_modes(
            &path,
            "incremental-iu,concurrent-iu",
            "2",
            // A step flag: incremental-iu takes steps.
            &["--step-interval-us", "500", "--format", "json", "--plot"],
        )
        .arg(&svg),
    );
    let modes = doc["bench"]["modes"].as_array().unwrap();
    let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(names, ["incremental-iu", "concurrent-iu"]);
    for m in modes {
        assert_eq!(m["rounds"], 2, "{m}");
        assert!(m["max_pause_ms"].as_f64().unwrap() > 0.0, "{m}");
        assert!(!m["mmu"].as_array().unwrap().is_empty(), "{m}");
        // The new objects are allocated white: marked only when reached.
        let marked = m["marked_objects"].as_u64().unwrap();
        let allocated = m["allocated_objects"].as_u64().unwrap();
        assert!(marked >= reachable, "{marked} of {reachable}: {m}");
        assert!(marked <= reachable + allocated, "{m}");
        assert_eq!(m["marked_snapshot_objects"], reachable, "{m}");
    }
    // Steps, then the start and the remark; the start and the remark.
    assert!(modes[0]["pauses_per_round"].as_f64().unwrap() > 2.0);
    assert!(modes[1]["pauses_per_round"].as_f64().unwrap() >= 2.0);
    let legend = assert_svg(&svg);
    for name in ["incremental-iu", "concurrent-iu"] {
        assert!(legend.iter().any(|t| t == name), "{name} not in {legend:?}");
    }
}

#[test]
fn bad_modes_and_mutators_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 1000);
    let p = path.to_str().unwrap();
    let err = fails_with(&["bench", p, "--mode", "stw,sometimes"], 2);
    assert!(err.contains("sometimes"), "{err}");
    let err = fails_with(&["bench", p, "--mode", "stw", "--mutators", "0"], 2);
    assert!(err.contains("--mutators"), "{err}");
    let err = fails_with(&["bench", p, "--mutators", "2"], 2);
    assert!(err.contains("--mode"), "{err}");
}

#[test]
fn every_worker_count_gets_a_row_of_each_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let reachable = mark_json(&path, &[])["marked_objects"].as_u64().unwrap();
    let svg = dir.path().join("mmu.svg");
    let doc = json_of(
        bench_modes(
            &path,
            "stw,concurrent",
            "1,2",
            &["--format", "json", "--plot"],
        )
        .arg(&svg),
    );
    assert_eq!(doc["worker_counts"], serde_json::json!([1, 2]));
    assert!(doc.get("workers").is_none(), "one count per entry: {doc}");
    let rows = doc["bench"]["modes"].as_array().unwrap();
    let got: Vec<(&str, u64)> = rows
        .iter()
        .map(|m| (m["mode"].as_str().unwrap(), m["workers"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        [("stw", 1), ("concurrent", 1), ("stw", 2), ("concurrent", 2)]
    );
    for m in rows {
        assert_eq!(m["rounds"], 2, "{m}");
        // The mutator moves references without cutting any off, so the
        // snapshot objects marked are those reachable in the file; new
        // objects are at most those allocated in the round.
        let marked = m["marked_objects"].as_u64().unwrap();
        let allocated = m["allocated_objects"].as_u64().unwrap();
        assert!(
            marked <= reachable + allocated,
            "{marked} > {reachable} + {allocated}: {m}"
        );
        assert!(marked >= reachable, "{marked} of {reachable}: {m}");
    }
    // Paired ratios: the first mode at the same count is its own baseline,
    // and the fewest workers are their own speedup baseline.
    for m in &rows[0..2] {
        assert_eq!(m["max_pause_speedup"], 1.0, "{m}");
    }
    for m in [&rows[0], &rows[2]] {
        assert_eq!(m["max_pause_ratio"], 1.0, "{m}");
    }
    for m in [&rows[1], &rows[3]] {
        let ratio = m["max_pause_ratio"].as_f64().unwrap();
        assert!(ratio.is_finite() && ratio > 0.0, "{m}");
    }
    let legend = assert_svg(&svg);
    for name in [
        "stw, 1 worker",
        "concurrent, 1 worker",
        "stw, 2 workers",
        "concurrent, 2 workers",
    ] {
        assert!(legend.iter().any(|t| t == name), "{name} not in {legend:?}");
    }
}

#[test]
fn csv_and_markdown_have_a_workers_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 5_000);
    let stdout = |cmd: &mut assert_cmd::Command| {
        String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
    };
    let csv = stdout(&mut bench_modes(
        &path,
        "stw,incremental",
        "2,1",
        &["--format", "csv"],
    ));
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(&lines[0][..2], ["mode", "workers"], "{csv}");
    let rows: Vec<(&str, &str)> = lines[1..].iter().map(|l| (l[0], l[1])).collect();
    // In the order of --threads, each with every mode.
    assert_eq!(
        rows,
        [
            ("stw", "2"),
            ("incremental", "2"),
            ("stw", "1"),
            ("incremental", "1")
        ],
        "{csv}"
    );
    let md = stdout(&mut bench_modes(
        &path,
        "stw",
        "1,2",
        &["--format", "markdown"],
    ));
    assert!(
        md.lines().next().unwrap().starts_with("| mode | workers |"),
        "{md}"
    );
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| stw |")).count(),
        2,
        "{md}"
    );
}

#[test]
fn without_threads_one_count_the_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2_000);
    let doc = json_of(stealmark().arg("bench").arg(&path).args([
        "--mode",
        "stw",
        "--runs",
        "1",
        "--lead-ms",
        "5",
        "--format",
        "json",
    ]));
    let ncpu = doc["ncpu"].as_u64().unwrap();
    assert_eq!(doc["worker_counts"], serde_json::json!([ncpu]));
    assert_eq!(doc["bench"]["modes"][0]["workers"], ncpu);
}

#[test]
fn a_worker_count_given_twice_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 1000);
    let p = path.to_str().unwrap();
    let err = fails_with(&["bench", p, "--mode", "stw", "--threads", "1,2,1"], 2);
    assert!(err.contains("--threads") && err.contains("twice"), "{err}");
}

#[test]
fn help_says_every_worker_count_runs() {
    let help = help_of(&["bench"]);
    let text = String::from_utf8_lossy(&help.get_output().stdout).replace('\n', " ");
    assert!(
        text.contains("at every worker count of --threads"),
        "{text}"
    );
    assert!(!text.contains("its first value"), "{text}");
}

#[test]
fn the_mutator_keeps_the_heap_it_names() {
    let dir = tempfile::tempdir().unwrap();
    // The heap: the default seed, whose graph lost most of its
    // objects to a mutator that stored objects near the roots over
    // whatever a slot held (449 marked of 160,080 after three rounds).
    let path = dir.path().join("runtime.smk");
    stealmark()
        .args(["gen", "--shape", "runtime", "--objects", "200k", "-o"])
        .arg(&path)
        .assert()
        .success();
    let reachable = mark_json(&path, &["--runs", "1"])["marked_objects"]
        .as_u64()
        .unwrap();
    let out = stealmark()
        .arg("bench")
        .arg(&path)
        .args(["--mode", "stw,incremental,concurrent", "--threads", "2"])
        .args(["--runs", "3", "--alloc-rate", "1k", "--mutators", "2"])
        .args(["--write-rate", "100k", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("another size"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for m in doc["bench"]["modes"].as_array().unwrap() {
        assert!(m["mutator_ops_per_s"].as_f64().unwrap() > 1000.0, "{m}");
        let marked = m["marked_objects"].as_u64().unwrap();
        assert!(marked >= reachable, "{marked} of {reachable}: {m}");
        assert_eq!(m["reachable_objects"], reachable, "{m}");
        assert_eq!(m["marked_snapshot_objects"], reachable, "{m}");
    }
}

#[test]
fn the_table_shows_the_marked_and_reachable_objects() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2_000);
    let out = bench_modes(&path, "stw", "1", &[]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let header = text.lines().find(|l| l.starts_with("mode")).unwrap();
    assert!(
        header
            .trim_end()
            .ends_with("marked  of snapshot  reachable"),
        "{header}"
    );
}

#[test]
fn flags_the_mode_bench_would_ignore_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 1000);
    let p = path.to_str().unwrap();
    for flag in [
        &["--deques", "abp"][..],
        &["--policies", "probabilistic"],
        &["--mu", "0.5"],
        &["--threshold-factor", "2"],
        &["--balance-interval", "8"],
        &["--steal", "one"],
        &["--victim", "random"],
        &["--private-stack", "off"],
        &["--reference"],
        &["--count-live", "off"],
    ] {
        let args: Vec<&str> = ["bench", p, "--mode", "stw"]
            .iter()
            .chain(flag)
            .copied()
            .collect();
        let err = fails_with(&args, 2);
        assert!(
            err.contains(flag[0]) && err.contains("cannot be used with"),
            "{flag:?}: {err}"
        );
        assert!(err.contains("see `stealmark bench --help`"), "{err}");
    }
    for flag in ["--step-budget", "--step-interval-us"] {
        let err = fails_with(&["bench", p, "--mode", "stw,concurrent", flag, "10"], 2);
        assert!(
            err.contains(&format!(
                "{flag} applies to the incremental mode only; add incremental to --mode"
            )),
            "{err}"
        );
    }
}
