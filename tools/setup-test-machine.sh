#!/usr/bin/env bash
# Set up this machine for the whole test suite (Debian 12 or later, with Rust installed),
# the one list of what the tests need: a C toolchain and make, FFmpeg and its libraries, libclang (the `libavcodec` feature), the
# OTLP/gRPC receiver's Python packages, Debian's chromium, GStreamer, nginx, node and the
# web players pinned in tests/players/package-lock.json. Each step runs only when what it
# installs is missing, so a second run changes nothing. Used by `make test` (the README's
# test command) and by .ci/run. Uses sudo when not run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup-test-machine.sh: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# sudo keeps DEBIAN_FRONTEND only when told to.
if [ -n "$SUDO" ]; then SUDO="sudo DEBIAN_FRONTEND=noninteractive"; fi

# A C toolchain and make (OpenH264 and other dependencies build C code; `make test`).
if ! command -v cc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq build-essential >/dev/null
fi
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq ffmpeg >/dev/null
fi
# The `libavcodec` cargo feature (HEVC, AV1 and VP9 thumbnails): FFmpeg's headers and
# pkg-config files, and libclang for the bindings ffmpeg-sys-next makes with bindgen.
if ! pkg-config --exists libavcodec libswscale 2>/dev/null \
  || ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq libavcodec-dev libavutil-dev libswscale-dev libclang-dev pkg-config >/dev/null
fi
# The OTLP/gRPC receiver of tests/otlp_grpc.rs (grpcio and the OpenTelemetry protobufs).
if ! python3 -c "import grpc, opentelemetry.proto.collector.trace.v1" 2>/dev/null; then
  $SUDO python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    grpcio opentelemetry-proto
fi

# The players of tests/players/: Debian's chromium (driven by the pinned playwright-core,
# which downloads no browser) and GStreamer with the HLS/DASH demuxers and decoders.
if ! command -v chromium >/dev/null 2>&1 || ! command -v gst-launch-1.0 >/dev/null 2>&1 \
  || ! gst-inspect-1.0 hlsdemux2 >/dev/null 2>&1 || ! gst-inspect-1.0 avdec_h265 >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium gstreamer1.0-tools gstreamer1.0-plugins-good \
    gstreamer1.0-plugins-bad gstreamer1.0-libav >/dev/null
fi
# The front tier of tests/fleet.rs and the stand-in CDN of tests/cdn_nginx.rs: Debian's
# nginx. policy-rc.d keeps the package from starting its own nginx on port 80; the tests
# start and stop the ones they use.
if ! command -v nginx >/dev/null 2>&1; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq nginx-light >/dev/null
  $SUDO rm -f /usr/sbin/policy-rc.d
fi
if ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
# playwright-core and dash.js need node 20 or later (Debian 12's own nodejs is 18).
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "node $(node --version) is too old for tests/players (20 or later)" >&2
  exit 1
fi
# hls.js, dash.js, Shaka Player, playwright-core and mp4box.js (the ISO BMFF reader of
# tests/dash_conformance), exactly as package-lock.json pins them; reinstalled only when
# the lock changed since the last install.
if ! cmp -s tests/players/package-lock.json tests/players/node_modules/.package-lock.json.installed; then
  (cd tests/players && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error \
    && cp package-lock.json node_modules/.package-lock.json.installed)
fi

