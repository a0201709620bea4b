//! The text patches the server applied to clear manifests before the writers took
//! `ManifestOptions`, copied verbatim (from `protect::manifest` and the server's TS
//! SAMPLE-AES trimming) so the before/after oracle outlives their removal.

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::crypto::keys::{hex, uuid_string, ContentKey};
use crate::crypto::Scheme;
use crate::package::{version_folder, Resource};

const CLEARKEY_SYSTEM_ID: &str = "e2719d58-a985-b3c9-781a-b030af78d30e";

/// Point every versioned URI at `to`'s folder instead of `from`'s.
pub fn swap_version_folder(text: &str, from: &str, to: &str) -> String {
    text.replace(&version_folder(from), &version_folder(to))
}

/// Append `?query` (or `&query`) to every URI of an HLS playlist: URI lines and `URI="..."`
/// attributes.
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
    fn per_segment(self) -> bool {
        self == HlsKey::Aes128
    }
}

/// The `EXT-X-KEY`/`EXT-X-SESSION-KEY` attributes, without IV.
fn key_attributes(method: HlsKey, key_uri: &str, key: &ContentKey) -> String {
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

/// Add `ContentProtection` to every audio and video AdaptationSet of an MPD (ISO/IEC
/// 23009-1 5.8.4.1, DASH-IF IOP 7): `mp4protection` with `cenc:default_KID`, W3C ClearKey
/// with the licence URL (`dashif:Laurl` and `clearkey:Laurl`), and each DRM system the key
/// provider supplies with its `cenc:pssh`. The common system's `pssh` is in the init
/// segment only: as an element of its own Shaka Player maps it to ClearKey and picks it,
/// without a licence URL; as `cenc:pssh` of the ClearKey element dash.js (5.2) fails to
/// build its key request from it.
pub fn dash_mpd(text: &str, scheme: Scheme, key: &ContentKey, licence_url: &str) -> String {
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
    let mut out = String::with_capacity(text.len() + 2048);
    let mut rest = text;
    // Namespaces on the MPD element.
    if let Some(at) = rest.find("<MPD ") {
        out.push_str(&rest[..at + 5]);
        out.push_str(
            "xmlns:cenc=\"urn:mpeg:cenc:2013\" xmlns:dashif=\"https://dashif.org/CPS\" xmlns:clearkey=\"http://dashif.org/guidelines/clearKey\" ",
        );
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

/// Multivariant playlist `text` without its audio groups whose renditions all lack a URI
/// (the audio muxed in the variants): their `EXT-X-MEDIA` tags and the variants' `AUDIO`
/// attributes naming them go.
pub fn without_muxed_only_audio(text: &str) -> String {
    let group_of = |line: &str| {
        let at = line.find("GROUP-ID=\"")? + "GROUP-ID=\"".len();
        let rest = line.get(at..)?;
        rest.find('"').map(|end| rest[..end].to_owned())
    };
    let audio = |line: &&str| line.starts_with("#EXT-X-MEDIA:") && line.contains("TYPE=AUDIO");
    let mut muxed_only: Vec<String> = text.lines().filter(audio).filter_map(group_of).collect();
    for line in text.lines().filter(audio) {
        if line.contains("URI=\"") {
            if let Some(group) = group_of(line) {
                muxed_only.retain(|g| *g != group);
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if audio(&line) && group_of(line).is_some_and(|g| muxed_only.contains(&g)) {
            continue;
        }
        let mut line = line.to_owned();
        if line.starts_with("#EXT-X-STREAM-INF:") {
            for group in &muxed_only {
                line = line.replace(&format!(",AUDIO=\"{group}\""), "");
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Multivariant playlist `text` without the variants and renditions whose playlist is
/// one of `names`.
pub fn without_playlists(text: &str, names: &[String]) -> String {
    let names_uri = |line: &str| {
        let uri = line.rsplit('/').next().unwrap_or(line);
        names.iter().any(|n| n == uri)
    };
    let quoted = |line: &str| names.iter().any(|n| line.contains(&format!("{n}\"")));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (k, line) in lines.iter().enumerate() {
        let dropped = if line.starts_with("#EXT-X-STREAM-INF") {
            lines.get(k + 1).is_some_and(|next| names_uri(next))
        } else if line.starts_with("#EXT-X-MEDIA") {
            quoted(line)
        } else {
            !line.starts_with('#') && names_uri(line)
        };
        if !dropped {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
