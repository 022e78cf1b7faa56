#!/usr/bin/env bash
# Side by side with peer runtimes' benchmark binaries (llama.cpp's or
# ik_llama.cpp's llama-bench, built from source outside this repository),
# in interleaved rounds on the same GGUF file and thread counts: each round
# runs genloop, then every peer, so slow drifts of the machine's memory
# bandwidth (VMs) hit all alike, and the per-round ratio is what to read.
#
#   bench/vs_peer.sh PEERS MODEL.gguf [threads] [rounds]
#   e.g. bench/vs_peer.sh "../peers/ik_llama.cpp/build/bin/llama-bench -rtr 1,\
#            ../peers/llama.cpp/build/bin/llama-bench" \
#            /tmp/genloop-models/tinyllama-1.1b-q4_0.gguf "1 2" 5
# PEERS: one llama-bench path, or several separated by commas, each
# optionally followed by its own flags ("-rtr 1" for ik_llama.cpp's
# run-time repacking); a peer is named by the folder above its build/.
# Environment: GENLOOP (default build/genloop), P (prompt tokens, 128),
# N (generated tokens, 64), PEER_ARGS (flags for every peer), BACKEND
# (genloop --backend), TUNES (genloop decode tunes to run side by side,
# e.g. "zen default": each its own row, genloop:TUNE, via GENLOOP_TUNE; the first is the
# one the ratios use; default: the tune this CPU gets).
#
# Measured the same way on all sides: prefill = P prompt tokens in one
# batch (llama-bench pp<P>), decode = N tokens one at a time (llama-bench
# tg<N>, which starts from an empty cache; genloop's decode follows its P
# prompt tokens, so it attends over P more positions: a slight handicap).
# Prints one table row per round, thread count and runtime (ratios:
# genloop's first tune over that row; genloop rows also carry the memory
# bandwidth its bench probed in that run, so a round in a slow phase of the
# machine shows as one), then per thread count and runtime the lowest and
# the median decode ratio over the rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,30p' "$0"; exit 2; }
PEERS=$1 MODEL=$2
threads=${3:-"1 2"}
rounds=${4:-3}
G=${GENLOOP:-build/genloop}
P=${P:-128} N=${N:-64}
[ -f "$MODEL" ] || { echo "vs_peer.sh: no such model $MODEL" >&2; exit 2; }
[ -x "$G" ] || { echo "vs_peer.sh: $G is not an executable (build first)" >&2; exit 2; }

IFS=',' read -r -a peer_specs <<< "$PEERS"
peer_bin=() peer_args=() peer_name=()
for spec in "${peer_specs[@]}"; do
  spec=$(echo "$spec" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
  bin=${spec%% *}
  args=""
  [ "$bin" != "$spec" ] && args=${spec#* }
  [ -x "$bin" ] || { echo "vs_peer.sh: $bin is not an executable" >&2; exit 2; }
  name=$(basename "$bin")
  case "$bin" in */build/bin/*) name=$(basename "$(dirname "$(dirname "$(dirname "$bin")")")") ;; esac
  peer_bin+=("$bin") peer_args+=("$args") peer_name+=("$name")
done
tunes=${TUNES:-$("$G" info | sed -n 's/^tune: \([^ ]*\).*/\1/p')}

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "model $(basename "$MODEL"), cpu: ${cpu:-unknown} ($("$G" info | sed -n 's/^cpu: //p')), $(nproc) CPUs, P=$P N=$N"
echo "genloop $("$G" info | sed -n 's/^backend: //p') backend, tunes: $tunes; peers: ${peer_name[*]}"
echo
echo "| round | threads | runtime | pp$P tok/s | tg$N tok/s | genloop/this pp | genloop/this tg | probe GB/s |"
echo "|---|---|---|---|---|---|---|---|"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    first=1 gp=0 gd=0
    for tune in $tunes; do
      j=$(GENLOOP_TUNE=$tune "$G" bench -m "$MODEL" -p "$P" -n "$N" -r 1 -t "$t" \
            ${BACKEND:+--backend "$BACKEND"} --json 2>/dev/null)
      p=$(echo "$j" | field prefill_tok_s) d=$(echo "$j" | field decode_tok_s)
      bw=$(echo "$j" | field bandwidth_gbs)
      [ "$first" = 1 ] && gp=$p gd=$d first=0
      echo "$r $t genloop:$tune $p $d $gp $gd ${bw:-nan}" >> "$log"
    done
    for i in "${!peer_bin[@]}"; do
      # llama-bench JSON (its CSV quotes fields holding commas): one object
      # per test; pick the pp (n_gen 0) and tg (n_prompt 0) rows' avg_ts
      # shellcheck disable=SC2086
      js=$("${peer_bin[$i]}" -m "$MODEL" -p "$P" -n "$N" -t "$t" -r 1 -o json \
             ${peer_args[$i]} ${PEER_ARGS:-} 2>/dev/null || true)
      read -r pp tg < <(echo "$js" | tr '\n' ' ' | sed 's/}/}\n/g' |
        sed -n 's/.*"n_prompt": *\([0-9]*\).*"n_gen": *\([0-9]*\).*"avg_ts": *\([0-9.e+-]*\).*/\1 \2 \3/p' |
        awk -v P="$P" -v N="$N" '$1 == P && $2 == 0 { pp = $3 } $1 == 0 && $2 == N { tg = $3 }
          END { print (pp == "" ? "nan" : pp), (tg == "" ? "nan" : tg) }')
      echo "$r $t ${peer_name[$i]} $pp $tg $gp $gd -" >> "$log"
    done
    awk -v r="$r" -v t="$t" 'function ok(v) { return v ~ /^[0-9.]+$/ && v > 0 }
      $1 == r && $2 == t {
      printf "| %d | %d | %s | %s | %s | %s | %s | %s |\n", r, t, $3,
             (ok($4) ? sprintf("%.1f", $4) : "failed"), (ok($5) ? sprintf("%.2f", $5) : "failed"),
             (ok($4) ? sprintf("%.2fx", $6 / $4) : "-"), (ok($5) ? sprintf("%.2fx", $7 / $5) : "-"),
             (ok($8) ? sprintf("%.1f", $8) : "") }' "$log"
  done
done
echo
echo "| threads | runtime | tg$N tok/s (min-max) | genloop/this tg: lowest | median |"
echo "|---|---|---|---|---|"
for t in $threads; do
  for name in $(for tune in $tunes; do echo "genloop:$tune"; done) "${peer_name[@]}"; do
    awk -v t="$t" -v n="$name" '$2 == t && $3 == n && $5 ~ /^[0-9.]+$/ && $5 > 0 { print $5, $7 / $5 }' "$log" |
      sort -k2 -g | awk -v t="$t" -v n="$name" '
        { tg[NR] = $1; q[NR] = $2; lo = (NR == 1 || $1 < lo) ? $1 : lo; hi = (NR == 1 || $1 > hi) ? $1 : hi }
        END { if (NR) printf "| %d | %s | %.2f-%.2f | %.2fx | %.2fx |\n", t, n, lo, hi, q[1],
                              (NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2) }'
  done
done
