#!/usr/bin/env bash
# view_cost.sh -- what a clip or track selection (a view) costs on its first and
# next requests, from outside the process, next to the whole title's cold and cached master.
#
# usage: benches/view_cost.sh MEDIA_DIR FILE [PORT=18284]
#   starts target/release/vodpack over MEDIA_DIR (6 s segments, nginx-vod locations /hls/
#   and /dash/), times each request with curl, and stops the server by its PID. Clips are
#   picked for a 60-minute FILE (the budget harness's long-60min.mp4).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
media=${1:?usage: view_cost.sh MEDIA_DIR FILE [PORT]} file=${2:?FILE} port=${3:-18284}
bin="${CARGO_TARGET_DIR:-$here/target}/release/vodpack"
B=http://127.0.0.1:$port
"$bin" serve --root "$media" --listen "127.0.0.1:$port" --segment-duration-ms 6000 \
  --nginx-vod-locations hls=/hls/,dash=/dash/ >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "$B/healthz" && break; sleep 0.1; done
t() { curl -s -o /dev/null -w '%{http_code} %{time_total}s' "$B$1"; }
echo "whole master, cold load: $(t "/vod/$file/master.m3u8")"
echo "whole master, cached:    $(t "/vod/$file/master.m3u8")"
for c in 600000-1200000 1234567-2345678 0-3600000 3000000-; do
  echo "clip $c: first (view made) $(t "/vod/$file/clip/$c/master.m3u8"), again $(t "/vod/$file/clip/$c/master.m3u8")"
done
echo "tracks/a1: first $(t "/vod/$file/tracks/a1/master.m3u8"), again $(t "/vod/$file/tracks/a1/master.m3u8")"
V=$(curl -s "$B/vod/$file/master.m3u8" | grep -o 'v[0-9a-f]\{16\}' | head -1)
echo "native seg-t1-300.m4s: $(t "/vod/$file/$V/seg-t1-300.m4s"), again $(t "/vod/$file/$V/seg-t1-300.m4s")"
echo "nginx-vod seg-300-v1.m4s: $(t "/hls/$file/seg-300-v1.m4s"), again $(t "/hls/$file/seg-300-v1.m4s")"
