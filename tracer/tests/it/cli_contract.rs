//! `stealmark mark` and the runtime contract: the JSON figures (weak slots,
//! ephemerons, finalization, live bytes in runtime and arena sizes, the
//! per-type histogram) equal the oracle's, computed here through the heap
//! crate; `--soft-refs` both ways; `--histogram`; `--verify`; bad values.

use crate::common;

use std::path::Path;

use common::{gen, info_json, mark_fails, mark_json, mark_ok};
use predicates::prelude::*;
use serde_json::Value;
use stealmark_heap::{
    oracle, ArenaLayout, HeapGraph, HeapSink, Layout, ObjectHeader, OracleInput, OracleResult,
    Slot, SlotKind, Snapshot, SnapshotWriter, TypeKind,
};
use stealmark_marker::model::SoftRefs;

/// The oracle's collection of the snapshot at `path`: its roots and
/// finalizable objects, soft references as `soft_refs` says.
fn oracle_of(path: &Path, soft_refs: SoftRefs<'static>) -> (Snapshot, OracleResult) {
    let snap = Snapshot::open(path).unwrap();
    let o = oracle(
        &snap.view(),
        &OracleInput {
            roots: snap.roots(),
            finalizable: snap.finalizable(),
            soft_refs,
        },
    );
    (snap, o)
}

/// `mark --json` with two workers, one run and no warm-up, and `extra`.
fn one_run_json(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--threads", "2", "--runs", "1", "--warmup", "0"];
    args.extend(extra);
    mark_json(path, &args)
}

/// The `top` types of most live bytes as `live_by_type` lists them.
fn expected_histogram(snap: &Snapshot, o: &OracleResult, top: usize) -> Value {
    let mut ids: Vec<usize> = (0..o.live_by_type.len())
        .filter(|&t| o.live_by_type[t].0 > 0)
        .collect();
    ids.sort_by_key(|&t| {
        (
            std::cmp::Reverse(o.live_by_type[t].1),
            std::cmp::Reverse(o.live_by_type[t].0),
            t,
        )
    });
    ids.truncate(top);
    ids.into_iter()
        .map(|t| {
            serde_json::json!({
                "type_id": t,
                "name": snap.type_name(t as u32),
                "objects": o.live_by_type[t].0,
                "bytes": o.live_by_type[t].1,
            })
        })
        .collect()
}

/// Checks every contract figure of `m` against the oracle's `o`.
fn assert_figures_equal_the_oracle(m: &Value, snap: &Snapshot, o: &OracleResult) {
    let pairs = o
        .weak_refs
        .iter()
        .filter(|w| matches!(w.kind, SlotKind::Ephemeron { .. }))
        .count();
    assert_eq!(m["marked_objects"], o.objects);
    assert_eq!(m["live_bytes"], o.bytes);
    assert_eq!(m["marked_bytes"], o.bytes);
    assert_eq!(m["live_arena_bytes"], o.footprint_bytes);
    assert_eq!(m["weak"]["slots"], o.weak_refs.len());
    assert_eq!(m["weak"]["cleared"], o.cleared.len());
    assert_eq!(m["ephemerons"]["pairs"], pairs);
    assert_eq!(m["ephemerons"]["values_traced"], o.ephemeron_values_traced);
    assert_eq!(m["finalizable"]["registered"], snap.finalizable().len());
    assert_eq!(m["finalizable"]["resurrected"], o.to_finalize.len());
    let live_types = o.live_by_type.iter().filter(|c| c.0 > 0).count();
    assert_eq!(m["live_types"], live_types);
    assert_eq!(m["live_by_type"], expected_histogram(snap, o, 20));
}

#[test]
fn json_reports_the_contract_figures_of_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 20_000);
    let (snap, o) = oracle_of(&path, SoftRefs::ClearAll);
    assert!(!o.cleared.is_empty() && !o.to_finalize.is_empty());
    assert!(o.ephemeron_values_traced > 0);
    let m = one_run_json(&path, &[]);
    assert_eq!(m["soft_refs"], "clear", "the default policy");
    assert_eq!(m["runtime_sizes"], false);
    assert_figures_equal_the_oracle(&m, &snap, &o);
    assert!(m["ephemerons"]["rounds"].as_u64().unwrap() >= 1);
    // The sequential oracle reports the same figures, without rounds.
    let s = mark_json(&path, &["--sequential", "--runs", "1"]);
    assert_figures_equal_the_oracle(&s, &snap, &o);
    assert_eq!(s["ephemerons"]["rounds"], Value::Null);
}

#[test]
fn soft_refs_keep_and_clear_change_what_is_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 20_000);
    let (snap, clear) = oracle_of(&path, SoftRefs::ClearAll);
    let (_, keep) = oracle_of(&path, SoftRefs::KeepAll);
    assert!(
        clear.cleared.len() > keep.cleared.len(),
        "the weak shape has soft references to objects nothing else keeps"
    );
    let c = one_run_json(&path, &["--soft-refs", "clear"]);
    let k = one_run_json(&path, &["--soft-refs", "keep"]);
    assert_eq!(k["soft_refs"], "keep");
    assert_figures_equal_the_oracle(&c, &snap, &clear);
    assert_figures_equal_the_oracle(&k, &snap, &keep);
    assert_ne!(c["weak"]["cleared"], k["weak"]["cleared"]);
    assert!(k["marked_objects"].as_u64() > c["marked_objects"].as_u64());
}

#[test]
fn verify_compares_every_contract_output_with_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 20_000);
    for policy in ["clear", "keep"] {
        let m = one_run_json(&path, &["--verify", "--soft-refs", policy]);
        assert_eq!(m["verified"], true, "{policy}");
        assert!(m.get("differences").is_none(), "{m}");
    }
    mark_ok(&path, &["--threads", "2", "--runs", "1", "--verify"])
        .stdout(predicate::str::contains(
            "verified: the marked set, cleared slots, objects to finalize, live bytes and types equal the sequential oracle's",
        ))
        .stdout(predicate::str::contains(
            "runtime contract (--soft-refs clear):",
        ));
}

#[test]
fn histogram_lists_the_top_types_like_jmap() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 20_000);
    let (snap, o) = oracle_of(&path, SoftRefs::ClearAll);
    let m = one_run_json(&path, &["--histogram", "3"]);
    assert_eq!(m["live_by_type"], expected_histogram(&snap, &o, 3));
    let out = mark_ok(
        &path,
        &["--threads", "2", "--runs", "1", "--histogram", "2"],
    );
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let top = &expected_histogram(&snap, &o, 2);
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("live objects by type"))
        .collect();
    assert!(lines[1].contains("#instances") && lines[1].contains("#bytes"));
    for (i, row) in top.as_array().unwrap().iter().enumerate() {
        let cells: Vec<&str> = lines[3 + i].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                format!("{}:", i + 1),
                row["objects"].to_string(),
                row["bytes"].to_string(),
                row["name"].as_str().unwrap().to_string()
            ],
            "{text}"
        );
    }
    let total: Vec<&str> = lines[5].split_whitespace().collect();
    assert_eq!(
        total,
        ["Total", &o.objects.to_string(), &o.bytes.to_string()]
    );
}

/// Writes a snapshot that records runtime sizes: a list of 40 objects of
/// 100 to 139 runtime bytes (each two words in the arena, or more), the
/// first 30 reachable, every object of type `Big`; and one weak reference
/// object to object 35 (dead) held by object 0.
fn runtime_sized_snapshot(path: &Path) {
    let layout = ArenaLayout::Wide;
    let mut w = SnapshotWriter::create(path).unwrap();
    w.set_format(stealmark_heap::ArenaFormat::new(layout).with_runtime_sizes())
        .unwrap();
    let big = w.type_name("Big").unwrap();
    let weak = w.type_name("WeakRef").unwrap();
    w.type_kind(weak, TypeKind::WeakRef).unwrap();
    let mut headers: Vec<ObjectHeader> = (0..40)
        .map(|i| ObjectHeader::sized(big, 2, 100 + i, layout))
        .collect();
    headers.push(ObjectHeader::sized(weak, 1, 24, layout));
    let mut plan = Layout::with_layout(layout);
    let pos: Vec<_> = headers.iter().map(|&h| plan.push_header(h)).collect();
    for (i, &h) in headers.iter().enumerate() {
        w.begin_object(h).unwrap();
        let slots: Vec<Slot> = match i {
            40 => vec![Slot::strong(pos[35])],
            0 => vec![Slot::strong(pos[1]), Slot::strong(pos[40])],
            29 | 39 => vec![Slot::NULL, Slot::NULL],
            _ => vec![Slot::strong(pos[i + 1]), Slot::NULL],
        };
        w.slots(&slots).unwrap();
    }
    w.root(pos[0]).unwrap();
    w.finish().unwrap();
}

#[test]
fn runtime_sizes_and_arena_sizes_are_both_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sized.smk");
    runtime_sized_snapshot(&path);
    let (snap, o) = oracle_of(&path, SoftRefs::ClearAll);
    assert_eq!(o.objects, 31);
    assert_eq!(o.bytes, (100..130).sum::<u64>() + 24);
    assert_ne!(o.bytes, o.footprint_bytes);
    let m = one_run_json(&path, &["--verify"]);
    assert_eq!(m["runtime_sizes"], true);
    assert_eq!(m["verified"], true);
    assert_figures_equal_the_oracle(&m, &snap, &o);
    assert_eq!(m["weak"]["cleared"], 1);
    let info = info_json(&path);
    assert_eq!(info["reachable_bytes"], m["live_bytes"]);
    mark_ok(&path, &["--threads", "2", "--runs", "1"]).stdout(predicate::str::contains(format!(
        "marked 31 objects ({} as the runtime counts them, {} in the arena)",
        kib(o.bytes),
        kib(o.footprint_bytes)
    )));
}

/// A byte count of 1 to 1,023 KiB as the text report writes it.
fn kib(bytes: u64) -> String {
    assert!((1024..1024 * 1024).contains(&bytes));
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

#[test]
fn a_heap_with_only_strong_slots_prints_no_contract_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "random", 5_000);
    mark_ok(&path, &["--threads", "2", "--runs", "1"])
        .stdout(predicate::str::contains("runtime contract").not());
    let m = one_run_json(&path, &[]);
    assert_eq!(m["weak"]["slots"], 0);
    assert_eq!(m["finalizable"]["registered"], 0);
}

#[test]
fn bad_contract_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = gen(dir.path(), "weak", 1_000);
    let file = path.to_str().unwrap();
    let err = mark_fails(file, &["--soft-refs", "sometimes"], 2);
    assert!(
        err.contains("--soft-refs") && err.contains("clear, keep"),
        "{err}"
    );
    for bad in ["0", "-3", "many"] {
        let err = mark_fails(file, &["--histogram", bad], 2);
        assert!(err.contains("--histogram"), "{bad}: {err}");
    }
    let err = mark_fails(file, &["--sequential", "--verify"], 2);
    assert!(err.contains("--verify"), "{err}");
}
