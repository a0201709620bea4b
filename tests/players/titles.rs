//! The fixtures the players run over, one row each, saying what each offers a player
//! (variants, audio languages, cues) and whether Chromium can decode it; where each
//! title's manifests are; and which titles MPEG-TS carries whole.

use std::process::Command;

use crate::common;

/// One title the players are run over, and what it offers them.
pub struct Title {
    /// Object key under `fixtures/`, or for a key starting with `nginx:` an nginx-vod
    /// urlset under the nginx-vod locations (see [`title_path`]).
    pub key: &'static str,
    /// Whether Debian's Chromium can decode it (H.264/AAC yes; HEVC, AC-3 no). Titles it
    /// cannot decode are played by GStreamer only.
    pub browser: bool,
    /// Where the web players seek to, in seconds (somewhere in the last segment is best: the
    /// player must fetch a segment it has not buffered, then play to the end from there).
    pub seek_s: f64,
    /// Video variants the manifests offer (0: audio only). With two or more, every web
    /// player forces the highest, then the lowest.
    pub video_variants: usize,
    /// Audio tracks (0: video only).
    pub audio_tracks: usize,
    /// A language (as the manifests name it) that is not the default: every web player
    /// switches its audio to it.
    pub switch_audio_to: Option<&'static str>,
    /// Text cues a player must show, with the subtitle language (None: the first track).
    pub cues: Option<Cues>,
}

impl Title {
    /// A title Chromium can decode, with one video variant and one audio track, and
    /// nothing to switch or show, on which the players seek to `seek_s`.
    const fn new(key: &'static str, seek_s: f64) -> Self {
        Title {
            key,
            browser: true,
            seek_s,
            video_variants: 1,
            audio_tracks: 1,
            switch_audio_to: None,
            cues: None,
        }
    }

    /// The same title, played by GStreamer only (Chromium cannot decode it).
    const fn not_in_browser(self) -> Self {
        Title {
            browser: false,
            ..self
        }
    }

    /// The same title with `count` video variants.
    const fn video_variants(self, count: usize) -> Self {
        Title {
            video_variants: count,
            ..self
        }
    }

    /// The same title with `count` audio tracks, and, when `switch_to` is given, the
    /// language the web players switch to.
    const fn audio(self, count: usize, switch_to: Option<&'static str>) -> Self {
        Title {
            audio_tracks: count,
            switch_audio_to: switch_to,
            ..self
        }
    }

    /// The same title with text `cues` in `language` (None: the first text track).
    const fn cues(self, language: Option<&'static str>, cues: &'static [Cue]) -> Self {
        Title {
            cues: Some(Cues { language, cues }),
            ..self
        }
    }
}

/// Subtitle cues expected in a title.
pub struct Cues {
    /// Language of the text track, as in the manifests.
    pub language: Option<&'static str>,
    /// The cues, in presentation order.
    pub cues: &'static [Cue],
}

/// One text cue: shown from `start_s` to `end_s` (title time, seconds) with this text, as
/// a viewer reads it (no tags, entities decoded, lines joined by one space).
pub struct Cue {
    pub start_s: f64,
    pub end_s: f64,
    pub text: &'static str,
}

/// The cue shown from `start_s` to `end_s` with `text`.
const fn cue(start_s: f64, end_s: f64, text: &'static str) -> Cue {
    Cue {
        start_s,
        end_s,
        text,
    }
}

/// The fixtures the players run over. A new fixture gets a row here.
pub const TITLES: &[Title] = &[
    Title::new("h264-aac-3s.mp4", 2.2),
    Title::new("h264-aac-3s-moov-end.mp4", 2.2),
    Title::new("h264-bframes-editlist-aac.mp4", 3.2),
    Title::new("aac-3s-audio-only.m4a", 2.2).video_variants(0),
    Title::new("h264-3s-video-only.mp4", 2.2).audio(0, None),
    Title::new("h264-aac-2lang-3s.mp4", 2.2).audio(2, Some("fra")),
    Title::new("hevc-aac-3s.mp4", 2.2).not_in_browser(),
    Title::new("h264-aac-3s-frag-walk.mp4", 2.2),
    Title::new("h264-aac-3s-frag-sidx.mp4", 2.2),
    Title::new("h264-aac-3s-frag-mfra.mp4", 2.2),
    Title::new("h264-aac-3s-frag-moov-samples.mp4", 2.2),
    Title::new("h264-flac-3s.mp4", 2.2),
    Title::new("av1-10bit-pq-aac-3s.mp4", 2.2),
    Title::new("h264-aac-edit-mid-gop.mp4", 1.5),
    Title::new("h264-aac-empty-edit-mid.mp4", 2.0),
    Title::new("h264-aac-two-clips-editlist.mp4", 2.5),
    Title::new("h264-mp3-3s.mp4", 2.2).not_in_browser(),
    Title::new("hevc-main10-pq-aac-3s.mp4", 2.2).not_in_browser(),
    Title::new("hevc-main10-hlg-aac-3s.mp4", 2.2).not_in_browser(),
    Title::new("h264-aac-movtext-3s.mp4", 2.2).cues(Some("eng"), MOVTEXT_CUES),
    Title::new("h264-aac-wvtt-3s.mp4", 2.2).cues(Some("eng"), WVTT_CUES),
    // A clip from inside a GOP (key frames every second) to inside another: playback
    // starts at the clip's start, the pre-roll from the key frame hidden (HLS) or shown
    // (DASH), as for a file cut by `ffmpeg -ss`.
    Title::new("h264-aac-3s.mp4/clip/1200-2800", 1.4),
    // The ladder as an nginx-vod-module urlset, under its /hls/ and /dash/ locations: three
    // variants, the first file's audio.
    Title::new(
        "nginx:ladder/,ladder-180p,ladder-360p,ladder-270p,.mp4.urlset",
        3.2,
    )
    .video_variants(3),
    // The ladder title: three variants, two audio languages, sidecar subtitles.
    Title::new("ladder/ladder.json", 3.2)
        .video_variants(3)
        .audio(2, Some("fr"))
        .cues(Some("en"), LADDER_CUES),
    // One rung of the ladder with a TTML sidecar.
    Title::new("ladder/ladder-ttml.json", 3.2).cues(Some("it"), TTML_CUES),
];

/// The cues of the TTML sidecar `ladder-it.ttml`.
pub const TTML_CUES: &[Cue] = &[
    cue(0.4, 1.2, "Ciao, scala!"),
    cue(1.5, 3.0, "Caffè & crema su due righe"),
    cue(3.4, 3.8, "Fine"),
];

/// The `tx3g` cues of `h264-aac-movtext-3s.mp4`.
pub const MOVTEXT_CUES: &[Cue] = &[
    cue(0.5, 1.25, "Hello, world!"),
    cue(1.8, 2.7, "Café & crème on two lines"),
];

/// The `wvtt` cues of `h264-aac-wvtt-3s.mp4` (the second overlaps the first).
const WVTT_CUES: &[Cue] = &[
    cue(0.5, 1.25, "Hello, world!"),
    cue(1.0, 2.7, "Café & crème on two lines"),
];

/// The English sidecar cues of the ladder title.
const LADDER_CUES: &[Cue] = &[
    cue(0.5, 1.25, "Hello, ladder!"),
    cue(1.8, 3.2, "Café & crème on two lines"),
];

/// Plain files whose players' lip sync at the start is checked against the source
/// (`av_start`: ffprobe's start times of its first audio and video streams).
pub const LIP_SYNC_KEYS: &[&str] = &[
    "h264-aac-3s.mp4",
    "hevc-aac-3s.mp4",
    "h264-aac-2lang-3s.mp4",
    "av1-10bit-pq-aac-3s.mp4",
    "h264-flac-3s.mp4",
    "h264-bframes-editlist-aac.mp4",
];

/// How much later than its first video the first audio of fixture `key` starts, seconds,
/// as ffprobe reads the source; None without ffprobe or either stream.
pub fn source_av_offset(key: &str) -> Option<f64> {
    let path = common::fixtures().join(key);
    let start = |selector: &str| -> Option<f64> {
        let out = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", selector])
            .args(["-show_entries", "stream=start_time", "-of", "csv=p=0"])
            .arg(&path)
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    Some(start("a:0")? - start("v:0")?)
}

/// Titles with a track HLS carries in CMAF only (AV1, FLAC): their `master-ts.m3u8`
/// leaves it out, so TS players are not run on them (tests/conformance/ts.rs checks what
/// it lists).
const NOT_IN_TS: &[&str] = &["av1-10bit-pq-aac-3s.mp4", "h264-flac-3s.mp4"];

/// Whether every track of `title` goes into its MPEG-TS output.
pub fn carried_in_ts(title: &Title) -> bool {
    !NOT_IN_TS.contains(&title.key)
}

/// The path of `manifest` of the title `key`: `/vod/KEY/...`, or for a key starting with
/// `nginx:` the nginx-vod location of the manifest, `/hls/KEY/master.m3u8` or
/// `/dash/KEY/manifest.mpd`.
pub fn title_path(key: &str, manifest: &str) -> String {
    match key.strip_prefix("nginx:") {
        Some(key) if manifest.ends_with(".mpd") => format!("/dash/{key}/{manifest}"),
        Some(key) => format!("/hls/{key}/{manifest}"),
        None => format!("/vod/{key}/{manifest}"),
    }
}

/// Every media file in `fixtures/` has a row in `TITLES`, so a new fixture cannot miss
/// the players: its row says whether Chromium can decode it and what to switch and check.
#[test]
fn every_fixture_has_a_row_in_the_players_table() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(common::fixtures()).expect("read fixtures/") {
        let name = entry.expect("a fixtures/ entry").file_name();
        let name = name.to_string_lossy();
        let media = [".mp4", ".m4a", ".m4v", ".mov"]
            .iter()
            .any(|ext| name.ends_with(ext));
        if media && !TITLES.iter().any(|t| t.key == name) {
            missing.push(name.into_owned());
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "fixtures without a row in TITLES (tests/players/titles.rs): {missing:?}"
    );
}
