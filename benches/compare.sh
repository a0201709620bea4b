#!/usr/bin/env bash
# benches/compare.sh -- vodpack side by side with another origin (the peer, nginx-vod-module),
# measured from outside both processes, as a CDN sees them.
#
#   make compare                                  # vodpack alone
#   PEER_URL=http://127.0.0.1:8081 PEER_PIDS=123,124 make compare
#
# For each origin it runs wrk (20 connections, SECS seconds) on the cached HLS multivariant
# playlist, a media playlist, the DASH MPD and a middle segment, and reads the server's CPU
# time from /proc before and after: CPU ms per request is what a request costs the origin,
# whatever the client costs. Then it restarts vodpack RESTARTS times and times its first
# multivariant playlist (wall, median); when PEER_RESTART is a command that restarts the
# peer and prints nothing, the peer's restarts alternate with vodpack's. It ends with the
# ratios vodpack / peer.
#
# The asset is the budget harness's 60-minute file (target/bench/long-60min.mp4, made here
# with ffmpeg from the 3 s fixture when missing). The peer must serve the same file from a
# folder as /hls/long-60min.mp4/master.m3u8, /dash/long-60min.mp4/manifest.mpd (nginx-vod
# defaults: 6 s segments aligned to key frames). Needs: wrk, curl, ffmpeg (once).
#
# With PEER_STATIC_DIR and PEER_STATIC_URL (a folder the peer serves as plain files, with
# sendfile, and its URL prefix), vodpack's middle segment is copied there and the peer's
# static answer of the same bytes is measured too: the physical limit a segment is held to
# (within 2.5x of it).
#
# With PIN=1 (for VODPACK_WORKER_THREADS=1), wrk runs on the first core and both origins
# on the last: each origin has a core of its own instead of sharing two with wrk and the
# scheduler's moves, which is what one worker's bar compares (docs/performance.md, item 9).
# The peer's processes are pinned for the run and given every core back at the end.
#
# Variables: SECS (5), CONNS (20), ROUNDS (3: runs of each request, vodpack's and the
# peer's alternating, medians compared), RESTARTS (5), PORT (18390), ASSET (long-60min.mp4),
# PEER_URL, PEER_PIDS (comma-separated: master and workers), PEER_RESTART, PEER_STATIC_DIR,
# PEER_STATIC_URL, PIN.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECS:-5}
CONNS=${CONNS:-20}
RESTARTS=${RESTARTS:-5}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18390}
ASSET=${ASSET:-long-60min.mp4}
DIR=target/bench
BASE="http://127.0.0.1:$PORT"
CLK_TCK=$(getconf CLK_TCK)

for tool in wrk curl; do
  command -v "$tool" >/dev/null || { echo "compare.sh: needs $tool (apt-get install $tool)" >&2; exit 2; }
done

# PIN=1: the load generator on the first core, the origins on the last.
WRK=(wrk)
SERVER_CORE=
if [ "${PIN:-}" = 1 ]; then
  command -v taskset >/dev/null || { echo "compare.sh: PIN=1 needs taskset (util-linux)" >&2; exit 2; }
  SERVER_CORE=$(($(nproc) - 1))
  WRK=(taskset -c 0 wrk)
fi
# unpin_peer: every core back to the peer's processes.
unpin_peer() {
  local pid
  for pid in ${PEER_PIDS//,/ }; do taskset -a -pc "0-$SERVER_CORE" "$pid" >/dev/null 2>&1 || true; done
}
# pin PIDS: every thread of each process in PIDS (comma-separated) onto the server core.
pin() {
  local pid
  [ -n "$SERVER_CORE" ] || return 0
  for pid in ${1//,/ }; do taskset -a -pc "$SERVER_CORE" "$pid" >/dev/null; done
}

cargo build --release --quiet
if [ ! -f "$DIR/$ASSET" ]; then
  mkdir -p "$DIR"
  fixture="$PWD/fixtures/h264-aac-3s.mp4"
  for _ in $(seq 1200); do echo "file '$fixture'"; done > "$DIR/concat-list.txt"
  echo "synthesizing $DIR/$ASSET (stream copy, about a minute)..." >&2
  ffmpeg -v error -y -f concat -safe 0 -i "$DIR/concat-list.txt" -c copy -use_editlist 0 \
    -movflags +faststart -f mp4 "$DIR/$ASSET.partial.mp4"
  mv "$DIR/$ASSET.partial.mp4" "$DIR/$ASSET"
fi

VODPACK_PID=
stop_vodpack() {
  if [ -n "$VODPACK_PID" ]; then
    kill "$VODPACK_PID" 2>/dev/null || true
    wait "$VODPACK_PID" 2>/dev/null || true
    VODPACK_PID=
  fi
}
trap stop_vodpack EXIT

# Start vodpack on the bench folder and wait (bounded) until it answers.
start_vodpack() {
  ./target/release/vodpack serve --root "$DIR" --listen "127.0.0.1:$PORT" >/dev/null 2>&1 &
  VODPACK_PID=$!
  pin "$VODPACK_PID"
  for _ in $(seq 200); do
    curl -sf -o /dev/null "$BASE/healthz" && return 0
    sleep 0.05
  done
  echo "compare.sh: vodpack did not start" >&2
  exit 1
}

# CPU ticks (user + system) of a comma-separated list of pids, children that were reaped
# included.
cpu_ticks() {
  local total=0 pid
  for pid in ${1//,/ }; do
    read -r -a f < "/proc/$pid/stat"
    # Fields 14-17 (1-based): utime, stime, cutime, cstime. The name (field 2) has no
    # spaces for these servers.
    total=$((total + f[13] + f[14] + f[15] + f[16]))
  done
  echo "$total"
}

# measure NAME PIDS URL: prints "NAME req/s CPU-ms-per-request [errors]" and sets RESULT
# to the CPU milliseconds per request.
measure() {
  local name=$1 pids=$2 url=$3 before after out requests errors
  if [ "$url" = - ]; then
    RESULT=
    return 0
  fi
  curl -sf -o /dev/null "$url" || { echo "compare.sh: $url does not answer" >&2; exit 1; }
  before=$(cpu_ticks "$pids")
  out=$("${WRK[@]}" -t1 -c"$CONNS" -d"${SECS}s" "$url")
  after=$(cpu_ticks "$pids")
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  errors=$(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr '\n' ' ' || true)
  RESULT=$(awk -v r="$requests" -v t="$((after - before))" -v hz="$CLK_TCK" \
    'BEGIN { printf "%.4f", (t / hz * 1000) / r }')
  awk -v n="$name" -v r="$requests" -v s="$SECS" -v c="$RESULT" -v e="$errors" \
    'BEGIN { printf "%-28s %9.0f req/s  %8s ms CPU/req  %s\n", n, r / s, c, e }'
}

# resolve BASE_URL REFERENCE: REFERENCE as a URL, relative to BASE_URL's folder unless it is
# absolute already (nginx-vod writes absolute URLs).
resolve() {
  case $2 in
    http://* | https://*) echo "$2" ;;
    *) echo "${1%/*}/$2" ;;
  esac
}

# The URLs of one origin: master, the first media playlist it names, the MPD, and the
# segment in the middle of that playlist.
urls_of() {
  local master=$1 mpd=$2 playlist media segments middle
  playlist=$(curl -sf "$master" | grep -v '^#' | grep -m1 'm3u8' || true)
  [ -n "$playlist" ] || playlist=$(curl -sf "$master" | grep -o 'URI="[^"]*m3u8"' | head -n1 | cut -d'"' -f2)
  media=$(resolve "$master" "$playlist")
  segments=$(curl -sf "$media" | grep -v '^#' | grep -c . || true)
  middle=$(curl -sf "$media" | grep -v '^#' | grep . | sed -n "$((segments / 2 + 1))p")
  echo "$master $media $mpd $(resolve "$media" "$middle")"
}

# first_answer RESTART_COMMAND URL: restarts an origin and sets COLD_MS to the wall time
# of its first answer for URL, in ms. Runs in this shell (not a subshell), so the
# processes it starts stay ours to stop.
first_answer() {
  eval "$1"
  COLD_MS=$(curl -s -o /dev/null -w '%{time_total}' "$2" | awk '{printf "%.2f", $1 * 1000}')
}

# median VALUES...: the middle value (the lower middle of an even count).
median() {
  printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'
}

# median4 VALUES...: the same, to four decimals (CPU ms per request).
median4() {
  [ $# -gt 0 ] || return 0
  printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.4f", a[int((NR+1)/2)]}'
}

printf '\nvodpack %s, %s, %s cores, %s, wrk -c%s -d%ss%s\n' "$(git rev-parse --short HEAD)" \
  "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" "$ASSET" "$CONNS" "$SECS" \
  "${SERVER_CORE:+, wrk on core 0 and the origins on core $SERVER_CORE}"

start_vodpack
read -r V_MASTER V_MEDIA V_MPD V_SEGMENT <<<"$(urls_of "$BASE/vod/$ASSET/master.m3u8" "$BASE/vod/$ASSET/manifest.mpd")"
declare -A VODPACK PEER
PEERED=
if [ -n "${PEER_URL:-}" ] && [ -n "${PEER_PIDS:-}" ]; then
  PEERED=1
  if [ -n "$SERVER_CORE" ]; then
    pin "$PEER_PIDS"
    trap 'stop_vodpack; unpin_peer' EXIT
  fi
  read -r P_MASTER P_MEDIA P_MPD P_SEGMENT <<<"$(urls_of "$PEER_URL/hls/$ASSET/master.m3u8" "$PEER_URL/dash/$ASSET/manifest.mpd")"
fi
STATIC_COPY=
if [ -n "$PEERED" ] && [ -n "${PEER_STATIC_DIR:-}" ] && [ -n "${PEER_STATIC_URL:-}" ]; then
  STATIC_COPY="$PEER_STATIC_DIR/vodpack-compare-segment.bin"
  curl -sf -o "$STATIC_COPY" "$V_SEGMENT"
fi

# Each request is measured ROUNDS times, vodpack's and the peer's runs alternating, and
# the medians compared: one run of either moves by 10-15 % on this machine.
declare -A V_RUNS P_RUNS
for round in $(seq "$ROUNDS"); do
  while read -r label v_url p_url; do
    measure "vodpack $label ($round)" "$VODPACK_PID" "$v_url"
    V_RUNS[$label]+="$RESULT "
    if [ -n "$PEERED" ] && [ -n "$p_url" ] && [ "$p_url" != - ]; then
      measure "peer $label ($round)" "$PEER_PIDS" "$p_url"
      P_RUNS[$label]+="$RESULT "
    fi
  done <<EOF
master $V_MASTER ${P_MASTER:--}
media $V_MEDIA ${P_MEDIA:--}
mpd $V_MPD ${P_MPD:--}
segment $V_SEGMENT ${P_SEGMENT:--}
static - ${STATIC_COPY:+${PEER_STATIC_URL%/}/$(basename "$STATIC_COPY")}
EOF
done
stop_vodpack
[ -z "$STATIC_COPY" ] || rm -f "$STATIC_COPY"
for label in "${!V_RUNS[@]}"; do
  # shellcheck disable=SC2086 # word splitting of the runs is meant
  VODPACK[$label]=$(median4 ${V_RUNS[$label]})
done
for label in "${!P_RUNS[@]}"; do
  # shellcheck disable=SC2086
  PEER[$label]=$(median4 ${P_RUNS[$label]})
done
echo
echo "medians of $ROUNDS runs, CPU ms per request (vodpack / peer)"
for label in master media mpd segment static; do
  [ -n "${VODPACK[$label]:-}${PEER[$label]:-}" ] || continue
  printf '  %-8s %8s / %s\n' "$label" "${VODPACK[$label]:--}" "${PEER[$label]:--}"
done
echo

# Cold first master: restarts alternate between the two origins, so a drift of the machine
# (this one moves by half between sittings) weighs on both alike.
vodpack_times=() peer_times=()
for _ in $(seq "$RESTARTS"); do
  first_answer 'stop_vodpack; start_vodpack' "$BASE/vod/$ASSET/master.m3u8"
  vodpack_times+=("$COLD_MS")
  if [ -n "${PEER_URL:-}" ] && [ -n "${PEER_RESTART:-}" ]; then
    first_answer "$PEER_RESTART" "$PEER_URL/hls/$ASSET/master.m3u8"
    peer_times+=("$COLD_MS")
  fi
done
stop_vodpack
VODPACK[cold]=$(median "${vodpack_times[@]}")
echo "vodpack cold first master      ${VODPACK[cold]} ms wall (median of $RESTARTS restarts: ${vodpack_times[*]})"
if [ ${#peer_times[@]} -gt 0 ]; then
  PEER[cold]=$(median "${peer_times[@]}")
  echo "peer cold first master         ${PEER[cold]} ms wall (median of $RESTARTS restarts: ${peer_times[*]})"
fi

if [ -n "${PEER_URL:-}" ] && [ -n "${PEER_PIDS:-}" ]; then
  echo
  echo "ratio vodpack / peer (below 1: vodpack is cheaper)"
  for label in master media mpd segment cold; do
    [ -n "${PEER[$label]:-}" ] || continue
    awk -v l="$label" -v v="${VODPACK[$label]}" -v p="${PEER[$label]}" \
      'BEGIN { printf "  %-8s %6.2f\n", l, (p > 0 ? v / p : 0) }'
  done
  if [ -n "${PEER[static]:-}" ]; then
    awk -v v="${VODPACK[segment]}" -v p="${PEER[static]}" \
      'BEGIN { printf "  segment against the peer sending the same bytes as a static file %6.2f\n", (p > 0 ? v / p : 0) }'
  fi
fi
