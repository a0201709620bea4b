//! The names of every resource under `/vod/KEY/`, made and parsed in one place.
//!
//! Manifests refer to these names with relative URLs, and the router parses them back, so
//! the two can never drift apart (a round-trip test checks it). Every name ends in a media
//! extension, because players and ffmpeg refuse segment URLs without one.

use std::fmt;

/// One resource of a title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// `master.m3u8`: HLS multivariant playlist with CMAF segments.
    Multivariant,
    /// `master-ts.m3u8`: HLS multivariant playlist with MPEG-TS segments.
    MultivariantTs,
    /// `manifest.mpd`: DASH MPD.
    Mpd,
    /// `index-t{track_id}.m3u8`: HLS media playlist of one rendition.
    MediaPlaylist { track_id: u32 },
    /// `init-t{track_id}.mp4`: CMAF init segment of one rendition.
    Init { track_id: u32 },
    /// `seg-t{track_id}-{number}.m4s`: CMAF media segment, `number` 1-based.
    Segment { track_id: u32, number: u64 },
    /// `sub-t{track_id}-{number}.vtt`: WebVTT segment of a text track's HLS subtitle
    /// playlist (which is its `index-t{track_id}.m3u8`), `number` 1-based as the title's
    /// segments.
    SubtitleSegment { track_id: u32, number: u64 },
    /// `sub-t{track_id}.vtt`: the whole text track as one WebVTT file, for DASH's
    /// `webvtt-file` form.
    SubtitleFile { track_id: u32 },
    /// `iframes-t{track_id}.m3u8`: HLS I-frame playlist of a video rendition.
    IframePlaylist { track_id: u32 },
    /// `ifr-t{track_id}-{number}.m4s`: key frame `number` (1-based) offered for trick play
    /// by a video rendition, as a one-sample fragment (`package::trick`).
    KeyFrame { track_id: u32, number: u64 },
    /// `index-ts-t{track_id}.m3u8`: HLS media playlist of a TS rendition (a video track
    /// with the main audio muxed in, or an audio track alone), or the subtitle playlist
    /// of a text track in the TS multivariant playlist.
    TsMediaPlaylist { track_id: u32 },
    /// `seg-ts-t{track_id}-{number}.ts`: MPEG-TS segment of a TS rendition, `number`
    /// 1-based as the CMAF segments.
    TsSegment { track_id: u32, number: u64 },
    /// `sub-ts-t{track_id}-{number}.vtt`: WebVTT segment of a text track whose
    /// `X-TIMESTAMP-MAP` maps to the TS timeline.
    TsSubtitleSegment { track_id: u32, number: u64 },
    /// `iframes-ts-t{track_id}.m3u8`: I-frame playlist of a TS video rendition.
    TsIframePlaylist { track_id: u32 },
    /// `init-p{part}-t{track_id}.mp4`: the init segment of part `part` (1-based) of a
    /// sequence for the sequence's rendition `track_id`.
    PartInit { part: u32, track_id: u32 },
    /// `seg-p{part}-t{track_id}-{number}.m4s`: media segment `number` (1-based, the
    /// part's own numbering) of part `part` of a sequence, rendition `track_id`.
    PartSegment {
        part: u32,
        track_id: u32,
        number: u64,
    },
    /// `sub-p{part}-t{track_id}-{number}.vtt`: WebVTT segment `number` of part `part` of a
    /// sequence, text rendition `track_id` (empty where the part has no subtitles).
    PartSubtitleSegment {
        part: u32,
        track_id: u32,
        number: u64,
    },
    /// `sub-p{part}-t{track_id}.vtt`: the whole text rendition `track_id` of part `part`
    /// as one WebVTT file on the part's Period timeline, for DASH.
    PartSubtitleFile { part: u32, track_id: u32 },
    /// `sub-t{track_id}-init.mp4` (`wvtt`) or `ttml-t{track_id}-init.mp4` (`stpp`): the
    /// DASH init segment of a text track's segments.
    TextInit { track_id: u32, coding: TextCoding },
    /// `sub-t{track_id}-{number}.m4s` or `ttml-t{track_id}-{number}.m4s`: DASH text segment
    /// `number` (1-based, as the title's segments, cut at the same times).
    TextSegment {
        track_id: u32,
        coding: TextCoding,
        number: u64,
    },
    /// `sub-p{part}-t{track_id}-init.mp4` (or `ttml-p...`): the text init segment of part
    /// `part` of a sequence.
    PartTextInit {
        part: u32,
        track_id: u32,
        coding: TextCoding,
    },
    /// `sub-p{part}-t{track_id}-{number}.m4s` (or `ttml-p...`): text segment `number` of
    /// part `part` of a sequence (empty where the part has no subtitles).
    PartTextSegment {
        part: u32,
        track_id: u32,
        coding: TextCoding,
        number: u64,
    },
}

/// How the DASH text segments of a text track are coded (ISO/IEC 14496-30), which names
/// them: `sub-` for WebVTT, `ttml-` for IMSC1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextCoding {
    /// WebVTT in ISO BMFF (`wvtt` sample entry, `vttc`/`vtte` samples).
    Wvtt,
    /// IMSC1 Text Profile TTML (`stpp` sample entry, one document per segment).
    Imsc1,
}

impl TextCoding {
    /// The first word of its resource names.
    fn prefix(self) -> &'static str {
        match self {
            TextCoding::Wvtt => "sub",
            TextCoding::Imsc1 => "ttml",
        }
    }

    /// The coding a name's first word says.
    fn of_prefix(prefix: &str) -> Option<Self> {
        match prefix {
            "sub" => Some(TextCoding::Wvtt),
            "ttml" => Some(TextCoding::Imsc1),
            _ => None,
        }
    }
}

/// What kind of answer a resource is: its metrics label and the request class it is
/// admitted in follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    /// A multivariant playlist (`master.m3u8`, `master-ts.m3u8`).
    Multivariant,
    /// The DASH MPD.
    Mpd,
    /// A media, I-frame or subtitle playlist.
    MediaPlaylist,
    /// An init segment.
    Init,
    /// A media segment or a trick-play key frame.
    Segment,
    /// A WebVTT segment or file.
    Subtitle,
}

impl ResourceKind {
    /// The stable short name used as the `route` label of metrics and spans.
    pub fn label(self) -> &'static str {
        match self {
            ResourceKind::Multivariant => "master",
            ResourceKind::Mpd => "mpd",
            ResourceKind::MediaPlaylist => "media_playlist",
            ResourceKind::Init => "init",
            ResourceKind::Segment => "segment",
            ResourceKind::Subtitle => "subtitle",
        }
    }

    /// True for manifests: text rendered from the title alone, small and cheap to answer.
    pub fn is_manifest(self) -> bool {
        matches!(
            self,
            ResourceKind::Multivariant | ResourceKind::Mpd | ResourceKind::MediaPlaylist
        )
    }
}

/// The facts about a resource that routing, admission, metrics, spans and protection ask
/// for, answered here once rather than in a `match` of their own each.
impl Resource {
    /// What kind of answer it is.
    pub fn kind(&self) -> ResourceKind {
        match self {
            Resource::Multivariant | Resource::MultivariantTs => ResourceKind::Multivariant,
            Resource::Mpd => ResourceKind::Mpd,
            Resource::MediaPlaylist { .. }
            | Resource::IframePlaylist { .. }
            | Resource::TsMediaPlaylist { .. }
            | Resource::TsIframePlaylist { .. } => ResourceKind::MediaPlaylist,
            Resource::Init { .. } | Resource::PartInit { .. } => ResourceKind::Init,
            Resource::Segment { .. }
            | Resource::KeyFrame { .. }
            | Resource::TsSegment { .. }
            | Resource::PartSegment { .. } => ResourceKind::Segment,
            Resource::SubtitleSegment { .. }
            | Resource::SubtitleFile { .. }
            | Resource::TsSubtitleSegment { .. }
            | Resource::PartSubtitleSegment { .. }
            | Resource::PartSubtitleFile { .. }
            | Resource::TextInit { .. }
            | Resource::TextSegment { .. }
            | Resource::PartTextInit { .. }
            | Resource::PartTextSegment { .. } => ResourceKind::Subtitle,
        }
    }

    /// The track it belongs to; `None` for the title-wide manifests.
    pub fn track_id(&self) -> Option<u32> {
        match *self {
            Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd => None,
            Resource::MediaPlaylist { track_id }
            | Resource::IframePlaylist { track_id }
            | Resource::Init { track_id }
            | Resource::SubtitleFile { track_id }
            | Resource::TsMediaPlaylist { track_id }
            | Resource::TsIframePlaylist { track_id }
            | Resource::Segment { track_id, .. }
            | Resource::KeyFrame { track_id, .. }
            | Resource::SubtitleSegment { track_id, .. }
            | Resource::TsSegment { track_id, .. }
            | Resource::TsSubtitleSegment { track_id, .. }
            | Resource::PartInit { track_id, .. }
            | Resource::PartSegment { track_id, .. }
            | Resource::PartSubtitleSegment { track_id, .. }
            | Resource::PartSubtitleFile { track_id, .. }
            | Resource::TextInit { track_id, .. }
            | Resource::TextSegment { track_id, .. }
            | Resource::PartTextInit { track_id, .. }
            | Resource::PartTextSegment { track_id, .. } => Some(track_id),
        }
    }

    /// The part of a sequence it belongs to (1-based), for the resources of one part.
    pub fn part(&self) -> Option<u32> {
        match *self {
            Resource::PartInit { part, .. }
            | Resource::PartSegment { part, .. }
            | Resource::PartSubtitleSegment { part, .. }
            | Resource::PartSubtitleFile { part, .. }
            | Resource::PartTextInit { part, .. }
            | Resource::PartTextSegment { part, .. } => Some(part),
            _ => None,
        }
    }

    /// Its number (1-based) among its track's segments or key frames, if it is one.
    pub fn number(&self) -> Option<u64> {
        match *self {
            Resource::Segment { number, .. }
            | Resource::KeyFrame { number, .. }
            | Resource::SubtitleSegment { number, .. }
            | Resource::TsSegment { number, .. }
            | Resource::TsSubtitleSegment { number, .. }
            | Resource::PartSegment { number, .. }
            | Resource::PartSubtitleSegment { number, .. }
            | Resource::TextSegment { number, .. }
            | Resource::PartTextSegment { number, .. } => Some(number),
            _ => None,
        }
    }

    /// True for the entry points a player starts from (the names with no version folder).
    pub fn is_entry(&self) -> bool {
        matches!(
            self,
            Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd
        )
    }

    /// True for the resources of the MPEG-TS output.
    pub fn is_ts(&self) -> bool {
        matches!(
            self,
            Resource::MultivariantTs
                | Resource::TsMediaPlaylist { .. }
                | Resource::TsIframePlaylist { .. }
                | Resource::TsSegment { .. }
                | Resource::TsSubtitleSegment { .. }
        )
    }
}

impl Resource {
    /// Parse a file name (the last path segment of a request).
    pub fn parse(name: &str) -> Option<Self> {
        if let Some(ts) = Self::parse_ts(name) {
            return Some(ts);
        }
        match name {
            "master.m3u8" => return Some(Self::Multivariant),
            "master-ts.m3u8" => return Some(Self::MultivariantTs),
            "manifest.mpd" => return Some(Self::Mpd),
            _ => {}
        }
        if let Some(rest) = name
            .strip_prefix("index-")
            .and_then(|r| r.strip_suffix(".m3u8"))
        {
            let (track_id, "") = parse_track_label(rest)? else {
                return None;
            };
            return Some(Self::MediaPlaylist { track_id });
        }
        if let Some(rest) = name
            .strip_prefix("iframes-")
            .and_then(|r| r.strip_suffix(".m3u8"))
        {
            let (track_id, "") = parse_track_label(rest)? else {
                return None;
            };
            return Some(Self::IframePlaylist { track_id });
        }
        if let Some(rest) = name
            .strip_prefix("ifr-")
            .and_then(|r| r.strip_suffix(".m4s"))
        {
            let (track_id, rest) = parse_track_label(rest)?;
            let number = parse_number(rest.strip_prefix('-')?)?;
            return (number >= 1).then_some(Self::KeyFrame { track_id, number });
        }
        if let Some(part) = Self::parse_part(name) {
            return part;
        }
        if let Some(rest) = name
            .strip_prefix("init-")
            .and_then(|r| r.strip_suffix(".mp4"))
        {
            let (track_id, "") = parse_track_label(rest)? else {
                return None;
            };
            return Some(Self::Init { track_id });
        }
        if let Some(text) = Self::parse_text(name) {
            return text;
        }
        if let Some(rest) = name
            .strip_prefix("sub-")
            .and_then(|r| r.strip_suffix(".vtt"))
        {
            let (track_id, rest) = parse_track_label(rest)?;
            if rest.is_empty() {
                return Some(Self::SubtitleFile { track_id });
            }
            let number = parse_number(rest.strip_prefix('-')?)?;
            return (number >= 1).then_some(Self::SubtitleSegment { track_id, number });
        }
        let rest = name.strip_prefix("seg-")?.strip_suffix(".m4s")?;
        let (track_id, rest) = parse_track_label(rest)?;
        let number = parse_number(rest.strip_prefix('-')?)?;
        (number >= 1).then_some(Self::Segment { track_id, number })
    }

    /// Parse the names of DASH text segments (`sub-t3-init.mp4`, `ttml-t3-2.m4s`): `None`
    /// when `name` is not one of them, `Some(None)` when it is malformed.
    fn parse_text(name: &str) -> Option<Option<Self>> {
        let (prefix, rest) = name.split_once('-')?;
        let coding = TextCoding::of_prefix(prefix)?;
        let (label, ext) = rest.rsplit_once('.')?;
        if !matches!(ext, "mp4" | "m4s") {
            return None;
        }
        let parsed = (|| {
            let (track_id, tail) = parse_track_label(label)?;
            match (ext, tail.strip_prefix('-')?) {
                ("mp4", "init") => Some(Self::TextInit { track_id, coding }),
                ("m4s", number) => {
                    let number = parse_number(number).filter(|n| *n >= 1)?;
                    Some(Self::TextSegment {
                        track_id,
                        coding,
                        number,
                    })
                }
                _ => None,
            }
        })();
        Some(parsed)
    }

    /// Parse the names of a sequence part's resources (`init-p2-...`, `seg-p2-...`,
    /// `sub-p2-...`): `None` when `name` is not one of them, `Some(None)` when it is
    /// malformed.
    fn parse_part(name: &str) -> Option<Option<Self>> {
        let (kind, rest) = name.split_once("-p")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !matches!(kind, "init" | "seg" | "sub" | "ttml") {
            return None;
        }
        let parsed = (|| {
            let part: u32 = parse_number(rest.get(..digits)?).filter(|p| *p >= 1)?;
            let rest = rest.get(digits..)?.strip_prefix('-')?;
            let (label, ext) = rest.rsplit_once('.')?;
            let (track_id, tail) = parse_track_label(label)?;
            if let (Some(coding), "mp4", "-init") = (TextCoding::of_prefix(kind), ext, tail) {
                return Some(Self::PartTextInit {
                    part,
                    track_id,
                    coding,
                });
            }
            let number = match tail {
                "" => None,
                tail => Some(parse_number(tail.strip_prefix('-')?).filter(|n| *n >= 1)?),
            };
            match (kind, ext, number) {
                ("init", "mp4", None) => Some(Self::PartInit { part, track_id }),
                ("seg", "m4s", Some(number)) => Some(Self::PartSegment {
                    part,
                    track_id,
                    number,
                }),
                ("sub", "vtt", Some(number)) => Some(Self::PartSubtitleSegment {
                    part,
                    track_id,
                    number,
                }),
                ("sub", "vtt", None) => Some(Self::PartSubtitleFile { part, track_id }),
                (_, "m4s", Some(number)) => Some(Self::PartTextSegment {
                    part,
                    track_id,
                    coding: TextCoding::of_prefix(kind)?,
                    number,
                }),
                _ => None,
            }
        })();
        Some(parsed)
    }

    /// DASH `SegmentTemplate@initialization` of part `part` of a sequence.
    pub fn dash_part_init_template(part: u32) -> String {
        format!("init-p{part}-$RepresentationID$.mp4")
    }

    /// DASH `SegmentTemplate@media` of part `part` of a sequence.
    pub fn dash_part_media_template(part: u32) -> String {
        format!("seg-p{part}-$RepresentationID$-$Number$.m4s")
    }

    /// DASH `SegmentTemplate@initialization` of text segments coded `coding`, of part
    /// `part` of a sequence when given.
    pub fn dash_text_init_template(coding: TextCoding, part: Option<u32>) -> String {
        let prefix = coding.prefix();
        match part {
            Some(part) => format!("{prefix}-p{part}-$RepresentationID$-init.mp4"),
            None => format!("{prefix}-$RepresentationID$-init.mp4"),
        }
    }

    /// DASH `SegmentTemplate@media` of text segments coded `coding`, of part `part` of a
    /// sequence when given.
    pub fn dash_text_media_template(coding: TextCoding, part: Option<u32>) -> String {
        let prefix = coding.prefix();
        match part {
            Some(part) => format!("{prefix}-p{part}-$RepresentationID$-$Number$.m4s"),
            None => format!("{prefix}-$RepresentationID$-$Number$.m4s"),
        }
    }

    /// Parse the names of the MPEG-TS output (`*-ts-*`).
    fn parse_ts(name: &str) -> Option<Self> {
        let (kind, rest) = name.split_once("-ts-")?;
        let (label, ext) = rest.rsplit_once('.')?;
        let (track_id, tail) = parse_track_label(label)?;
        let number = match tail {
            "" => None,
            tail => Some(parse_number(tail.strip_prefix('-')?).filter(|n| *n >= 1)?),
        };
        match (kind, ext, number) {
            ("index", "m3u8", None) => Some(Self::TsMediaPlaylist { track_id }),
            ("iframes", "m3u8", None) => Some(Self::TsIframePlaylist { track_id }),
            ("seg", "ts", Some(number)) => Some(Self::TsSegment { track_id, number }),
            ("sub", "vtt", Some(number)) => Some(Self::TsSubtitleSegment { track_id, number }),
            _ => None,
        }
    }

    /// DASH `SegmentTemplate@initialization` for representations named `t{track_id}`.
    pub const DASH_INIT_TEMPLATE: &'static str = "init-$RepresentationID$.mp4";
    /// DASH `SegmentTemplate@media` for representations named `t{track_id}`.
    pub const DASH_MEDIA_TEMPLATE: &'static str = "seg-$RepresentationID$-$Number$.m4s";

    /// DASH `Representation@id` of a track, matching the templates above.
    pub fn dash_representation_id(track_id: u32) -> String {
        TrackLabel(track_id).to_string()
    }

    /// DASH `Representation@id` of a video track's trick-play Representation: unique in
    /// the Period, beside the track's own.
    pub fn dash_trick_representation_id(track_id: u32) -> String {
        format!("ifr-{}", TrackLabel(track_id))
    }

    /// DASH `SegmentTemplate@media` of a video track's trick-play Representation: its key
    /// frames ([`Resource::KeyFrame`]) by `$Number$`.
    pub fn dash_trick_media_template(track_id: u32) -> String {
        format!("ifr-{}-$Number$.m4s", TrackLabel(track_id))
    }
}

/// Bits of a title's track id that hold the source track id; the bits above hold the file
/// number (1-based) of a title document's entry, 0 for a plain MP4.
const FILE_SHIFT: u32 = 20;
/// Largest file number a document title's track id can hold.
pub const MAX_DOCUMENT_FILES: u32 = u32::MAX >> FILE_SHIFT;

/// The track id a title document's rendition goes by: file number `file` (1-based, in
/// document order) and the track's own id, packed so that resource names say both
/// (`index-f2-t1.m3u8`). `None` when the track id is 2^20 or more, or the file number out
/// of range; plain MP4s keep their own track ids and names (`index-t1.m3u8`).
pub fn document_track_id(file: u32, track_id: u32) -> Option<u32> {
    let fits = (1..=MAX_DOCUMENT_FILES).contains(&file) && track_id < (1 << FILE_SHIFT);
    fits.then_some((file << FILE_SHIFT) | track_id)
}

/// The file number and source track id of a packed document track id, `None` for a plain
/// MP4's track id.
pub fn split_document_track_id(id: u32) -> Option<(u32, u32)> {
    let file = id >> FILE_SHIFT;
    (file > 0).then_some((file, id & ((1 << FILE_SHIFT) - 1)))
}

/// How messages and NAMEs refer to a track: its id (`2`), or `f1-t2` for a title
/// document's rendition.
pub fn track_label(track_id: u32) -> String {
    match split_document_track_id(track_id) {
        Some(_) => TrackLabel(track_id).to_string(),
        None => track_id.to_string(),
    }
}

/// The part of a resource name naming the track: `t{id}`, or `f{file}-t{id}` for a title
/// document's rendition (see [`document_track_id`]).
struct TrackLabel(u32);

impl fmt::Display for TrackLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match split_document_track_id(self.0) {
            Some((file, track)) => write!(f, "f{file}-t{track}"),
            None => write!(f, "t{}", self.0),
        }
    }
}

/// Parse a [`TrackLabel`] at the start of `s`; returns the track id and what follows.
/// Only the canonical spelling parses, so every resource has exactly one name.
fn parse_track_label(s: &str) -> Option<(u32, &str)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    if let Some(rest) = s.strip_prefix('f') {
        let n = digits(rest);
        let file: u32 = parse_number(rest.get(..n)?)?;
        let rest = rest.get(n..)?.strip_prefix("-t")?;
        let m = digits(rest);
        let track: u32 = parse_number(rest.get(..m)?)?;
        return Some((document_track_id(file, track)?, rest.get(m..)?));
    }
    let rest = s.strip_prefix('t')?;
    let n = digits(rest);
    let id: u32 = parse_number(rest.get(..n)?)?;
    // A plain id with file bits set is spelled `f..-t..`, never `t..`.
    split_document_track_id(id)
        .is_none()
        .then_some((id, rest.get(n..)?))
}

/// The token of a version folder (`v{token}/`): 16 lowercase hex digits, a hash of
/// everything the bytes under the folder depend on, so the token changes whenever they
/// would ([`crate::package::Title::version_token`] for the clear output; an encrypted
/// output hashes its scheme and key in too).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionToken(String);

impl VersionToken {
    /// The token of a 64-bit hash.
    pub fn of_hash(hash: u64) -> Self {
        Self(format!("{hash:016x}"))
    }

    /// Parse a token: 16 lowercase hex digits, else `None`.
    pub fn parse(token: &str) -> Option<Self> {
        let hex = (token.bytes()).all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        (token.len() == 16 && hex).then(|| Self(token.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VersionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A token reads as its digits wherever a `&str` is asked for (IV derivation, ETags).
impl std::ops::Deref for VersionToken {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for VersionToken {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for VersionToken {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<VersionToken> for &str {
    fn eq(&self, other: &VersionToken) -> bool {
        *self == other.0
    }
}

/// The folder, relative to `/vod/KEY/`, that versioned resources live in: `v{token}/`.
pub fn version_folder(token: &VersionToken) -> String {
    format!("v{token}/")
}

/// Parse a version folder name (`v` + 16 lowercase hex digits) into its token.
pub fn parse_version_folder(segment: &str) -> Option<VersionToken> {
    VersionToken::parse(segment.strip_prefix('v')?)
}

/// A decimal number without sign, leading zeros or excess digits, so every resource has
/// exactly one name.
fn parse_number<T: std::str::FromStr>(s: &str) -> Option<T> {
    let canonical = !s.is_empty()
        && s.len() <= 19
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Multivariant => f.write_str("master.m3u8"),
            Self::MultivariantTs => f.write_str("master-ts.m3u8"),
            Self::Mpd => f.write_str("manifest.mpd"),
            Self::MediaPlaylist { track_id } => write!(f, "index-{}.m3u8", TrackLabel(*track_id)),
            Self::Init { track_id } => write!(f, "init-{}.mp4", TrackLabel(*track_id)),
            Self::Segment { track_id, number } => {
                write!(f, "seg-{}-{number}.m4s", TrackLabel(*track_id))
            }
            Self::SubtitleSegment { track_id, number } => {
                write!(f, "sub-{}-{number}.vtt", TrackLabel(*track_id))
            }
            Self::SubtitleFile { track_id } => write!(f, "sub-{}.vtt", TrackLabel(*track_id)),
            Self::IframePlaylist { track_id } => {
                write!(f, "iframes-{}.m3u8", TrackLabel(*track_id))
            }
            Self::KeyFrame { track_id, number } => {
                write!(f, "ifr-{}-{number}.m4s", TrackLabel(*track_id))
            }
            Self::TsMediaPlaylist { track_id } => {
                write!(f, "index-ts-{}.m3u8", TrackLabel(*track_id))
            }
            Self::TsSegment { track_id, number } => {
                write!(f, "seg-ts-{}-{number}.ts", TrackLabel(*track_id))
            }
            Self::TsSubtitleSegment { track_id, number } => {
                write!(f, "sub-ts-{}-{number}.vtt", TrackLabel(*track_id))
            }
            Self::TsIframePlaylist { track_id } => {
                write!(f, "iframes-ts-{}.m3u8", TrackLabel(*track_id))
            }
            Self::PartInit { part, track_id } => {
                write!(f, "init-p{part}-{}.mp4", TrackLabel(*track_id))
            }
            Self::PartSegment {
                part,
                track_id,
                number,
            } => write!(f, "seg-p{part}-{}-{number}.m4s", TrackLabel(*track_id)),
            Self::PartSubtitleSegment {
                part,
                track_id,
                number,
            } => write!(f, "sub-p{part}-{}-{number}.vtt", TrackLabel(*track_id)),
            Self::PartSubtitleFile { part, track_id } => {
                write!(f, "sub-p{part}-{}.vtt", TrackLabel(*track_id))
            }
            Self::TextInit { track_id, coding } => {
                write!(f, "{}-{}-init.mp4", coding.prefix(), TrackLabel(*track_id))
            }
            Self::TextSegment {
                track_id,
                coding,
                number,
            } => write!(
                f,
                "{}-{}-{number}.m4s",
                coding.prefix(),
                TrackLabel(*track_id)
            ),
            Self::PartTextInit {
                part,
                track_id,
                coding,
            } => write!(
                f,
                "{}-p{part}-{}-init.mp4",
                coding.prefix(),
                TrackLabel(*track_id)
            ),
            Self::PartTextSegment {
                part,
                track_id,
                coding,
                number,
            } => write!(
                f,
                "{}-p{part}-{}-{number}.m4s",
                coding.prefix(),
                TrackLabel(*track_id)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
