//! The `cpix` key provider: content keys fetched from a key server as CPIX 2.3 documents
//! (DASH-IF Content Protection Information Exchange, the format commercial DRM services
//! speak), cached per title with a TTL.
//!
//! For each title vodpack POSTs a CPIX request naming the title (`contentId`), the KID it
//! chose (derived from the title key, so every replica asks for the same one) and the DRM
//! systems it wants signalling for; the server answers the same document with the key
//! (`pskc:PlainValue`) and each system's `cpix:PSSH`. Requests have a timeout and are
//! retried with backoff on transport errors, timeouts and 5xx; a failure is
//! `KeyError::Unavailable` (a 503), never a made-up key, and is not cached, so the next
//! request tries again. Successes are cached (moka, TTL, one load per title at a time).
//! XML is read with `quick-xml` by local names, so any namespace prefixes work.

use super::drm::xml_escape;
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use moka::future::Cache;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use quick_xml::events::Event;
use sha2::{Digest, Sha256};

use super::drm::{check_hls_lines, check_pro, check_pssh, check_uri, DrmId};
use super::keys::{uuid_string, ContentKey, DrmSystem, KeyError, KeyProvider};
use super::policy::Scheme;
use crate::telemetry::OutcomeLabels;

pub use super::drm::{PLAYREADY, WIDEVINE};

/// Largest CPIX answer read, in bytes.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The key server's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CpixMode {
    /// A CPIX 2.3 document POSTed as it is.
    #[default]
    Cpix,
    /// AWS SPEKE v2: CPIX 2.3 with the `X-Speke-Version: 2.0` header, the key's
    /// `commonEncryptionScheme` and an encryption contract (`ContentKeyUsageRuleList`).
    Speke2,
}

/// How to reach the key server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpixOptions {
    /// The key server's URL (the CPIX request is POSTed to it).
    pub url: String,
    /// CPIX 2.3 or SPEKE v2.
    pub mode: CpixMode,
    /// DRM systems to ask signalling for.
    pub systems: Vec<[u8; 16]>,
    /// Whether each of `systems` must be in the answer (`--drm-systems`): an answer
    /// without one is a failure, and is not cached.
    pub required: bool,
    /// The scheme the key encrypts with (SPEKE v2 `commonEncryptionScheme`).
    pub scheme: Scheme,
    /// Deadline of one request, connection included.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// How long a fetched key is reused.
    pub ttl: Duration,
}

/// Keys from a CPIX key server.
pub struct CpixKeyProvider {
    options: CpixOptions,
    client: reqwest::Client,
    cache: Cache<String, Arc<ContentKey>>,
    /// Each request to the key server by outcome (`vod_key_server_requests_total`).
    requests: Family<OutcomeLabels, Counter>,
}

impl std::fmt::Debug for CpixKeyProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpixKeyProvider")
            .field("url", &self.options.url)
            .finish_non_exhaustive()
    }
}

impl CpixKeyProvider {
    /// A provider for `options`.
    ///
    /// # Errors
    /// [`KeyError::Config`] when the HTTP client cannot be built.
    pub fn new(options: CpixOptions) -> Result<Self, KeyError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .build()
            .map_err(|e| KeyError::Config {
                reason: format!("cpix client: {e}"),
            })?;
        let cache = Cache::builder()
            .max_capacity(100_000)
            .time_to_live(options.ttl)
            .build();
        Ok(Self {
            options,
            client,
            cache,
            requests: Family::default(),
        })
    }

    /// The same provider, counting its requests in `requests` (the server's registered
    /// family).
    pub fn counting_in(mut self, requests: Family<OutcomeLabels, Counter>) -> Self {
        self.requests = requests;
        self
    }

    fn count(&self, outcome: &'static str) {
        self.requests
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// The options of a request for `systems` (`None`: the configured ones).
    fn asking(&self, systems: Option<&[DrmId]>) -> CpixOptions {
        let mut options = self.options.clone();
        if let Some(systems) = systems {
            options.systems = (systems.iter())
                .filter(|d| d.from_key_server())
                .map(|d| d.system_id())
                .collect();
            options.required = true;
        }
        options
    }

    async fn fetch(
        &self,
        title_key: &str,
        options: CpixOptions,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let kid = cpix_kid(title_key);
        let body = request_document(title_key, &kid, &options);
        let mut delay = Duration::from_millis(100);
        let mut last = String::new();
        for attempt in 0..=self.options.retries {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            let mut request = (self.client.post(&self.options.url))
                .header("content-type", "application/xml")
                .body(body.clone());
            if self.options.mode == CpixMode::Speke2 {
                request = request.header("x-speke-version", "2.0");
            }
            let sent = request.send().await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    self.count(if e.is_timeout() {
                        "timeout"
                    } else {
                        "transport"
                    });
                    last = format!("request failed: {e}");
                    continue;
                }
            };
            let status = response.status();
            if status.is_server_error() {
                self.count("server_error");
                last = format!("key server answered {status}");
                continue;
            }
            if !status.is_success() {
                self.count("refused");
                return Err(KeyError::Unavailable {
                    reason: format!("key server answered {status}"),
                });
            }
            // SPEKE v2 key providers echo the version: anything else is not speaking it.
            if self.options.mode == CpixMode::Speke2
                && response
                    .headers()
                    .get("x-speke-version")
                    .map(|v| v.as_bytes())
                    != Some(b"2.0")
            {
                self.count("invalid");
                return Err(KeyError::Unavailable {
                    reason: "key server answer is not SPEKE v2 (no X-Speke-Version: 2.0)".into(),
                });
            }
            let bytes = match read_bounded(response).await {
                Ok(b) => b,
                Err(Bounded::TooLarge) => {
                    self.count("invalid");
                    return Err(KeyError::Unavailable {
                        reason: "key server answer too large".into(),
                    });
                }
                Err(Bounded::Failed(e)) => {
                    self.count(if e.is_timeout() {
                        "timeout"
                    } else {
                        "transport"
                    });
                    last = format!("reading the answer: {e}");
                    continue;
                }
            };
            let key = match parse_answer(&bytes, &kid) {
                Ok(key) => key,
                Err(e) => {
                    self.count("invalid");
                    return Err(e);
                }
            };
            if options.required {
                for system in &options.systems {
                    let present = key
                        .systems
                        .iter()
                        .any(|s| s.system_id == *system && s.usable());
                    if !present {
                        self.count("invalid");
                        // Not cached: the next request asks again.
                        return Err(match DrmId::of(system) {
                            Some(id) => KeyError::MissingSystem { system: id },
                            None => KeyError::Unavailable {
                                reason: format!(
                                    "key server gave no {} signalling",
                                    uuid_string(system)
                                ),
                            },
                        });
                    }
                }
            }
            self.count("ok");
            return Ok(Arc::new(key));
        }
        Err(KeyError::Unavailable { reason: last })
    }
}

#[async_trait::async_trait]
impl KeyProvider for CpixKeyProvider {
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        self.content_key_for(title_key, None).await
    }

    /// Cached per title and systems asked: every request for a title asks for the same
    /// systems (the title document's, else the server's), so that is one request per
    /// title.
    async fn content_key_for(
        &self,
        title_key: &str,
        systems: Option<&[DrmId]>,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let options = self.asking(systems);
        let mut cache_key = title_key.to_owned();
        for system in &options.systems {
            cache_key.push('\0');
            cache_key.push_str(&uuid_string(system));
        }
        self.cache
            .try_get_with(cache_key, self.fetch(title_key, options))
            .await
            .map_err(|e| (*e).clone())
    }

    fn kind(&self) -> &'static str {
        "cpix"
    }
}

enum Bounded {
    TooLarge,
    Failed(reqwest::Error),
}

/// The answer's body, read a chunk at a time and refused past [`MAX_ANSWER_BYTES`] (a
/// stated length is checked first), so a hostile server cannot make us hold more.
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, Bounded> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(Bounded::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Bounded::Failed)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Bounded::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The KID vodpack asks the key server for, for `title_key`: a hash of it, so every
/// replica asks for the same one.
pub fn cpix_kid(title_key: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(b"vodpack cpix kid v1\0")
        .chain_update(title_key.as_bytes())
        .finalize();
    let mut kid = [0u8; 16];
    kid.copy_from_slice(&digest[..16]);
    // An RFC 4122 version-4 UUID, as key servers expect KIDs to look.
    kid[6] = (kid[6] & 0x0f) | 0x40;
    kid[8] = (kid[8] & 0x3f) | 0x80;
    kid
}

/// What vodpack asks of each DRM system, as the empty elements the key server fills:
/// its `pssh` (Widevine, PlayReady), PlayReady's header object, FairPlay's key URI (CPIX
/// only: SPEKE v2 deprecates `URIExtXKey`), and the HLS lines of both playlist kinds.
fn asked_fields(system: &[u8; 16], mode: CpixMode) -> String {
    let mut fields = String::new();
    let id = DrmId::of(system);
    if id != Some(DrmId::FairPlay) {
        fields.push_str("<cpix:PSSH/>");
    }
    if id == Some(DrmId::PlayReady) {
        fields.push_str("<cpix:SmoothStreamingProtectionHeaderData/>");
    }
    if id == Some(DrmId::FairPlay) && mode == CpixMode::Cpix {
        fields.push_str("<cpix:URIExtXKey/>");
    }
    fields.push_str(
        "<cpix:HLSSignalingData playlist=\"media\"/><cpix:HLSSignalingData playlist=\"master\"/>",
    );
    fields
}

/// The CPIX 2.3 request for `title_key`'s key `kid` and the signalling of `options`'
/// systems. SPEKE v2 (`CpixMode::Speke2`) adds what its profile requires: the key's
/// `commonEncryptionScheme`, and an encryption contract of one rule (`intendedTrackType`
/// `ALL` with an empty `VideoFilter` and `AudioFilter`: one key for every track).
pub fn request_document(title_key: &str, kid: &[u8; 16], options: &CpixOptions) -> String {
    let kid = uuid_string(kid);
    let speke = options.mode == CpixMode::Speke2;
    let scheme = if speke {
        format!(" commonEncryptionScheme=\"{}\"", options.scheme.name())
    } else {
        String::new()
    };
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\n\
         \x20 <cpix:ContentKeyList>\n    <cpix:ContentKey kid=\"{kid}\"{scheme}/>\n  </cpix:ContentKeyList>\n",
        xml_escape(title_key)
    );
    if !options.systems.is_empty() {
        out.push_str("  <cpix:DRMSystemList>\n");
        for system in &options.systems {
            out.push_str(&format!(
                "    <cpix:DRMSystem kid=\"{kid}\" systemId=\"{}\">{}</cpix:DRMSystem>\n",
                uuid_string(system),
                asked_fields(system, options.mode)
            ));
        }
        out.push_str("  </cpix:DRMSystemList>\n");
    }
    if speke {
        out.push_str(&format!(
            "  <cpix:ContentKeyUsageRuleList>\n    <cpix:ContentKeyUsageRule kid=\"{kid}\" intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>\n  </cpix:ContentKeyUsageRuleList>\n"
        ));
    }
    out.push_str("</cpix:CPIX>\n");
    out
}

fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `value` (element text) base64-decoded, whitespace inside it allowed (answers are often
/// wrapped).
fn base64_text(value: &str) -> Option<Vec<u8>> {
    let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD.decode(compact).ok()
}

/// One DRM system's field of a CPIX answer (`PSSH`, `URIExtXKey`, `HLSSignalingData` of
/// `playlist`, `SmoothStreamingProtectionHeaderData`), decoded and checked, into `system`.
/// Other elements are ignored.
fn read_field(
    system: &mut DrmSystem,
    element: &[u8],
    playlist: Option<&str>,
    value: &str,
) -> Result<(), String> {
    let decoded = || base64_text(value).ok_or_else(|| "not base64".to_owned());
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned());
    match element {
        b"PSSH" => {
            let pssh = decoded()?;
            check_pssh(&pssh, &system.system_id)?;
            system.pssh = Some(pssh);
        }
        b"URIExtXKey" => {
            let uri = text(decoded()?)?;
            let uri = uri.trim();
            check_uri(uri)?;
            system.hls_key_uri = Some(uri.to_owned());
        }
        b"HLSSignalingData" => {
            let lines = text(decoded()?)?;
            // CPIX: the playlist attribute defaults to "media".
            if playlist == Some("master") {
                system.hls_master = Some(check_hls_lines(&lines, "#EXT-X-SESSION-KEY:")?);
            } else {
                system.hls_media = Some(check_hls_lines(&lines, "#EXT-X-KEY:")?);
            }
        }
        b"SmoothStreamingProtectionHeaderData" => {
            let pro = decoded()?;
            check_pro(&pro)?;
            system.playready_pro = Some(pro);
        }
        _ => {}
    }
    Ok(())
}

/// The key `kid` and its DRM systems' signalling from a CPIX answer: per `DRMSystem` of
/// that KID, its `PSSH`, `URIExtXKey`, `HLSSignalingData` (both playlists) and
/// `SmoothStreamingProtectionHeaderData`, each decoded and checked (a key server is
/// hostile input: nothing it says may break a box or add a playlist line).
///
/// # Errors
/// [`KeyError::Unavailable`] when the answer is not CPIX, lacks the key, or holds a field
/// that is not what it should be.
pub fn parse_answer(xml: &[u8], kid: &[u8; 16]) -> Result<ContentKey, KeyError> {
    let bad = |why: &str| KeyError::Unavailable {
        reason: format!("key server answer: {why}"),
    };
    let text = std::str::from_utf8(xml).map_err(|_| bad("not UTF-8"))?;
    let mut reader = quick_xml::Reader::from_str(text);
    // Where we are: the kid of the ContentKey being read, the system of the DRMSystem
    // being read (for our KID), the element and its `playlist` attribute.
    let mut in_key: Option<[u8; 16]> = None;
    let mut in_system: Option<DrmSystem> = None;
    let mut element = Vec::new();
    let mut playlist: Option<String> = None;
    let mut key = None;
    let mut systems: Vec<DrmSystem> = Vec::new();
    let mut saw_cpix = false;
    loop {
        match reader.read_event().map_err(|_| bad("not XML"))? {
            Event::Start(e) | Event::Empty(e) => {
                let name = e.local_name().as_ref().to_vec();
                let attr = |wanted: &[u8]| {
                    e.attributes().flatten().find_map(|a| {
                        (a.key.local_name().as_ref() == wanted)
                            .then(|| {
                                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                    .ok()
                                    .map(|v| v.into_owned())
                            })
                            .flatten()
                    })
                };
                match name.as_slice() {
                    b"CPIX" => saw_cpix = true,
                    b"ContentKey" => in_key = attr(b"kid").as_deref().and_then(parse_uuid),
                    b"DRMSystem" => {
                        let k = attr(b"kid").as_deref().and_then(parse_uuid);
                        let s = attr(b"systemId").as_deref().and_then(parse_uuid);
                        in_system = s.filter(|_| k == Some(*kid)).map(DrmSystem::new);
                    }
                    _ => {}
                }
                playlist = attr(b"playlist");
                element = name;
            }
            Event::Text(t) => {
                let value = t.decode().map_err(|_| bad("bad text"))?;
                let value = value.trim();
                if value.is_empty() {
                    continue;
                }
                match (element.as_slice(), in_system.as_mut()) {
                    (b"PlainValue", _) if in_key == Some(*kid) => {
                        let bytes = base64_text(value).ok_or_else(|| bad("key not base64"))?;
                        key = Some(
                            <[u8; 16]>::try_from(bytes.as_slice())
                                .map_err(|_| bad("key not 16 bytes"))?,
                        );
                    }
                    (field, Some(system)) => {
                        read_field(system, field, playlist.as_deref(), value).map_err(|why| {
                            bad(&format!(
                                "{} of {}: {why}",
                                String::from_utf8_lossy(field),
                                uuid_string(&system.system_id)
                            ))
                        })?;
                    }
                    _ => {}
                }
            }
            Event::End(e) => {
                match e.local_name().as_ref() {
                    b"ContentKey" => in_key = None,
                    b"DRMSystem" => {
                        if let Some(system) = in_system.take() {
                            // One entry per system: a repeated DRMSystem adds its fields.
                            match systems.iter_mut().find(|s| s.system_id == system.system_id) {
                                Some(known) => merge(known, system),
                                None => systems.push(system),
                            }
                        }
                    }
                    _ => {}
                }
                element.clear();
                playlist = None;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_cpix {
        return Err(bad("no CPIX element"));
    }
    let key = key.ok_or_else(|| bad("no key for the requested KID"))?;
    Ok(ContentKey {
        kid: *kid,
        key,
        systems,
    })
}

/// `more`'s fields into `known`, where `known` has none.
fn merge(known: &mut DrmSystem, more: DrmSystem) {
    known.pssh = known.pssh.take().or(more.pssh);
    known.hls_key_uri = known.hls_key_uri.take().or(more.hls_key_uri);
    known.hls_media = known.hls_media.take().or(more.hls_media);
    known.hls_master = known.hls_master.take().or(more.hls_master);
    known.playready_pro = known.playready_pro.take().or(more.playready_pro);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_give_the_key_and_each_systems_pssh() {
        let kid = cpix_kid("films/a.mp4");
        let pssh = crate::crypto::raw_drm::pssh_v0(&WIDEVINE, b"data");
        let xml = format!(
            "<?xml version=\"1.0\"?><CPIX xmlns=\"urn:dashif:org:cpix\" xmlns:p=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"films/a.mp4\">\
             <ContentKeyList><ContentKey kid=\"{}\"><Data><p:Secret><p:PlainValue>{}</p:PlainValue></p:Secret></Data></ContentKey></ContentKeyList>\
             <DRMSystemList><DRMSystem kid=\"{}\" systemId=\"{}\"><PSSH>{}</PSSH></DRMSystem></DRMSystemList></CPIX>",
            uuid_string(&kid),
            STANDARD.encode([7u8; 16]),
            uuid_string(&kid),
            uuid_string(&WIDEVINE),
            STANDARD.encode(&pssh)
        );
        let key = parse_answer(xml.as_bytes(), &kid).unwrap();
        assert_eq!(key.key, [7; 16]);
        assert_eq!(
            key.systems,
            vec![DrmSystem {
                pssh: Some(pssh),
                ..DrmSystem::new(WIDEVINE)
            }]
        );
    }

    #[test]
    fn answers_without_the_key_or_not_cpix_are_unavailable() {
        let kid = cpix_kid("a.mp4");
        for xml in [
            "<html/>",
            "not xml <<",
            "<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\"/>",
        ] {
            assert!(matches!(
                parse_answer(xml.as_bytes(), &kid),
                Err(KeyError::Unavailable { .. })
            ));
        }
    }

    #[test]
    fn requests_name_the_title_kid_and_systems() {
        let kid = cpix_kid("a&b.mp4");
        let options = CpixOptions {
            url: "http://k/".into(),
            mode: CpixMode::Cpix,
            systems: vec![PLAYREADY],
            required: true,
            scheme: Scheme::Cbcs,
            timeout: Duration::from_secs(1),
            retries: 0,
            ttl: Duration::from_secs(1),
        };
        let doc = request_document("a&b.mp4", &kid, &options);
        assert!(doc.contains("contentId=\"a&amp;b.mp4\""));
        assert!(doc.contains(&format!("<cpix:ContentKey kid=\"{}\"/>", uuid_string(&kid))));
        assert!(doc.contains("systemId=\"9a04f079-9840-4286-ab92-e65be0885f95\""));
        assert_eq!(kid[6] >> 4, 4);
    }

    fn answer_with(systems: &str) -> (String, [u8; 16]) {
        let kid = cpix_kid("films/a.mp4");
        let xml = format!(
            "<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" version=\"2.3\">\
             <cpix:ContentKeyList><cpix:ContentKey kid=\"{k}\"><cpix:Data><pskc:Secret><pskc:PlainValue>{}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey></cpix:ContentKeyList>\
             <cpix:DRMSystemList>{}</cpix:DRMSystemList></cpix:CPIX>",
            STANDARD.encode([7u8; 16]),
            systems.replace("{k}", &uuid_string(&kid)),
            k = uuid_string(&kid),
        );
        (xml, kid)
    }

    #[test]
    fn answers_give_each_systems_uri_hls_lines_and_playready_header() {
        let pro = crate::crypto::raw_drm::playready_object("<WRMHEADER/>");
        let media = "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://k\",KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\"";
        let master = media.replace("#EXT-X-KEY:", "#EXT-X-SESSION-KEY:");
        let (xml, kid) = answer_with(&format!(
            "<cpix:DRMSystem kid=\"{{k}}\" systemId=\"94ce86fb-07ff-4f43-adb8-93d2fa968ca2\">\
             <cpix:URIExtXKey>{}</cpix:URIExtXKey>\
             <cpix:HLSSignalingData playlist=\"media\">{}</cpix:HLSSignalingData>\
             <cpix:HLSSignalingData playlist=\"master\">{}</cpix:HLSSignalingData></cpix:DRMSystem>\
             <cpix:DRMSystem kid=\"{{k}}\" systemId=\"9a04f079-9840-4286-ab92-e65be0885f95\">\
             <cpix:SmoothStreamingProtectionHeaderData>{}</cpix:SmoothStreamingProtectionHeaderData></cpix:DRMSystem>",
            STANDARD.encode("skd://k"),
            STANDARD.encode(media),
            STANDARD.encode(&master),
            STANDARD.encode(&pro),
        ));
        let key = parse_answer(xml.as_bytes(), &kid).unwrap();
        assert_eq!(key.systems.len(), 2);
        let fairplay = &key.systems[0];
        assert_eq!(fairplay.hls_key_uri.as_deref(), Some("skd://k"));
        assert_eq!(fairplay.hls_media.as_deref(), Some(media));
        assert_eq!(fairplay.hls_master.as_deref(), Some(master.as_str()));
        assert!(fairplay.usable() && key.systems[1].usable());
        assert_eq!(key.systems[1].playready_pro.as_deref(), Some(&pro[..]));
    }

    /// Given answers whose fields would break a box or a playlist, then the answer is
    /// refused (503), never written.
    #[test]
    fn hostile_fields_are_refused() {
        let field = |element: &str, value: &[u8], system: &str| {
            format!(
                "<cpix:DRMSystem kid=\"{{k}}\" systemId=\"{system}\"><cpix:{element} playlist=\"media\">{}</cpix:{element}></cpix:DRMSystem>",
                STANDARD.encode(value)
            )
        };
        const FP: &str = "94ce86fb-07ff-4f43-adb8-93d2fa968ca2";
        const WV: &str = "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed";
        let mut short = crate::crypto::raw_drm::pssh_v0(&WIDEVINE, b"data");
        short.pop();
        for systems in [
            field("HLSSignalingData", b"#EXT-X-KEY:A\nseg.m4s", FP),
            field("HLSSignalingData", b"#EXTINF:1,", FP),
            field("URIExtXKey", b"skd://a\"b", FP),
            field("PSSH", &short, WV),
            field("PSSH", &crate::crypto::raw_drm::pssh_v0(&PLAYREADY, b"x"), WV),
            field("SmoothStreamingProtectionHeaderData", b"\x09\0\0\0", WV),
            format!("<cpix:DRMSystem kid=\"{{k}}\" systemId=\"{WV}\"><cpix:PSSH>***</cpix:PSSH></cpix:DRMSystem>"),
        ] {
            let (xml, kid) = answer_with(&systems);
            assert!(
                matches!(parse_answer(xml.as_bytes(), &kid), Err(KeyError::Unavailable { .. })),
                "{systems}"
            );
        }
    }

    #[test]
    fn speke2_requests_carry_the_scheme_and_an_encryption_contract() {
        let kid = cpix_kid("a.mp4");
        let options = CpixOptions {
            url: "http://k/".into(),
            mode: CpixMode::Speke2,
            systems: vec![crate::crypto::drm::FAIRPLAY, WIDEVINE, PLAYREADY],
            required: true,
            scheme: Scheme::Cbcs,
            timeout: Duration::from_secs(1),
            retries: 0,
            ttl: Duration::from_secs(1),
        };
        let doc = request_document("a.mp4", &kid, &options);
        let k = uuid_string(&kid);
        assert!(doc.contains(&format!(
            "<cpix:ContentKey kid=\"{k}\" commonEncryptionScheme=\"cbcs\"/>"
        )));
        assert!(doc.contains(&format!(
            "<cpix:ContentKeyUsageRule kid=\"{k}\" intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"
        )));
        assert!(doc.contains("systemId=\"94ce86fb-07ff-4f43-adb8-93d2fa968ca2\"><cpix:HLSSignalingData playlist=\"media\"/>"));
        assert!(doc.contains("<cpix:PSSH/><cpix:SmoothStreamingProtectionHeaderData/>"));
        assert!(!doc.contains("URIExtXKey"), "deprecated in SPEKE v2");
    }
}
