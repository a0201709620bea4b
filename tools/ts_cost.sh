#!/usr/bin/env bash
# ts_cost.sh: server CPU per MPEG-TS segment, for comparing two builds side by side.
#
#   tools/ts_cost.sh BIN DIR FILE PORT [SEGMENT]
#
# Serves DIR with the release binary BIN on 127.0.0.1:PORT, runs wrk (1 thread, 4
# connections, 8 s) on TS segment SEGMENT (default 10) of FILE's first TS rendition, and
# reads the server's CPU time (utime + stime from /proc/PID/stat) before and after. Prints
# the segment's size, requests per second and CPU ms per request. The server is stopped by
# its own pid. Alternate the builds and repeat: the machines are noisy.
set -euo pipefail
BIN=$1 DIR=$2 FILE=$3 PORT=$4 SEGMENT=${5:-10}
"$BIN" serve --root "$DIR" --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true' EXIT
BASE="http://127.0.0.1:$PORT/vod/$FILE"
for _ in $(seq 1 50); do
  curl -sf "$BASE/master-ts.m3u8" >/dev/null 2>&1 && break
  sleep 0.1
done
PLAYLIST=$(curl -sf "$BASE/master-ts.m3u8" | grep -v '^#' | head -n 1)
URL="$BASE/${PLAYLIST%/*}/seg-ts-${PLAYLIST##*index-ts-}"
URL="${URL%.m3u8}-$SEGMENT.ts"
curl -s -o /dev/null -w "size %{size_download} " "$URL"
for _ in 1 2 3; do curl -s -o /dev/null "$URL"; done
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
before=$(cpu)
out=$(wrk -t1 -c4 -d8s "$URL" 2>&1)
after=$(cpu)
requests=$(echo "$out" | awk '/requests in/ {print $1}')
echo "$out" | awk '/Requests\/sec/ {printf "req/s %s ", $2}'
awk -v a="$before" -v b="$after" -v n="$requests" -v hz="$(getconf CLK_TCK)" \
  'BEGIN {printf "cpu ms/req %.3f\n", (b - a) * 1000 / hz / n}'
