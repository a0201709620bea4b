//! HLS playlists for CMAF segments: the multivariant playlist and one media playlist per
//! rendition (RFC 8216 and draft-pantos-hls-rfc8216bis).
//!
//! Owns the HLS text format only: tags and attribute lists (4.2, quoting rules in one
//! builder), `EXT-X-MEDIA` audio groups (4.4.6.1), `EXT-X-STREAM-INF` bandwidth, codecs,
//! `VIDEO-RANGE` and `SUPPLEMENTAL-CODECS` (4.4.6.2), the VOD media playlist with
//! `EXT-X-MAP` and `EXTINF` (4.4.4), and the I-frame playlists of video renditions
//! (`EXT-X-I-FRAME-STREAM-INF`, 4.4.6.3; `EXT-X-I-FRAMES-ONLY`, 4.4.3.6). Every URI is
//! a relative name made by [`Resource`]; times come from the segment plan.
//!
//! What a playlist says beyond its title comes in as [`ManifestOptions`] and is written in
//! place: the version folder, the query every URI carries, and the keys
//! (`EXT-X-SESSION-KEY` after the header, `EXT-X-KEY` before the segments it keys, after
//! `EXT-X-MAP` so the init segment stays clear).

use std::fmt::{Display, Write as _};

mod ts;
pub use ts::{
    render_ts_iframe_playlist, render_ts_iframe_playlist_with, render_ts_media_playlist,
    render_ts_media_playlist_with, render_ts_multivariant_playlist,
    render_ts_multivariant_playlist_with, render_ts_subtitle_playlist,
    render_ts_subtitle_playlist_with, ts_subtitle_segment,
};

use super::names::track_label;
use super::protect::hls_segment_iv;
use super::protect::manifest::{key_attributes, HlsKey};
use super::signalling::ManifestOptions;
use super::trick;
use super::webvtt::SubtitlePlan;
use super::{Rendition, Resource, Title};
use crate::crypto::keys::{hex, ContentKey};
use crate::crypto::Scheme;
use crate::media::{CodecInfo, TrackIndex, TrackKind, VideoRange};

/// `EXT-X-MAP` in a media playlist needs version 6; 7 is what fMP4 players expect.
const VERSION: u32 = 7;
/// `GROUP-ID` of the audio renditions.
const AUDIO_GROUP: &str = "audio";
/// `GROUP-ID` of the subtitle renditions (text tracks as WebVTT).
const SUBTITLES_GROUP: &str = "subs";

/// Render the multivariant playlist (`master.m3u8`) of `title`.
///
/// Videos become variant streams that reference one audio group holding every audio
/// rendition; an audio-only title offers each audio rendition as its own variant.
pub fn render_multivariant_playlist(title: &Title) -> String {
    render_multivariant_playlist_with(title, &ManifestOptions::default())
}

/// [`render_multivariant_playlist`] as `options` say: their version folder and query in
/// every URI, `EXT-X-SESSION-KEY` of their protection, I-frame playlists only with trick
/// play.
pub fn render_multivariant_playlist_with(title: &Title, options: &ManifestOptions) -> String {
    let folder = options.folder(title);
    let mut out = format!("#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    session_key(&mut out, options, &folder, false);
    subtitle_renditions(&mut out, title, options, &folder, |track_id| {
        Resource::MediaPlaylist { track_id }
    });
    let (videos, audios): (Vec<&Rendition>, Vec<&Rendition>) = title
        .renditions
        .iter()
        .partition(|r| r.kind == TrackKind::Video);
    if videos.is_empty() {
        for audio in &audios {
            variant(&mut out, title, &[audio], false, (options, &folder));
        }
        return out;
    }
    for (audio, name) in audios.iter().zip(audio_names(title, &audios)) {
        let mut attrs = Attrs::default()
            .plain("TYPE", "AUDIO")
            .quoted("GROUP-ID", AUDIO_GROUP)
            .quoted("NAME", name);
        if let Some(language) = language(title, audio) {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let default = if audio.is_default { "YES" } else { "NO" };
        attrs = attrs.plain("DEFAULT", default).plain("AUTOSELECT", "YES");
        let channels = track(title, audio).map_or(0, |t| t.codec.channels);
        if channels > 0 {
            attrs = attrs.quoted("CHANNELS", channels);
        }
        let uri = Resource::MediaPlaylist {
            track_id: audio.track_id,
        };
        let attrs = attrs.uri(format_args!("{folder}{uri}"), options);
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
    for video in &videos {
        let members: Vec<&Rendition> = std::iter::once(*video)
            .chain(audios.iter().copied())
            .collect();
        variant(
            &mut out,
            title,
            &members,
            !audios.is_empty(),
            (options, &folder),
        );
    }
    if options.trick_play {
        for video in &videos {
            iframe_variant(&mut out, title, video, (options, &folder));
        }
    }
    out
}

/// `#EXT-X-SESSION-KEY` (4.4.6.5) of a protected multivariant playlist, for MPEG-TS (`ts`)
/// or CMAF, so players can set up keys before loading media playlists: the key of
/// AES-128 and SAMPLE-AES MPEG-TS under the version folder, the licence for ClearKey.
pub(super) fn session_key(out: &mut String, options: &ManifestOptions, folder: &str, ts: bool) {
    let Some(p) = &options.protection else {
        return;
    };
    let method = HlsKey::of(p.scheme, ts);
    let uri = match method {
        HlsKey::SampleAesClearKey => p.licence_url.clone(),
        _ => format!("{folder}{}", p.key_name),
    };
    let attributes = key_attributes(method, &options.with_query(&uri), &p.key);
    let _ = writeln!(out, "#EXT-X-SESSION-KEY:{attributes}");
}

/// `#EXT-X-I-FRAME-STREAM-INF` of a video rendition's I-frame playlist (4.4.6.3): the
/// attributes of a variant but for FRAME-RATE and the rendition groups, its rates those of
/// the key frames offered ([`trick::rates`]).
fn iframe_variant(
    out: &mut String,
    title: &Title,
    video: &Rendition,
    (options, folder): (&ManifestOptions, &str),
) {
    let Some(track) = track(title, video) else {
        return;
    };
    let frames = trick::key_frames(title, video);
    if frames.is_empty() {
        return;
    }
    let rates = trick::rates(&frames, video, track.timescale);
    let mut attrs = Attrs::default()
        .plain("BANDWIDTH", rates.peak_bandwidth)
        .plain("AVERAGE-BANDWIDTH", rates.average_bandwidth);
    if let Some(codecs) = codecs(title, &[video]) {
        attrs = attrs.quoted("CODECS", codecs);
    }
    let codec = &track.codec;
    if codec.width > 0 && codec.height > 0 {
        attrs = attrs.plain(
            "RESOLUTION",
            format_args!("{}x{}", codec.width, codec.height),
        );
    }
    attrs = video_signalling(attrs, Some(codec));
    let uri = Resource::IframePlaylist {
        track_id: video.track_id,
    };
    let attrs = attrs.uri(format_args!("{folder}{uri}"), options);
    let _ = writeln!(out, "#EXT-X-I-FRAME-STREAM-INF:{}", attrs.0);
}

/// Render the I-frame playlist (`iframes-tN.m3u8`) of video rendition `rendition`: one
/// segment per key frame offered (4.3.3.6), each the whole of its one-frame resource
/// (`EXT-X-BYTERANGE` length@0), lasting until the next (see [`trick`]).
pub fn render_iframe_playlist(title: &Title, rendition: &Rendition) -> String {
    render_iframe_playlist_with(title, rendition, &ManifestOptions::default())
}

/// [`render_iframe_playlist`] with the query of `options` in every URI. Trick play is
/// clear only, so no protection is signalled.
pub fn render_iframe_playlist_with(
    title: &Title,
    rendition: &Rendition,
    options: &ManifestOptions,
) -> String {
    let track_id = rendition.track_id;
    let timescale = track(title, rendition).map_or(1, |t| u64::from(t.timescale.max(1)));
    let frames = trick::key_frames(title, rendition);
    let micros = |ticks: u64| {
        let us =
            (u128::from(ticks) * 1_000_000 + u128::from(timescale) / 2) / u128::from(timescale);
        u64::try_from(us).unwrap_or(u64::MAX)
    };
    let rounded = frames
        .iter()
        .map(|f| (micros(f.duration) + 500_000) / 1_000_000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-I-FRAMES-ONLY\n"
    );
    let map = Attrs::default().uri(Resource::Init { track_id }, options);
    let _ = writeln!(out, "#EXT-X-MAP:{}", map.0);
    for (number, frame) in (1u64..).zip(&frames) {
        let us = micros(frame.duration);
        let (secs, fraction) = (us / 1_000_000, us % 1_000_000);
        let resource = Resource::KeyFrame { track_id, number }.to_string();
        let _ = writeln!(
            out,
            "#EXTINF:{secs}.{fraction:06},\n#EXT-X-BYTERANGE:{}@0\n{}",
            frame.bytes,
            options.with_query(&resource)
        );
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// `#EXT-X-STREAM-INF` and URI of the variant playing `members[0]` with the audio group of
/// `members[1..]`, if any: its rates are the first's plus the group's largest (4.4.6.2).
fn variant(
    out: &mut String,
    title: &Title,
    members: &[&Rendition],
    with_audio: bool,
    (options, folder): (&ManifestOptions, &str),
) {
    let Some((first, group)) = members.split_first() else {
        return;
    };
    let peak = group.iter().map(|a| a.peak_bandwidth).max().unwrap_or(0);
    let average = group.iter().map(|a| a.average_bandwidth).max().unwrap_or(0);
    let mut attrs = Attrs::default()
        .plain("BANDWIDTH", first.peak_bandwidth.saturating_add(peak))
        .plain(
            "AVERAGE-BANDWIDTH",
            first.average_bandwidth.saturating_add(average),
        );
    if let Some(codecs) = codecs(title, members) {
        attrs = attrs.quoted("CODECS", codecs);
    }
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
    if with_audio {
        attrs = attrs.quoted("AUDIO", AUDIO_GROUP);
    }
    if !title.index.text_tracks.is_empty() || !title.sidecars.is_empty() {
        attrs = attrs.quoted("SUBTITLES", SUBTITLES_GROUP);
    }
    let uri = Resource::MediaPlaylist {
        track_id: first.track_id,
    };
    let uri = format!("{folder}{uri}");
    let _ = writeln!(
        out,
        "#EXT-X-STREAM-INF:{}\n{}",
        attrs.0,
        options.with_query(&uri)
    );
}

/// Render the media playlist (`index-tN.m3u8`) of one rendition of `title`.
///
/// Lists the rendition's segments with their exact durations (microsecond precision).
/// Zero-length segments at the start or end of a track (a track that starts late or ends
/// early) are left out; every listed name keeps its plan number.
pub fn render_media_playlist(title: &Title, rendition: &Rendition) -> String {
    render_media_playlist_with(title, rendition, &ManifestOptions::default())
}

/// [`render_media_playlist`] as `options` say: their query in every URI and, when
/// protected, `EXT-X-KEY` after `EXT-X-MAP` (the init segment stays clear). AES-128: one
/// before each segment with its own IV ([`hls_segment_iv`]), the key named relative to the
/// playlist. SAMPLE-AES (`cbcs`, W3C ClearKey): one before the first segment, the licence.
pub fn render_media_playlist_with(
    title: &Title,
    rendition: &Rendition,
    options: &ManifestOptions,
) -> String {
    let track_id = rendition.track_id;
    let keys = options.protection.as_ref().map(|p| {
        let uri = match p.scheme {
            Scheme::Aes128 => &p.key_name,
            _ => &p.licence_url,
        };
        let iv = |number| hls_segment_iv(&p.clear_token, &p.key.kid, track_id, number);
        SegmentKeys::new(
            HlsKey::of(p.scheme, false),
            &options.with_query(uri),
            &p.key,
            iv,
        )
    });
    media_playlist_of(
        title,
        rendition,
        Some(Resource::Init { track_id }),
        |number| Resource::Segment { track_id, number },
        options,
        keys.as_ref(),
    )
}

/// How a media playlist's segments are keyed: the method, the `EXT-X-KEY` attributes but
/// the IV, and the IV of each segment number.
pub(super) struct SegmentKeys<'a> {
    method: HlsKey,
    attributes: String,
    iv: Box<dyn Fn(u64) -> [u8; 16] + 'a>,
}

impl<'a> SegmentKeys<'a> {
    /// Keys of `method` at `uri` (with its query), segment `number`'s IV `iv(number)`.
    pub(super) fn new(
        method: HlsKey,
        uri: &str,
        key: &ContentKey,
        iv: impl Fn(u64) -> [u8; 16] + 'a,
    ) -> Self {
        Self {
            method,
            attributes: key_attributes(method, uri, key),
            iv: Box::new(iv),
        }
    }

    /// `#EXT-X-KEY` before segment `number`, if one goes there: before each segment
    /// with an IV per segment, else before the first (`first`) only. ClearKey's has no IV.
    fn write(&self, out: &mut String, number: u64, first: bool) {
        if !(first || self.method.per_segment()) {
            return;
        }
        let attributes = &self.attributes;
        let _ = match self.method {
            HlsKey::SampleAesClearKey => writeln!(out, "#EXT-X-KEY:{attributes}"),
            _ => writeln!(
                out,
                "#EXT-X-KEY:{attributes},IV=0x{}",
                hex(&(self.iv)(number))
            ),
        };
    }
}

/// Render the media playlist of a muxed fMP4 stream of `members` (nginx-vod's
/// `index-v1-a1.m3u8`): the title's planned segments, timed and listed as the first video
/// member's own media playlist (else the first member's), so a muxed segment N is the
/// CMAF segments N of its members; segment `number` named by `segment(number)`, with
/// `EXT-X-MAP` of `init`. `None` without members.
pub fn render_muxed_media_playlist<S: Display>(
    title: &Title,
    members: &[&Rendition],
    init: impl Display,
    segment: impl Fn(u64) -> S,
) -> Option<String> {
    let options = ManifestOptions::default();
    render_muxed_media_playlist_with(title, members, init, segment, &options)
}

/// [`render_muxed_media_playlist`] with the query of `options` in every URI. Muxed fMP4
/// is clear only (the server offers it without HLS encryption), so no protection is
/// signalled.
pub fn render_muxed_media_playlist_with<S: Display>(
    title: &Title,
    members: &[&Rendition],
    init: impl Display,
    segment: impl Fn(u64) -> S,
    options: &ManifestOptions,
) -> Option<String> {
    let timing = (members.iter())
        .find(|r| r.kind == TrackKind::Video)
        .or(members.first())?;
    Some(media_playlist_of(
        title,
        timing,
        Some(init),
        segment,
        options,
        None,
    ))
}

/// A media playlist of `rendition`'s planned segments, segment `number` named by
/// `segment(number)`, with `EXT-X-MAP` of `map` when given (the CMAF output; the TS output
/// has none), the query of `options` in every URI, keyed by `keys` when given.
pub(super) fn media_playlist_of<M: Display, S: Display>(
    title: &Title,
    rendition: &Rendition,
    map: Option<M>,
    segment: impl Fn(u64) -> S,
    options: &ManifestOptions,
    keys: Option<&SegmentKeys<'_>>,
) -> String {
    let all = segment_micros(title, rendition);
    let listed = listed_segments(&all);
    let first_number = listed.start as u64 + 1;
    let durations = all.get(listed).unwrap_or_default();
    // 4.3.3.1: the largest EXTINF rounded to the nearest integer, as written below.
    let rounded = durations.iter().map(|d| (d + 500_000) / 1_000_000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n"
    );
    // Video pre-roll (an edit list starting inside a GOP) is decoded, not shown: start
    // playback where the presentation starts (4.3.5.2). In the media playlist, where
    // ffmpeg (5.1) expects it: in a multivariant playlist it takes it for a variant.
    if let Some(offset) = title.video_preroll_secs(rendition) {
        let _ = writeln!(out, "#EXT-X-START:TIME-OFFSET={offset:.6},PRECISE=YES");
    }
    if let Some(map) = map {
        let _ = writeln!(out, "#EXT-X-MAP:{}", Attrs::default().uri(map, options).0);
    }
    for (number, micros) in (first_number..).zip(durations) {
        if let Some(keys) = keys {
            keys.write(&mut out, number, number == first_number);
        }
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let name = segment(number).to_string();
        let name = options.with_query(&name);
        let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{name}");
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each text track (4.4.6.1), in the group every variant
/// references. NAME is the language (or `subtitles N`), unique in the group; DEFAULT=NO
/// (subtitles stay off unless the viewer or AUTOSELECT's language match turns them on).
/// Each URI names `playlist(track_id)` (the CMAF and TS outputs name them apart).
fn subtitle_renditions(
    out: &mut String,
    title: &Title,
    options: &ManifestOptions,
    folder: &str,
    playlist: fn(u32) -> Resource,
) {
    let texts = &title.index.text_tracks;
    let bases: Vec<String> = (texts.iter().enumerate())
        .map(
            |(n, t)| match t.language.as_deref().filter(|l| !l.is_empty()) {
                Some(language) => language.to_owned(),
                None => format!("subtitles {}", n + 1),
            },
        )
        .collect();
    for (text, base) in texts.iter().zip(&bases) {
        let name = match bases.iter().filter(|b| *b == base).count() > 1 {
            true => format!("{base} (track {})", track_label(text.track_id)),
            false => base.clone(),
        };
        let mut attrs = Attrs::default()
            .plain("TYPE", "SUBTITLES")
            .quoted("GROUP-ID", SUBTITLES_GROUP)
            .quoted("NAME", name);
        if let Some(language) = text.language.as_deref().filter(|l| !l.is_empty()) {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let uri = playlist(text.track_id);
        attrs = (attrs.plain("DEFAULT", "NO").plain("AUTOSELECT", "YES"))
            .uri(format_args!("{folder}{uri}"), options);
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
    sidecar_renditions(out, title, (options, folder, playlist), texts.len());
}

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each sidecar file of a title document, after the
/// text tracks: NAME as the document gives it, else the language, else `subtitles N`
/// (counting on from the text tracks); DEFAULT and FORCED as the document says, except
/// that only the first sidecar marked default gets DEFAULT=YES (4.4.6.1.1: at most one
/// per group).
fn sidecar_renditions(
    out: &mut String,
    title: &Title,
    (options, folder, playlist): (&ManifestOptions, &str, fn(u32) -> Resource),
    texts: usize,
) {
    let default = title.sidecars.iter().position(|s| s.default);
    for (n, sidecar) in title.sidecars.iter().enumerate() {
        let language = sidecar.language.as_deref().filter(|l| !l.is_empty());
        let name = match (&sidecar.name, language) {
            (Some(name), _) => name.clone(),
            (None, Some(language)) => language.to_owned(),
            (None, None) => format!("subtitles {}", texts + n + 1),
        };
        let mut attrs = Attrs::default()
            .plain("TYPE", "SUBTITLES")
            .quoted("GROUP-ID", SUBTITLES_GROUP)
            .quoted("NAME", name);
        if let Some(language) = language {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let yes_no = |b: bool| if b { "YES" } else { "NO" };
        attrs = (attrs.plain("DEFAULT", yes_no(default == Some(n))))
            .plain("AUTOSELECT", "YES")
            .plain("FORCED", yes_no(sidecar.forced));
        let uri = playlist(sidecar.track_id);
        attrs = attrs.uri(format_args!("{folder}{uri}"), options);
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
}

/// Render the subtitle playlist (`index-tN.m3u8` of text track `track_id`): one WebVTT
/// segment per segment of the title, numbered and lasting as the reference rendition's
/// (`plan`), so players line them up with the video's segments.
pub fn render_subtitle_playlist(plan: &SubtitlePlan, track_id: u32) -> String {
    render_subtitle_playlist_with(plan, track_id, &ManifestOptions::default())
}

/// [`render_subtitle_playlist`] with the query of `options` in every URI. Subtitles are
/// clear in every output, so no protection is signalled.
pub fn render_subtitle_playlist_with(
    plan: &SubtitlePlan,
    track_id: u32,
    options: &ManifestOptions,
) -> String {
    let segment = |number| Resource::SubtitleSegment { track_id, number };
    subtitle_playlist_of(plan, segment, options)
}

/// A subtitle playlist of `plan`'s segments, segment `number` named by `segment(number)`
/// (the CMAF and the TS outputs name their WebVTT segments apart), with the query of
/// `options` in every URI.
pub(super) fn subtitle_playlist_of(
    plan: &SubtitlePlan,
    segment: impl Fn(u64) -> Resource,
    options: &ManifestOptions,
) -> String {
    let rounded = plan.durations_us.iter().map(|d| (d + 500_000) / 1_000_000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n"
    );
    for (number, micros) in (plan.first_number..).zip(&plan.durations_us) {
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let name = segment(number).to_string();
        let name = options.with_query(&name);
        let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{name}");
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

fn track<'a>(title: &'a Title, rendition: &Rendition) -> Option<&'a TrackIndex> {
    title.index.tracks.get(rendition.track_pos)
}

fn language<'a>(title: &'a Title, rendition: &Rendition) -> Option<&'a str> {
    let language = track(title, rendition)?.language.as_deref();
    language.filter(|l| !l.is_empty())
}

/// The distinct codecs of `members`, comma-joined, or `None` when one is unknown (a partial
/// `CODECS` would tell players the stream lacks that media).
fn codecs(title: &Title, members: &[&Rendition]) -> Option<String> {
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
fn hls_codec(codec: &CodecInfo) -> &str {
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
fn video_signalling(mut attrs: Attrs, codec: Option<&CodecInfo>) -> Attrs {
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

/// `NAME`s of the audio renditions, unique within the group: the language, else
/// `audio N` (N counting audio renditions from 1); a shared language gets the track id.
fn audio_names(title: &Title, audios: &[&Rendition]) -> Vec<String> {
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

/// Duration of every planned segment of `rendition`, in microseconds rounded to nearest.
fn segment_micros(title: &Title, rendition: &Rendition) -> Vec<u64> {
    let pos = rendition.track_pos;
    let (Some(plan), Some(track)) = (title.plan.tracks.get(pos), title.index.tracks.get(pos))
    else {
        return Vec::new();
    };
    let timescale = u128::from(track.timescale.max(1));
    (0..title.plan.segment_count)
        .map(|k| {
            let ticks = plan.segment_span(&track.samples, k).map_or(0, |(_, d)| d);
            let micros = (u128::from(ticks) * 1_000_000 + timescale / 2) / timescale;
            u64::try_from(micros).unwrap_or(u64::MAX)
        })
        .collect()
}

/// Segments to list: all but leading and trailing zero-length ones (all when every one is).
fn listed_segments(durations: &[u64]) -> std::ops::Range<usize> {
    let first = durations.iter().position(|d| *d > 0);
    let last = durations.iter().rposition(|d| *d > 0);
    match (first, last) {
        (Some(first), Some(last)) => first..last + 1,
        _ => 0..durations.len(),
    }
}

/// An attribute list (RFC 8216 4.2) under construction; quoting rules live here only.
#[derive(Default)]
struct Attrs(String);

impl Attrs {
    /// An enumerated string, decimal-integer, decimal-float or resolution, as is.
    fn plain(mut self, name: &str, value: impl Display) -> Self {
        let comma = if self.0.is_empty() { "" } else { "," };
        let _ = write!(self.0, "{comma}{name}={value}");
        self
    }

    /// A quoted-string, which cannot hold a double quote, CR or LF: those are replaced.
    fn quoted(self, name: &str, value: impl Display) -> Self {
        let clean = quotable(value);
        self.plain(name, format_args!("\"{clean}\""))
    }

    /// `URI`, a quoted-string, with the query of `options` (as the request gave it).
    fn uri(self, uri: impl Display, options: &ManifestOptions) -> Self {
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

#[cfg(test)]
mod tests;
