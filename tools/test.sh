#!/usr/bin/env bash
# Runs every test:
#   1. the meson suite in build/ (unit tests, reference comparisons, CLI,
#      ring and batching, kernel conformance on every backend this CPU runs);
#   2. tools/test-cross.sh: AArch64 NEON backends under qemu, AVX-512 kernels
#      through SIMDe;
#   3. tools/test-hardening.sh: the suite under ASan + UBSan, short fuzz runs.
# Stages 2 and 3 need extra packages (see README); without them they are
# skipped with a loud SKIP line, unless GENLOOP_TEST_STRICT=1 (CI), which
# makes a missing toolchain a failure. Debian packages the stages need are
# installed first when missing (tools/deps.sh: says what, sudo when not root).
#   tools/test.sh            everything
#   tools/test.sh --quick    stage 1 only
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/deps.sh

quick=0
[ "${1:-}" = "--quick" ] && quick=1 && shift
ensure_packages meson ninja-build gcc pkg-config libcriterion-dev
if [ "$quick" = 0 ]; then
    ensure_packages clang-14 libclang-rt-14-dev gcc-aarch64-linux-gnu qemu-user-static \
        libsimde-dev
fi

if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
meson compile -C build
log=$(mktemp)
trap 'rm -f "$log"' EXIT
meson test -C build --print-errorlogs "$@" | tee "$log"
n_ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log")
n_fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log")
summary() { echo "test.sh: ${n_ok:-0} passed, ${n_fail:-0} failed"; }
if [ "$quick" = 1 ]; then
    summary
    exit 0
fi

have() { command -v "$1" >/dev/null 2>&1; }
skip() {
    if [ "${GENLOOP_TEST_STRICT:-0}" = 1 ]; then
        echo "test.sh: ERROR: $1" >&2
        exit 1
    fi
    echo "SKIP: $1" >&2
}

if have aarch64-linux-gnu-gcc && have qemu-aarch64-static; then
    tools/test-cross.sh
else
    skip "cross-architecture checks need gcc-aarch64-linux-gnu and qemu-user-static"
fi
if have clang-14 || have clang; then
    tools/test-hardening.sh
else
    skip "sanitizer and fuzz checks need clang-14 and libclang-rt-14-dev"
fi
echo "test.sh: all stages passed (meson suites below; cross and hardening stages above)"
summary
