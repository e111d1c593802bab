//! The sweep of full collections in parallel segments (`csrc/smlua_sweep.c`):
//! `tests/lua/sweep.lua` prints, after each of four full collections, what
//! lives, what the weak tables hold, the finalizers run and the memory in
//! use. Swept on one thread, in parallel segments at 2 and 3 workers, and
//! in segments of a few objects, every run prints exactly the same, and
//! what stock Lua prints (its memory differs only by a constant: the
//! interpreter's own name, a longer string). The runs at 2 and 3 workers
//! do sweep in parallel, the run at 1 worker does not.

use std::path::PathBuf;
use std::process::Command;

const HOOKED: &str = env!("CARGO_BIN_EXE_stealmark-lua");
const STOCK: &str = env!("CARGO_BIN_EXE_stealmark-lua-stock");

/// The script's output and the number of parallel sweeps the statistics
/// report.
fn run(bin: &str, env: &[(&str, &str)]) -> (Vec<Vec<String>>, usize) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/sweep.lua");
    let out = Command::new(bin)
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
    (rows, stderr.matches("stealmark-lua sweep: ").count())
}

#[test]
fn parallel_sweeps_free_exactly_what_stock_lua_frees() {
    let (stock, _) = run(STOCK, &[]);
    assert_eq!(stock.len(), 4, "{stock:?}");
    let memory = |rows: &[Vec<String>], i: usize| -> f64 { rows[i][6].parse().expect("a number") };
    let (serial, serial_sweeps) = run(
        HOOKED,
        &[("STEALMARK_LUA_WORKERS", "1"), ("STEALMARK_LUA_CHECK", "1")],
    );
    assert_eq!(serial_sweeps, 0, "one worker sweeps on Lua's thread");
    let offset = memory(&serial, 0) - memory(&stock, 0);
    assert!(offset.abs() < 0.1, "{offset} KiB");
    for i in 0..4 {
        assert_eq!(serial[i][..6], stock[i][..6], "collection {}", i + 1);
        assert_eq!(
            memory(&serial, i) - memory(&stock, i),
            offset,
            "collection {}",
            i + 1
        );
    }
    for (workers, segment) in [("2", ""), ("2", "256"), ("3", "16"), ("2", "1")] {
        let env = [
            ("STEALMARK_LUA_WORKERS", workers),
            ("STEALMARK_LUA_SWEEP_SEGMENT", segment),
            ("STEALMARK_LUA_CHECK", "1"),
        ];
        let (rows, sweeps) = run(HOOKED, &env);
        assert_eq!(rows, serial, "{env:?}");
        // The first full collection has no split points yet; each later one
        // sweeps in parallel.
        assert_eq!(sweeps, 3, "{env:?}");
    }
    let (rows, sweeps) = run(
        HOOKED,
        &[
            ("STEALMARK_LUA_WORKERS", "2"),
            ("STEALMARK_LUA_SWEEP_SEGMENT", "0"),
        ],
    );
    assert_eq!((rows, sweeps), (serial, 0), "STEALMARK_LUA_SWEEP_SEGMENT=0");
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
