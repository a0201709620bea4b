//! What HLS playlists and the DASH MPD say about protection: the HLS key methods and their
//! attributes ([`HlsKey`], [`key_attributes`]), the DRM systems' key lines of SAMPLE-AES
//! CMAF playlists ([`hls_drm_lines`]: FairPlay, Widevine, PlayReady) and the DASH
//! `ContentProtection` elements ([`dash_content_protection`]), which the writers put in
//! place as they write (`package::ManifestOptions`).

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::crypto::drm::xml_escape;
use crate::crypto::drm::{DrmId, DrmSystem};
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
pub(crate) const DASH_PROTECTION_NAMESPACES: [(&str, &str); 4] = [
    ("xmlns:cenc", "urn:mpeg:cenc:2013"),
    ("xmlns:dashif", "https://dashif.org/CPS"),
    ("xmlns:clearkey", "http://dashif.org/guidelines/clearKey"),
    ("xmlns:mspr", "urn:microsoft:playready"),
];

/// The `KEYFORMAT` of a DRM system's `EXT-X-KEY` (what Shaka Packager and Unified Origin
/// write; RFC 8216bis 4.4.4.4 leaves the names to the systems).
fn keyformat(id: DrmId) -> &'static str {
    match id {
        DrmId::FairPlay => "com.apple.streamingkeydelivery",
        DrmId::Widevine => "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",
        DrmId::PlayReady => "com.microsoft.playready",
        DrmId::ClearKey => "org.w3.clearkey",
    }
}

/// The `EXT-X-KEY` attributes of one DRM system of a SAMPLE-AES (`cbcs`) CMAF output, built
/// from its data: FairPlay's `skd://` URI, Widevine's `pssh` and PlayReady's header object
/// as `data:` URIs (PlayReady's text is UTF-16), a key server's `URIExtXKey` in place of
/// the built URI when it gave one. `None` when the system has nothing to say in HLS.
fn drm_key_attributes(system: &DrmSystem, key: &ContentKey) -> Option<String> {
    let id = system.id()?;
    let (uri, keyid) = match (id, &system.hls_key_uri) {
        (DrmId::ClearKey, _) => return None,
        (_, Some(uri)) => (uri.clone(), id == DrmId::Widevine),
        (DrmId::FairPlay, None) => return None,
        (DrmId::Widevine, None) => (
            format!(
                "data:text/plain;base64,{}",
                STANDARD.encode(system.pssh.as_deref()?)
            ),
            true,
        ),
        (DrmId::PlayReady, None) => (
            format!(
                "data:text/plain;charset=UTF-16;base64,{}",
                STANDARD.encode(system.pro()?)
            ),
            false,
        ),
    };
    let keyid = if keyid {
        format!(",KEYID=0x{}", hex(&key.kid))
    } else {
        String::new()
    };
    Some(format!(
        "METHOD=SAMPLE-AES,URI=\"{uri}\"{keyid},KEYFORMAT=\"{}\",KEYFORMATVERSIONS=\"1\"",
        keyformat(id)
    ))
}

/// The DRM systems' key lines of a SAMPLE-AES CMAF playlist, whole, in the key's order:
/// `#EXT-X-SESSION-KEY` lines for a multivariant playlist (`master`), `#EXT-X-KEY` lines
/// for a media playlist. A key server's `HLSSignalingData` for the playlist's kind is
/// written exactly as supplied (checked to be only such lines when it was read); else
/// the line is built from the system's data ([`drm_key_attributes`]).
pub(crate) fn hls_drm_lines(key: &ContentKey, master: bool) -> Vec<String> {
    let tag = if master {
        "#EXT-X-SESSION-KEY:"
    } else {
        "#EXT-X-KEY:"
    };
    let mut lines = Vec::new();
    for system in &key.systems {
        let supplied = if master {
            &system.hls_master
        } else {
            &system.hls_media
        };
        match supplied {
            Some(text) => lines.extend(text.lines().map(str::to_owned)),
            None => lines.extend(drm_key_attributes(system, key).map(|a| format!("{tag}{a}"))),
        }
    }
    lines
}

/// The `ContentProtection` elements of an audio or video AdaptationSet (ISO/IEC 23009-1
/// 5.8.4.1, DASH-IF IOP 7), a line each, indented as its children: `mp4protection` with
/// `cenc:default_KID` first, W3C ClearKey with the licence URL (`dashif:Laurl` and
/// `clearkey:Laurl`) when `clearkey`, and each DRM system of the key with its `cenc:pssh`
/// (PlayReady also `mspr:pro`, Microsoft's "PlayReady for MPEG-DASH" 1.3). FairPlay has
/// an element only when the key server gave it a `pssh`.
/// The common system's `pssh` is in the init segment only: as an element of its own Shaka
/// Player maps it to ClearKey and picks it, without a licence URL; as `cenc:pssh` of the
/// ClearKey element dash.js (5.2) fails to build its key request from it.
pub(crate) fn dash_content_protection(
    scheme: Scheme,
    key: &ContentKey,
    licence_url: &str,
    clearkey: bool,
) -> String {
    let kid = uuid_string(&key.kid);
    let mut elements = format!(
        "      <ContentProtection schemeIdUri=\"urn:mpeg:dash:mp4protection:2011\" value=\"{}\" cenc:default_KID=\"{kid}\"/>\n",
        scheme.name(),
    );
    if clearkey {
        let licence = xml_escape(licence_url);
        let _ = write!(
            elements,
            "      <ContentProtection schemeIdUri=\"urn:uuid:{CLEARKEY_SYSTEM_ID}\" value=\"ClearKey1.0\">\n\
             \x20       <dashif:Laurl>{licence}</dashif:Laurl>\n\
             \x20       <clearkey:Laurl Lic_type=\"EME-1.0\">{licence}</clearkey:Laurl>\n\
             \x20     </ContentProtection>\n"
        );
    }
    for system in &key.systems {
        let id = system.id();
        let pro = match id {
            Some(DrmId::PlayReady) => system.pro(),
            _ => None,
        };
        if system.pssh.is_none() && pro.is_none() {
            continue;
        }
        let value = match id {
            Some(DrmId::Widevine) => " value=\"Widevine\"",
            Some(DrmId::PlayReady) => " value=\"MSPR 2.0\"",
            Some(DrmId::FairPlay) => " value=\"FairPlay\"",
            _ => "",
        };
        let _ = writeln!(
            elements,
            "      <ContentProtection schemeIdUri=\"urn:uuid:{}\"{value}>",
            uuid_string(&system.system_id)
        );
        if let Some(pssh) = &system.pssh {
            let _ = writeln!(
                elements,
                "        <cenc:pssh>{}</cenc:pssh>",
                STANDARD.encode(pssh)
            );
        }
        if let Some(pro) = pro {
            let _ = writeln!(
                elements,
                "        <mspr:pro>{}</mspr:pro>",
                STANDARD.encode(pro)
            );
        }
        elements.push_str("      </ContentProtection>\n");
    }
    elements
}
