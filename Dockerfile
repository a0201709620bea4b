# syntax=docker/dockerfile:1
#
# The vodpack container image: `vodpack serve` as a non-root user, with defaults fit for a
# container. Build it from the repository root and run it over a folder or a bucket:
#
#   docker build -t vodpack .
#   docker build --build-arg VODPACK_COMMIT="$(git rev-parse HEAD)" -t vodpack .
#   docker run --rm -p 8080:8080 -v "$PWD/fixtures:/media:ro" vodpack
#   docker run --rm -p 8080:8080 -e VODPACK_SOURCE=s3://my-bucket/videos -e AWS_REGION=eu-west-1 vodpack
#
# Every setting is a VODPACK_* variable (docs/configuration.md); a TOML file can be mounted
# and named by VODPACK_CONFIG. The three defaults below are variables, and variables win
# over the file: set listen, root and log-format with -e, not in the file.
# OpenTelemetry export is off until OTEL_EXPORTER_OTLP_ENDPOINT is set.
# Give the container at least 30 s to stop (docker run --stop-timeout 30, compose
# stop_grace_period): on SIGTERM vodpack drains connections for up to 25 s.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm
# The git commit the image is built from: compiled in (`option_env!`), so /metrics'
# vod_build_info names it, and the image's OCI revision label. `unknown` when not given.
ARG VODPACK_COMMIT=unknown

FROM rust:${RUST_VERSION}-slim-${DEBIAN_RELEASE} AS build
# FFmpeg's headers and libclang: the image is built with the `libavcodec` feature, so
# thumbnails of HEVC, AV1 and VP9 decode through Debian's libavcodec (bindgen reads the
# headers through libclang).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libavcodec-dev libavutil-dev \
       libswscale-dev libclang-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Redeclared to be seen in this stage: RUN sees it as a variable, and rustc reads it.
ARG VODPACK_COMMIT
# .dockerignore keeps this to the manifest, the lock file, src/ and benches/.
COPY . .
# The registry and target folders are build caches; the binary is copied out of them.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    VODPACK_COMMIT="${VODPACK_COMMIT}" \
    cargo build --release --locked --features libavcodec --bin vodpack \
    && install -m 0755 target/release/vodpack /usr/local/bin/vodpack

FROM debian:${DEBIAN_RELEASE}-slim
ARG VODPACK_COMMIT
LABEL org.opencontainers.image.revision="${VODPACK_COMMIT}"
# CA certificates for https object stores and OTLP endpoints, and the libavcodec and
# libswscale the binary links (bookworm's sonames; with their codec libraries: dav1d for
# AV1). Nothing else: the health check below uses bash, which the base image has.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libavcodec59 libswscale6 \
    && rm -rf /var/lib/apt/lists/*
# /var/cache/vodpack belongs to the user, for --index-cache-dir: a volume mounted there
# starts out owned by it (deploy/compose.yaml mounts one per replica).
RUN groupadd --system --gid 10001 vodpack \
    && useradd --system --uid 10001 --gid vodpack --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin vodpack \
    && mkdir -p /media /etc/vodpack /var/cache/vodpack \
    && chown vodpack:vodpack /var/cache/vodpack
COPY --from=build /usr/local/bin/vodpack /usr/local/bin/vodpack

ENV VODPACK_LISTEN=0.0.0.0:8080 \
    VODPACK_LOG_FORMAT=json \
    VODPACK_ROOT=/media

# A numeric user, so Kubernetes' runAsNonRoot can check it.
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
# GET /healthz at 127.0.0.1 on the port of VODPACK_LISTEN (so keep it on 0.0.0.0 or
# 127.0.0.1), through bash's /dev/tcp: no curl in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${VODPACK_LISTEN##*:} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
ENTRYPOINT ["/usr/local/bin/vodpack"]
CMD ["serve"]
