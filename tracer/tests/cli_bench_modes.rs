//! `stealmark bench --mode`: the pause-time benchmark's JSON document, its
//! MMU plot, the snapshot left unchanged by the mutator, and bad input.

mod common;

use common::{assert_svg, fails_with, gen, json_of, stealmark};

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
