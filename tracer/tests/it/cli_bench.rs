//! `stealmark bench`: every output format, the plot, and bad input.

use crate::common;

use common::{assert_svg, fails_with, gen, help_of, json_of, stealmark};
use predicates::prelude::*;

#[test]
fn json_has_one_result_per_configuration_with_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 10_000);
    let doc = json_of(stealmark().arg("bench").arg(&path).args([
        "--threads",
        "1,2",
        "--deques",
        "chase-lev,locked",
        "--policies",
        "on-empty,threshold",
        "--runs",
        "3",
        "--format",
        "json",
    ]));
    assert_eq!(doc["time_unit"], "ms");
    let results = doc["bench"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    assert_eq!(doc["bench"]["baseline"], "chase-lev / on-empty");
    let marked = results[0]["marked_objects"].clone();
    for r in results {
        assert_eq!(r["marked_objects"], marked);
        assert_eq!(r["per_run"].as_array().unwrap().len(), 3);
        for key in ["min", "p50", "p90", "p99", "max", "mean"] {
            assert!(r["pause_ms"][key].as_f64().unwrap() > 0.0);
        }
        assert_eq!(r["engine"]["workers"], r["threads"]);
        assert_eq!(r["engine"]["deque"], r["deque"]);
        assert_eq!(r["engine"]["policy"], r["policy"]);
        for key in ["user_ms", "sys_ms", "cpu_over_real"] {
            assert!(r["cpu"][key].as_f64().unwrap() >= 0.0, "{key}: {r}");
        }
        assert!(r["termination_latency_ms"].is_f64(), "{r}");
        assert!(r["per_run"][0]["pause_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["ratio_to_baseline"].as_f64().unwrap() > 0.0);
        if r["deque"] == "chase-lev" && r["policy"] == "on-empty" {
            assert_eq!(r["ratio_to_baseline"], 1.0, "the baseline against itself");
        }
        if r["threads"] == 1 {
            assert_eq!(r["speedup"], 1.0);
        }
    }
}

#[test]
fn table_markdown_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "binary-tree", 5000);
    let base = [
        "--threads",
        "2",
        "--deques",
        "steal-half,crossbeam",
        "--runs",
        "2",
    ];
    stealmark()
        .arg("bench")
        .arg(&path)
        .args(base)
        .assert()
        .success()
        .stdout(predicate::str::contains("vs baseline"))
        .stdout(predicate::str::contains("crossbeam"));
    let md = stealmark()
        .arg("bench")
        .arg(&path)
        .args(base)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.starts_with("| workers | deque |"), "{md}");
    assert_eq!(md.lines().count(), 4);
    let csv = stealmark()
        .arg("bench")
        .arg(&path)
        .args(base)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("workers,deque,p50 ms"));
    let width = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == width));
    // Every cell but the deque's name is a number a spreadsheet reads.
    let header: Vec<&str> = lines[0].split(',').collect();
    for line in &lines[1..] {
        for (name, cell) in header.iter().zip(line.split(',')) {
            if *name != "deque" {
                assert!(cell.parse::<f64>().is_ok(), "{name} = {cell:?}: {csv}");
            }
        }
    }
    let table = stealmark()
        .arg("bench")
        .arg(&path)
        .args(base)
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains("user ms") && table.contains("sys ms"),
        "{table}"
    );
    assert!(
        table.contains("1.00x"),
        "people read ratios with an x: {table}"
    );
}

#[test]
fn balancing_parameters_apply_to_every_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 3000);
    let doc = json_of(stealmark().arg("bench").arg(&path).args([
        "--threads",
        "2",
        "--deques",
        "abp",
        "--policies",
        "on-empty,probabilistic",
        "--mu",
        "0.5",
        "--balance-interval",
        "32",
        "--runs",
        "1",
        "--format",
        "json",
    ]));
    for r in doc["bench"]["results"].as_array().unwrap() {
        assert_eq!(r["engine"]["mu"], 0.5, "{r}");
        assert_eq!(r["engine"]["balance_interval"], 32, "{r}");
    }
    let file = path.to_str().unwrap();
    let err = fails_with(&["bench", file, "--threshold-factor", "3"], 2);
    assert!(err.contains("with --policies"), "{err}");
}

#[test]
fn repeated_list_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "list", 100);
    let file = path.to_str().unwrap();
    let err = fails_with(&["bench", file, "--threads", "2,2"], 2);
    assert!(err.contains("--threads names 2 twice"), "{err}");
    fails_with(&["bench", file, "--deques", "abp,locked,abp"], 2);
    fails_with(&["bench", file, "--policies", "threshold,threshold"], 2);
}

#[test]
fn plot_is_a_valid_svg() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 5000);
    let svg = dir.path().join("bench.svg");
    stealmark()
        .arg("bench")
        .arg(&path)
        .args([
            "--threads",
            "1,2",
            "--deques",
            "abp,steal-half",
            "--runs",
            "2",
            "--format",
            "csv",
            "--plot",
        ])
        .arg(&svg)
        .assert()
        .success();
    let texts = assert_svg(&svg);
    assert!(texts.iter().any(|t| t.contains("2 workers")), "{texts:?}");
    assert!(texts.iter().any(|t| t == "steal-half"), "{texts:?}");
    // The title names what every bar shares: the policy and the steals.
    assert!(
        texts.iter().any(|t| t.starts_with("random-5000.smk: ")
            && t.contains("on-empty policy")
            && t.contains("thieves take half from random victims")),
        "{texts:?}"
    );
}

#[test]
fn a_bad_plot_path_fails_before_the_runs() {
    // The snapshot does not exist either: the error is the plot's, so it
    // was checked first.
    let err = fails_with(
        &[
            "bench",
            "/nonexistent/heap.smk",
            "--runs",
            "3",
            "--plot",
            "/nonexistent-dir/b.svg",
        ],
        1,
    );
    assert!(
        err.contains("cannot write --plot /nonexistent-dir/b.svg: the directory /nonexistent-dir does not exist"),
        "{err}"
    );
    assert!(
        !err.contains("stealmark gen"),
        "not a snapshot problem: {err}"
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "list", 100);
    let file = path.to_str().unwrap();
    fails_with(&["bench", file, "--threads", "1,0"], 2);
    fails_with(&["bench", file, "--deques", "abp,bogus"], 2);
    fails_with(&["bench", file, "--policies", "never"], 2);
    fails_with(&["bench", file, "--format", "xml"], 2);
    fails_with(&["bench", file, "--runs", "0"], 2);
    fails_with(&["bench", "/nonexistent/heap.smk"], 1);
}

#[test]
fn help_shows_an_example() {
    help_of(&["bench"]).stdout(predicate::str::contains(
        "stealmark bench heap.smk --threads",
    ));
}

#[test]
fn reference_adds_the_oracle_sequential_and_floor_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "power-law", 8000);
    let doc = json_of(stealmark().arg("bench").arg(&path).args([
        "--threads",
        "1,2",
        "--deques",
        "steal-half,idempotent",
        "--private-stack",
        "off",
        "--reference",
        "--runs",
        "2",
        "--format",
        "json",
    ]));
    let results = doc["bench"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 4 + 3);
    let names: Vec<&str> = results[4..]
        .iter()
        .map(|r| r["deque"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["oracle", "sequential", "floor"]);
    let marked = results[0]["marked_objects"].as_u64().unwrap();
    assert!(marked > 0);
    for r in results {
        assert_eq!(r["marked_objects"].as_u64(), Some(marked), "{r}");
        assert_eq!(r["per_run"].as_array().unwrap().len(), 2);
        assert!(r["ratio_to_baseline"].as_f64().unwrap() > 0.0, "{r}");
    }
    for r in &results[..4] {
        assert_eq!(r["engine"]["private_work"], false, "{r}");
    }
    for r in &results[4..] {
        assert_eq!(r["threads"], 1);
        assert!(r["engine"].is_null(), "{r}");
        assert!(r["speedup"].is_null(), "{r}");
    }
    // The table has the three rows too, with no speedup.
    let table = stealmark()
        .arg("bench")
        .arg(&path)
        .args([
            "--threads",
            "2",
            "--deques",
            "idempotent",
            "--reference",
            "--runs",
            "1",
        ])
        .output()
        .unwrap();
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    for name in ["oracle", "sequential", "floor"] {
        let row = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} row in\n{text}"));
        assert!(row.contains(" - "), "{row}");
    }
}

#[test]
fn reference_refuses_a_heap_whose_weak_slots_change_the_marking() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 5000);
    let err = fails_with(
        &[
            "bench",
            path.to_str().unwrap(),
            "--threads",
            "1",
            "--deques",
            "steal-half",
            "--reference",
            "--runs",
            "1",
        ],
        2,
    );
    assert!(err.contains("--all-strong"), "{err}");
}

#[test]
fn private_stack_takes_on_or_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2000);
    let err = fails_with(
        &["bench", path.to_str().unwrap(), "--private-stack", "maybe"],
        2,
    );
    assert!(err.contains("on or off"), "{err}");
}

#[test]
fn count_live_applies_to_the_engine_and_the_reference_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 6000);
    let bench = |count_live: Option<&str>| {
        let mut cmd = stealmark();
        cmd.arg("bench").arg(&path).args([
            "--threads",
            "1,2",
            "--deques",
            "steal-half",
            "--reference",
            "--runs",
            "1",
            "--format",
            "json",
        ]);
        if let Some(on) = count_live {
            cmd.args(["--count-live", on]);
        }
        json_of(&mut cmd)
    };
    // On (the default): every row counts, and all count the same bytes.
    for doc in [bench(None), bench(Some("on"))] {
        assert_eq!(doc["count_live"], true, "{doc}");
        let results = doc["bench"]["results"].as_array().unwrap();
        let bytes = results[0]["live_bytes"].as_u64().unwrap();
        assert!(bytes > 0);
        for r in results {
            assert_eq!(r["count_live"], true, "{r}");
            assert_eq!(r["live_bytes"].as_u64(), Some(bytes), "{r}");
        }
    }
    // Off: only the oracle counts.
    let doc = bench(Some("off"));
    assert_eq!(doc["count_live"], false);
    for r in doc["bench"]["results"].as_array().unwrap() {
        let oracle = r["deque"] == "oracle";
        assert_eq!(r["count_live"], oracle, "{r}");
        assert_eq!(r["live_bytes"].as_u64().unwrap() > 0, oracle, "{r}");
        if let Some(engine) = r["engine"].as_object() {
            assert_eq!(engine["count_live"], false, "{r}");
        }
    }
    // The table says what the reference rows do.
    let text = |on: &str| {
        let out = stealmark()
            .arg("bench")
            .arg(&path)
            .args(["--threads", "1", "--deques", "steal-half", "--reference"])
            .args(["--runs", "1", "--count-live", on])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(text("on").contains("the floor count live bytes and types as the engine does"));
    assert!(text("off").contains("the floor do not count live bytes and types"));
    fails_with(&["bench", "x.smk", "--count-live", "maybe"], 2);
}
