#!/usr/bin/env bash
# runtime_root_check.sh [ROOT=/tmp/vodpack-runtime-root] [PORT=18479]
#
# Checks the container image's runtime stage without Docker: a Debian root made by
# debootstrap (minbase, the release the Dockerfile names) with exactly the packages the
# Dockerfile's last stage installs, the release binary built with `--features libavcodec`
# copied in, `vodpack serve` run in it by chroot over the HEVC and AV1 fixtures, and a
# thumbnail of each asked for: the binary finds every library it links there, and libavcodec
# (with dav1d for AV1) decodes. For machines without a Docker daemon or a registry; where
# `docker build` works, build the image instead.
#
# Needs root, debootstrap and a Debian mirror; run from the repository root. The root is kept
# for the next run (delete it to start over). The server is stopped by its own PID.
set -euo pipefail
ROOT=${1:-/tmp/vodpack-runtime-root}
PORT=${2:-18479}
release=$(sed -n 's/^ARG DEBIAN_RELEASE=//p' Dockerfile)
# The runtime stage's packages, as the Dockerfile's last `apt-get install` names them.
packages=$(awk '/^FROM debian/ {run=1} run && /apt-get install/ {sub(/.*--no-install-recommends/, ""); sub(/[ \\]*$/, ""); print; exit}' Dockerfile)
if [ -z "$release" ] || [ -z "$packages" ]; then
  echo "cannot read the Dockerfile's runtime stage" >&2
  exit 1
fi
echo "runtime stage: debian $release + $packages"

if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase "$release" "$ROOT" http://deb.debian.org/debian
fi
# shellcheck disable=SC2086
chroot "$ROOT" /bin/sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages >/dev/null"

cargo build --release --locked --features libavcodec --bin vodpack
install -D -m 0755 target/release/vodpack "$ROOT/usr/local/bin/vodpack"
mkdir -p "$ROOT/media"
cp fixtures/hevc-aac-3s.mp4 fixtures/av1-10bit-pq-aac-3s.mp4 fixtures/h264-aac-3s.mp4 "$ROOT/media/"

missing=$(chroot "$ROOT" /usr/bin/ldd /usr/local/bin/vodpack | grep 'not found' || true)
if [ -n "$missing" ]; then
  printf 'libraries missing in the runtime root:\n%s\n' "$missing" >&2
  exit 1
fi

chroot "$ROOT" /usr/local/bin/vodpack serve --root /media --listen "127.0.0.1:$PORT" >/tmp/runtime-root-serve.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
failed=0
for name in hevc-aac-3s.mp4 av1-10bit-pq-aac-3s.mp4 h264-aac-3s.mp4; do
  out=/tmp/runtime-root-$name.jpg
  code=$(curl -sS -o "$out" -w '%{http_code}' "http://127.0.0.1:$PORT/vod/$name/thumb-1000-w160.jpg")
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 "$out" 2>/dev/null || true)
  echo "$name: HTTP $code, $size"
  if [ "$code" != 200 ] || [[ "$size" != mjpeg,160,* ]]; then failed=1; fi
done
exit "$failed"
