//! Access control and fail-closed encryption over HTTP: signed URLs on every
//! protected route, the token carried into manifests, keys and licences, the clear version
//! folder closed when every output is encrypted, CORS origins, and no secret, token or key
//! in any log line.

mod common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use common::logs::{captured_logs, captured_text, now};
use common::{
    dash_folder_in, fixtures, get, request, segments_of, start_server_with, version_folder_in,
    TestServer,
};
use tracing::Level;
use vodpack::config::Settings;
use vodpack::crypto::keys::hex;
use vodpack::crypto::settings::SignedUrls;
use vodpack::crypto::{EncryptionPolicy, Secret, SecretKeyProvider, TokenSigner};

const KEY_SECRET: &str = "protection test key secret 0123";
const URL_SECRET: &str = "protection test url secret 4567";
const FIXTURE: &str = "h264-aac-3s.mp4";

/// A server over the fixtures with 1 s segments, the access log on and every log line
/// captured: outputs encrypted as `policy` says, with this binary's key and URL secrets,
/// URLs signed as `signed` says, and `cors` as the allowed origins.
async fn start(policy: &str, signed: SignedUrls, cors: &[&str]) -> TestServer {
    captured_logs(Level::DEBUG);
    let mut settings = segments_of(1000);
    settings.server.access_log = true;
    settings.protect.encryption = EncryptionPolicy::parse(policy).unwrap();
    settings.protect.key_secret = Some(key_secret());
    settings.protect.signed_urls = signed;
    settings.protect.url_secret = Some(Secret::from_text(URL_SECRET, "u").unwrap());
    settings.protect.token_skew_secs = 30;
    settings.protect.cors_origins = cors.iter().map(|o| o.to_string()).collect();
    start_server_with(&fixtures(), settings).await
}

/// The secret this binary's content keys are derived from.
fn key_secret() -> Secret {
    Secret::from_text(KEY_SECRET, "k").unwrap()
}

/// The key and KID the server derives for the fixture.
fn fixture_content_key() -> vodpack::crypto::keys::ContentKey {
    SecretKeyProvider::new(key_secret()).derive(FIXTURE)
}

/// A token signer with the server's URL secret (and its 30 s skew).
fn signer() -> TokenSigner {
    TokenSigner::new(Secret::from_text(URL_SECRET, "u").unwrap(), 30)
}

/// A token for every path of the fixture's title, valid for ten minutes.
fn good_token() -> String {
    signer().sign(&title_prefix(), now() + 600, None)
}

/// The path prefix of the fixture's title: `/vod/FIXTURE/`.
fn title_prefix() -> String {
    format!("/vod/{FIXTURE}/")
}

/// The path of `rest` under the fixture's title: `/vod/FIXTURE/rest`.
fn in_title(rest: &str) -> String {
    format!("{}{rest}", title_prefix())
}

/// `path` with `token` as its query.
fn with_token(path: &str, token: &str) -> String {
    format!("{path}?token={token}")
}

/// An EME ClearKey licence request for `kid`.
fn licence_body(kid: &[u8; 16]) -> String {
    format!(
        "{{\"kids\":[\"{}\"],\"type\":\"temporary\"}}",
        URL_SAFE_NO_PAD.encode(kid)
    )
}

/// POST the licence request `body` (JSON) to `path`.
async fn post(server: &TestServer, path: &str, body: &str) -> common::Reply {
    common::post(server.addr, path, "application/json", body.as_bytes()).await
}

/// Given signed URLs on every path, when a protected route is asked for without a token,
/// with a tampered one, an expired one or one for another title, then it is a bare 403;
/// with a valid token every route answers, and the manifests carry the token on.
#[tokio::test]
async fn every_protected_route_needs_a_valid_token() {
    let server = start("hls=aes-128,dash=cenc", SignedUrls::All, &[]).await;
    let good = good_token();
    let master = get(server.addr, &with_token(&in_title("master.m3u8"), &good)).await;
    assert_eq!(master.status, 200, "{}", master.text());
    let master = master.text();
    assert!(master.contains(&format!("?token={good}")), "{master}");
    let folder = version_folder_in(&master);
    let mpd = get(server.addr, &with_token(&in_title("manifest.mpd"), &good)).await;
    assert_eq!(mpd.status, 200);
    let mpd = mpd.text();
    assert!(mpd.contains(&format!("$Number$.m4s?token={good}")), "{mpd}");
    assert!(
        mpd.contains(&format!("clearkey.json?token={good}</dashif:Laurl>")),
        "{mpd}"
    );
    let dash_folder = dash_folder_in(&mpd);
    let media_path = in_title(&format!("{folder}index-t1.m3u8"));
    let media = get(server.addr, &with_token(&media_path, &good)).await;
    assert_eq!(media.status, 200);
    assert!(
        media
            .text()
            .contains(&format!("URI=\"hls.key?token={good}\"")),
        "{}",
        media.text()
    );
    let kid = fixture_content_key().kid;

    let gets = [
        in_title("master.m3u8"),
        in_title("manifest.mpd"),
        in_title(&format!("{folder}index-t1.m3u8")),
        in_title(&format!("{folder}init-t1.mp4")),
        in_title(&format!("{folder}seg-t1-1.m4s")),
        in_title(&format!("{dash_folder}seg-t2-2.m4s")),
        in_title(&format!("{folder}hls.key")),
    ];
    let licence = in_title("clearkey.json");
    let tampered = good.replacen('.', "0.", 1);
    let expired = signer().sign(&title_prefix(), now() - 120, None);
    let other_title = signer().sign("/vod/hevc-aac-3s.mp4/", now() + 600, None);
    let foreign = TokenSigner::new(
        Secret::from_text("some other url secret!", "x").unwrap(),
        30,
    )
    .sign(&title_prefix(), now() + 600, None);
    for path in gets.iter().chain([&licence]) {
        for bad in [
            None,
            Some(&tampered),
            Some(&expired),
            Some(&other_title),
            Some(&foreign),
        ] {
            let target = match bad {
                None => path.clone(),
                Some(t) => with_token(path, t),
            };
            let reply = match path == &licence {
                true => post(&server, &target, &licence_body(&kid)).await,
                false => get(server.addr, &target).await,
            };
            assert_eq!(reply.status, 403, "{target}");
            assert_eq!(reply.text(), "forbidden\n", "no detail for {target}");
        }
    }
    for path in &gets {
        let reply = get(server.addr, &with_token(path, &good)).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    }
    let reply = post(&server, &with_token(&licence, &good), &licence_body(&kid)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    server.shutdown().await;
}

/// Given signed URLs on entry points only, then segments need no token but entry
/// manifests, keys and licences do.
#[tokio::test]
async fn entry_mode_guards_manifests_keys_and_licences_only() {
    let server = start("hls=aes-128", SignedUrls::Entry, &[]).await;
    let good = good_token();
    let master_path = in_title("master.m3u8");
    assert_eq!(get(server.addr, &master_path).await.status, 403);
    let master = get(server.addr, &with_token(&master_path, &good)).await;
    assert_eq!(master.status, 200);
    let folder = version_folder_in(&master.text());
    let segment = get(server.addr, &in_title(&format!("{folder}seg-t1-1.m4s"))).await;
    assert_eq!(segment.status, 200);
    let key_path = in_title(&format!("{folder}hls.key"));
    assert_eq!(get(server.addr, &key_path).await.status, 403);
    let key = get(server.addr, &with_token(&key_path, &good)).await;
    assert_eq!(key.status, 200);
    assert_eq!(key.body.len(), 16);
    assert_eq!(key.header("cache-control"), Some("no-store, private"));
    server.shutdown().await;
}

/// Given every output encrypted, when the clear version folder or an unversioned name is
/// asked for a segment or init segment, then it is 404: encrypted content is never served
/// in the clear. With one output clear, the clear folder serves it.
#[tokio::test]
async fn the_clear_folder_is_closed_when_every_output_is_encrypted() {
    let clear = start("none", SignedUrls::Off, &[]).await;
    let clear_folder = version_folder_in(&get(clear.addr, &in_title("master.m3u8")).await.text());
    clear.shutdown().await;
    let server = start("hls=aes-128,dash=cbcs", SignedUrls::Off, &[]).await;
    for name in [
        "init-t1.mp4",
        "seg-t1-1.m4s",
        "seg-t2-1.m4s",
        "index-t1.m3u8",
        "index-ts-t1.m3u8",
        "seg-ts-t1-1.ts",
    ] {
        for path in [in_title(&format!("{clear_folder}{name}")), in_title(name)] {
            assert_eq!(get(server.addr, &path).await.status, 404, "{path}");
        }
    }
    // MPEG-TS is offered encrypted (AES-128), with its key, and without I-frame playlists.
    let master_ts = get(server.addr, &in_title("master-ts.m3u8")).await;
    assert_eq!(master_ts.status, 200);
    let master_ts = master_ts.text();
    assert!(
        master_ts.contains("#EXT-X-SESSION-KEY:METHOD=AES-128") && !master_ts.contains("I-FRAME"),
        "{master_ts}"
    );
    // Trick play is clear only: an encrypted output offers no I-frame playlist and no
    // trick-play set, and its folder serves no key frame.
    let master = get(server.addr, &in_title("master.m3u8")).await.text();
    assert!(!master.contains("#EXT-X-I-FRAME-STREAM-INF"), "{master}");
    let mpd = get(server.addr, &in_title("manifest.mpd")).await.text();
    assert!(
        !mpd.contains("trickmode") && mpd.contains("<AdaptationSet"),
        "{mpd}"
    );
    let folder = version_folder_in(&master);
    for name in ["iframes-t1.m3u8", "ifr-t1-1.m4s", "iframes-ts-t1.m3u8"] {
        let path = in_title(&format!("{folder}{name}"));
        assert_eq!(get(server.addr, &path).await.status, 404, "{path}");
    }
    // The TS playlist and segments are in the encrypted folder, with their keys.
    let ts_playlist = get(server.addr, &in_title(&format!("{folder}index-ts-t1.m3u8"))).await;
    assert_eq!(ts_playlist.status, 200);
    assert!(ts_playlist.text().contains("#EXT-X-KEY:METHOD=AES-128"));
    let segment = get(server.addr, &in_title(&format!("{folder}seg-ts-t1-1.ts"))).await;
    assert_eq!(segment.status, 200);
    assert_eq!(segment.body.len() % 16, 0, "whole AES blocks");
    let clear_ts = segment.body.chunks(188).all(|p| p.first() == Some(&0x47));
    assert!(!clear_ts, "the segment is not clear TS packets");
    server.shutdown().await;
    let half = start("dash=cenc", SignedUrls::Off, &[]).await;
    let path = in_title(&format!("{clear_folder}seg-t1-1.m4s"));
    assert_eq!(get(half.addr, &path).await.status, 200);
    half.shutdown().await;
    // HLS encrypted, DASH clear: the clear folder stays open for DASH, but MPEG-TS (HLS
    // only) is never served from it clear.
    let hls_only = start("hls=aes-128", SignedUrls::Off, &[]).await;
    for name in ["index-ts-t1.m3u8", "seg-ts-t1-1.ts"] {
        let path = in_title(&format!("{clear_folder}{name}"));
        assert_eq!(get(hls_only.addr, &path).await.status, 404, "{path}");
    }
    hls_only.shutdown().await;
}

/// Given a title encrypted with ClearKey, when the licence is asked for with the title's
/// KID, then the answer holds its key (base64url, EME ClearKey JSON) and is never cached;
/// another KID gets no key, GET is 405, a body that is not JSON 400.
#[tokio::test]
async fn the_clearkey_licence_answers_only_the_titles_kid() {
    let server = start("dash=cenc", SignedUrls::Off, &[]).await;
    let content = fixture_content_key();
    let path = in_title("clearkey.json");
    let reply = post(&server, &path, &licence_body(&content.kid)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("cache-control"), Some("no-store, private"));
    let json: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(json["keys"][0]["kty"], "oct");
    assert_eq!(json["keys"][0]["k"], URL_SAFE_NO_PAD.encode(content.key));
    assert_eq!(json["keys"][0]["kid"], URL_SAFE_NO_PAD.encode(content.kid));
    let other = post(&server, &path, &licence_body(&[9; 16])).await;
    let json: serde_json::Value = serde_json::from_slice(&other.body).unwrap();
    assert_eq!(json["keys"].as_array().unwrap().len(), 0);
    assert_eq!(get(server.addr, &path).await.status, 405);
    assert_eq!(post(&server, &path, "{not json").await.status, 400);
    let missing = post(
        &server,
        "/vod/no-such-title.mp4/clearkey.json",
        &licence_body(&content.kid),
    )
    .await;
    assert_eq!(missing.status, 404);
    server.shutdown().await;
}

/// Given a CORS origin list, then a listed origin is echoed (with `Vary: Origin`) and an
/// unlisted one gets no `Access-Control-Allow-Origin`.
#[tokio::test]
async fn a_cors_origin_list_replaces_the_wildcard() {
    let server = start("none", SignedUrls::Off, &["https://player.example"]).await;
    let path = in_title("master.m3u8");
    let ok = request(
        server.addr,
        "GET",
        &path,
        &[("Origin", "https://player.example")],
    )
    .await;
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("https://player.example")
    );
    assert_eq!(ok.header("vary"), Some("Origin"));
    let other = request(
        server.addr,
        "GET",
        &path,
        &[("Origin", "https://evil.example")],
    )
    .await;
    assert_eq!(other.header("access-control-allow-origin"), None);
    server.shutdown().await;
}

/// Given requests with tokens, keys and licences (this binary's other tests run too),
/// then no captured log line holds a secret, a token's signature or a content key.
#[tokio::test]
async fn no_secret_token_or_key_reaches_the_logs() {
    let server = start("hls=aes-128,dash=cenc", SignedUrls::All, &[]).await;
    let good = good_token();
    let content = fixture_content_key();
    let master = get(server.addr, &with_token(&in_title("master.m3u8"), &good)).await;
    let key_path = in_title(&format!("{}hls.key", version_folder_in(&master.text())));
    get(server.addr, &with_token(&key_path, &good)).await;
    get(server.addr, &format!("{key_path}?token=bad.{good}")).await;
    let licence_path = with_token(&in_title("clearkey.json"), &good);
    post(&server, &licence_path, &licence_body(&content.kid)).await;
    server.shutdown().await;
    let logs = captured_text(Level::DEBUG);
    assert!(
        logs.contains("access"),
        "the access log was captured: {logs}"
    );
    let signature = good.rsplit('.').next().unwrap();
    for secret in [
        KEY_SECRET.to_owned(),
        URL_SECRET.to_owned(),
        signature.to_owned(),
        hex(&content.key),
        URL_SAFE_NO_PAD.encode(content.key),
    ] {
        assert!(!logs.contains(&secret), "a secret reached the logs");
    }
}

/// Given a server that encrypts nothing by default, when a title document says
/// `"encryption": "dash=cenc"`, then its MPD is protected and its HLS is not; a document
/// with a policy that does not parse is refused with 422.
#[tokio::test]
async fn a_title_document_sets_its_own_encryption() {
    let dir = common::TempDir::new("protection-doc");
    std::fs::copy(fixtures().join(FIXTURE), dir.path().join(FIXTURE)).unwrap();
    for (document, policy) in [("title.json", "dash=cenc"), ("bad.json", "dash=rot13")] {
        std::fs::write(
            dir.path().join(document),
            format!("{{\"video\":[{{\"file\":\"{FIXTURE}\"}}],\"encryption\":\"{policy}\"}}"),
        )
        .unwrap();
    }
    let mut settings = Settings::default();
    settings.protect.key_secret = Some(key_secret());
    let server = start_server_with(dir.path(), settings).await;
    let mpd = get(server.addr, "/vod/title.json/manifest.mpd").await;
    assert_eq!(mpd.status, 200, "{}", mpd.text());
    assert!(mpd.text().contains("value=\"cenc\" cenc:default_KID="));
    let master = get(server.addr, "/vod/title.json/master.m3u8").await;
    assert_eq!(master.status, 200);
    assert!(!master.text().contains("EXT-X-SESSION-KEY"));
    let plain = get(server.addr, &in_title("manifest.mpd")).await;
    assert!(!plain.text().contains("ContentProtection"));
    let licence_path = "/vod/title.json/clearkey.json";
    let licence = post(&server, licence_path, &licence_body(&[1; 16])).await;
    assert_eq!(licence.status, 200);
    let bad = get(server.addr, "/vod/bad.json/manifest.mpd").await;
    assert_eq!(bad.status, 422, "{}", bad.text());
    server.shutdown().await;
}

/// Given encrypted segments (AES-128 whole-segment, CMAF and MPEG-TS, and `cenc`), when a
/// byte range is asked for, then the answer is exactly that range of the whole encrypted
/// segment, and HEAD states the whole length.
#[tokio::test]
async fn ranges_of_encrypted_segments_are_slices_of_the_whole() {
    let server = start("hls=aes-128,dash=cenc", SignedUrls::Off, &[]).await;
    let hls = version_folder_in(&get(server.addr, &in_title("master.m3u8")).await.text());
    let dash = dash_folder_in(&get(server.addr, &in_title("manifest.mpd")).await.text());
    for (folder, names) in [
        (
            hls,
            ["seg-t1-2.m4s", "seg-t2-1.m4s", "seg-ts-t1-1.ts"].as_slice(),
        ),
        (dash, ["seg-t1-2.m4s", "seg-t2-1.m4s"].as_slice()),
    ] {
        for name in names {
            let path = in_title(&format!("{folder}{name}"));
            let whole = get(server.addr, &path).await;
            assert_eq!(whole.status, 200);
            assert_ranges_are_slices(&server, &path, &whole.body).await;
        }
    }
    server.shutdown().await;
}

/// HEAD of `path` states `whole`'s length, and ranges at its start, middle and end are
/// exactly those slices of it.
async fn assert_ranges_are_slices(server: &TestServer, path: &str, whole: &[u8]) {
    let head = request(server.addr, "HEAD", path, &[]).await;
    let len = whole.len();
    assert_eq!(
        head.header("content-length"),
        Some(len.to_string().as_str())
    );
    for (from, to) in [(0, 9), (100, 1099), (len - 17, len - 1)] {
        let range = format!("bytes={from}-{to}");
        let part = request(server.addr, "GET", path, &[("Range", &range)]).await;
        assert_eq!(part.status, 206, "{path} {range}");
        assert_eq!(part.body, whole[from..=to], "{path} {range}");
    }
}

/// Given HLS encrypted with SAMPLE-AES (`cbcs` for CMAF), when the MPEG-TS output is asked
/// for, then it is offered with Apple's sample encryption: `METHOD=SAMPLE-AES` with the
/// raw key at `hls.key` and one IV, a PMT with the encrypted stream types, no I-frame
/// playlist, nothing from the clear folder, and byte ranges that are slices of the whole.
#[tokio::test]
async fn ts_beside_sample_aes_is_sample_encrypted() {
    let clear = start("none", SignedUrls::Off, &[]).await;
    let master_path = in_title("master-ts.m3u8");
    let clear_folder = version_folder_in(&get(clear.addr, &master_path).await.text());
    let clear_segment = get(
        clear.addr,
        &in_title(&format!("{clear_folder}seg-ts-t1-1.ts")),
    )
    .await;
    clear.shutdown().await;
    let server = start("hls=sample-aes", SignedUrls::Off, &[]).await;
    let master = get(server.addr, &master_path).await;
    assert_eq!(master.status, 200);
    let master = master.text();
    assert!(
        master.contains("#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"v")
            && !master.contains("KEYFORMAT")
            && !master.contains("I-FRAME"),
        "{master}"
    );
    let folder = version_folder_in(&master);
    let playlist = get(server.addr, &in_title(&format!("{folder}index-ts-t1.m3u8")))
        .await
        .text();
    assert_eq!(playlist.matches("#EXT-X-KEY:").count(), 1, "{playlist}");
    assert!(
        playlist.contains("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"hls.key\",IV=0x"),
        "{playlist}"
    );
    let key = get(server.addr, &in_title(&format!("{folder}hls.key"))).await;
    assert_eq!((key.status, key.body.len()), (200, 16));
    for path in [
        in_title(&format!("{clear_folder}index-ts-t1.m3u8")),
        in_title(&format!("{clear_folder}seg-ts-t1-1.ts")),
        in_title(&format!("{folder}iframes-ts-t1.m3u8")),
    ] {
        assert_eq!(get(server.addr, &path).await.status, 404, "{path}");
    }
    let path = in_title(&format!("{folder}seg-ts-t1-1.ts"));
    let whole = get(server.addr, &path).await;
    assert_eq!(whole.status, 200);
    // Transport packets still, with the SAMPLE-AES PMT, and not the clear segment.
    assert!(whole
        .body
        .chunks(188)
        .all(|p| p.len() == 188 && p[0] == 0x47));
    assert_eq!(whole.body[188 + 17], 0xDB, "H.264 SAMPLE-AES stream type");
    assert_ne!(whole.body, clear_segment.body);
    assert_ranges_are_slices(&server, &path, &whole.body).await;
    // HEVC is outside Apple's sample encryption: its TS output is not offered at all.
    let hevc = get(server.addr, "/vod/hevc-aac-3s.mp4/master-ts.m3u8").await;
    assert_eq!(hevc.status, 404, "{}", hevc.text());
    assert!(hevc.text().contains("master.m3u8"), "{}", hevc.text());
    let cmaf = get(server.addr, "/vod/hevc-aac-3s.mp4/master.m3u8").await;
    assert_eq!(cmaf.status, 200);
    let hevc_folder = version_folder_in(&cmaf.text());
    for name in ["index-ts-t1.m3u8", "seg-ts-t1-1.ts"] {
        let path = format!("/vod/hevc-aac-3s.mp4/{hevc_folder}{name}");
        assert_eq!(get(server.addr, &path).await.status, 404, "{path}");
    }
    server.shutdown().await;
}

/// HMAC-SHA256 of `message` under `secret`, with the `hmac` crate directly: the tests
/// below follow `docs/protection.md`'s formulas, not vodpack's code.
fn documented_hmac(secret: &str, message: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// `part || 0x00` for each part, as the docs' formulas write their messages.
fn nul_terminated(parts: &[&[u8]]) -> Vec<u8> {
    parts
        .iter()
        .flat_map(|p| p.iter().chain(&[0]))
        .copied()
        .collect()
}

/// Given a key secret, when a key server derives the title's key and KID with the formula
/// in docs/protection.md (written out here with its own HMAC), then they are the key
/// `hls.key` serves and the `cenc:default_KID` the MPD signals.
#[tokio::test]
async fn the_documented_key_derivation_gives_the_served_key_and_kid() {
    let server = start("hls=aes-128,dash=cenc", SignedUrls::Off, &[]).await;
    let title_key = FIXTURE.as_bytes();
    let key = documented_hmac(
        KEY_SECRET,
        &nul_terminated(&[b"vodpack content key v1", title_key]),
    );
    let kid = documented_hmac(
        KEY_SECRET,
        &nul_terminated(&[b"vodpack key id v1", title_key]),
    );

    let master = get(server.addr, &in_title("master.m3u8")).await.text();
    let folder = version_folder_in(&master);
    let served = get(server.addr, &in_title(&format!("{folder}hls.key"))).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.body, key[..16], "hls.key is the documented key");

    let mpd = get(server.addr, &in_title("manifest.mpd")).await.text();
    let hex_kid: String = kid[..16].iter().map(|b| format!("{b:02x}")).collect();
    let uuid = [0..8, 8..12, 12..16, 16..20, 20..32]
        .map(|r| &hex_kid[r])
        .join("-");
    assert!(
        mpd.contains(&format!("cenc:default_KID=\"{uuid}\"")),
        "the MPD signals the documented KID {uuid}\n{mpd}"
    );
    server.shutdown().await;
}

/// Given a URL secret, when a token is signed with the formula in docs/protection.md
/// (written out here with its own HMAC), then the server accepts it; the same token
/// signed without the NUL separators is refused.
#[tokio::test]
async fn a_token_signed_by_the_documented_formula_is_accepted() {
    let server = start("none", SignedUrls::All, &[]).await;
    let expiry = (now() + 600).to_string();
    let prefix = title_prefix();
    let token = |message: &[u8]| {
        format!(
            "{expiry}.n.{}.{}",
            URL_SAFE_NO_PAD.encode(&prefix),
            URL_SAFE_NO_PAD.encode(documented_hmac(URL_SECRET, message))
        )
    };
    let parts: [&[u8]; 5] = [
        b"vodpack url token v1",
        expiry.as_bytes(),
        b"n",
        prefix.as_bytes(),
        b"",
    ];
    let path = in_title("master.m3u8");
    let documented = get(
        server.addr,
        &with_token(&path, &token(&nul_terminated(&parts))),
    )
    .await;
    assert_eq!(documented.status, 200, "{}", documented.text());
    let undelimited = get(server.addr, &with_token(&path, &token(&parts.concat()))).await;
    assert_eq!(undelimited.status, 403);
    server.shutdown().await;
}

/// The KID the `cpix` provider asks a key server for is the documented hash of the title
/// key, with the version-4 UUID bits set.
#[test]
fn the_cpix_kid_is_the_documented_hash() {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(
        nul_terminated(&[b"vodpack cpix kid v1"])
            .iter()
            .chain(b"films/a.mp4")
            .copied()
            .collect::<Vec<u8>>(),
    );
    let mut kid = [0u8; 16];
    kid.copy_from_slice(&digest[..16]);
    kid[6] = kid[6] & 0x0f | 0x40;
    kid[8] = kid[8] & 0x3f | 0x80;
    assert_eq!(vodpack::crypto::cpix::cpix_kid("films/a.mp4"), kid);
}

/// `file` (an MP4 with one video track, moov first, samples from the start of `mdat`)
/// with the first IDR slice's header rewritten to first_mb_in_slice 0, slice_type 7 and
/// pic_parameter_set_id 300 (past H.264's 255): Exp-Golomb codes written by hand.
fn with_pps_id_out_of_range(file: &[u8]) -> Vec<u8> {
    let mut out = file.to_vec();
    let mdat = file.windows(4).position(|w| w == b"mdat").unwrap() + 4;
    let mut at = mdat;
    loop {
        let len = u32::from_be_bytes(file[at..at + 4].try_into().unwrap()) as usize;
        if file[at + 4] & 0x1f == 5 {
            // 1 | 0001000 | 00000000 100101101 | (the rest of the byte as it was)
            out[at + 5] = 0x88;
            out[at + 6] = 0x00;
            out[at + 7] = 0x96;
            out[at + 8] |= 0x80;
            return out;
        }
        at += 4 + len;
    }
}

/// Given an H.264 file whose first slice names a PPS id out of range, when its `cbcs`
/// segments are asked for, then the first segment is a 422 saying why (its slice header
/// cannot be read, so where its slice data starts is unknown) and the next segment is
/// served; `cenc`, which leaves only the NAL header clear, serves both.
#[tokio::test]
async fn a_cbcs_slice_header_that_cannot_be_read_is_a_422_for_its_segment_only() {
    let dir = common::TempDir::new("protection-bad-slice");
    let file = std::fs::read(fixtures().join("h264-3s-video-only.mp4")).unwrap();
    std::fs::write(dir.path().join("bad.mp4"), with_pps_id_out_of_range(&file)).unwrap();
    for (scheme, first) in [("cbcs", 422), ("cenc", 200)] {
        let mut settings = segments_of(1000);
        settings.protect.encryption = EncryptionPolicy::parse(&format!("dash={scheme}")).unwrap();
        settings.protect.key_secret = Some(key_secret());
        let server = start_server_with(dir.path(), settings).await;
        let mpd = get(server.addr, "/vod/bad.mp4/manifest.mpd").await;
        assert_eq!(mpd.status, 200);
        let folder = dash_folder_in(&mpd.text());
        let seg = |n: u32| format!("/vod/bad.mp4/{folder}seg-t1-{n}.m4s");
        let one = get(server.addr, &seg(1)).await;
        assert_eq!(one.status, first, "{scheme}: {}", one.text());
        if first == 422 {
            let reason = one.text();
            assert!(
                reason.contains("cannot encrypt track 1 as cbcs") && reason.contains("slice"),
                "{reason}"
            );
        }
        let two = get(server.addr, &seg(2)).await;
        assert_eq!(two.status, 200, "{scheme}: {}", two.text());
        server.shutdown().await;
    }
}

/// Given the nginx-vod key mode (`--nginx-vod-secret-key 'secret-$vod_filepath'` with the
/// module's files under /srv/media/), when the AES-128 MPEG-TS output is played, then
/// `hls.key` is the MD5 of the evaluated `vod_secret_key`, as nginx-vod-module serves it
/// for that file, and a segment decrypts with it (and its playlist's IV) to MPEG-TS.
#[tokio::test]
async fn the_nginx_vod_key_mode_serves_the_module_s_key_and_the_ts_decrypts_with_it() {
    use aes::cipher::{block_padding::Pkcs7, BlockModeDecrypt, KeyIvInit};
    use vodpack::crypto::nginx_vod_keys::NginxVodKeys;
    let mut settings = segments_of(1000);
    settings.protect.encryption = EncryptionPolicy::parse("hls=aes-128").unwrap();
    settings.protect.nginx_vod_keys =
        Some(NginxVodKeys::new("secret-$vod_filepath", "/srv/media/").unwrap());
    let server = start_server_with(&fixtures(), settings).await;
    // `printf 'secret-/srv/media/h264-aac-3s.mp4' | md5sum`
    let expected = "e7168a83b974ff95b2aad4fbebe85fd7";
    let master = get(server.addr, &in_title("master-ts.m3u8")).await;
    assert_eq!(master.status, 200, "{}", master.text());
    let variant = (master.text().lines())
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a variant")
        .to_owned();
    let playlist_path = in_title(&variant);
    let folder = &playlist_path[..playlist_path.rfind('/').unwrap() + 1];
    let playlist = get(server.addr, &playlist_path).await.text();
    let key = get(server.addr, &format!("{folder}hls.key")).await;
    assert_eq!(key.status, 200);
    assert_eq!(hex(&key.body), expected, "the module's key for this file");

    let mut iv = None;
    let mut segment = None;
    for line in playlist.lines() {
        if let Some(at) = line.find("IV=0x") {
            iv = Some(line[at + 5..at + 37].to_owned());
        } else if !line.starts_with('#') && !line.is_empty() {
            segment = Some(line.to_owned());
            break;
        }
    }
    let (iv, segment) = (iv.expect("an IV"), segment.expect("a segment"));
    let iv: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&iv[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut body = get(server.addr, &format!("{folder}{segment}")).await.body;
    let key: [u8; 16] = key.body.try_into().unwrap();
    let iv: [u8; 16] = iv.try_into().unwrap();
    let decryptor = cbc::Decryptor::<aes::Aes128>::new(&key.into(), &iv.into());
    let plain = decryptor
        .decrypt_padded::<Pkcs7>(&mut body)
        .expect("decrypts");
    assert!(
        !plain.is_empty() && plain.len() % 188 == 0,
        "{}",
        plain.len()
    );
    assert!(
        plain.chunks(188).all(|packet| packet[0] == 0x47),
        "TS sync bytes"
    );
    server.shutdown().await;
}
