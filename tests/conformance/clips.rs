//! Clips: `/vod/KEY/clip/FROM-TO/` decodes, through HLS and DASH, to exactly the
//! source's frames presented in `[FROM, TO)`, keeps audio and video together to the
//! millisecond, and refuses what cannot be a clip with 400 and the reason.
//!
//! What the output may carry besides those frames, and why: before FROM, the frames from
//! the key frame at or before FROM (pre-roll, needed to decode the first one; HLS states
//! the start with `EXT-X-START` and DASH shows them, design 6.2; ffmpeg decodes and shows
//! them both ways); after TO, at most the frames that B-frame reordering decodes before the
//! last frame presented before TO (2 in these fixtures).

use super::common;
use super::http::*;
use super::tools::*;
use super::SYNC_TOLERANCE_S;

/// Longest run of frames (30 fps, 1 s GOPs in these fixtures) that may precede FROM.
const MAX_PREROLL_FRAMES: usize = 30;
/// Most frames presented at or after TO that the output may need to carry.
const MAX_REORDER_FRAMES: usize = 2;

/// The clips checked: (fixture, FROM ms, TO ms or None for the end, what it shows).
const CLIPS: &[(&str, u64, Option<u64>, &str)] = &[
    ("h264-aac-3s.mp4", 1000, Some(2000), "on a key frame"),
    ("h264-aac-3s.mp4", 1200, Some(2500), "mid-GOP, B-frames"),
    (
        "h264-aac-3s.mp4",
        2600,
        None,
        "in the last segment, to the end",
    ),
    ("hevc-aac-3s.mp4", 500, Some(1700), "mid-GOP, HEVC"),
    (
        "h264-aac-edit-mid-gop.mp4",
        700,
        Some(2100),
        "a file with its own mid-GOP edit",
    ),
];

fn clip_path(fixture: &str, from: u64, to: Option<u64>, name: &str) -> String {
    let to = to.map_or(String::new(), |t| t.to_string());
    format!("/vod/{fixture}/clip/{from}-{to}/{name}")
}

/// The video frames of every clip, through HLS and DASH, are the source's frames in
/// `[FROM, TO)`, in order, preceded only by pre-roll from before FROM and followed only by
/// at most two reordered frames from at or after TO.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clips_decode_to_the_source_frames_in_their_interval() {
    let Some(server) = start().await else { return };
    for &(fixture, from, to, what) in CLIPS {
        let source = frame_hashes(&Via::Source.input(&server, fixture), "v:0").await;
        let (from_s, to_s) = (
            from as f64 / 1000.0,
            to.map_or(f64::INFINITY, |t| t as f64 / 1000.0),
        );
        let eps = 0.0005;
        let start = source
            .iter()
            .position(|f| f.pts_s >= from_s - eps)
            .expect("frames after FROM");
        let end = source
            .iter()
            .position(|f| f.pts_s >= to_s - eps)
            .unwrap_or(source.len());
        let want = &source[start..end];
        assert!(
            want.len() >= 10,
            "{fixture} {what}: only {} source frames",
            want.len()
        );
        for name in ["master.m3u8", "manifest.mpd"] {
            let input = server.url(&clip_path(fixture, from, to, name));
            let got = frame_hashes(&input, "v:0").await;
            let label = format!("{fixture} clip {from}-{to:?} ({what}) via {name}");
            let hashes: Vec<&str> = got.iter().map(|f| f.hash.as_str()).collect();
            let want_hashes: Vec<&str> = want.iter().map(|f| f.hash.as_str()).collect();
            let Some(at) = (0..=hashes.len().saturating_sub(want.len()))
                .find(|&i| hashes[i..i + want.len()] == want_hashes[..])
            else {
                panic!("{label}: the source's {} frames in the interval are not all there in order ({} decoded)", want.len(), got.len());
            };
            assert!(at <= MAX_PREROLL_FRAMES, "{label}: {at} frames before FROM");
            // Pre-roll: the source frames just before FROM, in order.
            let preroll: Vec<&str> = source[start - at..start]
                .iter()
                .map(|f| f.hash.as_str())
                .collect();
            assert_eq!(
                hashes[..at],
                preroll[..],
                "{label}: what precedes FROM is not the pre-roll"
            );
            let after = &hashes[at + want.len()..];
            assert!(
                after.len() <= MAX_REORDER_FRAMES,
                "{label}: {} frames after TO",
                after.len()
            );
            for hash in after {
                assert!(
                    source[end..].iter().any(|f| f.hash == *hash),
                    "{label}: a frame after TO is not a source frame at or after TO"
                );
            }
            if to.is_none() {
                assert!(
                    after.is_empty(),
                    "{label}: frames past the end of the source"
                );
            }
        }
    }
    server.shutdown().await;
}

/// In every clip, video and audio are moved by the same shift (output pts - source pts)
/// within 1 ms, through HLS and DASH: the first source video frame at or after FROM and
/// the first source audio frame at or after FROM are found in the output by their bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clips_keep_audio_and_video_together_to_the_millisecond() {
    let Some(server) = start().await else { return };
    for &(fixture, from, to, what) in CLIPS {
        let source_input = Via::Source.input(&server, fixture);
        let from_s = from as f64 / 1000.0;
        for name in ["master.m3u8", "manifest.mpd"] {
            let input = server.url(&clip_path(fixture, from, to, name));
            let label = format!("{fixture} clip {from}-{to:?} ({what}) via {name}");
            let mut shifts = Vec::new();
            for selector in ["v:0", "a:0"] {
                let src = packets(&source_input, selector).await;
                // From the first packet, in decode order, presented at or after FROM.
                let first = src
                    .iter()
                    .position(|p| p.pts >= from_s - 0.0005)
                    .expect("a packet after FROM");
                let run = &src[first..(first + 8).min(src.len())];
                let out = packets(&input, selector).await;
                let shift = matched_shift(run, &out).unwrap_or_else(|| {
                    panic!("{label}: {selector}'s packets after FROM are not in the output")
                });
                shifts.push(shift);
            }
            assert!(
                (shifts[0] - shifts[1]).abs() <= SYNC_TOLERANCE_S,
                "{label}: video moved by {:.6} s, audio by {:.6} s",
                shifts[0],
                shifts[1]
            );
        }
    }
    server.shutdown().await;
}

/// A clip past the end of the title, one whose TO is not after its FROM, and malformed
/// numbers get 400 with the reason; a clip's resources live in their own version folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_clips_are_refused_with_the_reason() {
    let server = fixtures_server().await;
    for (path, reason) in [
        (
            "/vod/h264-aac-3s.mp4/clip/9000-10000/master.m3u8",
            "after the end of the title",
        ),
        (
            "/vod/h264-aac-3s.mp4/clip/3000-/manifest.mpd",
            "after the end of the title",
        ),
        (
            "/vod/h264-aac-3s.mp4/clip/2000-1000/master.m3u8",
            "not after its start",
        ),
        (
            "/vod/h264-aac-3s.mp4/clip/2000-2000/master.m3u8",
            "not after its start",
        ),
        (
            "/vod/h264-aac-3s.mp4/clip/1.5-2/master.m3u8",
            "malformed FROM",
        ),
        ("/vod/h264-aac-3s.mp4/clip/1000/master.m3u8", "FROM-TO"),
    ] {
        let reply = common::get(server.addr, path).await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.text());
        assert!(reply.text().contains(reason), "{path}: {}", reply.text());
    }
    let whole = common::version_folder(server.addr, "h264-aac-3s.mp4").await;
    let master = fetch_ok(&server, "/vod/h264-aac-3s.mp4/clip/1000-2000/master.m3u8").await;
    let clipped = common::version_folder_in(&master.text());
    assert_ne!(
        whole, clipped,
        "a clip shares the whole title's version folder"
    );
    server.shutdown().await;
}
