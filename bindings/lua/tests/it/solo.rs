//! Which collections run on Lua's thread alone at 2 workers: a
//! stop-the-world mark after one that marked fewer than
//! `STEALMARK_LUA_SOLO_BELOW` objects, and an engine cycle after one that
//! marked fewer than 8 times that; every other one on both workers.

use std::path::PathBuf;
use std::process::Command;

const HOOKED: &str = env!("CARGO_BIN_EXE_stealmark-lua");

/// One collection's `STEALMARK_LUA_STATS` line: a cycle's remark or a
/// stop-the-world mark, the objects marked and the workers used.
struct Line {
    remark: bool,
    marked: u64,
    workers_used: u32,
}

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split(&format!("{name} "))
        .nth(1)
        .and_then(|rest| rest.split([',', '/']).next())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// The collections of binary_trees.lua in incremental mode at 2 workers.
fn collections(solo_below: u64) -> Vec<Line> {
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/binary_trees.lua");
    let out = Command::new(HOOKED)
        .args(["-e", "collectgarbage('incremental')"])
        .arg(&program)
        .arg("12")
        .env("STEALMARK_LUA_STATS", "1")
        .env("STEALMARK_LUA_WORKERS", "2")
        .env("STEALMARK_LUA_SOLO_BELOW", solo_below.to_string())
        .output()
        .expect("the interpreter starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", out.status);
    stderr
        .lines()
        .filter(|l| l.starts_with("stealmark-lua gc ") && !l.contains("summary"))
        .map(|l| Line {
            remark: l.contains(": remark "),
            marked: field(l, "marked").parse().expect("a count"),
            workers_used: field(l, "workers").parse().expect("a count"),
        })
        .collect()
}

#[test]
fn small_heaps_collect_on_one_thread_and_their_cycles_too() {
    for solo_below in [0, 1000, 4000] {
        let lines = collections(solo_below);
        assert!(lines.len() > 20, "{} collections", lines.len());
        let mut previous = 0;
        let (mut solo_cycles, mut parallel_cycles) = (0, 0);
        for (i, l) in lines.iter().enumerate() {
            let threshold = if l.remark { 8 * solo_below } else { solo_below };
            let solo = previous < threshold;
            assert_eq!(
                l.workers_used,
                if solo { 1 } else { 2 },
                "solo below {solo_below}, collection {i} after {previous} marked"
            );
            match (l.remark, solo) {
                (true, true) => solo_cycles += 1,
                (true, false) => parallel_cycles += 1,
                _ => {}
            }
            previous = l.marked;
        }
        let what = format!(
            "solo below {solo_below}: {solo_cycles} solo and {parallel_cycles} parallel cycles"
        );
        match solo_below {
            0 => assert!(solo_cycles == 0 && parallel_cycles > 20, "{what}"),
            1000 => assert!(solo_cycles > 0 && parallel_cycles > 0, "{what}"),
            _ => assert!(solo_cycles > 20 && parallel_cycles == 0, "{what}"),
        }
    }
}
