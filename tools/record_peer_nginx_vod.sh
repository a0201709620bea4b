#!/usr/bin/env bash
# record_peer_nginx_vod.sh PEER_URL [OUT_DIR] -- record a RUNNING nginx-vod-module's answers
# for the fixtures into golden files (default fixtures/peer-nginx-vod), for
# tests/conformance/nginx_peer_goldens.rs. It builds and starts nothing: run the peer first
# (its build and start scripts live outside this repository), serving this repository's
# fixtures/ and fixtures/nginx-vod/ files flat in one folder, with nginx-vod-module's defaults,
# that is, with NO vod_segment_duration, vod_align_segments_to_key_frames,
# vod_segment_count_policy, vod_manifest_segment_durations_mode or vod_dash_manifest_format
# line, and these locations (MEDIA is that folder):
#
#     vod_mode local;
#     location /hls/   { alias MEDIA/; vod hls; vod_hls_container_format fmp4; }
#     location /hlsts/ { alias MEDIA/; vod hls; vod_hls_container_format mpegts; }
#     location /dash/  { alias MEDIA/; vod dash; }
#     location /hlsenc/ {
#         alias MEDIA/; vod hls; vod_hls_container_format mpegts;
#         vod_secret_key "secret-$vod_filepath"; vod_hls_encryption_method aes-128;
#     }
#
# What is recorded, per file, under OUT_DIR/FILE/LOCATION/NAME: the media playlists the
# module's master playlists name and their single-track siblings, the MPD, and under
# /hlsenc/ the AES-128 playlist and encryption.key; for the tiny file also its one
# encrypted segment (9 KB), so a test can decrypt the module's own output. Playlists and
# MPDs are stored with the peer's scheme and authority removed (absolute URLs become
# paths), so the goldens do not depend on the port. Also writes OUT_DIR/PEER: the peer's
# Server header and the date.
set -euo pipefail
peer=${1:?usage: record_peer_nginx_vod.sh PEER_URL [OUT_DIR]}
peer=${peer%/}
out=${2:-fixtures/peer-nginx-vod}
mkdir -p "$out"

# FILE and the names recorded for it: hls, hlsts and dash sets (a: audio and video,
# v: video only), then whether /hlsenc/ is recorded (enc), and its segment (seg).
files=(
  "h264-aac-3s.mp4 a enc"
  "h264-3s-video-only.mp4 v -"
  "h264-bframes-editlist-aac.mp4 a -"
  "nv-gop3s-23s.mp4 a enc"
  "nv-sparse-keys-32s.mp4 a -"
  "nv-tiny-2s.mp4 a seg"
)

# fetch URL_PATH DEST: the body of a 200, host stripped from text answers.
fetch() {
  local path=$1 dest=$2
  mkdir -p "$(dirname "$dest")"
  local code
  code=$(curl -sS -o "$dest.tmp" -w '%{http_code}' "$peer$path")
  if [ "$code" != 200 ]; then
    echo "$path: HTTP $code" >&2
    rm -f "$dest.tmp"
    exit 1
  fi
  case $dest in
    *.m3u8 | *.mpd) sed -e "s|$peer||g" "$dest.tmp" > "$dest" && rm "$dest.tmp" ;;
    *) mv "$dest.tmp" "$dest" ;;
  esac
}

for entry in "${files[@]}"; do
  read -r file kind enc <<< "$entry"
  case $kind in
    a) hls=(index-v1-a1.m3u8 index-v1.m3u8 index-a1.m3u8) ts=(index-v1-a1.m3u8 index-v1.m3u8) ;;
    v) hls=(index-v1.m3u8) ts=(index-v1.m3u8) ;;
  esac
  for name in "${hls[@]}"; do fetch "/hls/$file/$name" "$out/$file/hls/$name"; done
  for name in "${ts[@]}"; do fetch "/hlsts/$file/$name" "$out/$file/hlsts/$name"; done
  fetch "/dash/$file/manifest.mpd" "$out/$file/dash/manifest.mpd"
  if [ "$enc" != - ]; then
    fetch "/hlsenc/$file/index-v1-a1.m3u8" "$out/$file/hlsenc/index-v1-a1.m3u8"
    fetch "/hlsenc/$file/encryption.key" "$out/$file/hlsenc/encryption.key"
  fi
  if [ "$enc" = seg ]; then
    fetch "/hlsenc/$file/index-v1-a1.m3u8" "$out/$file/hlsenc/index-v1-a1.m3u8"
    fetch "/hlsenc/$file/encryption.key" "$out/$file/hlsenc/encryption.key"
    fetch "/hlsenc/$file/seg-1-v1-a1.ts" "$out/$file/hlsenc/seg-1-v1-a1.ts"
  fi
done

server=$(curl -sS -o /dev/null -D - "$peer/hls/h264-aac-3s.mp4/index-v1.m3u8" \
  | tr -d '\r' | sed -n 's/^[Ss]erver: //p')
# The module's version is not in its answers: give it as PEER_MODULE (e.g. its commit).
printf 'server: %s\nmodule: %s\nrecorded: %s\n' "${server:-unknown}" "${PEER_MODULE:-unknown}" \
  "$(date -u +%Y-%m-%d)" > "$out/PEER"
echo "recorded $(find "$out" -type f | wc -l) files under $out"
