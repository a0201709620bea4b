use bytes::Bytes;

use super::*;
use crate::media::{index_from_bytes, Edit};

fn fixture(name: &str) -> Bytes {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    Bytes::from(std::fs::read(path).unwrap())
}

fn key() -> ObjectKey {
    ObjectKey::parse("shows/episode.mp4").unwrap()
}

/// The index of fixture `name`, and the identity it describes.
fn indexed(name: &str) -> (MediaIndex, ObjectIdentity) {
    let index = index_from_bytes(&fixture(name), &MediaLimits::default()).unwrap();
    let identity = index.identity.clone();
    (index, identity)
}

fn decode(bytes: &[u8], identity: &ObjectIdentity) -> Result<MediaIndex> {
    decode_index(bytes, &key(), identity, &MediaLimits::default())
}

/// Given every kind of file the parser reads (B-frames and edit lists, fragmented with
/// gaps in decode time, text tracks, HDR and Dolby-less colour, several languages), when
/// its index is written and read back, then every track is the parser's: codec, sample
/// description, matrix, edits, every sample array, the text tracks.
#[test]
fn an_index_reads_back_as_the_parser_made_it() {
    for name in [
        "h264-aac-3s.mp4",
        "h264-bframes-editlist-aac.mp4",
        "h264-aac-3s-frag-sidx.mp4",
        "h264-aac-3s-frag-moov-samples.mp4",
        "h264-aac-movtext-3s.mp4",
        "h264-aac-wvtt-3s.mp4",
        "hevc-main10-pq-aac-3s.mp4",
        "av1-10bit-pq-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
        "h264-aac-empty-edit-mid.mp4",
        "aac-3s-audio-only.m4a",
        "h264-flac-3s.mp4",
    ] {
        let (index, identity) = indexed(name);
        let bytes = encode_index(&key(), &index);
        let back = decode(&bytes, &identity).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.movie_timescale, index.movie_timescale, "{name}");
        assert_eq!(back.tracks.len(), index.tracks.len(), "{name}");
        for (a, b) in index.tracks.iter().zip(&back.tracks) {
            assert_eq!(a.track_id, b.track_id, "{name}");
            assert_eq!(a.kind, b.kind, "{name}");
            assert_eq!(a.timescale, b.timescale, "{name}");
            assert_eq!(a.language, b.language, "{name}");
            assert_eq!(a.codec, b.codec, "{name}");
            assert_eq!(a.sample_description, b.sample_description, "{name}");
            assert_eq!((a.tkhd_width, a.tkhd_height), (b.tkhd_width, b.tkhd_height));
            assert_eq!(a.display_matrix, b.display_matrix, "{name}");
            assert_eq!(a.edits, b.edits, "{name}");
            assert_eq!(a.samples, b.samples, "{name}");
            assert_eq!(a.captions, b.captions, "{name}");
        }
        assert_eq!(back.text_tracks.len(), index.text_tracks.len(), "{name}");
        for (a, b) in index.text_tracks.iter().zip(&back.text_tracks) {
            assert_eq!(
                (a.track_id, a.format, a.timescale),
                (b.track_id, b.format, b.timescale)
            );
            assert_eq!((&a.language, &a.edits), (&b.language, &b.edits), "{name}");
            assert_eq!(a.samples, b.samples, "{name}");
        }
        assert_eq!(encode_index(&key(), &back), bytes, "{name}: written twice");
    }
}

/// Given a moov file with B-frames, then its index object holds under 10 bytes per sample
/// besides its sample descriptions (about 28 in memory): decode times and offsets are
/// stored as runs.
#[test]
fn an_index_object_is_compact() {
    let (index, _) = indexed("h264-bframes-editlist-aac.mp4");
    let bytes = encode_index(&key(), &index);
    let descriptions: usize = index
        .tracks
        .iter()
        .map(|t| t.sample_description.len())
        .sum();
    let samples: usize = index.tracks.iter().map(|t| t.samples.len()).sum();
    let per_sample = (bytes.len() - descriptions) as f64 / samples as f64;
    assert!(per_sample < 10.0, "{per_sample:.1} bytes per sample");
}

fn format_error(result: Result<MediaIndex>) -> String {
    match result {
        Err(StoredIndexError::Format(reason)) => reason,
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// Given an index object with any one byte changed, or cut anywhere, then it is refused
/// as not an index of this format (the checksum or the header), never read.
#[test]
fn a_corrupt_or_truncated_index_is_refused() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let bytes = encode_index(&key(), &index);
    for at in (0..bytes.len()).step_by(97) {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0x20;
        format_error(decode(&corrupt, &identity));
    }
    for len in [0, 3, 4, 8, bytes.len() / 2, bytes.len() - 1] {
        format_error(decode(&bytes[..len], &identity));
    }
    let mut longer = bytes.clone();
    longer.push(0);
    format_error(decode(&longer, &identity));
}

/// Given a sound index object, when another object, or another version or size of the same
/// object, is asked for, then it is refused as foreign.
#[test]
fn an_index_of_another_object_or_version_is_foreign() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let bytes = encode_index(&key(), &index);
    let other_key = ObjectKey::parse("shows/other.mp4").unwrap();
    let limits = MediaLimits::default();
    let foreign = |result: Result<MediaIndex>| {
        assert!(
            matches!(result, Err(StoredIndexError::Foreign(_))),
            "{result:?}"
        );
    };
    foreign(decode_index(&bytes, &other_key, &identity, &limits));
    let newer = ObjectIdentity {
        version: "\"etag-2\"".into(),
        ..identity.clone()
    };
    foreign(decode(&bytes, &newer));
    let longer = ObjectIdentity {
        size: identity.size + 1,
        ..identity.clone()
    };
    foreign(decode(&bytes, &longer));
}

/// Given a sound index object of a title over the limits the server now runs with, then
/// it is refused as too large, as the file itself would be.
#[test]
fn an_index_over_the_limits_is_refused() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let bytes = encode_index(&key(), &index);
    let most = index.tracks.iter().map(|t| t.samples.len()).max().unwrap() as u64;
    for limits in [
        MediaLimits {
            max_samples_per_track: most - 1,
            ..MediaLimits::default()
        },
        MediaLimits {
            max_samples_per_file: most,
            ..MediaLimits::default()
        },
        MediaLimits {
            max_tracks: 1,
            ..MediaLimits::default()
        },
        MediaLimits {
            max_sample_bytes: 16,
            ..MediaLimits::default()
        },
    ] {
        let result = decode_index(&bytes, &key(), &identity, &limits);
        assert!(
            matches!(result, Err(StoredIndexError::TooLarge { .. })),
            "{result:?}"
        );
    }
}

/// Given an index object with a sound checksum that places samples past the end of the
/// object, runs decode time backwards, or names a codec the parser refuses, then it is
/// refused as invalid.
#[test]
fn an_index_the_parser_could_not_have_made_is_refused() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let invalid = |index: &MediaIndex| {
        let bytes = encode_index(&key(), index);
        let result = decode(&bytes, &index.identity);
        assert!(
            matches!(result, Err(StoredIndexError::Invalid(_))),
            "{result:?}"
        );
    };

    let mut small = index.clone();
    small.identity.size = 1000;
    invalid(&small);

    let mut backwards = index.clone();
    let dts = &mut backwards.tracks[0].samples.dts;
    dts[5] = dts[4] - 1;
    invalid(&backwards);

    let mut unknown = index.clone();
    let description = unknown.tracks[0].sample_description.to_vec();
    let at = description.windows(4).position(|w| w == b"avc1").unwrap();
    let mut renamed = description.clone();
    renamed[at..at + 4].copy_from_slice(b"zzzz");
    unknown.tracks[0].sample_description = Bytes::from(renamed);
    invalid(&unknown);

    let mut past = index.clone();
    past.tracks[1].edits.edits = vec![Edit {
        start_ticks: 0,
        duration_ticks: 10,
        media_time_ticks: Some(u64::MAX / 2),
    }];
    invalid(&past);

    for wrong in [
        vec![CaptionChannel::Cea608(3), CaptionChannel::Cea608(1)],
        vec![CaptionChannel::Cea608(1), CaptionChannel::Cea608(1)],
        vec![CaptionChannel::Cea608(5)],
        vec![CaptionChannel::Cea708(64)],
    ] {
        let mut captions = index.clone();
        captions.tracks[0].captions = wrong;
        invalid(&captions);
    }
    let _ = identity;
}

/// Given a video track whose scan found captions, then the tiers carry them: they read
/// back as written.
#[test]
fn caption_channels_read_back() {
    let (mut index, identity) = indexed("h264-aac-3s.mp4");
    let found = vec![
        CaptionChannel::Cea608(1),
        CaptionChannel::Cea608(3),
        CaptionChannel::Cea708(1),
        CaptionChannel::Cea708(63),
    ];
    index.tracks[0].captions = found.clone();
    let back = decode(&encode_index(&key(), &index), &identity).unwrap();
    assert_eq!(back.tracks[0].captions, found);
    assert!(back.tracks[1].captions.is_empty());
}

/// Given a track's samples whose sizes (each the change from the one before) run below
/// zero, or whose composition offsets come in a unit of 0 or reach past 32 bits, when they
/// are read, then they are refused, not wrapped; a sound block reads back.
#[test]
fn sizes_below_zero_and_bad_composition_units_are_refused() {
    let limits = MediaLimits::default();
    let read = |w: Writer| {
        let mut reader = Reader { rest: &w.0 };
        reader.samples(1, &limits).map(|s| (s.sizes, s.cts_offsets))
    };
    // Two samples: sizes 100 and 100 + `change`, one duration run, no decode-time jumps,
    // composition offsets 0 and `cts` units of `unit`, no sync table.
    let block = |change: i64, unit: u32, cts: i64| {
        let mut w = Writer(Vec::new());
        w.count(2);
        w.signed(100);
        w.signed(change);
        w.count(1);
        w.u32(2);
        w.u32(1024);
        w.u64(0);
        w.count(0);
        w.0.push(1);
        w.u32(unit);
        w.signed(0);
        w.signed(cts);
        w.0.push(0);
        w.count(0);
        w
    };
    assert_eq!(
        read(block(50, 512, 2)).unwrap(),
        (vec![100, 150], vec![0, 1024])
    );
    assert!(read(block(-101, 512, 2)).is_err());
    assert!(read(block(50, 0, 2)).is_err());
    assert!(read(block(50, 512, i64::from(i32::MAX))).is_err());
}

/// `index`'s object with its layout (the end of the body, see `Writer::layout`) replaced
/// by `layout`, and the checksum made good again.
fn with_layout(index: &MediaIndex, layout: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let bytes = encode_index(&key(), index);
    let tables: Vec<&SampleTable> = index.tracks.iter().map(|t| &t.samples).collect();
    let mut own = Writer(Vec::new());
    own.layout(&tables);
    let body_end = bytes.len() - 4;
    assert!(
        bytes[..body_end].ends_with(&own.0),
        "the layout ends the body"
    );
    let mut body = bytes[..body_end - own.0.len()].to_vec();
    let mut replaced = Writer(Vec::new());
    layout(&mut replaced);
    body.extend_from_slice(&replaced.0);
    let crc = crc32c::crc32c(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// Given an interleaved file (a chunk of video, a chunk of audio, ...), then its samples
/// are placed by the file's chunks in file order, about a byte a chunk: the chunks of
/// each track are not stored as jumps over the other's.
#[test]
fn an_interleaved_file_is_placed_by_its_chunks() {
    let (index, _) = indexed("h264-aac-3s.mp4");
    let tables: Vec<&SampleTable> = index.tracks.iter().map(|t| &t.samples).collect();
    let mut chunks = Writer(Vec::new());
    chunks.layout(&tables);
    assert_eq!(chunks.0[0], LAYOUT_CHUNKS);
    let mut runs = Writer(Vec::new());
    for table in &tables {
        runs.runs(table.offsets(), &table.sizes);
    }
    assert!(
        chunks.0.len() * 2 < runs.0.len(),
        "{} bytes in chunks against {} in runs",
        chunks.0.len(),
        runs.0.len()
    );
}

/// Given a track whose samples do not run forward in the file, then its index object
/// places them by runs per track, and reads back the same.
#[test]
fn samples_out_of_file_order_read_back_the_same() {
    let (mut index, identity) = indexed("h264-aac-3s.mp4");
    let offsets = index.tracks[0].samples.offsets_mut();
    offsets.swap(3, 4);
    let bytes = encode_index(&key(), &index);
    let back = decode(&bytes, &identity).unwrap();
    assert_eq!(back.tracks[0].samples, index.tracks[0].samples);
    assert_eq!(back.tracks[1].samples, index.tracks[1].samples);
}

/// Write a chunk of a two-track layout by hand: `samples` of `track`, `gap` bytes after
/// the previous chunk's end when given (`Writer::layout`'s token).
fn chunk(w: &mut Writer, track: u64, samples: u64, gap: Option<i64>) {
    let bits = super::write::track_bits(2);
    let jump = u64::from(gap.is_some());
    w.var((samples << (bits + 1)) | (jump << bits) | track);
    if let Some(gap) = gap {
        w.signed(gap);
    }
}

/// Given a checksummed index object whose layout names a track that is not there, places
/// more samples than a track has, leaves some unplaced, starts before the object or runs
/// past its end, then it is refused as invalid.
#[test]
fn a_layout_that_does_not_place_every_sample_once_is_refused() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let (video, audio) = (index.tracks[0].samples.len(), index.tracks[1].samples.len());
    let refused = |bytes: Vec<u8>, what: &str| {
        let result = decode(&bytes, &identity);
        assert!(
            matches!(result, Err(StoredIndexError::Invalid(_))),
            "{what}: {result:?}"
        );
    };
    // Sound, by hand: every video sample, then every audio sample, from byte 100.
    let sound = with_layout(&index, |w| {
        w.0.push(LAYOUT_CHUNKS);
        w.count(2);
        chunk(w, 0, video as u64, Some(100));
        chunk(w, 1, audio as u64, None);
    });
    let back = decode(&sound, &identity).unwrap();
    assert_eq!(back.tracks[0].samples.offsets()[0], 100);
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(2);
            chunk(w, 0, video as u64, Some(100));
            chunk(w, 1, audio as u64 + 1, None);
        }),
        "more samples than the track has",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(1);
            chunk(w, 0, video as u64, Some(100));
        }),
        "audio left unplaced",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(3);
            chunk(w, 0, video as u64, Some(100));
            chunk(w, 1, audio as u64, None);
            chunk(w, 3, 1, None);
        }),
        "a track that is not there",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(2);
            chunk(w, 0, video as u64, Some(-1));
            chunk(w, 1, audio as u64, None);
        }),
        "before the object",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(2);
            chunk(w, 0, video as u64, Some(identity.size as i64 - 10));
            chunk(w, 1, audio as u64, None);
        }),
        "past the object's end",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(3);
            chunk(w, 0, 0, Some(100));
            chunk(w, 0, video as u64, None);
            chunk(w, 1, audio as u64, None);
        }),
        "an empty chunk",
    );
    refused(with_layout(&index, |w| w.0.push(7)), "an unknown layout");
}

/// Given two long tracks (their samples blocks together over the size decoded side by
/// side) and a third block with a byte too many, when the blocks are decoded, then each
/// table is the one written, in the blocks' order, whichever thread decoded it, and the
/// third is refused in its own place.
#[test]
fn long_tracks_decode_side_by_side_in_order() {
    let table = |n: u32, step: u32, with_cts: bool| SampleTable {
        sizes: (0..n).map(|i| 300 + (i * 7919) % 250).collect(),
        dts: (0..u64::from(n)).map(|i| i * u64::from(step)).collect(),
        durations: vec![step; n as usize],
        cts_offsets: match with_cts {
            true => (0..n).map(|i| (i % 3) as i32 * step as i32).collect(),
            false => Vec::new(),
        },
        sync: with_cts.then(|| (0..n).step_by(25).collect()),
        ..SampleTable::default()
    };
    let block = |t: &SampleTable| {
        let mut w = Writer(Vec::new());
        w.samples(t);
        w.0
    };
    let (video, audio) = (table(90_000, 512, true), table(140_000, 1024, false));
    let (v, a) = (block(&video), block(&audio));
    let mut extra = v.clone();
    extra.push(0);
    assert!(v.len() + a.len() >= PARALLEL_BLOCK_BYTES);
    let decoded = decode_blocks(&[(1, &v), (2, &a), (3, &extra)], &MediaLimits::default());
    let [first, second, third] = <[_; 3]>::try_from(decoded).unwrap();
    for (got, want) in [(first.unwrap(), &video), (second.unwrap(), &audio)] {
        assert_eq!(got.sizes, want.sizes);
        assert_eq!(got.dts, want.dts);
        assert_eq!(got.durations, want.durations);
        assert_eq!(got.cts_offsets, want.cts_offsets);
        assert_eq!(got.sync, want.sync);
    }
    let refused = third.unwrap_err().to_string();
    assert!(
        refused.contains("track 3") && refused.contains("after the samples"),
        "{refused}"
    );
}

/// Given a checksummed index object whose layout replays chunks with repeat tokens, then a
/// sound repeat places the samples one after another, and a repeat of no chunks, of more
/// chunks than came before (or since a jump), or of more chunks than there are samples, or
/// one placing samples a track does not have, is refused as invalid; and the writer uses
/// repeats on an interleaved file, which reads back the same.
#[test]
fn repeated_chunks_read_back_and_bad_repeats_are_refused() {
    let (index, identity) = indexed("h264-aac-3s.mp4");
    let (video, audio) = (index.tracks[0].samples.len(), index.tracks[1].samples.len());
    let repeat = |w: &mut Writer, period: u64, times: u64| {
        w.var(REPEAT);
        w.var(period);
        w.var(times);
    };
    // Every video sample one by one from byte 100 (two chunks, then a repeat of the last
    // one), then the audio in one chunk.
    let layout = |period: u64, times: u64| {
        with_layout(&index, move |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(4);
            chunk(w, 0, 1, Some(100));
            chunk(w, 0, 1, None);
            repeat(w, period, times);
            chunk(w, 1, audio as u64, None);
        })
    };
    let back = decode(&layout(1, video as u64 - 2), &identity).unwrap();
    let sizes = &index.tracks[0].samples.sizes;
    let offsets = back.tracks[0].samples.offsets();
    assert_eq!(offsets[0], 100);
    for i in 1..video {
        assert_eq!(
            offsets[i],
            offsets[i - 1] + u64::from(sizes[i - 1]),
            "sample {i}"
        );
    }
    let refused = |bytes: Vec<u8>, what: &str| {
        let result = decode(&bytes, &identity);
        assert!(
            matches!(result, Err(StoredIndexError::Invalid(_))),
            "{what}: {result:?}"
        );
    };
    refused(layout(0, 5), "a repeat of no chunks");
    refused(layout(3, 1), "more chunks than came before");
    refused(layout(1, u64::MAX), "more chunks than samples");
    refused(
        layout(1, video as u64),
        "more video samples than the track has",
    );
    refused(
        with_layout(&index, |w| {
            w.0.push(LAYOUT_CHUNKS);
            w.count(4);
            chunk(w, 0, 1, Some(100));
            chunk(w, 0, 1, Some(0));
            repeat(w, 2, 1);
            chunk(w, 1, audio as u64, None);
        }),
        "a repeat over a jump",
    );

    // The writer: an interleaved fixture's chunks (a video frame, then its audio) repeat.
    let tables: Vec<&SampleTable> = index.tracks.iter().map(|t| &t.samples).collect();
    let mut written = Writer(Vec::new());
    written.layout(&tables);
    let mut reader = Reader {
        rest: &written.0[1..],
    };
    let tokens = reader.count(usize::MAX, "tokens", 1).unwrap();
    let chunks = (video + audio) / 2;
    assert!(
        tokens < chunks / 4,
        "{tokens} tokens for about {chunks} chunks"
    );
    let back = decode(&encode_index(&key(), &index), &identity).unwrap();
    for (got, want) in back.tracks.iter().zip(&index.tracks) {
        assert_eq!(got.samples, want.samples);
    }
}
