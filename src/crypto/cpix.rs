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

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use moka::future::Cache;
use quick_xml::events::Event;
use sha2::{Digest, Sha256};

use super::keys::{uuid_string, ContentKey, DrmSystem, KeyError, KeyProvider};
use super::policy::Scheme;

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
        })
    }

    async fn fetch(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        let kid = cpix_kid(title_key);
        let body = request_document(title_key, &kid, &self.options.systems);
        let mut delay = Duration::from_millis(100);
        let mut last = String::new();
        for attempt in 0..=self.options.retries {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            let sent = self
                .client
                .post(&self.options.url)
                .header("content-type", "application/xml")
                .body(body.clone())
                .send()
                .await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    last = format!("request failed: {e}");
                    continue;
                }
            };
            let status = response.status();
            if status.is_server_error() {
                last = format!("key server answered {status}");
                continue;
            }
            if !status.is_success() {
                return Err(KeyError::Unavailable {
                    reason: format!("key server answered {status}"),
                });
            }
            let bytes = match response.bytes().await {
                Ok(b) => b,
                Err(e) => {
                    last = format!("reading the answer: {e}");
                    continue;
                }
            };
            if bytes.len() > MAX_ANSWER_BYTES {
                return Err(KeyError::Unavailable {
                    reason: "key server answer too large".into(),
                });
            }
            return parse_answer(&bytes, &kid).map(Arc::new);
        }
        Err(KeyError::Unavailable { reason: last })
    }
}

#[async_trait::async_trait]
impl KeyProvider for CpixKeyProvider {
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        self.cache
            .try_get_with(title_key.to_owned(), self.fetch(title_key))
            .await
            .map_err(|e| (*e).clone())
    }

    fn kind(&self) -> &'static str {
        "cpix"
    }
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

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The CPIX 2.3 request for `title_key`'s key `kid` and `systems`' signalling.
pub fn request_document(title_key: &str, kid: &[u8; 16], systems: &[[u8; 16]]) -> String {
    let kid = uuid_string(kid);
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\n\
         \x20 <cpix:ContentKeyList>\n    <cpix:ContentKey kid=\"{kid}\"/>\n  </cpix:ContentKeyList>\n",
        xml_escape(title_key)
    );
    if !systems.is_empty() {
        out.push_str("  <cpix:DRMSystemList>\n");
        for system in systems {
            out.push_str(&format!(
                "    <cpix:DRMSystem kid=\"{kid}\" systemId=\"{}\"/>\n",
                uuid_string(system)
            ));
        }
        out.push_str("  </cpix:DRMSystemList>\n");
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

/// The key `kid` and its DRM systems' `pssh` boxes from a CPIX answer.
///
/// # Errors
/// [`KeyError::Unavailable`] when the answer is not CPIX or lacks the key.
pub fn parse_answer(xml: &[u8], kid: &[u8; 16]) -> Result<ContentKey, KeyError> {
    let bad = |why: &str| KeyError::Unavailable {
        reason: format!("key server answer: {why}"),
    };
    let text = std::str::from_utf8(xml).map_err(|_| bad("not UTF-8"))?;
    let mut reader = quick_xml::Reader::from_str(text);
    // Where we are: the kid of the ContentKey or DRMSystem being read, and its system.
    let mut in_key: Option<[u8; 16]> = None;
    let mut in_system: Option<([u8; 16], [u8; 16])> = None;
    let mut element = Vec::new();
    let mut key = None;
    let mut systems = Vec::new();
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
                        in_system = k.zip(s);
                    }
                    _ => {}
                }
                element = name;
            }
            Event::Text(t) => {
                let value = t.decode().map_err(|_| bad("bad text"))?;
                let value = value.trim();
                match element.as_slice() {
                    b"PlainValue" if in_key == Some(*kid) => {
                        let bytes = STANDARD.decode(value).map_err(|_| bad("key not base64"))?;
                        key = Some(
                            <[u8; 16]>::try_from(bytes.as_slice())
                                .map_err(|_| bad("key not 16 bytes"))?,
                        );
                    }
                    b"PSSH" => {
                        if let Some((system_kid, system_id)) = in_system.filter(|(k, _)| k == kid) {
                            let pssh =
                                STANDARD.decode(value).map_err(|_| bad("pssh not base64"))?;
                            if pssh.get(4..8) != Some(b"pssh") {
                                return Err(bad("PSSH is not a pssh box"));
                            }
                            let _ = system_kid;
                            systems.push(DrmSystem {
                                pssh: Some(pssh),
                                ..DrmSystem::new(system_id)
                            });
                        }
                    }
                    _ => {}
                }
            }
            Event::End(e) => {
                match e.local_name().as_ref() {
                    b"ContentKey" => in_key = None,
                    b"DRMSystem" => in_system = None,
                    _ => {}
                }
                element.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_give_the_key_and_each_systems_pssh() {
        let kid = cpix_kid("films/a.mp4");
        let pssh = [&[0, 0, 0, 12][..], b"pssh", &[0, 0, 0, 0]].concat();
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
        let doc = request_document("a&b.mp4", &kid, &[PLAYREADY]);
        assert!(doc.contains("contentId=\"a&amp;b.mp4\""));
        assert!(doc.contains(&format!("<cpix:ContentKey kid=\"{}\"/>", uuid_string(&kid))));
        assert!(doc.contains("systemId=\"9a04f079-9840-4286-ab92-e65be0885f95\""));
        assert_eq!(kid[6] >> 4, 4);
    }
}
