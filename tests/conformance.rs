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

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TestServer;
use vodpack::config::Settings;

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
    // A rung of the ladder title (issue 11), also a plain MP4 (see fixtures/README.md).
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
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
                    .filter(|s| s.kind != "subtitle" && s.kind != "data")
                    .count()
            };
            assert_eq!(shown(&output), shown(&source), "{fixture} via {via:?}");

            // ffmpeg's DASH demuxer keeps only whole seconds of mediaPresentationDuration,
            // so this check is coarse there; the per-stream spans below are exact. Through
            // HLS, ffmpeg takes the title's duration from one rendition, while the source's
            // runs from its earliest stream start: when the streams start apart (a
            // fragmented file has no edit list to align them), the two differ by that much.
            let (Some(want), Some(got)) = (source.duration, output.duration) else {
                panic!("{fixture} via {via:?}: no format duration");
            };
            // An HLS playlist lasts from its first segment, video pre-roll included; the
            // DASH Period starts at the presentation start.
            let preroll_s = video_preroll_frames(fixture) as f64 * VIDEO_FRAME_S;
            let want = match via {
                Via::Hls => want + preroll_s,
                _ => want,
            };
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
                if pair.kind == "audio" && got - want > tolerance {
                    got -= AAC_FRAME as f64 / 48_000.0;
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
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
                let Some(offset) = pcm_offset(&want, &got) else {
                    panic!(
                        "{what}: no offset in 0..={} frames makes the PCM match the source \
                         ({} source frames, {} output frames)",
                        2 * AAC_FRAME,
                        want.len(),
                        got.len()
                    );
                };
                assert!(
                    offset <= frame,
                    "{what}: output starts {offset} frames early, more than one priming frame"
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let tracks = source_tracks(&source_input).await;
        let format_duration = probe_streams(&source_input)
            .await
            .duration
            .expect("source format duration");
        let base = format!("/vod/{fixture}/");
        let master = fetch_ok(&server, &format!("{base}master.m3u8"))
            .await
            .text();
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
            let playlist = fetch_ok(&server, &format!("{base}{uri}")).await.text();
            let media = MediaPlaylist::parse(&playlist);
            let total: f64 = media.extinfs.iter().sum();
            // EXTINF is written to the microsecond: allow that rounding per segment.
            let rounding = 1e-6 * media.extinfs.len() as f64;
            assert!(
                (total - track.duration).abs() <= track.frame + rounding,
                "{fixture}: {uri} lasts {total:.6} s, source track {track_id} ({}) lasts {:.6} s",
                track.kind,
                track.duration
            );
            checked += 1;
        }
        assert_eq!(checked, tracks.len(), "{fixture}: one playlist per track");

        let mpd = fetch_ok(&server, &format!("{base}manifest.mpd"))
            .await
            .text();
        let stated =
            mpd_duration(&mpd).unwrap_or_else(|| panic!("{fixture}: no duration in\n{mpd}"));
        let frame = tracks
            .iter()
            .filter(|t| t.kind == "video")
            .chain(tracks.iter())
            .map(|t| t.frame)
            .next()
            .unwrap_or(0.0);
        // mediaPresentationDuration is written to the millisecond.
        assert!(
            (stated - format_duration).abs() <= frame + 0.0005,
            "{fixture}: MPD lasts {stated} s, source {format_duration} s"
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
    if !tools_available().await {
        return;
    }
    let server = start().await;
    for &fixture in FIXTURES {
        let base = format!("/vod/{fixture}/");
        let master = fetch_ok(&server, &format!("{base}master.m3u8"))
            .await
            .text();
        let playlists = master_playlist_uris(&master);
        assert!(
            !playlists.is_empty(),
            "{fixture}: no media playlists in\n{master}"
        );
        for uri in playlists {
            let path = format!("{base}{uri}");
            let playlist = fetch_ok(&server, &path).await.text();
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

/// Every text track of the source (`tx3g`, read with ffmpeg; `wvtt`, which ffmpeg cannot
/// read, against the cues its fixture was written with) reaches players through both
/// protocols with its language, and with the source's cues: the same text and markup
/// (italics of `tx3g` style boxes included) at the same times on the video's output timeline (source time + S,
/// S measured on the video as in the timing test), within 1 ms.
/// - HLS: the `SUBTITLES` rendition every variant references; its playlist's segments
///   match the video playlist's, each WebVTT segment holds the cues that overlap its
///   span (a cue spanning a cut is in both, counted once), and `X-TIMESTAMP-MAP` maps
///   its times to the video's timeline (as hls.js: local - LOCAL + MPEGTS / 90000).
/// - DASH: the `text/vtt` AdaptationSet's file, whose times are on the Period timeline,
///   so output time = file time + the video's `presentationTimeOffset`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_carry_the_source_cues() {
    if !tools_available().await {
        return;
    }
    let server = start().await;
    let mut checked = 0;
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        let known = KNOWN_CUES.iter().find(|(name, _)| *name == fixture);
        let text_kind = if known.is_some() { "data" } else { "subtitle" };
        let Some(text) = source.streams.iter().find(|s| s.kind == text_kind) else {
            continue;
        };
        let language = text.language.clone().filter(|l| l != "und");
        let want = match known {
            Some((_, cues)) => (cues.iter())
                .map(|&(start, end, text)| VttCue {
                    start,
                    end,
                    text: text.to_owned(),
                })
                .collect(),
            None => {
                let source_vtt = run_tool(
                    "ffmpeg",
                    args(&[
                        "-v",
                        "error",
                        "-nostdin",
                        "-i",
                        &source_input,
                        "-map",
                        "0:s:0",
                        "-f",
                        "webvtt",
                        "-",
                    ]),
                )
                .await;
                WebVtt::parse(&String::from_utf8_lossy(&source_vtt)).cues
            }
        };
        assert!(want.len() >= 2, "{fixture}: source cues {want:?}");
        let source_video = first_pts(&source_input, "v:0").await;
        let base = format!("/vod/{fixture}/");
        for via in Via::OUTPUTS {
            let shift = first_pts(&via.input(&server, fixture), "v:0").await - source_video;
            let got = match via {
                Via::Hls => hls_cues(&server, &base, language.as_deref(), shift).await,
                _ => dash_cues(&server, &base, language.as_deref()).await,
            };
            assert_eq!(
                got.len(),
                want.len(),
                "{fixture} via {via:?}: cues {got:?}, source {want:?}"
            );
            for (got, want) in got.iter().zip(&want) {
                assert_eq!(
                    unescaped(&got.text),
                    unescaped(&want.text),
                    "{fixture} via {via:?}"
                );
                for (what, out, src) in
                    [("start", got.start, want.start), ("end", got.end, want.end)]
                {
                    assert!(
                        (out - (src + shift)).abs() <= SYNC_TOLERANCE_S + 1e-6,
                        "{fixture} via {via:?}: cue {:?} {what} at {out:.6} s, source \
                         {src:.3} s + S {shift:.6} s",
                        want.text
                    );
                }
            }
        }
        checked += 1;
    }
    // h264-aac-movtext-3s.mp4 (tx3g) and h264-aac-wvtt-3s.mp4.
    assert_eq!(checked, 2, "fixtures with a text track");
    server.shutdown().await;
}

/// The cues of the HLS subtitle rendition of the title at `base`, on the output timeline,
/// each once. Checks the rendition's attributes, that every variant references its group,
/// that its segments match the video's, and that each segment holds only cues overlapping
/// its span (the video segment's: S + the EXTINFs before it; the first reaches back and
/// the last forward without end).
async fn hls_cues(
    server: &TestServer,
    base: &str,
    language: Option<&str>,
    shift: f64,
) -> Vec<VttCue> {
    let master = fetch_ok(server, &format!("{base}master.m3u8")).await.text();
    let media: Vec<&str> = (master.lines())
        .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES"))
        .collect();
    assert_eq!(media.len(), 1, "{base}: one subtitle rendition\n{master}");
    let group = quoted_attribute(media[0], "GROUP-ID").expect("GROUP-ID");
    assert_eq!(
        quoted_attribute(media[0], "LANGUAGE").as_deref(),
        language,
        "{master}"
    );
    for inf in master
        .lines()
        .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"))
    {
        assert_eq!(
            quoted_attribute(inf, "SUBTITLES").as_ref(),
            Some(&group),
            "{inf}"
        );
    }
    let uri = quoted_attribute(media[0], "URI").expect("URI");
    let folder = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
    let playlist = MediaPlaylist::parse(&fetch_ok(server, &format!("{base}{uri}")).await.text());
    let video_uri = master
        .lines()
        .skip_while(|l| !l.starts_with("#EXT-X-STREAM-INF:"))
        .nth(1)
        .expect("a variant");
    let video = MediaPlaylist::parse(&fetch_ok(server, &format!("{base}{video_uri}")).await.text());
    assert_eq!(
        playlist.extinfs, video.extinfs,
        "{base}{uri}: segment durations"
    );
    assert_eq!(playlist.target_duration, video.target_duration);
    let mut cues: Vec<VttCue> = Vec::new();
    let mut start = shift;
    let last = playlist.segments.len().saturating_sub(1);
    for (j, (segment, extinf)) in playlist.segments.iter().zip(&playlist.extinfs).enumerate() {
        let reply = fetch_ok(server, &format!("{base}{folder}{segment}")).await;
        assert!(
            reply
                .headers
                .iter()
                .any(|(k, v)| k == "content-type" && v.starts_with("text/vtt")),
            "{segment}: {:?}",
            reply.headers
        );
        let vtt = WebVtt::parse(&reply.text());
        let (local, mpegts) = vtt.timestamp_map.expect("X-TIMESTAMP-MAP in every segment");
        let end = start + extinf;
        for cue in vtt.cues {
            let cue = VttCue {
                start: cue.start - local + mpegts as f64 / 90_000.0,
                end: cue.end - local + mpegts as f64 / 90_000.0,
                text: cue.text,
            };
            assert!(
                (j == 0 || cue.end > start - SYNC_TOLERANCE_S)
                    && (j == last || cue.start < end + SYNC_TOLERANCE_S),
                "{segment} ({start:.3}..{end:.3} s) holds {cue:?}"
            );
            // A cue written whole in two segments counts once; a cue cut at a segment's
            // edge (`wvtt`) continues in the next one, and shows as one cue.
            if cues.contains(&cue) {
                continue;
            }
            let continues = cues.iter_mut().find(|c| {
                c.text == cue.text && (cue.start - c.end).abs() <= SYNC_TOLERANCE_S / 2.0
            });
            match continues {
                Some(earlier) => earlier.end = earlier.end.max(cue.end),
                None => cues.push(cue),
            }
        }
        start = end;
    }
    cues
}

/// The cues of the DASH text AdaptationSet of the title at `base`, on the output timeline
/// (file time + the video's presentationTimeOffset). Checks its `lang` and MIME type.
async fn dash_cues(server: &TestServer, base: &str, language: Option<&str>) -> Vec<VttCue> {
    let mpd = fetch_ok(server, &format!("{base}manifest.mpd"))
        .await
        .text();
    let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
    let text_sets: Vec<&&str> = sets
        .iter()
        .filter(|s| s.contains("contentType=\"text\""))
        .collect();
    assert_eq!(text_sets.len(), 1, "{base}: one text AdaptationSet\n{mpd}");
    let set = text_sets[0];
    assert_eq!(xml_attribute(set, "mimeType").as_deref(), Some("text/vtt"));
    assert_eq!(xml_attribute(set, "lang").as_deref(), language);
    let start = set.find("<BaseURL>").expect("BaseURL") + "<BaseURL>".len();
    let url = &set[start..start + set[start..].find("</BaseURL>").expect("</BaseURL>")];
    let video = sets
        .iter()
        .find(|s| s.contains("contentType=\"video\""))
        .expect("a video AdaptationSet");
    let timescale: f64 = xml_attribute(video, "timescale")
        .expect("timescale")
        .parse()
        .unwrap();
    let offset: f64 =
        xml_attribute(video, "presentationTimeOffset").map_or(0.0, |o| o.parse().unwrap());
    let vtt = WebVtt::parse(&fetch_ok(server, &format!("{base}{url}")).await.text());
    assert_eq!(vtt.timestamp_map, None, "{url}: no X-TIMESTAMP-MAP in DASH");
    (vtt.cues.into_iter())
        .map(|c| VttCue {
            start: c.start + offset / timescale,
            end: c.end + offset / timescale,
            text: c.text,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Server and HTTP helpers
// ---------------------------------------------------------------------------------------

/// Whether ffmpeg and ffprobe are both installed (see `common::have_tool`), checked on the
/// blocking pool. A panic from `have_tool` (tools required but missing) is passed on.
async fn tools_available() -> bool {
    tokio::task::spawn_blocking(|| common::have_tool("ffmpeg") && common::have_tool("ffprobe"))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// A server over the fixtures with 1 s target segments.
async fn start() -> TestServer {
    common::start_server_with(
        &common::fixtures(),
        Settings {
            segment_duration_ms: 1000,
            ..Default::default()
        },
    )
    .await
}

/// GET `path`, asserting a 200 answer.
async fn fetch_ok(server: &TestServer, path: &str) -> common::Reply {
    let reply = common::get(server.addr, path).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
    reply
}

/// The media playlist URIs of an HLS multivariant playlist: the line after each
/// `#EXT-X-STREAM-INF` and the `URI` of each `#EXT-X-MEDIA` but subtitles (WebVTT, not
/// CMAF: see `hls_and_dash_carry_the_source_cues`).
fn master_playlist_uris(master: &str) -> Vec<String> {
    let mut uris = Vec::new();
    for line in master.lines().map(str::trim) {
        if line.starts_with("#EXT-X-MEDIA:") && !line.contains("TYPE=SUBTITLES") {
            uris.extend(quoted_attribute(line, "URI"));
        } else if !line.is_empty() && !line.starts_with('#') {
            uris.push(line.to_owned());
        }
    }
    uris
}

/// The value of `NAME="value"` in an HLS tag line.
fn quoted_attribute(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("{name}=\""))? + name.len() + 2;
    let len = line[start..].find('"')?;
    Some(line[start..start + len].to_owned())
}

/// The parts of an HLS media playlist these tests look at.
#[derive(Debug, Default)]
struct MediaPlaylist {
    target_duration: Option<u64>,
    /// The duration of each `#EXTINF`, in order.
    extinfs: Vec<f64>,
    /// The init segment URI (`#EXT-X-MAP`).
    map_uri: Option<String>,
    /// The segment URIs, in order.
    segments: Vec<String>,
}

impl MediaPlaylist {
    fn parse(text: &str) -> Self {
        let mut playlist = Self::default();
        for line in text.lines().map(str::trim) {
            if let Some(value) = line.strip_prefix("#EXT-X-TARGETDURATION:") {
                playlist.target_duration = Some(value.parse().expect("integer target duration"));
            } else if let Some(value) = line.strip_prefix("#EXTINF:") {
                let seconds = value.split(',').next().unwrap_or_default();
                playlist
                    .extinfs
                    .push(seconds.parse().expect("decimal EXTINF duration"));
            } else if line.starts_with("#EXT-X-MAP:") {
                playlist.map_uri = quoted_attribute(line, "URI");
            } else if !line.is_empty() && !line.starts_with('#') {
                playlist.segments.push(line.to_owned());
            }
        }
        playlist
    }
}

// ---------------------------------------------------------------------------------------
// ffmpeg / ffprobe helpers
// ---------------------------------------------------------------------------------------

/// Where ffmpeg reads a title from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// The MP4 file itself.
    Source,
    /// The server's HLS multivariant playlist.
    Hls,
    /// The server's DASH MPD.
    Dash,
}

impl Via {
    /// The two ways the server packages a title.
    const OUTPUTS: [Via; 2] = [Via::Hls, Via::Dash];

    /// The ffmpeg input (path or URL) for `fixture`.
    fn input(self, server: &TestServer, fixture: &str) -> String {
        match self {
            Via::Source => common::fixtures()
                .join(fixture)
                .to_string_lossy()
                .into_owned(),
            Via::Hls => server.url(&format!("/vod/{fixture}/master.m3u8")),
            Via::Dash => server.url(&format!("/vod/{fixture}/manifest.mpd")),
        }
    }
}

/// Run `program` with `args` on the blocking pool and return its stdout. Panics, with the
/// program's stderr, if it fails, and kills it if it runs longer than `TOOL_LIMIT`.
async fn run_tool(program: &'static str, args: Vec<String>) -> Vec<u8> {
    tokio::task::spawn_blocking(move || run_bounded(program, &args))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// The blocking part of `run_tool`.
fn run_bounded(program: &str, args: &[String]) -> Vec<u8> {
    let command_line = format!("{program} {}", args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {command_line}: {e}"));
    // Drain both pipes on their own threads, so a child writing a lot never stalls on a
    // full pipe while we wait for it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());

    let deadline = Instant::now() + TOOL_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command_line}: still running after {TOOL_LIMIT:?}; killed");
            }
            Err(e) => panic!("{command_line}: wait: {e}"),
        }
    };
    let stdout = stdout.join().expect("stdout reader");
    let stderr = stderr.join().expect("stderr reader");
    assert!(
        status.success(),
        "{command_line}: {status}\n{}",
        String::from_utf8_lossy(&stderr)
    );
    stdout
}

/// Read `pipe` to its end on a new thread.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// `args` as owned strings.
fn args(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// One stream as ffprobe lists it.
#[derive(Debug, Clone, Default)]
struct StreamInfo {
    /// `codec_type`: "video", "audio", ...
    kind: String,
    /// `codec_name`: "h264", "hevc", "aac", ...
    codec: String,
    /// The `language` tag, if any.
    language: Option<String>,
    /// `pix_fmt`, `color_primaries` and `color_transfer` (video): the bit depth and
    /// colour a player is told, from the sample entry or the codec's own header.
    pix_fmt: String,
    color_primaries: String,
    color_transfer: String,
}

/// What ffprobe says about an input as a whole.
#[derive(Debug, Default)]
struct Probe {
    /// Streams in ffprobe's order (the order `v:N` / `a:N` selectors count in).
    streams: Vec<StreamInfo>,
    /// The format duration in seconds, if ffprobe knows one.
    duration: Option<f64>,
}

impl Probe {
    /// How many streams of `kind` there are.
    fn count(&self, kind: &str) -> usize {
        self.streams.iter().filter(|s| s.kind == kind).count()
    }
}

/// Probe the streams and format duration of `input`.
async fn probe_streams(input: &str) -> Probe {
    let out = run_tool(
        "ffprobe",
        args(&[
            "-v",
            "error",
            "-show_entries",
            "stream=codec_type,codec_name,pix_fmt,color_primaries,color_transfer\
             :stream_tags=language:format=duration",
            "-of",
            "flat",
            input,
        ]),
    )
    .await;
    parse_flat_probe(&String::from_utf8_lossy(&out))
}

/// Parse ffprobe's `flat` output: `streams.stream.N.KEY="VALUE"` and
/// `format.duration="SECONDS"` lines. The `programs.program.*` copies are ignored.
fn parse_flat_probe(text: &str) -> Probe {
    let mut probe = Probe::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        if key == "format.duration" {
            probe.duration = value.parse().ok();
            continue;
        }
        let Some(rest) = key.strip_prefix("streams.stream.") else {
            continue;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        let index: usize = index.parse().expect("stream index");
        if probe.streams.len() <= index {
            probe.streams.resize(index + 1, StreamInfo::default());
        }
        let stream = &mut probe.streams[index];
        match field {
            "codec_type" => stream.kind = value.to_owned(),
            "codec_name" => stream.codec = value.to_owned(),
            "tags.language" => stream.language = Some(value.to_owned()),
            "pix_fmt" => stream.pix_fmt = value.to_owned(),
            "color_primaries" => stream.color_primaries = value.to_owned(),
            "color_transfer" => stream.color_transfer = value.to_owned(),
            _ => {}
        }
    }
    probe
}

/// A source stream and the output stream that carries it.
#[derive(Debug)]
struct StreamPair {
    /// "video" or "audio".
    kind: String,
    /// Index into the source `Probe::streams`, and its ffmpeg selector (`v:0`, `a:1`).
    source: usize,
    source_selector: String,
    /// The same for the output.
    output: usize,
    output_selector: String,
}

/// Pair every video and audio stream of the source with the output stream that carries
/// it: the N-th stream of the same kind, except that audio with a language (other than
/// `und`) goes to the first unpaired output audio stream with that language, since HLS
/// lists its renditions in its own order. Panics if a source stream has no partner.
fn pair_streams(source: &Probe, output: &Probe, fixture: &str, via: Via) -> Vec<StreamPair> {
    // (kind, position among streams of that kind, index) of each output stream.
    let numbered = |probe: &Probe| -> Vec<(String, usize, usize)> {
        let mut seen: Vec<String> = Vec::new();
        probe
            .streams
            .iter()
            .enumerate()
            .map(|(index, s)| {
                let n = seen.iter().filter(|k| **k == s.kind).count();
                seen.push(s.kind.clone());
                (s.kind.clone(), n, index)
            })
            .collect()
    };
    let outputs = numbered(output);
    let mut used = vec![false; outputs.len()];
    let mut pairs = Vec::new();
    for (kind, n, index) in numbered(source) {
        if kind != "video" && kind != "audio" {
            continue;
        }
        let language = source.streams[index]
            .language
            .as_deref()
            .filter(|l| kind == "audio" && *l != "und");
        let found = outputs.iter().position(|(out_kind, out_n, out_index)| {
            *out_kind == kind
                && match language {
                    Some(l) => {
                        !used[*out_index]
                            && output.streams[*out_index].language.as_deref() == Some(l)
                    }
                    None => *out_n == n,
                }
        });
        let Some(found) = found else {
            panic!(
                "{fixture} via {via:?}: no output stream for source {kind} #{n} \
                 (language {language:?}); output streams: {:?}",
                output.streams
            );
        };
        used[found] = true;
        let (_, out_n, out_index) = &outputs[found];
        let letter = &kind[..1];
        pairs.push(StreamPair {
            source: index,
            source_selector: format!("{letter}:{n}"),
            output: *out_index,
            output_selector: format!("{letter}:{out_n}"),
            kind,
        });
    }
    pairs
}

/// An audio or video track of a source file, as ffprobe states it.
#[derive(Debug)]
struct SourceTrack {
    /// The MP4 track id (ffprobe's stream `id`).
    track_id: u32,
    /// "video" or "audio".
    kind: String,
    /// The stream's duration in seconds (after its edit list).
    duration: f64,
    /// Its longest packet, in seconds: one frame.
    frame: f64,
}

/// The audio and video tracks of the file `input`.
async fn source_tracks(input: &str) -> Vec<SourceTrack> {
    let out = run_tool(
        "ffprobe",
        args(&[
            "-v",
            "error",
            "-show_entries",
            "stream=id,codec_type,duration",
            "-of",
            "csv=p=0",
            input,
        ]),
    )
    .await;
    let mut tracks = Vec::new();
    let mut counts = [0usize; 2];
    for line in String::from_utf8_lossy(&out).lines() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [id, kind, duration] = fields[..] else {
            continue;
        };
        let slot = match kind {
            "video" => 0,
            "audio" => 1,
            _ => continue,
        };
        let selector = format!("{}:{}", &kind[..1], counts[slot]);
        counts[slot] += 1;
        let frame = packets(input, &selector)
            .await
            .iter()
            .filter_map(|p| p.duration)
            .fold(0.0, f64::max);
        tracks.push(SourceTrack {
            track_id: u32::from_str_radix(id.trim_start_matches("0x"), 16).expect("stream id"),
            kind: kind.to_owned(),
            duration: duration.parse().expect("stream duration"),
            frame,
        });
    }
    tracks
}

/// `mediaPresentationDuration` of an MPD (`PT[nH][nM]n.nnnS`), in seconds.
fn mpd_duration(mpd: &str) -> Option<f64> {
    let start = mpd.find("mediaPresentationDuration=\"")? + "mediaPresentationDuration=\"".len();
    let value = mpd[start..].split('"').next()?.strip_prefix("PT")?;
    let mut seconds = 0.0;
    let mut number = String::new();
    for c in value.chars() {
        match c {
            'H' => seconds += number.parse::<f64>().ok()? * 3600.0,
            'M' => seconds += number.parse::<f64>().ok()? * 60.0,
            'S' => seconds += number.parse::<f64>().ok()?,
            _ => {
                number.push(c);
                continue;
            }
        }
        number.clear();
    }
    Some(seconds)
}

/// One packet as ffprobe lists it (seconds).
#[derive(Debug, Clone)]
struct Packet {
    pts: f64,
    /// Unknown for some packets (ffprobe prints N/A for the first fragmented one).
    duration: Option<f64>,
    /// MD5 of the packet's bytes.
    hash: String,
}

/// The packets of stream `selector` (e.g. `a:1`) of `input` that are presented, in decode
/// order. Packets the demuxer flags as discarded (`D`: pre-roll and trailing frames an edit
/// list leaves out, which ffmpeg decodes but does not show) are left out.
async fn packets(input: &str, selector: &str) -> Vec<Packet> {
    let out = run_tool(
        "ffprobe",
        args(&[
            "-v",
            "error",
            "-select_streams",
            selector,
            "-show_entries",
            "packet=pts_time,duration_time,flags,data_hash",
            "-show_data_hash",
            "md5",
            "-of",
            "compact",
            input,
        ]),
    )
    .await;
    // One record per `packet|` line; a packet with side data continues on lines of its own.
    let text = String::from_utf8_lossy(&out);
    let mut records: Vec<String> = Vec::new();
    for line in text.lines() {
        match (line.starts_with("packet|"), records.last_mut()) {
            (false, Some(last)) => last.push_str(line),
            _ => records.push(line.to_owned()),
        }
    }
    let packets: Vec<Packet> = records
        .iter()
        .filter_map(|record| {
            let field = |name: &str| {
                record
                    .split('|')
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            };
            if field("flags")?.contains('D') {
                return None;
            }
            Some(Packet {
                pts: field("pts_time")?.trim().parse().ok()?,
                duration: field("duration_time").and_then(|d| d.trim().parse().ok()),
                hash: field("data_hash").unwrap_or_default().to_owned(),
            })
        })
        .collect();
    assert!(!packets.is_empty(), "{input} {selector}: no packets");
    packets
}

/// Output pts minus source pts of the source's first packet, found in `output` as the start
/// of a run of packets with the same bytes as the source's first ones (up to 48: a second
/// of AAC, past any run of identical silent frames).
fn matched_shift(source: &[Packet], output: &[Packet]) -> Option<f64> {
    let run = source.len().min(48);
    let want: Vec<&str> = source[..run].iter().map(|p| p.hash.as_str()).collect();
    (0..output.len()).find_map(|j| {
        let got = output.get(j..j + run)?;
        got.iter()
            .map(|p| p.hash.as_str())
            .eq(want.iter().copied())
            .then(|| output[j].pts - source[0].pts)
    })
}

/// The presentation time of the first packet (in decode order) of stream `selector`.
async fn first_pts(input: &str, selector: &str) -> f64 {
    packets(input, selector).await[0].pts
}

/// Output pts minus source pts of the source's last run of packets (up to 20), found last
/// in `output` by their bytes.
fn matched_end_shift(source: &[Packet], output: &[Packet]) -> Option<f64> {
    let run = source.len().min(20);
    let want = &source[source.len() - run..];
    (0..=output.len().checked_sub(run)?).rev().find_map(|j| {
        (output[j..j + run].iter().map(|p| p.hash.as_str()))
            .eq(want.iter().map(|p| p.hash.as_str()))
            .then(|| output[j].pts - want[0].pts)
    })
}

/// How long a stream lasts: the latest packet end minus the earliest presentation time.
/// Independent of any shift of the whole timeline.
fn span(packets: &[Packet]) -> f64 {
    let start = packets.iter().map(|p| p.pts).fold(f64::INFINITY, f64::min);
    let end = packets
        .iter()
        .map(|p| p.pts + p.duration.unwrap_or(0.0))
        .fold(f64::NEG_INFINITY, f64::max);
    end - start
}

/// One decoded video frame: its presentation time (seconds, as ffmpeg's output timeline
/// has it) and the MD5 of its picture.
#[derive(Debug, Clone)]
struct Frame {
    pts_s: f64,
    hash: String,
}

/// Every decoded frame of video stream `selector`, in output order. Hashes are compared
/// without timestamps, since the output timeline is shifted; `-vsync passthrough` keeps
/// ffmpeg from dropping or duplicating frames.
async fn frame_hashes(input: &str, selector: &str) -> Vec<Frame> {
    let map = format!("0:{selector}");
    let out = run_tool(
        "ffmpeg",
        args(&[
            "-v",
            "error",
            "-nostdin",
            "-i",
            input,
            "-map",
            &map,
            "-vsync",
            "passthrough",
            "-f",
            "framemd5",
            "-",
        ]),
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    // `#tb 0: 1/30`: the time base of the pts column.
    let time_base = text
        .lines()
        .find_map(|line| line.strip_prefix("#tb 0:"))
        .and_then(|tb| {
            let (num, den) = tb.trim().split_once('/')?;
            Some(num.parse::<f64>().ok()? / den.parse::<f64>().ok()?)
        })
        .expect("framemd5 states its time base");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            Frame {
                pts_s: fields
                    .get(2)
                    .and_then(|p| p.parse::<f64>().ok())
                    .unwrap_or(0.0)
                    * time_base,
                hash: fields.last().copied().unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// Audio stream `selector` of `input` decoded to 16-bit stereo PCM, one `[left, right]`
/// per sample frame, through the audio `filter` if any.
async fn decode_pcm(input: &str, selector: &str, filter: Option<&str>) -> Vec<[i16; 2]> {
    let map = format!("0:{selector}");
    let mut command = args(&["-v", "error", "-nostdin", "-i", input, "-map", &map]);
    if let Some(filter) = filter {
        command.extend(args(&["-af", filter]));
    }
    command.extend(args(&["-f", "s16le", "-ac", "2", "-"]));
    let out = run_tool("ffmpeg", command).await;
    out.chunks_exact(4)
        .map(|b| {
            [
                i16::from_le_bytes([b[0], b[1]]),
                i16::from_le_bytes([b[2], b[3]]),
            ]
        })
        .collect()
}

/// Samples per channel in one frame of the audio codec ffprobe names: the most a priming
/// frame or a short last frame may add. AAC's stands for the codecs without priming.
fn audio_frame(codec: &str) -> usize {
    match codec {
        "mp3" => MP3_FRAME,
        _ => AAC_FRAME,
    }
}

/// The smallest number of leading output frames (0 to two AAC frames) to skip so that the
/// rest of `output` equals `source` over their common length, or `None`. The common length
/// must reach to within one AAC frame of the source's end, so a match cannot come from a
/// short overlap.
fn pcm_offset(source: &[[i16; 2]], output: &[[i16; 2]]) -> Option<usize> {
    (0..=2 * AAC_FRAME).find(|&offset| {
        let Some(rest) = output.get(offset..) else {
            return false;
        };
        let common = rest.len().min(source.len());
        common + AAC_FRAME >= source.len() && rest[..common] == source[..common]
    })
}

// ---------------------------------------------------------------------------------------
// WebVTT helpers
// ---------------------------------------------------------------------------------------

/// One WebVTT cue: times in seconds, text lines joined by `\n`.
#[derive(Debug, Clone, PartialEq)]
struct VttCue {
    start: f64,
    end: f64,
    text: String,
}

/// The parts of a WebVTT file these tests look at.
#[derive(Debug, Default)]
struct WebVtt {
    /// `X-TIMESTAMP-MAP` as (LOCAL in seconds, MPEGTS in 90 kHz ticks).
    timestamp_map: Option<(f64, i64)>,
    cues: Vec<VttCue>,
}

impl WebVtt {
    fn parse(text: &str) -> Self {
        let text = text.replace("\r\n", "\n");
        assert!(text.starts_with("WEBVTT"), "not WebVTT:\n{text}");
        let mut vtt = WebVtt::default();
        for (n, block) in text.split("\n\n").enumerate() {
            let lines: Vec<&str> = block.lines().collect();
            if n == 0 {
                for line in &lines {
                    if let Some(map) = line.strip_prefix("X-TIMESTAMP-MAP=") {
                        let (mut local, mut mpegts) = (None, None);
                        for part in map.split(',') {
                            if let Some(v) = part.strip_prefix("LOCAL:") {
                                local = Some(vtt_time(v));
                            } else if let Some(v) = part.strip_prefix("MPEGTS:") {
                                mpegts = Some(v.parse().expect("MPEGTS"));
                            }
                        }
                        vtt.timestamp_map = Some((local.expect("LOCAL"), mpegts.expect("MPEGTS")));
                    }
                }
                continue;
            }
            let Some(timing) = lines.iter().position(|l| l.contains("-->")) else {
                continue;
            };
            let (start, rest) = lines[timing].split_once("-->").unwrap();
            let end = rest.split_whitespace().next().expect("end time");
            vtt.cues.push(VttCue {
                start: vtt_time(start.trim()),
                end: vtt_time(end),
                text: lines[timing + 1..].join("\n"),
            });
        }
        vtt
    }
}

/// A WebVTT timestamp (`[HH:]MM:SS.mmm`) in seconds.
fn vtt_time(text: &str) -> f64 {
    let (rest, millis) = text.rsplit_once('.').expect("milliseconds");
    let mut seconds = 0.0;
    for part in rest.split(':') {
        seconds = seconds * 60.0 + part.parse::<f64>().expect("time field");
    }
    seconds + millis.parse::<f64>().expect("milliseconds") / 1000.0
}

/// Cue text with its three character references undone (ffmpeg's WebVTT writer leaves a
/// bare `&`, which is not valid WebVTT; vodpack writes `&amp;`). Tags are kept.
fn unescaped(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of `name="value"` in XML text.
fn xml_attribute(text: &str, name: &str) -> Option<String> {
    let start = text.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = text[start..].find('"')?;
    Some(text[start..start + len].to_owned())
}

// ---------------------------------------------------------------------------------------
// Titles (issue 11): the ladder fixture's title document
// ---------------------------------------------------------------------------------------

/// The ladder fixture's title document, and the file behind each of its file numbers
/// (`f1`, `f2`, ... in resource names: distinct files in document order).
const LADDER_DOCUMENT: &str = "ladder/ladder.json";
const LADDER_FILES: &[&str] = &[
    "ladder/ladder-180p.mp4",
    "ladder/ladder-360p.mp4",
    "ladder/ladder-270p.mp4",
    "ladder/ladder-fr.m4a",
    "ladder/ladder-en.vtt",
    "ladder/ladder-de.srt",
];

/// The source file of a document rendition's resource name (`index-f2-t1.m3u8`).
fn ladder_source(name: &str) -> String {
    let file: usize = name
        .split("-f")
        .nth(1)
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .expect("a document rendition name");
    let fixture = LADDER_FILES[file - 1];
    common::fixtures()
        .join(fixture)
        .to_string_lossy()
        .into_owned()
}

/// Every variant of the ladder decodes, through HLS and through DASH, to the frames of
/// its own source file; the audio of both languages decodes to its source's PCM; every
/// rendition is moved by the same shift (video and audio, within 1 ms), so A/V holds
/// whichever variant plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_variants_decode_to_their_own_sources() {
    if !tools_available().await {
        return;
    }
    let server = start().await;
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_ok(&server, &format!("{base}master.m3u8"))
        .await
        .text();
    let uris = master_playlist_uris(&master);
    assert_eq!(uris.len(), 5, "3 variants and 2 audio renditions: {master}");
    let mut shifts = Vec::new();
    for uri in &uris {
        let source = ladder_source(uri);
        let input = server.url(&format!("{base}{uri}"));
        let video = !uri.ends_with("-f4-t1.m3u8") && !uri.ends_with("-t2.m3u8");
        if video {
            let want = frame_hashes(&source, "v:0").await;
            let got = frame_hashes(&input, "v:0").await;
            assert_eq!(got.len(), want.len(), "{uri}: number of frames");
            if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
                panic!("{uri}: decoded frame {i} differs from {source}");
            }
        } else {
            let want = decode_pcm(&source, "a:0", None).await;
            let got = decode_pcm(&input, "a:0", None).await;
            assert!(want.len() >= 48_000, "{uri}: vacuous");
            let offset = pcm_offset(&want, &got)
                .unwrap_or_else(|| panic!("{uri}: the PCM of {source} is not in the output"));
            assert!(offset <= AAC_FRAME, "{uri}: starts {offset} frames early");
        }
        let selector = if video { "v:0" } else { "a:0" };
        let src = packets(&source, selector).await;
        let out = packets(&input, selector).await;
        let shift = matched_shift(&src, &out)
            .unwrap_or_else(|| panic!("{uri}: the first packets of {source} are not there"));
        shifts.push((uri.clone(), shift));
    }
    let (_, first) = shifts[0].clone();
    for (uri, shift) in &shifts {
        assert!(
            (shift - first).abs() <= SYNC_TOLERANCE_S,
            "{uri} moved by {shift:.6} s, the first variant by {first:.6} s: {shifts:?}"
        );
    }
    // DASH: the video AdaptationSet's Representations in order, each its own source.
    let mpd = fetch_ok(&server, &format!("{base}manifest.mpd"))
        .await
        .text();
    let ids: Vec<String> = (mpd.split("<Representation id=\"").skip(1))
        .filter_map(|rest| rest.split('"').next().map(str::to_owned))
        .collect();
    let input = server.url(&format!("{base}manifest.mpd"));
    for (n, id) in ids.iter().take(3).enumerate() {
        let source = ladder_source(&format!("index-{id}.m3u8"));
        let want = frame_hashes(&source, "v:0").await;
        let got = frame_hashes(&input, &format!("v:{n}")).await;
        assert_eq!(got.len(), want.len(), "DASH {id}: number of frames");
        if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
            panic!("DASH {id}: decoded frame {i} differs from {source}");
        }
    }
    // The two audio Representations; the sidecar subtitles (`-t0`) are checked below.
    for (n, id) in ids.iter().skip(3).take(2).enumerate() {
        let source = ladder_source(&format!("index-{id}.m3u8"));
        let want = decode_pcm(&source, "a:0", None).await;
        let got = decode_pcm(&input, &format!("a:{n}"), None).await;
        let offset = pcm_offset(&want, &got)
            .unwrap_or_else(|| panic!("DASH {id}: the PCM of {source} is not in the output"));
        assert!(
            offset <= AAC_FRAME,
            "DASH {id}: starts {offset} frames early"
        );
    }
    server.shutdown().await;
}

/// Each variant's `BANDWIDTH` is at least, and its `AVERAGE-BANDWIDTH` within 1 % of, the
/// bit rates measured from the segments it is served with: its video's segments plus the
/// audio group's most demanding rendition, each segment over its `EXTINF`.
#[tokio::test]
async fn ladder_bandwidths_match_the_segments() {
    let server = start().await;
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_ok(&server, &format!("{base}master.m3u8"))
        .await
        .text();
    // (segment bytes, EXTINF seconds) of each media playlist.
    let mut measured: Vec<(String, Vec<(u64, f64)>)> = Vec::new();
    for uri in master_playlist_uris(&master) {
        let text = fetch_ok(&server, &format!("{base}{uri}")).await.text();
        let playlist = MediaPlaylist::parse(&text);
        let folder = uri.rsplit_once('/').map_or("", |(f, _)| f);
        let mut segments = Vec::new();
        for (name, secs) in playlist.segments.iter().zip(&playlist.extinfs) {
            let bytes = fetch_ok(&server, &format!("{base}{folder}/{name}"))
                .await
                .body
                .len();
            segments.push((bytes as u64, *secs));
        }
        measured.push((uri, segments));
    }
    let rates = |segments: &[(u64, f64)]| {
        let peak = (segments.iter())
            .map(|(b, s)| *b as f64 * 8.0 / s)
            .fold(0.0, f64::max);
        let (bytes, secs) = (segments.iter()).fold((0, 0.0), |(b, s), x| (b + x.0, s + x.1));
        (peak, bytes as f64 * 8.0 / secs)
    };
    let audios: Vec<(f64, f64)> = (measured.iter())
        .filter(|(uri, _)| uri.ends_with("-f4-t1.m3u8") || uri.ends_with("-t2.m3u8"))
        .map(|(_, s)| rates(s))
        .collect();
    assert_eq!(audios.len(), 2);
    let audio_peak = audios.iter().map(|a| a.0).fold(0.0, f64::max);
    let audio_average = audios.iter().map(|a| a.1).fold(0.0, f64::max);
    let lines: Vec<&str> = master.lines().collect();
    let mut checked = 0;
    for pair in lines.windows(2) {
        let Some(attrs) = pair[0].strip_prefix("#EXT-X-STREAM-INF:") else {
            continue;
        };
        let attr = |name: &str| -> f64 {
            (attrs.split(','))
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {attrs}"))
        };
        let (_, segments) = (measured.iter())
            .find(|(uri, _)| uri == pair[1])
            .expect("variant measured");
        let (peak, average) = rates(segments);
        let (peak, average) = (peak + audio_peak, average + audio_average);
        assert!(
            attr("BANDWIDTH") >= peak,
            "{}: BANDWIDTH {} under the measured peak {peak:.0}",
            pair[1],
            attr("BANDWIDTH")
        );
        let stated = attr("AVERAGE-BANDWIDTH");
        assert!(
            (stated - average).abs() <= 0.01 * average,
            "{}: AVERAGE-BANDWIDTH {stated} not within 1 % of the measured {average:.0}",
            pair[1]
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
    server.shutdown().await;
}

/// The ladder's sidecar subtitles (WebVTT and SRT) read back, through HLS and DASH, with
/// the text and times ffmpeg reads from the files themselves: HLS segments on the output
/// timeline (source time + S, S measured from the video), each holding only cues that
/// overlap it; the DASH file on the Period timeline (source time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_sidecar_subtitles_keep_their_cues() {
    if !tools_available().await {
        return;
    }
    let server = start().await;
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_ok(&server, &format!("{base}master.m3u8"))
        .await
        .text();
    let variant = master_playlist_uris(&master)
        .into_iter()
        .find(|u| u.contains("-f1-t1"))
        .expect("the first rung");
    let source_video = common::fixtures().join(LADDER_FILES[0]);
    let shift = first_pts(&server.url(&format!("{base}{variant}")), "v:0").await
        - first_pts(&source_video.to_string_lossy(), "v:0").await;
    let mpd = fetch_ok(&server, &format!("{base}manifest.mpd"))
        .await
        .text();
    for (file, language) in [
        ("ladder/ladder-en.vtt", "en"),
        ("ladder/ladder-de.srt", "de"),
    ] {
        let path = common::fixtures().join(file).to_string_lossy().into_owned();
        let source = run_tool(
            "ffmpeg",
            args(&["-v", "error", "-nostdin", "-i", &path, "-f", "webvtt", "-"]),
        )
        .await;
        let want = WebVtt::parse(&String::from_utf8_lossy(&source)).cues;
        assert_eq!(want.len(), 2, "{file}: {want:?}");
        // HLS: the rendition of this language, its segments, each cue once.
        let media = (master.lines())
            .find(|l| {
                l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES")
                    && quoted_attribute(l, "LANGUAGE").as_deref() == Some(language)
            })
            .unwrap_or_else(|| panic!("{language} subtitles in {master}"));
        let uri = quoted_attribute(media, "URI").expect("URI");
        let folder = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
        let playlist =
            MediaPlaylist::parse(&fetch_ok(&server, &format!("{base}{uri}")).await.text());
        let mut got: Vec<VttCue> = Vec::new();
        let mut start = shift;
        for (segment, extinf) in playlist.segments.iter().zip(&playlist.extinfs) {
            let text = fetch_ok(&server, &format!("{base}{folder}{segment}"))
                .await
                .text();
            let vtt = WebVtt::parse(&text);
            assert_eq!(vtt.timestamp_map, Some((0.0, 0)), "{segment}");
            for cue in vtt.cues {
                assert!(
                    cue.end > start - SYNC_TOLERANCE_S && cue.start < start + extinf,
                    "{segment} ({start:.3} s + {extinf}) holds {cue:?}"
                );
                if !got.contains(&cue) {
                    got.push(cue);
                }
            }
            start += extinf;
        }
        // DASH: the text AdaptationSet of this language, one whole file.
        let set = (mpd.split("<AdaptationSet").skip(1))
            .find(|s| s.contains(&format!("lang=\"{language}\"")) && s.contains("text/vtt"))
            .unwrap_or_else(|| panic!("{language} text set in {mpd}"));
        let url = set
            .split("<BaseURL>")
            .nth(1)
            .and_then(|r| r.split("</BaseURL>").next())
            .expect("BaseURL");
        let dash = WebVtt::parse(&fetch_ok(&server, &format!("{base}{url}")).await.text()).cues;
        for (via, cues, offset) in [("HLS", &got, shift), ("DASH", &dash, 0.0)] {
            assert_eq!(cues.len(), want.len(), "{file} via {via}: {cues:?}");
            for (got, want) in cues.iter().zip(&want) {
                assert_eq!(
                    unescaped(&got.text),
                    unescaped(&want.text),
                    "{file} via {via}"
                );
                for (out, src) in [(got.start, want.start), (got.end, want.end)] {
                    assert!(
                        (out - (src + offset)).abs() <= SYNC_TOLERANCE_S + 1e-6,
                        "{file} via {via}: {got:?} against {want:?} + {offset:.6} s"
                    );
                }
            }
        }
    }
    server.shutdown().await;
}
