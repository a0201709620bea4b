//! Stream-copy trims (`ffmpeg -ss X -i in.mp4 -t Y -c copy out.mp4`), made at test time: an
//! edit list that starts inside a GOP and mid-frame for video, and 27 AAC frames plus 192
//! samples into the audio. ffmpeg's native AAC encoder uses perceptual noise substitution,
//! whose decoder draws from a random generator, so decoded audio depends on where decoding
//! starts: the output must start the audio decoder where ffmpeg's mov demuxer does for the
//! source (one second before the edit's media time) for every decoder to get its PCM.

use super::common::{self, TempDir};
use super::*;
use vodpack::config::Settings;

/// A 20 s A/V source (2 s GOPs, B-frames, AAC of a beeping tone) and its stream-copy trim
/// from 2.5 s for 12 s, written into `dir` as `src20.mp4` and `trim.mp4`.
async fn make_trim(dir: &std::path::Path) {
    let src = dir.join("src20.mp4").to_string_lossy().into_owned();
    let trim = dir.join("trim.mp4").to_string_lossy().into_owned();
    let lavfi = |graph: &str| {
        ["-f", "lavfi", "-i"]
            .map(str::to_owned)
            .into_iter()
            .chain([graph.to_owned()])
    };
    let mut encode = args(&["-v", "error", "-nostdin", "-y"]);
    encode.extend(lavfi("testsrc2=size=320x180:rate=25"));
    encode.extend(lavfi("sine=frequency=440:beep_factor=4:sample_rate=48000"));
    encode.extend(args(&[
        "-t", "20", "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-bf", "2", "-c:a",
        "aac", &src,
    ]));
    run_tool("ffmpeg", encode).await;
    let copy = args(&[
        "-v", "error", "-nostdin", "-y", "-ss", "2.5", "-i", &src, "-t", "12", "-c", "copy", &trim,
    ]);
    run_tool("ffmpeg", copy).await;
}

/// Given a stream-copy trim, when its audio is decoded through HLS (CMAF and TS) and DASH,
/// then every decoded frame after the first (which the source trims) equals the source's,
/// in order, after the pre-roll the output carries before the presentation start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trim_decodes_to_the_source_audio_frames_everywhere() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("conformance-trim-audio");
    make_trim(dir.path()).await;
    let server = common::start_server_with(dir.path(), common::segments_of(1000)).await;
    let source = dir.path().join("trim.mp4").to_string_lossy().into_owned();
    let want = frame_hashes(&source, "a:0").await;
    assert!(
        want.len() > 500,
        "the source decodes to {} frames",
        want.len()
    );
    let want = &want[1..];
    for resource in ["master.m3u8", "manifest.mpd", "master-ts.m3u8"] {
        let got = frame_hashes(&server.url(&format!("/vod/trim.mp4/{resource}")), "a:0").await;
        // Pre-roll comes first: the output's frames line up with the source's from the
        // first one equal to the source's second.
        let Some(start) = got.iter().position(|f| f.hash == want[0].hash) else {
            panic!("{resource}: the source's second audio frame is not in the output");
        };
        let got = &got[start..];
        assert!(
            got.len() + 1 >= want.len(),
            "{resource}: {} frames after the pre-roll, the source has {}",
            got.len(),
            want.len()
        );
        if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
            panic!(
                "{resource}: decoded audio frame {} of {} differs from the source's",
                i + 1,
                want.len()
            );
        }
    }
    server.shutdown().await;
}

/// One DASH Representation's timeline: `presentationTimeOffset`, the first `S@t` and the
/// end of the last segment, in seconds.
#[derive(Debug)]
struct Timeline {
    offset: f64,
    start: f64,
    end: f64,
}

/// The timeline of the Representation `id` in `mpd` (a SegmentTemplate with a timeline).
fn timeline(mpd: &str, id: &str) -> Timeline {
    let at = mpd
        .find(&format!("<Representation id=\"{id}\""))
        .unwrap_or_else(|| panic!("no Representation {id} in\n{mpd}"));
    let representation = &mpd[at..mpd[at..]
        .find("</Representation>")
        .map_or(mpd.len(), |e| at + e)];
    let attribute = |text: &str, name: &str| -> Option<f64> {
        let start = text.find(&format!(" {name}=\""))? + name.len() + 3;
        text[start..].split('"').next()?.parse().ok()
    };
    let template = representation
        .split("<SegmentTemplate")
        .nth(1)
        .expect("a SegmentTemplate");
    let timescale = attribute(template, "timescale").expect("a timescale");
    let offset = attribute(template, "presentationTimeOffset").unwrap_or(0.0);
    // Each `S` element's attributes, with the space before the first one put back.
    let segments: Vec<String> = (template.split("<S ").skip(1))
        .map(|s| format!(" {s}"))
        .collect();
    let start = (segments.first())
        .and_then(|s| attribute(s, "t"))
        .unwrap_or(0.0);
    let mut end = start;
    for s in &segments {
        let d = attribute(s, "d").expect("S@d");
        end += d * (1.0 + attribute(s, "r").unwrap_or(0.0));
    }
    Timeline {
        offset: offset / timescale,
        start: start / timescale,
        end: end / timescale,
    }
}

/// Given a stream-copy trim, when its MPD is read, then the audio Representation covers
/// the Period from its start (its first segment starts at or before its
/// `presentationTimeOffset`) and ends where the source's audio ends against its video,
/// within one AAC frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trim_s_dash_audio_covers_the_period() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("conformance-trim-dash");
    make_trim(dir.path()).await;
    let server = common::start_server_with(dir.path(), Settings::default()).await;
    let mpd = fetch_text(&server, "/vod/trim.mp4/manifest.mpd").await;
    let (video, audio) = (timeline(&mpd, "t1"), timeline(&mpd, "t2"));
    assert!(
        audio.start <= audio.offset,
        "audio starts {:.4} s after the Period start\n{mpd}",
        audio.start - audio.offset
    );
    let source = dir.path().join("trim.mp4").to_string_lossy().into_owned();
    // ffprobe names the fields in its own order: codec_type before duration.
    let probe = ffprobe_show(&source, None, "stream=codec_type,duration", "csv=p=0").await;
    let probe = String::from_utf8_lossy(&probe).into_owned();
    let duration = |kind: &str| -> f64 {
        (probe.lines())
            .find_map(|line| {
                line.strip_prefix(kind)?
                    .strip_prefix(',')?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {kind} duration in {probe}"))
    };
    // Period times of each end: the source's audio ends this long after its video.
    let want = (video.end - video.offset) + duration("audio") - duration("video");
    let got = audio.end - audio.offset;
    assert!(
        (got - want).abs() <= AAC_FRAME as f64 / 48_000.0,
        "audio ends at {got:.4} s of the Period, the source's at {want:.4} s\n{mpd}"
    );
    server.shutdown().await;
}
