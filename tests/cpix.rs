//! The `cpix` key provider against a real CPIX key server running in the test: keys and
//! DRM signalling come from its CPIX 2.3 answers, are cached per title, and an outage (5xx
//! or no answer within the timeout) is a 503 with nothing served in the clear.

mod common;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use common::{fixtures, get, start_server_with, TestServer};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use vodpack::crypto::cpix::{cpix_kid, CpixMode, CpixOptions, WIDEVINE};
use vodpack::crypto::keys::uuid_string;
use vodpack::crypto::{EncryptionPolicy, Scheme};

const FIXTURE: &str = "h264-aac-3s.mp4";
/// Answer normally, with 503, or not at all.
const OK: u8 = 0;
const DOWN: u8 = 1;
const SILENT: u8 = 2;

/// A CPIX key server: the key of a KID is the KID with every byte XOR 0x5a, and each
/// requested DRM system gets a small `pssh` box.
struct KeyServer {
    url: String,
    hits: Arc<AtomicUsize>,
    mode: Arc<AtomicU8>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn key_of(kid: &[u8; 16]) -> [u8; 16] {
    kid.map(|b| b ^ 0x5a)
}

fn widevine_pssh() -> Vec<u8> {
    let mut body = vec![0, 0, 0, 0];
    body.extend_from_slice(&WIDEVINE);
    body.extend_from_slice(&4u32.to_be_bytes());
    body.extend_from_slice(b"test");
    [&((8 + body.len()) as u32).to_be_bytes()[..], b"pssh", &body].concat()
}

fn answer(request: &str) -> String {
    let attr = |name: &str| {
        let at = request.find(&format!("{name}=\""))? + name.len() + 2;
        Some(request[at..].split('"').next()?.to_owned())
    };
    let kid_text = attr("kid").unwrap_or_default();
    let hex: String = kid_text.chars().filter(|c| *c != '-').collect();
    let kid: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let key = key_of(&kid.try_into().unwrap());
    let systems = match attr("systemId") {
        Some(system) => format!(
            "<cpix:DRMSystemList><cpix:DRMSystem kid=\"{kid_text}\" systemId=\"{system}\">\
             <cpix:PSSH>{}</cpix:PSSH></cpix:DRMSystem></cpix:DRMSystemList>",
            STANDARD.encode(widevine_pssh())
        ),
        None => String::new(),
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" \
         xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\
         <cpix:ContentKeyList><cpix:ContentKey kid=\"{kid_text}\"><cpix:Data><pskc:Secret>\
         <pskc:PlainValue>{}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>\
         </cpix:ContentKeyList>{systems}</cpix:CPIX>\n",
        attr("contentId").unwrap_or_default(),
        STANDARD.encode(key)
    )
}

async fn start_key_server() -> KeyServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/cpix", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let mode = Arc::new(AtomicU8::new(OK));
    let (h, m) = (hits.clone(), mode.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (h, m) = (h.clone(), m.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (h, m) = (h.clone(), m.clone());
                    async move {
                        h.fetch_add(1, Ordering::SeqCst);
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let request = String::from_utf8_lossy(&body).into_owned();
                        let (status, text) = match m.load(Ordering::SeqCst) {
                            DOWN => (503, String::from("down")),
                            SILENT => {
                                tokio::time::sleep(Duration::from_secs(30)).await;
                                (200, String::new())
                            }
                            _ => (200, answer(&request)),
                        };
                        let response = hyper::Response::builder()
                            .status(status)
                            .header("content-type", "application/xml")
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
        hits,
        mode,
        task,
    }
}

async fn start(key_server: &KeyServer, policy: &str, timeout_ms: u64) -> TestServer {
    let mut settings = common::segments_of(1000);
    settings.protect.encryption = EncryptionPolicy::parse(policy).unwrap();
    settings.protect.cpix = Some(CpixOptions {
        url: key_server.url.clone(),
        mode: CpixMode::Cpix,
        systems: vec![WIDEVINE],
        required: false,
        scheme: Scheme::Cenc,
        timeout: Duration::from_millis(timeout_ms),
        retries: 1,
        ttl: Duration::from_secs(300),
    });
    start_server_with(&fixtures(), settings).await
}

/// Given a CPIX key server, when a title's MPD, init segment and segments are
/// asked for (several times), then its KID, key and Widevine `pssh` come from the server,
/// which is asked once per title.
#[tokio::test]
async fn keys_come_from_the_key_server_once_per_title() {
    let keys = start_key_server().await;
    let server = start(&keys, "dash=cenc", 2000).await;
    let kid = cpix_kid(FIXTURE);
    for _ in 0..3 {
        let mpd = get(server.addr, &format!("/vod/{FIXTURE}/manifest.mpd")).await;
        assert_eq!(mpd.status, 200, "{}", mpd.text());
        let mpd = mpd.text();
        assert!(mpd.contains(&format!("cenc:default_KID=\"{}\"", uuid_string(&kid))));
        assert!(mpd.contains("schemeIdUri=\"urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed\""));
        assert!(mpd.contains(&format!(
            "<cenc:pssh>{}</cenc:pssh>",
            STANDARD.encode(widevine_pssh())
        )));
        let folder = mpd
            .split("initialization=\"")
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let init = get(server.addr, &format!("/vod/{FIXTURE}/{folder}/init-t1.mp4")).await;
        assert_eq!(init.status, 200);
        assert!(
            init.body.windows(16).any(|w| w == WIDEVINE),
            "Widevine pssh in the init segment"
        );
        let segment = get(
            server.addr,
            &format!("/vod/{FIXTURE}/{folder}/seg-t1-2.m4s"),
        )
        .await;
        assert_eq!(segment.status, 200);
    }
    assert_eq!(
        keys.hits.load(Ordering::SeqCst),
        1,
        "one key server request per title"
    );
    get(server.addr, "/vod/hevc-aac-3s.mp4/manifest.mpd").await;
    assert_eq!(
        keys.hits.load(Ordering::SeqCst),
        2,
        "another title, another request"
    );
    let metrics = get(server.addr, "/metrics").await.text();
    assert!(
        metrics.contains("vod_key_server_requests_total{outcome=\"ok\"} 2"),
        "each key server request counted: {metrics}"
    );
    server.shutdown().await;
}

/// Given a key server that answers 503, or nothing within the timeout, then manifests and
/// segments are 503 with Retry-After (after the retries), nothing is served from the clear
/// folder, and once the server is back the next request gets its key (failures are not
/// cached).
#[tokio::test]
async fn a_key_server_outage_is_503_and_never_clear() {
    let clear = common::start_server(&fixtures()).await;
    let clear_master = get(clear.addr, &format!("/vod/{FIXTURE}/master.m3u8"))
        .await
        .text();
    let clear_folder = common::version_folder_in(&clear_master);
    clear.shutdown().await;
    for mode in [DOWN, SILENT] {
        let keys = start_key_server().await;
        keys.mode.store(mode, Ordering::SeqCst);
        let server = start(&keys, "hls=aes-128,dash=cenc", 300).await;
        for path in [
            format!("/vod/{FIXTURE}/manifest.mpd"),
            format!("/vod/{FIXTURE}/master.m3u8"),
            format!("/vod/{FIXTURE}/{clear_folder}seg-t1-1.m4s"),
            format!("/vod/{FIXTURE}/{clear_folder}init-t1.mp4"),
        ] {
            let reply = get(server.addr, &path).await;
            assert_eq!(reply.status, 503, "{path}: {}", reply.text());
            assert!(reply.header("retry-after").is_some());
            assert!(reply.body.len() < 100, "an error line, not media");
        }
        assert!(keys.hits.load(Ordering::SeqCst) >= 2, "retried");
        let metrics = get(server.addr, "/metrics").await.text();
        let outcome = if mode == DOWN {
            "server_error"
        } else {
            "timeout"
        };
        let failed = format!("vod_key_server_requests_total{{outcome=\"{outcome}\"}}");
        assert!(metrics.contains(&failed), "{failed} in {metrics}");
        assert!(
            metrics.contains("vod_key_server_requests_total{outcome=\"ok\"} 0"),
            "{metrics}"
        );
        keys.mode.store(OK, Ordering::SeqCst);
        let mpd = get(server.addr, &format!("/vod/{FIXTURE}/manifest.mpd")).await;
        assert_eq!(mpd.status, 200, "the key server is back");
        server.shutdown().await;
    }
}
