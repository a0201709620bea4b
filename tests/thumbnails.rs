//! Thumbnails over HTTP (`thumb-MS[-wW][-hH].jpg`): the frame presented at MS,
//! decoded by vodpack, is ffmpeg's frame (checked by PSNR through ffmpeg's own decode of
//! both); past the end and audio-only titles are 404, HEVC is 422 naming the feature (and
//! with the `libavcodec` feature, HEVC, AV1 and VP9 give ffmpeg's frames too: `libav`
//! below), a broken key frame is 422 and the server stays healthy, and the decode
//! admission sheds with 503 rather than queueing for ever. Tests that need ffmpeg/ffprobe skip without
//! them unless `VODPACK_REQUIRE_TOOLS=1`.

mod common;

use std::path::Path;
use std::process::Command;

use common::frames::{ffmpeg_rgb, first_key_frame, image_size, output_of, probe_video, psnr};
use common::{get, have_tool, start_server, start_server_with, TempDir};
use vodpack::config::Settings;

/// Least PSNR (dB) between our thumbnail and ffmpeg's decode of the same frame.
const MIN_PSNR_DB: f64 = 35.0;

/// Presentation times (s) of the video frames of `file`, in presentation order, as ffprobe
/// reads them (edit lists applied).
fn frame_times(file: &Path) -> Vec<f64> {
    let out = probe_video(file, "frame=pts_time");
    let mut times: Vec<f64> = out
        .lines()
        .filter_map(|l| l.split(',').next()?.trim().parse().ok())
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// Given every H.264 fixture, when its first frame, a mid-GOP frame and its last frame are
/// asked for (full size, one side, both sides), then each answer is a JPEG of the asked
/// size showing ffmpeg's frame at that time, at 35 dB PSNR or better.
#[tokio::test]
async fn every_h264_fixture_gives_ffmpegs_frame_at_several_times() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let fixtures = common::fixtures();
    let mut names: Vec<String> = std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("h264-") && n.ends_with(".mp4"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let server = start_server(&fixtures).await;
    let scratch = TempDir::new("thumbs");
    let mut report = Vec::new();
    for name in &names {
        let file = fixtures.join(name);
        assert_eq!(image_size(&file), (320, 180), "{name}");
        report.extend(frames_match_ffmpeg(&server, (name, &file), scratch.path()).await);
    }
    eprintln!("{}", report.join("\n"));
    server.shutdown().await;
}

/// Given the 3 s fixture, when a time at or past its end is asked for, then 404 says so;
/// an audio-only title is 404 naming the missing video; HEVC and AV1 titles are 422 naming
/// the cargo feature that would decode them (200 in a build with it); a size over the
/// bounds is 400.
#[tokio::test]
async fn what_cannot_be_pictured_says_why() {
    let server = start_server(&common::fixtures()).await;
    let past = get(server.addr, "/vod/h264-aac-3s.mp4/thumb-3000.jpg").await;
    assert_eq!(past.status, 404, "{}", past.text());
    assert!(past.text().contains("past the end"), "{}", past.text());
    let audio = get(server.addr, "/vod/aac-3s-audio-only.m4a/thumb-0.jpg").await;
    assert_eq!(audio.status, 404);
    assert!(audio.text().contains("no video"), "{}", audio.text());
    let hevc = get(server.addr, "/vod/hevc-aac-3s.mp4/thumb-1000.jpg").await;
    #[cfg(not(feature = "libavcodec"))]
    {
        assert_eq!(hevc.status, 422);
        assert!(hevc.text().contains("`libavcodec`"), "{}", hevc.text());
        let av1 = get(server.addr, "/vod/av1-10bit-pq-aac-3s.mp4/thumb-0.jpg").await;
        assert_eq!(av1.status, 422);
        assert!(av1.text().contains("`libavcodec`"), "{}", av1.text());
    }
    #[cfg(feature = "libavcodec")]
    assert_eq!(hevc.status, 200, "{}", hevc.text());
    let huge = get(server.addr, "/vod/h264-aac-3s.mp4/thumb-0-w5000.jpg").await;
    assert_eq!(huge.status, 400, "{}", huge.text());
    let ok = get(server.addr, "/vod/h264-aac-3s.mp4/thumb-2999-w64.jpg").await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert!(ok
        .header("etag")
        .is_some_and(|t| t.ends_with("-thumb-2999-w64.jpg\"")));
    server.shutdown().await;
}

/// Given a video whose frames are `frames` (ffprobe's presentation times, in s), when its
/// first frame (natural size), its frame 13 (or last; width 160) and its last frame (150x100)
/// are asked for from `server`, then each is a JPEG of that size showing ffmpeg's frame
/// at 35 dB PSNR or better; returns one report line per image.
async fn frames_match_ffmpeg(
    server: &common::TestServer,
    (key, file): (&str, &Path),
    scratch: &Path,
) -> Vec<String> {
    let times = frame_times(file);
    let last = times.len().checked_sub(1).expect("frames");
    let natural = image_size(file);
    let narrow = (160, (160 * natural.1 + natural.0 / 2) / natural.0);
    // Pictures of more than 8 bits, or not 4:2:0, are brought to 8-bit 4:2:0 by ffmpeg
    // before its RGB conversion, as thumbnails are: ffmpeg's direct 10-bit conversion
    // upsamples chroma differently from its 8-bit one, and on the saturated test patterns
    // of the fixtures its two paths differ from each other by 35 dB or less.
    let to_8bit = match pixel_format(file).as_str() {
        "yuv420p" | "yuvj420p" => "",
        _ => "format=yuv420p,",
    };
    let mut report = Vec::new();
    for (n, w, h, size) in [
        (0, None, None, natural),
        (13.min(last), Some(160), None, narrow),
        (last, Some(150), Some(100), (150, 100)),
    ] {
        let ms = (times[n] * 1000.0).floor() as u64 + 1;
        let mut thumb = format!("thumb-{ms}");
        if let Some(w) = w {
            thumb.push_str(&format!("-w{w}"));
        }
        if let Some(h) = h {
            thumb.push_str(&format!("-h{h}"));
        }
        let reply = get(server.addr, &format!("/vod/{key}/{thumb}.jpg")).await;
        assert_eq!(reply.status, 200, "{key} {thumb}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some("image/jpeg"));
        let jpeg = scratch.join(format!("{}-{thumb}.jpg", key.replace('/', "_")));
        std::fs::write(&jpeg, &reply.body).expect("write");
        assert_eq!(image_size(&jpeg), size, "{key} {thumb}");
        let ours = ffmpeg_rgb(&jpeg, "null");
        let scale = format!(
            "select=eq(n\\,{n}),{to_8bit}scale={}:{}:{ACCURATE},format=rgb24",
            size.0, size.1
        );
        let theirs = ffmpeg_rgb(file, &scale);
        let db = psnr(&ours, &theirs);
        let mut line = format!("{key} {thumb} frame {n}: {db:.1} dB");
        if !to_8bit.is_empty() {
            let direct = format!(
                "select=eq(n\\,{n}),format=rgb24,scale={}:{}",
                size.0, size.1
            );
            let direct = psnr(&ours, &ffmpeg_rgb(file, &direct));
            line.push_str(&format!(" (ffmpeg's direct conversion: {direct:.1} dB)"));
        }
        report.push(line);
        assert!(db >= MIN_PSNR_DB, "{key} {thumb} (frame {n}): {db:.1} dB");
    }
    report
}

/// The pixel format of the first video stream of `file`, as ffprobe names it.
fn pixel_format(file: &Path) -> String {
    let out = probe_video(file, "stream=pix_fmt");
    out.trim().to_owned()
}

/// Given copies of a fixture whose first key frame has a NAL length running past the
/// sample (a truncated sample) or garbage in its slice data, when its first frame is asked
/// for, then 422 with the reason, and the server goes on answering: the intact fixture's
/// thumbnail is 200 right after.
#[tokio::test]
async fn a_broken_key_frame_is_a_422_and_the_server_stays_healthy() {
    if !have_tool("ffprobe") {
        return;
    }
    let root = TempDir::new("thumbs-broken");
    let source = common::fixtures().join("h264-aac-3s.mp4");
    let bytes = std::fs::read(&source).expect("fixture");
    let (pos, size) = first_key_frame(&source);
    let mut truncated = bytes.clone();
    truncated[pos..pos + 4].copy_from_slice(&(size as u32 * 2).to_be_bytes());
    std::fs::write(root.path().join("truncated.mp4"), truncated).expect("write");
    let mut garbage = bytes.clone();
    // Past the first NAL units' headers (SEI, then the IDR slice), into slice data.
    for (i, b) in garbage[pos + size / 2..pos + size].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151) ^ 0x5a;
    }
    std::fs::write(root.path().join("garbage.mp4"), garbage).expect("write");
    std::fs::write(root.path().join("intact.mp4"), &bytes).expect("write");
    let server = start_server(root.path()).await;
    let cut = get(server.addr, "/vod/truncated.mp4/thumb-0.jpg").await;
    assert_eq!(cut.status, 422, "{}", cut.text());
    assert!(cut.text().contains("does not decode"), "{}", cut.text());
    let bad = get(server.addr, "/vod/garbage.mp4/thumb-0.jpg").await;
    eprintln!("garbage slice data: {} {}", bad.status, bad.text());
    assert!(bad.status == 422 || bad.status == 200, "{}", bad.status);
    for _ in 0..2 {
        let ok = get(server.addr, "/vod/intact.mp4/thumb-0.jpg").await;
        assert_eq!(ok.status, 200, "{}", ok.text());
        let again = get(server.addr, "/vod/truncated.mp4/thumb-500.jpg").await;
        assert_eq!(again.status, 422);
    }
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
    server.shutdown().await;
}

/// Given one decode place and a 1 ms queue wait, when 12 thumbnails are asked for at once,
/// then every one is answered promptly, each 200 or 503 with `Retry-After`, some of them
/// 503: the decode admission sheds instead of queueing without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decodes_over_the_limit_get_503_with_retry_after() {
    let mut settings = Settings::default();
    settings.thumbnails.max_decodes = 1;
    settings.thumbnails.queue_wait_ms = 1;
    let server = start_server_with(&common::fixtures(), settings).await;
    let asks = (0..12).map(|i| {
        let addr = server.addr;
        tokio::spawn(async move {
            let path = format!("/vod/h264-aac-3s.mp4/thumb-{}.jpg", 1000 + i * 97);
            get(addr, &path).await
        })
    });
    let all = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        futures_util::future::join_all(asks),
    )
    .await
    .expect("every request answered");
    let mut shed = 0;
    for reply in all {
        let reply = reply.expect("task");
        match reply.status {
            200 => {}
            503 => {
                shed += 1;
                assert_eq!(reply.header("retry-after"), Some("1"));
            }
            other => panic!("{other}: {}", reply.text()),
        }
    }
    assert!(shed > 0, "one place and no queue sheds some of 12");
    let after = get(server.addr, "/vod/h264-aac-3s.mp4/thumb-0.jpg").await;
    assert_eq!(after.status, 200, "places are given back");
    server.shutdown().await;
}

/// ffmpeg's frame presented at `ms` of `file` (the last frame starting at or before it),
/// scaled to `size`, as raw RGB.
fn ffmpeg_frame_at(file: &Path, ms: u64, size: (u32, u32)) -> Vec<u8> {
    let times = frame_times(file);
    let n = times
        .iter()
        .rposition(|t| *t * 1000.0 <= ms as f64 + 0.5)
        .unwrap_or(0);
    let filter = format!(
        "select=eq(n\\,{n}),scale={}:{}:{ACCURATE},format=rgb24",
        size.0, size.1
    );
    ffmpeg_rgb(file, &filter)
}

/// Given `--nginx-vod-locations` with a `vod thumb` location, when nginx-vod-module's
/// thumbnail names are asked for under it (and under the HLS and DASH locations, as
/// vodpack's own names are), then each is ffmpeg's frame at that time at the asked size; a
/// `clipFrom` parameter moves the time as it moves the clip; the storyboard sheets the MPD
/// names under the DASH location are served; and the thumb location serves nothing else.
#[tokio::test]
async fn nginx_vod_thumbnail_names_answer_under_its_locations() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let fixtures = common::fixtures();
    let mut settings = Settings {
        nginx_vod_locations: "hls=/hls/,dash=/dash/,thumb=/thumb/".parse().unwrap(),
        ..Settings::default()
    };
    settings.storyboards.signalled = true;
    let server = start_server_with(&fixtures, settings).await;
    let scratch = TempDir::new("thumbs-nginx");
    let file = fixtures.join("h264-aac-3s.mp4");
    for (path, at_ms, size) in [
        (
            "/thumb/h264-aac-3s.mp4/thumb-1000-w150.jpg",
            1000,
            (150, 84),
        ),
        (
            "/thumb/h264-aac-3s.mp4/thumb-2000-w150-h100.jpg",
            2000,
            (150, 100),
        ),
        ("/hls/h264-aac-3s.mp4/thumb-1000-w150.jpg", 1000, (150, 84)),
        ("/dash/h264-aac-3s.mp4/thumb-500-h90.jpg", 500, (160, 90)),
        (
            "/thumb/clipFrom/1000/h264-aac-3s.mp4/thumb-500-w160.jpg",
            1500,
            (160, 90),
        ),
    ] {
        let reply = get(server.addr, path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some("image/jpeg"), "{path}");
        let jpeg = scratch.path().join("thumb.jpg");
        std::fs::write(&jpeg, &reply.body).expect("write");
        assert_eq!(image_size(&jpeg), size, "{path}");
        let db = psnr(
            &ffmpeg_rgb(&jpeg, "null"),
            &ffmpeg_frame_at(&file, at_ms, size),
        );
        assert!(db >= MIN_PSNR_DB, "{path}: {db:.1} dB");
    }
    let mpd = get(server.addr, "/dash/h264-aac-3s.mp4/manifest.mpd").await;
    assert_eq!(mpd.status, 200);
    let mpd = mpd.text();
    let image_set = (mpd.split("<AdaptationSet"))
        .find(|s| s.contains("contentType=\"image\""))
        .unwrap_or_else(|| panic!("no image set: {mpd}"));
    let media = (image_set.split("media=\"").nth(1))
        .and_then(|m| m.split('"').next())
        .expect("media");
    let sheet = media.replace("$Number$", "1");
    let reply = get(server.addr, &format!("/dash/h264-aac-3s.mp4/{sheet}")).await;
    assert_eq!(reply.status, 200, "{sheet}: {}", reply.text());
    assert_eq!(reply.header("content-type"), Some("image/jpeg"));
    for path in [
        "/thumb/h264-aac-3s.mp4/manifest.mpd",
        "/thumb/h264-aac-3s.mp4/storyboard.vtt",
    ] {
        assert_eq!(get(server.addr, path).await.status, 404, "{path}");
    }
    let past = get(server.addr, "/thumb/h264-aac-3s.mp4/thumb-3000.jpg").await;
    assert_eq!(past.status, 404, "{}", past.text());
    server.shutdown().await;
}

/// Make a 2 s H.264 clip of `testsrc2` (colour bars, gradients, moving shapes) at `size`
/// coded, pixel aspect `sar`, converted to Y'CbCr and tagged with matrix `matrix` (an
/// ffmpeg colour space name), limited range, GOPs of 25 frames with B-frames.
fn colour_clip(path: &Path, size: (u32, u32), sar: &str, matrix: &str) {
    output_of(
        Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!(
                "testsrc2=size={}x{}:rate=25:duration=2",
                size.0, size.1
            ))
            .args(["-vf"])
            .arg(format!(
                "scale=out_color_matrix={matrix}:out_range=tv,format=yuv420p,setsar={sar}"
            ))
            .args(["-c:v", "libx264", "-preset", "veryfast", "-crf", "16"])
            .args(["-g", "25", "-bf", "2", "-colorspace", matrix])
            .args(["-color_primaries", "bt709", "-color_trc", "bt709"])
            .args(["-color_range", "tv"])
            .arg(path),
    );
}

/// swscale's flags for its accurate path: without `full_chroma_int` it builds RGB from
/// chroma kept at half the output's width, which is softer than the frame itself (1080p to
/// 480x270 of `testsrc2`: 35 dB from its own accurate output).
const ACCURATE: &str = "flags=bicubic+accurate_rnd+full_chroma_int";

/// Given 1080p clips made at test time (BT.709 square pixels; 1440x1080 anamorphic shown
/// 16:9, BT.709; 720x576 anamorphic BT.601), when the first frame, a mid-GOP frame and the
/// last frame are asked for at full size and scaled (odd sides included), then each is
/// the size the display aspect gives and ffmpeg's frame (scaled and converted with the
/// clip's own matrix by swscale's accurate path) at 35 dB PSNR or better, and clearly further from the frame converted with the
/// other matrix: the colour matrix is the one the stream declares.
#[tokio::test]
async fn hd_clips_convert_with_their_own_colour_matrix_and_display_aspect() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let root = TempDir::new("thumbs-hd");
    let clips = [
        (
            "bt709-1080p.mp4",
            (1920, 1080),
            "1",
            "bt709",
            "bt601",
            (1920, 1080),
        ),
        (
            "bt709-1440x1080-sar4-3.mp4",
            (1440, 1080),
            "4/3",
            "bt709",
            "bt601",
            (1920, 1080),
        ),
        (
            "bt601-720x576-sar64-45.mp4",
            (720, 576),
            "64/45",
            "smpte170m",
            "bt709",
            (1024, 576),
        ),
    ];
    for (name, size, sar, matrix, ..) in clips {
        colour_clip(&root.path().join(name), size, sar, matrix);
    }
    let server = start_server(root.path()).await;
    let (mut report, mut failed) = (Vec::new(), Vec::new());
    for (name, _, _, matrix, other, display) in clips {
        let file = root.path().join(name);
        let times = frame_times(&file);
        let last = times.len() - 1;
        for (n, w, h, size) in [
            (0, None, None, display),
            // Every clip is shown 16:9.
            (13, None, Some(270), (480, 270)),
            (last, Some(333), Some(187), (333, 187)),
        ] {
            let ms = (times[n] * 1000.0).floor() as u64 + 1;
            let mut thumb = format!("thumb-{ms}");
            if let Some(w) = w {
                thumb.push_str(&format!("-w{w}"));
            }
            if let Some(h) = h {
                thumb.push_str(&format!("-h{h}"));
            }
            let reply = get(server.addr, &format!("/vod/{name}/{thumb}.jpg")).await;
            assert_eq!(reply.status, 200, "{name} {thumb}: {}", reply.text());
            let jpeg = root.path().join(format!("{name}-{thumb}.jpg"));
            std::fs::write(&jpeg, &reply.body).expect("write");
            assert_eq!(image_size(&jpeg), size, "{name} {thumb}");
            let ours = ffmpeg_rgb(&jpeg, "null");
            let reference = |m: &str| {
                let filter = format!(
                    "select=eq(n\\,{n}),scale={}:{}:in_color_matrix={m}:in_range=tv:{ACCURATE},format=rgb24",
                    size.0, size.1
                );
                ffmpeg_rgb(&file, &filter)
            };
            let right = psnr(&ours, &reference(matrix));
            let wrong = psnr(&ours, &reference(other));
            report.push(format!(
                "{name} {thumb} frame {n}: {right:.1} dB ({other}: {wrong:.1} dB)"
            ));
            if right < MIN_PSNR_DB || right < wrong + 3.0 {
                failed.push(format!("{name} {thumb}"));
            }
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        failed.is_empty(),
        "under {MIN_PSNR_DB} dB or not clearly above the other matrix: {failed:?}"
    );
    server.shutdown().await;
}

/// With the `libavcodec` feature: HEVC thumbnails (the committed 8-bit and 10-bit HDR
/// fixtures, and in-band parameter sets with wavefront slices), AV1 (the 10-bit fixture and
/// an 8-bit clip encoded here) and VP9 (a clip encoded here) are ffmpeg's frames; corrupt
/// key frames are 422 with the reason.
#[cfg(feature = "libavcodec")]
mod libav {
    use super::*;

    /// Whether this ffmpeg has the encoder `name` (Debian's has libaom, SVT-AV1 and
    /// libvpx); under `VODPACK_REQUIRE_TOOLS=1` a missing one fails the test.
    fn have_encoder(name: &str) -> bool {
        let out = Command::new("ffmpeg")
            .args(["-hide_banner", "-encoders"])
            .output()
            .expect("ffmpeg");
        let listed = String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(name));
        if !listed && std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
            panic!("ffmpeg's {name} encoder is required (VODPACK_REQUIRE_TOOLS=1)");
        }
        listed
    }

    /// A 2.4 s 320x180 25 fps test pattern (60 frames, a key frame every 30) encoded by
    /// `codec` into `out`.
    fn make_clip(out: &Path, codec: &[&str]) {
        let made = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc2=size=320x180:rate=25:duration=2.4")
            .args(["-pix_fmt", "yuv420p", "-g", "30"])
            .args(codec)
            .arg(out)
            .output()
            .expect("ffmpeg");
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
    }

    /// A folder with the HEVC and AV1 fixtures, plus AV1 and VP9 clips where this ffmpeg
    /// can encode them; the keys to check.
    fn clips(root: &Path) -> Vec<String> {
        let mut keys = Vec::new();
        for name in [
            "hevc-aac-3s.mp4",
            "hevc-main10-pq-aac-3s.mp4",
            "hevc-main10-hlg-aac-3s.mp4",
            "cbcs/hevc-2slices-wpp-hev1.mp4",
            "av1-10bit-pq-aac-3s.mp4",
        ] {
            let to = root.join(name);
            std::fs::create_dir_all(to.parent().expect("folder")).expect("mkdir");
            std::fs::copy(common::fixtures().join(name), to).expect("copy");
            keys.push(name.to_owned());
        }
        if have_encoder("libaom-av1") {
            let args = ["-c:v", "libaom-av1", "-cpu-used", "8", "-b:v", "300k"];
            make_clip(&root.join("av1-8bit.mp4"), &args);
            keys.push("av1-8bit.mp4".into());
        }
        if have_encoder("libvpx-vp9") {
            // Alternate reference frames on: hidden frames packed with shown ones.
            let args = ["-c:v", "libvpx-vp9", "-b:v", "300k", "-deadline", "good"];
            let args = [&args[..], &["-cpu-used", "5", "-auto-alt-ref", "1"]].concat();
            make_clip(&root.join("vp9.mp4"), &args);
            keys.push("vp9.mp4".into());
        }
        keys
    }

    /// Given the HEVC fixtures (8-bit, 10-bit PQ with `colr`, 10-bit HLG with colour only
    /// in the VUI, `hev1` with wavefront slices) and AV1 and VP9 clips, when the first
    /// frame, a mid-GOP frame and the last frame are asked for, then each is ffmpeg's frame
    /// at the asked size at 35 dB PSNR or better; their first storyboard sheet is a JPEG.
    #[tokio::test]
    async fn hevc_av1_and_vp9_give_ffmpegs_frame_at_several_times() {
        if !have_tool("ffmpeg") || !have_tool("ffprobe") {
            return;
        }
        let root = TempDir::new("thumbs-libav");
        let keys = clips(root.path());
        let server = start_server(root.path()).await;
        let scratch = TempDir::new("thumbs-libav-out");
        let mut report = Vec::new();
        for key in &keys {
            let file = root.path().join(key);
            report.extend(frames_match_ffmpeg(&server, (key, &file), scratch.path()).await);
            // Storyboard sheets take the same decoder.
            let sheet = get(server.addr, &format!("/vod/{key}/storyboard-1.jpg")).await;
            assert_eq!(sheet.status, 200, "{key}: {}", sheet.text());
            let jpeg = scratch.path().join("sheet.jpg");
            std::fs::write(&jpeg, &sheet.body).expect("write");
            assert!(image_size(&jpeg).0 > 0, "{key}: the sheet decodes");
        }
        eprintln!("{}", report.join("\n"));
        server.shutdown().await;
    }

    /// Given copies of the HEVC fixture whose first key frame has a NAL length running past
    /// the sample or garbage from its slice header on, and of the AV1 fixture with garbage
    /// from the first OBU of its first key frame on, when their first frame is asked for, then 422 with the
    /// reason, and the server goes on answering the intact fixture.
    #[tokio::test]
    async fn corrupt_hevc_and_av1_key_frames_are_422_and_the_server_stays_healthy() {
        if !have_tool("ffprobe") {
            return;
        }
        let root = TempDir::new("thumbs-libav-broken");
        let hevc = common::fixtures().join("hevc-aac-3s.mp4");
        let bytes = std::fs::read(&hevc).expect("fixture");
        let (pos, size) = first_key_frame(&hevc);
        let mut truncated = bytes.clone();
        truncated[pos..pos + 4].copy_from_slice(&(size as u32 * 2).to_be_bytes());
        std::fs::write(root.path().join("hevc-truncated.mp4"), truncated).expect("write");
        // Garbage from the slice header on (after the 4-byte length and 2-byte NAL header).
        let mut header = bytes.clone();
        scramble(&mut header[pos + 6..pos + size]);
        std::fs::write(root.path().join("hevc-garbage.mp4"), header).expect("write");
        // Garbage in the second half of the slice data only: CABAC reads any bits, and
        // ffmpeg itself decodes this one without a complaint (even with
        // `-err_detect explode`), so a picture is a fair answer too; a panic is not.
        let mut data = bytes.clone();
        scramble(&mut data[pos + size / 2..pos + size]);
        std::fs::write(root.path().join("hevc-garbage-data.mp4"), data).expect("write");
        std::fs::write(root.path().join("hevc-intact.mp4"), &bytes).expect("write");
        let av1 = common::fixtures().join("av1-10bit-pq-aac-3s.mp4");
        let mut av1_bytes = std::fs::read(&av1).expect("fixture");
        let (pos, size) = first_key_frame(&av1);
        // Garbage from the sample's first OBU (its sequence header) on, after its 2-byte
        // header: garbage only in tile data decodes to a picture in libdav1d, as CABAC
        // garbage does in HEVC.
        scramble(&mut av1_bytes[pos + 2..pos + size]);
        std::fs::write(root.path().join("av1-garbage.mp4"), av1_bytes).expect("write");
        let server = start_server(root.path()).await;
        for key in ["hevc-truncated.mp4", "hevc-garbage.mp4", "av1-garbage.mp4"] {
            let bad = get(server.addr, &format!("/vod/{key}/thumb-0.jpg")).await;
            eprintln!("{key}: {} {}", bad.status, bad.text());
            assert_eq!(bad.status, 422, "{key}: {}", bad.text());
            assert!(bad.text().contains("does not decode"), "{}", bad.text());
            let ok = get(server.addr, "/vod/hevc-intact.mp4/thumb-0.jpg").await;
            assert_eq!(ok.status, 200, "{}", ok.text());
        }
        let data = get(server.addr, "/vod/hevc-garbage-data.mp4/thumb-0.jpg").await;
        eprintln!("hevc-garbage-data.mp4: {}", data.status);
        assert!(data.status == 200 || data.status == 422, "{}", data.status);
        assert_eq!(get(server.addr, "/healthz").await.status, 200);
        server.shutdown().await;
    }

    /// Overwrite `bytes` with a fixed pattern.
    fn scramble(bytes: &mut [u8]) {
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151) ^ 0x5a;
        }
    }
}
