#!/usr/bin/env bash
# A test (meson: serve_load) that the load generator and the server agree:
# genloop serve on the shipped model, 8 streaming clients, 24 requests of
# mixed lengths arriving as a Poisson process; every request must complete.
#   bench/serve_load_check.sh GENLOOP SERVE_LOAD
set -euo pipefail
G=$1 SL=$2
log=$(mktemp)
"$G" serve -m models/stories260K.gguf --port 0 -t 1 --max-batch 4 2>"$log" &
srv=$!
trap 'kill "$srv" 2>/dev/null || true; rm -f "$log"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "serve_load_check: the server did not start:"; cat "$log"; exit 1; }
out=$("$SL" --port "$port" --wait-ready 30 --clients 8 --requests 24 --rate 40 --seed 7 \
          --prompt-words 1:40 --max-tokens 4:48 --temp 0.8 --timeout 60 --deadline 120)
echo "$out"
echo "$out" | grep -q '"failed": 0,' || { echo "serve_load_check: requests failed"; exit 1; }
kill -TERM "$srv"
wait "$srv"
