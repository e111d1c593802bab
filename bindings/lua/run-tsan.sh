#!/usr/bin/env bash
# Lua's test suite on stealmark-lua under ThreadSanitizer: the Rust side
# built with -Zsanitizer=thread and a std rebuilt with it (-Zbuild-std),
# Lua and the binding's C compiled as C++ with -fsanitize=thread (the build
# script does so when it sees the sanitizer; as C, Lua's longjmp-based
# errors crash in the runtime's longjmp interceptor). Runs the suite's
# collector tests and a part of the rest at 2 workers with every collection
# parallel (STEALMARK_LUA_SOLO_BELOW=0), full collections swept in parallel
# segments of 64 survivors (STEALMARK_LUA_SWEEP_SEGMENT=64).
# Usage: bindings/lua/run-tsan.sh [nightly toolchain]   (from anywhere)
# Environment: STEALMARK_LUA_TESTS, the suite's folder (default
# ../shared/lua-5.4-tests from the repository root).
set -euo pipefail
cd "$(dirname "$0")/../.."
nightly="${1:-nightly-2026-05-20}"
tests="${STEALMARK_LUA_TESTS:-../shared/lua-5.4-tests}"
[ -f "$tests/all.lua" ] || { echo "run-tsan.sh: Lua's test suite is missing: no $tests/all.lua" >&2; exit 1; }
tests="$(cd "$tests" && pwd)"
host=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=target/tsan \
  cargo +"$nightly" build -Zbuild-std --target "$host" -p stealmark-lua
bin="$PWD/target/tsan/$host/debug/stealmark-lua"
sweep_script="$PWD/bindings/lua/tests/lua/sweep.lua"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/.ci/tsan.supp"
export STEALMARK_LUA_WORKERS=2 STEALMARK_LUA_SOLO_BELOW=0 STEALMARK_LUA_SWEEP_SEGMENT=64
cd "$tests"
run() {
  echo "== $2 ($1)"
  local start
  start=$(date +%s)
  "$bin" -e"_U=true collectgarbage('$1')" "$2" > /dev/null
  echo "   ok in $(($(date +%s) - start)) s"
}
# The collector's own tests in both modes, then files that collect under
# real programs (closures, coroutines, tables, errors thrown through the
# C++ exceptions) in the default (generational) mode, where every
# collection marks stop-the-world; and those whose coroutines and tables
# meet the barriers most in incremental mode, where an engine cycle marks
# in parallel steps between the program's operations.
for mode in generational incremental; do
  for file in gc.lua gengc.lua; do run "$mode" "$file"; done
done
for file in closure.lua coroutine.lua nextvar.lua errors.lua; do run generational "$file"; done
for file in coroutine.lua nextvar.lua; do run incremental "$file"; done
# Full collections of every kind of object, swept in parallel segments.
echo "== $sweep_script"
"$bin" "$sweep_script" > /dev/null
echo "   ok"
echo "ThreadSanitizer: no report"
