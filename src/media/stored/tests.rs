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
    let _ = identity;
}
