//! `stealmark info`: the report, the JSON keys, and bad files.

use crate::common;

use common::{fails_with, gen, help_of, info_json, stealmark};
use predicates::prelude::*;

#[test]
fn json_has_the_contract_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "runtime", 5000);
    let info = info_json(&path);
    for key in ["objects", "roots", "reference_slots", "weak_slots", "bytes"] {
        assert!(info[key].is_u64(), "missing {key}: {info}");
    }
    assert_eq!(info["objects"], 5000);
    let slots = info["reference_slots"].as_u64().unwrap();
    let parts = info["strong_slots"].as_u64().unwrap()
        + info["weak_slots"].as_u64().unwrap()
        + info["null_slots"].as_u64().unwrap();
    assert_eq!(slots, parts);
    assert!(
        info["weak_slots"].as_u64().unwrap() > 0,
        "runtime heaps have weak refs"
    );
}

#[test]
fn text_report_names_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "wide", 1000);
    stealmark()
        .arg("info")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("objects").and(predicate::str::contains("1,000")))
        .stdout(predicate::str::contains("reachable"));
}

#[test]
fn missing_file() {
    let err = fails_with(&["info", "/nonexistent/heap.smk"], 1);
    assert!(err.contains("/nonexistent/heap.smk"), "{err}");
    assert!(err.contains("stealmark gen"), "says what to do: {err}");
}

#[test]
fn not_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "this is not a heap snapshot, just some text\n".repeat(10),
    )
    .unwrap();
    let err = fails_with(&["info", path.to_str().unwrap()], 1);
    assert!(err.contains("not a usable stealmark snapshot"), "{err}");
    let empty = dir.path().join("empty.smk");
    std::fs::write(&empty, b"").unwrap();
    fails_with(&["info", empty.to_str().unwrap()], 1);
    let err = fails_with(&["info", dir.path().to_str().unwrap()], 1);
    assert!(err.contains("is a directory, not a snapshot file"), "{err}");
    assert!(!err.contains("os error"), "{err}");
}

#[test]
fn foreign_heap_dumps_are_named_with_the_import_command() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "app.heapsnapshot",
            br#"{"snapshot":{"meta":{}}}"#,
            "stealmark import v8 ",
        ),
        ("other.json", b"  {\"nodes\": []}", "stealmark import v8 "),
        (
            "java.hprof",
            b"JAVA PROFILE 1.0.2\0\0\0\x08",
            "stealmark import hprof ",
        ),
        (
            "dump.gz",
            &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0],
            "stealmark import hprof ",
        ),
    ];
    for (name, bytes, command) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        for cmd in ["info", "mark", "bench"] {
            let err = fails_with(&[cmd, path.to_str().unwrap()], 1);
            assert!(
                err.contains("is not a stealmark snapshot: it "),
                "{cmd} {name}: {err}"
            );
            assert!(err.contains(command), "{cmd} {name}: {err}");
            assert!(!err.contains("bad magic"), "{cmd} {name}: {err}");
        }
    }
}

#[test]
fn truncated_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2000);
    let bytes = std::fs::read(&path).unwrap();
    for cut in [8, 64, bytes.len() / 2, bytes.len() - 8] {
        let short = dir.path().join(format!("cut{cut}.smk"));
        std::fs::write(&short, &bytes[..cut]).unwrap();
        for cmd in ["info", "mark", "bench"] {
            let err = fails_with(&[cmd, short.to_str().unwrap()], 1);
            assert!(
                err.contains("not a usable stealmark snapshot"),
                "{cmd} {cut}: {err}"
            );
        }
    }
}

#[test]
fn corrupt_byte_is_reported_not_marked() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 2000);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() * 3 / 4;
    bytes[at] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    fails_with(&["mark", path.to_str().unwrap(), "--runs", "1"], 1);
}

#[test]
fn help_shows_an_example() {
    help_of(&["info"]).stdout(predicate::str::contains("stealmark info heap.smk"));
}

#[test]
fn json_reports_kinds_layout_finalizable_and_both_byte_totals() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 5000);
    let info = info_json(&path);
    assert_eq!(info["format_version"], 2);
    assert_eq!(info["layout"], "compressed");
    assert_eq!(info["runtime_sizes"], false);
    let sum: u64 = [
        "strong_slots",
        "weak_slots",
        "soft_slots",
        "phantom_slots",
        "ephemeron_slots",
        "null_slots",
    ]
    .iter()
    .map(|k| info[k].as_u64().unwrap())
    .sum();
    assert_eq!(info["reference_slots"].as_u64().unwrap(), sum);
    assert!(info["finalizable"].as_u64().unwrap() > 0);
    // Without runtime sizes, the runtime bytes are the objects' arena bytes.
    assert_eq!(
        info["runtime_bytes"].as_u64().unwrap(),
        info["bytes"].as_u64().unwrap() - 8
    );
    stealmark()
        .arg("info")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("compressed layout"))
        .stdout(predicate::str::contains("finalizable"))
        .stdout(predicate::str::contains("ephemeron"))
        .stdout(predicate::str::contains("runtime bytes"));
}
