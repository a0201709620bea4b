//! Ad breaks: the ladder fixture's title with two breaks, served with the
//! default 6 s segments (so every boundary inside its 4 s is a break's).
//!
//! Given the document, when every manifest and the segments around each break are read,
//! then: each break is an HLS Interstitial with the document's attributes in every media
//! playlist (CMAF, MPEG-TS, subtitles, I-frames) and an SCTE-35 event in the MPD; its
//! SCTE-35 `splice_insert`, read by the small decoder in `scte35.rs` (written from ANSI/SCTE
//! 35, not from vodpack), says the same break; and every rendition is cut at the source's key
//! frame at or before the break (found with ffprobe in the source file), the segments on
//! either side decoding to the source's own pictures.

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::scte35::{decode_splice, unhex, Splice};
use super::tools::*;
use super::trick::frames_on_output_timeline;
use vodpack::config::Settings;

/// The title: the ladder fixture with a program date and two breaks, the first with one
/// asset, the second with an asset list; each asks for a time past a key frame.
const DOCUMENT: &str = r#"{
  "video": [{"file": "ladder-180p.mp4"}, {"file": "ladder-360p.mp4"}, {"file": "ladder-270p.mp4"}],
  "audio": [{"file": "ladder-fr.m4a", "language": "fr", "name": "Français"}],
  "subtitles": [{"file": "ladder-en.vtt", "language": "en"}, {"file": "ladder-de.srt", "language": "de"}],
  "program_date_time": "2026-12-04T21:00:00+01:00",
  "breaks": [
    {"id": "mid-1", "at": 1500, "duration": 400, "asset_uri": "https://cdn.example/vod/h264-aac-3s.mp4/master.m3u8"},
    {"id": "mid-2", "at": 2600, "duration": 5000, "asset_list": "https://ads.example/list.json?b=2"}
  ]
}"#;

/// What each break should be: id, asked ms, duration ms, asset attribute and URI.
const BREAKS: [(&str, u64, u64, &str, &str); 2] = [
    (
        "mid-1",
        1500,
        400,
        "X-ASSET-URI",
        "https://cdn.example/vod/h264-aac-3s.mp4/master.m3u8",
    ),
    (
        "mid-2",
        2600,
        5000,
        "X-ASSET-LIST",
        "https://ads.example/list.json?b=2",
    ),
];

/// The ladder's files, by file number (`f1` ...).
const FILES: [&str; 6] = [
    "ladder-180p.mp4",
    "ladder-360p.mp4",
    "ladder-270p.mp4",
    "ladder-fr.m4a",
    "ladder-en.vtt",
    "ladder-de.srt",
];

/// A folder with the ladder fixture and `document` as `breaks.json`, served as `settings`
/// say (the default 6 s segments).
async fn breaks_folder(document: &str, settings: Settings) -> (TempDir, TestServer) {
    let folder = TempDir::new("breaks");
    for entry in std::fs::read_dir(common::fixtures().join("ladder")).expect("ladder") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), folder.path().join(entry.file_name())).expect("copy");
    }
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        folder.path().join("h264-aac-3s.mp4"),
    )
    .expect("copy");
    std::fs::write(folder.path().join("breaks.json"), document).expect("document");
    let server = common::start_server_with(folder.path(), settings).await;
    (folder, server)
}

/// The source file of a resource name (`index-f2-t1.m3u8` -> ladder-360p.mp4).
fn source_of(folder: &TempDir, name: &str) -> String {
    let file: usize = (name.split("-f").nth(1))
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .expect("a document rendition name");
    let path = folder.path().join(FILES[file - 1]);
    path.to_string_lossy().into_owned()
}

/// Presentation times (s) of the key frames of the first video stream of `source`, from
/// ffprobe's packet flags.
pub(super) async fn key_frame_times(source: &str) -> Vec<f64> {
    let out = ffprobe_show(source, Some("v:0"), "packet=pts_time,flags", "csv=p=0").await;
    let mut times: Vec<f64> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let (pts, flags) = l.split_once(',')?;
            flags.contains('K').then(|| pts.parse().ok()).flatten()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// The cut of a break asking for `at_ms`: the source key frame at or before it, seconds.
pub(super) fn expected_cut(keys: &[f64], at_ms: u64) -> f64 {
    let at = at_ms as f64 / 1000.0;
    keys.iter()
        .copied()
        .filter(|k| *k <= at + 1e-9)
        .fold(0.0, f64::max)
}

/// One HLS Interstitial as a media playlist states it, and where.
#[derive(Debug, Clone)]
pub(super) struct Interstitial {
    pub(super) line: String,
    /// The number of segments listed before it.
    pub(super) segments_before: usize,
    /// The sum of the EXTINFs before it, s.
    pub(super) time_before: f64,
    /// The `EXT-X-PROGRAM-DATE-TIME` written just before it.
    pub(super) program_date: Option<String>,
}

/// The interstitials of a media playlist and its first program date.
pub(super) fn interstitials(playlist: &str) -> (Vec<Interstitial>, Option<String>) {
    let (mut found, mut first_date, mut last_date) = (Vec::new(), None, None);
    let (mut segments, mut time) = (0usize, 0.0f64);
    for line in playlist.lines() {
        if let Some(date) = line.strip_prefix("#EXT-X-PROGRAM-DATE-TIME:") {
            if segments == 0 && first_date.is_none() {
                first_date = Some(date.to_owned());
            }
            last_date = Some(date.to_owned());
        } else if line.starts_with("#EXT-X-DATERANGE:") {
            found.push(Interstitial {
                line: line.to_owned(),
                segments_before: segments,
                time_before: time,
                program_date: last_date.clone(),
            });
        } else if let Some(value) = line.strip_prefix("#EXTINF:") {
            time += value.trim_end_matches(',').parse::<f64>().expect("EXTINF");
        } else if !line.starts_with('#') && !line.is_empty() {
            segments += 1;
            last_date = None;
        }
    }
    (found, first_date)
}

/// An unquoted attribute (`DURATION=0.400`) of an HLS tag line.
pub(super) fn plain_attribute(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!(",{name}="))? + name.len() + 2;
    let rest = &line[start..];
    Some(rest[..rest.find(',').unwrap_or(rest.len())].to_owned())
}

/// `2026-12-04T20:00:01.000Z` as ms after 20:00:00.000 of that day (the tests' clock).
pub(super) fn ms_after_eight(date: &str) -> i64 {
    let time = date
        .strip_prefix("2026-12-04T")
        .and_then(|t| t.strip_suffix('Z'))
        .unwrap_or_else(|| panic!("a date on 2026-12-04 in UTC: {date}"));
    let parts: Vec<f64> = time
        .split(':')
        .map(|p| p.parse().expect("number"))
        .collect();
    let secs = (parts[0] - 20.0) * 3600.0 + parts[1] * 60.0 + parts[2];
    (secs * 1000.0).round() as i64
}

/// Every `EXT-X-DATERANGE` of a media playlist is one of the two breaks, as the document
/// asks, at the cut: START-DATE the program date plus the cut, after exactly the segments
/// before the cut. Returns the SCTE-35 sections in break order.
fn check_interstitials(
    name: &str,
    playlist: &str,
    cuts: &[f64],
    segment_time: bool,
) -> Vec<Splice> {
    let (found, first_date) = interstitials(playlist);
    assert!(
        first_date.is_some(),
        "{name}: no program date on the first segment\n{playlist}"
    );
    assert_eq!(found.len(), 2, "{name}: two interstitials\n{playlist}");
    let mut splices = Vec::new();
    for (((id, _, duration_ms, asset, uri), cut), tag) in BREAKS.iter().zip(cuts).zip(&found) {
        let line = &tag.line;
        assert_eq!(quoted_attribute(line, "ID").as_deref(), Some(*id), "{line}");
        assert_eq!(
            quoted_attribute(line, "CLASS").as_deref(),
            Some("com.apple.hls.interstitial"),
            "{line}"
        );
        assert_eq!(
            quoted_attribute(line, asset).as_deref(),
            Some(*uri),
            "{line}"
        );
        assert_eq!(
            plain_attribute(line, "X-RESUME-OFFSET").as_deref(),
            Some("0"),
            "{line}"
        );
        let duration: f64 = plain_attribute(line, "DURATION").unwrap().parse().unwrap();
        assert!(
            (duration * 1000.0 - *duration_ms as f64).abs() < 0.5,
            "{line}"
        );
        // 2026-12-04T21:00:00+01:00 is 20:00:00Z; the break is at its cut, not its `at`.
        let start = ms_after_eight(&quoted_attribute(line, "START-DATE").unwrap());
        assert_eq!(start, (cut * 1000.0).round() as i64, "{name}: {line}");
        // The segment it precedes starts at the cut: its own program date says so.
        let date = tag
            .program_date
            .as_deref()
            .expect("a program date at the break");
        let date_ms = ms_after_eight(date);
        // Audio: its first frame at or after the cut, counted from its own first frame (up
        // to a frame before the video's): within two AAC frames.
        let tolerance = if segment_time { 1 } else { 50 };
        assert!(
            (date_ms - start).abs() <= tolerance,
            "{name}: {date} at {line}"
        );
        if segment_time {
            assert!(
                (tag.time_before - cut).abs() < 0.002,
                "{name}: {} s of segments before {id}, cut at {cut}",
                tag.time_before
            );
        }
        assert!(tag.segments_before > 0, "{name}: {id} is no boundary");
        splices.push(decode_splice(&unhex(
            &plain_attribute(line, "SCTE35-OUT").unwrap(),
        )));
    }
    splices
}

/// Given the ladder title with two breaks, when its HLS and DASH manifests are read, then
/// each break is an interstitial with its SCTE-35 splice at the source's key frame at or
/// before `at`, and every video rung, audio rendition, subtitle and I-frame playlist is
/// cut there, the segments around each cut decoding to the source's own pictures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaks_cut_every_rendition_at_the_key_frame_and_are_signalled() {
    if !tools_available().await {
        return;
    }
    let (folder, server) = breaks_folder(DOCUMENT, Settings::default()).await;
    let dir = TempDir::new("breaks-segments");
    let base = "/vod/breaks.json/";
    let reference = folder.path().join(FILES[0]).to_string_lossy().into_owned();
    let keys = key_frame_times(&reference).await;
    let cuts: Vec<f64> = BREAKS.iter().map(|b| expected_cut(&keys, b.1)).collect();
    assert!(
        (cuts[0] - 1.0).abs() < 1e-6 && (cuts[1] - 2.0).abs() < 1e-6,
        "the ladder's key frames are 1 s apart: cuts {cuts:?}"
    );
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let mut uris = master_playlist_uris(&master);
    let subtitles: Vec<String> = (master.lines())
        .filter(|l| l.contains("TYPE=SUBTITLES"))
        .filter_map(|l| quoted_attribute(l, "URI"))
        .collect();
    let iframes: Vec<String> = (master.lines())
        .filter(|l| l.starts_with("#EXT-X-I-FRAME-STREAM-INF"))
        .filter_map(|l| quoted_attribute(l, "URI"))
        .collect();
    assert_eq!(
        (uris.len(), subtitles.len(), iframes.len()),
        (5, 2, 3),
        "{master}"
    );
    uris.sort();
    let mut all_splices = Vec::new();
    // The title shift S: output time of the first picture less the source's.
    let mut shift: Option<f64> = None;
    for uri in &uris {
        let playlist_text = fetch_text(&server, &format!("{base}{uri}")).await;
        let video = uri.contains("-f1-t1") || uri.contains("-f2-t1") || uri.contains("-f3-t1");
        all_splices.push(check_interstitials(uri, &playlist_text, &cuts, video));
        let playlist = MediaPlaylist::parse(&playlist_text);
        assert_eq!(
            playlist.segments.len(),
            3,
            "{uri}: cut at both breaks only\n{playlist_text}"
        );
        let folder_uri = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
        let init = fetch_ok(
            &server,
            &format!("{base}{folder_uri}{}", playlist.map_uri.clone().unwrap()),
        )
        .await
        .body;
        let source = source_of(&folder, uri);
        // Each segment appended to its init segment, as a player reads it.
        let mut files = Vec::new();
        for (n, segment) in playlist.segments.iter().enumerate() {
            let body = fetch_ok(&server, &format!("{base}{folder_uri}{segment}"))
                .await
                .body;
            let path = dir
                .path()
                .join(format!("{}-{n}.mp4", uri.replace('/', "_")));
            std::fs::write(&path, [init.as_slice(), &body].concat()).expect("write");
            files.push(path.to_string_lossy().into_owned());
        }
        if video {
            let source_frames = frames_on_output_timeline(&source, "v:0").await;
            let first = frames_on_output_timeline(&files[0], "v:0").await;
            let s = first[0].pts_s - source_frames[0].pts_s;
            if let Some(known) = shift {
                assert!((s - known).abs() < 0.001, "{uri}: one shift for every rung");
            }
            shift = Some(s);
            // Each segment: the source's pictures from its cut to the next, the first
            // presented at the cut.
            let bounds = [0.0, cuts[0], cuts[1], f64::INFINITY];
            for (n, file) in files.iter().enumerate() {
                let got = frames_on_output_timeline(file, "v:0").await;
                let want: Vec<&str> = (source_frames.iter())
                    .filter(|f| f.pts_s >= bounds[n] - 1e-6 && f.pts_s < bounds[n + 1] - 1e-6)
                    .map(|f| f.hash.as_str())
                    .collect();
                let hashes: Vec<&str> = got.iter().map(|f| f.hash.as_str()).collect();
                assert_eq!(
                    hashes,
                    want,
                    "{uri} segment {}: the source's pictures",
                    n + 1
                );
                let start = got.iter().map(|f| f.pts_s).fold(f64::INFINITY, f64::min) - s;
                assert!(
                    (start - bounds[n].max(source_frames[0].pts_s)).abs() < 0.001,
                    "{uri} segment {} starts at {start} s of the source, not {}",
                    n + 1,
                    bounds[n]
                );
            }
        }
        if !video {
            // Audio: cut at the first frame presented at or after the cut.
            let s = shift.expect("video renditions sort first (f1..f3 before f4, t1 before t2)");
            for (n, cut) in cuts.iter().enumerate() {
                let first = packets(&files[n + 1], "a:0").await[0].pts - s;
                assert!(
                    first >= cut - 0.001 && first < cut + 0.0235,
                    "{uri}: segment after break {n} starts at {first} s, cut {cut}"
                );
            }
        }
    }
    let s = shift.expect("video renditions");
    // The splice: the same in every playlist, and the break's.
    for splices in &all_splices {
        assert_eq!(splices, &all_splices[0]);
    }
    for ((splice, cut), b) in all_splices[0].iter().zip(&cuts).zip(&BREAKS) {
        assert!(splice.out_of_network && splice.program_splice && !splice.immediate);
        assert!(splice.auto_return, "auto_return");
        assert_eq!(splice.pts_adjustment, 0);
        assert_eq!(splice.duration, b.2 * 90);
        let pts = splice.pts_time.expect("a splice time") as f64 / 90_000.0;
        assert!(
            (pts - (cut + s)).abs() < 1.5 / 90_000.0,
            "pts_time {pts} for a cut at {cut} + S {s}"
        );
        assert!(splice.descriptors.is_empty());
    }
    assert_ne!(all_splices[0][0].event_id, all_splices[0][1].event_id);
    // Subtitles and I-frames: the same interstitials, at boundaries at the cuts.
    for uri in &subtitles {
        let text = fetch_text(&server, &format!("{base}{uri}")).await;
        assert_eq!(
            check_interstitials(uri, &text, &cuts, true),
            all_splices[0],
            "{uri}"
        );
    }
    for uri in &iframes {
        let text = fetch_text(&server, &format!("{base}{uri}")).await;
        assert_eq!(
            check_interstitials(uri, &text, &cuts, true),
            all_splices[0],
            "{uri}"
        );
    }
    // MPEG-TS: the same splice, its times moved to the TS clock by pts_adjustment.
    let master_ts = fetch_text(&server, &format!("{base}master-ts.m3u8")).await;
    let ts_uri = (master_ts.lines())
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a TS variant");
    let ts_text = fetch_text(&server, &format!("{base}{ts_uri}")).await;
    let ts_splices = check_interstitials(ts_uri, &ts_text, &cuts, true);
    for (ts, cmaf) in ts_splices.iter().zip(&all_splices[0]) {
        assert_eq!(ts.pts_adjustment, 126_000, "1.4 s, the TS output's offset");
        assert_eq!(ts.pts_time, cmaf.pts_time);
        assert_eq!(ts.event_id, cmaf.event_id);
    }
    // Its I-frame playlists too, before the cut's key frame.
    let ts_iframes: Vec<String> = (master_ts.lines())
        .filter(|l| l.starts_with("#EXT-X-I-FRAME-STREAM-INF"))
        .filter_map(|l| quoted_attribute(l, "URI"))
        .collect();
    assert_eq!(ts_iframes.len(), 3, "{master_ts}");
    for uri in &ts_iframes {
        let text = fetch_text(&server, &format!("{base}{uri}")).await;
        assert_eq!(
            check_interstitials(uri, &text, &cuts, true),
            ts_splices,
            "{uri}"
        );
    }
    // DASH: one SCTE-35 EventStream, an Event per break at its cut from the Period start.
    let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
    assert!(
        mpd.contains("xmlns:scte35=\"http://www.scte.org/schemas/35/2016\""),
        "{mpd}"
    );
    let stream = &mpd[mpd.find("<EventStream").expect("an EventStream")..];
    let stream = &stream[..stream.find("</EventStream>").unwrap()];
    assert!(stream.contains("schemeIdUri=\"urn:scte:scte35:2014:xml+bin\""));
    assert!(stream.contains("timescale=\"90000\""));
    let events: Vec<&str> = stream.split("<Event ").skip(1).collect();
    assert_eq!(events.len(), 2, "{stream}");
    for ((event, cut), splice) in events.iter().zip(&cuts).zip(&all_splices[0]) {
        let attr = |name: &str| -> u64 {
            let start = event.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            event[start..start + event[start..].find('"').unwrap()]
                .parse()
                .unwrap()
        };
        assert_eq!(
            attr("presentationTime"),
            (cut * 90_000.0).round() as u64,
            "{event}"
        );
        assert_eq!(attr("duration"), splice.duration);
        assert_eq!(attr("id"), u64::from(splice.event_id));
        let binary = &event[event.find("<scte35:Binary>").unwrap() + 15..];
        let binary = &binary[..binary.find('<').unwrap()];
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(binary)
            .expect("base64");
        assert_eq!(
            &decode_splice(&bytes),
            splice,
            "DASH carries the HLS splice"
        );
    }
    // Every Representation (trick play too) has a segment starting at each cut.
    for rep in mpd.split("<Representation ").skip(1) {
        if !rep.contains("<S ") {
            continue; // a text Representation: one WebVTT file
        }
        let id = &rep[4..rep[4..].find('"').unwrap() + 4];
        let attr = |text: &str, name: &str| -> Option<u64> {
            let start = text.find(&format!(" {name}=\""))? + name.len() + 3;
            text[start..start + text[start..].find('"')?].parse().ok()
        };
        let timescale = attr(rep, "timescale").unwrap() as f64;
        let offset = attr(rep, "presentationTimeOffset").unwrap_or(0) as f64;
        let mut starts = Vec::new();
        let mut t = 0u64;
        for s in rep.split("<S ").skip(1) {
            t = attr(&format!(" {s}"), "t").unwrap_or(t);
            let d = attr(&format!(" {s}"), "d").unwrap();
            for _ in 0..=attr(&format!(" {s}"), "r").unwrap_or(0) {
                starts.push((t as f64 - offset) / timescale);
                t += d;
            }
        }
        for cut in &cuts {
            let audio = id.contains("-t2") || id.starts_with("f4");
            let ok = starts.iter().any(|start| {
                let d = start - cut;
                if audio {
                    (-0.001..0.025).contains(&d)
                } else {
                    d.abs() < 0.001
                }
            });
            assert!(ok, "Representation {id}: no segment at {cut} s: {starts:?}");
        }
    }
    server.shutdown().await;
}

/// Given a server with `hls-cue-out` on, when a media playlist of the title with breaks
/// is read, then each break also has `EXT-X-CUE-OUT:0` and `EXT-X-CUE-IN` right before
/// the segment at the cut (an insertion point: no segment between them, nothing replaced),
/// and its
/// URLs are not those of the server without the setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cue_out_setting_adds_cue_tags_at_each_break() {
    let (_folder, plain) = breaks_folder(DOCUMENT, Settings::default()).await;
    let (_folder2, cued) = breaks_folder(
        DOCUMENT,
        Settings {
            hls_cue_out: true,
            ..Default::default()
        },
    )
    .await;
    let base = "/vod/breaks.json/";
    let mut folders = Vec::new();
    for server in [&plain, &cued] {
        let master = fetch_text(server, &format!("{base}master.m3u8")).await;
        let uri = master_playlist_uris(&master).remove(0);
        let playlist = fetch_text(server, &format!("{base}{uri}")).await;
        folders.push(uri[..uri.find('/').unwrap()].to_owned());
        let lines: Vec<&str> = playlist.lines().collect();
        let cue_outs: Vec<usize> = (0..lines.len())
            .filter(|i| lines[*i].starts_with("#EXT-X-CUE-OUT"))
            .collect();
        if std::ptr::eq(server, &plain) {
            assert!(
                cue_outs.is_empty() && !playlist.contains("CUE-IN"),
                "{playlist}"
            );
            continue;
        }
        assert_eq!(cue_outs.len(), 2, "{playlist}");
        // Insertion points: nothing of the title between CUE-OUT and CUE-IN, so 0 s.
        for i in &cue_outs {
            assert_eq!(lines[*i], "#EXT-X-CUE-OUT:0");
            assert_eq!(lines[i + 1], "#EXT-X-CUE-IN");
            assert!(lines[i - 1].starts_with("#EXT-X-DATERANGE:"), "{playlist}");
            assert!(lines[i + 2].starts_with("#EXTINF:"), "{playlist}");
        }
    }
    assert_ne!(folders[0], folders[1], "the setting is part of the version");
    plain.shutdown().await;
    cued.shutdown().await;
}

/// Given a URL clip of the title from 2100 ms, when its media playlist is read, then the
/// break in the window is still there at the same wall-clock START-DATE (the clip's
/// program date moves with its start) and the one before it is gone; and given the same
/// document with its own clip from 1200 ms, both breaks keep their START-DATEs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_clip_keeps_the_breaks_in_its_window() {
    let (folder, server) = breaks_folder(DOCUMENT, Settings::default()).await;
    let whole_master = fetch_text(&server, "/vod/breaks.json/master.m3u8").await;
    let whole_uri = master_playlist_uris(&whole_master).remove(0);
    let whole = fetch_text(&server, &format!("/vod/breaks.json/{whole_uri}")).await;
    let base = "/vod/breaks.json/clip/2100-/";
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let uri = master_playlist_uris(&master).remove(0);
    let clip = fetch_text(&server, &format!("{base}{uri}")).await;
    let (whole_tags, _) = interstitials(&whole);
    let (clip_tags, first) = interstitials(&clip);
    assert!(first.is_some(), "{clip}");
    assert_eq!(
        clip_tags.len(),
        1,
        "mid-1 (1500 ms) is before the clip\n{clip}"
    );
    assert_eq!(
        quoted_attribute(&clip_tags[0].line, "START-DATE"),
        quoted_attribute(&whole_tags[1].line, "START-DATE"),
        "mid-2 keeps its wall-clock time\n{clip}"
    );
    // The document's own clip: its breaks are on the timeline before the clip and move
    // with it, at the same wall-clock time as without the clip.
    let clipped = DOCUMENT.replacen("\"breaks\"", "\"clip\": {\"from\": 1200}, \"breaks\"", 1);
    std::fs::write(folder.path().join("clipped.json"), clipped).expect("write");
    let master = fetch_text(&server, "/vod/clipped.json/master.m3u8").await;
    let uri = master_playlist_uris(&master).remove(0);
    let text = fetch_text(&server, &format!("/vod/clipped.json/{uri}")).await;
    let (tags, _) = interstitials(&text);
    let dates = |tags: &[Interstitial]| -> Vec<Option<String>> {
        tags.iter()
            .map(|t| quoted_attribute(&t.line, "START-DATE"))
            .collect()
    };
    assert_eq!(dates(&tags), dates(&whole_tags), "{text}");
    // Without a program date, the fixed epoch (2000-01-01) is the title's time 0 in the
    // whole title and in a URL clip of it alike.
    let undated = DOCUMENT.replacen(
        "\"program_date_time\": \"2026-12-04T21:00:00+01:00\",",
        "",
        1,
    );
    std::fs::write(folder.path().join("undated.json"), undated).expect("write");
    let mut undated_dates = Vec::new();
    for base in ["/vod/undated.json/", "/vod/undated.json/clip/2100-/"] {
        let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
        let uri = master_playlist_uris(&master).remove(0);
        let text = fetch_text(&server, &format!("{base}{uri}")).await;
        let (tags, _) = interstitials(&text);
        undated_dates.push(dates(&tags).last().cloned().flatten());
    }
    assert_eq!(
        undated_dates,
        vec![Some("2000-01-01T00:00:02.000Z".to_owned()); 2],
        "mid-2 at 2 s of the epoch"
    );
    server.shutdown().await;
}

/// Given documents whose breaks cannot be served, when their manifests are asked for,
/// then each is a 422 with a one-line reason naming the break, and the server stays
/// healthy (a good title still plays).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_breaks_are_refused_with_a_reason() {
    let (folder, server) = breaks_folder(DOCUMENT, Settings::default()).await;
    let video = r#""video": [{"file": "ladder-180p.mp4"}]"#;
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "past-end",
            format!(r#"{{{video}, "breaks": [{{"id": "late", "at": 9000, "duration": 1000, "asset_uri": "https://ads.example/a.m3u8"}}]}}"#),
            "breaks[0] (late): at 9000 ms is at or after the end of the title (4000 ms)",
        ),
        (
            "overlap",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 2000, "asset_uri": "https://ads.example/a.m3u8"}}, {{"id": "b", "at": 2500, "duration": 1000, "asset_uri": "https://ads.example/b.m3u8"}}]}}"#),
            "breaks[1] (b): at 2500 ms overlaps breaks[0] (a), which runs from 1000 to 3000 ms",
        ),
        (
            "same-key-frame",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 2100, "duration": 100, "asset_uri": "https://ads.example/a.m3u8"}}, {{"id": "b", "at": 2500, "duration": 100, "asset_uri": "https://ads.example/b.m3u8"}}]}}"#),
            "breaks[1] (b): is cut at the same key frame as breaks[0] (a) (2000 ms)",
        ),
        (
            "both",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 100, "asset_uri": "https://ads.example/a.m3u8", "asset_list": "https://ads.example/l.json"}}]}}"#),
            "breaks[0] (a): names both asset_uri and asset_list (one only)",
        ),
        (
            "neither",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 100}}]}}"#),
            "breaks[0] (a): names neither asset_uri nor asset_list",
        ),
        (
            "zero",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 0, "asset_uri": "https://ads.example/a.m3u8"}}]}}"#),
            "breaks[0] (a): duration is 0 ms; a break lasts 1 to 600000 ms",
        ),
        (
            "another-scheme",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 100, "asset_uri": "javascript:alert(1)"}}]}}"#),
            "breaks[0] (a): asset_uri must be an http:// or https:// URI, or a reference relative to the title's playlists",
        ),
        (
            "relative-in-a-sequence",
            r#"{"parts": [{"file": "ladder-180p.mp4"}], "breaks": [{"id": "a", "at": 1000, "duration": 100, "asset_uri": "../ad.mp4/master.m3u8"}]}"#.to_owned(),
            "breaks[0] (a): a sequence's asset_uri or asset_list must be an absolute http:// or https:// URI",
        ),
        (
            "before-clip",
            format!(r#"{{{video}, "clip": {{"from": 2000}}, "breaks": [{{"id": "a", "at": 1000, "duration": 100, "asset_uri": "https://ads.example/a.m3u8"}}]}}"#),
            "breaks[0] (a): at 1000 ms is before the clip's start (2000 ms)",
        ),
        (
            "bad-date",
            format!(r#"{{{video}, "program_date_time": "2026-02-30T10:00:00Z"}}"#),
            "program_date_time: \"2026-02-30T10:00:00Z\" is not an RFC 3339 date-time",
        ),
        (
            "bad-id",
            format!(r#"{{{video}, "breaks": [{{"id": "a\"b", "at": 1000, "duration": 100, "asset_uri": "https://ads.example/a.m3u8"}}]}}"#),
            "breaks[0]: id must be 1 to 64 of",
        ),
        (
            "sequence-past-its-end",
            r#"{"parts": [{"file": "ladder-180p.mp4"}], "breaks": [{"id": "a", "at": 4000, "duration": 100, "asset_uri": "https://ads.example/a.m3u8"}]}"#.to_owned(),
            "breaks[0] (a): at 4000 ms is at or after the sequence's end (4000 ms)",
        ),
        (
            "part-with-breaks",
            r#"{"parts": [{"file": "ladder-180p.mp4"}, {"title": "breaks.json"}]}"#.to_owned(),
            "parts[1]: breaks.json has ad breaks of its own; a sequence's breaks are its document's",
        ),
        (
            "unknown-field",
            format!(r#"{{{video}, "breaks": [{{"id": "a", "at": 1000, "duration": 100, "asset_uri": "https://ads.example/a.m3u8", "cue": "PRE"}}]}}"#),
            "unknown field `cue`",
        ),
    ];
    for (name, document, reason) in &cases {
        std::fs::write(folder.path().join(format!("{name}.json")), document).expect("write");
        for entry in ["master.m3u8", "manifest.mpd"] {
            let reply = common::get(server.addr, &format!("/vod/{name}.json/{entry}")).await;
            let body = reply.text();
            assert_eq!(reply.status, 422, "{name} {entry}: {body}");
            assert!(
                body.contains(reason),
                "{name} {entry}: {body:?} lacks {reason:?}"
            );
            assert_eq!(
                body.trim_end().lines().count(),
                1,
                "{name}: one line: {body:?}"
            );
        }
    }
    assert_eq!(common::get(server.addr, "/healthz").await.status, 200);
    fetch_ok(&server, "/vod/breaks.json/master.m3u8").await;
    server.shutdown().await;
}

/// Given the title with two breaks, when its preview page is asked for, then it lists
/// both breaks in the document's order: id, the cut (the source's key frame at or before
/// `at`, found with ffprobe), the duration and the asset, as the HLS Interstitials say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_page_lists_the_breaks() {
    if !tools_available().await {
        return;
    }
    let (folder, server) = breaks_folder(DOCUMENT, Settings::default()).await;
    let reference = folder.path().join(FILES[0]).to_string_lossy().into_owned();
    let keys = key_frame_times(&reference).await;
    let html = fetch_text(&server, "/?key=breaks.json").await;
    let table = html
        .split("<table id=\"breaks\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .unwrap_or_else(|| panic!("no breaks table: {html}"));
    let rows: Vec<&str> = table.split("<tr><td>").skip(1).collect();
    assert_eq!(rows.len(), BREAKS.len(), "{table}");
    for (row, (id, at_ms, duration_ms, _, uri)) in rows.iter().zip(BREAKS) {
        let cut = expected_cut(&keys, at_ms);
        let want = format!(
            "{id}</td><td>{cut:.3} s</td><td>{}.{:03} s</td><td>{}</td></tr>",
            duration_ms / 1000,
            duration_ms % 1000,
            uri
        );
        assert!(row.starts_with(&want), "{row}\nwanted {want}");
    }
    server.shutdown().await;
}

/// Given a document whose break assets are relative references, when its media playlists
/// are read, then each asset is written resolved against the playlist's URI as RFC 8216
/// 4.1 and RFC 3986 5.2 resolve a playlist's URIs (an absolute path on this server, since
/// hls.js would resolve it against its page instead), and the resolved ad plays: the
/// multivariant playlist it names is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_break_assets_are_resolved_against_the_playlist() {
    let document = r#"{
      "video": [{"file": "ladder-180p.mp4"}],
      "breaks": [
        {"id": "mid-1", "at": 1500, "duration": 400, "asset_uri": "../../h264-aac-3s.mp4/master.m3u8"},
        {"id": "mid-2", "at": 2600, "duration": 500, "asset_list": "/ads/list.json?b=2"}
      ]
    }"#;
    let (_folder, server) = breaks_folder(document, Settings::default()).await;
    let master = fetch_text(&server, "/vod/breaks.json/master.m3u8").await;
    let uri = (master.lines())
        .find(|l| !l.starts_with('#') && l.contains("index-"))
        .unwrap_or_else(|| panic!("no media playlist: {master}"))
        .to_owned();
    let playlist = fetch_text(&server, &format!("/vod/breaks.json/{uri}")).await;
    assert!(
        playlist.contains("X-ASSET-URI=\"/vod/h264-aac-3s.mp4/master.m3u8\""),
        "{playlist}"
    );
    assert!(
        playlist.contains("X-ASSET-LIST=\"/ads/list.json?b=2\""),
        "{playlist}"
    );
    fetch_ok(&server, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    server.shutdown().await;
}
