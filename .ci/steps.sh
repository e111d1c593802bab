#!/usr/bin/env bash
# The steps of CI (`bash .ci/run` runs them): formatting, lints, the README's
# test command, the loom models, and, where a nightly toolchain is or can be
# installed, Miri and ThreadSanitizer.
# Runs on a clean clone on a 2-core machine; installs or checks what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never
# A clean clone builds everything once: incremental caches would only add work.
export CARGO_INCREMENTAL=0
step() { printf '\n=== %s (%ss)\n' "$1" "$SECONDS"; }

step "tools"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# The import tests make real inputs with Node.js and a JDK; the C interface
# is checked from C and C++. Install what is missing when apt-get can (CI
# runs as root). With CI=true (as CI sets it) an import test whose tool is
# missing fails and says why, so a missing tool fails the step.
export CI="${CI:-true}"
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
command -v mkfifo >/dev/null || missing+=(coreutils)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]}"
  { timeout 600 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 \
      apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1 ||
    echo "could not install ${missing[*]}"
fi
for tool in node javac java cc c++ mkfifo; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAILED: $tool is missing and could not be installed; the tests need it"
    exit 1
  fi
done
echo "node $(node --version), $(javac -version 2>&1), $(cc --version | head -1)"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
# What a runtime builds: the marker's and the deques' libraries with no
# feature (their own tests turn features on through a dev-dependency on
# their crate, so only `--lib` builds them bare); then the marker with
# every feature (`inject-delays` too), which the workspace build does not
# see: its library and the one target that needs the feature.
cargo clippy -p stealmark-marker --lib -- -D warnings
cargo clippy -p stealmark-deques --lib -- -D warnings
cargo clippy -p stealmark-marker --lib --test delays --all-features -- -D warnings
# No proc-macro crate and no baseline deque in what a runtime links.
if cargo tree -e normal -p stealmark-marker | grep -E 'proc-macro|crossbeam-deque'; then
  echo "FAILED: stealmark-marker's default build pulls in the crates above"
  exit 1
fi

step "cargo doc (no warnings, private items included)"
# The binary `stealmark` is left out of the docs (doc = false), so the facade
# library of the same name owns target/doc/stealmark/.
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --document-private-items
# The marker's and the deques' docs as a runtime's build sees them (no
# feature): no link into what a feature leaves out.
RUSTDOCFLAGS=-Dwarnings cargo doc --no-deps --document-private-items -p stealmark-marker -p stealmark-deques

step "tests (the README's test command)"
cargo test --workspace

step "the C interface from C and C++ (capi/run-c-tests.sh)"
# The header as C11 and C++17 with -Werror, the example runtime linked
# statically and dynamically, and under ASan and UBSan.
capi/run-c-tests.sh

step "loom models"
# Release for speed, but with debug assertions on: the StealHalf invariant
# checks are debug assertions. crossbeam_loom builds crossbeam-epoch on
# loom's atomics, so the epoch kinds' reclamation is explored too. Bound 3
# (the three epoch models run at 2): the 24 models take about 30 s on the
# 2-core machine once built; a clean target/loom build took 3 min 15 s with
# the machine busy with other builds (docs/design.md, "How it is checked").
LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom \
  CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
  cargo test -p stealmark-deques --release --test loom

step "loom models (marker: termination protocol, pool, ephemeron key index)"
# The deques' flags and target directory (the deques crate refuses --cfg loom
# without --cfg crossbeam_loom), so their build is reused. Each model's preemption bound
# is in marker/tests/loom.rs (about 40 s to build and 60 s to run here);
# --nocapture prints each model's time and the branches it reached. The key
# index's models (src/ephemeron/loom_tests.rs) run with the same flags, so
# the marker is built for loom once.
RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
  cargo test -p stealmark-marker --release --test loom -- --nocapture
RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
  cargo test -p stealmark-marker --release --lib ephemeron::loom_tests
# The mark cycle's barrier-buffer queue: hand-off, and the remark with a buffer
# still held (each model asserts the branches it must reach).
RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
  cargo test -p stealmark-marker --release --lib satb::loom_tests

step "delay injection (marker, --features inject-delays)"
cargo test -p stealmark-marker --features inject-delays --test delays

step "fuzz targets compile (cargo-fuzz runs them: see fuzz/README.md)"
cargo check --manifest-path fuzz/Cargo.toml

# Miri and ThreadSanitizer need a nightly toolchain with rust-src and Miri.
# Pinned: Miri from nightly-2026-09-11 on type-checks the variadic
# arguments of syscall(SYS_futex, ...) (rust-lang/rust#161734), and
# parking_lot_core 0.9.12 passes &AtomicI32 there, which it reports as
# undefined behaviour whenever a parking_lot mutex is contended (our
# ephemeron stress test). The pin is lifted once parking_lot_core ships the fix.
NIGHTLY=nightly-2026-05-20
# Installed when missing and rustup can (each try under a timeout); when it
# cannot, both steps print SKIPPED and why, and CI goes on.
step "nightly toolchain (Miri, ThreadSanitizer)"
nightly_skip=""
if ! command -v rustup >/dev/null; then
  nightly_skip="no rustup to install a nightly toolchain with"
elif ! rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1; then
  echo "installing the $NIGHTLY toolchain"
  timeout 600 rustup toolchain install "$NIGHTLY" --profile minimal >/dev/null 2>&1 ||
    nightly_skip="no nightly toolchain, and \`rustup toolchain install $NIGHTLY\` failed or timed out"
fi
# ThreadSanitizer needs rust-src (for -Zbuild-std); Miri needs both.
tsan_skip=$nightly_skip
if [ -z "$tsan_skip" ]; then
  timeout 300 rustup component add rust-src --toolchain "$NIGHTLY" >/dev/null 2>&1 ||
    tsan_skip="\`rustup component add rust-src --toolchain $NIGHTLY\` failed or timed out"
fi
miri_skip=$tsan_skip
if [ -z "$miri_skip" ]; then
  timeout 300 rustup component add miri --toolchain "$NIGHTLY" >/dev/null 2>&1 ||
    miri_skip="\`rustup component add miri --toolchain $NIGHTLY\` failed or timed out"
fi
if [ -z "$nightly_skip" ]; then
  rustup run "$NIGHTLY" rustc --version
fi
if [ -z "$miri_skip" ]; then
  cargo +"$NIGHTLY" miri --version
fi

# Runs a command under a time budget in seconds; a run past it fails the step.
budget() {
  local seconds=$1 start=$SECONDS rc=0
  shift
  timeout "$seconds" "$@" || rc=$?
  if [ "$rc" = 124 ]; then
    echo "FAILED: past its ${seconds}s budget: $*"
  fi
  echo "(took $((SECONDS - start))s of a ${seconds}s budget)"
  return "$rc"
}

# Runs the given functions at once, each with its output in a file, then
# prints each output in turn; fails if any of them failed.
side_by_side() {
  local names=("$@") logs=() pids=() rc=0 i
  for fn in "${names[@]}"; do
    logs+=("$(mktemp)")
    "$fn" >"${logs[-1]}" 2>&1 &
    pids+=("$!")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || rc=1
    echo "--- ${names[$i]}"
    cat "${logs[$i]}"
    rm -f "${logs[$i]}"
  done
  return "$rc"
}

host=$(rustc -vV | sed -n 's/^host: //p')
# The hosts rustc's ThreadSanitizer runtime ships for (empty otherwise).
case "$host" in
  x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu) tsan_host=$host ;;
  *) tsan_host="" ;;
esac

step "Miri (deques; model; heap: builder, views, in-memory snapshots; marker: pool, key index, oracle, contract), beside Lua's suite under ThreadSanitizer"
# Default Miri settings: Stacked Borrows, isolation. Under cfg(miri) the
# tests run on reduced sizes; those Miri cannot run (files and mappings
# under isolation, proptest's failure files, sizes in the millions) are
# ignored with a printed reason. The crossbeam peer deque is left out (racy
# slot reads by design; its epoch reclamation fails Stacked Borrows). Left
# out for time: the marker's oracle matrix, idempotent rounds, other
# contract tests and its concurrent, unshared, steady_state and delays
# tests (the same unsafe code as the runs below); heap's other test files
# (no unsafe of their own). import has no unsafe code. docs/design.md, "How
# it is checked", says what each run covers.
# Miri interprets on one thread, so the two halves below run side by side,
# one a core, each with its output kept until both end; cargo holds its
# build lock only while building, not while the tests run. The marker's
# runs are the shorter, so the heap's unit tests and Lua's test suite under
# ThreadSanitizer follow them on the same core.
miri_deques_model_heap() {
  budget 900 cargo +"$NIGHTLY" miri test -p stealmark-deques &&
    echo "Miri, model: every test (the mark bitmap; prefetch_read runs in the marker's collections)" &&
    budget 300 cargo +"$NIGHTLY" miri test -p stealmark-model &&
    echo "Miri, heap: tests/it/snapshot.rs on in-memory snapshots (corrupt inputs give typed errors)" &&
    budget 600 cargo +"$NIGHTLY" miri test -p stealmark-heap --test it -- snapshot::
}
miri_marker_then_lua_tsan() {
  echo "Miri, marker: unit tests (pool, dense key index, SATB queue)" &&
    budget 300 cargo +"$NIGHTLY" miri test -p stealmark-marker --lib &&
    echo "Miri, marker: tests/it/oracle.rs: every deque kind but crossbeam at 1 to 3 workers (reconfigure), abp overflow" &&
    budget 600 cargo +"$NIGHTLY" miri test -p stealmark-marker --test it -- \
      oracle::reconfigure_switches_deque_and_worker_count oracle::abp_overflow_is_shared_and_used &&
    echo "Miri, marker: tests/it/contract.rs: the hand-made graph (weak, soft, phantom, ephemeron, finalization), nested weak maps, a panicking collection" &&
    budget 600 cargo +"$NIGHTLY" miri test -p stealmark-marker --test it -- \
      contract::the_hand_made_graph contract::nested_weak_maps contract::a_collection_that_panicked &&
    echo "Miri, heap: unit tests (builder, views, validation)" &&
    budget 600 cargo +"$NIGHTLY" miri test -p stealmark-heap --lib &&
    lua_tsan
}
# Lua and the binding's C are compiled as C++ with -fsanitize=thread (Lua
# then throws C++ exceptions where it would longjmp, which rustc's TSan
# runtime does not survive); gc.lua, gengc.lua and four other files of the
# suite, in both modes, every collection parallel. See
# bindings/lua/run-tsan.sh.
lua_tsan() {
  echo "ThreadSanitizer: Lua's test suite on stealmark-lua, 2 workers"
  if [ -n "$tsan_skip" ]; then
    echo "SKIPPED: $tsan_skip"
  elif [ -z "$tsan_host" ]; then
    echo "SKIPPED: no ThreadSanitizer runtime for $host"
  else
    budget 1500 bindings/lua/run-tsan.sh "$NIGHTLY"
  fi
}
if [ -n "$miri_skip" ]; then
  echo "SKIPPED: $miri_skip"
  lua_tsan
else
  budget 300 cargo +"$NIGHTLY" miri setup
  side_by_side miri_deques_model_heap miri_marker_then_lua_tsan
fi

step "ThreadSanitizer (deques stress tests, marker oracle test)"
# std is rebuilt with the sanitizer (-Zbuild-std), so its atomics and locks
# are seen too; its own target directory, since every crate is instrumented.
# crossbeam's build scripts see CARGO_CFG_SANITIZE and switch to their TSan
# mode (crossbeam_sanitize_thread). .ci/tsan.supp names the one suppressed
# race (crossbeam-deque's speculative slot reads) and why.
if [ -n "$tsan_skip" ]; then
  echo "SKIPPED: $tsan_skip"
elif [ -z "$tsan_host" ]; then
  echo "SKIPPED: no ThreadSanitizer runtime for $host in this step"
else
  # Line tables for crossbeam-deque (dependencies carry none otherwise), so
  # that its inlined frames, which the suppressions name, are symbolized.
  tsan=(env RUSTFLAGS="-Zsanitizer=thread"
    CARGO_TARGET_DIR=target/tsan
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/.ci/tsan.supp"
    cargo +"$NIGHTLY" test -Zbuild-std --target "$host"
    --config 'profile.dev.package.crossbeam-deque.debug="line-tables-only"')
  # One command for both crates, so that each is built once with one set of
  # features; the filters pick the deques' `stress::` and the marker's
  # `oracle::` modules. The oracle matrix (every policy at up to 16 workers,
  # about 250 s under the sanitizer) is left to the normal suite and the
  # delay injection: `reconfigure` runs every deque kind at 1 to 3 workers,
  # and the deques' stress tests run more threads than cores.
  budget 900 "${tsan[@]}" -p stealmark-deques -p stealmark-marker --test it --no-run
  budget 600 "${tsan[@]}" -p stealmark-deques -p stealmark-marker --test it -- stress:: oracle:: \
    --skip oracle::every_shape_deque_policy_steal_and_worker_count_matches_the_oracle
fi

step "done"
