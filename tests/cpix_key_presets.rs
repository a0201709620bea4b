//! Keys by usage from a key server: a CPIX 2.3 / SPEKE v2 key server on loopback, started
//! by the test, receives one request per title with a `ContentKey` per usage of the split
//! and the encryption contract the preset defines (checked field by field); its keys are
//! the ones served; an answer missing a usage's key is a 503 naming it, not cached.

mod common;

use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use common::{fixtures, get, segments_of, start_server_with, TestServer};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use quick_xml::events::Event;
use std::time::Duration;
use vodpack::crypto::cpix::{usage_kid, CpixMode, CpixOptions, WIDEVINE};
use vodpack::crypto::keys::uuid_string;
use vodpack::crypto::{EncryptionPolicy, KeyPresets, KeyUsage, Scheme};

const TITLE: &str = "ladder/ladder.json";

/// What the key server saw of one request: its `X-Speke-Version` header and its body.
#[derive(Debug, Clone)]
struct Seen {
    speke_version: Option<String>,
    body: String,
}

/// A key server whose key of a KID is the KID with every byte XOR 0x5a, leaving out the
/// keys whose usage rule's `intendedTrackType` is in `withheld`.
struct KeyServer {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    withheld: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One element of a CPIX document: its local name and attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        (self.attributes.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Every element of `xml` in document order, by local name, with its attributes.
fn elements(xml: &str) -> Vec<Element> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event().expect("the request is XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attributes = (e.attributes().flatten())
                    .map(|a| {
                        (
                            String::from_utf8_lossy(a.key.local_name().as_ref()).into_owned(),
                            String::from_utf8_lossy(&a.value).into_owned(),
                        )
                    })
                    .collect();
                out.push(Element {
                    name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    attributes,
                });
            }
            Event::Eof => return out,
            _ => {}
        }
    }
}

fn parse_kid(text: &str) -> [u8; 16] {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    let mut kid = [0u8; 16];
    for (i, b) in kid.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    kid
}

fn key_of(kid: &[u8; 16]) -> [u8; 16] {
    kid.map(|b| b ^ 0x5a)
}

fn widevine_pssh(kid: &[u8; 16]) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 0];
    body.extend_from_slice(&WIDEVINE);
    body.extend_from_slice(&16u32.to_be_bytes());
    body.extend_from_slice(kid);
    [&((8 + body.len()) as u32).to_be_bytes()[..], b"pssh", &body].concat()
}

/// The answer to `request`: a key and a Widevine `pssh` per `ContentKey`, but those
/// whose usage rule names a withheld track type.
fn answer(request: &str, withheld: &[String]) -> String {
    let parsed = elements(request);
    let withheld_kids: Vec<&str> = (parsed.iter())
        .filter(|e| e.name == "ContentKeyUsageRule")
        .filter(|e| {
            e.attr("intendedTrackType")
                .is_some_and(|t| withheld.iter().any(|w| w == t))
        })
        .filter_map(|e| e.attr("kid"))
        .collect();
    let mut keys = String::new();
    let mut systems = String::new();
    for kid_text in (parsed.iter())
        .filter(|e| e.name == "ContentKey")
        .filter_map(|e| e.attr("kid"))
        .filter(|k| !withheld_kids.contains(k))
    {
        let kid = parse_kid(kid_text);
        keys.push_str(&format!(
            "<cpix:ContentKey kid=\"{kid_text}\"><cpix:Data><pskc:Secret><pskc:PlainValue>{}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>",
            STANDARD.encode(key_of(&kid))
        ));
        systems.push_str(&format!(
            "<cpix:DRMSystem kid=\"{kid_text}\" systemId=\"{}\"><cpix:PSSH>{}</cpix:PSSH></cpix:DRMSystem>",
            uuid_string(&WIDEVINE),
            STANDARD.encode(widevine_pssh(&kid))
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" \
         xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" version=\"2.3\">\
         <cpix:ContentKeyList>{keys}</cpix:ContentKeyList>\
         <cpix:DRMSystemList>{systems}</cpix:DRMSystemList></cpix:CPIX>\n"
    )
}

async fn start_key_server() -> KeyServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/speke/v2.0/copyProtection",
        listener.local_addr().unwrap()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let withheld = Arc::new(Mutex::new(Vec::new()));
    let (s, w) = (seen.clone(), withheld.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (s, w) = (s.clone(), w.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (s, w) = (s.clone(), w.clone());
                    async move {
                        let speke_version = (req.headers().get("x-speke-version"))
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let body = String::from_utf8_lossy(&body).into_owned();
                        let withheld = w.lock().unwrap().clone();
                        let text = answer(&body, &withheld);
                        s.lock().unwrap().push(Seen {
                            speke_version,
                            body,
                        });
                        let response = hyper::Response::builder()
                            .status(200)
                            .header("content-type", "application/xml")
                            .header("x-speke-version", "2.0")
                            .body(Full::new(Bytes::from(text)))
                            .unwrap();
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
        seen,
        withheld,
        task,
    }
}

/// A server over the fixtures keyed by `keys` in `mode` (Widevine required), `cenc` DASH
/// and SAMPLE-AES HLS, under the split `presets`.
async fn start(keys: &KeyServer, mode: CpixMode, presets: &str) -> TestServer {
    let mut settings = segments_of(1000);
    settings.protect.encryption = EncryptionPolicy::parse("hls=sample-aes,dash=cbcs").unwrap();
    settings.protect.key_presets = KeyPresets::parse(presets).unwrap();
    settings.protect.cpix = Some(CpixOptions {
        url: keys.url.clone(),
        mode,
        systems: vec![WIDEVINE],
        required: true,
        scheme: Scheme::Cbcs,
        timeout: Duration::from_millis(2000),
        retries: 0,
        ttl: Duration::from_secs(300),
    });
    start_server_with(&fixtures(), settings).await
}

/// Given a SPEKE v2 key server and the split PRESET-VIDEO-3 / PRESET-AUDIO-1, when the
/// ladder title's MPD, playlists and segments are asked for, then the key server gets
/// one request with the `X-Speke-Version: 2.0` header, the title as `contentId`, one
/// `ContentKey` per usage (`commonEncryptionScheme="cbcs"`), a Widevine `DRMSystem` per
/// KID, and a usage rule per key with SPEKE v2's name and pixel or channel filter; the
/// MPD and init segments carry the server's KIDs and `pssh` per key.
#[tokio::test]
async fn a_speke_v2_server_gets_the_preset_s_request_and_its_keys_are_served() {
    let keys = start_key_server().await;
    let server = start(
        &keys,
        CpixMode::Speke2,
        "video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1",
    )
    .await;
    let mpd = get(server.addr, &format!("/vod/{TITLE}/manifest.mpd")).await;
    assert_eq!(mpd.status, 200, "{}", mpd.text());
    let master = get(server.addr, &format!("/vod/{TITLE}/master.m3u8")).await;
    assert_eq!(master.status, 200, "{}", master.text());
    let seen = keys.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one request per title for every key");
    assert_eq!(seen[0].speke_version.as_deref(), Some("2.0"));
    let request = elements(&seen[0].body);
    let kid = |usage| uuid_string(&usage_kid(TITLE, usage));
    let cpix = request.iter().find(|e| e.name == "CPIX").unwrap();
    assert_eq!(cpix.attr("contentId"), Some(TITLE));
    assert_eq!(cpix.attr("version"), Some("2.3"));
    let content_keys: Vec<(&str, Option<&str>)> = (request.iter())
        .filter(|e| e.name == "ContentKey")
        .map(|e| (e.attr("kid").unwrap(), e.attr("commonEncryptionScheme")))
        .collect();
    let usages = [KeyUsage::Sd, KeyUsage::Hd, KeyUsage::Uhd, KeyUsage::Audio];
    let kids: Vec<String> = usages.iter().map(|u| kid(*u)).collect();
    assert_eq!(
        content_keys,
        kids.iter()
            .map(|k| (k.as_str(), Some("cbcs")))
            .collect::<Vec<_>>()
    );
    let drm: Vec<(&str, &str)> = (request.iter())
        .filter(|e| e.name == "DRMSystem")
        .map(|e| (e.attr("kid").unwrap(), e.attr("systemId").unwrap()))
        .collect();
    let widevine = uuid_string(&WIDEVINE);
    assert_eq!(
        drm,
        kids.iter()
            .map(|k| (k.as_str(), widevine.as_str()))
            .collect::<Vec<_>>()
    );
    // The encryption contract, rule by rule: the rule, then its filters.
    let mut rules: Vec<(String, String, Vec<Element>)> = Vec::new();
    for e in &request {
        match e.name.as_str() {
            "ContentKeyUsageRule" => rules.push((
                e.attr("kid").unwrap().to_owned(),
                e.attr("intendedTrackType").unwrap().to_owned(),
                Vec::new(),
            )),
            "VideoFilter" | "AudioFilter" => rules.last_mut().unwrap().2.push(e.clone()),
            _ => {}
        }
    }
    let filter = |name: &str, attrs: &[(&str, &str)]| Element {
        name: name.into(),
        attributes: (attrs.iter())
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    };
    let want = vec![
        (
            kid(KeyUsage::Sd),
            "SD".to_owned(),
            vec![filter("VideoFilter", &[("maxPixels", "589824")])],
        ),
        (
            kid(KeyUsage::Hd),
            "HD".to_owned(),
            vec![filter(
                "VideoFilter",
                &[("minPixels", "589825"), ("maxPixels", "2073600")],
            )],
        ),
        (
            kid(KeyUsage::Uhd),
            "UHD".to_owned(),
            vec![filter("VideoFilter", &[("minPixels", "2073601")])],
        ),
        (
            kid(KeyUsage::Audio),
            "AUDIO".to_owned(),
            vec![filter("AudioFilter", &[])],
        ),
    ];
    assert_eq!(rules, want);
    // The ladder fixture's rungs are all SD (at most 640x360): they take the SD key, the
    // audio the AUDIO key, each with the key server's `pssh`.
    let text = mpd.text();
    let sd = usage_kid(TITLE, KeyUsage::Sd);
    let audio = usage_kid(TITLE, KeyUsage::Audio);
    assert!(text.contains(&format!("cenc:default_KID=\"{}\"", uuid_string(&sd))));
    assert!(text.contains(&format!("cenc:default_KID=\"{}\"", uuid_string(&audio))));
    assert!(text.contains(&format!(
        "<cenc:pssh>{}</cenc:pssh>",
        STANDARD.encode(widevine_pssh(&audio))
    )));
    assert!(!text.contains(&uuid_string(&usage_kid(TITLE, KeyUsage::Hd))));
    let folder = (text.split("initialization=\"").nth(1))
        .and_then(|s| s.split('/').next())
        .unwrap()
        .to_owned();
    let init = get(
        server.addr,
        &format!("/vod/{TITLE}/{folder}/init-f1-t1.mp4"),
    )
    .await;
    assert_eq!(init.status, 200);
    assert!(init.body.windows(16).any(|w| w == sd), "SD KID in tenc");
    assert!(
        init.body
            .windows(widevine_pssh(&sd).len())
            .any(|w| w == widevine_pssh(&sd)),
        "the SD key's pssh in the init segment"
    );
    server.shutdown().await;
}

/// Given a CPIX 2.3 key server whose answer leaves out the HD key of the split
/// PRESET-VIDEO-2 / PRESET-AUDIO-1, then the title's MPD, playlists, init segments and
/// segments answer 503 naming the HD key with `Retry-After`, nothing is served clear, and
/// the failure is not cached: once the key server gives every key, the title plays.
#[tokio::test]
async fn an_answer_missing_a_usage_key_is_503_naming_it() {
    let keys = start_key_server().await;
    keys.withheld.lock().unwrap().push("HD".into());
    let server = start(
        &keys,
        CpixMode::Cpix,
        "video=PRESET-VIDEO-2,audio=PRESET-AUDIO-1",
    )
    .await;
    let base = format!("/vod/{TITLE}");
    for path in [
        "manifest.mpd",
        "master.m3u8",
        "v0123456789abcdef/init-f1-t1.mp4",
        "v0123456789abcdef/seg-f1-t1-1.m4s",
    ] {
        let reply = get(server.addr, &format!("{base}/{path}")).await;
        assert_eq!(reply.status, 503, "{path}");
        assert!(
            reply.text().contains("no HD key"),
            "{path}: {}",
            reply.text()
        );
        assert!(reply.header("retry-after").is_some());
    }
    // The plain CPIX request carries the contract too, without SPEKE's scheme or header.
    let seen = keys.seen.lock().unwrap().clone();
    assert!(seen.iter().all(|s| s.speke_version.is_none()));
    assert!(seen[0].body.contains("intendedTrackType=\"HD\""));
    assert!(!seen[0].body.contains("commonEncryptionScheme"));
    keys.withheld.lock().unwrap().clear();
    let mpd = get(server.addr, &format!("{base}/manifest.mpd")).await;
    assert_eq!(mpd.status, 200, "asked again, not cached: {}", mpd.text());
    server.shutdown().await;
}
