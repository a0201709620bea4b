//! CEA-608 captions carried in the video (ATSC A/53 `GA94` SEI), found when the title is
//! indexed and announced with no title document, and carried unchanged by every output.
//!
//! The file is made here (`common::captioned`): x264 encodes 4 s of test pattern, an SEI
//! unit of `cc_data()` goes before each picture's slice (a pop-on "HELLO" then "WORLD" on
//! CC1, and "HOLA" on CC3, field 2), and ffmpeg muxes it to MP4 with a stream copy. ffmpeg's
//! own caption decoder (lavfi `movie=...[out0+subcc]`) is the reader nobody here wrote:
//! it extracts the captions of the source and of each output (HLS CMAF, HLS TS, DASH, and
//! `cenc`, `cbcs` and SAMPLE-AES outputs decrypted), and they must be equal. Each input is
//! first made a raw H.264 stream and remuxed at the source's 30 fps, so caption times are
//! counted in pictures from the first, whatever timeline an output starts at.

use std::path::Path;

use vodpack::crypto::keys::hex;
use vodpack::crypto::{EncryptionPolicy, Secret, SecretKeyProvider};

use super::common::captioned::{
    ffmpeg, make_files, make_hevc_file, CAPTIONED, CAPTIONED_HEVC, FPS, PLAIN,
};
use super::common::{self, TempDir, TestServer};
use super::http::*;

const SECRET: &str = "captions key secret of 32 bytes!";

/// One caption as ffmpeg extracts it: start and end in ms, and its text.
type Caption = (u64, u64, String);

/// The CC1 captions ffmpeg extracts from `file` in `dir` (an MP4 or a TS), decrypted with
/// `key` when given: its video made a raw stream, remuxed at 30 fps, read by lavfi `subcc`.
fn captions_of(dir: &Path, file: &str, key: Option<&str>) -> Vec<Caption> {
    captions_of_coded(dir, file, key, "h264")
}

/// [`captions_of`] for video coded as `codec` (`h264` or `hevc`, also the raw stream's
/// muxer and file extension).
fn captions_of_coded(dir: &Path, file: &str, key: Option<&str>, codec: &str) -> Vec<Caption> {
    let raw = format!("{file}.{codec}");
    let decryption = key.map_or(String::new(), |key| format!("-decryption_key {key}"));
    ffmpeg(
        dir,
        &format!("-y {decryption} -i {file} -map 0:v:0 -c copy -f {codec} {raw}"),
    );
    captions_of_raw(dir, &raw)
}

/// The CC1 captions of the raw H.264 stream `raw` in `dir`, remuxed at 30 fps.
fn captions_of_raw(dir: &Path, raw: &str) -> Vec<Caption> {
    let remuxed = format!("{raw}.mp4");
    ffmpeg(
        dir,
        &format!("-y -framerate {FPS} -i {raw} -c copy {remuxed}"),
    );
    let srt = ffmpeg(
        dir,
        &format!("-f lavfi -i movie={remuxed}[out0+subcc] -map 0:1 -f srt -"),
    );
    parse_srt(&String::from_utf8_lossy(&srt))
}

fn parse_srt(text: &str) -> Vec<Caption> {
    let ms = |t: &str| -> u64 {
        let (hms, milli) = t.trim().split_once(',').unwrap();
        let parts: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + milli.parse::<u64>().unwrap()
    };
    let mut out = Vec::new();
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
        let Some(times) = lines.get(1) else { continue };
        let (start, end) = times.split_once("-->").unwrap();
        // ffmpeg wraps the text in a font tag and an ASS position override.
        let text: String = lines[2..].join("\n");
        let text = text
            .replace("<font face=\"Monospace\">", "")
            .replace("</font>", "")
            .replace("{\\an7}", "");
        out.push((ms(start), ms(end), text.trim().to_owned()));
    }
    out
}

/// A server over `root` with 1 s segments, nginx-vod-module's locations, and `policy`
/// (keys from [`SECRET`]).
async fn serve(root: &Path, policy: &str) -> TestServer {
    let mut settings = common::nginx_vod_settings(1000, "hls=/hls/,hlsts=/hlsts/,dash=/dash/");
    settings.protect.encryption = EncryptionPolicy::parse(policy).unwrap();
    settings.protect.key_secret = Some(Secret::from_text(SECRET, "test").unwrap());
    common::start_server_with(root, settings).await
}

fn key_of(key: &str) -> String {
    let provider = SecretKeyProvider::new(Secret::from_text(SECRET, "test").unwrap());
    hex(&provider.derive(key).key)
}

/// Media segments of a playlist, in order, as absolute paths under `base`; and its
/// `EXT-X-MAP` URI if it has one.
fn playlist_parts(playlist: &str, base: &str) -> (Option<String>, Vec<String>) {
    let map = (playlist.lines())
        .find(|l| l.starts_with("#EXT-X-MAP:"))
        .and_then(|l| quoted_attribute(l, "URI"))
        .map(|uri| format!("{base}{uri}"));
    let segments = (playlist.lines())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| format!("{base}{l}"))
        .collect();
    (map, segments)
}

/// The first video variant's media playlist of an HLS multivariant playlist: its init
/// segment (CMAF) and media segments.
async fn hls_video(server: &TestServer, master_path: &str) -> (Option<Vec<u8>>, Vec<Vec<u8>>) {
    let base = master_path.rsplit_once('/').unwrap().0.to_owned() + "/";
    let master = fetch_text(server, master_path).await;
    let variant = master
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .expect("a variant");
    let playlist_path = format!("{base}{variant}");
    let playlist = fetch_text(server, &playlist_path).await;
    // The playlist's URIs are relative to it (a version folder, in the encrypted case).
    let base = playlist_path.rsplit_once('/').unwrap().0.to_owned() + "/";
    let (map, segments) = playlist_parts(&playlist, &base);
    let init = match map {
        Some(map) => Some(fetch_ok(server, &map).await.body),
        None => None,
    };
    let mut bodies = Vec::new();
    for segment in segments {
        bodies.push(fetch_ok(server, &segment).await.body);
    }
    (init, bodies)
}

/// The video Representation of an MPD: its init segment and media segments.
async fn dash_video(server: &TestServer, key: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mpd = fetch_text(server, &format!("/vod/{key}/manifest.mpd")).await;
    let folder = mpd
        .split("initialization=\"")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("a SegmentTemplate")
        .to_owned();
    let video_set = mpd
        .split("<AdaptationSet")
        .find(|s| s.contains("contentType=\"video\""))
        .expect("a video set");
    let id = video_set
        .split("<Representation id=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a Representation")
        .to_owned();
    let base = format!("/vod/{key}/{folder}");
    let init = fetch_ok(server, &format!("{base}/init-{id}.mp4"))
        .await
        .body;
    let mut segments = Vec::new();
    for number in 1.. {
        let reply = common::get(server.addr, &format!("{base}/seg-{id}-{number}.m4s")).await;
        if reply.status == 404 {
            break;
        }
        assert_eq!(reply.status, 200);
        segments.push(reply.body);
    }
    (init, segments)
}

/// The caption SEI units of `bytes` (a segment): each `GA94` message's bytes.
fn caption_sei_units(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(4).position(|w| w == b"GA94") {
        let at = from + at;
        out.push(bytes[at.saturating_sub(6)..(at + 14).min(bytes.len())].to_vec());
        from = at + 4;
    }
    out
}

/// Given encrypted `encrypted` and clear `clear` media segments of the same title, then
/// each clear segment's caption SEI bytes are in the encrypted one, in the clear.
fn sei_left_clear(what: &str, clear: &[Vec<u8>], encrypted: &[Vec<u8>]) {
    assert_eq!(clear.len(), encrypted.len(), "{what}");
    let mut units = 0;
    for (n, (clear, encrypted)) in clear.iter().zip(encrypted).enumerate() {
        assert_ne!(clear, encrypted, "{what} segment {n} is encrypted");
        let want = caption_sei_units(clear);
        units += want.len();
        assert_eq!(caption_sei_units(encrypted), want, "{what} segment {n}");
    }
    assert!(units >= 100, "{what}: {units} caption units");
}

/// Given a file with CEA-608 captions on CC1 and CC3 and no title document, then HLS (fMP4
/// and TS, vodpack's URLs and nginx-vod-module's) announce both as `CLOSED-CAPTIONS` renditions named by their channel on every
/// variant, the MPD as `Accessibility` of the video set; and the CC1 captions ffmpeg
/// extracts from the HLS CMAF, HLS TS and DASH outputs are the source's, text and times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captions_in_the_video_are_announced_and_carried_by_every_output() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("captions");
    let root = dir.path().to_owned();
    tokio::task::spawn_blocking(move || make_files(&root))
        .await
        .unwrap();
    let root = dir.path().to_owned();
    let source = tokio::task::spawn_blocking(move || captions_of(&root, CAPTIONED, None))
        .await
        .unwrap();
    assert_eq!(
        source,
        vec![
            (233, 1500, "HELLO".to_owned()),
            (1900, 3333, "WORLD".to_owned())
        ],
        "ffmpeg sees the captions written into the source"
    );
    let server = serve(dir.path(), "none").await;
    let base = format!("/vod/{CAPTIONED}");
    let masters = [
        format!("{base}/master.m3u8"),
        format!("{base}/master-ts.m3u8"),
        format!("/hls/{CAPTIONED}/master.m3u8"),
        format!("/hlsts/{CAPTIONED}/master.m3u8"),
    ];
    for master in masters {
        let text = fetch_text(&server, &master).await;
        for channel in ["CC1", "CC3"] {
            let line = format!(
                "#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"cc\",NAME=\"{channel}\",DEFAULT={},AUTOSELECT=YES,INSTREAM-ID=\"{channel}\"",
                if channel == "CC1" { "YES" } else { "NO" }
            );
            assert!(text.contains(&line), "{master}: {text}");
        }
        for variant in text.lines().filter(|l| l.starts_with("#EXT-X-STREAM-INF")) {
            assert!(variant.contains("CLOSED-CAPTIONS=\"cc\""), "{variant}");
        }
    }
    for mpd in [
        format!("{base}/manifest.mpd"),
        format!("/dash/{CAPTIONED}/manifest.mpd"),
    ] {
        let mpd = fetch_text(&server, &mpd).await;
        let accessibility = r#"<Accessibility schemeIdUri="urn:scte:dash:cc:cea-608:2015" value="CC1=und;CC3=und"/>"#;
        assert!(mpd.contains(accessibility), "{mpd}");
    }

    let mut outputs: Vec<(&str, Vec<u8>)> = Vec::new();
    let (init, segments) = hls_video(&server, &format!("{base}/master.m3u8")).await;
    outputs.push(("hls.mp4", [init.unwrap(), segments.concat()].concat()));
    let (_, segments) = hls_video(&server, &format!("{base}/master-ts.m3u8")).await;
    outputs.push(("hls.ts", segments.concat()));
    let (init, segments) = dash_video(&server, CAPTIONED).await;
    outputs.push(("dash.mp4", [init, segments.concat()].concat()));
    for (name, bytes) in outputs {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let root = dir.path().to_owned();
        let got = tokio::task::spawn_blocking(move || captions_of(&root, name, None))
            .await
            .unwrap();
        assert_eq!(got, source, "{name}");
    }
    server.shutdown().await;
}

/// Given the captioned file encrypted (`cenc` and `cbcs` DASH, `cbcs` HLS CMAF, SAMPLE-AES
/// TS), then every caption SEI unit of the clear output is in the encrypted output, in the
/// clear (only slice data is encrypted); and the CC1 captions ffmpeg extracts from the
/// DASH and HLS CMAF outputs, each segment decrypted with the title's key, and from the
/// SAMPLE-AES playlist, which ffmpeg's HLS reader decrypts, are the source's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caption_sei_stays_in_the_clear_when_encrypted() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("captions-encrypted");
    let root = dir.path().to_owned();
    let source = tokio::task::spawn_blocking(move || {
        make_files(&root);
        captions_of(&root, CAPTIONED, None)
    })
    .await
    .unwrap();
    assert_eq!(source.len(), 2, "{source:?}");
    let clear = serve(dir.path(), "none").await;
    let key = key_of(CAPTIONED);
    let base = format!("/vod/{CAPTIONED}");
    let (_, clear_dash) = dash_video(&clear, CAPTIONED).await;
    let (_, clear_cmaf) = hls_video(&clear, &format!("{base}/master.m3u8")).await;
    let (_, clear_ts) = hls_video(&clear, &format!("{base}/master-ts.m3u8")).await;
    for (policy, scheme) in [("dash=cenc,hls=sample-aes", "cenc"), ("dash=cbcs", "cbcs")] {
        let server = serve(dir.path(), policy).await;
        let mut decrypted: Vec<(String, Vec<u8>, Vec<Vec<u8>>)> = Vec::new();
        let (init, segments) = dash_video(&server, CAPTIONED).await;
        sei_left_clear(&format!("DASH {scheme}"), &clear_dash, &segments);
        decrypted.push((format!("dash-{scheme}"), init, segments));
        if scheme == "cenc" {
            let (init, segments) = hls_video(&server, &format!("{base}/master.m3u8")).await;
            sei_left_clear("HLS CMAF cbcs", &clear_cmaf, &segments);
            decrypted.push(("hls-cbcs".to_owned(), init.unwrap(), segments));
            let (_, segments) = hls_video(&server, &format!("{base}/master-ts.m3u8")).await;
            sei_left_clear("HLS TS SAMPLE-AES", &clear_ts, &segments);
        }
        for (name, init, segments) in decrypted {
            // One file per segment: ffmpeg's MP4 reader loses the sample encryption of
            // later fragments of one file (see `encryption.rs`).
            let (root, key, what) = (dir.path().to_owned(), key.clone(), name.clone());
            let got = tokio::task::spawn_blocking(move || {
                let mut raw = Vec::new();
                for (n, segment) in segments.iter().enumerate() {
                    let file = format!("{name}-{n}.mp4");
                    std::fs::write(root.join(&file), [init.as_slice(), segment].concat()).unwrap();
                    let out = format!("{file}.h264");
                    ffmpeg(
                        &root,
                        &format!(
                            "-y -decryption_key {key} -i {file} -map 0:v:0 -c copy -f h264 {out}"
                        ),
                    );
                    raw.extend(std::fs::read(root.join(&out)).unwrap());
                }
                let joined = format!("{name}.h264");
                std::fs::write(root.join(&joined), raw).unwrap();
                captions_of_raw(&root, &joined)
            })
            .await
            .unwrap();
            assert_eq!(got, source, "{what} decrypted");
        }
        if scheme == "cenc" {
            let master = fetch_text(&server, &format!("{base}/master-ts.m3u8")).await;
            let variant = master
                .lines()
                .find(|l| !l.starts_with('#') && !l.trim().is_empty())
                .unwrap()
                .to_owned();
            let url = server.url(&format!("{base}/{variant}"));
            let root = dir.path().to_owned();
            let got = tokio::task::spawn_blocking(move || {
                ffmpeg(
                    &root,
                    &format!("-y -i {url} -map 0:v:0 -c copy -f h264 sample-aes.h264"),
                );
                captions_of_raw(&root, "sample-aes.h264")
            })
            .await
            .unwrap();
            assert_eq!(
                got, source,
                "SAMPLE-AES TS decrypted by ffmpeg's HLS reader"
            );
        }
        server.shutdown().await;
    }
    clear.shutdown().await;
}

/// Given the same pictures without caption SEI, then every master says
/// `CLOSED-CAPTIONS=NONE` and the MPD has no caption `Accessibility`; given title
/// documents over the captioned file, one declaring CC3 in Spanish replaces what the scan
/// found, one declaring `[]` says NONE, and one that does not say keeps the scan's CC1 and
/// CC3; a sequence of the plain file then the captioned one announces what any part
/// carries, unless its document says otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_without_captions_says_none_and_a_document_overrides_the_scan() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("captions-none");
    let root = dir.path().to_owned();
    tokio::task::spawn_blocking(move || make_files(&root))
        .await
        .unwrap();
    let write = |name: &str, json: &str| std::fs::write(dir.path().join(name), json).unwrap();
    write(
        "spanish.json",
        r#"{"video": [{"file": "captioned.mp4"}], "closed_captions": [{"channel": "CC3", "language": "es", "name": "Español"}]}"#,
    );
    write(
        "none.json",
        r#"{"video": [{"file": "captioned.mp4"}], "closed_captions": []}"#,
    );
    write("silent.json", r#"{"video": [{"file": "captioned.mp4"}]}"#);
    write(
        "sequence.json",
        r#"{"parts": [{"file": "plain.mp4"}, {"file": "captioned.mp4"}]}"#,
    );
    write(
        "sequence-none.json",
        r#"{"parts": [{"file": "plain.mp4"}, {"file": "captioned.mp4"}], "closed_captions": []}"#,
    );
    let server = serve(dir.path(), "none").await;
    let announced = |master: &str| -> Vec<String> {
        (master.lines())
            .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS"))
            .map(|l| quoted_attribute(l, "INSTREAM-ID").unwrap())
            .collect()
    };
    for key in [PLAIN, "none.json", "sequence-none.json"] {
        // Sequences are offered in CMAF only.
        let masters = match key.starts_with("sequence") {
            true => ["master.m3u8"].as_slice(),
            false => &["master.m3u8", "master-ts.m3u8"],
        };
        for master in masters {
            let text = fetch_text(&server, &format!("/vod/{key}/{master}")).await;
            assert!(announced(&text).is_empty(), "{key} {master}: {text}");
            for variant in text.lines().filter(|l| l.starts_with("#EXT-X-STREAM-INF")) {
                assert!(variant.contains("CLOSED-CAPTIONS=NONE"), "{variant}");
            }
        }
        let mpd = fetch_text(&server, &format!("/vod/{key}/manifest.mpd")).await;
        assert!(!mpd.contains("urn:scte:dash:cc:"), "{key}: {mpd}");
    }
    let spanish = fetch_text(&server, "/vod/spanish.json/master.m3u8").await;
    assert_eq!(announced(&spanish), vec!["CC3"], "{spanish}");
    assert!(
        spanish.contains("NAME=\"Español\",LANGUAGE=\"es\""),
        "{spanish}"
    );
    let mpd = fetch_text(&server, "/vod/spanish.json/manifest.mpd").await;
    assert!(mpd.contains(r#"value="CC3=spa""#), "{mpd}");
    for key in ["silent.json", "sequence.json"] {
        let master = fetch_text(&server, &format!("/vod/{key}/master.m3u8")).await;
        assert_eq!(announced(&master), vec!["CC1", "CC3"], "{key}: {master}");
    }
    // Both Periods of the sequence say so, the plain part's too.
    let mpd = fetch_text(&server, "/vod/sequence.json/manifest.mpd").await;
    assert_eq!(
        mpd.matches(r#"value="CC1=und;CC3=und""#).count(),
        2,
        "{mpd}"
    );
    server.shutdown().await;
}

/// Given the captioned file read with a probe smaller than its `moov` (so the heads after
/// `moov` are read apart, in one batch, from a local folder and from memory), then CC1
/// and CC3 are found and the load says it took that batch; and given the file with bytes
/// of its first samples overwritten at random (2,000 times, a fixed seed), the load
/// never panics and never finds a channel outside CC1-CC4 or SERVICE1-SERVICE63.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scan_reads_heads_it_lacks_and_survives_mutated_samples() {
    use std::sync::Arc;
    use vodpack::media::{index_from_bytes, load_index_report, CaptionChannel, MediaLimits};
    use vodpack::source::{LocalMediaSource, MediaSource, ObjectKey};

    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("captions-scan");
    let root = dir.path().to_owned();
    tokio::task::spawn_blocking(move || make_files(&root))
        .await
        .unwrap();
    let found = vec![CaptionChannel::Cea608(1), CaptionChannel::Cea608(3)];
    let small = MediaLimits {
        probe_bytes: 1024,
        ..MediaLimits::default()
    };
    let source: Arc<dyn MediaSource> = Arc::new(LocalMediaSource::new(dir.path()).unwrap());
    let key = ObjectKey::parse(CAPTIONED).unwrap();
    let identity = source.identify(&key).await.unwrap();
    for limits in [MediaLimits::default(), small] {
        let (index, report) = load_index_report(&source, &key, &identity, &limits)
            .await
            .unwrap();
        assert_eq!(index.tracks[0].captions, found);
        let batch = u32::from(limits.probe_bytes == 1024);
        assert_eq!(report.caption_reads, batch, "probe {}", limits.probe_bytes);
    }
    let file = std::fs::read(dir.path().join(CAPTIONED)).unwrap();
    let index = index_from_bytes(&file.clone().into(), &small).unwrap();
    assert_eq!(index.tracks[0].captions, found);

    // The first video sample's offset: mutations land in the samples' heads.
    let first = index.tracks[0].samples.first_offsets(1)[0] as usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let known = |c: &CaptionChannel| match c {
        CaptionChannel::Cea608(n) => (1..=4).contains(n),
        CaptionChannel::Cea708(n) => (1..=63).contains(n),
    };
    for _ in 0..2000 {
        let mut mutated = file.clone();
        for _ in 0..1 + next() % 8 {
            let at = first + (next() % 16_384) as usize;
            if let Some(byte) = mutated.get_mut(at) {
                *byte = next() as u8;
            }
        }
        let limits = if next() % 2 == 0 {
            small
        } else {
            MediaLimits::default()
        };
        if let Ok(index) = index_from_bytes(&mutated.into(), &limits) {
            assert!(index.tracks.iter().flat_map(|t| &t.captions).all(known));
        }
    }
}

/// Given the captions in HEVC (x265, `hvc1`, prefix SEI units), then HLS and DASH
/// announce CC1 and CC3 with no document, and the captions ffmpeg extracts from the HLS
/// CMAF and DASH outputs are the source's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hevc_captions_are_announced_and_carried() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("captions-hevc");
    let root = dir.path().to_owned();
    let source = tokio::task::spawn_blocking(move || {
        make_hevc_file(&root);
        captions_of_coded(&root, CAPTIONED_HEVC, None, "hevc")
    })
    .await
    .unwrap();
    assert_eq!(source.len(), 2, "{source:?}");
    let server = serve(dir.path(), "none").await;
    let base = format!("/vod/{CAPTIONED_HEVC}");
    let master = fetch_text(&server, &format!("{base}/master.m3u8")).await;
    assert!(master.contains(r#"INSTREAM-ID="CC1""#), "{master}");
    assert!(master.contains(r#"INSTREAM-ID="CC3""#), "{master}");
    let mpd = fetch_text(&server, &format!("{base}/manifest.mpd")).await;
    assert!(mpd.contains(r#"value="CC1=und;CC3=und""#), "{mpd}");
    let (init, segments) = hls_video(&server, &format!("{base}/master.m3u8")).await;
    let hls = [init.unwrap(), segments.concat()].concat();
    let (init, segments) = dash_video(&server, CAPTIONED_HEVC).await;
    let dash = [init, segments.concat()].concat();
    for (name, bytes) in [("hevc-hls.mp4", hls), ("hevc-dash.mp4", dash)] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let root = dir.path().to_owned();
        let got = tokio::task::spawn_blocking(move || captions_of_coded(&root, name, None, "hevc"))
            .await
            .unwrap();
        assert_eq!(got, source, "{name}");
    }
    server.shutdown().await;
}
