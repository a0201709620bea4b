#!/bin/sh
# Seed both fuzz corpora from the committed fixtures (run from anywhere). build_segments
# takes one leading byte (the segment duration pick) before the file. The glob takes the
# fragmented fixtures too (h264-aac-3s-frag-*.mp4: moof found by walk, sidx and mfra, and
# a moov holding samples before its fragments), so both targets start from moof, traf,
# tfhd, tfdt, trun, sidx and mfra boxes as well as moov. Broken fragments (trun data past
# the file, absurd trun counts, tfdt backwards, sidx loops) are in tests/hostile/mod.rs;
# HOSTILE_CORPUS_DIR=fuzz/corpus/parse_metadata cargo test --test hostile_files adds them.
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
