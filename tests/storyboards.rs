//! Storyboards over HTTP (`storyboard.vtt`, `storyboard-N.jpg`): the cues tile
//! the title's duration, each cue's `#xywh` lies inside its sheet, each sheet decodes at
//! the size the cues imply, and each tile shows ffmpeg's decode of the frame on screen at
//! its cue's start (a key frame: cues start at their tiles' key frames), scaled the same way (PSNR, through ffmpeg's decode of both).
//! With `--storyboards` on, the MPD has the DASH-IF thumbnail AdaptationSet and the
//! multivariant playlist an HLS image stream. Tests that
//! need ffmpeg/ffprobe skip without them unless `VODPACK_REQUIRE_TOOLS=1`.

mod common;

use std::path::Path;
use std::process::Command;

use common::frames::{ffmpeg_rgb, first_key_frame, image_size, probe_video, psnr};
use common::{get, have_tool, start_server_with, TempDir};
use vodpack::config::{Settings, StoryboardGrid};

/// Least PSNR (dB) between a tile and ffmpeg's decode of its frame scaled to the tile.
/// Measured here: 36.9-38.7 dB on the 8-bit fixtures, 34.3-36.0 dB on the 10-bit HLG and PQ
/// ones (HEVC, AV1; ffmpeg's reference converts those to RGB before scaling, we after); a
/// neighbouring key frame scores 12-14 dB.
const MIN_PSNR_DB: f64 = 34.0;

/// One cue of the index: start and end (ms), sheet number and tile rectangle.
#[derive(Debug)]
struct Cue {
    start_ms: u64,
    end_ms: u64,
    sheet: u32,
    rect: [u32; 4],
}

fn vtt_ms(text: &str) -> u64 {
    let (hms, ms) = text.split_once('.').expect("hh:mm:ss.ttt");
    let mut parts = hms.split(':').map(|p| p.parse::<u64>().expect("number"));
    let (h, m, s) = (parts.next(), parts.next(), parts.next());
    let secs = h.unwrap_or(0) * 3600 + m.unwrap_or(0) * 60 + s.unwrap_or(0);
    secs * 1000 + ms.parse::<u64>().expect("ms")
}

/// The cues of a storyboard index.
fn parse_cues(vtt: &str) -> Vec<Cue> {
    let mut blocks = vtt.split("\n\n");
    assert_eq!(blocks.next(), Some("WEBVTT"), "{vtt}");
    blocks
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let mut lines = block.trim().lines();
            let timing = lines.next().expect("timing line");
            let (start, end) = timing.split_once(" --> ").expect("-->");
            let text = lines.next().expect("cue text");
            let (name, xywh) = text.split_once("#xywh=").expect("#xywh");
            let sheet = (name.strip_prefix("storyboard-"))
                .and_then(|n| n.strip_suffix(".jpg"))
                .and_then(|n| n.parse().ok())
                .expect("sheet name");
            let numbers: Vec<u32> = xywh.split(',').map(|n| n.parse().expect("xywh")).collect();
            Cue {
                start_ms: vtt_ms(start),
                end_ms: vtt_ms(end),
                sheet,
                rect: numbers.try_into().expect("four numbers"),
            }
        })
        .collect()
}

/// Presentation times (s) of the video's frames in presentation order, and which are key
/// frames, as ffprobe reads them.
fn frames(file: &Path) -> Vec<(f64, bool)> {
    let out = probe_video(file, "frame=pts_time,key_frame");
    let mut frames: Vec<(f64, bool)> = out
        .lines()
        .filter_map(|l| {
            let mut fields = l.split(',');
            let key = fields.next()?.trim() == "1";
            let time = fields.next()?.trim().parse().ok()?;
            Some((time, key))
        })
        .collect();
    frames.sort_by(|a, b| a.0.total_cmp(&b.0));
    frames
}

/// A tile each 400 ms on sheets of 3x2 tiles 160 px wide: the 3 s fixtures have 8 tiles,
/// a full sheet and a one-row second sheet.
fn small_storyboards() -> Settings {
    let mut settings = Settings::default();
    settings.storyboards.interval_ms = 400;
    settings.storyboards.grid = StoryboardGrid {
        columns: 3,
        rows: 2,
    };
    settings.storyboards.tile_width = 160;
    settings
}

/// Given a tile each 400 ms on 3x2 sheets, when the storyboard of a plain fixture and of one
/// with B-frames and an edit list is asked for, then the cues start at 0, follow each other
/// and end at the title's end (the MPD's duration); every sheet decodes at full width and
/// the rows its cues use; every cue's rectangle lies inside its sheet; the frame on screen
/// at each cue's start is a key frame; and each tile, cut out with ffmpeg's crop, is
/// ffmpeg's decode of that frame scaled to the tile, at 34 dB PSNR or better; with the `libavcodec` feature, the same for
/// HEVC and AV1 fixtures.
#[tokio::test]
async fn each_tile_is_the_frame_at_its_cue_start_and_the_cues_tile_the_title() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let fixtures = common::fixtures();
    let server = start_server_with(&fixtures, small_storyboards()).await;
    let scratch = TempDir::new("storyboards");
    let mut report = Vec::new();
    let mut names = vec!["h264-aac-3s.mp4", "h264-bframes-editlist-aac.mp4"];
    // HEVC (8-bit, 10-bit HLG) and AV1 (10-bit PQ) are decoded by libavcodec when the
    // feature is on, as in CI and the image; without it they are a 422 (tests/thumbnails.rs).
    if cfg!(feature = "libavcodec") {
        names.extend([
            "hevc-aac-3s.mp4",
            "hevc-main10-hlg-aac-3s.mp4",
            "av1-10bit-pq-aac-3s.mp4",
        ]);
    }
    for name in names {
        let file = fixtures.join(name);
        let index = get(server.addr, &format!("/vod/{name}/storyboard.vtt")).await;
        assert_eq!(index.status, 200, "{name}: {}", index.text());
        assert!(index
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/vtt")));
        let cues = parse_cues(&index.text());
        let mpd = get(server.addr, &format!("/vod/{name}/manifest.mpd"))
            .await
            .text();
        let duration = (mpd.split("mediaPresentationDuration=\"PT").nth(1))
            .and_then(|rest| rest.split('S').next())
            .and_then(|secs| secs.parse::<f64>().ok())
            .expect("mediaPresentationDuration");
        assert_eq!(cues.first().map(|c| c.start_ms), Some(0), "{name}");
        for pair in cues.windows(2) {
            assert_eq!(pair[0].end_ms, pair[1].start_ms, "{name}: {pair:?}");
        }
        let end = cues.last().expect("cues").end_ms;
        assert!(
            (end as f64 - duration * 1000.0).abs() <= 1.0,
            "{name}: {end} ms"
        );
        let sheets = cues.iter().map(|c| c.sheet).max().expect("sheets");
        assert!(sheets >= 2, "{name}: {sheets} sheets");
        let frames = frames(&file);
        for sheet in 1..=sheets {
            let reply = get(server.addr, &format!("/vod/{name}/storyboard-{sheet}.jpg")).await;
            assert_eq!(reply.status, 200, "{name} sheet {sheet}: {}", reply.text());
            assert_eq!(reply.header("content-type"), Some("image/jpeg"));
            let jpeg = scratch.path().join(format!("{name}-{sheet}.jpg"));
            std::fs::write(&jpeg, &reply.body).expect("write");
            let (w, h) = image_size(&jpeg);
            let on_sheet: Vec<&Cue> = cues.iter().filter(|c| c.sheet == sheet).collect();
            let right = on_sheet.iter().map(|c| c.rect[0] + c.rect[2]).max();
            let bottom = on_sheet.iter().map(|c| c.rect[1] + c.rect[3]).max();
            assert_eq!(w, 480, "{name} sheet {sheet}: the grid's full width");
            assert_eq!(Some(h), bottom, "{name} sheet {sheet}: the rows used");
            assert!(right <= Some(w), "{name} sheet {sheet}");
            for cue in on_sheet {
                let [x, y, tw, th] = cue.rect;
                let start = cue.start_ms as f64 / 1000.0 + 1e-6;
                // The frame on screen at the cue's start is a key frame, and the tile is it.
                let key = (frames.iter().enumerate())
                    .filter(|(_, (t, _))| *t <= start)
                    .map(|(n, _)| n)
                    .next_back()
                    .unwrap_or(0);
                assert!(
                    frames.get(key).is_some_and(|(_, key_frame)| *key_frame),
                    "{name} cue {cue:?}: frame {key} on screen at its start is no key frame"
                );
                let ours = ffmpeg_rgb(&jpeg, &format!("crop={tw}:{th}:{x}:{y}"));
                let filter = format!("select=eq(n\\,{key}),format=rgb24,scale={tw}:{th}");
                let theirs = ffmpeg_rgb(&file, &filter);
                let db = psnr(&ours, &theirs);
                assert!(
                    db >= MIN_PSNR_DB,
                    "{name} cue {cue:?} frame {key}: {db:.1} dB"
                );
                // The check tells frames apart: another key frame matches the tile worse.
                let other = (frames.iter().enumerate())
                    .find(|(n, (_, key_frame))| *key_frame && *n != key)
                    .map(|(n, _)| n)
                    .expect("another key frame");
                let filter = format!("select=eq(n\\,{other}),format=rgb24,scale={tw}:{th}");
                let wrong = psnr(&ours, &ffmpeg_rgb(&file, &filter));
                assert!(
                    wrong < db,
                    "{name} cue {cue:?}: frame {other} {wrong:.1} dB"
                );
                report.push(format!(
                    "{name} {} ms: frame {key} {db:.1} dB, frame {other} {wrong:.1} dB",
                    cue.start_ms
                ));
            }
        }
        let past = get(
            server.addr,
            &format!("/vod/{name}/storyboard-{}.jpg", sheets + 1),
        )
        .await;
        assert_eq!(past.status, 404, "{}", past.text());
    }
    eprintln!("{}", report.join("\n"));
    server.shutdown().await;
}
/// Given the default settings, when the MPD is asked for, then it has no image set; given
/// `--storyboards on`, the MPD has a DASH-IF thumbnail AdaptationSet (IOP 6.2.6) whose
/// sheets are the storyboard's: the grid as `thumbnail_tile`, the sheet size, a segment
/// duration of a sheet's tiles, numbered from 1; and a sheet it names is served.
#[tokio::test]
async fn with_storyboards_on_the_mpd_lists_the_sheets_as_dash_if_thumbnails() {
    let fixtures = common::fixtures();
    let plain = start_server_with(&fixtures, Settings::default()).await;
    let mpd = get(plain.addr, "/vod/h264-aac-3s.mp4/manifest.mpd")
        .await
        .text();
    assert!(!mpd.contains("contentType=\"image\""), "{mpd}");
    plain.shutdown().await;
    let mut settings = small_storyboards();
    settings.storyboards.signalled = true;
    let server = start_server_with(&fixtures, settings).await;
    let mpd = get(server.addr, "/vod/h264-aac-3s.mp4/manifest.mpd")
        .await
        .text();
    let image_set = (mpd
        .split("<AdaptationSet")
        .find(|s| s.contains("contentType=\"image\"")))
    .unwrap_or_else(|| panic!("no image set: {mpd}"));
    for expected in [
        "mimeType=\"image/jpeg\"",
        "schemeIdUri=\"http://dashif.org/thumbnail_tile\" value=\"3x2\"",
        "width=\"480\" height=\"180\"",
        "duration=\"2400\"",
        "timescale=\"1000\"",
        "startNumber=\"1\"",
        "storyboard-$Number$.jpg",
    ] {
        assert!(image_set.contains(expected), "{expected}: {image_set}");
    }
    let media = (image_set.split("media=\"").nth(1))
        .and_then(|m| m.split('"').next())
        .expect("media");
    let first = media.replace("$Number$", "1");
    let sheet = get(server.addr, &format!("/vod/h264-aac-3s.mp4/{first}")).await;
    assert_eq!(sheet.status, 200, "{first}: {}", sheet.text());
    server.shutdown().await;
}

/// Given `--storyboards on`, when the multivariant playlist is asked for, then it has an
/// `EXT-X-IMAGE-STREAM-INF` (a tile's size, `CODECS="jpeg"`) naming an image playlist
/// whose segments are the sheets after `EXT-X-IMAGES-ONLY` and `EXT-X-TILES`, each served;
/// by default the multivariant playlist has none.
#[tokio::test]
async fn with_storyboards_on_the_multivariant_playlist_names_an_image_playlist() {
    let fixtures = common::fixtures();
    let plain = start_server_with(&fixtures, Settings::default()).await;
    let master = get(plain.addr, "/vod/h264-aac-3s.mp4/master.m3u8")
        .await
        .text();
    assert!(!master.contains("EXT-X-IMAGE-STREAM-INF"), "{master}");
    plain.shutdown().await;
    let mut settings = small_storyboards();
    settings.storyboards.signalled = true;
    let server = start_server_with(&fixtures, settings).await;
    let master = get(server.addr, "/vod/h264-aac-3s.mp4/master.m3u8")
        .await
        .text();
    let line = (master.lines())
        .find(|l| l.starts_with("#EXT-X-IMAGE-STREAM-INF:"))
        .unwrap_or_else(|| panic!("no image stream: {master}"));
    assert!(line.contains("RESOLUTION=160x90,CODECS=\"jpeg\""), "{line}");
    let uri = (line.split("URI=\"").nth(1))
        .and_then(|u| u.split('"').next())
        .expect("URI");
    let playlist = get(server.addr, &format!("/vod/h264-aac-3s.mp4/{uri}")).await;
    assert_eq!(playlist.status, 200, "{uri}");
    let text = playlist.text();
    assert!(text.contains("#EXT-X-IMAGES-ONLY\n"), "{text}");
    assert!(
        text.contains("#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=3x2,DURATION=0.400\n"),
        "{text}"
    );
    let folder = uri.rsplit_once('/').map_or("", |(folder, _)| folder);
    let sheets: Vec<&str> = text.lines().filter(|l| l.ends_with(".jpg")).collect();
    assert_eq!(sheets, ["storyboard-1.jpg", "storyboard-2.jpg"], "{text}");
    for sheet in sheets {
        let reply = get(
            server.addr,
            &format!("/vod/h264-aac-3s.mp4/{folder}/{sheet}"),
        )
        .await;
        assert_eq!(reply.status, 200, "{sheet}: {}", reply.text());
    }
    server.shutdown().await;
}

/// Given a copy of a fixture whose first key frame's NAL length runs past the sample, when
/// its first sheet is asked for, then 422 says the frame does not decode, its index is
/// still served (it decodes nothing), and the server goes on answering.
#[tokio::test]
async fn a_sheet_with_a_broken_key_frame_is_a_422_and_the_server_stays_healthy() {
    if !have_tool("ffprobe") {
        return;
    }
    let root = TempDir::new("storyboards-broken");
    let source = common::fixtures().join("h264-aac-3s.mp4");
    let mut bytes = std::fs::read(&source).expect("fixture");
    let (pos, size) = first_key_frame(&source);
    bytes[pos..pos + 4].copy_from_slice(&(size as u32 * 2).to_be_bytes());
    std::fs::write(root.path().join("truncated.mp4"), bytes).expect("write");
    std::fs::copy(&source, root.path().join("intact.mp4")).expect("copy");
    let server = start_server_with(root.path(), small_storyboards()).await;
    let sheet = get(server.addr, "/vod/truncated.mp4/storyboard-1.jpg").await;
    assert_eq!(sheet.status, 422, "{}", sheet.text());
    assert!(sheet.text().contains("does not decode"), "{}", sheet.text());
    let index = get(server.addr, "/vod/truncated.mp4/storyboard.vtt").await;
    assert_eq!(index.status, 200);
    let intact = get(server.addr, "/vod/intact.mp4/storyboard-1.jpg").await;
    assert_eq!(intact.status, 200, "{}", intact.text());
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
    server.shutdown().await;
}

/// The video packets of `file` in presentation order, as ffprobe reads them with the edit
/// list applied (a pre-roll before the edit's start has negative times): time (s) and
/// whether it is a key frame.
fn packets(file: &Path) -> Vec<(f64, bool)> {
    let out = probe_video(file, "packet=pts_time,flags");
    let mut packets: Vec<(f64, bool)> = out
        .lines()
        .filter_map(|l| {
            let mut fields = l.split(',');
            let time = fields.next()?.trim().parse().ok()?;
            let key = fields.next()?.contains('K');
            Some((time, key))
        })
        .collect();
    packets.sort_by(|a, b| a.0.total_cmp(&b.0));
    packets
}

/// Given a file whose edit list starts inside a GOP (a 0.533 s video pre-roll, which
/// DASH's Period and HLS's first segment show before the title's start) and `--storyboards
/// on`, when the MPD and the storyboard are asked for, then the video starts the Period at
/// 0 and the image set has no offset, so both count from the pre-roll's key frame; the cues
/// run from 0 to the MPD's end on that timeline; and each cue starts on a key frame of that
/// timeline (its source time plus the pre-roll) and its tile shows it (the title's first
/// key frame for a cue in the pre-roll, which thumbnails never show), checked against ffmpeg's decode of the source
/// with its edit list ignored (frames counted from the pre-roll's key frame).
#[tokio::test]
async fn with_a_pre_roll_tiles_follow_the_players_timeline() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let fixtures = common::fixtures();
    let name = "h264-aac-edit-mid-gop.mp4";
    let file = fixtures.join(name);
    let packets = packets(&file);
    let preroll = -packets.first().expect("packets").0;
    assert!(preroll > 0.5, "the fixture has a pre-roll: {preroll}");
    let mut settings = small_storyboards();
    settings.storyboards.signalled = true;
    let server = start_server_with(&fixtures, settings).await;
    let mpd = get(server.addr, &format!("/vod/{name}/manifest.mpd"))
        .await
        .text();
    let attr = |element: &str, name: &str| -> Option<f64> {
        let value = element.split(&format!(" {name}=\"")).nth(1)?;
        value.split('"').next()?.parse().ok()
    };
    let video = (mpd.split("<AdaptationSet"))
        .find(|s| s.contains("contentType=\"video\""))
        .expect("video set");
    let template = video.split("<SegmentTemplate").nth(1).expect("template");
    let first_s = video.split("<S ").nth(1).expect("timeline");
    let start =
        attr(first_s, "t").unwrap_or(0.0) - attr(template, "presentationTimeOffset").unwrap_or(0.0);
    assert_eq!(start, 0.0, "the video starts the Period: {video}");
    let image = (mpd.split("<AdaptationSet"))
        .find(|s| s.contains("contentType=\"image\""))
        .expect("image set");
    assert!(!image.contains("presentationTimeOffset"), "{image}");
    let duration = (mpd.split("mediaPresentationDuration=\"PT").nth(1))
        .and_then(|rest| rest.split('S').next())
        .and_then(|secs| secs.parse::<f64>().ok())
        .expect("mediaPresentationDuration");
    let cues = parse_cues(
        &get(server.addr, &format!("/vod/{name}/storyboard.vtt"))
            .await
            .text(),
    );
    assert_eq!(cues.first().map(|c| c.start_ms), Some(0));
    let end = cues.last().expect("cues").end_ms;
    assert!(
        (end as f64 - duration * 1000.0).abs() <= 1.0,
        "{end} ms, MPD {duration} s"
    );
    let scratch = TempDir::new("storyboards-preroll");
    // The frame on screen at `at` (source time, s): the last presented at or before it.
    // 1.5 ms of slack for the cue's and the pre-roll's rounding to whole ms; frames are
    // 33 ms apart.
    let on_screen = |at: f64| {
        (packets.iter().enumerate())
            .filter(|(_, (t, _))| *t <= at + 0.0015)
            .map(|(n, _)| n)
            .next_back()
    };
    let first_key = (packets.iter().enumerate())
        .find(|(_, (t, k))| *k && *t >= 0.0)
        .map(|(n, _)| n)
        .expect("a presented key frame");
    let mut moved = 0;
    for cue in &cues {
        // On the players' timeline the source's time t plays at t + pre-roll. A cue in the
        // pre-roll (which thumbnails never show) shows the title's first key frame; every
        // other cue starts on a key frame, and shows it.
        let at = cue.start_ms as f64 / 1000.0 - preroll;
        let key = match on_screen(at) {
            Some(n) if packets.get(n).is_some_and(|(t, _)| *t >= 0.0) => n,
            _ => first_key,
        };
        assert!(
            packets.get(key).is_some_and(|(_, k)| *k),
            "cue {cue:?}: frame {key} on screen at its start is no key frame"
        );
        // What the title's own timeline would have shown: the check tells them apart.
        moved += usize::from(Some(key) != on_screen(cue.start_ms as f64 / 1000.0));
        let sheet = get(
            server.addr,
            &format!("/vod/{name}/storyboard-{}.jpg", cue.sheet),
        )
        .await;
        assert_eq!(sheet.status, 200);
        let jpeg = scratch.path().join(format!("{}.jpg", cue.sheet));
        std::fs::write(&jpeg, &sheet.body).expect("write");
        let [x, y, tw, th] = cue.rect;
        let ours = ffmpeg_rgb(&jpeg, &format!("crop={tw}:{th}:{x}:{y}"));
        let raw = |n: usize| {
            let out = Command::new("ffmpeg")
                .args(["-v", "error", "-ignore_editlist", "1", "-i"])
                .arg(&file)
                .args(["-vf"])
                .arg(format!("select=eq(n\\,{n}),format=rgb24,scale={tw}:{th}"))
                .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
                .output()
                .expect("ffmpeg");
            out.stdout
        };
        let db = psnr(&ours, &raw(key));
        assert!(db >= MIN_PSNR_DB, "cue {cue:?}: frame {key} {db:.1} dB");
        let other = (packets.iter().enumerate())
            .find(|(n, (_, k))| *k && *n != key)
            .map(|(n, _)| n)
            .expect("another key frame");
        let wrong = psnr(&ours, &raw(other));
        assert!(
            wrong < db,
            "cue {cue:?}: frame {other} {wrong:.1} dB, {key} {db:.1} dB"
        );
    }
    assert!(
        moved > 0,
        "some tiles show another key frame than without the pre-roll"
    );
    server.shutdown().await;
}
