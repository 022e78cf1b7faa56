#!/usr/bin/env bash
# The server under load, against the engine alone and against a peer server,
# on the same requests, the same model file and the same thread count:
#
#   1. `genloop batch` on the requests serve_load generates (all queued at
#      once, --max-batch CLIENTS): the engine's own throughput;
#   2. `genloop serve` + serve_load, CLIENTS streaming clients, all requests
#      due at once (the same work as 1, through HTTP/SSE): tok/s and its
#      ratio to 1;
#   3. the same load against the peer's server (PEER_SERVER, e.g. llama.cpp's
#      llama-server built from source) with CLIENTS parallel slots;
#   4. both servers again with Poisson arrivals (RATE requests/s): TTFT and
#      per-token latency under a load that comes and goes.
# Rounds interleave 1-3 so slow drifts of the machine hit all alike.
#
#   bench/serve_load.sh MODEL.gguf [threads=2] [clients=8] [requests=32] [rounds=2]
# Environment: GENLOOP (build/genloop), SERVE_LOAD (build/bench/serve_load),
# PEER_SERVER (path to llama-server; the peer columns are left out without
# it), RATE (0.5), CTX (context per sequence, 1024), PORT (18181: the first of the ports used),
# PROMPT_WORDS (8:96), MAX_TOKENS (32:128), SEED (1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,20p' "$0"; exit 2; }
MODEL=$1 T=${2:-2} C=${3:-8} M=${4:-32} ROUNDS=${5:-2}
G=${GENLOOP:-build/genloop}
SL=${SERVE_LOAD:-build/bench/serve_load}
RATE=${RATE:-0.5} CTX=${CTX:-1024} PORT=${PORT:-18181}
PW=${PROMPT_WORDS:-8:96} MT=${MAX_TOKENS:-32:128} SEED=${SEED:-1}
[ -f "$MODEL" ] || { echo "serve_load.sh: no such model $MODEL" >&2; exit 2; }
[ -x "$SL" ] || { echo "serve_load.sh: build first (ninja -C build): no $SL" >&2; exit 2; }

tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

load=(--clients "$C" --requests "$M" --seed "$SEED" --prompt-words "$PW" --max-tokens "$MT"
      --deadline 1800)
"$SL" "${load[@]}" --write-batch "$tmp/req.jsonl" --write-only
# each server start takes the next port: a port the previous server just
# closed can stay in TIME_WAIT, and not every server binds with SO_REUSEADDR
port=$PORT

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }

start_genloop() {
  port=$((port + 1)) log=$tmp/serve.log
  "$G" serve -m "$MODEL" -t "$T" --max-batch "$C" -c "$CTX" --port "$port" \
      --max-queue $((M + C)) >"$log" 2>&1 &
  srv=$!
}
start_peer() {
  port=$((port + 1)) log=$tmp/peer.log
  "$PEER_SERVER" -m "$MODEL" -t "$T" -tb "$T" -np "$C" -c $((CTX * C)) --port "$port" \
      >"$log" 2>&1 &
  srv=$!
}
stop_server() { kill -TERM "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; srv=; }
# waits until the server answers (GET /health = 200, then a 1-token request:
# also a warm-up) while it lives (one that exits: its log, and stop); then
# prints the RESULT line of one serve_load run at rate $1
run_load() {
  for _ in $(seq 600); do
    kill -0 "$srv" 2>/dev/null || { echo "serve_load.sh: the server exited:" >&2; tail -5 "$log" >&2; exit 1; }
    if "$SL" --port "$port" --wait-ready 0.5 --requests 1 --max-tokens 1:1 --prompt-words 1:1 \
        >/dev/null 2>&1; then
      break
    fi
  done
  "$SL" "${load[@]}" --port "$port" --rate "$1" | sed -n 's/^RESULT //p'
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "model $(basename "$MODEL"), cpu: ${cpu:-unknown}, $(nproc) CPUs, threads $T," \
     "$C clients, $M requests (prompt words $PW, max_tokens $MT, greedy), ctx $CTX per sequence"
echo
echo "| round | genloop batch tok/s | genloop serve tok/s | serve / batch | failed |" \
     "${PEER_SERVER:+peer server tok/s | genloop serve / peer | peer failed |}"
echo "|---|---|---|---|---|${PEER_SERVER:+---|---|---|}"
for r in $(seq 1 "$ROUNDS"); do
  "$G" batch -m "$MODEL" --input "$tmp/req.jsonl" --output "$tmp/batch.jsonl" \
      --max-batch "$C" -t "$T" -c "$CTX" 2>"$tmp/batch.err"
  wall=$(sed -n 's/.* requests in \([0-9.]*\) s .*/\1/p' "$tmp/batch.err")
  # generated tokens: the elements of every "tokens": [...] array
  ntok=$(sed -n 's/.*"tokens": \[\([^]]*\)\].*/\1/p' "$tmp/batch.jsonl" |
         awk -F, '{ n += ($0 ~ /[0-9]/) ? NF : 0 } END { print n + 0 }')
  btps=$(awk -v n="$ntok" -v w="$wall" 'BEGIN { printf "%.1f", (w > 0 ? n / w : 0) }')

  start_genloop
  g=$(run_load 0)
  stop_server
  gtps=$(echo "$g" | field tok_s) gfail=$(echo "$g" | field failed)
  row="| $r | $btps | $gtps | $(awk -v a="$gtps" -v b="$btps" 'BEGIN { printf "%.1f %%", (b > 0 ? 100 * a / b : 0) }') | ${gfail:-?} |"
  if [ -n "${PEER_SERVER:-}" ]; then
    start_peer
    p=$(run_load 0)
    stop_server
    ptps=$(echo "$p" | field tok_s) pfail=$(echo "$p" | field failed)
    row="$row ${ptps:-?} | $(awk -v a="$gtps" -v b="${ptps:-0}" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }') | ${pfail:-?} |"
  fi
  echo "$row"
done

echo
echo "Poisson arrivals, $RATE requests/s, $C clients:"
echo
echo "| server | tok/s | TTFT p50 ms | TTFT p99 ms | per-token p50 ms | per-token p99 ms | failed |"
echo "|---|---|---|---|---|---|---|"
report() {
  echo "$2" | awk -v name="$1" '{
    for (i = 1; i <= NF; i++) { k = $i; gsub(/[{}":,]/, "", k); v = $(i + 1); gsub(/[},]/, "", v); f[k] = v }
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, f["tok_s"], f["ttft_p50_ms"],
           f["ttft_p99_ms"], f["tpot_p50_ms"], f["tpot_p99_ms"], f["failed"] }'
}
start_genloop
report "genloop serve" "$(run_load "$RATE")"
stop_server
if [ -n "${PEER_SERVER:-}" ]; then
  start_peer
  report "peer server" "$(run_load "$RATE")"
  stop_server
fi
