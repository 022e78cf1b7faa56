#!/usr/bin/env bash
# Per-token decode latency as the KV cache fills: prefill D tokens, then time
# decode steps, for D in 0 (one token), 256, 1024 and 4096, on a
# TinyLlama-1.1B-shaped model, against the roofline of the weights and the
# cached keys and values a step reads together (bench's roofline_kv_pct).
#
#   bench/kv_latency.sh [type] [threads] [cache-type]
set -euo pipefail
cd "$(dirname "$0")/.."
G=${GENLOOP:-build/genloop}
MODELS=${MODELS:-/tmp/genloop-models}
type=${1:-q4_0} threads=${2:-2} cache=${3:-f16}
mkdir -p "$MODELS"
f="$MODELS/tinyllama-1.1b-$type.gguf"
[ -f "$f" ] || "$G" synth --shape tinyllama-1.1b --type "$type" -o "$f"
echo "| cached tokens | decode p50 ms | p90 ms | p99 ms | decode tok/s | KV MB a step | % of weights + KV roofline |"
echo "|---|---|---|---|---|---|---|"
for d in 1 256 1024 4096; do
  j=$("$G" bench -m "$f" -p "$d" -n 32 -r 1 -t "$threads" --cache-type "$cache" --bw-mib 64 --json)
  lat() { echo "$j" | sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }
  printf "| %d | %s | %s | %s | %s | %.1f | %s |\n" $((d == 1 ? 0 : d)) "$(lat p50)" "$(lat p90)" \
    "$(lat p99)" "$(lat decode_tok_s)" "$(awk -v b="$(lat kv_bytes_per_step)" 'BEGIN { print b / 1e6 }')" \
    "$(lat roofline_kv_pct)"
done
