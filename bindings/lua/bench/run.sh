#!/usr/bin/env bash
# Runs the GC-heavy programs of this folder with stock Lua and with
# stealmark-lua at 1 and 2 workers, alternating, and checks that every run
# prints what stock Lua prints. Reports each run's wall time, and for
# stealmark-lua the summed and the largest mark time of its collections
# (STEALMARK_LUA_STATS). Timings need a quiet machine.
# Usage: bench/run.sh [bin_dir] [repeats]   (bin_dir: target/release)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../../target/release}"
repeats="${2:-3}"
stock="$bin/stealmark-lua-stock"
hooked="$bin/stealmark-lua"
for b in "$stock" "$hooked"; do
  [ -x "$b" ] || { echo "missing $b: build with cargo build --release -p stealmark-lua" >&2; exit 1; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
for prog in binary_trees weak_graph closures; do
  "$stock" "$here/$prog.lua" > "$tmp/expected"
  for r in $(seq "$repeats"); do
    t0=$(now); "$stock" "$here/$prog.lua" > "$tmp/out"; t1=$(now)
    cmp -s "$tmp/out" "$tmp/expected" || { echo "$prog: stock output differs between runs" >&2; exit 1; }
    printf '%-13s run %d  stock            %6.3f s\n' "$prog" "$r" "$(echo "$t1 - $t0" | bc)"
    for w in 1 2; do
      t0=$(now)
      STEALMARK_LUA_WORKERS=$w STEALMARK_LUA_STATS=1 "$hooked" "$here/$prog.lua" > "$tmp/out" 2> "$tmp/stats"
      t1=$(now)
      cmp -s "$tmp/out" "$tmp/expected" || { echo "$prog: stealmark-lua ($w workers) prints something else than stock Lua" >&2; exit 1; }
      marks=$(awk '/^stealmark-lua gc/ {s += $5; if ($5 > m) m = $5; n++} END {printf "%d collections, mark %.1f ms, largest %.2f ms", n, s, m}' "$tmp/stats")
      printf '%-13s run %d  stealmark %d wkr  %6.3f s  (%s)\n' "$prog" "$r" "$w" "$(echo "$t1 - $t0" | bc)" "$marks"
    done
  done
done
echo "every run printed what stock Lua prints"
