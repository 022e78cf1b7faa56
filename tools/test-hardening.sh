#!/usr/bin/env bash
# Hardening checks, run by CI after tools/test.sh:
#   1. the whole Criterion suite under AddressSanitizer + UndefinedBehavior-
#      Sanitizer (build-asan/), UBSan aborting on the first error and ASan
#      checking for leaks where LeakSanitizer works;
#   2. the libFuzzer targets (build-fuzz/, clang) for a short run each,
#      seeded by fuzz/mkseeds from ../shared.
# Environment: FUZZ_SECONDS per target (default 45; 5 targets), FUZZ=0 to
# skip fuzzing, FUZZ_CC (default clang-14, else clang), GENLOOP_SHARED.
set -euo pipefail
cd "$(dirname "$0")/.."

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
# leaks inside Criterion's runner are the framework's, not genloop's
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp:print_suppressions=0

# ---- 1. the test suite under ASan + UBSan --------------------------------
# -O1, not debugoptimized's -O2: under both sanitizers gcc took 16 minutes
# over the SIMD kernel files at -O2 (avx512/kquant.c alone 9), 4 at -O1; the
# suite then runs ~15-40 % longer a test.
if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Doptimization=1 -Ddebug=true
fi
meson compile -C build-asan
# LeakSanitizer cannot run under ptrace (some containers, debuggers): say so
# and go on without it rather than fail on its own fatal error.
if ASAN_OPTIONS=detect_leaks=1 build-asan/genloop --version 2>&1 | grep -q "LeakSanitizer has encountered a fatal error"; then
    echo "test-hardening: WARNING: LeakSanitizer does not work here; leak checks are OFF" >&2
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1
fi
meson test -C build-asan --print-errorlogs --timeout-multiplier 3

# ---- 2. short fuzz runs ---------------------------------------------------
if [ "${FUZZ:-1}" = 0 ]; then
    echo "test-hardening: FUZZ=0, skipping the fuzz runs"
    exit 0
fi
cc=${FUZZ_CC:-clang-14}
command -v "$cc" >/dev/null || cc=clang
if ! command -v "$cc" >/dev/null; then
    echo "test-hardening: ERROR: no clang found for the fuzz targets (install clang-14)" >&2
    exit 1
fi
if [ ! -f build-fuzz/build.ninja ]; then
    CC=$cc meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Doptimization=1 -Ddebug=true -Dtests=disabled
fi
meson compile -C build-fuzz
rm -rf build-fuzz/seeds
build-fuzz/fuzz/mkseeds build-fuzz/seeds

secs=${FUZZ_SECONDS:-45}
fail=0
for t in gguf model tokenizer detok http; do
    dict=()
    case $t in
    gguf | model) dict=(-dict=fuzz/gguf.dict) ;;
    http) dict=(-dict=fuzz/http.dict) ;;
    esac
    mkdir -p build-fuzz/corpus/$t
    log=build-fuzz/fuzz-$t.log
    echo "test-hardening: fuzz_$t for ${secs}s"
    if build-fuzz/fuzz/fuzz_$t -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$t- "${dict[@]}" \
        build-fuzz/corpus/$t build-fuzz/seeds/$t >"$log" 2>&1; then
        # the last status line (executions, cov:, ft:) and libFuzzer's summary
        grep -E "^#[0-9]+ .*cov:" "$log" | tail -1 || true
        grep -E "^Done [0-9]+ runs" "$log" || true
    else
        echo "test-hardening: FAIL: fuzz_$t found a problem (inputs: build-fuzz/crash-$t-*):" >&2
        grep -v -E "^#[0-9]+ " "$log" | tail -40 >&2
        fail=1
    fi
done
exit $fail
