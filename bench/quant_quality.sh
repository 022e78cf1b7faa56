#!/usr/bin/env bash
# Quality against speed for every quantization type genloop runs, on the
# shared padded TinyStories files (stories260K-pad256-*.gguf: one model,
# every 2-D weight in the named type or mix). For each file: size, bits per
# weight (weight bytes x 8 / parameters, the parameters counted from the F32
# file), perplexity on the shared text, KL divergence of its predictions from
# the F32 file's (mean, and how often both pick the same top token), decode
# tok/s. Writes a Markdown table to stdout (and to $OUT if set).
#
#   bench/quant_quality.sh
# Environment: GENLOOP (binary, default build/genloop), GENLOOP_SHARED (default
# ../shared), TEXT (default $GENLOOP_SHARED/perplexity/stories.txt), CTX (128),
# THREADS (perplexity and bench threads, default 1), N (decode tokens, 128), R (3).
set -euo pipefail
cd "$(dirname "$0")/.."
G=${GENLOOP:-build/genloop}
SHARED=${GENLOOP_SHARED:-../shared}
TEXT=${TEXT:-$SHARED/perplexity/stories.txt}
CTX=${CTX:-128} THREADS=${THREADS:-1} N=${N:-128} R=${R:-3}
ref="$SHARED/models/stories260K-pad256-F32.gguf"
[ -f "$ref" ] || { echo "quant_quality.sh: $ref not found (set GENLOOP_SHARED)" >&2; exit 1; }
base=$(mktemp /tmp/genloop-kld-base.XXXXXX)
trap 'rm -f "$base"' EXIT

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
weights() { "$G" info "$1" | sed -n 's/.*memory: weights \([0-9]*\) bytes.*/\1/p'; }

"$G" perplexity -m "$ref" -f "$TEXT" -c "$CTX" -t "$THREADS" --kl-divergence-base "$base" --json \
  >/dev/null
ref_ppl=$("$G" perplexity -m "$ref" -f "$TEXT" -c "$CTX" -t "$THREADS" --json | field ppl)
n_params=$(( $(weights "$ref") / 4 ))

rows=$(
  for f in "$SHARED"/models/stories260K-pad256-*.gguf; do
    name=$(basename "$f" .gguf)
    type=${name#stories260K-pad256-}
    j=$("$G" perplexity -m "$f" -f "$TEXT" -t "$THREADS" --kl-divergence "$base" --json)
    b=$("$G" bench -m "$f" -p 64 -n "$N" -r "$R" -t "$THREADS" --bw-mib 64 --json)
    size=$(stat -c %s "$f")
    bpw=$(awk -v w="$(weights "$f")" -v n="$n_params" 'BEGIN { printf "%.2f", 8 * w / n }')
    ppl=$(echo "$j" | field ppl)
    # sort key first (bits per weight, descending), cut off below
    awk -v bpw="$bpw" -v t="$type" -v s="$size" -v p="$ppl" -v rp="$ref_ppl" \
        -v k="$(echo "$j" | field mean)" -v same="$(echo "$j" | field same_top_pct)" \
        -v d="$(echo "$b" | field decode_tok_s)" -v ds="$(echo "$b" | field decode_tok_s_std)" \
        'BEGIN { printf "%s\t| %s | %.1f | %s | %.4f | %+.2f | %.6f | %.2f | %.0f ± %.0f |\n",
                 bpw, t, s / 1024, bpw, p, 100 * (p - rp) / rp, k, same, d, ds }'
  done | sort -t "$(printf '\t')" -k1,1 -g -r | cut -f2
)

{
  echo "Text: $(basename "$TEXT"), windows of $CTX tokens (second half scored); KLD against"
  echo "stories260K-pad256-F32 (PPL $ref_ppl); decode: $N tokens after a 64-token prompt, $THREADS"
  echo "thread(s), backend $("$G" info | sed -n 's/^backend: //p'), mean ± stddev of $R runs."
  echo
  echo "| type | size KiB | bits/weight | PPL | Δ PPL % | mean KLD | same top % | decode tok/s |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  echo "$rows"
} | tee "${OUT:-/dev/null}"
