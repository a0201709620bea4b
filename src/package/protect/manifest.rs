//! What HLS playlists and the DASH MPD say about protection: the HLS key methods and their
//! attributes ([`HlsKey`], [`key_attributes`]) and the DASH `ContentProtection` elements
//! ([`dash_content_protection`]), which the writers put in place as they write
//! (`package::ManifestOptions`).
//!
//! The functions that decorate rendered text after the fact ([`swap_version_folder`],
//! [`hls_with_query`], [`dash_with_query`], [`hls_multivariant`], [`hls_without_iframes`],
//! [`dash_without_trick_play`], [`hls_media_playlist`], [`dash_mpd`]) are replaced by the
//! writers' `ManifestOptions`, and stay only until the server renders with them.

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::crypto::keys::{hex, uuid_string, ContentKey};
use crate::crypto::Scheme;
use crate::package::{version_folder, Resource};

/// W3C ClearKey's DASH system id (DASH-IF IOP 7.6.2.4).
pub const CLEARKEY_SYSTEM_ID: &str = "e2719d58-a985-b3c9-781a-b030af78d30e";

/// Point every versioned URI at `to`'s folder instead of `from`'s.
///
/// Replaced by `ManifestOptions::version`.
pub fn swap_version_folder(text: &str, from: &str, to: &str) -> String {
    text.replace(&version_folder(from), &version_folder(to))
}

/// Append `?query` (or `&query`) to every URI of an HLS playlist: URI lines and `URI="..."`
/// attributes.
///
/// Replaced by `ManifestOptions::query`.
pub fn hls_with_query(text: &str, query: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
            continue;
        }
        if !line.starts_with('#') {
            out.push_str(&with_query(line, query));
        } else if let Some(start) = line.find("URI=\"") {
            let value_at = start + 5;
            let end = line[value_at..]
                .find('"')
                .map_or(line.len(), |e| value_at + e);
            out.push_str(&line[..value_at]);
            out.push_str(&with_query(&line[value_at..end], query));
            out.push_str(&line[end..]);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Append `query` to the `initialization`, `media` and `BaseURL` references of an MPD.
///
/// Replaced by `ManifestOptions::query`.
pub fn dash_with_query(text: &str, query: &str) -> String {
    let escaped = query.replace('&', "&amp;");
    let mut out = String::with_capacity(text.len() + 256);
    let mut rest = text;
    loop {
        let next = ["initialization=\"", "media=\"", "<BaseURL>"]
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at + m.len(), *m)))
            .min();
        let Some((value_at, marker)) = next else {
            out.push_str(rest);
            return out;
        };
        let close = if marker == "<BaseURL>" {
            "</BaseURL>"
        } else {
            "\""
        };
        let Some(end) = rest[value_at..].find(close).map(|e| value_at + e) else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..value_at]);
        let value = &rest[value_at..end];
        let sep = if value.contains('?') { "&amp;" } else { "?" };
        let _ = write!(out, "{value}{sep}{escaped}");
        rest = &rest[end..];
    }
}

fn with_query(uri: &str, query: &str) -> String {
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{query}")
}

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

/// Add `EXT-X-SESSION-KEY` (RFC 8216 4.3.4.5) to a multivariant playlist, after its
/// header tags, so players can set up keys before loading media playlists.
///
/// Replaced by `ManifestOptions::protection` in the multivariant writers.
pub fn hls_multivariant(text: &str, method: HlsKey, key_uri: &str, key: &ContentKey) -> String {
    let tag = format!(
        "#EXT-X-SESSION-KEY:{}\n",
        key_attributes(method, key_uri, key)
    );
    insert_after_header(text, &tag)
}

fn insert_after_header(text: &str, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    let mut done = false;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let header = line.starts_with("#EXTM3U")
            || line.starts_with("#EXT-X-VERSION")
            || line.starts_with("#EXT-X-INDEPENDENT-SEGMENTS");
        let next_is_header = lines.peek().is_some_and(|n| {
            n.starts_with("#EXT-X-VERSION") || n.starts_with("#EXT-X-INDEPENDENT-SEGMENTS")
        });
        if !done && header && !next_is_header {
            out.push_str(insert);
            done = true;
        }
    }
    out
}

/// A multivariant playlist without its I-frame playlists (`EXT-X-I-FRAME-STREAM-INF`),
/// for an encrypted output: trick play's key frames are served clear only.
///
/// Replaced by `ManifestOptions::trick_play`.
pub fn hls_without_iframes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if !line.starts_with("#EXT-X-I-FRAME-STREAM-INF") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// An MPD without its trick-play AdaptationSets (those with the
/// `http://dashif.org/guidelines/trickmode` property), for an encrypted output.
///
/// Replaced by `ManifestOptions::trick_play`.
pub fn dash_without_trick_play(text: &str) -> String {
    const END: &str = "</AdaptationSet>\n";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("    <AdaptationSet") {
        let Some(end) = rest[at..].find(END).map(|e| at + e + END.len()) else {
            break;
        };
        out.push_str(&rest[..at]);
        let set = &rest[at..end];
        if !set.contains("http://dashif.org/guidelines/trickmode") {
            out.push_str(set);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Add the keys to a media playlist. AES-128: an `EXT-X-KEY` with the segment's own IV
/// before each segment (`iv(number)`), after `EXT-X-MAP`, so the init segment stays clear
/// (4.3.2.5 needs no IV for it then). SAMPLE-AES: one `EXT-X-KEY` before the first
/// segment (after `EXT-X-MAP`), for TS with the IV of the first (`iv(number)`, which is
/// the same for every segment then).
///
/// Replaced by `ManifestOptions::protection` in the media playlist writers.
pub fn hls_media_playlist(
    text: &str,
    method: HlsKey,
    key_uri: &str,
    key: &ContentKey,
    iv: impl Fn(u64) -> [u8; 16],
) -> String {
    let attrs = key_attributes(method, key_uri, key);
    let mut out = String::with_capacity(text.len() * 2);
    let lines: Vec<&str> = text.lines().collect();
    let mut keyed = false;
    for (k, line) in lines.iter().enumerate() {
        if line.starts_with("#EXTINF") && (method.per_segment() || !keyed) {
            let number = lines[k + 1..]
                .iter()
                .find(|l| !l.starts_with('#'))
                .and_then(
                    |uri| match Resource::parse(uri.split('?').next().unwrap_or(uri)) {
                        Some(
                            Resource::Segment { number, .. } | Resource::TsSegment { number, .. },
                        ) => Some(number),
                        _ => None,
                    },
                );
            match (method, number) {
                (HlsKey::SampleAesClearKey, _) => {
                    let _ = writeln!(out, "#EXT-X-KEY:{attrs}");
                }
                (_, Some(number)) => {
                    let _ = writeln!(out, "#EXT-X-KEY:{attrs},IV=0x{}", hex(&iv(number)));
                }
                (_, None) => {}
            }
            keyed = true;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
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
        let _ = write!(
            elements,
            "      <ContentProtection schemeIdUri=\"urn:uuid:{}\">\n        <cenc:pssh>{}</cenc:pssh>\n      </ContentProtection>\n",
            uuid_string(&system.system_id),
            STANDARD.encode(&system.pssh)
        );
    }
    elements
}

/// Add [`dash_content_protection`] to every audio and video AdaptationSet of an MPD.
///
/// Replaced by `ManifestOptions::protection` in the MPD writer.
pub fn dash_mpd(text: &str, scheme: Scheme, key: &ContentKey, licence_url: &str) -> String {
    let elements = dash_content_protection(scheme, key, licence_url);
    let mut out = String::with_capacity(text.len() + 2048);
    let mut rest = text;
    // Namespaces on the MPD element.
    if let Some(at) = rest.find("<MPD ") {
        out.push_str(&rest[..at + 5]);
        for (name, namespace) in DASH_PROTECTION_NAMESPACES {
            let _ = write!(out, "{name}=\"{namespace}\" ");
        }
        rest = &rest[at + 5..];
    }
    while let Some(at) = rest.find("<AdaptationSet") {
        let Some(close) = rest[at..].find('>').map(|c| at + c + 1) else {
            break;
        };
        let tag = &rest[at..close];
        out.push_str(&rest[..close]);
        let media = tag.contains("contentType=\"video\"") || tag.contains("contentType=\"audio\"");
        if media {
            out.push('\n');
            out.push_str(elements.trim_end_matches('\n'));
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
