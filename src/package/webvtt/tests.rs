//! Subtitle segmenting, timing and rendering over small built titles: the text samples
//! live in a byte vector standing in for the source object.

use super::*;
use crate::media::{Edit, EditList, SampleTable, TextFormat};
use crate::package::testing::{title, track};

/// A text track over `samples` (start ms, duration ms, payload), stored one after the
/// other from offset 1000 of the returned "file"; 1000 Hz timescale.
fn text_track(
    format: TextFormat,
    samples: &[(u64, u32, Vec<u8>)],
    edits: EditList,
) -> (TextTrackIndex, Vec<u8>) {
    let mut file = vec![0xee; 1000];
    let mut table = SampleTable::default();
    for (start, duration, payload) in samples {
        table.offsets_mut().push(file.len() as u64);
        table.sizes.push(payload.len() as u32);
        table.dts.push(*start);
        table.durations.push(*duration);
        file.extend_from_slice(payload);
    }
    let track = TextTrackIndex {
        track_id: 3,
        format,
        timescale: 1000,
        language: Some("eng".into()),
        edits,
        samples: table,
    };
    (track, file)
}

/// An edit list of `empty` ticks of leading empty edit, then one media edit of
/// `duration` ticks from media time `media_time`.
fn shifted(empty: u64, media_time: u64, duration: u64) -> EditList {
    let mut edits = Vec::new();
    if empty > 0 {
        edits.push(Edit {
            start_ticks: 0,
            duration_ticks: empty,
            media_time_ticks: None,
        });
    }
    edits.push(Edit {
        start_ticks: empty,
        duration_ticks: duration,
        media_time_ticks: Some(media_time),
    });
    EditList { edits }
}

fn tx3g(text: &str) -> Vec<u8> {
    let mut out = (text.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out
}

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

/// A `wvtt` sample showing `texts`, each cue identified by its text (a `vtte` when there
/// are none).
fn wvtt(texts: &[&str]) -> Vec<u8> {
    if texts.is_empty() {
        return boxed(b"vtte", &[]);
    }
    (texts.iter())
        .flat_map(|t| {
            let cue = [boxed(b"iden", t.as_bytes()), boxed(b"payl", t.as_bytes())].concat();
            boxed(b"vttc", &cue)
        })
        .collect()
}

/// Read `read` from `file` as the server would: one `Bytes` per range.
fn fetch(file: &[u8], read: &TextRead) -> Vec<Bytes> {
    (read.ranges.iter())
        .map(|r| Bytes::copy_from_slice(&file[r.start as usize..r.end() as usize]))
        .collect()
}

/// (start ms, end ms, text) of the cues of `track` in `window`.
fn cues_in(
    track: &TextTrackIndex,
    file: &[u8],
    shift_ns: i128,
    window: Option<TimeWindow>,
) -> Vec<(i128, i128, String)> {
    let read = plan_text_read(track, shift_ns, window, &MediaLimits::default()).unwrap();
    let cues = cues_from_samples(track, shift_ns, &read, &fetch(file, &read)).unwrap();
    (cues.into_iter())
        .map(|c| (c.start_ns / 1_000_000, c.end_ns / 1_000_000, c.payload.text))
        .collect()
}

const MS: i128 = 1_000_000;

/// 10 s of video cut every 4 s: subtitle segments 1..=3 last 4, 4 and 2 s like the video's,
/// and together cover all time (the first from minus infinity, the last to infinity).
#[test]
fn subtitle_segments_follow_the_reference_rendition() {
    let title = title(|_| true, Vec::new());
    let plan = SubtitlePlan::new(&title);
    assert_eq!(plan.first_number, 1);
    assert_eq!(plan.durations_us, [4_000_000, 4_000_000, 2_000_000]);
    assert_eq!(plan.shift_ns, 0);
    let window = |start_ns, end_ns| Some(TimeWindow { start_ns, end_ns });
    assert_eq!(plan.window(1), window(i128::MIN, 4000 * MS));
    assert_eq!(plan.window(2), window(4000 * MS, 8000 * MS));
    assert_eq!(plan.window(3), window(8000 * MS, i128::MAX));
    assert_eq!(plan.window(0), None);
    assert_eq!(plan.window(4), None);
}

/// RFC 8216 3.5: a cue spanning a cut is written in both segments, whole.
#[test]
fn a_cue_spanning_a_cut_is_in_both_segments() {
    let title = title(|_| true, Vec::new());
    let plan = SubtitlePlan::new(&title);
    let (track, file) = text_track(
        TextFormat::Tx3g,
        &[
            (0, 3500, tx3g("")),
            (3500, 1000, tx3g("across")),
            (4500, 500, tx3g("")),
            (5000, 1000, tx3g("inside")),
        ],
        EditList::default(),
    );
    let across = (3500, 4500, "across".to_owned());
    let inside = (5000, 6000, "inside".to_owned());
    assert_eq!(
        cues_in(&track, &file, 0, plan.window(1)),
        vec![across.clone()]
    );
    assert_eq!(cues_in(&track, &file, 0, plan.window(2)), [across, inside]);
    assert_eq!(cues_in(&track, &file, 0, plan.window(3)), []);
}

/// Output time = source movie time + S: the text track's empty edit delays it, and the
/// video's B-frame delay (edit at media time 2 frames) sets S, which HLS segments keep and
/// the DASH file (on the Period timeline, presentationTimeOffset = S) takes off again.
#[test]
fn edit_lists_and_the_title_shift_move_cues_like_the_video() {
    let mut video = track(1, true);
    // 300 frames of 512 ticks, presented from the third.
    video.edits = shifted(0, 1024, 300 * 512 - 1024);
    let title = title(|t| t.kind == TrackKind::Audio, vec![video]);
    let plan = SubtitlePlan::new(&title);
    // S = 1024 / 15360 s, to the nanosecond.
    assert_eq!(plan.shift_ns, 66_666_666);
    let delayed = shifted(500, 0, 1000);
    let (track, file) = text_track(TextFormat::Tx3g, &[(0, 1000, tx3g("hi"))], delayed);
    let read = plan_text_read(&track, plan.shift_ns, None, &MediaLimits::default()).unwrap();
    let cues = cues_from_samples(&track, plan.shift_ns, &read, &fetch(&file, &read)).unwrap();
    assert_eq!(
        render_hls_segment(&cues),
        "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:0\n\n\
         00:00:00.567 --> 00:00:01.567\nhi\n"
    );
    assert_eq!(
        render_dash_file(&cues, plan.shift_ns),
        "WEBVTT\n\n00:00:00.500 --> 00:00:01.500\nhi\n"
    );
    // An edit that starts the text track 0.2 s into its media moves it earlier.
    let trimmed = shifted(0, 200, 800);
    let (track, file) = text_track(TextFormat::Tx3g, &[(0, 1000, tx3g("hi"))], trimmed);
    assert_eq!(cues_in(&track, &file, 0, None), [(-200, 800, "hi".into())]);
}

/// ISO/IEC 14496-30: a cue active over several samples is repeated in each; it comes out
/// once, lasting from its first sample's start to its last sample's end.
#[test]
fn wvtt_cues_repeated_in_consecutive_samples_become_one() {
    let (track, file) = text_track(
        TextFormat::Wvtt,
        &[
            (0, 1000, wvtt(&["A"])),
            (1000, 1000, wvtt(&["A", "B"])),
            (2000, 1000, wvtt(&["B"])),
            (3000, 1000, wvtt(&[])),
            (4000, 1000, wvtt(&["A"])),
        ],
        EditList::default(),
    );
    assert_eq!(
        cues_in(&track, &file, 0, None),
        [
            (0, 2000, "A".into()),
            (1000, 3000, "B".into()),
            (4000, 5000, "A".into())
        ]
    );
}

/// Adjacent samples are read in one range; samples apart in one range each; empty
/// samples not at all; a track over `max_text_read_bytes` is refused before any read.
#[test]
fn reads_are_merged_bounded_and_checked() {
    let (mut track, mut file) = text_track(
        TextFormat::Tx3g,
        &[
            (0, 1000, tx3g("one")),
            (1000, 1000, tx3g("two")),
            (2000, 1000, Vec::new()),
        ],
        EditList::default(),
    );
    let limits = MediaLimits::default();
    let read = plan_text_read(&track, 0, None, &limits).unwrap();
    assert_eq!(read.ranges, [ByteRange::new(1000, 10)]);
    // Move the second sample away from the first.
    file.extend_from_slice(&tx3g("two"));
    track.samples.offsets_mut()[1] = file.len() as u64 - 5;
    let read = plan_text_read(&track, 0, None, &limits).unwrap();
    assert_eq!(
        read.ranges,
        [
            ByteRange::new(1000, 5),
            ByteRange::new(file.len() as u64 - 5, 5)
        ]
    );
    assert_eq!(cues_in(&track, &file, 0, None).len(), 2);

    let small = MediaLimits {
        max_text_read_bytes: 9,
        ..limits
    };
    assert!(matches!(
        plan_text_read(&track, 0, None, &small),
        Err(MediaError::TooLarge {
            limit: "max_text_read_bytes",
            value: 10,
            max: 9
        })
    ));
    // A source that gives fewer bytes than asked is an error, not a panic.
    let mut short = fetch(&file, &read);
    short[1] = short[1].slice(..2);
    assert!(matches!(
        cues_from_samples(&track, 0, &read, &short),
        Err(MediaError::Truncated { .. })
    ));
}

#[test]
fn rendering_writes_ids_settings_long_times_and_drops_what_cannot_show() {
    let cue = |start_ms: i128, end_ms: i128, id: Option<&str>, settings: Option<&str>| Cue {
        start_ns: start_ms * MS,
        end_ns: end_ms * MS,
        payload: SampleCue {
            id: id.map(str::to_owned),
            settings: settings.map(str::to_owned),
            text: "x".into(),
        },
    };
    let cues = [
        cue(-500, -100, None, None),
        cue(-500, 400, None, None),
        cue(1000, 1000, None, None),
        cue(3_723_004, 3_723_500, Some("c1"), Some("line:0")),
    ];
    assert_eq!(
        render_dash_file(&cues, 0),
        "WEBVTT\n\n00:00:00.000 --> 00:00:00.400\nx\n\n\
         c1\n01:02:03.004 --> 01:02:03.500 line:0\nx\n"
    );
}

/// The mov_text fixture end to end, without a server: its text track is indexed apart
/// from audio and video, and its two cues come out at source time + S (S = the video's
/// two-frame B-frame delay, 1024/15360 s), its italic run (a `styl` box) as `<i>`, and the
/// text escaped.
#[test]
fn the_mov_text_fixture_gives_its_two_cues_on_the_output_timeline() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("h264-aac-movtext-3s.mp4");
    let file = Bytes::from(std::fs::read(path).unwrap());
    let index = crate::media::index_from_bytes(&file, &MediaLimits::default()).unwrap();
    assert_eq!(index.tracks.len(), 2);
    let text = &index.text_tracks[0];
    assert_eq!(
        (text.track_id, text.format, text.language.as_deref()),
        (3, TextFormat::Tx3g, Some("eng"))
    );
    let title = Title::new(index.clone(), 1000).unwrap();
    let plan = SubtitlePlan::new(&title);
    assert_eq!(plan.shift_ns, 66_666_666);
    assert_eq!(plan.segment_count(), 3);
    let read = plan_text_read(text, plan.shift_ns, None, &MediaLimits::default()).unwrap();
    let cues = cues_from_samples(text, plan.shift_ns, &read, &fetch(&file, &read)).unwrap();
    assert_eq!(
        render_hls_segment(&cues),
        "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:0\n\n\
         00:00:00.567 --> 00:00:01.317\nHello, <i>world</i>!\n\n\
         00:00:01.867 --> 00:00:02.767\nCafé &amp; crème\non two lines\n"
    );
}

/// A `wvtt` cue repeated over samples on both sides of a cut: each segment sees only its
/// own samples, so its part of the cue is cut to the segment; the parts meet at the cut
/// and never overlap (no text shown twice). `tx3g` cues stay whole.
#[test]
fn wvtt_cues_are_cut_at_segment_edges_and_tx3g_cues_stay_whole() {
    let title = title(|_| true, Vec::new());
    let plan = SubtitlePlan::new(&title);
    let (track, file) = text_track(
        TextFormat::Wvtt,
        &[
            (0, 3000, wvtt(&[])),
            (3000, 2000, wvtt(&["long"])),
            (5000, 1000, wvtt(&["long", "short"])),
        ],
        EditList::default(),
    );
    let mut pieces = Vec::new();
    for number in 1..=3 {
        let window = plan.window(number).unwrap();
        let read = plan_text_read(&track, 0, Some(window), &MediaLimits::default()).unwrap();
        let cues = cues_from_samples(&track, 0, &read, &fetch(&file, &read)).unwrap();
        for mut cue in segment_cues(track.format, cues, window) {
            // Only the parts of a cut cue lose their identifier.
            let id = cue.payload.id.take();
            assert_eq!(id.is_some(), cue.payload.text == "short", "{cue:?}");
            pieces.push((number, cue.start_ns / MS, cue.end_ns / MS, cue.payload.text));
        }
    }
    assert_eq!(
        pieces,
        [
            (1, 3000, 4000, "long".into()),
            (2, 4000, 6000, "long".into()),
            (2, 5000, 6000, "short".into())
        ]
    );
    let whole = Cue {
        start_ns: 3000 * MS,
        end_ns: 6000 * MS,
        payload: SampleCue {
            id: None,
            settings: None,
            text: "x".into(),
        },
    };
    let window = plan.window(2).unwrap();
    assert_eq!(
        segment_cues(TextFormat::Tx3g, vec![whole.clone()], window),
        [whole]
    );
}

/// A text track whose tables are broken (here an edit starting past its last sample) is
/// left out with a warning; the title keeps its audio and video.
#[test]
fn a_broken_text_track_is_skipped_not_the_title() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("h264-aac-movtext-3s.mp4");
    let mut file = std::fs::read(path).unwrap();
    // The text track's elst: one entry of 2700 ms at media time 0, rate 1.
    let elst = [
        0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x0a, 0x8c, 0, 0, 0, 0, 0, 1, 0, 0,
    ];
    let at = file.windows(elst.len()).position(|w| w == elst).unwrap();
    file[at + 12..at + 16].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let index =
        crate::media::index_from_bytes(&Bytes::from(file), &MediaLimits::default()).unwrap();
    assert_eq!(index.tracks.len(), 2);
    assert!(index.text_tracks.is_empty());
}
