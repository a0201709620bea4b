//! Rotation: a video whose `tkhd` carries a display matrix, as phones write
//! portrait video, keeps it through every fMP4 output (CMAF HLS, DASH, their init segments,
//! nginx-vod's muxed init, a title's ladder), so a player turns it as it turns the source;
//! the decoded pictures are the source's. MPEG-TS has no place for the matrix: its players
//! get the picture as coded (README, "MPEG-TS").
//!
//! The files are made here with ffmpeg (`-metadata:s:v:0 rotate=N`, which ffmpeg 5.1 writes
//! as the `tkhd` matrix), plus one whose turn is in `mvhd` alone, which the index folds
//! into the track's matrix.

use std::path::Path;

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::tools::*;

/// The turns `ffmpeg -metadata:s:v:0 rotate=N` is asked for.
const ANGLES: [u32; 3] = [90, 180, 270];

/// A file turned a quarter by its `mvhd` matrix alone (its `tkhd` ones are unity).
const MOVIE_TURNED: &str = "movie-90.mp4";

/// A title document: a two-rung ladder of the 90° file and a smaller copy turned the same.
const PORTRAIT_LADDER: &str = "portrait.json";

/// The name of the file turned by `angle`.
fn turned(angle: u32) -> String {
    format!("rot-{angle}.mp4")
}

/// A folder with the rotated files, made with ffmpeg: 2 s of 160x90 H.264 at 30 fps with a
/// key frame a second, and AAC; then copies whose video `tkhd` says a turn.
async fn rotated_media() -> TempDir {
    let dir = TempDir::new("rotation");
    let path = |name: &str| dir.path().join(name);
    for (name, size) in [("upright.mp4", "160x90"), ("upright-small.mp4", "96x54")] {
        let encode = format!(
            "-f lavfi -i testsrc2=size={size}:rate=30:duration=2 \
             -f lavfi -i sine=frequency=440:sample_rate=48000:duration=2 \
             -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 30 -keyint_min 30 \
             -sc_threshold 0 -c:a aac"
        );
        ffmpeg(None, &encode, &path(name)).await;
    }
    let mut turns: Vec<(&str, String, u32)> = (ANGLES.iter())
        .map(|&angle| ("upright.mp4", turned(angle), angle))
        .collect();
    turns.push(("upright-small.mp4", "rot-90-small.mp4".to_owned(), 90));
    for (from, to, angle) in turns {
        let copy = format!("-map 0 -c copy -metadata:s:v:0 rotate={angle}");
        ffmpeg(Some(&path(from)), &copy, &path(&to)).await;
    }
    let mut movie = std::fs::read(path("upright.mp4")).expect("upright.mp4");
    turn_movie_a_quarter(&mut movie);
    std::fs::write(path(MOVIE_TURNED), movie).expect("write the mvhd-turned file");
    let ladder = r#"{"video": [{"file": "rot-90.mp4"}, {"file": "rot-90-small.mp4"}]}"#;
    std::fs::write(path(PORTRAIT_LADDER), ladder).expect("write the title document");
    dir
}

/// Run ffmpeg on `input` (if any) with `options` (split at white space) into `output`.
async fn ffmpeg(input: Option<&Path>, options: &str, output: &Path) {
    let mut command = args(&["-v", "error", "-nostdin", "-y"]);
    if let Some(input) = input {
        command.extend(["-i".to_owned(), input.to_string_lossy().into_owned()]);
    }
    command.extend(options.split_whitespace().map(str::to_owned));
    command.push(output.to_string_lossy().into_owned());
    run_tool("ffmpeg", command).await;
}

/// Write a quarter turn into the `mvhd` matrix of `file` (a version 0 `mvhd`, as ffmpeg
/// writes it for a short file: the matrix is 44 bytes into the box).
fn turn_movie_a_quarter(file: &mut [u8]) {
    let at = file.windows(4).position(|w| w == b"mvhd").expect("an mvhd") - 4;
    assert_eq!(file[at + 8], 0, "a version 0 mvhd");
    let quarter: [i32; 9] = [0, -0x1_0000, 0, 0x1_0000, 0, 0, 0, 0, 0x4000_0000];
    for (i, value) in quarter.iter().enumerate() {
        let field = at + 44 + 4 * i;
        file[field..field + 4].copy_from_slice(&value.to_be_bytes());
    }
}

/// A server over `dir` with 1 s segments and nginx-vod's locations.
async fn serve(dir: &TempDir) -> TestServer {
    common::start_server_with(
        dir.path(),
        common::nginx_vod_settings(1000, "hls=/hls/,hlsts=/hlsts/,dash=/dash/"),
    )
    .await
}

/// The display matrix ffprobe finds on the first video stream of `input` (its nine numbers
/// and the rotation ffprobe derives from them), or `None` when it has none.
async fn orientation(input: &str) -> Option<String> {
    let out = ffprobe_show(
        input,
        Some("v:0"),
        "stream_side_data=side_data_type,displaymatrix,rotation",
        "flat",
    )
    .await;
    // The `programs.program.*` lines repeat the streams' for HLS; keep the streams'.
    let found: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| l.starts_with("streams.stream.0.side_data_list."))
        .filter(|l| l.contains(".displaymatrix=") || l.contains(".rotation="))
        .map(|l| {
            l.split_once(".side_data.")
                .map_or(l, |(_, rest)| rest)
                .to_owned()
        })
        .collect();
    (!found.is_empty()).then(|| found.join(" "))
}

/// The bytes of `path` on `server`, written to `dir` as `name`, for ffprobe to read alone.
async fn fetched_file(server: &TestServer, path: &str, dir: &TempDir, name: &str) -> String {
    let body = fetch_ok(server, path).await.body;
    let file = dir.path().join(name);
    std::fs::write(&file, body).expect("write a fetched file");
    file.to_string_lossy().into_owned()
}

/// The init segment of the first video rendition, as HLS names it (`EXT-X-MAP` of the
/// first variant's playlist) and as DASH does (the first Representation's
/// `initialization`), both as paths on the server.
async fn init_segment_paths(server: &TestServer, key: &str) -> (String, String) {
    let base = format!("/vod/{key}/");
    let master = fetch_text(server, &format!("{base}master.m3u8")).await;
    let variant = (master.lines())
        .skip_while(|l| !l.starts_with("#EXT-X-STREAM-INF"))
        .nth(1)
        .expect("a variant");
    let playlist = fetch_text(server, &format!("{base}{variant}")).await;
    let map = MediaPlaylist::parse(&playlist)
        .map_uri
        .expect("an EXT-X-MAP");
    let folder = variant.rsplit_once('/').map_or("", |(folder, _)| folder);
    let hls = format!("{base}{folder}/{map}");
    let mpd = fetch_text(server, &format!("{base}manifest.mpd")).await;
    let attribute = |from: &str, name: &str| -> String {
        let start = from.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
        from[start..]
            .split('"')
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let representation = &mpd[mpd.find("<Representation ").expect("a Representation")..];
    let id = attribute(representation, "id");
    let init = attribute(representation, "initialization").replace("$RepresentationID$", &id);
    (hls, format!("{base}{init}"))
}

/// Given files turned 90°, 180° and 270° by their video `tkhd` matrix, and one turned by
/// its `mvhd` matrix alone, when ffprobe reads each through HLS (`master.m3u8`), through
/// DASH (`manifest.mpd`), and the init segments both name, fetched alone, then it finds
/// the source's display matrix and rotation every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_dash_and_init_segments_keep_the_source_rotation() {
    if !tools_available().await {
        return;
    }
    let media = rotated_media().await;
    let server = serve(&media).await;
    let mut seen = Vec::new();
    let mut keys: Vec<String> = ANGLES.iter().map(|&a| turned(a)).collect();
    keys.push(MOVIE_TURNED.to_owned());
    for key in &keys {
        let source = media.path().join(key).to_string_lossy().into_owned();
        let want = orientation(&source).await;
        assert!(
            want.is_some(),
            "{key}: ffprobe finds no rotation in the source"
        );
        for entry in ["master.m3u8", "manifest.mpd"] {
            let got = orientation(&server.url(&format!("/vod/{key}/{entry}"))).await;
            assert_eq!(got, want, "{key} via {entry}");
        }
        let (hls_init, dash_init) = init_segment_paths(&server, key).await;
        for (what, path) in [
            ("HLS EXT-X-MAP", hls_init),
            ("DASH initialization", dash_init),
        ] {
            let file = fetched_file(&server, &path, &media, "init.mp4").await;
            assert_eq!(orientation(&file).await, want, "{key}: {what} {path}");
        }
        seen.push(want);
    }
    // Not vacuous: the three turns differ, and the movie's quarter turn is the track's.
    assert!(
        seen[0] != seen[1] && seen[1] != seen[2] && seen[0] != seen[2],
        "{seen:?}"
    );
    assert_eq!(
        seen[3], seen[0],
        "a quarter turn in mvhd reads as one in tkhd"
    );
    server.shutdown().await;
}

/// Given the turned files, when they are decoded through HLS, DASH and MPEG-TS with the
/// display matrix ignored (`-noautorotate`), then every output gives the source's pictures;
/// when decoded as a player shows them, HLS and DASH give the source's turned pictures,
/// while MPEG-TS, which has no display matrix, gives them as coded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turned_video_decodes_to_the_source_pictures() {
    if !tools_available().await {
        return;
    }
    let media = rotated_media().await;
    let server = serve(&media).await;
    let hashes =
        |frames: Vec<Frame>| -> Vec<String> { frames.into_iter().map(|f| f.hash).collect() };
    for angle in ANGLES {
        let key = turned(angle);
        let source = media.path().join(&key).to_string_lossy().into_owned();
        let coded = hashes(coded_frame_hashes(&source, "v:0").await);
        let shown = hashes(frame_hashes(&source, "v:0").await);
        assert_eq!(coded.len(), 60, "{key}: two seconds at 30 fps");
        assert_ne!(coded, shown, "{key}: turning changes the pictures");
        for entry in ["master.m3u8", "manifest.mpd", "master-ts.m3u8"] {
            let input = server.url(&format!("/vod/{key}/{entry}"));
            let got = hashes(coded_frame_hashes(&input, "v:0").await);
            assert_eq!(got, coded, "{key} via {entry}: pictures as coded");
            let got = hashes(frame_hashes(&input, "v:0").await);
            if entry == "master-ts.m3u8" {
                assert_eq!(got, coded, "{key} via {entry}: shown as coded");
                assert_eq!(orientation(&input).await, None, "{key} via {entry}");
            } else {
                assert_eq!(got, shown, "{key} via {entry}: shown turned as the source");
            }
        }
    }
    server.shutdown().await;
}

/// Given the 90° file, when nginx-vod's muxed init segment (`init-v1-a1.mp4`, video and
/// audio in one `moov`) is fetched, and when a title document makes a ladder of it and a
/// smaller copy turned the same, then ffprobe finds the source's rotation in the muxed init
/// and in every variant of the ladder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_vod_and_ladder_outputs_keep_the_source_rotation() {
    if !tools_available().await {
        return;
    }
    let media = rotated_media().await;
    let server = serve(&media).await;
    let source = media.path().join(turned(90)).to_string_lossy().into_owned();
    let want = orientation(&source).await;
    assert!(want.is_some(), "the 90° source has a rotation");

    let muxed = fetched_file(
        &server,
        "/hls/rot-90.mp4/init-v1-a1.mp4",
        &media,
        "muxed.mp4",
    )
    .await;
    assert_eq!(orientation(&muxed).await, want, "nginx-vod init-v1-a1.mp4");

    let base = format!("/vod/{PORTRAIT_LADDER}/");
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let variants: Vec<&str> = (master.lines())
        .zip(master.lines().skip(1))
        .filter(|(tag, _)| tag.starts_with("#EXT-X-STREAM-INF"))
        .map(|(_, uri)| uri)
        .collect();
    assert_eq!(variants.len(), 2, "two rungs: {master}");
    for variant in variants {
        let got = orientation(&server.url(&format!("{base}{variant}"))).await;
        assert_eq!(got, want, "ladder variant {variant}");
    }
    server.shutdown().await;
}
