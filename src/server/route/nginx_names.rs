//! nginx-vod-module's file names and multi-URL sets, parsed: what an `NginxName` asks for
//! (a manifest, an index, an init or a segment, of which files, tracks and languages), and
//! the names of a stream made from their track tokens (`NginxStream`), and the title document a
//! urlset key stands for. The names stay unresolved here: the Nth
//! video track is the title's business (`server::outputs::nginx_vod`).

use super::path_error::RouteError;
use crate::media::{DocumentFile, TitleDocument, TrackKind};
use crate::source::ObjectKey;

/// The suffix that marks a multi-URL set (nginx-vod's `vod_multi_uri_suffix` default).
pub const URLSET_SUFFIX: &str = ".urlset";

/// Most files in one urlset (nginx-vod's `MAX_SUB_URIS`).
pub const MAX_URLSET_FILES: usize = 32;

/// Which output a location serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NginxOutput {
    /// HLS, fMP4 segments.
    Hls,
    /// HLS, MPEG-TS segments.
    HlsTs,
    /// DASH.
    Dash,
}

/// What an nginx-vod name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NginxKind {
    /// `master-tracks.m3u8`, `manifest-tracks.mpd`: the multivariant playlist or MPD of
    /// those tracks (the plain names are vodpack's own).
    Manifest,
    /// `index[-tracks].m3u8`: the media playlist of one track; of several, their muxed
    /// media playlist (`hls`) when track tokens name them, else their multivariant
    /// playlist.
    Index,
    /// `iframes-tracks.m3u8`.
    IFrames,
    /// `init-tracks.mp4`.
    Init,
    /// `seg-N-tracks.m4s` or `.ts`, `fragment-N-tracks.m4s`: segment N (1-based).
    Segment { number: u64, ts: bool },
}

/// An nginx-vod resource name, its tracks not yet resolved against a title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxName {
    /// The location's output.
    pub output: NginxOutput,
    /// What is asked for.
    pub kind: NginxKind,
    /// Files of a urlset (`f2`, 1-based); empty for every file.
    pub files: Vec<u32>,
    /// Video tracks (`v1`: 1-based within the file); `None` when no `v`/`a` token is given
    /// (every track), `Some(all)` for `v`/`v0`.
    pub video: Option<Picks>,
    /// Audio tracks, as `video`.
    pub audio: Option<Picks>,
    /// ISO 639-2 languages (`leng`) the audio must be in; empty for any.
    pub languages: Vec<String>,
    /// The request path up to the file name (slash included), without vodpack's view
    /// folders: where a redirect to a view of the title points (see [`Resolved`]).
    pub base: String,
}

/// The tracks of one kind a name picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picks {
    /// Every track of the kind.
    All,
    /// These (1-based, within their file).
    Numbers(Vec<u32>),
}

impl Picks {
    fn add(slot: &mut Option<Picks>, number: u32) {
        match (slot.as_mut(), number) {
            (_, 0) | (Some(Picks::All), _) => *slot = Some(Picks::All),
            (Some(Picks::Numbers(list)), n) => list.push(n),
            (None, n) => *slot = Some(Picks::Numbers(vec![n])),
        }
    }

    /// Whether the `nth` track of its kind (1-based) is picked.
    pub fn contains(&self, nth: u32) -> bool {
        match self {
            Picks::All => true,
            Picks::Numbers(list) => list.contains(&nth),
        }
    }
}

impl NginxName {
    /// The name's track tokens, canonical (`f1-v1-a1-leng`: files, videos, audios,
    /// languages, each in the order given; `v` for every video track), empty when it has
    /// none. Parsed back, they pick the same tracks.
    pub fn track_tokens(&self) -> String {
        let mut tokens: Vec<String> = self.files.iter().map(|f| format!("f{f}")).collect();
        for (letter, picks) in [('v', &self.video), ('a', &self.audio)] {
            match picks {
                None => {}
                Some(Picks::All) => tokens.push(letter.to_string()),
                Some(Picks::Numbers(list)) => {
                    tokens.extend(list.iter().map(|n| format!("{letter}{n}")));
                }
            }
        }
        tokens.extend(self.languages.iter().map(|l| format!("l{l}")));
        tokens.join("-")
    }

    /// True for segment and init requests (the segment admission class).
    pub fn is_media(&self) -> bool {
        matches!(self.kind, NginxKind::Init | NginxKind::Segment { .. })
    }

    /// The metrics label.
    pub fn label(&self) -> &'static str {
        match self.kind {
            NginxKind::Manifest => match self.output {
                NginxOutput::Dash => "mpd",
                NginxOutput::Hls | NginxOutput::HlsTs => "master",
            },
            NginxKind::Index | NginxKind::IFrames => "media_playlist",
            NginxKind::Init => "init",
            NginxKind::Segment { .. } => "segment",
        }
    }
}

/// The tracks an nginx-vod name streams together (one, or several muxed), and which part
/// of that stream it asks for: its media playlist, init segment or segment N, numbered as
/// nginx-vod-module numbers them (`outputs::nginx_vod::numbered`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxStream {
    /// The location's output: the names' container (`.m4s`, `.ts`, DASH `fragment-`).
    pub output: NginxOutput,
    /// What is asked for.
    pub part: StreamPart,
    /// The tracks, in the order the stream carries them: videos, then audios, each in
    /// file order (the title's rendition order).
    pub track_ids: Vec<u32>,
    /// The track tokens of the names (`v1-a1`, canonical: see `NginxName::track_tokens`),
    /// empty for a name without any; the playlist names its init and segments with them.
    pub tokens: String,
}

/// The part of a stream a name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamPart {
    /// `index-TOKENS.m3u8`: the media playlist.
    Playlist,
    /// `init-TOKENS.mp4` of several tracks (one track's is the native init segment).
    Init,
    /// `seg-N-TOKENS.m4s` or `.ts`, `fragment-N-TOKENS.m4s`, N 1-based.
    Segment { number: u64 },
}

impl NginxStream {
    /// `-TOKENS`, or nothing for a name without tokens.
    fn suffix(&self) -> String {
        match self.tokens.is_empty() {
            true => String::new(),
            false => format!("-{}", self.tokens),
        }
    }

    /// The init segment's name (none in MPEG-TS).
    pub fn init_name(&self) -> String {
        format!("init{}.mp4", self.suffix())
    }

    /// Segment `number`'s name.
    pub fn segment_name(&self, number: u64) -> String {
        match self.output {
            NginxOutput::Hls => format!("seg-{number}{}.m4s", self.suffix()),
            NginxOutput::HlsTs => format!("seg-{number}{}.ts", self.suffix()),
            NginxOutput::Dash => format!("fragment-{number}{}.m4s", self.suffix()),
        }
    }

    /// The name of what is asked for (in the ETag).
    pub fn name(&self) -> String {
        match self.part {
            StreamPart::Playlist => format!("index{}.m3u8", self.suffix()),
            StreamPart::Init => self.init_name(),
            StreamPart::Segment { number } => self.segment_name(number),
        }
    }
}

/// Parse `v1-a2`-style tokens at the start of `text`, calling `pick(kind, n)` (n = 0 for
/// all); returns what follows them.
pub(super) fn parse_av_tokens<'a>(
    mut text: &'a str,
    pick: &mut impl FnMut(TrackKind, u32),
) -> &'a str {
    loop {
        let kind = match text.as_bytes().first() {
            Some(b'v') => TrackKind::Video,
            Some(b'a') => TrackKind::Audio,
            _ => return text,
        };
        let digits = text[1..].bytes().take_while(u8::is_ascii_digit).count();
        let n = text[1..1 + digits].parse::<u32>().unwrap_or(0).min(1024);
        pick(kind, n);
        text = &text[1 + digits..];
        text = text.strip_prefix('-').unwrap_or(text);
    }
}

/// Parse an nginx-vod file name.
pub(super) fn parse_name(output: NginxOutput, name: &str) -> Result<NginxName, RouteError> {
    let (stem, extension) = name.rsplit_once('.').ok_or(RouteError::NotFound)?;
    let (kind_word, rest) = stem.split_once('-').unwrap_or((stem, ""));
    let kind = match (kind_word, extension, output) {
        ("master", "m3u8", NginxOutput::Hls | NginxOutput::HlsTs) => NginxKind::Manifest,
        ("manifest", "mpd", NginxOutput::Dash) => NginxKind::Manifest,
        ("index", "m3u8", NginxOutput::Hls | NginxOutput::HlsTs) => NginxKind::Index,
        ("iframes", "m3u8", NginxOutput::Hls | NginxOutput::HlsTs) => NginxKind::IFrames,
        ("init", "mp4", _) => NginxKind::Init,
        ("seg", "m4s", NginxOutput::Hls) => NginxKind::Segment {
            number: 0,
            ts: false,
        },
        ("seg", "ts", NginxOutput::HlsTs) => NginxKind::Segment {
            number: 0,
            ts: true,
        },
        ("fragment", "m4s", NginxOutput::Dash) => NginxKind::Segment {
            number: 0,
            ts: false,
        },
        _ => return Err(RouteError::NotFound),
    };
    let bad = || RouteError::BadPath {
        reason: format!("{name}: not an nginx-vod file name"),
    };
    let mut parsed = NginxName {
        output,
        kind,
        files: Vec::new(),
        video: None,
        audio: None,
        languages: Vec::new(),
        base: String::new(),
    };
    let mut rest = rest;
    if let NginxKind::Segment { ts, .. } = kind {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let number: u64 = rest[..digits].parse().map_err(|_| bad())?;
        if number == 0 {
            return Err(bad());
        }
        parsed.kind = NginxKind::Segment { number, ts };
        rest = &rest[digits..];
        rest = rest.strip_prefix('-').unwrap_or(rest);
    }
    // Files: f1-f2-...
    while let Some(after) = rest.strip_prefix('f') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let file: u32 = after[..digits].parse().map_err(|_| bad())?;
        if file == 0 || file as usize > MAX_URLSET_FILES {
            return Err(bad());
        }
        parsed.files.push(file);
        rest = &after[digits..];
        rest = rest.strip_prefix('-').unwrap_or(rest);
    }
    rest = parse_av_tokens(rest, &mut |kind, n| match kind {
        TrackKind::Video => Picks::add(&mut parsed.video, n),
        TrackKind::Audio => Picks::add(&mut parsed.audio, n),
    });
    // Languages: l + ISO 639-2 code, repeated.
    while let Some(after) = rest.strip_prefix('l') {
        let code = after.get(..3).ok_or_else(bad)?;
        if !code.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(bad());
        }
        parsed.languages.push(code.to_owned());
        rest = &after[3..];
        rest = rest.strip_prefix('-').unwrap_or(rest);
    }
    // A version (`x3`, DASH): names a manifest generation, ignored here.
    if let Some(after) = rest.strip_prefix('x') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        rest = &after[digits..];
        rest = rest.strip_prefix('-').unwrap_or(rest);
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    Ok(parsed)
}

/// The title document a urlset key stands for: `PREFIX,PART1,PART2,...,POSTFIX.urlset`
/// names the files `PREFIX PART POSTFIX`, as nginx-vod's `ngx_http_vod_parse_multi_uri`
/// splits it; each is a video entry (the first brings its audio).
///
/// # Errors
/// The reason, when the set has no part, more than [`MAX_URLSET_FILES`], or names a file
/// that is not a usable key with a media extension.
pub fn urlset_document(key: &ObjectKey) -> Result<TitleDocument, String> {
    let set = key
        .as_str()
        .strip_suffix(URLSET_SUFFIX)
        .ok_or_else(|| format!("{key} does not end in {URLSET_SUFFIX}"))?;
    let pieces: Vec<&str> = set.split(',').collect();
    let (prefix, postfix, parts) = match pieces.as_slice() {
        [prefix, parts @ .., postfix] if !parts.is_empty() => (*prefix, *postfix, parts),
        _ => {
            return Err(format!(
                "{key}: a urlset is PREFIX,PART,...,POSTFIX{URLSET_SUFFIX}"
            ))
        }
    };
    if parts.len() > MAX_URLSET_FILES {
        return Err(format!("{key}: more than {MAX_URLSET_FILES} files"));
    }
    let mut video = Vec::with_capacity(parts.len());
    for (n, part) in parts.iter().enumerate() {
        let file = format!("{prefix}{part}{postfix}");
        let lower = file.to_ascii_lowercase();
        if ![".mp4", ".m4v", ".mov"].iter().any(|e| lower.ends_with(e)) {
            return Err(format!("urlset file {file:?} is not an .mp4, .m4v or .mov"));
        }
        let key = ObjectKey::parse(&file).map_err(|e| format!("urlset file {file:?}: {e}"))?;
        video.push(DocumentFile {
            entry: format!("urlset[{n}]"),
            key,
            track: None,
            language: None,
            name: None,
            default: false,
            forced: false,
            roles: Vec::new(),
            sdh: false,
        });
    }
    Ok(TitleDocument {
        video,
        audio: Vec::new(),
        subtitles: Vec::new(),
        clip: None,
        encryption: None,
        drm: None,
        key_presets: None,
        dash_profile: None,
        closed_captions: None,
        parts: Vec::new(),
        breaks: Vec::new(),
        program_date_time: None,
    })
}
