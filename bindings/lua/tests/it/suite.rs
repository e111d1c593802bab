//! Lua's own test suite (`../shared/lua-5.4-tests` from the repository
//! root) run by `stealmark-lua` in user mode, in generational and
//! incremental mode (an engine cycle in steps), at 1 and 2 workers, with
//! the cross-check on; and by `stealmark-lua-stock` for comparison.

use std::path::PathBuf;
use std::process::Command;

/// The suite's folder: `STEALMARK_LUA_TESTS` if set, else
/// `../shared/lua-5.4-tests` from the repository root. Panics with a clear
/// message if it is missing.
fn suite_dir() -> PathBuf {
    let dir = std::env::var_os("STEALMARK_LUA_TESTS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/lua-5.4-tests"),
        PathBuf::from,
    );
    assert!(
        dir.join("all.lua").is_file(),
        "Lua's test suite is missing: expected {} to hold all.lua, gc.lua and gengc.lua \
         (../shared/lua-5.4-tests from the repository root, or the folder named by \
         STEALMARK_LUA_TESTS)",
        dir.display()
    );
    dir
}

/// Runs `bin` in the suite's folder with `args` and the environment `env`,
/// and asserts it succeeds and prints `expect` on its standard output.
fn run_suite(bin: &str, args: &[&str], env: &[(&str, &str)], expect: &str) {
    let mut cmd = Command::new(bin);
    cmd.current_dir(suite_dir()).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the interpreter starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(expect),
        "{bin} {args:?} with {env:?}: status {}, no '{expect}'\n--- stdout (end)\n{}\n--- stderr (end)\n{}",
        out.status,
        tail(&stdout),
        tail(&stderr)
    );
}

fn tail(s: &str) -> &str {
    let cut = s.len().saturating_sub(3000);
    let cut = (cut..=s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[cut..]
}

const HOOKED: &str = env!("CARGO_BIN_EXE_stealmark-lua");
const STOCK: &str = env!("CARGO_BIN_EXE_stealmark-lua-stock");
const USER_MODE: &str = "-e_U=true";
const INCREMENTAL: &str = "-e_U=true collectgarbage('incremental')";
const FINAL: &str = "final OK !!!";

#[test]
fn stock_lua_passes_all_lua() {
    run_suite(STOCK, &[USER_MODE, "all.lua"], &[], FINAL);
}

#[test]
fn all_lua_generational_one_worker() {
    run_suite(
        HOOKED,
        &[USER_MODE, "all.lua"],
        &[("STEALMARK_LUA_WORKERS", "1")],
        FINAL,
    );
}

#[test]
fn all_lua_generational_two_workers() {
    run_suite(
        HOOKED,
        &[USER_MODE, "all.lua"],
        &[("STEALMARK_LUA_WORKERS", "2")],
        FINAL,
    );
}

/// Incremental mode with an engine cycle for every collection, however
/// small its heap (`STEALMARK_LUA_SOLO_BELOW=0`), its steps on the calling
/// thread alone.
#[test]
fn all_lua_incremental_one_worker() {
    run_suite(
        HOOKED,
        &[INCREMENTAL, "all.lua"],
        &[
            ("STEALMARK_LUA_WORKERS", "1"),
            ("STEALMARK_LUA_SOLO_BELOW", "0"),
        ],
        FINAL,
    );
}

/// Incremental mode at 2 workers: small heaps marked stop-the-world and
/// full collections swept in parallel above 8,192 survivors per segment
/// (the defaults), then an engine cycle for every collection, its steps on
/// both workers, and segments of 64 survivors, so that most full
/// collections of the suite sweep in parallel.
#[test]
fn all_lua_incremental_two_workers() {
    for (solo_below, segment) in [("", ""), ("0", "64")] {
        run_suite(
            HOOKED,
            &[INCREMENTAL, "all.lua"],
            &[
                ("STEALMARK_LUA_WORKERS", "2"),
                ("STEALMARK_LUA_SOLO_BELOW", solo_below),
                ("STEALMARK_LUA_SWEEP_SEGMENT", segment),
            ],
            FINAL,
        );
    }
}

#[test]
fn gc_lua_and_gengc_lua_alone() {
    for workers in ["1", "2"] {
        let env = [("STEALMARK_LUA_WORKERS", workers)];
        run_suite(HOOKED, &[USER_MODE, "gc.lua"], &env, "OK");
        run_suite(HOOKED, &[USER_MODE, "gengc.lua"], &env, "OK");
    }
}

/// The suite with the cross-check after every marking: generational, with
/// its collections swept in parallel segments of 64 survivors, and
/// incremental with small heaps marked stop-the-world (the default) and
/// with an engine cycle for every collection, its steps on both workers
/// (`STEALMARK_LUA_SOLO_BELOW=0`), and full collections swept in parallel
/// segments of 64 survivors.
#[test]
fn all_lua_under_the_cross_check() {
    for (mode, solo_below, segment) in [
        (USER_MODE, "", "64"),
        (INCREMENTAL, "", ""),
        (INCREMENTAL, "0", "64"),
    ] {
        let env = [
            ("STEALMARK_LUA_WORKERS", "2"),
            ("STEALMARK_LUA_CHECK", "1"),
            ("STEALMARK_LUA_SOLO_BELOW", solo_below),
            ("STEALMARK_LUA_SWEEP_SEGMENT", segment),
        ];
        run_suite(HOOKED, &[mode, "all.lua"], &env, FINAL);
    }
}

/// Lua's incremental mode marks in an engine cycle once the heap is past
/// the solo threshold: steps (pauses beside the remarks), then a remark in
/// `atomic()`; with `STEALMARK_LUA_STW=1`, and in generational mode, every
/// collection marks stop-the-world.
#[test]
fn incremental_mode_marks_in_engine_cycles() {
    let churn = "local t = {} for i = 1, 200000 do t[i] = {i} end \
                 for r = 1, 5 do for i = 1, 200000 do t[i] = {r} end end";
    let stats = |mode: &str, stw: &str| {
        let chunk = format!("collectgarbage('{mode}') {churn}");
        let out = Command::new(HOOKED)
            .args(["-e", &chunk])
            .env("STEALMARK_LUA_STATS", "1")
            .env("STEALMARK_LUA_STW", stw)
            .env("STEALMARK_LUA_CHECK", "1")
            .output()
            .expect("the interpreter starts");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{mode} stw={stw:?}: {}",
            tail(&stderr)
        );
        let count = |what: &str| stderr.lines().filter(|l| l.contains(what)).count();
        let pauses: usize = stderr
            .lines()
            .find_map(|l| l.split("pauses ").nth(1))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no summary line: {}", tail(&stderr)));
        // Collections after the first remark: the heap only grows, so
        // none of them is below the solo threshold again.
        let after = stderr
            .lines()
            .skip_while(|l| !l.contains(": remark "))
            .filter(|l| l.contains(": mark "))
            .count();
        assert_eq!(
            after, 0,
            "{mode} stw={stw:?}: a stop-the-world mark after a cycle"
        );
        (count(": remark "), count(": mark "), pauses)
    };
    // `stealmark-lua` starts in generational mode (as `lua` does), which
    // marks once before the chunk switches to incremental mode; the first
    // incremental collections, of a heap below the solo threshold, mark
    // stop-the-world too.
    let (remarks, marks, pauses) = stats("incremental", "");
    assert!(
        remarks >= 2 && marks >= 2,
        "{remarks} remarks, {marks} marks"
    );
    assert!(pauses > 4 * remarks, "{pauses} pauses for {remarks} cycles");
    for (mode, stw) in [("incremental", "1"), ("generational", "")] {
        let (remarks, marks, _) = stats(mode, stw);
        assert!(
            remarks == 0 && marks >= 2,
            "{mode} stw={stw:?}: {remarks} remarks, {marks} marks"
        );
    }
}

/// Lua's clearing order and finalizer order (`tests/lua/order.lua`), the
/// same on stock Lua and on `stealmark-lua` in both modes; at 2 workers
/// every collection is parallel (`STEALMARK_LUA_SOLO_BELOW=0`), so that
/// the objects to finalize come back from several workers.
#[test]
fn clearing_order_matches_stock_lua() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/order.lua");
    let script = script.to_str().expect("a UTF-8 path");
    for mode in ["generational", "incremental"] {
        run_script(STOCK, &[script, mode], &[]);
        for workers in ["1", "2"] {
            run_script(
                HOOKED,
                &[script, mode],
                &[
                    ("STEALMARK_LUA_WORKERS", workers),
                    ("STEALMARK_LUA_CHECK", "1"),
                    (
                        "STEALMARK_LUA_SOLO_BELOW",
                        if workers == "1" { "" } else { "0" },
                    ),
                ],
            );
        }
    }
}

fn run_script(bin: &str, args: &[&str], env: &[(&str, &str)]) {
    let mut cmd = Command::new(bin);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the interpreter starts");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("order OK"),
        "{bin} {args:?} with {env:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
