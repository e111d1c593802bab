//! End-to-end tests of `stealmark simulate`.

use crate::common;

use common::{berenbrink_args, fails_with, help_of, hendler_shavit_args, stealmark};
use predicates::prelude::*;
use serde_json::Value;

/// `stealmark simulate args... --json`: checks that it succeeds and
/// returns the document.
fn json(args: &[&str]) -> Value {
    let out = stealmark()
        .arg("simulate")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).expect("one JSON object")
}

const THEOREM_22: [&str; 10] = [
    "--processors",
    "32",
    "--generator-hosts",
    "1",
    "--lambda",
    "0.5",
    "--steps",
    "4000",
    "--seed",
    "3",
];

fn berenbrink(steal: &str, extra: &[&str]) -> Value {
    let mut args = vec!["berenbrink", "--steal", steal];
    args.extend(THEOREM_22);
    args.extend(extra);
    json(&args)
}

#[test]
fn berenbrink_steal_one_diverges_and_steal_half_is_stable() {
    let one = berenbrink("one", &[]);
    assert_eq!(one["stable"], false);
    assert_eq!(one["prediction"], "transient");
    let samples = one["total_load"].as_array().unwrap();
    assert!(samples.len() > 100);
    assert_eq!(samples.last().unwrap()["load"], one["final_total_load"]);
    // λn − 2 = 14 tasks per step cannot be served.
    assert!(one["final_total_load"].as_u64().unwrap() > 14 * 4000 * 95 / 100);
    let half = berenbrink("half", &[]);
    assert_eq!(half["stable"], true);
    assert!(half["final_total_load"].as_u64().unwrap() < 2_000);
}

#[test]
fn berenbrink_table_and_help_explain_the_rule() {
    stealmark()
        .args(["simulate", "berenbrink", "--steal", "one"])
        .args(THEOREM_22)
        .assert()
        .success()
        .stdout(predicate::str::contains("stable                false"))
        .stdout(predicate::str::contains("Theorem 22"));
    help_of(&["simulate", "berenbrink"])
        .stdout(predicate::str::contains("Stability rule"))
        .stdout(predicate::str::contains("1% of the arrival"));
}

#[test]
fn berenbrink_plot_draws_both_policies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.svg");
    stealmark()
        .args(["simulate", "berenbrink", "--steal", "const:2", "--plot"])
        .arg(&path)
        .args(THEOREM_22)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("steal one") && svg.contains("steal half"));
}

#[test]
fn berenbrink_real_threads_on_two_deques() {
    for deque in ["locked", "crossbeam"] {
        let real = |steal| {
            let mut args = berenbrink_args("4", "1", "0.75", steal, "2000").to_vec();
            args.extend(["--real", "--deque", deque]);
            json(&args)
        };
        let one = real("one");
        assert_eq!(one["deque"], deque);
        assert_eq!(one["conserved"], true);
        assert_eq!(one["stable"], false, "{deque}");
        let half = real("half");
        assert_eq!(half["stable"], true, "{deque}");
        assert_eq!(half["conserved"], true);
    }
}

#[test]
fn mitzenmacher_simple_model_matches_the_closed_form() {
    let r = json(&["mitzenmacher", "--lambda", "0.8", "--time", "20000"]);
    assert_eq!(r["fixed_point_method"], "closed-form");
    // E[T] for λ = 0.8 from π₂ = (1.8 − √0.68)/2.
    let fp = r["fixed_point_time_in_system"].as_f64().unwrap();
    let pi2 = (1.8 - 0.68f64.sqrt()) / 2.0;
    let rho = 0.8 / (1.8 - pi2);
    assert!((fp - (0.8 + pi2 / (1.0 - rho)) / 0.8).abs() < 1e-12);
    assert!(r["relative_error"].as_f64().unwrap() < 0.03);
    let sim = r["simulated_time_in_system"].as_f64().unwrap();
    assert!(((sim - fp) / fp).abs() < 0.03);
}

#[test]
fn mitzenmacher_variants_integrate_the_equations() {
    let r = json(&[
        "mitzenmacher",
        "--lambda",
        "0.9",
        "--threshold",
        "4",
        "--steal-count",
        "2",
        "--choices",
        "2",
        "--transfer-rate",
        "0.5",
        "--processors",
        "64",
        "--time",
        "20000",
    ]);
    assert_eq!(r["fixed_point_method"], "ode");
    assert_eq!(
        r["section"],
        "3.2 transfer delay, 3.3 multiple choices, 3.4 multiple steals"
    );
    assert!(r["relative_error"].as_f64().unwrap() < 0.05, "{r}");
    stealmark()
        .args([
            "simulate",
            "mitzenmacher",
            "--lambda",
            "0.5",
            "--time",
            "5000",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Mitzenmacher, 2.2 simple work stealing",
        ))
        .stdout(predicate::str::contains("fixed point (closed form)"));
}

#[test]
fn hendler_shavit_reports_the_largest_time_averaged_ratio() {
    let args = |steal| json(&hendler_shavit_args("32", "0.5", steal, "2000"));
    let half = args("half");
    let one = args("one");
    let h = half["max_time_averaged_ratio"].as_f64().unwrap();
    let o = one["max_time_averaged_ratio"].as_f64().unwrap();
    assert!(h >= 1.0 && h < o, "half {h} one {o}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hs.svg");
    stealmark()
        .arg("simulate")
        .args(hendler_shavit_args("16", "1", "one", "500"))
        .args(["--real", "--deque", "crossbeam", "--plot"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("items conserved: true"));
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("steal half"));
}

/// Runs `stealmark simulate args...` and checks that it fails with `code`
/// and a one-line error (as [`fails_with`] checks) that contains `needle`.
fn simulate_fails(args: &[&str], code: i32, needle: &str) {
    let mut all = vec!["simulate"];
    all.extend(args);
    let stderr = fails_with(&all, code);
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    let theorem_22 = |extra: &[&'static str]| {
        let mut args = vec!["berenbrink", "--steal", "one"];
        args.extend(THEOREM_22);
        args.extend(extra);
        args
    };
    let mut two = vec!["berenbrink", "--steal", "two"];
    two.extend(THEOREM_22);
    simulate_fails(&two, 2, "const:C");
    simulate_fails(&theorem_22(&["--real"]), 2, "--real needs --deque");
    simulate_fails(
        &theorem_22(&["--real", "--deque", "nope"]),
        2,
        "invalid value 'nope'",
    );
    simulate_fails(&theorem_22(&["--deque", "locked"]), 2, "--real");
    simulate_fails(&["mitzenmacher", "--lambda", "1.2"], 2, "lambda");
    let berenbrink =
        |processors, hosts, steps| berenbrink_args(processors, hosts, "0.5", "one", steps);
    simulate_fails(&berenbrink("8", "9", "10"), 2, "generator-hosts");
    simulate_fails(&berenbrink("8", "1", "18446744073709551615"), 2, "steps");
    simulate_fails(
        &berenbrink("18446744073709551615", "1", "10"),
        2,
        "processors",
    );
    simulate_fails(
        &hendler_shavit_args("8", "0.5", "one", "99999999999"),
        2,
        "steps",
    );
    simulate_fails(
        &hendler_shavit_args("100000000", "0.5", "one", "10"),
        2,
        "processors",
    );
}

#[test]
fn model_documents_claim_no_time_unit() {
    // Their times are simulated steps, not milliseconds.
    let doc = berenbrink("half", &[]);
    assert!(doc.get("time_unit").is_none(), "{doc}");
}

#[test]
fn a_bad_plot_path_fails_before_the_run() {
    let out = stealmark()
        .args(["simulate", "berenbrink", "--steal", "one"])
        .args(THEOREM_22)
        .args(["--plot", "/nonexistent-dir/load.svg"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("the directory /nonexistent-dir does not exist"),
        "{err}"
    );
    assert!(out.get_output().stdout.is_empty());
}
