#!/usr/bin/env bash
# Runs the GC-heavy programs of this folder with stock Lua and with
# stealmark-lua at 1 and 2 workers, paired and alternated (stock, 1 worker,
# 2 workers, stock, ...), and checks that every run prints what stock Lua
# prints. Per program and build it reports the medians over the rounds of:
#   wall   the run's wall time;
#   gc     the time spent in Lua's collector (every luaC_step and
#          luaC_fullgc call, finalizers included: Lua collects on the
#          mutator's thread, so each call is a pause);
#   pause  the largest such pause;
#   mark   the largest mark of one collection: the engine's marking in
#          stealmark-lua, atomic() in stock Lua (in generational mode,
#          the default, all of stock Lua's marking is in atomic()). It is
#          the mark of the collection of the largest heap: the programs'
#          full collections at their peaks (full_mark.lua: one of 3 million
#          objects).
# and each figure's ratio to stock Lua's. Both interpreters time the same
# way (csrc/smlua_time.c, STEALMARK_LUA_STATS=1). Timings need a release
# build and a quiet machine; the load average is printed at the end.
# Usage: bench/run.sh [bin_dir] [rounds] [programs...]
# Environment: MODE=incremental runs every program in Lua's incremental mode
# (stealmark-lua: an engine cycle in steps), both interpreters alike; the
# default is Lua's default, generational.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../../target/release}"
rounds="${2:-3}"
shift $(($# > 2 ? 2 : $#))
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(binary_trees weak_graph closures full_mark)
stock="$bin/stealmark-lua-stock"
hooked="$bin/stealmark-lua"
for b in "$stock" "$hooked"; do
  [ -x "$b" ] || { echo "missing $b: build with cargo build --release -p stealmark-lua" >&2; exit 1; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
configs=(stock w1 w2)
mode="${MODE:-generational}"
case $mode in
  generational | incremental) ;;
  *) echo "MODE=$mode: expected generational or incremental" >&2; exit 1 ;;
esac

# One run of program $1 in configuration $2; appends "wall gc pause mark"
# to $tmp/$1.$2.
run_one() {
  local prog=$1 config=$2 t0 t1
  local cmd=("$hooked")
  case $config in
    stock) cmd=("$stock") ;;
    w1) cmd=(env STEALMARK_LUA_WORKERS=1 "$hooked") ;;
    w2) cmd=(env STEALMARK_LUA_WORKERS=2 "$hooked") ;;
  esac
  t0=$(now)
  STEALMARK_LUA_STATS=1 "${cmd[@]}" -e "collectgarbage('$mode')" "$here/$prog.lua" > "$tmp/out" 2> "$tmp/stats"
  t1=$(now)
  cmp -s "$tmp/out" "$tmp/expected" ||
    { echo "$prog: $config prints something else than stock Lua" >&2; exit 1; }
  awk -v wall="$(echo "$t1 - $t0" | bc)" '
    / gc summary: / {
      for (i = 1; i <= NF; i++) {
        if ($i == "gc" && $(i+1) ~ /^[0-9]/) gc = $(i+1)
        if ($i == "pause") pause = $(i+1)
        if ($i == "largest" && $(i+1) == "mark") mark = $(i+2)
      }
      found = 1
    }
    END {
      if (!found) { print "no gc summary" > "/dev/stderr"; exit 1 }
      printf "%.3f %.3f %.3f %.3f\n", wall * 1000, gc, pause, mark
    }' "$tmp/stats" >> "$tmp/$prog.$config"
}

ratio() { if [ "$(echo "$2 == 0" | bc)" = 1 ]; then echo 0; else echo "scale=4; $1 / $2" | bc; fi; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for prog in "${programs[@]}"; do
  "$stock" -e "collectgarbage('$mode')" "$here/$prog.lua" > "$tmp/expected"
  for r in $(seq "$rounds"); do
    for config in "${configs[@]}"; do run_one "$prog" "$config"; done
  done
  echo "$prog ($mode, $rounds rounds; medians in ms, ratio to stock in brackets)"
  printf '  %-6s %18s %18s %18s %18s\n' build wall gc "largest pause" "mark (largest)"
  declare -A base=()
  for config in "${configs[@]}"; do
    line="  $(printf '%-6s' "$config")"
    for col in 1 2 3 4; do
      m=$(cut -d' ' -f$col "$tmp/$prog.$config" | median)
      [ "$config" = stock ] && base[$col]=$m
      line+=$(printf ' %10.2f [%5.2f]' "$m" "$(ratio "$m" "${base[$col]}")")
    done
    echo "$line"
  done
done
echo "every run printed what stock Lua prints; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
