//! What HLS playlists and the DASH MPD say about protection: the HLS key methods and their
//! attributes ([`HlsKey`], [`key_attributes`]) and the DASH `ContentProtection` elements
//! ([`dash_content_protection`]), which the writers put in place as they write
//! (`package::ManifestOptions`).

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::crypto::keys::{hex, uuid_string, ContentKey};
use crate::crypto::Scheme;

/// W3C ClearKey's DASH system id (DASH-IF IOP 7.6.2.4).
pub const CLEARKEY_SYSTEM_ID: &str = "e2719d58-a985-b3c9-781a-b030af78d30e";

/// How an HLS output's key is signalled and delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HlsKey {
    /// `METHOD=AES-128` with the raw key at the URI, an IV per segment (CMAF and TS).
    Aes128,
    /// `METHOD=SAMPLE-AES` with the raw key at the URI (`KEYFORMAT` "identity", the
    /// default) and one IV for the playlist: Apple's sample encryption of MPEG-TS, which
    /// restarts the chain from that IV in every NAL unit and audio frame anyway. One IV
    /// also keeps readers right that decrypt a frame after moving on to the next segment
    /// (ffmpeg with a video PES of unstated length).
    SampleAesTs,
    /// `METHOD=SAMPLE-AES` `cbcs` fMP4 with W3C ClearKey: `KEYFORMAT="org.w3.clearkey"`,
    /// the KID, the licence URL; one key for the whole playlist.
    SampleAesClearKey,
}

impl HlsKey {
    /// The key signalling of HLS scheme `scheme`, for MPEG-TS (`ts`) or CMAF.
    pub fn of(scheme: Scheme, ts: bool) -> Self {
        match (scheme, ts) {
            (Scheme::Aes128, _) => HlsKey::Aes128,
            (_, true) => HlsKey::SampleAesTs,
            (_, false) => HlsKey::SampleAesClearKey,
        }
    }

    /// Whether each segment gets its own `EXT-X-KEY` with its IV.
    pub(crate) fn per_segment(self) -> bool {
        self == HlsKey::Aes128
    }
}

/// The `EXT-X-KEY`/`EXT-X-SESSION-KEY` attributes of `method`, the key at `key_uri` (as
/// written, its query included), without IV.
pub(crate) fn key_attributes(method: HlsKey, key_uri: &str, key: &ContentKey) -> String {
    match method {
        HlsKey::Aes128 => format!("METHOD=AES-128,URI=\"{key_uri}\""),
        HlsKey::SampleAesTs => format!("METHOD=SAMPLE-AES,URI=\"{key_uri}\""),
        HlsKey::SampleAesClearKey => format!(
            "METHOD=SAMPLE-AES,URI=\"{key_uri}\",KEYFORMAT=\"org.w3.clearkey\",KEYFORMATVERSIONS=\"1\",KEYID=0x{}",
            hex(&key.kid)
        ),
    }
}

/// The namespaces of the `ContentProtection` elements, as attributes of the MPD element.
pub(crate) const DASH_PROTECTION_NAMESPACES: [(&str, &str); 3] = [
    ("xmlns:cenc", "urn:mpeg:cenc:2013"),
    ("xmlns:dashif", "https://dashif.org/CPS"),
    ("xmlns:clearkey", "http://dashif.org/guidelines/clearKey"),
];

/// The `ContentProtection` elements of an audio or video AdaptationSet (ISO/IEC 23009-1
/// 5.8.4.1, DASH-IF IOP 7), a line each, indented as its children: `mp4protection` with
/// `cenc:default_KID`, W3C ClearKey with the licence URL (`dashif:Laurl` and
/// `clearkey:Laurl`), and each DRM system the key provider supplies with its `cenc:pssh`.
/// The common system's `pssh` is in the init segment only: as an element of its own Shaka
/// Player maps it to ClearKey and picks it, without a licence URL; as `cenc:pssh` of the
/// ClearKey element dash.js (5.2) fails to build its key request from it.
pub(crate) fn dash_content_protection(
    scheme: Scheme,
    key: &ContentKey,
    licence_url: &str,
) -> String {
    let kid = uuid_string(&key.kid);
    let licence = xml_escape(licence_url);
    let mut elements = format!(
        "      <ContentProtection schemeIdUri=\"urn:mpeg:dash:mp4protection:2011\" value=\"{}\" cenc:default_KID=\"{kid}\"/>\n\
         \x20     <ContentProtection schemeIdUri=\"urn:uuid:{CLEARKEY_SYSTEM_ID}\" value=\"ClearKey1.0\">\n\
         \x20       <dashif:Laurl>{licence}</dashif:Laurl>\n\
         \x20       <clearkey:Laurl Lic_type=\"EME-1.0\">{licence}</clearkey:Laurl>\n\
         \x20     </ContentProtection>\n",
        scheme.name(),
    );
    for system in &key.systems {
        let Some(pssh) = &system.pssh else { continue };
        let _ = write!(
            elements,
            "      <ContentProtection schemeIdUri=\"urn:uuid:{}\">\n        <cenc:pssh>{}</cenc:pssh>\n      </ContentProtection>\n",
            uuid_string(&system.system_id),
            STANDARD.encode(pssh)
        );
    }
    elements
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
