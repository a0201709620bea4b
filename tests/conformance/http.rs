//! The server under test and what it answers: a server over `fixtures/` with 1 s target
//! segments, fetches, and the parts of HLS playlists and MPDs the tests read.

use super::common::{self, TestServer};
use super::webvtt::xml_attribute;
/// Whether ffmpeg and ffprobe are both installed (see `common::have_tool`), checked on the
/// blocking pool. A panic from `have_tool` (tools required but missing) is passed on.
pub(crate) async fn tools_available() -> bool {
    tokio::task::spawn_blocking(|| common::have_tool("ffmpeg") && common::have_tool("ffprobe"))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// A server over the fixtures with 1 s target segments.
pub(crate) async fn fixtures_server() -> TestServer {
    common::start_server_with(&common::fixtures(), common::segments_of(1000)).await
}

/// [`fixtures_server`] for a test that reads its output with ffmpeg and ffprobe; None (the
/// test skips, or fails under `VODPACK_REQUIRE_TOOLS=1`) when they are not here.
pub(crate) async fn start() -> Option<TestServer> {
    if !tools_available().await {
        return None;
    }
    Some(fixtures_server().await)
}

/// GET `path`, asserting a 200 answer.
pub(crate) async fn fetch_ok(server: &TestServer, path: &str) -> common::Reply {
    let reply = common::get(server.addr, path).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
    reply
}

/// GET `path`, asserting a 200 answer, as text.
pub(crate) async fn fetch_text(server: &TestServer, path: &str) -> String {
    fetch_ok(server, path).await.text()
}

/// The media playlist URIs of an HLS multivariant playlist: the line after each
/// `#EXT-X-STREAM-INF` and the `URI` of each `#EXT-X-MEDIA` but subtitles (WebVTT, not
/// CMAF: see `hls_and_dash_carry_the_source_cues`).
pub(crate) fn master_playlist_uris(master: &str) -> Vec<String> {
    let mut uris = Vec::new();
    for line in master.lines().map(str::trim) {
        if line.starts_with("#EXT-X-MEDIA:") && !line.contains("TYPE=SUBTITLES") {
            uris.extend(quoted_attribute(line, "URI"));
        } else if !line.is_empty() && !line.starts_with('#') {
            uris.push(line.to_owned());
        }
    }
    uris
}

/// The value of `NAME="value"` in an HLS tag line.
pub(crate) fn quoted_attribute(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("{name}=\""))? + name.len() + 2;
    let len = line[start..].find('"')?;
    Some(line[start..start + len].to_owned())
}

/// The parts of an HLS media playlist these tests look at.
#[derive(Debug, Default)]
pub(crate) struct MediaPlaylist {
    pub(crate) target_duration: Option<u64>,
    /// The duration of each `#EXTINF`, in order.
    pub(crate) extinfs: Vec<f64>,
    /// The init segment URI (`#EXT-X-MAP`).
    pub(crate) map_uri: Option<String>,
    /// The segment URIs, in order.
    pub(crate) segments: Vec<String>,
}

impl MediaPlaylist {
    pub(crate) fn parse(text: &str) -> Self {
        let mut playlist = Self::default();
        for line in text.lines().map(str::trim) {
            if let Some(value) = line.strip_prefix("#EXT-X-TARGETDURATION:") {
                playlist.target_duration = Some(value.parse().expect("integer target duration"));
            } else if let Some(value) = line.strip_prefix("#EXTINF:") {
                let seconds = value.split(',').next().unwrap_or_default();
                playlist
                    .extinfs
                    .push(seconds.parse().expect("decimal EXTINF duration"));
            } else if line.starts_with("#EXT-X-MAP:") {
                playlist.map_uri = quoted_attribute(line, "URI");
            } else if !line.is_empty() && !line.starts_with('#') {
                playlist.segments.push(line.to_owned());
            }
        }
        playlist
    }
}

/// One Representation of an MPD and the span its SegmentTimeline covers.
#[derive(Debug, Clone, Default)]
pub(crate) struct MpdRepresentation {
    pub(crate) id: String,
    /// Its AdaptationSet's `contentType` (or the type half of its `mimeType`).
    pub(crate) content_type: String,
    /// Whether its AdaptationSet is a trick-play set (the DASH-IF trickmode property).
    pub(crate) trick_play: bool,
    /// `SegmentTemplate@timescale` and `@presentationTimeOffset` (the Period start on the
    /// media timeline), in ticks.
    pub(crate) timescale: u64,
    pub(crate) presentation_time_offset: u64,
    /// Start of its first segment and end of its last, in ticks (from `S@t`, `@d`, `@r`).
    pub(crate) first_start: u64,
    pub(crate) last_end: u64,
}

impl MpdRepresentation {
    /// How far before the Period start its first segment starts, in seconds (negative: a
    /// gap at the start).
    pub(crate) fn lead_s(&self) -> f64 {
        (self.presentation_time_offset as f64 - self.first_start as f64) / self.timescale as f64
    }

    /// How long after the Period start its last segment ends, in seconds.
    pub(crate) fn reach_s(&self) -> f64 {
        (self.last_end as f64 - self.presentation_time_offset as f64) / self.timescale as f64
    }

    /// The Period start on its media timeline, in seconds: what a player subtracts from its
    /// media times (ISO/IEC 23009-1 5.3.9.2).
    pub(crate) fn presentation_time_offset_s(&self) -> f64 {
        self.presentation_time_offset as f64 / self.timescale as f64
    }
}

/// The Representations of a single-Period MPD that uses SegmentTemplate with a
/// SegmentTimeline, in document order (ffmpeg lists streams in the same order per kind).
/// A template may sit in the AdaptationSet or in the Representation; `S@r="-1"` (repeat to
/// the end) is not handled.
pub(crate) fn mpd_representations(mpd: &str) -> Vec<MpdRepresentation> {
    #[derive(Default, Clone)]
    struct Template {
        timescale: u64,
        offset: u64,
        first_start: Option<u64>,
        end: u64,
    }
    let mut representations = Vec::new();
    let (mut set, mut set_template) = (MpdRepresentation::default(), None::<Template>);
    let mut current: Option<(MpdRepresentation, Option<Template>)> = None;
    for tag in mpd.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or_default();
        let name = tag.split_whitespace().next().unwrap_or_default();
        let attribute = |key: &str| xml_attribute(tag, key);
        let number = |key: &str| attribute(key).and_then(|v| v.parse::<u64>().ok());
        match name {
            "AdaptationSet" => {
                let content_type = attribute("contentType")
                    .or_else(|| attribute("mimeType")?.split('/').next().map(str::to_owned));
                set = MpdRepresentation {
                    content_type: content_type.unwrap_or_default(),
                    ..Default::default()
                };
                set_template = None;
            }
            "EssentialProperty" | "SupplementalProperty"
                if attribute("schemeIdUri").as_deref()
                    == Some("http://dashif.org/guidelines/trickmode") =>
            {
                set.trick_play = true;
            }
            "Representation" => {
                let id = attribute("id").unwrap_or_default();
                current = Some((MpdRepresentation { id, ..set.clone() }, None));
            }
            "SegmentTemplate" => {
                let template = Template {
                    timescale: number("timescale").unwrap_or(1),
                    offset: number("presentationTimeOffset").unwrap_or(0),
                    ..Default::default()
                };
                match &mut current {
                    Some((_, own)) => *own = Some(template),
                    None => set_template = Some(template),
                }
            }
            "S" => {
                let template = match &mut current {
                    Some((_, Some(own))) => Some(own),
                    _ => set_template.as_mut(),
                };
                if let Some(template) = template {
                    let start = number("t").unwrap_or(template.end);
                    let (duration, repeat) = (number("d").unwrap_or(0), number("r").unwrap_or(0));
                    template.first_start.get_or_insert(start);
                    template.end = start + duration * (repeat + 1);
                }
            }
            "/Representation" => {
                if let Some((mut representation, own)) = current.take() {
                    if let Some(template) = own.or_else(|| set_template.clone()) {
                        representation.timescale = template.timescale;
                        representation.presentation_time_offset = template.offset;
                        representation.first_start = template.first_start.unwrap_or(0);
                        representation.last_end = template.end;
                    }
                    representations.push(representation);
                }
            }
            _ => {}
        }
    }
    representations
}
