#!/usr/bin/env bash
# Formats every C source with the project's .clang-format (the generated
# Unicode table is left as generated). --check: list files that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' | grep -v '^src/unicode_tables.c$')
if [ "${1:-}" = "--check" ]; then
    bad=0
    for f in $files; do
        clang-format "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
    done
    exit $bad
fi
clang-format -i $files
