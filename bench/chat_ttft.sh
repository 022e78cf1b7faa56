#!/bin/sh
# Time to first token of `genloop chat` over a 10-turn conversation fed
# through a pipe: with the KV cache kept between turns only each new turn's
# tokens are processed, so turn 10 should cost what turn 1 costs while the
# conversation fits the context.
#   bench/chat_ttft.sh [MODEL] [TURNS]     (default ../shared/models/stories260K.gguf, 10)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-${GENLOOP_SHARED:-$here/../shared}/models/stories260K.gguf}
turns=${2:-10}
bin=${GENLOOP_BIN:-$here/build/genloop}
[ -f "$model" ] || { echo "SKIP: model $model not found" >&2; exit 0; }
i=1
while [ "$i" -le "$turns" ]; do
    echo "Tell me about the little dog number $i in the park."
    i=$((i + 1))
done | "$bin" chat -m "$model" --temp 0 -n 24 -c 2048 -t 1 2>&1 >/dev/null |
    awk '/^genloop: turn/ {
        for (k = 1; k <= NF; k++) {
            if ($k == "turn") turn = $(k + 1);
            if ($k == "prompt") newtok = $(k + 1);
            if ($k == "ttft") ttft = $(k + 1);
            if ($k == "context") ctx = $(k + 1);
        }
        printf "turn %2d: new prompt %3d tok, ttft %7.2f ms, context %s\n", turn, newtok, ttft, ctx
    }'

# For comparison: the same conversation re-processed from scratch (what a
# chat without a kept cache pays): /load the first turns-1 turns, then ask
# the last one.
tmp=${TMPDIR:-/tmp}/chat_ttft.$$.json
i=1
{
    while [ "$i" -lt "$turns" ]; do
        echo "Tell me about the little dog number $i in the park."
        i=$((i + 1))
    done
    echo "/save $tmp"
} | "$bin" chat -m "$model" --temp 0 -n 24 -c 2048 -t 1 >/dev/null 2>&1
printf '/load %s\nTell me about the little dog number %s in the park.\n' "$tmp" "$turns" |
    "$bin" chat -m "$model" --temp 0 -n 24 -c 2048 -t 1 2>&1 >/dev/null |
    awk '/^genloop: turn/ {
        for (k = 1; k <= NF; k++) {
            if ($k == "turn") turn = $(k + 1);
            if ($k == "prompt") newtok = $(k + 1);
            if ($k == "ttft") ttft = $(k + 1);
        }
        printf "turn %2d re-processed from scratch: prompt %3d tok, ttft %7.2f ms\n", turn, newtok, ttft
    }'
rm -f "$tmp"
