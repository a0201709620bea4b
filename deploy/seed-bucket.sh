#!/bin/sh
# Create the demo bucket and copy the committed fixtures into it. Run by the minio-seed
# service of deploy/compose.yaml, in the MinIO client image (`mc`), with the fixtures
# mounted at /fixtures. Safe to run on every `docker compose up`: the bucket is created
# only if missing and the same files are copied again.
set -eu

: "${S3_ENDPOINT:?}" "${S3_ACCESS_KEY:?}" "${S3_SECRET_KEY:?}"
: "${S3_BUCKET:=media}" "${S3_PREFIX:=videos}"
FIXTURES=${FIXTURES:-/fixtures}

mc alias set seed "$S3_ENDPOINT" "$S3_ACCESS_KEY" "$S3_SECRET_KEY"
mc mb --ignore-existing "seed/$S3_BUCKET"
for file in "$FIXTURES"/*.mp4 "$FIXTURES"/*.m4a; do
  [ -f "$file" ] || continue
  mc cp --quiet "$file" "seed/$S3_BUCKET/$S3_PREFIX/"
done
mc ls --recursive "seed/$S3_BUCKET"
