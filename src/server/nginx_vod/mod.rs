//! nginx-vod-module's URL grammar (issue 16), translated to vodpack's own routes, so a CDN
//! or an app holding nginx-vod URLs can be pointed at vodpack unchanged.
//!
//! Under each configured location (`--nginx-vod-locations hls=/hls/,hlsts=/hlsts/,dash=/dash/`)
//! a path is `PREFIX/FILE_PATH/NAME`, as nginx-vod's local mode reads it:
//! - path parameters anywhere in FILE_PATH, removed from it, the first of each kind winning
//!   as in `ngx_http_vod_extract_uri_params`: `clipFrom/MS/`, `clipTo/MS/`, `tracks/v1-a1/`;
//!   they become a `package::View`;
//! - a multi-URL set, `folder/,a,b,.mp4.urlset`: the files `folder/a.mp4` and
//!   `folder/b.mp4` as one title, made into a title document in memory (its video
//!   renditions, the first bringing its audio), served by the title-document machinery;
//! - NAME is one of vodpack's own names (what our manifests refer to, relative to
//!   themselves, so a player that started from an nginx-vod URL stays under it) or one of
//!   nginx-vod's: `master.m3u8`, `index[-...].m3u8`, `iframes-...m3u8`, `seg-N-...m4s|ts`,
//!   `init-...mp4`, DASH `manifest.mpd` and `fragment-N-...m4s`, with nginx-vod's track
//!   tokens (`f2`: file 2 of a set, `v1`/`a2`: the Nth video/audio track, `v`/`v0`: all of
//!   them, `leng`: a language, `x3`: a version, ignored).
//!
//! Names that pick tracks are resolved against the title (the Nth video track is the title's
//! business), which is why they stay an [`NginxName`] until the handler has the title.
//! Under the `hls` location, names of several tracks are muxed fMP4 as nginx-vod serves
//! it (`index-v1-a1.m3u8`, `init-v1-a1.mp4`, `seg-1-v1-a1.m4s`: `muxed.rs`); a bare
//! `index.m3u8` stays the multivariant playlist. What vodpack does not produce answers with
//! a clear error rather than something else: a muxed DASH segment is a 404 naming the
//! single-track names, muxed names of an HLS-encrypted output too.

mod muxed;

use std::sync::Arc;

use http::StatusCode;
use percent_encoding::percent_decode_str;

use super::error::ErrorAnswer;
use super::route::{Route, RouteError};
use super::views::load_view;
use super::App;
use crate::config::NginxVodLocations;
use crate::media::{DocumentFile, TitleDocument, TrackKind};
use crate::package::{
    parse_version_folder, split_document_track_id, Clip, PickKind, Resource, TrackPick,
    TrackSelection, View,
};
use crate::source::ObjectKey;

pub(super) use muxed::{muxed_answer, Muxed, MuxedAnswer, MuxedContent, MuxedPart};

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

/// What an nginx-vod name stands for in a title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A native resource of the title as viewed.
    Native(Resource, View),
    /// A muxed fMP4 resource of several tracks of the title as viewed (`muxed.rs`).
    Muxed(Muxed, View),
    /// A multivariant playlist of some of the title's tracks, which lives at this path (the
    /// request's, with the view's folders), where its relative URLs resolve into that
    /// view's version folder: a redirect (302).
    Redirect(String),
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

    fn contains(&self, nth: u32) -> bool {
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

/// Parse `path` against the nginx-vod locations.
///
/// # Errors
/// [`RouteError::NotFound`] outside the locations or for a name nginx-vod does not have,
/// [`RouteError::BadPath`] for a malformed key, parameter or name.
pub fn parse_nginx_route(locations: &NginxVodLocations, path: &str) -> Result<Route, RouteError> {
    let (output, rest) = locations
        .prefixes()
        .find_map(|(name, prefix)| {
            let output = match name {
                "hls" => NginxOutput::Hls,
                "hlsts" => NginxOutput::HlsTs,
                _ => NginxOutput::Dash,
            };
            Some((output, path.strip_prefix(prefix)?))
        })
        .ok_or(RouteError::NotFound)?;
    let bad = |reason: String| RouteError::BadPath { reason };
    let (mut dir, name) = rest.rsplit_once('/').ok_or(RouteError::NotFound)?;
    let mut version = None;
    if let Some((before, folder)) = dir.rsplit_once('/') {
        if let Some(token) = parse_version_folder(folder) {
            version = Some(token.to_owned());
            dir = before;
        }
    }
    // vodpack's own view folders (`clip/FROM-TO/`, `tracks/SPEC/`) at the end, where our
    // redirects put them (see `resolve`): they win over nginx-vod's parameters.
    let (dir, native_view) = split_native_view(dir);
    let base = format!("{}{dir}/", &path[..path.len() - rest.len()]);
    // Path parameters, anywhere in the file path, the first of each winning.
    let mut segments: Vec<&str> = Vec::new();
    let (mut clip_from, mut clip_to, mut tracks) = (None, None, None);
    let mut parts = dir.split('/');
    while let Some(segment) = parts.next() {
        let param = segment.to_ascii_lowercase();
        if matches!(param.as_str(), "shift" | "speed") {
            return Err(bad(format!(
                "the {segment} parameter is not supported (see docs/migrating-from-nginx-vod.md)"
            )));
        }
        if !matches!(param.as_str(), "clipfrom" | "clipto" | "tracks") {
            segments.push(segment);
            continue;
        }
        let value = parts
            .next()
            .ok_or_else(|| bad(format!("{segment} has no value")))?;
        let ms = || {
            value
                .parse::<u32>()
                .map(u64::from)
                .map_err(|_| bad(format!("{segment}/{value}: not a number of milliseconds")))
        };
        match param.as_str() {
            "clipfrom" if clip_from.is_none() => clip_from = Some(ms()?),
            "clipto" if clip_to.is_none() => clip_to = Some(ms()?),
            "tracks" if tracks.is_none() => tracks = Some(parse_track_param(value)?),
            _ => {}
        }
    }
    let key = percent_decode_str(&segments.join("/"))
        .decode_utf8()
        .map_err(|_| bad("key is not valid percent-encoded UTF-8".into()))?
        .into_owned();
    let key = ObjectKey::parse(&key)?;
    let lower = key.as_str().to_ascii_lowercase();
    if lower.ends_with(URLSET_SUFFIX) {
        urlset_document(&key).map_err(bad)?;
    } else if ![".mp4", ".m4v", ".m4a", ".mov"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return Err(RouteError::NotFound);
    }
    let clip = match (clip_from, clip_to) {
        (None, None) => None,
        (from, to) => Some(Clip::new(from.unwrap_or(0), to).map_err(|e| bad(e.to_string()))?),
    };
    let view = View {
        clip: native_view.clip.or(clip),
        tracks: native_view.tracks.or(tracks),
    };
    // vodpack's own names: what its manifests refer to.
    if let Some(resource) = Resource::parse(name) {
        let resource = match (output, resource) {
            (NginxOutput::HlsTs, Resource::Multivariant) => Resource::MultivariantTs,
            (_, resource) => resource,
        };
        return Ok(Route::Vod {
            key,
            version,
            resource,
            view,
        });
    }
    let mut name = parse_name(output, name)?;
    name.base = base;
    Ok(Route::NginxVod { key, view, name })
}

/// Split vodpack's view folders (`clip/FROM-TO/`, `tracks/SPEC/` in vodpack's grammar,
/// each at most once) off the end of `dir`. Unlike `/vod/` paths, what does not parse
/// stays in place, to be read as nginx-vod parameters (`tracks/v0/`, a second `tracks/`).
fn split_native_view(mut dir: &str) -> (&str, View) {
    let mut view = View::default();
    while let Some((rest, value)) = dir.rsplit_once('/') {
        let Some((before, name)) = rest.rsplit_once('/') else {
            break;
        };
        match name {
            "clip" if view.clip.is_none() => match Clip::parse(value) {
                Ok(clip) => view.clip = Some(clip),
                Err(_) => break,
            },
            "tracks" if view.tracks.is_none() => match TrackSelection::parse(value) {
                Ok(tracks) => view.tracks = Some(tracks),
                Err(_) => break,
            },
            _ => break,
        }
        dir = before;
    }
    (dir, view)
}

/// nginx-vod's `tracks` path parameter (`v1-a1`, `a2`, `v`, `v0-a0`): `v`/`a` tokens
/// only, as its `ngx_http_vod_parse_tracks_param`.
fn parse_track_param(value: &str) -> Result<TrackSelection, RouteError> {
    let mut selection = TrackSelection::default();
    let rest = parse_av_tokens(value, &mut |kind, n| {
        let kind = match kind {
            TrackKind::Video => PickKind::Video,
            TrackKind::Audio => PickKind::Audio,
        };
        selection.picks.push(TrackPick::Kind {
            kind,
            nth: (n > 0).then_some(n),
        });
    });
    if !rest.is_empty() || selection.picks.is_empty() {
        return Err(RouteError::BadPath {
            reason: format!("tracks/{value}: not a list of v/a tokens such as v1-a1"),
        });
    }
    Ok(selection)
}

/// Parse `v1-a2`-style tokens at the start of `text`, calling `pick(kind, n)` (n = 0 for
/// all); returns what follows them.
fn parse_av_tokens<'a>(mut text: &'a str, pick: &mut impl FnMut(TrackKind, u32)) -> &'a str {
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
fn parse_name(output: NginxOutput, name: &str) -> Result<NginxName, RouteError> {
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
        });
    }
    Ok(TitleDocument {
        video,
        audio: Vec::new(),
        subtitles: Vec::new(),
        clip: None,
        encryption: None,
    })
}

/// The native resource (and view) an nginx-vod name stands for in the title of `key`
/// under `view`.
///
/// Under the `hls` location, an init or segment name picking several tracks, or a
/// playlist name whose track tokens pick several, is the muxed fMP4 stream of those
/// tracks ([`Resolved::Muxed`]).
///
/// # Errors
/// The title's load errors; 404 for tracks the title does not have, for muxed segments and
/// init segments under the `dash` location (vodpack's DASH has one track per rendition),
/// for TS segment names outside the `hlsts` location.
pub(super) async fn resolve(
    app: &Arc<App>,
    key: &ObjectKey,
    view: View,
    name: &NginxName,
) -> Result<Resolved, ErrorAnswer> {
    let not_found = |reason: String| ErrorAnswer::new(StatusCode::NOT_FOUND, reason);
    if matches!(name.kind, NginxKind::Segment { ts: true, .. }) && name.output != NginxOutput::HlsTs
    {
        return Err(not_found(
            "MPEG-TS segments are served under the hlsts location".into(),
        ));
    }
    let (_, cached) = load_view(app, key, &view).await?;
    let title = &cached.title;
    // Count each kind per file, in index order, as nginx-vod numbers a file's tracks.
    let mut counts: Vec<(u32, TrackKind, u32)> = Vec::new();
    let mut selected = Vec::new();
    for track in &title.index.tracks {
        let file = split_document_track_id(track.track_id).map_or(1, |(f, _)| f);
        let nth = match counts
            .iter_mut()
            .find(|(f, k, _)| *f == file && *k == track.kind)
        {
            Some(entry) => {
                entry.2 += 1;
                entry.2
            }
            None => {
                counts.push((file, track.kind, 1));
                1
            }
        };
        let picks = match track.kind {
            TrackKind::Video => &name.video,
            TrackKind::Audio => &name.audio,
        };
        let no_tokens = name.video.is_none() && name.audio.is_none();
        let picked = no_tokens || picks.as_ref().is_some_and(|p| p.contains(nth));
        let in_file = name.files.is_empty() || name.files.contains(&file);
        let in_language = track.kind == TrackKind::Video
            || name.languages.is_empty()
            || (track.language.as_deref()).is_some_and(|l| name.languages.iter().any(|w| w == l));
        if picked && in_file && in_language && title.rendition(track.track_id).is_some() {
            selected.push(track.track_id);
        }
    }
    if name.output == NginxOutput::HlsTs && name.kind != NginxKind::Manifest {
        return ts_resource(title, &selected, name).map(|r| Resolved::Native(r, view));
    }
    let one = match selected.as_slice() {
        [] => return Err(not_found("no such track in this title".into())),
        [one] => Some(*one),
        _ => None,
    };
    // Several tracks in one stream: muxed fMP4 under the `hls` location, for init and
    // segment names, and for playlist names that pick their tracks (a bare `index.m3u8`
    // stays the multivariant playlist, below).
    let picks_tracks = name.video.is_some() || name.audio.is_some();
    let part = match name.kind {
        NginxKind::Init => Some(MuxedPart::Init),
        NginxKind::Segment { number, .. } => Some(MuxedPart::Segment { number }),
        NginxKind::Index if picks_tracks => Some(MuxedPart::Playlist),
        NginxKind::Index | NginxKind::Manifest | NginxKind::IFrames => None,
    };
    if let (NginxOutput::Hls, None, Some(part)) = (name.output, one, part) {
        let track_ids = (title.renditions.iter())
            .map(|r| r.track_id)
            .filter(|id| selected.contains(id))
            .collect();
        let muxed = Muxed {
            part,
            track_ids,
            tokens: name.track_tokens(),
        };
        return Ok(Resolved::Muxed(muxed, view));
    }
    let muxed = || {
        let names: Vec<String> = (selected.iter())
            .map(|id| Resource::dash_representation_id(*id))
            .collect();
        not_found(format!(
            "vodpack's DASH has one track per rendition (muxed fMP4 is served under the hls \
             location): ask for each of the tracks {} alone",
            names.join(", ")
        ))
    };
    let manifest = match name.output {
        NginxOutput::Hls => ("master.m3u8", Resource::Multivariant),
        NginxOutput::HlsTs => ("master.m3u8", Resource::MultivariantTs),
        NginxOutput::Dash => ("manifest.mpd", Resource::Mpd),
    };
    let all = selected.len() == title.renditions.len();
    let resource = match (name.kind, one) {
        (NginxKind::Manifest, _) if all => manifest.1,
        (NginxKind::Index, Some(track_id)) => Resource::MediaPlaylist { track_id },
        (NginxKind::Index, None) if all => {
            // Every track of the title as viewed: its multivariant playlist, here.
            Resource::Multivariant
        }
        (NginxKind::Index, None) | (NginxKind::Manifest, _) => {
            // Some tracks: the multivariant playlist (or MPD) of a view of just those.
            let picks = selected.iter().map(|id| TrackPick::Id(*id)).collect();
            let view = View {
                tracks: Some(TrackSelection {
                    picks,
                    languages: Vec::new(),
                }),
                ..view
            };
            let file = match name.kind {
                NginxKind::Manifest => manifest.0,
                _ => "master.m3u8",
            };
            return Ok(Resolved::Redirect(format!(
                "{}{}{file}",
                name.base,
                view.path()
            )));
        }
        (NginxKind::Init, Some(track_id)) => Resource::Init { track_id },
        (NginxKind::Segment { number, .. }, Some(track_id)) => {
            Resource::Segment { track_id, number }
        }
        (NginxKind::Init | NginxKind::Segment { .. }, None) => return Err(muxed()),
        (NginxKind::IFrames, _) => {
            // The I-frame playlist of the one video track picked (`iframes-v1.m3u8`).
            let videos: Vec<u32> = (selected.iter().copied())
                .filter(|id| {
                    title
                        .rendition(*id)
                        .is_some_and(|r| r.kind == TrackKind::Video)
                })
                .collect();
            match videos.as_slice() {
                [track_id] => Resource::IframePlaylist {
                    track_id: *track_id,
                },
                _ => {
                    return Err(not_found(
                        "an I-frame playlist is of one video track: name it (iframes-v1.m3u8)"
                            .into(),
                    ))
                }
            }
        }
    };
    Ok(Resolved::Native(resource, view))
}

/// The MPEG-TS resource an nginx-vod name under the `hlsts` location stands for. vodpack's
/// TS renditions are keyed by their video (muxed with the title's main audio) or, for an
/// audio-only rendition, by their audio: `seg-1-v1-a1.ts` is the video's TS segment.
fn ts_resource(
    title: &crate::package::Title,
    selected: &[u32],
    name: &NginxName,
) -> Result<Resource, ErrorAnswer> {
    let not_found = |reason: &str| ErrorAnswer::new(StatusCode::NOT_FOUND, reason.to_owned());
    let kind_of = |id: &u32| title.rendition(*id).map(|r| (r.kind, r.is_default));
    let video = selected
        .iter()
        .find(|id| kind_of(id).is_some_and(|(k, _)| k == TrackKind::Video));
    let audios: Vec<&u32> = (selected.iter())
        .filter(|id| kind_of(id).is_some_and(|(k, _)| k == TrackKind::Audio))
        .collect();
    let track_id = match (video, audios.as_slice()) {
        (Some(video), []) => *video,
        // A video TS rendition carries the main audio, and only it.
        (Some(video), [audio]) if kind_of(audio).is_some_and(|(_, main)| main) => *video,
        (Some(_), _) => {
            return Err(not_found(
                "vodpack's MPEG-TS muxes a video with the title's main audio only",
            ))
        }
        (None, [audio]) => **audio,
        (None, _) => return Err(not_found("name one video or one audio track")),
    };
    match name.kind {
        NginxKind::Index => Ok(Resource::TsMediaPlaylist { track_id }),
        NginxKind::Segment { number, .. } => Ok(Resource::TsSegment { track_id, number }),
        NginxKind::IFrames if video.is_some() => Ok(Resource::TsIframePlaylist { track_id }),
        NginxKind::IFrames => Err(not_found("an I-frame playlist is of a video track")),
        NginxKind::Init | NginxKind::Manifest => Err(not_found("MPEG-TS has no init segment here")),
    }
}

#[cfg(test)]
mod tests;
