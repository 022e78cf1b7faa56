#!/usr/bin/env bash
# Side by side with a peer runtime's benchmark binary (llama.cpp's or
# ik_llama.cpp's llama-bench, built from source outside this repository),
# in interleaved rounds on the same GGUF file and thread counts: each round
# runs genloop, then the peer, so slow drifts of the machine's memory
# bandwidth (VMs) hit both alike, and the per-round ratio is what to read.
#
#   bench/vs_peer.sh PEER_LLAMA_BENCH MODEL.gguf [threads] [rounds]
#   e.g. bench/vs_peer.sh ../peers/llama.cpp/build/bin/llama-bench \
#            /tmp/genloop-models/tinyllama-1.1b-q4_k_m.gguf "1 2" 3
# Environment: GENLOOP (default build/genloop), P (prompt tokens, 128),
# N (generated tokens, 64), PEER_ARGS (extra peer flags, e.g. "-rtr 1" for
# ik_llama.cpp), BACKEND (genloop --backend).
#
# Measured the same way on both sides: prefill = P prompt tokens in one
# batch (llama-bench pp<P>), decode = N tokens one at a time (llama-bench
# tg<N>, which starts from an empty cache; genloop's decode follows its P
# prompt tokens, so it attends over P more positions: a slight handicap).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
PEER=$1 MODEL=$2
threads=${3:-"1 2"}
rounds=${4:-3}
G=${GENLOOP:-build/genloop}
P=${P:-128} N=${N:-64}
[ -x "$PEER" ] || { echo "vs_peer.sh: $PEER is not an executable" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "vs_peer.sh: no such model $MODEL" >&2; exit 2; }

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "model $(basename "$MODEL"), cpu: ${cpu:-unknown}, $(nproc) CPUs, P=$P N=$N"
echo
echo "| round | threads | genloop pp$P tok/s | peer pp$P tok/s | ratio | genloop tg$N tok/s | peer tg$N tok/s | ratio |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    j=$("$G" bench -m "$MODEL" -p "$P" -n "$N" -r 1 -t "$t" ${BACKEND:+--backend "$BACKEND"} --json)
    gp=$(echo "$j" | field prefill_tok_s)
    gd=$(echo "$j" | field decode_tok_s)
    # llama-bench CSV: find the avg_ts column by name, pick the pp and tg rows
    # shellcheck disable=SC2086
    csv=$("$PEER" -m "$MODEL" -p "$P" -n "$N" -t "$t" -r 1 -o csv ${PEER_ARGS:-} 2>/dev/null)
    read -r pp tg < <(echo "$csv" | awk -F, -v P="$P" -v N="$N" '
      NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i } next }
      { gsub(/"/, "");
        if ($col["n_prompt"] == P && $col["n_gen"] == 0) pp = $col["avg_ts"];
        if ($col["n_prompt"] == 0 && $col["n_gen"] == N) tg = $col["avg_ts"] }
      END { print (pp == "" ? "nan" : pp), (tg == "" ? "nan" : tg) }')
    awk -v r="$r" -v t="$t" -v gp="$gp" -v pp="$pp" -v gd="$gd" -v tg="$tg" 'BEGIN {
      printf "| %d | %d | %.1f | %.1f | %.2fx | %.2f | %.2f | %.2fx |\n",
             r, t, gp, pp, (pp > 0 ? gp / pp : 0), gd, tg, (tg > 0 ? gd / tg : 0) }'
  done
done
