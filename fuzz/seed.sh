#!/bin/sh
# Seed both fuzz corpora from the committed fixtures (run from anywhere). build_segments
# takes one leading byte (the segment duration pick) before the file.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../fixtures"
mkdir -p "$here/corpus/parse_metadata" "$here/corpus/build_segments"
for f in "$fixtures"/*.mp4 "$fixtures"/*.m4a; do
    name=$(basename "$f")
    cp "$f" "$here/corpus/parse_metadata/$name"
    for pick in 2 4; do
        { printf "\\$(printf '%03o' "$pick")"; cat "$f"; } > "$here/corpus/build_segments/$pick-$name"
    done
done
