//! FairPlay, Widevine and PlayReady from one `cbcs` CMAF output: against a CPIX
//! 2.3 key server and a SPEKE v2 key server started by the test, the three systems'
//! signalling appears in HLS (media and multivariant playlists) and DASH exactly as the
//! server supplied it, one key request per title, and a server that fails or leaves a
//! system out is a 503 naming it. Without a key server, the key secret's raw keys make
//! each system's signalling, checked against encodings built here by hand.

mod common;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use common::{fixtures, get, start_server_with, TestServer};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use vodpack::config::Settings;
use vodpack::crypto::cpix::CpixMode;
use vodpack::crypto::settings::ProtectArgs;

const FIXTURE: &str = "h264-aac-3s.mp4";
const FAIRPLAY: &str = "94ce86fb-07ff-4f43-adb8-93d2fa968ca2";
const WIDEVINE: &str = "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed";
const PLAYREADY: &str = "9a04f079-9840-4286-ab92-e65be0885f95";

/// Answer with every system asked for, with 503, or without PlayReady.
const OK: u8 = 0;
const DOWN: u8 = 1;
const NO_PLAYREADY: u8 = 2;
/// SPEKE v2 without echoing `X-Speke-Version`; an answer past the 1 MiB bound.
const NO_SPEKE_HEADER: u8 = 3;
const HUGE: u8 = 4;

fn uuid_bytes(uuid: &str) -> Vec<u8> {
    let hex: String = uuid.chars().filter(|c| *c != '-').collect();
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// A version-0 `pssh` box, built here byte by byte.
fn pssh(system: &str, data: &[u8]) -> Vec<u8> {
    let mut out = ((32 + data.len()) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(b"pssh\0\0\0\0");
    out.extend_from_slice(&uuid_bytes(system));
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out
}

/// A PlayReady header object around `xml`, built here.
fn pro(xml: &str) -> Vec<u8> {
    let record: Vec<u8> = xml.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut out = ((record.len() + 10) as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&[1, 0, 1, 0]);
    out.extend_from_slice(&(record.len() as u16).to_le_bytes());
    out.extend_from_slice(&record);
    out
}

/// What the key server says for the KID `kid` (a UUID): each system's data and lines.
struct Supplied {
    kid: String,
    widevine_pssh: Vec<u8>,
    playready_pssh: Vec<u8>,
    playready_pro: Vec<u8>,
    /// (system, media line, master line)
    lines: Vec<(&'static str, String, String)>,
}

fn supplied(kid: &str) -> Supplied {
    let hex: String = kid.chars().filter(|c| *c != '-').collect();
    let widevine_pssh = pssh(WIDEVINE, format!("wv-{hex}").as_bytes());
    let playready_pro = pro(&format!("<WRMHEADER>{hex}</WRMHEADER>"));
    let playready_pssh = pssh(PLAYREADY, &playready_pro);
    let attrs = |system| {
        match system {
        FAIRPLAY => format!(
            "METHOD=SAMPLE-AES,URI=\"skd://fps.example/{hex}\",KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\""
        ),
        WIDEVINE => format!(
            "METHOD=SAMPLE-AES,URI=\"data:text/plain;base64,{}\",KEYID=0x{hex},KEYFORMAT=\"urn:uuid:{WIDEVINE}\",KEYFORMATVERSIONS=\"1\"",
            STANDARD.encode(&widevine_pssh)
        ),
        _ => format!(
            "METHOD=SAMPLE-AES,URI=\"data:text/plain;charset=UTF-16;base64,{}\",KEYFORMAT=\"com.microsoft.playready\",KEYFORMATVERSIONS=\"1\"",
            STANDARD.encode(&playready_pro)
        ),
    }
    };
    let lines = [FAIRPLAY, WIDEVINE, PLAYREADY]
        .into_iter()
        .map(|s| {
            (
                s,
                format!("#EXT-X-KEY:{}", attrs(s)),
                format!("#EXT-X-SESSION-KEY:{}", attrs(s)),
            )
        })
        .collect();
    Supplied {
        kid: kid.to_owned(),
        widevine_pssh,
        playready_pssh,
        playready_pro,
        lines,
    }
}

fn key_of(kid: &str) -> [u8; 16] {
    let mut key = [0u8; 16];
    for (k, b) in key.iter_mut().zip(uuid_bytes(kid)) {
        *k = b ^ 0x5a;
    }
    key
}

/// A CPIX 2.3 answer to `request`: the key (the KID XOR 0x5a) and, for each DRMSystem
/// asked for (but PlayReady when `leave_out_playready`), its PSSH, URIExtXKey,
/// HLSSignalingData for both playlists and SmoothStreamingProtectionHeaderData.
fn answer(request: &str, leave_out_playready: bool) -> String {
    let attr = |name: &str| {
        let at = request.find(&format!("{name}=\""))? + name.len() + 2;
        Some(request[at..].split('"').next()?.to_owned())
    };
    let kid = attr("kid").unwrap();
    let s = supplied(&kid);
    let mut systems = String::new();
    for (system, media, master) in &s.lines {
        if !request.contains(&format!("systemId=\"{system}\""))
            || (leave_out_playready && *system == PLAYREADY)
        {
            continue;
        }
        let mut fields = String::new();
        let pssh = match *system {
            WIDEVINE => Some(&s.widevine_pssh),
            PLAYREADY => Some(&s.playready_pssh),
            _ => None,
        };
        if let Some(pssh) = pssh {
            fields += &format!("<cpix:PSSH>{}</cpix:PSSH>", STANDARD.encode(pssh));
        }
        if *system == FAIRPLAY {
            let hex: String = kid.chars().filter(|c| *c != '-').collect();
            fields += &format!(
                "<cpix:URIExtXKey>{}</cpix:URIExtXKey>",
                STANDARD.encode(format!("skd://fps.example/{hex}"))
            );
        }
        if *system == PLAYREADY {
            fields += &format!(
                "<cpix:SmoothStreamingProtectionHeaderData>{}</cpix:SmoothStreamingProtectionHeaderData>",
                STANDARD.encode(&s.playready_pro)
            );
        }
        fields += &format!(
            "<cpix:HLSSignalingData playlist=\"media\">{}</cpix:HLSSignalingData>\
             <cpix:HLSSignalingData playlist=\"master\">{}</cpix:HLSSignalingData>",
            STANDARD.encode(media),
            STANDARD.encode(master)
        );
        systems += &format!(
            "<cpix:DRMSystem kid=\"{kid}\" systemId=\"{system}\">{fields}</cpix:DRMSystem>"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" \
         xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\
         <cpix:ContentKeyList><cpix:ContentKey kid=\"{kid}\"><cpix:Data><pskc:Secret>\
         <pskc:PlainValue>{}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>\
         </cpix:ContentKeyList><cpix:DRMSystemList>{systems}</cpix:DRMSystemList></cpix:CPIX>\n",
        attr("contentId").unwrap_or_default(),
        STANDARD.encode(key_of(&kid))
    )
}

/// Why a SPEKE v2 request is refused (as AWS's key providers answer 422), if it is: the
/// `X-Speke-Version: 2.0` header, CPIX 2.3, the key's `commonEncryptionScheme`, the
/// encryption contract, and each DRMSystem asking for HLS signalling.
fn speke2_refusal(version: Option<&str>, request: &str) -> Option<&'static str> {
    if version != Some("2.0") {
        return Some("Unsupported SPEKE version");
    }
    if !request.contains("version=\"2.3\"") || !request.contains("contentId=\"") {
        return Some("Missing CPIX@version or contentId");
    }
    if !request.contains("commonEncryptionScheme=\"cbcs\"") {
        return Some("Missing ContentKey@commonEncryptionScheme");
    }
    if !request.contains("intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/>") {
        return Some("Missing ContentKeyUsageRule");
    }
    let systems = request.matches("<cpix:DRMSystem ").count();
    let asked = request
        .matches("<cpix:HLSSignalingData playlist=\"master\"/>")
        .count();
    (systems != 3 || asked != 3).then_some("DRMSystem without HLSSignalingData")
}

/// A key server: CPIX 2.3, or SPEKE v2 (checking its header and request shape).
struct KeyServer {
    url: String,
    hits: Arc<AtomicUsize>,
    mode: Arc<AtomicU8>,
    requests: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn start_key_server(speke2: bool) -> KeyServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/cpix", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let mode = Arc::new(AtomicU8::new(OK));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let (h, m, r) = (hits.clone(), mode.clone(), requests.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (h, m, r) = (h.clone(), m.clone(), r.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (h, m, r) = (h.clone(), m.clone(), r.clone());
                    async move {
                        h.fetch_add(1, Ordering::SeqCst);
                        let version = (req.headers().get("x-speke-version"))
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let request = String::from_utf8_lossy(&body).into_owned();
                        r.lock().unwrap().push(request.clone());
                        let refusal = speke2
                            .then(|| speke2_refusal(version.as_deref(), &request))
                            .flatten();
                        let (status, text) = match (m.load(Ordering::SeqCst), refusal) {
                            (_, Some(why)) => (422, why.to_owned()),
                            (DOWN, _) => (503, String::from("down")),
                            (HUGE, _) => (200, "<!-- -->".repeat(200_000)),
                            (mode, None) => (200, answer(&request, mode == NO_PLAYREADY)),
                        };
                        let mut response = hyper::Response::builder()
                            .status(status)
                            .header("content-type", "application/xml");
                        if speke2 && m.load(Ordering::SeqCst) != NO_SPEKE_HEADER {
                            response = response
                                .header("x-speke-version", "2.0")
                                .header("x-speke-user-agent", "vodpack-test");
                        }
                        let response = response.body(Full::new(Bytes::from(text))).unwrap();
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    KeyServer {
        url,
        hits,
        mode,
        requests,
        task,
    }
}

/// A server encrypting `hls=sample-aes,dash=cbcs` with keys from `keys`, every title
/// signalled for FairPlay, Widevine and PlayReady, configured as an operator would.
async fn start(keys: &KeyServer, mode: CpixMode) -> TestServer {
    start_in(keys, mode, "fairplay,widevine,playready", &fixtures()).await
}

/// [`start`] with the DRM systems `drm`, serving `root`.
async fn start_in(
    keys: &KeyServer,
    mode: CpixMode,
    drm: &str,
    root: &std::path::Path,
) -> TestServer {
    let args = ProtectArgs {
        encryption: Some("hls=sample-aes,dash=cbcs".into()),
        cpix_url: Some(keys.url.clone()),
        cpix_mode: Some(mode),
        cpix_timeout_ms: Some(1000),
        cpix_retries: Some(1),
        drm_systems: Some(drm.into()),
        ..Default::default()
    };
    let settings = Settings {
        segment_duration_ms: 1000,
        protect: args.resolve().unwrap(),
        ..Default::default()
    };
    start_server_with(root, settings).await
}

/// The first media playlist a multivariant playlist names (a variant's URI line).
fn first_media_playlist(master: &str) -> String {
    let uri = master
        .lines()
        .find(|l| !l.starts_with('#') && l.ends_with(".m3u8"))
        .expect("a variant");
    format!("/vod/{FIXTURE}/{uri}")
}

/// Given a CPIX 2.3 key server and then a SPEKE v2 one, each supplying FairPlay, Widevine
/// and PlayReady signalling, when a title's playlists, MPD and init segment are asked for
/// (twice), then the multivariant playlist has each system's `EXT-X-SESSION-KEY` line and
/// the media playlist each `EXT-X-KEY` line (after `EXT-X-MAP`) exactly as supplied, the
/// MPD has Widevine's and PlayReady's `cenc:pssh` and PlayReady's `mspr:pro` as supplied,
/// the init segment carries both `pssh` boxes, no ClearKey is signalled (not asked for),
/// and the key server is asked once.
#[tokio::test]
async fn key_server_signalling_appears_in_hls_and_dash_as_supplied() {
    for mode in [CpixMode::Cpix, CpixMode::Speke2] {
        let keys = start_key_server(mode == CpixMode::Speke2).await;
        let server = start(&keys, mode).await;
        for _ in 0..2 {
            let master = get(server.addr, &format!("/vod/{FIXTURE}/master.m3u8")).await;
            assert_eq!(master.status, 200, "{mode:?}: {}", master.text());
            let master = master.text();
            let request = keys.requests.lock().unwrap()[0].clone();
            let kid = request
                .split("kid=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let s = supplied(kid);
            let session: Vec<&str> = (master.lines())
                .filter(|l| l.starts_with("#EXT-X-SESSION-KEY"))
                .collect();
            let expected: Vec<&str> = s.lines.iter().map(|l| l.2.as_str()).collect();
            assert_eq!(session, expected, "{mode:?}");
            let path = first_media_playlist(&master);
            let media = get(server.addr, &path).await;
            assert_eq!(media.status, 200, "{}", media.text());
            let media = media.text();
            let keylines: Vec<&str> = (media.lines())
                .filter(|l| l.starts_with("#EXT-X-KEY"))
                .collect();
            let expected: Vec<&str> = s.lines.iter().map(|l| l.1.as_str()).collect();
            assert_eq!(keylines, expected, "{mode:?}");
            assert!(media.find("#EXT-X-MAP").unwrap() < media.find("#EXT-X-KEY").unwrap());
            assert!(!media.contains("clearkey") && !master.contains("clearkey"));

            let mpd = get(server.addr, &format!("/vod/{FIXTURE}/manifest.mpd")).await;
            assert_eq!(mpd.status, 200);
            let mpd = mpd.text();
            assert!(mpd.contains(&format!("cenc:default_KID=\"{}\"", s.kid)));
            assert!(mpd.contains(&format!(
                "<ContentProtection schemeIdUri=\"urn:uuid:{WIDEVINE}\" value=\"Widevine\">\n        <cenc:pssh>{}</cenc:pssh>",
                STANDARD.encode(&s.widevine_pssh)
            )));
            assert!(mpd.contains(&format!(
                "<ContentProtection schemeIdUri=\"urn:uuid:{PLAYREADY}\" value=\"MSPR 2.0\">\n        <cenc:pssh>{}</cenc:pssh>\n        <mspr:pro>{}</mspr:pro>",
                STANDARD.encode(&s.playready_pssh),
                STANDARD.encode(&s.playready_pro)
            )));
            assert!(!mpd.contains("ClearKey1.0"));

            let folder = common::version_folder_in(&master);
            let init = get(server.addr, &format!("/vod/{FIXTURE}/{folder}init-t1.mp4")).await;
            assert_eq!(init.status, 200);
            for pssh in [&s.widevine_pssh, &s.playready_pssh] {
                assert!(init.body.windows(pssh.len()).any(|w| w == &pssh[..]));
            }
        }
        assert_eq!(keys.hits.load(Ordering::SeqCst), 1, "{mode:?}: one request");
        let request = keys.requests.lock().unwrap()[0].clone();
        assert!(request.contains(&format!("contentId=\"{FIXTURE}\"")));
        for system in [FAIRPLAY, WIDEVINE, PLAYREADY] {
            assert!(
                request.contains(&format!("systemId=\"{system}\"")),
                "{request}"
            );
        }
        server.shutdown().await;
    }
}

/// Given a key server that leaves PlayReady out of its answer, answers 503, answers past
/// the size bound, or (SPEKE v2) answers without `X-Speke-Version`, when manifests and
/// init segments are asked for, then each is a 503 with Retry-After (naming PlayReady
/// when it was left out), never a manifest without it; the failed answer is not cached,
/// so once the server is whole the next request succeeds.
#[tokio::test]
async fn a_system_left_out_or_a_failing_server_is_503_naming_it() {
    let cases = [
        (NO_PLAYREADY, Some("PlayReady"), CpixMode::Cpix),
        (NO_PLAYREADY, Some("PlayReady"), CpixMode::Speke2),
        (DOWN, None, CpixMode::Cpix),
        (DOWN, None, CpixMode::Speke2),
        (HUGE, None, CpixMode::Cpix),
        (NO_SPEKE_HEADER, None, CpixMode::Speke2),
    ];
    for (mode, named, protocol) in cases {
        let keys = start_key_server(protocol == CpixMode::Speke2).await;
        keys.mode.store(mode, Ordering::SeqCst);
        let server = start(&keys, protocol).await;
        for path in ["master.m3u8", "manifest.mpd", "index-t1.m3u8"] {
            let reply = get(server.addr, &format!("/vod/{FIXTURE}/{path}")).await;
            assert_eq!(reply.status, 503, "{path}: {}", reply.text());
            assert!(reply.header("retry-after").is_some());
            if let Some(name) = named {
                assert!(reply.text().contains(name), "{}", reply.text());
            }
            assert!(
                !reply.text().contains("EXT"),
                "an error line, not a manifest"
            );
        }
        let asked = keys.hits.load(Ordering::SeqCst);
        assert!(asked >= 3, "not cached: asked {asked} times");
        keys.mode.store(OK, Ordering::SeqCst);
        let mpd = get(server.addr, &format!("/vod/{FIXTURE}/manifest.mpd")).await;
        assert_eq!(mpd.status, 200, "the key server is whole again");
        assert!(mpd.text().contains(PLAYREADY));
        server.shutdown().await;
    }
}

/// The GUID byte order PlayReady writes a KID in (first three fields little-endian).
fn guid(kid: &[u8]) -> Vec<u8> {
    let mut g = kid.to_vec();
    g[..4].reverse();
    g[4..6].reverse();
    g[6..8].reverse();
    g
}

/// Given no key server, the key secret, `--drm-systems fairplay,widevine,playready,clearkey`,
/// a PlayReady licence URL and a FairPlay key URI template, when a title is asked for, then
/// Widevine's `pssh` is the known encoding of the KID (built here from the proto's field
/// numbers: key_id 2, protection_scheme 9 = 'cbcs'), PlayReady's header object decodes to
/// a 4.3.0.0 WRMHEADER (UTF-16LE) with the KID in GUID order and the licence URL, the
/// FairPlay URI is the template's, ClearKey stays signalled, the init segment carries
/// both `pssh` boxes and ffprobe still reads it; a title document's `"drm"` narrows the
/// systems for its title, and without ClearKey its licence route gives no key.
#[tokio::test]
async fn raw_keys_signal_each_system_without_a_key_server() {
    let dir = common::TempDir::new("drm-raw");
    std::fs::copy(fixtures().join(FIXTURE), dir.path().join(FIXTURE)).unwrap();
    std::fs::write(
        dir.path().join("title.json"),
        format!("{{\"video\":[{{\"file\":\"{FIXTURE}\"}}],\"drm\":[\"widevine\"]}}"),
    )
    .unwrap();
    let args = ProtectArgs {
        encryption: Some("hls=sample-aes,dash=cbcs".into()),
        key_secret: Some("a long enough test secret".into()),
        drm_systems: Some("fairplay,widevine,playready,clearkey".into()),
        playready_la_url: Some("https://pr.example/rightsmanager.asmx?a=1&b=2".into()),
        fairplay_key_uri: Some("skd://fps.example/{kid}?title={title}".into()),
        ..Default::default()
    };
    let settings = Settings {
        protect: args.resolve().unwrap(),
        ..Default::default()
    };
    let server = start_server_with(dir.path(), settings).await;

    let mpd = get(server.addr, &format!("/vod/{FIXTURE}/manifest.mpd")).await;
    assert_eq!(mpd.status, 200, "{}", mpd.text());
    let mpd = mpd.text();
    let kid_uuid = mpd
        .split("cenc:default_KID=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let kid = uuid_bytes(&kid_uuid);
    let mut data = vec![0x12, 0x10];
    data.extend_from_slice(&kid);
    // 'cbcs' = 0x63626373 as a varint: 7 bits at a time, low first.
    data.extend_from_slice(&[0x48, 0xf3, 0xc6, 0x89, 0x9b, 0x06]);
    let widevine = pssh(WIDEVINE, &data);
    assert!(mpd.contains(&format!(
        "value=\"Widevine\">\n        <cenc:pssh>{}</cenc:pssh>",
        STANDARD.encode(&widevine)
    )));
    assert!(mpd.contains("value=\"ClearKey1.0\""));
    let pro_b64 = mpd
        .split("<mspr:pro>")
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap();
    let pro = STANDARD.decode(pro_b64).unwrap();
    assert_eq!(
        u32::from_le_bytes(pro[..4].try_into().unwrap()) as usize,
        pro.len()
    );
    assert_eq!(&pro[4..8], &[1, 0, 1, 0], "one record, of type 1");
    let units: Vec<u16> = pro[10..]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let xml = String::from_utf16(&units).unwrap();
    assert!(xml.contains("version=\"4.3.0.0\""), "{xml}");
    assert!(xml.contains(&format!(
        "<KID ALGID=\"AESCBC\" VALUE=\"{}\">",
        STANDARD.encode(guid(&kid))
    )));
    assert!(xml.contains("<LA_URL>https://pr.example/rightsmanager.asmx?a=1&amp;b=2</LA_URL>"));
    let playready = pssh(PLAYREADY, &pro);
    assert!(mpd.contains(&format!(
        "<cenc:pssh>{}</cenc:pssh>",
        STANDARD.encode(&playready)
    )));

    let master = get(server.addr, &format!("/vod/{FIXTURE}/master.m3u8"))
        .await
        .text();
    let media = get(server.addr, &first_media_playlist(&master))
        .await
        .text();
    let hex: String = kid.iter().map(|b| format!("{b:02x}")).collect();
    let fairplay = format!(
        "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://fps.example/{hex}?title=h264-aac-3s.mp4\",\
         KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\""
    );
    assert!(media.lines().any(|l| l == fairplay), "{media}");
    assert!(media.contains(&format!(
        "URI=\"data:text/plain;base64,{}\",KEYID=0x{hex},KEYFORMAT=\"urn:uuid:{WIDEVINE}\"",
        STANDARD.encode(&widevine)
    )));
    assert!(media.contains(&format!(
        "URI=\"data:text/plain;charset=UTF-16;base64,{pro_b64}\",KEYFORMAT=\"com.microsoft.playready\""
    )));
    assert!(media.contains("KEYFORMAT=\"org.w3.clearkey\""));
    assert_eq!(master.matches("#EXT-X-SESSION-KEY").count(), 4, "{master}");

    let folder = common::version_folder_in(&master);
    let init = get(server.addr, &format!("/vod/{FIXTURE}/{folder}init-t1.mp4")).await;
    assert_eq!(init.status, 200);
    for pssh in [&widevine, &playready] {
        assert!(init.body.windows(pssh.len()).any(|w| w == &pssh[..]));
    }
    if common::have_tool("ffprobe") {
        let file = dir.path().join("init.mp4");
        std::fs::write(&file, &init.body).unwrap();
        let probe = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-show_streams"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            probe.status.success(),
            "{}",
            String::from_utf8_lossy(&probe.stderr)
        );
        assert!(String::from_utf8_lossy(&probe.stdout).contains("codec_name=h264"));
    }

    let doc = get(server.addr, "/vod/title.json/manifest.mpd").await;
    assert_eq!(doc.status, 200, "{}", doc.text());
    let doc = doc.text();
    assert!(doc.contains(WIDEVINE));
    assert!(!doc.contains(PLAYREADY) && !doc.contains("ClearKey1.0"));
    // Without ClearKey among its systems, the title's licence route hands out no key; the
    // other title's still reads requests (an empty one is a bad request).
    let licence = common::request(server.addr, "POST", "/vod/title.json/clearkey.json", &[]).await;
    assert_eq!(licence.status, 404);
    // Nor its SAMPLE-AES raw key, nor the MPEG-TS output that needs it.
    for path in ["/vod/title.json/hls.key", "/vod/title.json/master-ts.m3u8"] {
        assert_eq!(get(server.addr, path).await.status, 404, "{path}");
    }
    let ts = get(server.addr, &format!("/vod/{FIXTURE}/master-ts.m3u8")).await;
    assert_eq!(ts.status, 200, "with ClearKey the TS output stays");
    let path = format!("/vod/{FIXTURE}/clearkey.json");
    let licence = common::request(server.addr, "POST", &path, &[]).await;
    assert_eq!(licence.status, 400);
    server.shutdown().await;
}

/// Given a server signalling Widevine only and a title document asking for FairPlay and
/// Widevine, when the document's playlists, MPD and licence are asked for, then the key
/// server is asked once for that title, for FairPlay and Widevine, and the playlists
/// carry FairPlay's lines as supplied; the plain file gets Widevine only.
#[tokio::test]
async fn a_title_documents_drm_list_is_what_the_key_server_is_asked_for() {
    let dir = common::TempDir::new("drm-doc");
    std::fs::copy(fixtures().join(FIXTURE), dir.path().join(FIXTURE)).unwrap();
    std::fs::write(
        dir.path().join("title.json"),
        format!("{{\"video\":[{{\"file\":\"{FIXTURE}\"}}],\"drm\":[\"fairplay\",\"widevine\"]}}"),
    )
    .unwrap();
    let keys = start_key_server(false).await;
    let server = start_in(&keys, CpixMode::Cpix, "widevine", dir.path()).await;
    let master = get(server.addr, "/vod/title.json/master.m3u8").await;
    assert_eq!(master.status, 200, "{}", master.text());
    let master = master.text();
    let mpd = get(server.addr, "/vod/title.json/manifest.mpd").await;
    assert_eq!(mpd.status, 200);
    let licence = common::request(server.addr, "POST", "/vod/title.json/clearkey.json", &[]).await;
    assert_eq!(licence.status, 404, "no ClearKey among the title's systems");
    assert_eq!(
        keys.hits.load(Ordering::SeqCst),
        1,
        "one request for the title"
    );
    let request = keys.requests.lock().unwrap()[0].clone();
    assert!(request.contains(&format!("systemId=\"{FAIRPLAY}\"")));
    assert!(request.contains(&format!("systemId=\"{WIDEVINE}\"")));
    assert!(!request.contains(PLAYREADY));
    let kid = request
        .split("kid=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let s = supplied(kid);
    assert!(master.lines().any(|l| l == s.lines[0].2), "{master}");
    assert!(master.lines().any(|l| l == s.lines[1].2));

    let plain = get(server.addr, &format!("/vod/{FIXTURE}/master.m3u8"))
        .await
        .text();
    assert!(
        plain.contains(WIDEVINE) && !plain.contains("skd://"),
        "{plain}"
    );
    assert_eq!(
        keys.hits.load(Ordering::SeqCst),
        2,
        "another title, another request"
    );
    server.shutdown().await;
}
