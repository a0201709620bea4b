//! Trick play: every key frame an HLS I-frame playlist addresses decodes on its own to one
//! key frame, the very picture the variant shows at that time; the DASH trick-play set
//! lists the same key frames.

use super::common::{self, TempDir};
use super::http::*;
use super::tools::*;
use super::FIXTURES;

/// One I-frame playlist entry: its duration, byte range and URI.
struct IframeEntry {
    duration: f64,
    length: u64,
    offset: u64,
    uri: String,
}

fn iframe_entries(playlist: &str) -> Vec<IframeEntry> {
    let mut entries = Vec::new();
    let (mut duration, mut range) = (None, None);
    for line in playlist.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#EXTINF:") {
            duration = rest.trim_end_matches(',').parse::<f64>().ok();
        } else if let Some(rest) = line.strip_prefix("#EXT-X-BYTERANGE:") {
            let (length, offset) = rest.split_once('@').expect("length@offset");
            range = Some((length.parse().unwrap(), offset.parse().unwrap()));
        } else if !line.is_empty() && !line.starts_with('#') {
            let (length, offset) = range.take().expect("every I-frame has EXT-X-BYTERANGE");
            entries.push(IframeEntry {
                duration: duration.take().expect("every I-frame has EXTINF"),
                length,
                offset,
                uri: line.to_owned(),
            });
        }
    }
    entries
}

/// Given each fixture with video, when each I-frame of its I-frame playlist is fetched by its
/// byte range and appended to the init segment, then ffmpeg decodes exactly one frame, a
/// key frame, equal (MD5 of the picture) to the variant's own frame at that time; the
/// I-frames together last as long as the variant; the DASH trick-play set has one segment
/// per I-frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_iframe_byte_range_decodes_to_one_key_frame() {
    let Some(server) = start().await else { return };
    let dir = TempDir::new("iframes");
    // The fixtures, and the ladder title (three video renditions, each with its own).
    for fixture in FIXTURES.iter().copied().chain(["ladder/ladder.json"]) {
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
        let variants = master
            .lines()
            .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"))
            .filter(|l| quoted_attribute(l, "CODECS").is_some_and(|c| is_video_codecs(&c)))
            .count();
        let iframe_uris: Vec<String> = master
            .lines()
            .filter(|l| l.starts_with("#EXT-X-I-FRAME-STREAM-INF:"))
            .filter_map(|l| quoted_attribute(l, "URI"))
            .collect();
        assert_eq!(
            iframe_uris.len(),
            variants,
            "{fixture}: one I-frame playlist per video variant\n{master}"
        );
        for (variant, uri) in iframe_uris.iter().enumerate() {
            check_iframes(&server, &dir, fixture, &base, variant, uri).await;
        }
        let Some(uri) = iframe_uris.first() else {
            continue;
        };
        let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
        let entries = iframe_entries(&playlist);
        // Together they last as long as the variant's media playlist.
        let media_uri = master
            .lines()
            .skip_while(|l| !l.starts_with("#EXT-X-STREAM-INF:"))
            .find(|l| !l.starts_with('#'))
            .expect("a variant's media playlist");
        let media = fetch_text(&server, &format!("{base}{media_uri}")).await;
        let media_total: f64 = MediaPlaylist::parse(&media).extinfs.iter().sum();
        let iframe_total: f64 = entries.iter().map(|e| e.duration).sum();
        assert!(
            (media_total - iframe_total).abs() < 0.001,
            "{fixture}: I-frames last {iframe_total} s, the variant {media_total} s"
        );
        // DASH: the trick-play set lists the same key frames.
        let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
        assert!(
            mpd.contains("schemeIdUri=\"http://dashif.org/guidelines/trickmode\""),
            "{fixture}: no trick-play set\n{mpd}"
        );
        let trick = &mpd[mpd
            .find("<Representation id=\"ifr-")
            .expect("trick-play Representation")..];
        let timeline = &trick[..trick.find("</SegmentTimeline>").unwrap()];
        let count: usize = timeline
            .split("<S ")
            .skip(1)
            .map(|s| 1 + quoted_xml(s, "r").map_or(0, |r| r.parse::<usize>().unwrap()))
            .sum();
        assert_eq!(count, entries.len(), "{fixture}: trick-play segments");
    }
    server.shutdown().await;
}

/// The I-frames of the I-frame playlist `uri` of video variant `variant` (0-based, in
/// master order) each decode alone to one key frame, the variant's own picture at that time.
async fn check_iframes(
    server: &common::TestServer,
    dir: &TempDir,
    fixture: &str,
    base: &str,
    variant: usize,
    uri: &str,
) {
    let shown =
        frames_on_output_timeline(&Via::Hls.input(server, fixture), &format!("v:{variant}")).await;
    let folder = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
    let playlist = fetch_text(server, &format!("{base}{uri}")).await;
    assert!(playlist.contains("#EXT-X-I-FRAMES-ONLY"), "{playlist}");
    let init_uri = MediaPlaylist::parse(&playlist)
        .map_uri
        .expect("EXT-X-MAP in the I-frame playlist");
    let init = fetch_ok(server, &format!("{base}{folder}{init_uri}")).await;
    let entries = iframe_entries(&playlist);
    assert!(!entries.is_empty(), "{fixture}: no I-frames\n{playlist}");
    for (n, entry) in entries.iter().enumerate() {
        let path = format!("{base}{folder}{}", entry.uri);
        let range = format!("bytes={}-{}", entry.offset, entry.offset + entry.length - 1);
        let reply = common::request(server.addr, "GET", &path, &[("Range", &range)]).await;
        assert!(
            matches!(reply.status, 200 | 206),
            "{path}: {}",
            reply.status
        );
        assert_eq!(reply.body.len() as u64, entry.length, "{path} {range}");
        let file = dir.path().join(format!("iframe-{variant}-{n}.mp4"));
        std::fs::write(&file, [&init.body[..], &reply.body[..]].concat()).unwrap();
        let file = file.to_string_lossy().into_owned();
        let frames = frames_on_output_timeline(&file, "v:0").await;
        assert_eq!(frames.len(), 1, "{path}: decodes to one frame");
        let keys = key_frame_flags(&file).await;
        assert_eq!(keys, [true], "{path}: a key frame");
        let frame = &frames[0];
        let same = shown
            .iter()
            .find(|f| (f.pts_s - frame.pts_s).abs() < 0.0005);
        let same = same.unwrap_or_else(|| {
            panic!("{path}: no frame of variant {variant} at {} s", frame.pts_s)
        });
        assert_eq!(
            same.hash, frame.hash,
            "{path} at {} s: not the variant's picture",
            frame.pts_s
        );
    }
}

/// Whether `CODECS` names a video codec.
fn is_video_codecs(codecs: &str) -> bool {
    codecs.split(',').any(|c| {
        ["avc", "hvc", "hev", "av01", "vp09", "dvh"]
            .iter()
            .any(|v| c.trim().starts_with(v))
    })
}

/// `name="value"` in an XML start tag.
fn quoted_xml(text: &str, name: &str) -> Option<String> {
    let tag = &text[..text.find('>')?];
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_owned())
}

/// Every decoded frame of the first video stream of `input` with its own presentation
/// time, exact from ffprobe (ffmpeg's `framemd5` rounds to a guessed frame rate, and a
/// lone frame has none), and its picture's MD5 from ffmpeg, in the same order.
pub(crate) async fn frames_on_output_timeline(input: &str, selector: &str) -> Vec<Frame> {
    let times = ffprobe_show(
        input,
        Some(selector),
        "frame=best_effort_timestamp_time",
        "csv=p=0",
    )
    .await;
    let times: Vec<f64> = String::from_utf8_lossy(&times)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
        .collect();
    let hashes = frame_hashes(input, selector).await;
    assert_eq!(
        times.len(),
        hashes.len(),
        "{input}: ffprobe and ffmpeg frame counts"
    );
    (times.into_iter().zip(hashes))
        .map(|(pts_s, frame)| Frame { pts_s, ..frame })
        .collect()
}

/// The key-frame flag of every video frame ffprobe decodes from `input`.
async fn key_frame_flags(input: &str) -> Vec<bool> {
    let out = ffprobe_show(input, Some("v:0"), "frame=key_frame", "csv=p=0").await;
    String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().starts_with('1'))
        .collect()
}
