#!/usr/bin/env bash
# Regenerates every headline table of docs/benchmarks.md at one commit on one
# machine, and prints each as Markdown, after the command that produced it.
#
#   bench/headline.sh [--quick] [--plots DIR]
#
# --quick   tiny heaps and few rounds: checks that every step runs (seconds
#           to a minute); its figures mean nothing.
# --plots D writes the SVG plots into D (for the page: docs/img); without it
#           they go to the temporary directory and are removed with it.
#
# Default sizes fit in about 20 minutes on a quiet 2-core machine: 8M-object
# `random` and 4M-object `binary-tree` heaps, an 8M `runtime` heap for the
# pause-time modes, the contract programs and vs_hotspot at their own sizes,
# V8 on 1M-object graphs
# (smaller than the others: a V8 heap snapshot of 4M objects takes minutes
# to write). Run it on a quiet machine: every comparison is paired and
# alternated, so load falls on both sides alike, but a loaded machine still
# moves the figures. The load average is printed before and after each table.
#
# Needs: cargo; java and javac for the HotSpot table; node for the V8 table
# (a missing tool skips its table with a line that says so).
set -euo pipefail
shopt -s inherit_errexit

quick=0
plots=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --plots) plots="${2:?--plots takes a directory}"; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "headline.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ -n "$plots" ]; then mkdir -p "$plots"; plots=$(cd "$plots" && pwd); fi
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "$quick" = 1 ]; then
    RANDOM_N=200k; TREE_N=100k; RUNTIME_N=200k
    RUNS=3; MODE_RUNS=2; CONTRACT="--scale 0.02"; CONTRACT_RUNS=3
    HOTSPOT="--scale 0.05 --gcs 3 --warmup 1"; V8_RANDOM=20000; V8_TREE=20000; V8_GCS=3; V8_ROUNDS=2
else
    RANDOM_N=8M; TREE_N=4M; RUNTIME_N=8M
    RUNS=11; MODE_RUNS=10; CONTRACT=""; CONTRACT_RUNS=9
    HOTSPOT=""; V8_RANDOM=1000000; V8_TREE=1000000; V8_GCS=6; V8_ROUNDS=5
fi

echo "Building (cargo build --release -p stealmark-tracer -p stealmark-bench) ..." >&2
cargo build --release -q -p stealmark-tracer -p stealmark-bench
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
SM="$target/release/stealmark"
BIN="$target/release"

HEAPS=$(mktemp -d "${TMPDIR:-/tmp}/stealmark-headline.XXXXXX")
trap 'rm -rf "$HEAPS"' EXIT
if [ -z "$plots" ]; then plots="$HEAPS/img"; fi
mkdir -p "$plots"

# The worker counts of the scaling table: 1, 2, 4, ... up to the cores, and
# the cores themselves. More workers than cores is not scaling.
cores=$(nproc)
threads=1
w=2
while [ "$w" -lt "$cores" ]; do threads="$threads,$w"; w=$((w * 2)); done
if [ "$cores" -gt 1 ]; then threads="$threads,$cores"; fi
# One worker and every core: the pairs of the other tables.
pair=1
if [ "$cores" -gt 1 ]; then pair="1,$cores"; fi

model=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
commit=$(git rev-parse --short HEAD)
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then dirty=" (with uncommitted changes)"; fi
caption="${model:-unknown CPU}, $cores cores; stealmark $commit$dirty"
load() { cut -d' ' -f1-3 /proc/loadavg; }
started=$SECONDS

echo "# stealmark headline tables"
echo
echo "- machine: ${model:-unknown CPU}, $cores cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
echo "- commit: $commit$dirty"
echo "- toolchain: $(rustc --version)"
if [ "$quick" = 1 ]; then echo "- mode: --quick (tiny heaps: the figures mean nothing)"; fi
echo "- heaps: generated into \$HEAPS, a temporary directory removed at the end"
echo

# A headline result: one or more tables.
group() {
    echo "## $1"
    echo
}

# Runs a command whose standard output is Markdown, after printing its
# command line, the caption and the load average.
section() {
    local title=$1; shift
    local t0=$SECONDS
    echo "### $title"
    echo
    echo '```sh'
    echo "${SHOW:-$*}" | sed "s|$HEAPS|\$HEAPS|g; s|$target/release/|target/release/|g; s|$root/||g"
    echo '```'
    echo
    echo "Caption: $caption."
    echo
    echo "load average before: $(load)"
    echo
    "$@" | sed "s|$HEAPS|\$HEAPS|g"
    echo
    echo "load average after: $(load); $((SECONDS - t0)) s"
    echo
}

skip() {
    echo "### $1"
    echo
    echo "SKIPPED: $2"
    echo
}

gen() {
    local shape=$1 n=$2 file=$3
    echo "heap: $SM gen --shape $shape --objects $n -o \$HEAPS/$(basename "$file")" | sed "s|$target/release/|target/release/|"
    "$SM" gen --shape "$shape" --objects "$n" -o "$file" >/dev/null 2>&1 \
        || { echo "headline.sh: stealmark gen --shape $shape failed" >&2; exit 1; }
}

R="$HEAPS/random.smk"; T="$HEAPS/tree.smk"; RT="$HEAPS/runtime.smk"
gen random "$RANDOM_N" "$R"
gen binary-tree "$TREE_N" "$T"
gen runtime "$RUNTIME_N" "$RT"
echo

group "Scaling with workers"
section "random, $RANDOM_N objects" \
    "$SM" bench "$R" --threads "$threads" --deques steal-half --runs "$RUNS" --format markdown --plot "$plots/scaling-random.svg"
section "binary-tree, $TREE_N objects" \
    "$SM" bench "$T" --threads "$threads" --deques steal-half --runs "$RUNS" --format markdown --plot "$plots/scaling-tree.svg"

group "The engine beside the sequential marker and the replay floor"
section "random, $RANDOM_N objects" \
    "$SM" bench "$R" --threads 1 --deques steal-half --reference --runs "$RUNS" --format markdown
section "binary-tree, $TREE_N objects" \
    "$SM" bench "$T" --threads 1 --deques steal-half --reference --runs "$RUNS" --format markdown

group "The deques against crossbeam-deque"
section "random, $RANDOM_N objects" \
    "$SM" bench "$R" --threads "$pair" --deques steal-half,chase-lev,abp,crossbeam --runs "$RUNS" --format markdown --plot "$plots/deques-random.svg"
section "binary-tree, $TREE_N objects" \
    "$SM" bench "$T" --threads "$pair" --deques steal-half,chase-lev,abp,crossbeam --runs "$RUNS" --format markdown

# contract_targets prints `  what: RATIO  (a A ms, b B ms)` lines.
contract_table() {
    local out="$HEAPS/contract.out"
    "$BIN/contract_targets" "$@" >"$out"
    echo "| comparison | paired ratio | first, median | second, median |"
    echo "|---|---|---|---|"
    sed -n 's/^  \(.*\): \([0-9.]*\)  (\([^ ]*\) \([0-9.]*\) ms, \([^ ]*\) \([0-9.]*\) ms)$/| \1 | \2 | \3 \4 ms | \5 \6 ms |/p' "$out"
    echo
    echo "One collection's steps (the last of the three the program prints per heap and worker count):"
    echo
    awk '/^  (ephemeron-chain|weak), [0-9]+ workers: / {
             k = $1 " " $2 " " $3; if (!(k in last)) order[++n] = k; last[k] = $0 }
         END { for (i = 1; i <= n; i++) print "- " substr(last[order[i]], 3) }' "$out"
    echo
    grep -E '^(chain|contract):' "$out" | sed 's/^/- heaps: /'
}
# shellcheck disable=SC2086
group "The cost of weak references, ephemerons and finalization"
SHOW="$BIN/contract_targets $CONTRACT $CONTRACT_RUNS chain contract" \
section "an ephemeron chain against a list; the weak heap against its all-strong twin" \
    contract_table $CONTRACT "$CONTRACT_RUNS" chain contract

group "Pause times and MMU: stop-the-world, incremental, concurrent"
section "runtime, $RUNTIME_N objects, 1 mutator at 1M writes/s" \
    "$SM" bench "$RT" --mode stw,incremental,incremental-iu,concurrent,concurrent-iu --mutators 1 --write-rate 1000000 --threads "$pair" --runs "$MODE_RUNS" --format markdown --plot "$plots/mmu.svg"

group "HotSpot and V8 on the same heaps"
if command -v java >/dev/null && command -v javac >/dev/null; then
    # shellcheck disable=SC2086
    section "HotSpot Parallel GC on the same graphs" \
        "$BIN/vs_hotspot" --threads "$pair" $HOTSPOT
else
    skip "HotSpot Parallel GC on the same graphs" "java or javac not found (install a JDK, or put its bin/ on the PATH)"
fi

# 7. V8 on the same graphs. One node process per thread count builds the
# graph and makes full GCs (the median of V8's `mark=` phase, the warm-up GC
# dropped); stealmark then marks the graph imported from a snapshot of that
# same process, as many times; node and stealmark alternate, round by round.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
v8_flags() { if [ "$1" = 1 ]; then echo "--single-threaded-gc"; else echo "--v8-pool-size=$(($1 - 1))"; fi; }
v8_mark() {
    # V8's mark phase of each full GC (gc=mc), the first dropped.
    local graph=$1 n=$2 t=$3
    # shellcheck disable=SC2046
    node --expose-gc --trace-gc-nvp $(v8_flags "$t") bench/v8/graph.js "$graph" "$n" "$V8_GCS" 2>&1 \
        | grep ' gc=mc ' | sed -n 's/.* mark=\([0-9.]*\) .*/\1/p' | tail -n +2 | median
}
sm_mark() {
    local file=$1 t=$2
    "$SM" mark "$file" --threads "$t" --runs "$((V8_GCS - 1))" --warmup 1 --json \
        | tr -d ' \n' | sed -n 's/.*"pause_ms":{[^}]*"p50":\([0-9.eE+-]*\).*/\1/p'
}
v8_table() {
    echo "| graph | objects in the snapshot | threads | V8 mark, ms | stealmark pause, ms | V8 / stealmark per round, median (min–max) |"
    echo "|---|---|---|---|---|---|"
    local graph n snap file t r v s objects
    for graph in random tree; do
        if [ "$graph" = random ]; then n=$V8_RANDOM; else n=$V8_TREE; fi
        snap="$HEAPS/$graph.heapsnapshot"; file="$HEAPS/v8-$graph.smk"
        node --expose-gc bench/v8/graph.js "$graph" "$n" 1 "$snap" >/dev/null
        "$SM" import v8 "$snap" -o "$file" >/dev/null 2>&1 \
            || { echo "headline.sh: stealmark import v8 failed" >&2; return 1; }
        rm -f "$snap"
        objects=$("$SM" info "$file" --json | tr -d ' \n' | sed -n 's/.*"reachable_objects":\([0-9]*\).*/\1/p')
        for t in $(echo "$pair" | tr ',' ' '); do
            : >"$HEAPS/v8.ms"; : >"$HEAPS/sm.ms"; : >"$HEAPS/ratio"
            for r in $(seq "$V8_ROUNDS"); do
                v=$(v8_mark "$graph" "$n" "$t"); s=$(sm_mark "$file" "$t")
                echo "$v" >>"$HEAPS/v8.ms"; echo "$s" >>"$HEAPS/sm.ms"
                awk -v v="$v" -v s="$s" 'BEGIN { print v / s }' >>"$HEAPS/ratio"
            done
            printf '| %s | %s | %s | %.1f | %.1f | %.2f× (%.2f–%.2f) |\n' "$graph" "$objects" "$t" \
                "$(median <"$HEAPS/v8.ms")" "$(median <"$HEAPS/sm.ms")" "$(median <"$HEAPS/ratio")" \
                "$(sort -g "$HEAPS/ratio" | head -n 1)" "$(sort -g "$HEAPS/ratio" | tail -n 1)"
        done
    done
    echo
    echo "node $(node --version): V8's \`mark=\` phase of \`--trace-gc-nvp\` for each full GC (\`gc()\`), median of $((V8_GCS - 1)) after a warm-up; 1 thread is \`--single-threaded-gc\`, N threads \`--v8-pool-size=N-1\` (the main thread and N-1 V8 worker threads). stealmark: the median pause of \`stealmark mark --runs $((V8_GCS - 1)) --warmup 1\` on a snapshot of the same graph (\`bench/v8/graph.js\`, \`stealmark import v8\`), $V8_ROUNDS rounds alternating the two."
}
if command -v node >/dev/null; then
    SHOW="node --expose-gc --trace-gc-nvp [--single-threaded-gc | --v8-pool-size=N-1] bench/v8/graph.js random|tree $V8_RANDOM $V8_GCS, alternated with $SM mark \$HEAPS/v8-GRAPH.smk --threads N --runs $((V8_GCS - 1)) --warmup 1 (bench/headline.sh, v8_table)" \
    section "V8 on the same graphs" v8_table
else
    skip "V8 on the same graphs" "node not found (install Node.js)"
fi

echo "Plots in $plots:$(cd "$plots" && for f in *.svg; do if [ -e "$f" ]; then printf ' %s' "$f"; fi; done)"
echo "Total: $((SECONDS - started)) s"
