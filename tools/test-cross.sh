#!/usr/bin/env bash
# Cross-architecture checks, run by .ci/run after tools/test.sh:
#  1. AArch64: builds the genloop CLI and the conformance program
#     (tests/checkkernels) with gcc-aarch64-linux-gnu, statically linked, and
#     runs them under qemu-user for three CPUs, checking that each NEON level
#     is selected exactly when the CPU has it and passes conformance:
#       cortex-a72  NEON only          -> backend neon
#       cortex-a76  NEON + dotprod     -> backend neon-dotprod
#       max         + i8mm             -> backend neon-i8mm
#     then a greedy generation smoke test whose tokens must equal the host's.
#  2. x86-64 host: the AVX-512 kernels built against SIMDe (meson
#     -Dsimde_avx512=true) and the AVX-VNNI kernels with an exact emulation
#     of vpdpbusd (-Davxvnni_emu=true), run through the conformance program,
#     so they are tested on CPUs without AVX-512 or AVX-VNNI (tools/test.sh
#     does not build them).
#
#   tools/test-cross.sh            build dirs under $GENLOOP_CROSS_DIR
#                                  (default build-cross/)
# Needs: meson, ninja, gcc-aarch64-linux-gnu, qemu-user-static, libsimde-dev.
# The smoke test reads ../shared/models (GENLOOP_SHARED overrides) and is
# skipped, loudly, when that folder is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=${GENLOOP_CROSS_DIR:-$src/build-cross}
shared=${GENLOOP_SHARED:-$src/../shared}
t0=$SECONDS
fail=0

note() { printf '\n== %s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }

for tool in meson ninja aarch64-linux-gnu-gcc qemu-aarch64-static; do
    command -v "$tool" >/dev/null || { echo "test-cross: $tool not found (see .ci/run)" >&2; exit 1; }
done

# setup DIR ARGS...: configure DIR once (ninja regenerates it after that)
setup() {
    local dir=$1
    shift
    [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
}

# build DIR TARGETS...: quiet unless it fails
build() {
    local dir=$1 log
    shift
    log=$(mktemp)
    if ! ninja -C "$dir" "$@" >"$log" 2>&1; then
        cat "$log"
        echo "test-cross: build in $dir failed" >&2
        exit 1
    fi
    rm -f "$log"
}

# ---- AArch64 under qemu ----------------------------------------------------
arm=$out/aarch64
note "aarch64 build ($arm)"
# Static executables: no aarch64 sysroot needed at run time. Only the CLI and
# checkkernels are built (the shared library cannot link with -static, and
# Criterion is not installed for aarch64, so tests/meson.build stops after
# checkkernels).
setup "$arm" --cross-file "$src/cross/aarch64-linux-gnu.ini" --buildtype=release \
    -Dc_link_args=-static
build "$arm" genloop tests/checkkernels

qemu() { qemu-aarch64-static -cpu "$@"; }

# cpu  expected-default-backend  backends-that-must-be-tested
matrix=(
    "cortex-a72 neon neon"
    "cortex-a76 neon-dotprod neon,neon-dotprod"
    "max neon-i8mm neon,neon-dotprod,neon-i8mm"
)
for row in "${matrix[@]}"; do
    read -r cpu want tested <<<"$row"
    note "qemu -cpu $cpu: genloop info"
    info=$(qemu "$cpu" "$arm/genloop" info)
    echo "$info"
    got=$(sed -n 's/^backend: //p' <<<"$info")
    [ "$got" = "$want" ] || bad "-cpu $cpu selected backend '$got', expected '$want'"

    note "qemu -cpu $cpu: checkkernels"
    log=$(mktemp)
    if qemu "$cpu" "$arm/tests/checkkernels" >"$log" 2>&1; then
        grep -vE '^ +\[OK\]' "$log" || true
    else
        cat "$log"
        bad "-cpu $cpu: checkkernels failed"
    fi
    IFS=, read -r -a must <<<"$tested"
    for b in "${must[@]}"; do
        grep -q "^$b:$" "$log" || bad "-cpu $cpu: backend $b was not tested"
    done
    printf '%s: %s\n' "$cpu" "$(tail -1 "$log")"
    rm -f "$log"
done

# ---- x86-64: SIMDe AVX-512 conformance, and the host side of the smoke test --
host=""
if [ "$(uname -m)" = x86_64 ]; then
    x86=$out/x86-simde
    note "x86-64 build with SIMDe AVX-512 and emulated AVX-VNNI ($x86)"
    setup "$x86" --buildtype=release -Dsimde_avx512=true -Davxvnni_emu=true
    build "$x86" genloop tests/checkkernels
    for b in avx512-simde avxvnni-emu; do
        note "checkkernels --backend $b"
        log=$(mktemp)
        if "$x86/tests/checkkernels" --backend "$b" >"$log" 2>&1; then
            grep -vE '^ +\[OK\]' "$log" || true
            grep -q "^$b:\$" "$log" || bad "$b was not tested"
        else
            cat "$log"
            bad "checkkernels --backend $b failed"
        fi
        rm -f "$log"
    done
    host=$x86/genloop
else
    note "SIMDe AVX-512 check skipped: host is $(uname -m), not x86_64"
    host=$out/native/genloop
    setup "$out/native" --buildtype=release -Dtests=disabled
    build "$out/native" genloop
fi

# ---- generation smoke test: greedy tokens under qemu equal the host's -------
# stories260K (F32: float kernels) as the acceptance check, and the Q4_0 /
# Q8_0 variants (quantized and repacked paths) where shared/ has them.
tokens() { grep -o '"tokens": \[[^]]*\]' || true; }
if [ ! -f "$shared/models/stories260K.gguf" ]; then
    note "SKIPPED generation smoke test: $shared/models/stories260K.gguf not found (set GENLOOP_SHARED)"
else
    note "smoke: host backend $("$host" info | sed -n 's/^backend: //p')"
    for name in stories260K stories260K-mixQ4_0 stories260K-mixQ8_0; do
        model=$shared/models/$name.gguf
        [ -f "$model" ] || { echo "smoke: $name.gguf not found, skipped"; continue; }
        args=(run -m "$model" -p "Once upon a time" -n 32 --temp 0 --json)
        ref=$("$host" "${args[@]}" 2>/dev/null | tokens)
        echo "smoke: $name host $ref"
        [ -n "$ref" ] || bad "smoke: $name: no tokens from the host"
        for cpu in cortex-a72 cortex-a76 max; do
            got=$(qemu "$cpu" "$arm/genloop" "${args[@]}" 2>/dev/null | tokens)
            if [ -n "$ref" ] && [ "$got" = "$ref" ]; then
                echo "smoke: $name -cpu $cpu: tokens equal the host's"
            else
                bad "smoke: $name -cpu $cpu: tokens $got differ from the host's"
            fi
        done
    done
fi

note "test-cross: $((SECONDS - t0)) s"
if [ "$fail" -ne 0 ]; then
    echo "test-cross: FAILED"
    exit 1
fi
echo "test-cross: all passed"
