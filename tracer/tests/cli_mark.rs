//! `stealmark mark`: the JSON report, every option, trace and plot files,
//! and bad input.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{assert_svg, fails_with, gen, json_of, stealmark};
use predicates::prelude::*;

const DEQUES: [&str; 5] = ["steal-half", "chase-lev", "abp", "locked", "crossbeam"];
const POLICIES: [&str; 3] = ["on-empty", "probabilistic", "threshold"];

#[test]
fn json_report_has_the_contract_keys_and_the_oracle_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let info = json_of(stealmark().arg("info").arg(&path).arg("--json"));
    let m = json_of(stealmark().arg("mark").arg(&path).args([
        "--threads",
        "2",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--json",
    ]));
    assert_eq!(m["marked_objects"], info["reachable_objects"]);
    assert_eq!(m["marked_bytes"], info["reachable_bytes"]);
    assert_eq!(m["runs"], 3);
    assert_eq!(m["threads"], 2);
    assert_eq!(m["deque"], "steal-half");
    assert_eq!(m["policy"], "on-empty");
    for key in ["min", "p50", "p90", "p99", "max", "mean"] {
        assert!(
            m["pause_ms"][key].as_f64().unwrap() > 0.0,
            "pause_ms.{key}: {m}"
        );
    }
    let p = &m["pause_ms"];
    assert!(p["min"].as_f64() <= p["p50"].as_f64() && p["p50"].as_f64() <= p["max"].as_f64());
    let workers = m["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    let marked: u64 = workers
        .iter()
        .map(|w| w["objects_marked"].as_u64().unwrap())
        .sum();
    assert_eq!(marked, m["marked_objects"].as_u64().unwrap());
    for key in [
        "steal_attempts",
        "steal_successes",
        "pushes",
        "pops",
        "busy_ns",
        "idle_ns",
    ] {
        assert!(workers[0][key].is_u64(), "workers[0].{key}: {m}");
    }
    assert!(m["balance"]["max_over_mean"].as_f64().unwrap() >= 1.0);
}

#[test]
fn every_deque_policy_and_option_marks_the_same_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "power-law", 5000);
    let seq =
        json_of(
            stealmark()
                .arg("mark")
                .arg(&path)
                .args(["--sequential", "--runs", "1", "--json"]),
        );
    let expected = seq["marked_objects"].clone();
    assert_eq!(seq["deque"], "sequential");
    assert_eq!(seq["workers"][0]["objects_marked"], expected);
    for deque in DEQUES {
        for policy in POLICIES {
            let m = json_of(stealmark().arg("mark").arg(&path).args([
                "--threads",
                "3",
                "--deque",
                deque,
                "--policy",
                policy,
                "--runs",
                "1",
                "--warmup",
                "0",
                "--json",
            ]));
            assert_eq!(m["marked_objects"], expected, "{deque} {policy}");
            assert_eq!(m["deque"], deque);
            assert_eq!(m["policy"], policy);
        }
    }
    let m = json_of(stealmark().arg("mark").arg(&path).args([
        "--threads",
        "2",
        "--steal",
        "one",
        "--victim",
        "best-of-2",
        "--no-prefetch",
        "--runs",
        "2",
        "--verify",
        "--json",
    ]));
    assert_eq!(m["marked_objects"], expected);
    assert_eq!(m["steal"], "one");
    assert_eq!(m["victim"], "best-of-2");
    assert_eq!(m["prefetch"], false);
    assert_eq!(m["verified"], true);
}

#[test]
fn text_report_shows_pauses_and_workers() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "binary-tree", 5000);
    stealmark()
        .arg("mark")
        .arg(&path)
        .args(["--threads", "2", "--runs", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("p99"))
        .stdout(predicate::str::contains("balance"))
        .stdout(predicate::str::contains("worker"));
}

/// Marks `heap` with 2 workers in 3 measured runs, writing `trace`; checks
/// that the trace is valid trace-event JSON with one process per run, a
/// pause track, and on every worker thread marking, stealing and
/// termination spans; returns the kinds of span the workers have.
fn traced_span_kinds(heap: &std::path::Path, trace: &std::path::Path) -> BTreeSet<String> {
    stealmark()
        .arg("mark")
        .arg(heap)
        .args([
            "--threads",
            "2",
            "--runs",
            "3",
            "--warmup",
            "0",
            "--trace-out",
        ])
        .arg(trace)
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    // (pid, tid) → the thread's name, and the names of its spans.
    let mut threads: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut spans: BTreeMap<(u64, u64), BTreeSet<String>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        assert!(e["name"].is_string(), "{e}");
        let thread = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        match ph {
            "X" => {
                let ts = e["ts"].as_f64().expect("ts");
                let dur = e["dur"].as_f64().expect("dur");
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                spans
                    .entry(thread)
                    .or_default()
                    .insert(e["name"].as_str().unwrap().to_string());
            }
            "C" => assert!(e["args"].is_object() && e["ts"].is_number(), "{e}"),
            "M" => {
                assert!(e["args"]["name"].is_string() || e["args"]["sort_index"].is_number());
                if e["name"] == "thread_name" {
                    threads.insert(thread, e["args"]["name"].as_str().unwrap().to_string());
                }
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    let pids: BTreeSet<u64> = events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 3, "one process per measured run");
    for pid in pids {
        let pause = threads
            .iter()
            .find(|(&(p, _), name)| p == pid && *name == "pause")
            .map(|(&thread, _)| thread)
            .expect("a pause track per run");
        assert_eq!(spans[&pause], BTreeSet::from(["pause".to_string()]));
    }
    let workers: Vec<(u64, u64)> = threads
        .iter()
        .filter(|(_, name)| name.starts_with("GC worker "))
        .map(|(&thread, _)| thread)
        .collect();
    assert_eq!(workers.len(), 6, "two workers in each run: {threads:?}");
    let mut kinds = BTreeSet::new();
    for thread in &workers {
        let names = spans.get(thread).cloned().unwrap_or_default();
        for kind in ["marking", "stealing", "termination"] {
            assert!(
                names.contains(kind),
                "{kind} missing on {thread:?}: {names:?}"
            );
        }
        kinds.extend(names);
    }
    kinds
}

#[test]
fn trace_out_is_valid_trace_event_json() {
    let dir = tempfile::tempdir().unwrap();
    // One root and a binary tree: the second worker can only get work by
    // stealing.
    let heap = gen(dir.path(), "binary-tree", 200_000);
    let trace = dir.path().join("trace.json");
    // An idle span is a worker that ran dry and later found work again
    // (its last idle span is its termination span); whether that happens
    // depends on the scheduler, and on a busy machine a run may not have
    // one, so this retries a few times.
    let all: BTreeSet<String> = ["marking", "stealing", "idle", "termination"]
        .map(String::from)
        .into();
    let mut kinds = BTreeSet::new();
    for _ in 0..20 {
        kinds = traced_span_kinds(&heap, &trace);
        if kinds == all {
            break;
        }
    }
    assert_eq!(kinds, all);
}

#[test]
fn plot_is_a_valid_svg() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 20_000);
    let svg = dir.path().join("mark.svg");
    stealmark()
        .arg("mark")
        .arg(&path)
        .args(["--threads", "2", "--runs", "5", "--plot"])
        .arg(&svg)
        .assert()
        .success();
    let texts = assert_svg(&svg);
    assert!(texts.iter().any(|t| t.contains("worker 1")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("p99")), "{texts:?}");
    let seq_svg = dir.path().join("seq.svg");
    stealmark()
        .arg("mark")
        .arg(&path)
        .args(["--sequential", "--runs", "3", "--plot"])
        .arg(&seq_svg)
        .assert()
        .success();
    assert_svg(&seq_svg);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "list", 100);
    let file = path.to_str().unwrap();
    let err = fails_with(&["mark", file, "--threads", "0"], 2);
    assert!(err.contains("at least 1"), "{err}");
    let err = fails_with(&["mark", file, "--deque", "stealhalf"], 2);
    assert!(err.contains("steal-half"), "lists the deques: {err}");
    fails_with(&["mark", file, "--policy", "sometimes"], 2);
    fails_with(&["mark", file, "--steal", "all"], 2);
    fails_with(&["mark", file, "--victim", "oldest"], 2);
    fails_with(&["mark", file, "--runs", "0"], 2);
    fails_with(&["mark", file, "--sequential", "--deque", "abp"], 2);
    fails_with(&["mark"], 2);
}

#[test]
fn missing_or_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let err = fails_with(&["mark", "/nonexistent/heap.smk"], 1);
    assert!(err.contains("/nonexistent/heap.smk"), "{err}");
    let junk = dir.path().join("junk.smk");
    std::fs::write(&junk, vec![0xffu8; 4096]).unwrap();
    fails_with(&["mark", junk.to_str().unwrap()], 1);
    let path = gen(dir.path(), "list", 100);
    let err = fails_with(
        &[
            "mark",
            path.to_str().unwrap(),
            "--trace-out",
            "/nonexistent-dir/t.json",
        ],
        1,
    );
    assert!(err.contains("/nonexistent-dir/t.json"), "{err}");
}

#[test]
fn more_workers_than_cores() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "wide", 5000);
    let m = json_of(stealmark().arg("mark").arg(&path).args([
        "--threads",
        "16",
        "--runs",
        "2",
        "--json",
    ]));
    assert_eq!(m["marked_objects"], 5000);
    assert_eq!(m["workers"].as_array().unwrap().len(), 16);
}

#[test]
fn help_shows_an_example() {
    stealmark()
        .args(["mark", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "stealmark mark heap.smk --threads",
        ));
}
