#!/usr/bin/env bash
# Runs every test: configures and builds build/ if needed, then the whole
# meson test suite (unit tests, reference comparisons, CLI, kernel
# conformance).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
meson compile -C build
meson test -C build --print-errorlogs "$@"
