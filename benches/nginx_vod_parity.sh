#!/usr/bin/env bash
# nginx_vod_parity.sh -- do vodpack and nginx-vod-module (the peer) cut the same files into
# the same segments, so that segment N names the same media on both?
#
# For every MP4 in MEDIA_DIR (and one folder down) with a video track, it asks both for
# the single-track HLS media playlist `index-v1.m3u8` under their /hls/ locations (the
# segment count), then for segments `seg-N-v1.m4s` with their init segment, and reads the
# first presentation time of each with ffprobe (the segment's start; a segment of no
# frame, a window without a key frame, must be one on both). The peer's EXTINFs
# cannot be used for this: with vod_manifest_segment_durations_mode estimate (its default)
# they say 6.000 whatever the key frames. Starts are compared from each side's first
# segment start, so vodpack's title shift S does not count. Files with more than 30
# segments are sampled (the first 10, 10 spread over the middle, the last 5).
#
# Both must use the same segment duration: the peer's config says vod_segment_duration
# 6000 and vod_align_segments_to_key_frames on; vodpack is started with
# --nginx-vod-segment-duration-ms 6000 (the locations' own duration; 10 s by default, the
# module's default).
#
# usage: benches/nginx_vod_parity.sh [MEDIA_DIR=fixtures] [PEER=http://127.0.0.1:8281] [VODPACK_URL]
#   Without VODPACK_URL it starts target/release/vodpack (else the debug build) on
#   127.0.0.1:18299 over MEDIA_DIR with --nginx-vod-locations hls=/hls/, and stops it by
#   its PID at the end. The peer (../shared/peer/README.md) must serve MEDIA_DIR.
#   TOLERANCE_MS (default 1) is the largest start difference called the same.
# Exit status: 0 when every file agrees, 1 when one differs; 0 with a notice when the
# peer is not running (there is nothing to compare against).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
MEDIA=$(cd "${1:-$here/fixtures}" && pwd)
PEER=${2:-http://127.0.0.1:8281}
OURS=${3:-}

if ! curl -sf -o /dev/null --max-time 3 "$PEER/nginx_status"; then
  echo "peer not answering at $PEER: nothing to compare (start it: ../shared/peer/start.sh)"
  exit 0
fi
pid=
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
if [ -z "$OURS" ]; then
  bin="$here/target/release/vodpack"
  [ -x "$bin" ] || bin="${CARGO_TARGET_DIR:-$here/target}/debug/vodpack"
  "$bin" serve --root "$MEDIA" --listen 127.0.0.1:18299 --nginx-vod-segment-duration-ms 6000 \
    --nginx-vod-locations hls=/hls/ >/dev/null 2>&1 &
  pid=$!
  OURS=http://127.0.0.1:18299
  for _ in $(seq 50); do curl -sf -o /dev/null "$OURS/healthz" && break; sleep 0.1; done
fi

python3 - "$MEDIA" "$PEER" "$OURS" "${TOLERANCE_MS:-1}" <<'PY'
import os, subprocess, sys, tempfile, urllib.request

media, peer, ours, tolerance_ms = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])

def get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.read()
    except Exception:
        return None

def segment_count(base, f):
    text = get(f"{base}/hls/{f}/index-v1.m3u8")
    return None if text is None else text.decode().count("#EXTINF:")

EMPTY = "empty"  # a segment of no frame: a window without a key frame

def start(base, f, n, init):
    body = get(f"{base}/hls/{f}/seg-{n}-v1.m4s")
    if body is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".mp4") as tmp:
        tmp.write(init + body)
        tmp.flush()
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0",
                              "-show_entries", "packet=pts_time", "-of", "csv=p=0", tmp.name],
                             capture_output=True, text=True).stdout
    times = [float(t) for t in out.split() if t.strip() not in ("", "N/A")]
    return min(times) if times else EMPTY

files = []
for root, dirs, names in os.walk(media):
    if root.count(os.sep) - media.count(os.sep) > 1:
        continue
    for name in names:
        if name.lower().endswith((".mp4", ".m4v", ".mov")):
            files.append(os.path.relpath(os.path.join(root, name), media))
status = 0
print(f"{'file':44} {'peer':>5} {'ours':>5} {'checked':>7} {'max_ms':>8}  verdict")
for f in sorted(files):
    counts = segment_count(peer, f), segment_count(ours, f)
    if None in counts:
        continue  # no video track (or a file one of them cannot serve)
    pi, oi = get(f"{peer}/hls/{f}/init-v1.mp4"), get(f"{ours}/hls/{f}/init-v1.mp4")
    n = min(counts)
    numbers = list(range(1, n + 1))
    if n > 30:
        numbers = sorted(set(numbers[:10] + numbers[10:-5:max(1, (n - 15) // 10)][:10] + numbers[-5:]))
    worst, first = 0.0, None
    for k in numbers:
        a, b = start(peer, f, k, pi), start(ours, f, k, oi)
        if a is EMPTY and b is EMPTY:
            continue
        if a in (None, EMPTY) or b in (None, EMPTY):
            worst = float("inf")
            break
        if first is None:
            first = (a, b)
        worst = max(worst, abs((a - first[0]) - (b - first[1])) * 1000)
    same = counts[0] == counts[1] and worst <= tolerance_ms
    status |= 0 if same else 1
    print(f"{f:44} {counts[0]:5d} {counts[1]:5d} {len(numbers):7d} {worst:8.3f}  {'same' if same else 'DIFFERENT'}")
sys.exit(status)
PY
