#!/usr/bin/env bash
# The standard benchmark matrix: synthetic model shapes x weight types x
# thread counts through `genloop bench`, each with the memory bandwidth
# measured in the same run: each row against the roofline of its weights,
# and of its weights and the KV cache its steps read (% with KV). Writes a
# Markdown table (stdout, or $OUT).
#
#   bench/run_matrix.sh [shapes] [types] [threads]
#   e.g. bench/run_matrix.sh "tinyllama-1.1b" "q4_0 q8_0" "1 2"
# Environment: GENLOOP (the binary, default build/genloop), MODELS (where
# synthetic models are cached, default /tmp/genloop-models), P, N, R, BACKEND
# (passed to --backend; default: the best the CPU has).
set -euo pipefail
cd "$(dirname "$0")/.."
G=${GENLOOP:-build/genloop}
MODELS=${MODELS:-/tmp/genloop-models}
shapes=${1:-"stories15m tinyllama-1.1b"}
types=${2:-"q4_0 q8_0"}
threads=${3:-"1 2"}
P=${P:-128} N=${N:-64} R=${R:-3}
mkdir -p "$MODELS"

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
p50() { sed -n 's/.*"p50": \([0-9.]*\).*/\1/p'; }

{
echo "| shape | type | threads | backend | prefill tok/s | decode tok/s | p50 ms | p99 ms | bandwidth GB/s | roofline tok/s | % of roofline | % with KV | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for s in $shapes; do
  for t in $types; do
    f="$MODELS/$s-$t.gguf"
    [ -f "$f" ] || "$G" synth --shape "$s" --type "$t" -o "$f"
    for th in $threads; do
      j=$("$G" bench -m "$f" -p "$P" -n "$N" -r "$R" -t "$th" ${BACKEND:+--backend "$BACKEND"} --json)
      be=$(echo "$j" | sed -n 's/.*"backend": "\([^"]*\)".*/\1/p')
      p99=$(echo "$j" | sed -n 's/.*"p99": \([0-9.]*\).*/\1/p')
      rss=$(echo "$j" | field peak_rss_bytes)
      printf "| %s | %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %.1f | %.2f | %.1f | %.1f | %.0f |\n" \
        "$s" "$t" "$th" "$be" "$(echo "$j" | field prefill_tok_s)" "$(echo "$j" | field decode_tok_s)" \
        "$(echo "$j" | p50)" "$p99" "$(echo "$j" | field bandwidth_gbs)" \
        "$(echo "$j" | field roofline_tok_s)" "$(echo "$j" | field roofline_pct)" \
        "$(echo "$j" | field roofline_kv_pct)" "$(awk -v r="$rss" 'BEGIN { print r / 1e6 }')"
    done
  done
done
} | tee "${OUT:-/dev/null}"
