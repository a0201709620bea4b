//! One file through every stage the server runs on it, checking what comes out: shared by
//! the mutation test (`tests/mutations.rs`) and the fuzz targets (`fuzz/`), so both hold
//! the packager to the same promises. Any inconsistency panics, which both report.
//!
//! Promises: an error is one printable line; an index has equal-length arrays whose samples
//! lie inside the file; every segment the plan names can be prepared, its byte ranges lie
//! inside the file and add up to its payload, and its header has the length announced; a
//! segment past the plan is an error, not a panic; every subtitle resource reads only
//! bytes inside the file, and its cues render or fail with a one-line error.
#![allow(dead_code)]

use bytes::Bytes;
use vodpack::media::{index_from_bytes, MediaError, MediaIndex, MediaLimits};
use vodpack::package::fmp4::media_segment_header_len;
use vodpack::package::text::{text_init_segment, text_media_segment, TextSegmentSpan};
use vodpack::package::webvtt::{
    cues_from_samples, plan_text_read, render_dash_file, render_hls_segment, segment_cues,
    SubtitlePlan,
};
use vodpack::package::{
    init_segment, prepare_media_segment, render_media_playlist, render_mpd,
    render_multivariant_playlist, render_subtitle_playlist, TextCoding, Title,
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
    let loaded = index_from_bytes(&bytes, &MediaLimits::default());
    // With every track's offsets left for later, the load refuses the same files for the
    // same reasons, and the offsets worked out later are the same.
    let later = MediaLimits {
        offsets_at_load_max_samples: 0,
        ..MediaLimits::default()
    };
    match (&loaded, index_from_bytes(&bytes, &later)) {
        (Ok(at_once), Ok(later)) => {
            for (a, b) in at_once.tracks.iter().zip(&later.tracks) {
                assert!(
                    a.samples == b.samples,
                    "track {}: offsets differ",
                    a.track_id
                );
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("offsets at load: {:?}; later: {:?}", a.is_ok(), b.is_ok()),
    }
    let index = match loaded {
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
    exercise_subtitles(&title, file);
    Outcome::Packaged { segments }
}

/// Every text track through every subtitle resource: each HLS segment and the DASH file
/// read only bytes inside the file (within `max_text_read_bytes`), and their cues either
/// parse and render as WebVTT (and as `wvtt` and `stpp` DASH text segments, whole boxes)
/// or fail with a one-line error.
pub fn exercise_subtitles(title: &Title, file: &[u8]) {
    let limits = MediaLimits::default();
    let plan = SubtitlePlan::new(title);
    for track in &title.index.text_tracks {
        let _ = render_subtitle_playlist(&plan, track.track_id);
        for coding in [TextCoding::Wvtt, TextCoding::Imsc1] {
            let init = text_init_segment(coding, track.track_id, plan.reference.1, None);
            assert_eq!(&init[4..8], b"ftyp");
        }
        let numbers = (plan.first_number..).take(plan.segment_count());
        let windows = numbers.clone().map(|number| {
            (
                Some(number),
                plan.window(number).map(Some).expect("listed segment"),
            )
        });
        for (number, window) in windows.chain([(None, None)]) {
            let read = match plan_text_read(track, plan.shift_ns, window, &limits) {
                Ok(read) => read,
                Err(e) => {
                    check_error(&e);
                    continue;
                }
            };
            let mut total = 0u64;
            let mut bytes = Vec::new();
            for range in &read.ranges {
                assert!(range.end() <= file.len() as u64, "{range} outside the file");
                total += range.len;
                bytes.push(Bytes::copy_from_slice(
                    &file[range.start as usize..range.end() as usize],
                ));
            }
            assert!(total <= limits.max_text_read_bytes);
            match cues_from_samples(track, plan.shift_ns, &read, &bytes) {
                Ok(cues) => {
                    // The DASH text segments of the window, in both codings: whole boxes
                    // filling the segment.
                    if let Some(number) = number {
                        let span = TextSegmentSpan::of_plan(&plan, number, &cues)
                            .expect("a listed segment has a span");
                        for coding in [TextCoding::Wvtt, TextCoding::Imsc1] {
                            // Refused (422) is an answer too: a segment over the limits.
                            let Ok(segment) =
                                text_media_segment(coding, track.track_id, None, &span)
                            else {
                                continue;
                            };
                            let moof = u32::from_be_bytes(segment[..4].try_into().unwrap());
                            assert_eq!(&segment[4..8], b"moof");
                            assert_eq!(&segment[moof as usize + 4..moof as usize + 8], b"mdat");
                        }
                    }
                    let text = match window {
                        Some(window) => {
                            render_hls_segment(&segment_cues(track.format, cues, window))
                        }
                        None => render_dash_file(&cues, plan.shift_ns),
                    };
                    assert!(text.starts_with("WEBVTT\n"));
                }
                Err(e) => check_error(&e),
            }
        }
        assert!(plan
            .window(plan.first_number + plan.segment_count() as u64)
            .is_none());
    }
}

/// Every array of every track has one entry per sample, and every sample lies in the file.
pub fn check_index(index: &MediaIndex, file_len: u64) {
    assert!(index.movie_timescale > 0);
    for track in &index.tracks {
        let s = &track.samples;
        let n = s.len();
        assert!(track.timescale > 0);
        assert_eq!(s.offsets().len(), n);
        assert_eq!(s.dts.len(), n);
        assert_eq!(s.durations.len(), n);
        assert!(s.cts_offsets.is_empty() || s.cts_offsets.len() == n);
        assert!(s.dts.windows(2).all(|w| w[0] <= w[1]), "dts decrease");
        for (offset, size) in s.offsets().iter().zip(&s.sizes) {
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
    for text in &index.text_tracks {
        let s = &text.samples;
        assert!(text.timescale > 0);
        assert_eq!(
            (s.offsets().len(), s.dts.len(), s.durations.len()),
            (s.len(), s.len(), s.len())
        );
        assert!(s.dts.windows(2).all(|w| w[0] <= w[1]), "text dts decrease");
        for (offset, size) in s.offsets().iter().zip(&s.sizes) {
            assert!(
                offset + u64::from(*size) <= file_len,
                "text sample outside the file"
            );
        }
    }
}
