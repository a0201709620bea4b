//! Sequences: an ident made here with ffmpeg (5 s, 352x288 at 25 fps, H.264
//! Constrained Baseline, a chirp in AAC) played before the ladder fixture's title (three
//! rungs of High-profile H.264 at 30 fps, two audio languages, two sidecar subtitles).
//!
//! Every part of every rendition, as the HLS media playlists and the DASH Periods list it
//! (each part's `EXT-X-MAP` or `initialization` and its segments, fetched and joined), is
//! held to its own SOURCE FILE: the same decoded pictures, the same decoded audio, and
//! audio against video moved by the same amount to 2 ms. ffmpeg 5.1's HLS reader cannot
//! be used over the whole playlist: it keeps the first `EXT-X-MAP` after a discontinuity
//! (it stops at the second part, "m4a 3g2"), and its DASH reader reads one Period.

use std::path::Path;

use vodpack::package::DashSubtitleFormat;

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::subtitles::text_server;
use super::text_segments::dash_text_cues;
use super::tools::*;
use super::webvtt::unescaped;

/// Audio against video, per part: 2 ms (the issue's bar).
const AV_TOLERANCE_S: f64 = 0.002;

/// The sequence document: the ident, then the ladder title.
const SEQUENCE: &str = r#"{"parts": [{"file": "ident.mp4"}, {"title": "ladder.json"}]}"#;

/// A folder with the ladder fixture, an ident made by ffmpeg and the sequence document,
/// served with 1 s segments.
async fn sequence_folder() -> (TempDir, TestServer) {
    sequence_folder_with(SEQUENCE).await
}

/// [`sequence_folder`] with `document` as `sequence.json`.
async fn sequence_folder_with(document: &str) -> (TempDir, TestServer) {
    let folder = TempDir::new("sequence");
    let ladder = common::fixtures().join("ladder");
    for entry in std::fs::read_dir(&ladder).expect("ladder fixtures") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), folder.path().join(entry.file_name())).expect("copy");
    }
    let ident = folder.path().join("ident.mp4");
    run_tool(
        "ffmpeg",
        args(&[
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=352x288:rate=25:duration=5",
            "-f",
            "lavfi",
            "-i",
            "aevalsrc=0.4*sin(2*PI*(200+150*t)*t):s=48000:d=5",
            "-c:v",
            "libx264",
            "-profile:v",
            "baseline",
            "-g",
            "25",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-ac",
            "2",
            "-metadata:s:a:0",
            "language=eng",
            "-shortest",
            &ident.to_string_lossy(),
        ]),
    )
    .await;
    std::fs::write(folder.path().join("sequence.json"), document).expect("document");
    let server = common::start_server_with(folder.path(), common::segments_of(1000)).await;
    (folder, server)
}

/// The source of part `part` (1-based) of the sequence's rendition named `name`
/// (`index-f3-t1.m3u8` or a DASH Representation id `f3-t1`): the ident for part 1, else
/// the ladder file the rendition's file number names (`f4` is the French audio).
fn source_of(folder: &Path, part: usize, name: &str) -> String {
    let file = match part {
        1 => "ident.mp4",
        _ if name.contains("f1-") => "ladder-180p.mp4",
        _ if name.contains("f2-") => "ladder-360p.mp4",
        _ if name.contains("f3-") => "ladder-270p.mp4",
        _ if name.contains("f4-") => "ladder-fr.m4a",
        _ => panic!("{name}: no source"),
    };
    folder.join(file).to_string_lossy().into_owned()
}

/// A rendition is audio when its resources name the main audio (`f1-t2`) or the French
/// file (`f4`).
fn is_audio(name: &str) -> bool {
    name.contains("f1-t2") || name.contains("f4-t1")
}

/// Fetch `urls` (relative to `base`) and join their bodies into `file`.
async fn join_into(server: &TestServer, base: &str, urls: &[String], file: &Path) {
    let mut bytes = Vec::new();
    for url in urls {
        bytes.extend(fetch_ok(server, &format!("{base}{url}")).await.body);
    }
    std::fs::write(file, bytes).expect("write part");
}

/// Check one part of one rendition (joined into `file`) against `source`; returns how far
/// its first packets moved from the source's (seconds).
async fn check_part(file: &Path, source: &str, audio: bool, what: &str) -> f64 {
    let input = file.to_string_lossy().into_owned();
    if audio {
        let want = decode_pcm(source, "a:0", None).await;
        let got = decode_pcm(&input, "a:0", None).await;
        assert!(want.len() >= 48_000, "{what}: vacuous");
        let offset = pcm_offset(&want, &got)
            .unwrap_or_else(|| panic!("{what}: the PCM of {source} is not in the output"));
        assert!(offset <= 1024, "{what}: starts {offset} frames early");
    } else {
        let want = frame_hashes(source, "v:0").await;
        let got = frame_hashes(&input, "v:0").await;
        assert!(want.len() >= 100, "{what}: vacuous");
        assert_eq!(got.len(), want.len(), "{what}: number of frames");
        if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
            panic!("{what}: decoded frame {i} differs from {source}");
        }
    }
    let selector = if audio { "a:0" } else { "v:0" };
    let src = packets(source, selector).await;
    let out = packets(&input, selector).await;
    matched_shift(&src, &out)
        .unwrap_or_else(|| panic!("{what}: the first packets of {source} are not there"))
}

/// Every part of a media playlist: its `EXT-X-MAP` URI, then its segments' URIs.
fn playlist_parts(playlist: &str) -> Vec<Vec<String>> {
    let mut parts: Vec<Vec<String>> = Vec::new();
    for line in playlist.lines().map(str::trim) {
        if line.starts_with("#EXT-X-MAP:") {
            parts.push(quoted_attribute(line, "URI").into_iter().collect());
        } else if !line.is_empty() && !line.starts_with('#') {
            parts
                .last_mut()
                .expect("EXT-X-MAP first")
                .push(line.to_owned());
        }
    }
    parts
}

/// Given the ident and the ladder title in a sequence, when every rendition's media
/// playlist is read part by part, then each part decodes to its own source's pictures or
/// PCM, the parts are split by `EXT-X-DISCONTINUITY` with their own init segments, and in
/// each part audio and video moved by the same amount (2 ms): A/V as in each source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_sequence_parts_decode_to_their_own_sources() {
    if !tools_available().await {
        return;
    }
    let (folder, server) = sequence_folder().await;
    let base = "/vod/sequence.json/";
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let uris = master_playlist_uris(&master);
    assert_eq!(uris.len(), 5, "3 variants and 2 audio renditions: {master}");
    for line in master
        .lines()
        .filter(|l| l.starts_with("#EXT-X-STREAM-INF"))
    {
        let codecs = quoted_attribute(line, "CODECS").expect("CODECS");
        assert!(
            codecs.contains("avc1.42") && codecs.contains("avc1.64"),
            "CODECS covers both parts' profiles: {line}"
        );
    }
    assert!(!master.contains("I-FRAME"), "no trick play for sequences");
    let mut shifts: Vec<Vec<(String, f64)>> = vec![Vec::new(), Vec::new()];
    for uri in &uris {
        let (folder_name, name) = uri.split_once('/').expect("versioned");
        let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
        assert_eq!(
            playlist.matches("#EXT-X-DISCONTINUITY").count(),
            1,
            "{playlist}"
        );
        let parts = playlist_parts(&playlist);
        assert_eq!(parts.len(), 2, "{uri}: two parts");
        for (n, urls) in parts.iter().enumerate() {
            assert!(
                urls.iter().all(|u| u.contains(&format!("-p{}-", n + 1))),
                "{uri}: part {} names its part: {urls:?}",
                n + 1
            );
            let file = folder.path().join(format!("hls-{n}-{name}.mp4"));
            join_into(&server, &format!("{base}{folder_name}/"), urls, &file).await;
            let source = source_of(folder.path(), n + 1, name);
            let what = format!("HLS {name} part {}", n + 1);
            let shift = check_part(&file, &source, is_audio(name), &what).await;
            shifts[n].push((what, shift));
        }
    }
    for part in &shifts {
        let (_, first) = part[0].clone();
        for (what, shift) in part {
            assert!(
                (shift - first).abs() <= AV_TOLERANCE_S,
                "{what} moved by {shift:.6} s, the part's first rendition by {first:.6} s: {part:?}"
            );
        }
    }
    server.shutdown().await;
}

/// One Representation of one Period, as the MPD lists it.
#[derive(Debug)]
struct PeriodRepresentation {
    period: usize,
    start_s: f64,
    id: String,
    urls: Vec<String>,
    /// presentationTimeOffset over the timescale, seconds.
    offset_s: f64,
}

fn attribute(text: &str, name: &str) -> Option<String> {
    let start = text.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = text[start..].find('"')?;
    Some(text[start..start + len].to_owned())
}

/// The media Representations of every Period (text sets left out), with their init and
/// segment URLs from the template and the timeline.
fn mpd_periods(mpd: &str) -> Vec<PeriodRepresentation> {
    let mut out = Vec::new();
    for (period, text) in mpd.split("<Period ").skip(1).enumerate() {
        let start_s = attribute(&format!(" {text}"), "start")
            .and_then(|s| {
                s.trim_start_matches("PT")
                    .trim_end_matches('S')
                    .parse()
                    .ok()
            })
            .expect("Period@start");
        for rep in text.split("<Representation ").skip(1) {
            let rep = format!(" {rep}");
            // Text sets (`wvtt`, `stpp`) are read by `dash_sequence_text_sets_are_segments_in_every_period`.
            let codecs = attribute(&rep, "codecs").unwrap_or_default();
            if codecs == "wvtt" || codecs.starts_with("stpp") {
                continue;
            }
            let (Some(id), Some(init), Some(media)) = (
                attribute(&rep, "id"),
                attribute(&rep, "initialization"),
                attribute(&rep, "media"),
            ) else {
                continue;
            };
            let number: u64 = attribute(&rep, "startNumber").map_or(1, |n| n.parse().unwrap());
            let timescale: f64 = attribute(&rep, "timescale").unwrap().parse().unwrap();
            let offset: f64 =
                attribute(&rep, "presentationTimeOffset").map_or(0.0, |o| o.parse().unwrap());
            let count: u64 = (rep.split("<S ").skip(1))
                .map(|s| {
                    1 + attribute(&format!(" {s}"), "r").map_or(0, |r| r.parse::<u64>().unwrap())
                })
                .sum();
            let mut urls = vec![init.replace("$RepresentationID$", &id)];
            urls.extend((number..number + count).map(|k| {
                media
                    .replace("$RepresentationID$", &id)
                    .replace("$Number$", &k.to_string())
            }));
            out.push(PeriodRepresentation {
                period,
                start_s,
                id,
                urls,
                offset_s: offset / timescale,
            });
        }
    }
    out
}

/// Given the same sequence, when the MPD is read Period by Period, then there is one
/// Period per part, the second starting where the ident's ends, with the same
/// Representation ids in each; each Representation's segments decode to its part's own
/// source, and in each Period audio and video stand as in the source (2 ms), with each
/// Representation's presentationTimeOffset taken off as a player does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_sequence_periods_decode_to_their_own_sources() {
    if !tools_available().await {
        return;
    }
    let (folder, server) = sequence_folder().await;
    let base = "/vod/sequence.json/";
    let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
    let reps = mpd_periods(&mpd);
    assert_eq!(mpd.matches("<Period ").count(), 2, "{mpd}");
    let ids = |p: usize| -> Vec<&str> {
        (reps.iter())
            .filter(|r| r.period == p)
            .map(|r| r.id.as_str())
            .collect()
    };
    assert_eq!(ids(0), ids(1), "the same Representations in each Period");
    assert_eq!(ids(0).len(), 5, "3 rungs and 2 audio: {mpd}");
    let second = reps.iter().find(|r| r.period == 1).expect("second Period");
    let ident = packets(&source_of(folder.path(), 1, ""), "v:0").await;
    assert!(
        (second.start_s - span(&ident)).abs() < 0.05,
        "the second Period starts at {} s, where the 5 s ident ends",
        second.start_s
    );
    let mut shifts: Vec<Vec<(String, f64)>> = vec![Vec::new(), Vec::new()];
    for rep in &reps {
        let file = folder
            .path()
            .join(format!("dash-{}-{}.mp4", rep.period, rep.id));
        join_into(&server, base, &rep.urls, &file).await;
        let source = source_of(folder.path(), rep.period + 1, &format!("{}-", rep.id));
        let what = format!("DASH {} Period {}", rep.id, rep.period);
        let shift = check_part(&file, &source, is_audio(&rep.id), &what).await;
        shifts[rep.period].push((what, shift - rep.offset_s));
    }
    for period in &shifts {
        let (_, first) = period[0].clone();
        for (what, shift) in period {
            assert!(
                (shift - first).abs() <= AV_TOLERANCE_S,
                "{what} presented {shift:.6} s from its source, the Period's first {first:.6} s: {period:?}"
            );
        }
    }
    server.shutdown().await;
}

/// Given the same sequence and each DASH subtitle form, when the text sets of every
/// Period are read (init and segments joined, demuxed by ffmpeg; or the WebVTT file), then
/// both Periods list the ladder's two subtitle sets; the ident's Period (no subtitles of
/// its own) serves them empty on its own timeline (`vtte` samples, TTML documents with an
/// empty body, an empty WebVTT file), and the film's Period shows the English sidecar's
/// cues at their source times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_sequence_text_sets_are_segments_in_every_period() {
    if !tools_available().await {
        return;
    }
    let (folder, server) = sequence_folder().await;
    server.shutdown().await;
    for format in [
        DashSubtitleFormat::Wvtt,
        DashSubtitleFormat::Imsc1,
        DashSubtitleFormat::WebvttFile,
    ] {
        let server = text_server(folder.path(), format).await;
        let base = "/vod/sequence.json/";
        let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
        let periods: Vec<&str> = mpd.split("<Period ").skip(1).collect();
        assert_eq!(periods.len(), 2, "{mpd}");
        for (n, period) in periods.iter().enumerate() {
            let sets: Vec<&str> = (period.split("<AdaptationSet").skip(1))
                .filter(|s| s.contains("contentType=\"text\""))
                .collect();
            assert_eq!(
                sets.len(),
                2,
                "Period {n}: the ladder's two subtitle sets\n{mpd}"
            );
            for set in sets {
                let cues = dash_text_cues(&server, base, set).await;
                let english = set.contains("lang=\"en\"");
                match (n, english) {
                    (0, _) => assert!(cues.is_empty(), "{format:?} Period 0: {cues:?}"),
                    (_, true) => {
                        let times: Vec<(f64, f64)> =
                            cues.iter().map(|c| (c.start, c.end)).collect();
                        assert_eq!(times.len(), 2, "{format:?}: {cues:?}");
                        for ((start, end), (want_start, want_end)) in
                            times.iter().zip([(0.5, 1.25), (1.8, 3.2)])
                        {
                            assert!(
                                (start - want_start).abs() < 0.0015
                                    && (end - want_end).abs() < 0.0015,
                                "{format:?} Period 1: {cues:?}"
                            );
                        }
                        assert_eq!(unescaped(&cues[0].text), "Hello, <i>ladder</i>!");
                    }
                    _ => assert_eq!(cues.len(), 2, "{format:?} Period 1 German: {cues:?}"),
                }
            }
        }
        server.shutdown().await;
    }
}

/// The sequence with a program date and two ad breaks on its own timeline: one at the
/// boundary (5 s, part 2 at 0) and one inside the film (7.5 s: the ladder's key frame at
/// 2 s of part 2, so 7 s).
const SEQUENCE_WITH_BREAKS: &str = r#"{
  "parts": [{"file": "ident.mp4"}, {"title": "ladder.json"}],
  "program_date_time": "2026-12-04T21:00:00+01:00",
  "breaks": [
    {"id": "intro", "at": 5000, "duration": 2000, "asset_uri": "https://cdn.example/vod/ad.mp4/master.m3u8"},
    {"id": "mid", "at": 7500, "duration": 2000, "asset_list": "https://ads.example/list.json"}
  ]
}"#;

/// Given a sequence whose document has ad breaks, when its media playlists and MPD are
/// read, then each break is signalled in the part it falls in, at the sequence time of
/// the film's key frame at or before it: an interstitial with its SCTE-35 splice after the
/// discontinuity and at the cut inside part 2 (dated from the document's program date,
/// every part's first segment dated too), and an SCTE-35 EventStream in part 2's Period
/// at the cut from the Period's start. A break past the sequence's end is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequence_s_breaks_are_signalled_in_the_part_they_fall_in() {
    use super::breaks::{
        expected_cut, interstitials, key_frame_times, ms_after_eight, plain_attribute,
    };
    use super::scte35::{decode_splice, unhex};
    if !tools_available().await {
        return;
    }
    let (folder, server) = sequence_folder_with(SEQUENCE_WITH_BREAKS).await;
    let ident_end = 5.0;
    let keys = key_frame_times(&folder.path().join("ladder-360p.mp4").to_string_lossy()).await;
    let cuts = [ident_end, ident_end + expected_cut(&keys, 2500)];
    assert!(
        (cuts[1] - 7.0).abs() < 1e-6,
        "the film's key frame at 2 s: {cuts:?}"
    );
    let base = "/vod/sequence.json/";
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let uris = master_playlist_uris(&master);
    assert_eq!(uris.len(), 5, "{master}");
    let mut event_ids = Vec::new();
    for uri in &uris {
        let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
        let video =
            !(master.lines()).any(|l| l.starts_with("#EXT-X-MEDIA") && l.contains(uri.as_str()));
        let (found, first_date) = interstitials(&playlist);
        assert_eq!(
            first_date.map(|d| ms_after_eight(&d)),
            Some(0),
            "{uri}\n{playlist}"
        );
        assert_eq!(found.len(), 2, "{uri}: two interstitials\n{playlist}");
        let discontinuity = playlist.find("#EXT-X-DISCONTINUITY").expect("a boundary");
        assert!(
            playlist
                .find("ID=\"intro\"")
                .is_some_and(|at| at > discontinuity),
            "{uri}: the boundary's break is in part 2\n{playlist}"
        );
        for ((tag, id), cut) in found.iter().zip(["intro", "mid"]).zip(cuts) {
            let line = &tag.line;
            assert_eq!(quoted_attribute(line, "ID").as_deref(), Some(id), "{line}");
            let start = ms_after_eight(&quoted_attribute(line, "START-DATE").expect("date"));
            assert_eq!(start, (cut * 1000.0).round() as i64, "{uri}: {line}");
            let date = ms_after_eight(tag.program_date.as_deref().expect("dated segment"));
            // Audio's segments start at its first frame at or after the cut.
            let tolerance = if video { 1 } else { 50 };
            assert!(
                (date - start).abs() <= tolerance,
                "{uri}: {date} ms at {line}"
            );
            if video {
                assert!(
                    (tag.time_before - cut).abs() < 0.002,
                    "{uri}: {} s of segments before {id}, cut at {cut}",
                    tag.time_before
                );
            }
            let splice = decode_splice(&unhex(&plain_attribute(line, "SCTE35-OUT").unwrap()));
            assert!(splice.out_of_network, "{line}");
            assert_eq!(splice.duration, 2000 * 90, "{line}");
            event_ids.push(splice.event_id);
        }
    }
    event_ids.sort_unstable();
    event_ids.dedup();
    assert_eq!(
        event_ids.len(),
        2,
        "one splice id per break, the same in every playlist"
    );
    let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
    let periods: Vec<&str> = mpd.split("<Period ").skip(1).collect();
    assert_eq!(periods.len(), 2, "{mpd}");
    assert!(
        !periods[0].contains("EventStream"),
        "no break in the ident\n{mpd}"
    );
    let times: Vec<u64> = periods[1]
        .split("<Event ")
        .skip(1)
        .map(|e| {
            attribute(&format!(" {e}"), "presentationTime")
                .expect("time")
                .parse()
                .expect("number")
        })
        .collect();
    assert!(periods[1].contains("urn:scte:scte35:2014:xml+bin"), "{mpd}");
    assert_eq!(times.len(), 2, "{mpd}");
    for (time, cut) in times.iter().zip(cuts) {
        let want = ((cut - ident_end) * 90_000.0).round() as i64;
        assert!(
            (*time as i64 - want).abs() <= 1,
            "Event at {time}, cut at {cut} s\n{mpd}"
        );
    }

    // A break at the sequence's end (5 s + 4 s) is the document's fault.
    let past = SEQUENCE_WITH_BREAKS.replace("\"at\": 7500", "\"at\": 9000");
    std::fs::write(folder.path().join("past.json"), past).expect("document");
    let reply = common::get(server.addr, "/vod/past.json/master.m3u8").await;
    assert_eq!(reply.status, 422, "{}", reply.text());
    assert!(
        reply.text().contains("breaks[1] (mid)") && reply.text().contains("sequence's end"),
        "{}",
        reply.text()
    );
    let healthy = common::get(server.addr, "/vod/sequence.json/master.m3u8").await;
    assert_eq!(healthy.status, 200);
    server.shutdown().await;
}
