#!/bin/bash
# ab_builds.sh BUILD_A BUILD_B [BUILD...] [-- AB_MAIN_OPTIONS...]
#
# Times one product kernel of each build folder (a change against its
# baseline: e.g. `git worktree add ../base HEAD~1` and a meson build of
# each) in alternation in one process, bench/ab_main.c: a shared machine's
# drift reaches every build of a round alike. Builds what it needs in each
# folder. Options after -- go to ab_main (--type, --n, --rows, --nb,
# --cold-mb, --rounds, --secs, --backend); e.g.
#   bench/ab_builds.sh ../base/build build -- --type q4_K --nb 32
#   bench/ab_builds.sh ../base/build build -- --type q4_0 --nb 1 --cold-mb 1024
set -euo pipefail
builds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    builds+=("$1")
    shift
done
[ $# -gt 0 ] && shift
if [ ${#builds[@]} -lt 2 ]; then
    echo "usage: bench/ab_builds.sh BUILD_A BUILD_B [BUILD...] [-- AB_MAIN_OPTIONS...]" >&2
    exit 2
fi
modules=()
for b in "${builds[@]}"; do
    ninja -C "$b" bench/ab_kernel.so bench/ab_main >/dev/null
    modules+=("$(cd "$b" && pwd)/bench/ab_kernel.so")
done
exec "${builds[0]}/bench/ab_main" "$@" "${modules[@]}"
