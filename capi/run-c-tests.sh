#!/usr/bin/env bash
# Builds the C interface and checks it from C: the header as C11 and C++17
# (-Wall -Wextra -Werror -pedantic), the example runtime linked statically and
# dynamically, and the runtime under AddressSanitizer and
# UndefinedBehaviorSanitizer where the compiler has them (a skipped check
# says so). Usage: capi/run-c-tests.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-40}"
CC="${CC:-cc}"
CXX="${CXX:-c++}"
out="target/capi-c"
mkdir -p "$out"

# PROFILE=dev builds faster (for editing); CI uses the release build.
profile="${PROFILE:-release}"
cargo build -p stealmark-capi --profile "$profile"
lib="target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
# What a static Rust library needs from the system.
syslibs=(-lpthread -ldl -lm -lrt)

echo "== header as C11 and C++17"
printf '#include "stealmark.h"\nint main(void) { sm_config c; sm_config_init(&c); return (int)c.count_live - 1; }\n' >"$out/header.c"
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic -Icapi/include -c "$out/header.c" -o "$out/header_c.o"
cp "$out/header.c" "$out/header.cpp"
"$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic -Icapi/include -c "$out/header.cpp" -o "$out/header_cpp.o"
"$CXX" -std=c++17 -Wall -Wextra -Werror "$out/header_cpp.o" "$lib/libstealmark_capi.a" "${syslibs[@]}" -o "$out/header_cpp"
"$out/header_cpp"

cflags=(-std=c11 -O2 -g -Wall -Wextra -Werror -pedantic -pthread -Icapi/include)

echo "== the example runtime, static"
"$CC" "${cflags[@]}" capi/examples/runtime.c "$lib/libstealmark_capi.a" "${syslibs[@]}" -o "$out/runtime"
"$out/runtime" "$rounds" | tail -3

echo "== the example runtime, shared"
"$CC" "${cflags[@]}" capi/examples/runtime.c -L"$lib" -lstealmark_capi -Wl,-rpath,"$PWD/$lib" -o "$out/runtime_so"
"$out/runtime_so" "$rounds" | tail -1

for san in address undefined; do
  echo "== the example runtime under -fsanitize=$san"
  if ! echo 'int main(void){return 0;}' | "$CC" -x c -fsanitize="$san" - -o "$out/probe" 2>/dev/null; then
    echo "SKIPPED: $CC has no -fsanitize=$san"
    continue
  fi
  "$CC" "${cflags[@]}" -fsanitize="$san" -fno-sanitize-recover=all -fno-omit-frame-pointer \
    capi/examples/runtime.c "$lib/libstealmark_capi.a" "${syslibs[@]}" -o "$out/runtime_$san"
  # LeakSanitizer would report the worker threads' thread-locals, which
  # live until the process exits; ASan's other checks stay on.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 "$out/runtime_$san" "$rounds" | tail -1
done
echo "capi C tests: OK"
