#!/usr/bin/env bash
# crypto_cost.sh: server CPU per video segment, clear against encrypted, side by side.
#
#   tools/crypto_cost.sh BIN DIR FILE [ROUNDS]
#
# Serves DIR with the release binary BIN once per output (clear DASH, DASH cenc, DASH cbcs,
# HLS clear, HLS AES-128), fetches every video segment of FILE ROUNDS times over one
# keep-alive connection (curl, from outside the process), and reads the server's CPU time
# (utime + stime from /proc/PID/stat) before and after. Prints CPU ms per segment and MB/s
# of segment bytes per CPU second. Each server is stopped by its own pid.
set -euo pipefail
BIN=$1 DIR=$2 FILE=$3 ROUNDS=${4:-20}
PORT=18977
SECRET=crypto-cost-measurement-secret-0123
TICK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

measure() { # label policy manifest
  local label=$1 policy=$2 manifest=$3
  VODPACK_KEY_SECRET=$SECRET "$BIN" serve --root "$DIR" --listen 127.0.0.1:$PORT \
    --encryption "$policy" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
  local base="http://127.0.0.1:$PORT/vod/$FILE"
  local urls=()
  if [ "$manifest" = mpd ]; then
    local mpd folder code
    mpd=$(curl -sf "$base/manifest.mpd")
    folder=$(grep -o 'initialization="v[0-9a-f]*' <<<"$mpd" | head -1 | cut -d'"' -f2)
    for n in $(seq 1 1000); do
      code=$(curl -s -o /dev/null -w '%{http_code}' "$base/$folder/seg-t1-$n.m4s")
      [ "$code" = 200 ] || break
      urls+=("$base/$folder/seg-t1-$n.m4s")
    done
  else
    local folder playlist
    folder=$(curl -sf "$base/master.m3u8" | grep -v '^#' | head -1 | cut -d/ -f1)
    playlist=$(curl -sf "$base/$folder/index-t1.m3u8")
    while read -r name; do urls+=("$base/$folder/$name"); done < <(grep '^seg-' <<<"$playlist")
  fi
  # Every URL with its own `-o /dev/null` (curl applies one -o to one URL).
  local args=() list=() bytes
  for u in "${urls[@]}"; do args+=(-o /dev/null "$u"); done
  # Warm: metadata loaded, page cache hot.
  curl -s "${args[@]}"
  for _ in $(seq "$ROUNDS"); do list+=("${args[@]}"); done
  local before after
  before=$(cpu_ticks $pid)
  bytes=$(curl -s -w '%{size_download}\n' "${list[@]}" | awk '{s += $1} END {print s}')
  after=$(cpu_ticks $pid)
  kill $pid; wait $pid 2>/dev/null || true
  local n=$(( ${#list[@]} / 3 ))
  awk -v l="$label" -v t=$((after - before)) -v hz="$TICK" -v n="$n" -v b="$bytes" 'BEGIN {
    cpu = t / hz; printf "%-16s %5d segments %8.1f MB  cpu %6.2f s  %6.2f ms/segment  %7.0f MB/cpu-s\n",
      l, n, b / 1e6, cpu, cpu * 1000 / n, (cpu > 0 ? b / 1e6 / cpu : 0) }'
}

measure "dash clear" none mpd
measure "dash cenc" dash=cenc mpd
measure "dash cbcs" dash=cbcs mpd
measure "hls clear" none m3u8
measure "hls aes-128" hls=aes-128 m3u8
