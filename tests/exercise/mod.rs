//! One file through every stage the server runs on it, checking what comes out: shared by
//! the mutation test (`tests/mutations.rs`) and the fuzz targets (`fuzz/`), so both hold
//! the packager to the same promises. Any inconsistency panics, which both report.
//!
//! Promises: an error is one printable line; an index has equal-length arrays whose samples
//! lie inside the file; every segment the plan names can be prepared, its byte ranges lie
//! inside the file and add up to its payload, and its header has the length announced; a
//! segment past the plan is an error, not a panic.
#![allow(dead_code)]

use bytes::Bytes;
use vodpack::media::{index_from_bytes, MediaError, MediaIndex, MediaLimits};
use vodpack::package::fmp4::media_segment_header_len;
use vodpack::package::{
    init_segment, prepare_media_segment, render_media_playlist, render_mpd,
    render_multivariant_playlist, Title,
};

/// How far a file got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Refused while indexing.
    Refused,
    /// Indexed, but no title (no rendition to offer).
    NoTitle,
    /// Packaged: this many media segments were prepared.
    Packaged { segments: usize },
}

/// The reason line of a refusal, checked to be one printable line.
pub fn check_error(e: &MediaError) {
    let line = e.to_string();
    assert!(!line.is_empty(), "empty error");
    assert!(
        !line.chars().any(char::is_control),
        "error is not one printable line: {line:?}"
    );
}

/// Index `file` and, when that succeeds, build every manifest, init and media segment.
pub fn exercise(file: &[u8], target_ms: u32) -> Outcome {
    let bytes = Bytes::copy_from_slice(file);
    let index = match index_from_bytes(&bytes, &MediaLimits::default()) {
        Ok(index) => index,
        Err(e) => {
            check_error(&e);
            return Outcome::Refused;
        }
    };
    check_index(&index, file.len() as u64);
    let Ok(title) = Title::new(index, target_ms) else {
        return Outcome::NoTitle;
    };
    let file_len = file.len() as u64;
    assert!(render_multivariant_playlist(&title).starts_with("#EXTM3U"));
    assert!(render_mpd(&title).contains("<MPD"));
    let mut segments = 0;
    for rendition in &title.renditions {
        let _ = render_media_playlist(&title, rendition);
        let track = &title.index.tracks[rendition.track_pos];
        assert!(!init_segment(track).is_empty());
        let has_cts = !track.samples.cts_offsets.is_empty();
        for segment in 0..title.plan.segment_count {
            let prepared =
                prepare_media_segment(&title.index, &title.plan, rendition.track_pos, segment)
                    .unwrap_or_else(|e| panic!("segment {segment} of the plan: {e}"));
            let mut sum = 0u64;
            for range in &prepared.ranges {
                assert!(
                    range.end() <= file_len,
                    "{range} outside a {file_len}-byte file"
                );
                sum += range.len;
            }
            assert_eq!(sum, prepared.payload_bytes);
            let samples = title.plan.tracks[rendition.track_pos]
                .samples(segment)
                .expect("planned segment");
            assert_eq!(
                prepared.header.len() as u64,
                media_segment_header_len(
                    track.kind,
                    has_cts,
                    samples.len() as u64,
                    prepared.payload_bytes
                )
            );
            segments += 1;
        }
        assert!(prepare_media_segment(
            &title.index,
            &title.plan,
            rendition.track_pos,
            title.plan.segment_count
        )
        .is_err());
    }
    Outcome::Packaged { segments }
}

/// Every array of every track has one entry per sample, and every sample lies in the file.
pub fn check_index(index: &MediaIndex, file_len: u64) {
    assert!(index.movie_timescale > 0);
    for track in &index.tracks {
        let s = &track.samples;
        let n = s.len();
        assert!(track.timescale > 0);
        assert_eq!(s.offsets.len(), n);
        assert_eq!(s.dts.len(), n);
        assert_eq!(s.durations.len(), n);
        assert!(s.cts_offsets.is_empty() || s.cts_offsets.len() == n);
        assert!(s.dts.windows(2).all(|w| w[0] <= w[1]), "dts decrease");
        for (offset, size) in s.offsets.iter().zip(&s.sizes) {
            assert!(
                offset + u64::from(*size) <= file_len,
                "sample outside the file"
            );
        }
        if let Some(sync) = &s.sync {
            assert!(sync.windows(2).all(|w| w[0] < w[1]));
            assert!(sync.iter().all(|i| (*i as usize) < n));
        }
    }
}
