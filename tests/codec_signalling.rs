//! HDR and codec signalling through the real server: what the multivariant playlist and
//! the MPD say about the HDR, MP3 and FLAC fixtures (`fixtures/README.md`), and about
//! Dolby Vision files made in the test from the HDR10 fixture (no encoder for Dolby Vision
//! exists here). The ffmpeg checks of the same fixtures are in `conformance.rs`.

mod common;

use common::{get, start_server, TempDir, TestServer};

/// The first `#EXT-X-STREAM-INF` line of `key`'s multivariant playlist, and its MPD.
async fn manifests(server: &TestServer, key: &str) -> (String, String) {
    let master = get(server.addr, &format!("/vod/{key}/master.m3u8")).await;
    assert_eq!(master.status, 200, "{key}: {}", master.text());
    let mpd = get(server.addr, &format!("/vod/{key}/manifest.mpd")).await;
    assert_eq!(mpd.status, 200, "{key}: {}", mpd.text());
    let inf = (master.text().lines())
        .find(|l| l.starts_with("#EXT-X-STREAM-INF:"))
        .unwrap_or_else(|| panic!("{key}: no variant in\n{}", master.text()))
        .to_owned();
    (inf, mpd.text())
}

/// The value of attribute `name` in an HLS tag line, unquoted.
fn attribute(line: &str, name: &str) -> Option<String> {
    let mut rest = line.split_once(':')?.1;
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"')?;
                let next = &quoted[end + 1..];
                (&quoted[..end], next.strip_prefix(',').unwrap_or(next))
            }
            None => after.split_once(',').unwrap_or((after, "")),
        };
        if key == name {
            return Some(value.to_owned());
        }
        rest = next;
    }
    None
}

/// The CICP descriptor `name` in `mpd`, e.g. `TransferCharacteristics`.
fn cicp(mpd: &str, name: &str) -> Option<String> {
    let tag = format!("<SupplementalProperty schemeIdUri=\"urn:mpeg:mpegB:cicp:{name}\" value=\"");
    let rest = &mpd[mpd.find(&tag)? + tag.len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// Given the HDR fixtures (PQ in `colr`, HLG only in the HEVC VUI, AV1 PQ), the variant
/// names its range and 10-bit codec, and the MPD carries the three CICP code points; an
/// SDR file without colour information gets neither.
#[tokio::test]
async fn hdr_titles_name_their_video_range_and_colour_in_both_manifests() {
    let server = start_server(&common::fixtures()).await;
    let cases = [
        ("hevc-main10-pq-aac-3s.mp4", "hvc1.2.4.L60.90", "PQ", "16"),
        ("hevc-main10-hlg-aac-3s.mp4", "hvc1.2.4.L60.90", "HLG", "18"),
        (
            "av1-10bit-pq-aac-3s.mp4",
            "av01.0.00M.10.0.110.09.16.09.0",
            "PQ",
            "16",
        ),
    ];
    for (key, video_codec, range, transfer) in cases {
        let (inf, mpd) = manifests(&server, key).await;
        assert_eq!(
            attribute(&inf, "CODECS").as_deref(),
            Some(format!("{video_codec},mp4a.40.2").as_str()),
            "{key}: {inf}"
        );
        assert_eq!(
            attribute(&inf, "VIDEO-RANGE").as_deref(),
            Some(range),
            "{key}"
        );
        assert_eq!(attribute(&inf, "SUPPLEMENTAL-CODECS"), None, "{key}");
        assert_eq!(
            cicp(&mpd, "TransferCharacteristics").as_deref(),
            Some(transfer)
        );
        assert_eq!(cicp(&mpd, "ColourPrimaries").as_deref(), Some("9"), "{key}");
        assert_eq!(
            cicp(&mpd, "MatrixCoefficients").as_deref(),
            Some("9"),
            "{key}"
        );
        assert!(
            mpd.contains(&format!("codecs=\"{video_codec}\"")),
            "{key}: {mpd}"
        );
    }
    let (inf, mpd) = manifests(&server, "h264-aac-3s.mp4").await;
    assert_eq!(attribute(&inf, "VIDEO-RANGE"), None);
    assert!(!mpd.contains("cicp") && !mpd.contains("scte214"), "{mpd}");
    server.shutdown().await;
}

/// Given H.264 with MP3 and with FLAC audio, HLS names them as Apple's authoring spec does
/// (`mp4a.40.34`, `fLaC`) and DASH as MSE implementations match them (`mp4a.6B`, `flac`).
#[tokio::test]
async fn mp3_and_flac_are_named_as_each_player_expects() {
    let server = start_server(&common::fixtures()).await;
    for (key, hls, dash) in [
        ("h264-mp3-3s.mp4", "mp4a.40.34", "mp4a.6B"),
        ("h264-flac-3s.mp4", "fLaC", "flac"),
    ] {
        let (inf, mpd) = manifests(&server, key).await;
        assert_eq!(
            attribute(&inf, "CODECS").as_deref(),
            Some(format!("avc1.64000d,{hls}").as_str()),
            "{key}"
        );
        assert!(mpd.contains(&format!("codecs=\"{dash}\"")), "{key}: {mpd}");
        // The audio renditions are served: their media playlists and first segments.
        let folder = common::version_folder(server.addr, key).await;
        let segment = get(server.addr, &format!("/vod/{key}/{folder}seg-t2-1.m4s")).await;
        assert_eq!(segment.status, 200, "{key}");
        let init = get(server.addr, &format!("/vod/{key}/{folder}init-t2.mp4")).await;
        assert_eq!(init.status, 200, "{key}");
    }
    server.shutdown().await;
}

/// A Dolby Vision configuration box (`dvcC`/`dvvC`) of `size` bytes (a real one is 32;
/// the tests reuse the 20 bytes of a `btrt`): version 1.0, then profile, level, the rpu and
/// bl flags, and the base layer's compatibility id.
fn dolby_box(kind: &[u8; 4], size: usize, profile: u8, level: u8, compat: u8) -> Vec<u8> {
    let mut out = (size as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(&[
        1,
        0,
        (profile << 1) | (level >> 5),
        ((level & 0x1f) << 3) | 0b101,
        compat << 4,
    ]);
    out.resize(size, 0);
    out
}

/// The HDR10 fixture with its video sample entry renamed to `entry` and the `btrt` box of
/// that entry replaced by `config` (same size, so no other box or offset changes).
fn hdr10_with_dolby_vision(entry: &[u8; 4], config: &[u8]) -> Vec<u8> {
    let mut bytes = std::fs::read(common::fixtures().join("hevc-main10-pq-aac-3s.mp4")).unwrap();
    let find = |bytes: &[u8], what: &[u8], from: usize| {
        from + bytes[from..]
            .windows(what.len())
            .position(|w| w == what)
            .unwrap_or_else(|| panic!("{} not found", String::from_utf8_lossy(what)))
    };
    let stsd = find(&bytes, b"stsd", 0);
    let hvc1 = find(&bytes, b"hvc1", stsd);
    bytes[hvc1..hvc1 + 4].copy_from_slice(entry);
    let btrt = find(&bytes, b"btrt", hvc1) - 4;
    let size = u32::from_be_bytes(bytes[btrt..btrt + 4].try_into().unwrap()) as usize;
    assert_eq!(config.len(), size, "the config must replace btrt exactly");
    bytes[btrt..btrt + size].copy_from_slice(config);
    bytes
}

/// Given an HDR10 `hvc1` stream carrying a Dolby Vision 8.1 `dvvC`, HLS keeps the HEVC
/// codec and adds `SUPPLEMENTAL-CODECS="dvh1.08.07/db1p"` with `VIDEO-RANGE=PQ`, and DASH
/// adds the SCTE 214 supplemental codec and profile; the init segment carries the `dvvC`.
/// Given a profile 5 `dvh1` stream (no compatible base), both name it `dvh1.05.06`.
#[tokio::test]
async fn dolby_vision_is_supplemental_over_a_compatible_base_and_named_alone_without() {
    let root = TempDir::new("dolby");
    let dvvc = dolby_box(b"dvvC", 20, 8, 7, 1);
    std::fs::write(
        root.path().join("dv81.mp4"),
        hdr10_with_dolby_vision(b"hvc1", &dvvc),
    )
    .unwrap();
    let dvcc = dolby_box(b"dvcC", 20, 5, 6, 0);
    std::fs::write(
        root.path().join("dv5.mp4"),
        hdr10_with_dolby_vision(b"dvh1", &dvcc),
    )
    .unwrap();
    let server = start_server(root.path()).await;

    let (inf, mpd) = manifests(&server, "dv81.mp4").await;
    assert_eq!(
        attribute(&inf, "CODECS").as_deref(),
        Some("hvc1.2.4.L60.90,mp4a.40.2")
    );
    assert_eq!(
        attribute(&inf, "SUPPLEMENTAL-CODECS").as_deref(),
        Some("dvh1.08.07/db1p")
    );
    assert_eq!(attribute(&inf, "VIDEO-RANGE").as_deref(), Some("PQ"));
    assert!(mpd.contains("xmlns:scte214=\"urn:scte:dash:scte214-extensions\""));
    assert!(mpd.contains(
        "codecs=\"hvc1.2.4.L60.90\" scte214:supplementalCodecs=\"dvh1.08.07\" \
         scte214:supplementalProfiles=\"db1p\""
    ));
    let folder = common::version_folder(server.addr, "dv81.mp4").await;
    let init = get(server.addr, &format!("/vod/dv81.mp4/{folder}init-t1.mp4")).await;
    assert_eq!(init.status, 200);
    assert!(init.body.windows(dvvc.len()).any(|w| w == dvvc));

    let (inf, mpd) = manifests(&server, "dv5.mp4").await;
    assert_eq!(
        attribute(&inf, "CODECS").as_deref(),
        Some("dvh1.05.06,mp4a.40.2")
    );
    assert_eq!(attribute(&inf, "SUPPLEMENTAL-CODECS"), None);
    assert_eq!(attribute(&inf, "VIDEO-RANGE").as_deref(), Some("PQ"));
    assert!(mpd.contains("codecs=\"dvh1.05.06\""), "{mpd}");
    assert!(!mpd.contains("scte214"), "{mpd}");
    server.shutdown().await;
}

/// Given the HLG fixture (colour only in the HEVC VUI) and the PQ one (in `colr`),
/// `vodpack inspect` shows each video track's colour, where it was read, and its range.
#[test]
fn inspect_shows_the_colour_and_where_it_was_read() {
    for (fixture, expected) in [
        (
            "hevc-main10-hlg-aac-3s.mp4",
            "hvc1.2.4.L60.90 320x180 colour=9/18/9 limited (hevc-vui) range=HLG",
        ),
        (
            "hevc-main10-pq-aac-3s.mp4",
            "320x180 colour=9/16/9 limited (colr) range=PQ",
        ),
        ("h264-aac-3s.mp4", "320x180 colour=unspecified range=SDR"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_vodpack"))
            .arg("inspect")
            .arg(common::fixtures().join(fixture))
            .output()
            .expect("run vodpack inspect");
        assert!(output.status.success(), "{fixture}: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        let video = text.lines().find(|l| l.contains(" video ")).unwrap_or("");
        assert!(video.contains(expected), "{fixture}: {text}");
    }
}
