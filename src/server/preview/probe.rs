//! What the server would answer for a key, asked of the server itself, in process.
//!
//! `inspect`, `check` and the preview page must give the reason a player would get, word
//! for word. Rather than re-derive it, [`probe`] sends `GET /vod/KEY/master.m3u8` and
//! `GET /vod/KEY/manifest.mpd` through the request's life (`server::request`), the same
//! code path a client's request takes (routing, admission, the catalog, the error table),
//! and reads the answers: on success the multivariant playlist's variants and its audio and
//! subtitle renditions (RFC 8216 4.4.6.1, 4.4.6.2), else the status and one-line reason.
//! The title is then in the catalog, so a preview that plays it next reads nothing again.

use std::sync::Arc;

use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde::Serialize;

use crate::server::app::App;
use crate::server::client::PeerAddr;
use crate::server::request::handle_routed;
pub use crate::server::route::paths::encode_key;

use crate::source::ObjectKey;

/// Largest manifest body read back; a multivariant playlist or MPD is a few KiB.
const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;

/// The server's answers for one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyReport {
    /// The object key.
    pub key: String,
    /// `ok` when both manifests are served, else the first failure's status.
    pub verdict: Verdict,
    /// Status of `master.m3u8`.
    pub hls_status: u16,
    /// Status of `manifest.mpd`.
    pub dash_status: u16,
    /// The one-line reason of the first failing answer; `None` when both are served.
    pub reason: Option<String>,
    /// The variant streams of the multivariant playlist, in its order.
    pub variants: Vec<Variant>,
    /// Its audio and subtitle renditions (`EXT-X-MEDIA`), in its order.
    pub renditions: Vec<Rendition>,
    /// The ad breaks of a title document, as its first media playlist carries
    /// them; empty without breaks.
    pub breaks: Vec<AdBreak>,
}

/// One ad break: an HLS Interstitial (`EXT-X-DATERANGE` of
/// `CLASS="com.apple.hls.interstitial"`) of the first media playlist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdBreak {
    /// `ID`: the document's break id.
    pub id: String,
    /// Where the title is cut for it, in ms of the playlist (the durations of the
    /// segments before the one it is written before): the key frame at or before `at`.
    pub cut_ms: u64,
    /// `DURATION`, in seconds as written.
    pub duration: Option<String>,
    /// `X-ASSET-URI` or `X-ASSET-LIST`, as written.
    pub asset: Option<String>,
}

/// Whether a key is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Both manifests are answered with 200.
    Ok,
    /// A manifest is answered with an error.
    Failed,
}

/// One `EXT-X-STREAM-INF` of the multivariant playlist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// `BANDWIDTH`, in bits per second.
    pub bandwidth: u64,
    /// `RESOLUTION` (`WxH`), for video.
    pub resolution: Option<String>,
    /// `CODECS`.
    pub codecs: Option<String>,
    /// `FRAME-RATE`.
    pub frame_rate: Option<String>,
    /// `VIDEO-RANGE`.
    pub video_range: Option<String>,
    /// `AUDIO` group.
    pub audio: Option<String>,
    /// `SUBTITLES` group.
    pub subtitles: Option<String>,
    /// `CLOSED-CAPTIONS`: a group, or `NONE`.
    pub closed_captions: Option<String>,
    /// URI of the media playlist, relative to the multivariant playlist.
    pub uri: String,
}

/// One `EXT-X-MEDIA` of the multivariant playlist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendition {
    /// `TYPE`: `AUDIO`, `SUBTITLES`, ...
    pub kind: String,
    /// `GROUP-ID`.
    pub group: String,
    /// `LANGUAGE`.
    pub language: Option<String>,
    /// `NAME`.
    pub name: Option<String>,
    /// `DEFAULT=YES`.
    pub default: bool,
    /// `CHARACTERISTICS` (accessibility: audio description, SDH).
    pub characteristics: Option<String>,
    /// `INSTREAM-ID` of closed captions (`CC1`, `SERVICE2`).
    pub instream_id: Option<String>,
    /// `URI`, relative to the multivariant playlist.
    pub uri: Option<String>,
}

impl KeyReport {
    /// True when the key is served.
    pub fn is_ok(&self) -> bool {
        self.verdict == Verdict::Ok
    }

    /// The status the first failing manifest answers (200 when both are served).
    pub fn status(&self) -> u16 {
        match self.hls_status {
            200 => self.dash_status,
            other => other,
        }
    }
}

/// Who a probe asks as: the preview page asks with its viewer's token and address, so a
/// server with signed URLs answers it as it answers the viewer's players.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The `token` query parameter to send, when URLs are signed.
    pub token: Option<String>,
    /// The viewer's address (for a token bound to it).
    pub peer: Option<std::net::IpAddr>,
}

/// A probe's report, with the MPD it read (empty when it was not served).
#[derive(Debug, Clone)]
pub struct Probed {
    /// What the server answers.
    pub report: KeyReport,
    /// The body of `manifest.mpd` when it was answered 200, else empty.
    pub mpd: String,
}

/// Ask `app` for the HLS and DASH manifests of `key`, as a client would.
pub async fn probe(app: &Arc<App>, key: &ObjectKey) -> KeyReport {
    probe_as(app, key, &Caller::default()).await.report
}

/// [`probe`], asked as `caller`, keeping the MPD.
pub async fn probe_as(app: &Arc<App>, key: &ObjectKey, caller: &Caller) -> Probed {
    let base = format!("/vod/{}", encode_key(key.as_str()));
    let get = |path: String| async move { get_as(app, &path, caller).await };
    let (hls_status, hls_body) = get(format!("{base}/master.m3u8")).await;
    let (dash_status, dash_body) = get(format!("{base}/manifest.mpd")).await;
    let ok = |status: StatusCode| status == StatusCode::OK;
    let reason = match (ok(hls_status), ok(dash_status)) {
        (false, _) => Some(one_line(&hls_body)),
        (true, false) => Some(one_line(&dash_body)),
        (true, true) => None,
    };
    let (variants, renditions) = match ok(hls_status) {
        true => parse_multivariant(&hls_body),
        false => (Vec::new(), Vec::new()),
    };
    // A title with breaks says so in its MPD (a SCTE-35 EventStream); only then is its
    // first media playlist read for them, so `check` over a bucket asks nothing more.
    let breaks = match (variants.first(), dash_body.contains(SCTE35_SCHEME)) {
        (Some(first), true) => {
            // Its token (when URLs are signed) is sent by `get_as`, not the one it carries.
            let uri = first.uri.split('?').next().unwrap_or_default();
            let (status, playlist) = get(format!("{base}/{uri}")).await;
            match ok(status) {
                true => parse_breaks(&playlist),
                false => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    let report = KeyReport {
        key: key.to_string(),
        verdict: match reason {
            None => Verdict::Ok,
            Some(_) => Verdict::Failed,
        },
        hls_status: hls_status.as_u16(),
        dash_status: dash_status.as_u16(),
        reason,
        variants,
        renditions,
        breaks,
    };
    let mpd = match ok(dash_status) {
        true => dash_body,
        false => String::new(),
    };
    Probed { report, mpd }
}

/// The scheme of the SCTE-35 `EventStream` an MPD carries breaks in.
const SCTE35_SCHEME: &str = "urn:scte:scte35:2014:xml+bin";

/// The HLS Interstitials of a media playlist, each with the playlist time of the segment
/// it is written before.
fn parse_breaks(playlist: &str) -> Vec<AdBreak> {
    let mut breaks = Vec::new();
    let mut elapsed = 0.0f64;
    let mut duration = 0.0f64;
    for line in playlist.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#EXTINF:") {
            duration = (rest.split(',').next())
                .and_then(|d| d.trim().parse().ok())
                .unwrap_or(0.0);
        } else if let Some(list) = line.strip_prefix("#EXT-X-DATERANGE:") {
            let attrs = attributes(list);
            let get = |name: &str| attribute(&attrs, name);
            if get("CLASS").as_deref() != Some("com.apple.hls.interstitial") {
                continue;
            }
            breaks.push(AdBreak {
                id: get("ID").unwrap_or_default(),
                cut_ms: (elapsed * 1000.0).round().clamp(0.0, u64::MAX as f64) as u64,
                duration: get("DURATION"),
                asset: get("X-ASSET-URI").or_else(|| get("X-ASSET-LIST")),
            });
        } else if !line.is_empty() && !line.starts_with('#') {
            elapsed += duration;
            duration = 0.0;
        }
    }
    breaks
}

/// GET `path` (no query) through the request's life (`server::request`) as `caller`:
/// status and body text (bounded).
pub async fn get_as(app: &Arc<App>, path: &str, caller: &Caller) -> (StatusCode, String) {
    let uri = match &caller.token {
        Some(token) => format!(
            "{path}?{}",
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("token", token)
                .finish()
        ),
        None => path.to_owned(),
    };
    let Ok(mut request) = Request::get(uri).body(http_body_util::Empty::<bytes::Bytes>::new())
    else {
        return (StatusCode::BAD_REQUEST, "bad request path".into());
    };
    if let Some(peer) = caller.peer {
        request.extensions_mut().insert(PeerAddr(peer));
    }
    let response = handle_routed(app.clone(), request).await;
    let status = response.status();
    let limited = http_body_util::Limited::new(response.into_body(), MAX_MANIFEST_BYTES);
    let text = match limited.collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(e) => format!("answer could not be read: {e}"),
    };
    (status, text)
}

/// The first non-empty line of an error body, trimmed.
fn one_line(body: &str) -> String {
    body.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(empty answer)")
        .to_owned()
}

/// The variants and renditions of a multivariant playlist.
fn parse_multivariant(playlist: &str) -> (Vec<Variant>, Vec<Rendition>) {
    let mut variants = Vec::new();
    let mut renditions = Vec::new();
    let mut lines = playlist.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if let Some(list) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            let attrs = attributes(list);
            let uri = lines
                .by_ref()
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .unwrap_or_default()
                .to_owned();
            let get = |name: &str| attribute(&attrs, name);
            variants.push(Variant {
                bandwidth: get("BANDWIDTH").and_then(|b| b.parse().ok()).unwrap_or(0),
                resolution: get("RESOLUTION"),
                codecs: get("CODECS"),
                frame_rate: get("FRAME-RATE"),
                video_range: get("VIDEO-RANGE"),
                audio: get("AUDIO"),
                subtitles: get("SUBTITLES"),
                closed_captions: get("CLOSED-CAPTIONS"),
                uri,
            });
        } else if let Some(list) = line.strip_prefix("#EXT-X-MEDIA:") {
            let attrs = attributes(list);
            let get = |name: &str| attribute(&attrs, name);
            renditions.push(Rendition {
                kind: get("TYPE").unwrap_or_default(),
                group: get("GROUP-ID").unwrap_or_default(),
                language: get("LANGUAGE"),
                name: get("NAME"),
                default: get("DEFAULT").as_deref() == Some("YES"),
                characteristics: get("CHARACTERISTICS"),
                instream_id: get("INSTREAM-ID"),
                uri: get("URI"),
            });
        }
    }
    (variants, renditions)
}

/// The value of attribute `name` in `attrs` (from [`attributes`]).
fn attribute(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// An attribute list (RFC 8216 4.2): `NAME=value` pairs split on commas outside quotes,
/// quoted values unquoted.
fn attributes(list: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = list;
    while !rest.is_empty() {
        let Some((name, after)) = rest.split_once('=') else {
            break;
        };
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((value, tail)) => (value, tail.strip_prefix(',').unwrap_or(tail)),
                None => (quoted, ""),
            },
            None => match after.split_once(',') {
                Some((value, tail)) => (value, tail),
                None => (after, ""),
            },
        };
        pairs.push((name.trim().to_owned(), value.to_owned()));
        rest = next;
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_and_renditions_are_read_from_a_multivariant_playlist() {
        let playlist = "#EXTM3U\n\
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"aac\",LANGUAGE=\"fra\",NAME=\"Français, stéréo\",DEFAULT=YES,URI=\"v1/index-t2.m3u8\"\n\
#EXT-X-STREAM-INF:BANDWIDTH=540000,CODECS=\"avc1.64001e,mp4a.40.2\",RESOLUTION=320x180,AUDIO=\"aac\"\n\
v1/index-t1.m3u8\n";
        let (variants, renditions) = parse_multivariant(playlist);
        assert_eq!(variants.len(), 1);
        assert_eq!(variants[0].bandwidth, 540_000);
        assert_eq!(variants[0].codecs.as_deref(), Some("avc1.64001e,mp4a.40.2"));
        assert_eq!(variants[0].resolution.as_deref(), Some("320x180"));
        assert_eq!(variants[0].uri, "v1/index-t1.m3u8");
        assert_eq!(renditions[0].name.as_deref(), Some("Français, stéréo"));
        assert_eq!(renditions[0].language.as_deref(), Some("fra"));
        assert!(renditions[0].default);
    }

    #[test]
    fn breaks_are_read_with_the_time_of_the_segment_they_precede() {
        let playlist = "#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2000-01-01T00:00:00.000Z\n\
#EXTINF:2.000,\nseg-1.m4s\n#EXTINF:1.500,\nseg-2.m4s\n\
#EXT-X-PROGRAM-DATE-TIME:2000-01-01T00:00:03.500Z\n\
#EXT-X-DATERANGE:ID=\"mid, roll\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"2000-01-01T00:00:03.500Z\",DURATION=15.000,X-ASSET-URI=\"https://ads.example/a.m3u8\",X-RESUME-OFFSET=0\n\
#EXT-X-DATERANGE:ID=\"other\",CLASS=\"com.example.chapter\",START-DATE=\"2000-01-01T00:00:03.500Z\"\n\
#EXTINF:2.000,\nseg-3.m4s\n\
#EXT-X-DATERANGE:ID=\"post\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"2000-01-01T00:00:05.500Z\",DURATION=5.000,X-ASSET-LIST=\"https://ads.example/l.json\"\n\
#EXTINF:1.000,\nseg-4.m4s\n#EXT-X-ENDLIST\n";
        let breaks = parse_breaks(playlist);
        assert_eq!(
            breaks,
            [
                AdBreak {
                    id: "mid, roll".into(),
                    cut_ms: 3_500,
                    duration: Some("15.000".into()),
                    asset: Some("https://ads.example/a.m3u8".into()),
                },
                AdBreak {
                    id: "post".into(),
                    cut_ms: 5_500,
                    duration: Some("5.000".into()),
                    asset: Some("https://ads.example/l.json".into()),
                },
            ]
        );
    }

    #[test]
    fn keys_are_encoded_per_segment() {
        assert_eq!(encode_key("a b/é#.mp4"), "a%20b/%C3%A9%23.mp4");
    }
}
