//! Conformance: what ffmpeg and ffprobe read through vodpack's HLS (`master.m3u8`) and DASH
//! (`manifest.mpd`) is the source MP4: the same streams, the same decoded video frames and
//! audio samples, and the same audio/video timing (up to the one title-wide shift `S`
//! described in `src/package/plan.rs`).
//!
//! Every test skips when ffmpeg/ffprobe are missing (and fails instead under
//! `VODPACK_REQUIRE_TOOLS=1`). Each runs its own server over `fixtures/` with 1 s target
//! segments, so the 3-4 s fixtures are cut into several segments.
//!
//! Note on reading DASH with ffmpeg: its DASH demuxer reads from the representation with
//! the smallest current timestamp and reports end-of-file for the whole input as soon as
//! that representation ends, so when every stream is read at once the last packets of
//! the longest stream can go missing. The helpers below therefore always read one stream
//! at a time (`-select_streams` / `-map`), which makes ffmpeg discard the others.

mod boxes;
mod breaks;
mod captions;
mod cbcs_layout;
mod clips;
#[path = "../common/mod.rs"]
mod common;
mod encryption;
mod http;
mod lip_sync;
mod media_recipes;
mod muxed;
mod nginx_numbering;
mod nginx_peer_goldens;
mod nginx_vod;
mod recipes;
mod rotation;
mod scte35;
mod sequences;
mod subtitles;
mod text_segments;
mod titles;
mod tools;
mod trick;
mod trims;
mod ts;
mod webvtt;

use std::time::Duration;

use http::*;
use tools::*;

/// Every fixture the conformance tests run over.
const FIXTURES: &[&str] = &[
    "h264-aac-3s.mp4",
    "h264-aac-3s-moov-end.mp4",
    "h264-bframes-editlist-aac.mp4",
    "hevc-aac-3s.mp4",
    "aac-3s-audio-only.m4a",
    "h264-3s-video-only.mp4",
    "h264-aac-2lang-3s.mp4",
    "h264-aac-3s-frag-walk.mp4",
    "h264-aac-3s-frag-sidx.mp4",
    "h264-aac-3s-frag-mfra.mp4",
    "h264-aac-3s-frag-moov-samples.mp4",
    "h264-aac-movtext-3s.mp4",
    "h264-aac-wvtt-3s.mp4",
    // HDR and codec signalling (see fixtures/README.md).
    "hevc-main10-pq-aac-3s.mp4",
    "hevc-main10-hlg-aac-3s.mp4",
    "av1-10bit-pq-aac-3s.mp4",
    "h264-mp3-3s.mp4",
    "h264-flac-3s.mp4",
    // Edit lists in full (see fixtures/README.md).
    "h264-aac-two-clips-editlist.mp4",
    "h264-aac-empty-edit-mid.mp4",
    "h264-aac-edit-mid-gop.mp4",
    // A rung of the ladder title, also a plain MP4 (see fixtures/README.md).
    "ladder/ladder-270p.mp4",
];

/// A cue as a fixture was written with it: start and end in seconds, text.
type KnownCue = (f64, f64, &'static str);

/// Cues of text tracks ffmpeg 5.1 cannot read (`wvtt`, a data stream to it), as
/// `fixtures/make-wvtt.py` wrote them.
const KNOWN_CUES: &[(&str, &[KnownCue])] = &[(
    "h264-aac-wvtt-3s.mp4",
    &[
        (0.5, 1.25, "Hello, <i>world</i>!"),
        (1.0, 2.7, "Café &amp; crème\non two lines"),
    ],
)];

/// Fixtures whose output rightly carries video pre-roll before the presentation start, and
/// how many frames: their first edit starts inside a GOP, so the frames from the GOP's sync
/// sample on are needed to decode the first one presented. The output puts them before the
/// title shift S, where DASH's presentationTimeOffset and HLS's EXT-X-START hide them from
/// players; ffmpeg's HLS and DASH readers (5.1) honour neither and decode and show them, so
/// the comparisons below skip them (and check they come first, before the first frame
/// presented).
const VIDEO_PREROLL: &[(&str, usize)] = &[("h264-aac-edit-mid-gop.mp4", 16)];

/// Fixtures whose output rightly carries audio pre-roll, and how many AAC frames more than
/// the one frame before the first presented one every output may carry: the first audio
/// edit starts where ffmpeg's mov demuxer starts its decoder (one second before the edit's
/// media time), as far back as the title shift S reaches (`package::present_title`). The
/// output puts those frames before S, as it does the video pre-roll; ffmpeg's HLS and DASH
/// readers decode and present them.
const AUDIO_PREROLL: &[(&str, usize)] = &[("h264-aac-edit-mid-gop.mp4", 24)];

/// Fixtures with an empty edit in the middle of their tracks, and its span on the movie
/// timeline in seconds. ISO/IEC 14496-12 8.6.6 presents nothing there (the output holds the
/// last frame and leaves a gap in audio time). ffmpeg 5.1's mov demuxer (`mov_fix_index`)
/// instead treats a mid-track empty edit as a media edit at media time -1 and fills it with
/// the track's first frames and audio, so those are left out of the source reference.
const MID_TRACK_EMPTY_EDITS: &[(&str, f64, f64)] =
    &[("h264-aac-empty-edit-mid.mp4", 16.0 / 15.0, 1.6)];

/// Video pre-roll frames the output of `fixture` carries (see [`VIDEO_PREROLL`]).
fn video_preroll_frames(fixture: &str) -> usize {
    VIDEO_PREROLL
        .iter()
        .find(|(name, _)| *name == fixture)
        .map_or(0, |(_, frames)| *frames)
}

/// Audio pre-roll samples per channel (48 kHz AAC) the output of `fixture` carries beyond
/// one frame (see [`AUDIO_PREROLL`]).
fn audio_preroll_samples(fixture: &str) -> usize {
    AUDIO_PREROLL
        .iter()
        .find(|(name, _)| *name == fixture)
        .map_or(0, |(_, frames)| *frames * AAC_FRAME)
}

/// The mid-track empty edit of `fixture`, if any (see [`MID_TRACK_EMPTY_EDITS`]).
fn mid_track_empty_edit(fixture: &str) -> Option<(f64, f64)> {
    MID_TRACK_EMPTY_EDITS
        .iter()
        .find(|(name, _, _)| *name == fixture)
        .map(|(_, start, end)| (*start, *end))
}

/// The longest any one ffmpeg/ffprobe run may take before it is killed.
const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// One video frame of the fixtures (30 fps), the duration tolerance for titles with video.
const VIDEO_FRAME_S: f64 = 1.0 / 30.0;

/// Duration tolerance for audio-only titles.
const AUDIO_ONLY_TOLERANCE_S: f64 = 0.025;

/// Samples per channel in one AAC-LC frame (and in its priming).
const AAC_FRAME: usize = 1024;

/// Samples per channel in one MP3 (MPEG-1 Layer III) frame.
const MP3_FRAME: usize = 1152;

/// Tolerance when comparing timestamps for the A/V relationship.
const SYNC_TOLERANCE_S: f64 = 0.001;

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

/// ffprobe finds, through both HLS and DASH, the source's video and audio streams with the
/// same codecs, pixel formats and colour (and the same audio languages), each lasting as
/// long as in the source (first packet to last packet end, within one video frame, or
/// 25 ms for audio-only titles), and a title duration within the same tolerance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_show_the_source_streams_and_durations() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        let tolerance = if source.count("video") > 0 {
            VIDEO_FRAME_S
        } else {
            AUDIO_ONLY_TOLERANCE_S
        };
        // How long each source stream lasts, by its selector, and how far apart the
        // streams start (earliest presentation times).
        let mut source_spans = Vec::new();
        let (mut first_start, mut last_start) = (f64::INFINITY, f64::NEG_INFINITY);
        for (kind, n) in [("video", "v"), ("audio", "a")] {
            for i in 0..source.count(kind) {
                let selector = format!("{n}:{i}");
                let source_packets = packets(&source_input, &selector).await;
                let start = source_packets
                    .iter()
                    .map(|p| p.pts)
                    .fold(f64::INFINITY, f64::min);
                first_start = first_start.min(start);
                last_start = last_start.max(start);
                source_spans.push((selector.clone(), span(&source_packets)));
            }
        }
        for via in Via::OUTPUTS {
            let input = via.input(&server, fixture);
            let output = probe_streams(&input).await;
            for kind in ["video", "audio"] {
                assert_eq!(
                    output.count(kind),
                    source.count(kind),
                    "{fixture} via {via:?}: number of {kind} streams"
                );
            }
            // Text tracks are left out: ffmpeg 5.1's HLS demuxer skips subtitle renditions
            // ("Can't support the subtitle") and reads a `wvtt` source track as data; their
            // cues are checked by `hls_and_dash_carry_the_source_cues`.
            let shown = |probe: &Probe| {
                (probe.streams.iter())
                    .filter(|s| !["subtitle", "data", TRICK_PLAY].contains(&s.kind.as_str()))
                    .count()
            };
            assert_eq!(shown(&output), shown(&source), "{fixture} via {via:?}");
            // DASH offers each video as a trick-play Representation too.
            let trick = match via {
                Via::Dash => source.count("video"),
                _ => 0,
            };
            assert_eq!(
                output.count(TRICK_PLAY),
                trick,
                "{fixture} via {via:?}: trick-play streams"
            );

            // ffmpeg's DASH demuxer keeps only whole seconds of mediaPresentationDuration,
            // so this check is coarse there; the per-stream spans below are exact. Through
            // HLS, ffmpeg takes the title's duration from one rendition, while the source's
            // runs from its earliest stream start: when the streams start apart (a
            // fragmented file has no edit list to align them), the two differ by that much.
            let (Some(want), Some(got)) = (source.duration, output.duration) else {
                panic!("{fixture} via {via:?}: no format duration");
            };
            // An HLS playlist lasts from its first segment, video pre-roll included, and so
            // does the DASH Period (`Title::dash_preroll_secs`: MSE would drop the frames
            // after a hidden pre-roll up to the next key frame).
            let preroll_s = video_preroll_frames(fixture) as f64 * VIDEO_FRAME_S;
            let want = want + preroll_s;
            let coarse = match via {
                Via::Dash => want.fract(),
                _ => 0.0,
            } + (last_start - first_start);
            assert!(
                (want - got).abs() <= tolerance + coarse,
                "{fixture} via {via:?}: title duration {got} s, source {want} s"
            );

            for pair in pair_streams(&source, &output, fixture, via) {
                assert_eq!(
                    output.streams[pair.output].codec, source.streams[pair.source].codec,
                    "{fixture} via {via:?}: codec of {}",
                    pair.output_selector
                );
                let colour = |s: &StreamInfo| {
                    (
                        s.pix_fmt.clone(),
                        s.color_primaries.clone(),
                        s.color_transfer.clone(),
                    )
                };
                assert_eq!(
                    colour(&output.streams[pair.output]),
                    colour(&source.streams[pair.source]),
                    "{fixture} via {via:?}: pixel format and colour of {}",
                    pair.output_selector
                );
                let want = source_spans
                    .iter()
                    .find(|(selector, _)| *selector == pair.source_selector)
                    .map(|(_, span)| *span)
                    .expect("a source span for every paired stream");
                let mut got = span(&packets(&input, &pair.output_selector).await);
                if pair.kind == "video" {
                    got -= preroll_s;
                }
                // The source's demuxer flags the AAC frame before the first one presented
                // (priming or pre-roll) as discarded; the output keeps it, as the PCM test
                // below allows.
                if pair.kind == "audio" {
                    got -= audio_preroll_samples(fixture) as f64 / 48_000.0;
                    if got - want > tolerance {
                        got -= AAC_FRAME as f64 / 48_000.0;
                    }
                }
                assert!(
                    (want - got).abs() <= tolerance,
                    "{fixture} via {via:?}: {} lasts {got:.6} s, source {} lasts {want:.6} s",
                    pair.output_selector,
                    pair.source_selector
                );
            }
        }
    }
    server.shutdown().await;
}

/// Decoding the video through HLS and through DASH gives exactly the source's frames: the
/// same number of frames with the same MD5 of each decoded picture, in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_decode_to_the_source_frames() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let source = probe_streams(&Via::Source.input(&server, fixture)).await;
        if source.count("video") == 0 {
            continue;
        }
        let mut want = frame_hashes(&Via::Source.input(&server, fixture), "v:0").await;
        if let Some((start, end)) = mid_track_empty_edit(fixture) {
            want.retain(|f| f.pts_s < start - 0.001 || f.pts_s > end - 0.001);
        }
        assert!(
            !want.is_empty(),
            "{fixture}: the source decodes to no frames"
        );
        let preroll = video_preroll_frames(fixture);
        for via in Via::OUTPUTS {
            let got = frame_hashes(&via.input(&server, fixture), "v:0").await;
            assert_eq!(
                got.len(),
                want.len() + preroll,
                "{fixture} via {via:?}: number of decoded frames ({preroll} of them pre-roll)"
            );
            // Pre-roll frames come first and are presented before the first source frame.
            let first_presented = got[preroll].pts_s;
            if let Some(f) = got[..preroll].iter().find(|f| f.pts_s >= first_presented) {
                panic!("{fixture} via {via:?}: pre-roll frame at {} s is not before the presentation start {first_presented} s", f.pts_s);
            }
            let got = &got[preroll..];
            if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
                panic!("{fixture} via {via:?}: decoded frame {i} differs from the source");
            }
        }
    }
    server.shutdown().await;
}

/// Decoding each audio stream through HLS and through DASH gives the source's PCM, sample
/// for sample. The output may start with the priming the source's edit list hides (at
/// most one codec frame: 1024 samples per channel for AAC, 1152 for MP3), and its last
/// frame may differ in length.
/// In the two-language title, each rendition carries its own language's audio.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_decode_to_the_source_audio() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        for via in Via::OUTPUTS {
            let input = via.input(&server, fixture);
            let output = probe_streams(&input).await;
            for pair in pair_streams(&source, &output, fixture, via) {
                if pair.kind != "audio" {
                    continue;
                }
                // ffmpeg fills a mid-track empty edit with the track's first audio frames
                // (see MID_TRACK_EMPTY_EDITS): drop them from the reference. The span's
                // ends are on AAC frame boundaries; the filter keeps frames starting at its
                // end.
                let filter = mid_track_empty_edit(fixture).map(|(start, end)| {
                    format!(
                        "aselect='not(between(t,{:.4},{:.4}))'",
                        start - 0.0005,
                        end - 0.0005
                    )
                });
                let want =
                    decode_pcm(&source_input, &pair.source_selector, filter.as_deref()).await;
                let got = decode_pcm(&input, &pair.output_selector, None).await;
                let what = format!(
                    "{fixture} via {via:?}: {} (source {})",
                    pair.output_selector, pair.source_selector
                );
                let frame = audio_frame(&source.streams[pair.source].codec);
                // Guard against a vacuous comparison: every fixture has seconds of tone.
                assert!(
                    want.len() >= 48_000,
                    "{what}: source decodes to only {} frames",
                    want.len()
                );
                let preroll = audio_preroll_samples(fixture);
                let Some(offset) = pcm_offset_within(&want, &got, preroll + 2 * AAC_FRAME) else {
                    panic!(
                        "{what}: no offset in 0..={} frames makes the PCM match the source \
                         ({} source frames, {} output frames)",
                        preroll + 2 * AAC_FRAME,
                        want.len(),
                        got.len()
                    );
                };
                assert!(
                    offset <= frame + preroll,
                    "{what}: output starts {offset} frames early, more than one priming frame \
                     and {preroll} frames of pre-roll"
                );
                let extra = (got.len() - offset).abs_diff(want.len());
                assert!(
                    extra <= frame,
                    "{what}: after the {offset}-frame offset the output has {} frames, the \
                     source {}: more than the last frame differs",
                    got.len() - offset,
                    want.len()
                );
            }
        }
    }
    server.shutdown().await;
}

/// HLS and DASH keep the source's audio/video timing: every stream's first packet is moved
/// by the same shift S (output pts - source pts, within 1 ms), including the AAC priming
/// frame, which the output keeps at S - 1024/48000 s; its last packets are moved by the
/// same S (so joined clips and empty edits keep the timing too). S is the same through HLS
/// and DASH, and no output timestamp is negative.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_keep_the_audio_video_timing() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        if source.count("video") == 0 || source.count("audio") == 0 {
            continue;
        }
        let mut shifts_by_via = Vec::new();
        for via in Via::OUTPUTS {
            let input = via.input(&server, fixture);
            let output = probe_streams(&input).await;
            // (output selector, output first pts - source first pts) for every stream.
            let mut shifts = Vec::new();
            for pair in pair_streams(&source, &output, fixture, via) {
                let mut src = packets(&source_input, &pair.source_selector).await;
                if let Some((start, end)) = mid_track_empty_edit(fixture) {
                    src.retain(|p| p.pts < start - 0.001 || p.pts > end - 0.001);
                }
                let out = packets(&input, &pair.output_selector).await;
                let out_first = out[0].pts;
                assert!(
                    out_first >= 0.0,
                    "{fixture} via {via:?}: {} starts at {out_first} s, before zero",
                    pair.output_selector
                );
                // The shift of the first packet the source presents, found in the output by
                // its bytes (a run of packets, since silent AAC frames repeat): pre-roll
                // and priming the output carries before it do not count.
                let Some(shift) = matched_shift(&src, &out) else {
                    panic!(
                        "{fixture} via {via:?}: the first packets of {} are not in {}",
                        pair.source_selector, pair.output_selector
                    );
                };
                // The same shift holds at the end, past every join of an edit list.
                let end_shift = matched_end_shift(&src, &out);
                assert!(
                    end_shift.is_some_and(|end| (end - shift).abs() <= SYNC_TOLERANCE_S),
                    "{fixture} via {via:?}: {} is moved by {shift:.6} s at its start but by \
                     {end_shift:?} s at its end",
                    pair.output_selector
                );
                shifts.push((pair.output_selector, shift));
            }
            let (video_selector, video_shift) = shifts
                .iter()
                .find(|(selector, _)| selector.starts_with('v'))
                .cloned()
                .expect("a video stream");
            for (selector, shift) in &shifts {
                assert!(
                    (shift - video_shift).abs() <= SYNC_TOLERANCE_S,
                    "{fixture} via {via:?}: {selector} moved by {shift:.6} s but \
                     {video_selector} by {video_shift:.6} s (all first packets: {shifts:?})"
                );
            }
            shifts_by_via.push((via, video_shift));
        }
        let (first_via, first_shift) = shifts_by_via[0];
        for &(via, shift) in &shifts_by_via[1..] {
            assert!(
                (shift - first_shift).abs() <= SYNC_TOLERANCE_S,
                "{fixture}: {via:?} shifts the title by {shift:.6} s, {first_via:?} by \
                 {first_shift:.6} s"
            );
        }
    }
    server.shutdown().await;
}

/// Every manifest states how long the source lasts, within one frame: the EXTINFs of each
/// HLS media playlist add up to the duration of its source track (audio keeps the source's
/// encoder priming, so it may last up to one frame longer), and the MPD's
/// `mediaPresentationDuration` is the source's duration. A 0-second presentation, the
/// symptom of a file packaged without its samples, can never pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_state_the_source_duration_within_one_frame() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let tracks = source_tracks(&source_input).await;
        let format_duration = probe_streams(&source_input)
            .await
            .duration
            .expect("source format duration");
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
        let mut checked = 0;
        for uri in master_playlist_uris(&master) {
            let track_id: u32 = uri
                .rsplit_once("index-t")
                .and_then(|(_, rest)| rest.strip_suffix(".m3u8"))
                .and_then(|id| id.parse().ok())
                .unwrap_or_else(|| panic!("{fixture}: unexpected playlist URI {uri}"));
            let Some(track) = tracks.iter().find(|t| t.track_id == track_id) else {
                continue; // not an audio or video track (subtitles have their own tests)
            };
            let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
            let media = MediaPlaylist::parse(&playlist);
            let total: f64 = media.extinfs.iter().sum();
            // EXTINF is written to the microsecond: allow that rounding per segment.
            let rounding = 1e-6 * media.extinfs.len() as f64;
            // Pre-roll before the presentation start is listed too (EXT-X-START skips it).
            let total = match track.kind.as_str() {
                "audio" => total - audio_preroll_samples(fixture) as f64 / 48_000.0,
                _ => total - video_preroll_frames(fixture) as f64 * track.frame,
            };
            assert!(
                (total - track.duration).abs() <= track.frame + rounding,
                "{fixture}: {uri} lasts {total:.6} s, source track {track_id} ({}) lasts {:.6} s",
                track.kind,
                track.duration
            );
            checked += 1;
        }
        assert_eq!(checked, tracks.len(), "{fixture}: one playlist per track");

        let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
        let stated =
            mpd_duration(&mpd).unwrap_or_else(|| panic!("{fixture}: no duration in\n{mpd}"));
        let frame = tracks
            .iter()
            .filter(|t| t.kind == "video")
            .chain(tracks.iter())
            .map(|t| t.frame)
            .next()
            .unwrap_or(0.0);
        // mediaPresentationDuration is written to the millisecond; the Period shows any
        // video pre-roll before the presentation start (`Title::dash_preroll_secs`).
        let want = format_duration + video_preroll_frames(fixture) as f64 * VIDEO_FRAME_S;
        assert!(
            (stated - want).abs() <= frame + 0.0005,
            "{fixture}: MPD lasts {stated} s, source {format_duration} s + pre-roll"
        );
    }
    server.shutdown().await;
}

/// Every HLS media playlist states EXT-X-TARGETDURATION as its longest EXTINF rounded to
/// the nearest second; its init segment is served as an MP4 (`ftyp` first) and every
/// segment it lists is served (200) as a CMAF fragment starting with a `moof` box. With
/// 1 s targets, every fixture (3 s or longer) is cut into at least 3 segments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_media_playlists_list_servable_fragments() {
    let Some(server) = start().await else { return };
    for &fixture in FIXTURES {
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
        let playlists = master_playlist_uris(&master);
        assert!(
            !playlists.is_empty(),
            "{fixture}: no media playlists in\n{master}"
        );
        for uri in playlists {
            let path = format!("{base}{uri}");
            let playlist = fetch_text(&server, &path).await;
            let media = MediaPlaylist::parse(&playlist);
            let longest = media.extinfs.iter().copied().fold(0.0, f64::max);
            assert_eq!(
                media.target_duration,
                Some(longest.round() as u64),
                "{path}: EXT-X-TARGETDURATION vs longest EXTINF {longest}\n{playlist}"
            );
            assert_eq!(
                media.extinfs.len(),
                media.segments.len(),
                "{path}: one EXTINF per segment\n{playlist}"
            );
            assert!(
                media.segments.len() >= 3,
                "{path}: only {} segments with a 1 s target\n{playlist}",
                media.segments.len()
            );

            let init_uri = media.map_uri.as_deref().unwrap_or_else(|| {
                panic!("{path}: no EXT-X-MAP\n{playlist}");
            });
            let init = fetch_ok(&server, &format!("{base}{init_uri}")).await;
            assert_eq!(
                init.body.get(4..8),
                Some(&b"ftyp"[..]),
                "{path}: init segment {init_uri} does not start with ftyp"
            );
            for segment in &media.segments {
                let reply = fetch_ok(&server, &format!("{base}{segment}")).await;
                assert_eq!(
                    reply.body.get(4..8),
                    Some(&b"moof"[..]),
                    "{path}: segment {segment} does not start with a moof box"
                );
            }
        }
    }
    server.shutdown().await;
}
