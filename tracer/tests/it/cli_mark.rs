//! `stealmark mark`: the JSON report, every option, trace and plot files,
//! and bad input.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{
    assert_svg, fails_with, gen, help_of, info_json, mark_fails, mark_json, mark_ok, stealmark,
};
use predicates::prelude::*;

const DEQUES: [&str; 6] = [
    "steal-half",
    "chase-lev",
    "abp",
    "locked",
    "crossbeam",
    "idempotent",
];
const POLICIES: [&str; 3] = ["on-empty", "probabilistic", "threshold"];

#[test]
fn json_report_has_the_contract_keys_and_the_oracle_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let info = info_json(&path);
    let m = mark_json(&path, &["--threads", "2", "--runs", "3", "--warmup", "1"]);
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
    for key in ["steal_attempts", "steal_successes", "pushes", "pops"] {
        assert!(workers[0][key].is_u64(), "workers[0].{key}: {m}");
    }
    for key in ["busy_ms", "idle_ms"] {
        assert!(workers[0][key].is_f64(), "workers[0].{key}: {m}");
    }
    assert!(m["balance"]["max_over_mean"].as_f64().unwrap() >= 1.0);
}

/// Every key at any depth of `doc`, with its path.
fn keys(doc: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match doc {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(format!("{path}.{k}"));
                keys(v, &format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                keys(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_times_are_all_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 5000);
    let m = mark_json(&path, &["--threads", "2", "--runs", "2"]);
    assert_eq!(m["time_unit"], "ms");
    let mut all = Vec::new();
    keys(&m, "", &mut all);
    let other_units: Vec<&String> = all
        .iter()
        .filter(|k| k.ends_with("_ns") || k.ends_with("_us"))
        .collect();
    assert!(other_units.is_empty(), "{other_units:?}");
    // per_run's pauses are the same numbers as pause_ms's.
    let per_run: Vec<f64> = m["per_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pause_ms"].as_f64().unwrap())
        .collect();
    let max = per_run.iter().copied().fold(0.0, f64::max);
    assert_eq!(max, m["pause_ms"]["max"].as_f64().unwrap());
    assert!(m["termination_latency_ms"]["p50"].is_f64(), "{m}");
}

#[test]
fn cpu_time_is_reported_beside_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "binary-tree", 100_000);
    let m = mark_json(&path, &["--threads", "2", "--runs", "3"]);
    let cpu = &m["cpu"];
    for key in ["user_ms", "sys_ms"] {
        for stat in ["min", "p50", "max"] {
            assert!(cpu[key][stat].as_f64().unwrap() >= 0.0, "{key}: {m}");
        }
    }
    assert!(cpu["cpu_over_real"].as_f64().unwrap() > 0.0, "{m}");
    assert!(cpu["descheduled_runs"].as_u64().unwrap() <= 3);
    let mut total = 0.0;
    for run in m["per_run"].as_array().unwrap() {
        total += run["user_ms"].as_f64().unwrap() + run["sys_ms"].as_f64().unwrap();
    }
    assert!(total > 0.0, "marking uses CPU time: {m}");
    let seq = mark_json(&path, &["--sequential", "--runs", "2"]);
    assert!(seq["cpu"]["user_ms"]["p50"].is_f64(), "{seq}");

    // The text report puts it in HotSpot's form.
    mark_ok(&path, &["--threads", "2", "--runs", "2"]).stdout(
        predicate::str::is_match(r"user=[0-9.]+ ms sys=[0-9.]+ ms, real=[0-9.]+ ms").unwrap(),
    );
}

#[test]
fn more_workers_than_cpus_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "wide", 2000);
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = |threads: usize| {
        let threads = threads.to_string();
        let out = mark_ok(&path, &["--threads", &threads, "--runs", "1", "--json"]);
        String::from_utf8(out.get_output().stderr.clone()).unwrap()
    };
    let err = run(ncpu + 1);
    assert!(
        err.contains(&format!("warning: {} GC workers on {ncpu} CPU", ncpu + 1)),
        "{err}"
    );
    assert!(!run(ncpu).contains("GC workers on"), "no warning at ncpu");
}

#[test]
fn balancing_parameters_reach_the_engine_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "power-law", 5000);
    let m = mark_json(
        &path,
        &[
            "--threads",
            "2",
            "--policy",
            "probabilistic",
            "--mu",
            "0.25",
            "--balance-interval",
            "4",
            "--runs",
            "1",
        ],
    );
    let engine = &m["engine"];
    assert_eq!(engine["mu"], 0.25);
    assert_eq!(engine["balance_interval"], 4);
    assert_eq!(engine["policy"], "probabilistic");
    for key in [
        "workers",
        "deque",
        "steal",
        "victim",
        "threshold_factor",
        "prefetch",
        "private_work",
        "deque_reserve",
        "deque_capacity",
        "array_chunk",
        "timeline_interval",
        "seed",
    ] {
        assert!(!engine[key].is_null(), "engine.{key}: {m}");
    }
    let m = mark_json(
        &path,
        &[
            "--threads",
            "2",
            "--policy",
            "threshold",
            "--threshold-factor",
            "3.5",
            "--runs",
            "1",
        ],
    );
    assert_eq!(m["engine"]["threshold_factor"], 3.5);

    let file = path.to_str().unwrap();
    let err = mark_fails(file, &["--mu", "0.5"], 2);
    assert!(
        err.contains("--mu applies to the probabilistic policy"),
        "{err}"
    );
    let err = mark_fails(
        file,
        &["--policy", "probabilistic", "--threshold-factor", "3"],
        2,
    );
    assert!(
        err.contains("--threshold-factor applies to the threshold"),
        "{err}"
    );
    let err = mark_fails(file, &["--policy", "probabilistic", "--mu", "-1"], 2);
    assert!(err.contains("must be positive"), "{err}");
    mark_fails(
        file,
        &["--policy", "threshold", "--threshold-factor", "1"],
        2,
    );
    mark_fails(file, &["--balance-interval", "0"], 2);
    mark_fails(file, &["--sequential", "--balance-interval", "8"], 2);
}

#[test]
fn the_worker_table_says_what_deque_pushes_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "binary-tree", 20_000);
    mark_ok(&path, &["--threads", "2", "--runs", "1"])
        .stdout(predicate::str::contains("deque pushes"))
        .stdout(predicate::str::contains(
            "private stack + deque + prefetch FIFO",
        ));
}

#[test]
fn every_deque_policy_and_option_marks_the_same_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "power-law", 5000);
    let seq = mark_json(&path, &["--sequential", "--runs", "1"]);
    let expected = seq["marked_objects"].clone();
    assert_eq!(seq["deque"], "sequential");
    assert_eq!(seq["workers"][0]["objects_marked"], expected);
    for deque in DEQUES {
        for policy in POLICIES {
            let m = mark_json(
                &path,
                &[
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
                ],
            );
            assert_eq!(m["marked_objects"], expected, "{deque} {policy}");
            assert_eq!(m["deque"], deque);
            assert_eq!(m["policy"], policy);
        }
    }
    let m = mark_json(
        &path,
        &[
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
        ],
    );
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
    mark_ok(&path, &["--threads", "2", "--runs", "2"])
        .stdout(predicate::str::contains("p99"))
        .stdout(predicate::str::contains("balance"))
        .stdout(predicate::str::contains("worker"));
}

/// Marks `heap` with 2 workers in 3 measured runs, writing `trace`; checks
/// that the trace is valid trace-event JSON with one process per run, a
/// pause track, and on every worker thread marking, stealing and
/// termination spans; returns the kinds of span the workers have.
fn traced_span_kinds(heap: &std::path::Path, trace: &std::path::Path) -> BTreeSet<String> {
    let trace_out = trace.to_str().unwrap();
    mark_ok(
        heap,
        &[
            "--threads",
            "4",
            "--runs",
            "3",
            "--warmup",
            "0",
            "--trace-out",
            trace_out,
        ],
    );
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
            "C" => {
                assert!(e["args"]["held"].is_u64() && e["ts"].is_number(), "{e}");
                let name = e["name"].as_str().unwrap();
                assert!(name.starts_with("grey objects held, worker "), "{e}");
            }
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
    assert_eq!(workers.len(), 12, "four workers in each run: {threads:?}");
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
    // One root and a binary tree: every worker but the first can only get
    // work by stealing.
    let heap = gen(dir.path(), "binary-tree", 200_000);
    let trace = dir.path().join("trace.json");
    // An idle span is a worker that ran dry and later found work again
    // (its last idle span is its termination span); whether that happens
    // depends on the scheduler, so this retries a few times. Four workers,
    // more than CI's two cores: a worker preempted while holding work leaves
    // the others to run dry and steal it later. With two workers, a quiet
    // machine often kept both busy to the end, and all twenty tries failed
    // in about one run of this test in fifty.
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
    mark_ok(
        &path,
        &[
            "--threads",
            "2",
            "--runs",
            "5",
            "--plot",
            svg.to_str().unwrap(),
        ],
    );
    let texts = assert_svg(&svg);
    assert!(texts.iter().any(|t| t.contains("worker 1")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("p99")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains("grey objects held")),
        "the timeline says what it counts: {texts:?}"
    );
    let title = texts
        .iter()
        .find(|t| t.starts_with("random-20000.smk: "))
        .expect("a title naming the heap");
    assert_eq!(
        title,
        "random-20000.smk: steal-half deque, on-empty policy, thieves take half from random victims, 2 workers"
    );
    let seq_svg = dir.path().join("seq.svg");
    mark_ok(
        &path,
        &[
            "--sequential",
            "--runs",
            "3",
            "--plot",
            seq_svg.to_str().unwrap(),
        ],
    );
    assert_svg(&seq_svg);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "list", 100);
    let file = path.to_str().unwrap();
    let err = mark_fails(file, &["--threads", "0"], 2);
    assert!(err.contains("at least 1"), "{err}");
    let err = mark_fails(file, &["--deque", "stealhalf"], 2);
    assert!(err.contains("steal-half"), "lists the deques: {err}");
    mark_fails(file, &["--policy", "sometimes"], 2);
    mark_fails(file, &["--steal", "all"], 2);
    mark_fails(file, &["--victim", "oldest"], 2);
    mark_fails(file, &["--runs", "0"], 2);
    mark_fails(file, &["--sequential", "--deque", "abp"], 2);
    let err = mark_fails(
        file,
        &["--sequential", "--deque", "abp", "--threads", "2"],
        2,
    );
    assert!(
        err.contains("cannot be used with: --deque <KIND>, --threads <N>; "),
        "the list follows the colon: {err}"
    );
    assert!(err.ends_with("see `stealmark mark --help`\n"), "{err}");
    let err = mark_fails(file, &["--runs", "-3"], 2);
    assert!(err.contains("must be positive"), "{err}");
    mark_fails(file, &["--warmup", "-1"], 2);
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
    let file = path.to_str().unwrap();
    let err = mark_fails(file, &["--trace-out", "/nonexistent-dir/t.json"], 1);
    assert!(err.contains("/nonexistent-dir/t.json"), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(
        !err.contains("stealmark gen"),
        "not a snapshot problem: {err}"
    );
    let err = mark_fails(file, &["--plot", dir.path().to_str().unwrap()], 1);
    assert!(
        err.contains("--plot") && err.contains("is a directory"),
        "{err}"
    );
}

#[test]
fn output_paths_are_checked_before_the_snapshot_is_even_opened() {
    // The snapshot does not exist either: the error is the output's, so it
    // was checked first.
    for flag in ["--trace-out", "--plot"] {
        let err = mark_fails("/nonexistent/heap.smk", &[flag, "/nonexistent-dir/x"], 1);
        assert!(err.contains("/nonexistent-dir"), "{flag}: {err}");
    }
}

#[test]
fn a_failed_write_after_the_runs_still_prints_the_results() {
    // /dev/full accepts the open and fails every write (ENOSPC), after
    // the checks made before the runs.
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        eprintln!("SKIPPED: no /dev/full");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2000);
    let out = stealmark()
        .arg("mark")
        .arg(&path)
        .args(["--threads", "2", "--runs", "2", "--json", "--trace-out"])
        .arg(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot create a file in /dev") {
        eprintln!("SKIPPED: /dev is not writable here (not root)");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the results");
    assert_eq!(doc["runs"], 2);
    assert!(stderr.contains("/dev/full"), "{stderr}");
}

#[test]
fn more_workers_than_cores() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "wide", 5000);
    let m = mark_json(&path, &["--threads", "16", "--runs", "2"]);
    assert_eq!(m["marked_objects"], 5000);
    assert_eq!(m["workers"].as_array().unwrap().len(), 16);
}

#[test]
fn help_shows_an_example() {
    help_of(&["mark"]).stdout(predicate::str::contains(
        "stealmark mark heap.smk --threads",
    ));
}

#[test]
fn idempotent_without_the_private_stack_reports_its_duplicate_scans() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 20_000);
    let info = info_json(&path);
    let m = mark_json(
        &path,
        &[
            "--threads",
            "3",
            "--deque",
            "idempotent",
            "--private-stack",
            "off",
            "--runs",
            "2",
            "--verify",
        ],
    );
    assert_eq!(m["marked_objects"], info["reachable_objects"]);
    assert_eq!(m["marked_bytes"], info["reachable_bytes"]);
    assert_eq!(m["verified"], true);
    assert_eq!(m["private_stack"], false);
    assert_eq!(m["engine"]["private_work"], false);
    let sum = |key: &str| -> u64 {
        m["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w[key].as_u64().unwrap())
            .sum()
    };
    let (marked, scanned) = (sum("objects_marked"), sum("objects_scanned"));
    assert_eq!(marked, m["marked_objects"].as_u64().unwrap());
    assert_eq!(m["duplicate_scans"].as_u64(), Some(scanned - marked));
    mark_ok(
        &path,
        &["--threads", "2", "--deque", "idempotent", "--runs", "1"],
    )
    .stdout(predicate::str::contains("duplicate scans"))
    .stdout(predicate::str::contains("private stack on"));
}

#[test]
fn count_live_off_counts_no_live_bytes_and_refuses_verify_and_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 6000);
    let args = ["--threads", "2", "--runs", "1", "--warmup", "0"];
    let on = mark_json(&path, &args);
    assert_eq!(on["count_live"], true);
    assert_eq!(on["engine"]["count_live"], true);
    assert!(on["marked_bytes"].as_u64().unwrap() > 0);
    let off = mark_json(&path, &[&args[..], &["--count-live", "off"]].concat());
    assert_eq!(off["count_live"], false);
    assert_eq!(off["engine"]["count_live"], false);
    assert_eq!(off["marked_bytes"], 0);
    assert_eq!(off["marked_objects"], on["marked_objects"]);
    mark_ok(&path, &[&args[..], &["--count-live", "off"]].concat())
        .stdout(predicate::str::contains("live bytes and types not counted"));
    let file = path.to_str().unwrap();
    for extra in ["--verify", "--histogram"] {
        let err = mark_fails(file, &["--count-live", "off", extra], 2);
        assert!(err.contains("--count-live off"), "{err}");
    }
    mark_fails(file, &["--sequential", "--count-live", "on"], 2);
}
