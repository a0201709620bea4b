//! The server under test and what it answers: a server over `fixtures/` with 1 s target
//! segments, fetches, and the parts of HLS playlists and MPDs the tests read.

use super::common::{self, TestServer};
use vodpack::config::Settings;
/// Whether ffmpeg and ffprobe are both installed (see `common::have_tool`), checked on the
/// blocking pool. A panic from `have_tool` (tools required but missing) is passed on.
pub(crate) async fn tools_available() -> bool {
    tokio::task::spawn_blocking(|| common::have_tool("ffmpeg") && common::have_tool("ffprobe"))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// A server over the fixtures with 1 s target segments.
pub(crate) async fn start() -> TestServer {
    common::start_server_with(
        &common::fixtures(),
        Settings {
            segment_duration_ms: 1000,
            ..Default::default()
        },
    )
    .await
}

/// GET `path`, asserting a 200 answer.
pub(crate) async fn fetch_ok(server: &TestServer, path: &str) -> common::Reply {
    let reply = common::get(server.addr, path).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
    reply
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
