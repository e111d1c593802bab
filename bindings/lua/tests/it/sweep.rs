//! The sweep of full collections in parallel segments (`csrc/smlua_sweep.c`):
//! `tests/lua/sweep.lua` prints, after each of seven full collections, what
//! lives, what the weak tables hold, the finalizers run and the memory in
//! use; in incremental mode the fifth and sixth find a sweep under way,
//! and the seventh follows a sweep whose start freed split points; in
//! generational mode the sweep is `sweep2old`'s. Swept on one
//! thread, in parallel segments at 2 and 3 workers, and in segments of a
//! few objects, every run prints exactly the same, and what stock Lua
//! prints (its memory differs only by a constant: the interpreter's own
//! name, a longer string). The runs at 2 and 3 workers do sweep in
//! parallel, from the list's head and from the middle of a sweep; the run
//! at 1 worker does not.

use std::path::PathBuf;
use std::process::Command;

const HOOKED: &str = env!("CARGO_BIN_EXE_stealmark-lua");
const STOCK: &str = env!("CARGO_BIN_EXE_stealmark-lua-stock");

/// What the statistics say of the parallel sweeps of a run.
#[derive(Debug, PartialEq)]
struct Sweeps {
    /// Parallel sweeps.
    all: usize,
    /// Those that began after some of the sweep ran on Lua's thread.
    midway: usize,
}

/// The script's output in Lua's mode `mode`, and its parallel sweeps.
fn run(bin: &str, mode: &str, env: &[(&str, &str)]) -> (Vec<Vec<String>>, Sweeps) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/sweep.lua");
    let out = Command::new(bin)
        .args(["-e", &format!("MODE = '{mode}'")])
        .arg(&script)
        .envs(env.iter().copied())
        .env("STEALMARK_LUA_STATS", "1")
        .output()
        .expect("the interpreter starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{bin} with {env:?}: {}\n{stderr}",
        out.status
    );
    let rows = String::from_utf8(out.stdout)
        .expect("the output is UTF-8")
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("stealmark-lua sweep: "))
        .collect();
    let midway = lines
        .iter()
        .filter(|l| !l.ends_with(", after 0 on Lua's thread"))
        .count();
    (
        rows,
        Sweeps {
            all: lines.len(),
            midway,
        },
    )
}

#[test]
fn parallel_sweeps_free_exactly_what_stock_lua_frees() {
    for mode in ["incremental", "generational"] {
        sweeps_in(mode);
    }
}

/// The checks of the test above in Lua's mode `mode`.
fn sweeps_in(mode: &str) {
    let (stock, _) = run(STOCK, mode, &[]);
    assert_eq!(stock.len(), 7, "{mode}: {stock:?}");
    // Bytes in use: collectgarbage("count") is in KiB, a multiple of 1/1024.
    let memory = |rows: &[Vec<String>], i: usize| -> i64 {
        let kib: f64 = rows[i][6].parse().expect("a number");
        (kib * 1024.0).round() as i64
    };
    let (serial, serial_sweeps) = run(
        HOOKED,
        mode,
        &[("STEALMARK_LUA_WORKERS", "1"), ("STEALMARK_LUA_CHECK", "1")],
    );
    assert_eq!(
        serial_sweeps,
        Sweeps { all: 0, midway: 0 },
        "{mode}: one worker sweeps on Lua's thread"
    );
    let offset = memory(&serial, 0) - memory(&stock, 0);
    assert!(offset.abs() < 64, "{mode}: {offset} bytes");
    for i in 0..7 {
        assert_eq!(
            serial[i][..6],
            stock[i][..6],
            "{mode}: collection {}",
            i + 1
        );
        assert_eq!(
            serial[i][7..],
            stock[i][7..],
            "{mode}: collection {}",
            i + 1
        );
        assert_eq!(
            memory(&serial, i) - memory(&stock, i),
            offset,
            "{mode}: collection {}",
            i + 1
        );
    }
    // The default segment length: the heap of the first rounds (about
    // 110,000 survivors) is too small to sweep in parallel at 2 workers
    // (16 segments of 8,192), the last rounds' is not.
    let (rows, _) = run(
        HOOKED,
        mode,
        &[("STEALMARK_LUA_WORKERS", "2"), ("STEALMARK_LUA_CHECK", "1")],
    );
    assert_eq!(rows, serial, "{mode}: 2 workers");
    for (workers, segment) in [("2", "256"), ("3", "16"), ("2", "1")] {
        let env = [
            ("STEALMARK_LUA_WORKERS", workers),
            ("STEALMARK_LUA_SWEEP_SEGMENT", segment),
            ("STEALMARK_LUA_CHECK", "1"),
        ];
        let (rows, sweeps) = run(HOOKED, mode, &env);
        assert_eq!(rows, serial, "{mode}: {env:?}");
        // The first full collection has no split points yet; each later one
        // sweeps in parallel. In incremental mode the fifth and sixth take over a
        // sweep under way, and the sweeps their steps began finish in
        // parallel too.
        assert!(sweeps.all >= 5, "{mode}: {env:?}: {sweeps:?}");
        if mode == "incremental" {
            assert!(sweeps.midway >= 2, "{mode}: {env:?}: {sweeps:?}");
        }
    }
    let (rows, sweeps) = run(
        HOOKED,
        mode,
        &[
            ("STEALMARK_LUA_WORKERS", "2"),
            ("STEALMARK_LUA_SWEEP_SEGMENT", "0"),
        ],
    );
    assert_eq!(rows, serial, "{mode}: STEALMARK_LUA_SWEEP_SEGMENT=0");
    assert_eq!(
        sweeps,
        Sweeps { all: 0, midway: 0 },
        "{mode}: STEALMARK_LUA_SWEEP_SEGMENT=0"
    );
}

#[test]
fn a_bad_segment_size_is_refused() {
    let out = Command::new(HOOKED)
        .args(["-e", "collectgarbage()"])
        .env("STEALMARK_LUA_SWEEP_SEGMENT", "many")
        .output()
        .expect("the interpreter starts");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("STEALMARK_LUA_SWEEP_SEGMENT='many'"),
        "{stderr}"
    );
}
