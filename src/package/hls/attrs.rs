//! What the HLS playlists share: the attribute-list builder (RFC 8216 4.2, quoting rules
//! in one place), the version and group ids, and the values a rendition gives its tags
//! (codecs, language, names, video range).

use std::fmt::{Display, Write as _};

use crate::media::{CodecInfo, TrackIndex, TrackKind, VideoRange};
use crate::package::names::track_label;
use crate::package::signalling::ManifestOptions;
use crate::package::{Rendition, Title};

/// `EXT-X-MAP` in a media playlist needs version 6; 7 is what fMP4 players expect.
pub(super) const VERSION: u32 = 7;
/// `GROUP-ID` of the audio renditions.
pub(super) const AUDIO_GROUP: &str = "audio";
/// `GROUP-ID` of the subtitle renditions (text tracks as WebVTT).
pub(super) const SUBTITLES_GROUP: &str = "subs";

/// Where a multivariant playlist's URIs point: the version folder they are written under
/// (`v{token}/`, from [`ManifestOptions::folder`]) and the options whose query each carries.
#[derive(Debug, Clone, Copy)]
pub(super) struct UriBase<'a> {
    pub options: &'a ManifestOptions,
    pub folder: &'a str,
}

pub(super) fn track<'a>(title: &'a Title, rendition: &Rendition) -> Option<&'a TrackIndex> {
    title.index.tracks.get(rendition.track_pos)
}

pub(super) fn language<'a>(title: &'a Title, rendition: &Rendition) -> Option<&'a str> {
    let language = track(title, rendition)?.language.as_deref();
    language.filter(|l| !l.is_empty())
}

/// The distinct codecs of `members`, comma-joined, or `None` when one is unknown (a partial
/// `CODECS` would tell players the stream lacks that media).
pub(super) fn codecs(title: &Title, members: &[&Rendition]) -> Option<String> {
    let mut list: Vec<&str> = Vec::new();
    for rendition in members {
        let codec = track(title, rendition).map_or("", |t| hls_codec(&t.codec));
        if codec.is_empty() {
            return None;
        }
        if !list.contains(&codec) {
            list.push(codec);
        }
    }
    (!list.is_empty()).then(|| list.join(","))
}

/// The `CODECS` entry of a track: its RFC 6381 string, except where HLS players name a
/// codec otherwise: MP3 (MPEG-1/2 Audio in `mp4a`, `mp4a.6B`/`mp4a.69`) is `mp4a.40.34`,
/// the form Apple's tools use and hls.js special-cases (it maps it to MSE's `mp3`, and
/// with `mp4a.6B` it refuses the whole variant as incompatible, measured with hls.js
/// 1.7.4); FLAC is `fLaC`, the FLAC-in-ISOBMFF spelling (hls.js also tries `flac`).
pub(super) fn hls_codec(codec: &CodecInfo) -> &str {
    match codec.rfc6381.as_str() {
        "mp4a.6B" | "mp4a.69" => "mp4a.40.34",
        _ if &codec.fourcc == b"fLaC" => "fLaC",
        other => other,
    }
}

/// `VIDEO-RANGE` (PQ for transfer characteristics 16, HLG for 18; SDR, the default when
/// the attribute is absent, is left out) and `SUPPLEMENTAL-CODECS` (Dolby Vision over a
/// base layer other players decode: `dvh1.08.07/db1p`, as the Dolby Vision HLS
/// specification writes it) of a variant whose video is `codec` (4.4.6.2).
pub(super) fn video_signalling(mut attrs: Attrs, codec: Option<&CodecInfo>) -> Attrs {
    let Some(codec) = codec else {
        return attrs;
    };
    let range = codec.video_range();
    if range != VideoRange::Sdr {
        attrs = attrs.plain("VIDEO-RANGE", range.as_str());
    }
    match codec
        .supplemental_dolby_vision()
        .and_then(|dv| dv.supplemental_codecs())
    {
        Some(supplemental) => attrs.quoted("SUPPLEMENTAL-CODECS", supplemental),
        None => attrs,
    }
}

/// The picture attributes of a variant led by `first`: `RESOLUTION`, `FRAME-RATE` and, for
/// video, its range and supplemental codecs (RFC 8216 4.4.6.2).
pub(super) fn picture_attributes(mut attrs: Attrs, title: &Title, first: &Rendition) -> Attrs {
    if let Some(c) = track(title, first)
        .map(|t| &t.codec)
        .filter(|c| c.width > 0 && c.height > 0)
    {
        attrs = attrs.plain("RESOLUTION", format_args!("{}x{}", c.width, c.height));
    }
    if let Some(rate) = first.frame_rate.filter(|r| r.is_finite() && *r > 0.0) {
        attrs = attrs.plain("FRAME-RATE", format_args!("{rate:.3}"));
    }
    if first.kind == TrackKind::Video {
        attrs = video_signalling(attrs, track(title, first).map(|t| &t.codec));
    }
    attrs
}

/// `NAME`s of the audio renditions, unique within the group: the language, else
/// `audio N` (N counting audio renditions from 1); a shared language gets the track id.
pub(super) fn audio_names(title: &Title, audios: &[&Rendition]) -> Vec<String> {
    let bases: Vec<String> = (audios.iter().enumerate())
        .map(|(n, a)| language(title, a).map_or_else(|| format!("audio {}", n + 1), str::to_owned))
        .collect();
    let shared = |base: &String| bases.iter().filter(|b| *b == base).count() > 1;
    (bases.iter().zip(audios))
        .map(|(base, audio)| match (&audio.name, shared(base)) {
            // A name a title document gives is the author's choice, kept as it is.
            (Some(name), _) => name.clone(),
            (None, true) => format!("{base} (track {})", track_label(audio.track_id)),
            (None, false) => base.clone(),
        })
        .collect()
}

/// An attribute list (RFC 8216 4.2) under construction; quoting rules live here only.
#[derive(Default)]
pub(super) struct Attrs(pub(super) String);

impl Attrs {
    /// An enumerated string, decimal-integer, decimal-float or resolution, as is.
    pub(super) fn plain(mut self, name: &str, value: impl Display) -> Self {
        let comma = if self.0.is_empty() { "" } else { "," };
        let _ = write!(self.0, "{comma}{name}={value}");
        self
    }

    /// A quoted-string, which cannot hold a double quote, CR or LF: those are replaced.
    pub(super) fn quoted(self, name: &str, value: impl Display) -> Self {
        let clean = quotable(value);
        self.plain(name, format_args!("\"{clean}\""))
    }

    /// `URI`, a quoted-string, with the query of `options` (as the request gave it).
    pub(super) fn uri(self, uri: impl Display, options: &ManifestOptions) -> Self {
        let clean = quotable(uri);
        let uri = options.with_query(&clean);
        self.plain("URI", format_args!("\"{uri}\""))
    }
}

/// `value` as a quoted-string may hold it: double quotes, CR and LF replaced.
fn quotable(value: impl Display) -> String {
    (value.to_string().chars())
        .map(|c| match c {
            '"' => '\'',
            '\r' | '\n' => ' ',
            c => c,
        })
        .collect()
}
