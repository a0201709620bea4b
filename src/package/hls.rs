//! HLS playlists for CMAF segments: the multivariant playlist and one media playlist per
//! rendition (RFC 8216 and draft-pantos-hls-rfc8216bis).
//!
//! Owns the HLS text format only: tags and attribute lists (4.2, quoting rules in one
//! builder), `EXT-X-MEDIA` audio groups (4.4.6.1), `EXT-X-STREAM-INF` bandwidth, codecs,
//! `VIDEO-RANGE` and `SUPPLEMENTAL-CODECS` (4.4.6.2), the VOD media playlist with
//! `EXT-X-MAP` and `EXTINF` (4.4.4), and the I-frame playlists of video renditions
//! (`EXT-X-I-FRAME-STREAM-INF`, 4.4.6.3; `EXT-X-I-FRAMES-ONLY`, 4.4.3.6). Every URI is
//! a relative name made by [`Resource`]; times come from the segment plan.

use std::fmt::{Display, Write as _};

mod ts;
pub use ts::{
    render_ts_iframe_playlist, render_ts_media_playlist, render_ts_multivariant_playlist,
    render_ts_subtitle_playlist, ts_subtitle_segment,
};

use super::names::track_label;
use super::trick;
use super::webvtt::SubtitlePlan;
use super::{version_folder, Rendition, Resource, Title};
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
    let mut out = format!("#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    subtitle_renditions(&mut out, title);
    let (videos, audios): (Vec<&Rendition>, Vec<&Rendition>) = title
        .renditions
        .iter()
        .partition(|r| r.kind == TrackKind::Video);
    if videos.is_empty() {
        for audio in &audios {
            variant(&mut out, title, &[audio], false);
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
        let uri = format!(
            "{}{}",
            version_folder(&title.version_token()),
            Resource::MediaPlaylist {
                track_id: audio.track_id,
            }
        );
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.quoted("URI", uri).0);
    }
    for video in &videos {
        let members: Vec<&Rendition> = std::iter::once(*video)
            .chain(audios.iter().copied())
            .collect();
        variant(&mut out, title, &members, !audios.is_empty());
    }
    for video in &videos {
        iframe_variant(&mut out, title, video);
    }
    out
}

/// `#EXT-X-I-FRAME-STREAM-INF` of a video rendition's I-frame playlist (4.4.6.3): the
/// attributes of a variant but for FRAME-RATE and the rendition groups, its rates those of
/// the key frames offered ([`trick::rates`]).
fn iframe_variant(out: &mut String, title: &Title, video: &Rendition) {
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
    let folder = version_folder(&title.version_token());
    let _ = writeln!(
        out,
        "#EXT-X-I-FRAME-STREAM-INF:{}",
        attrs.quoted("URI", format_args!("{folder}{uri}")).0
    );
}

/// Render the I-frame playlist (`iframes-tN.m3u8`) of video rendition `rendition`: one
/// segment per key frame offered (4.3.3.6), each the whole of its one-frame resource
/// (`EXT-X-BYTERANGE` length@0), lasting until the next (see [`trick`]).
pub fn render_iframe_playlist(title: &Title, rendition: &Rendition) -> String {
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
    let map = Attrs::default().quoted("URI", Resource::Init { track_id });
    let _ = writeln!(out, "#EXT-X-MAP:{}", map.0);
    for (number, frame) in (1u64..).zip(&frames) {
        let us = micros(frame.duration);
        let (secs, fraction) = (us / 1_000_000, us % 1_000_000);
        let resource = Resource::KeyFrame { track_id, number };
        let _ = writeln!(
            out,
            "#EXTINF:{secs}.{fraction:06},\n#EXT-X-BYTERANGE:{}@0\n{resource}",
            frame.bytes
        );
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// `#EXT-X-STREAM-INF` and URI of the variant playing `members[0]` with the audio group of
/// `members[1..]`, if any: its rates are the first's plus the group's largest (4.4.6.2).
fn variant(out: &mut String, title: &Title, members: &[&Rendition], with_audio: bool) {
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
    let folder = version_folder(&title.version_token());
    let _ = writeln!(out, "#EXT-X-STREAM-INF:{}\n{folder}{uri}", attrs.0);
}

/// Render the media playlist (`index-tN.m3u8`) of one rendition of `title`.
///
/// Lists the rendition's segments with their exact durations (microsecond precision).
/// Zero-length segments at the start or end of a track (a track that starts late or ends
/// early) are left out; every listed name keeps its plan number.
pub fn render_media_playlist(title: &Title, rendition: &Rendition) -> String {
    let track_id = rendition.track_id;
    media_playlist_of(
        title,
        rendition,
        Some(Resource::Init { track_id }),
        |number| Resource::Segment { track_id, number },
    )
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
    let timing = (members.iter())
        .find(|r| r.kind == TrackKind::Video)
        .or(members.first())?;
    Some(media_playlist_of(title, timing, Some(init), segment))
}

/// A media playlist of `rendition`'s planned segments, segment `number` named by
/// `segment(number)`, with `EXT-X-MAP` of `map` when given (the CMAF output; the TS output
/// has none).
pub(super) fn media_playlist_of<M: Display, S: Display>(
    title: &Title,
    rendition: &Rendition,
    map: Option<M>,
    segment: impl Fn(u64) -> S,
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
        let _ = writeln!(out, "#EXT-X-MAP:{}", Attrs::default().quoted("URI", map).0);
    }
    for (number, micros) in (first_number..).zip(durations) {
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{}", segment(number));
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each text track (4.4.6.1), in the group every variant
/// references. NAME is the language (or `subtitles N`), unique in the group; DEFAULT=NO
/// (subtitles stay off unless the viewer or AUTOSELECT's language match turns them on).
fn subtitle_renditions(out: &mut String, title: &Title) {
    let texts = &title.index.text_tracks;
    let bases: Vec<String> = (texts.iter().enumerate())
        .map(
            |(n, t)| match t.language.as_deref().filter(|l| !l.is_empty()) {
                Some(language) => language.to_owned(),
                None => format!("subtitles {}", n + 1),
            },
        )
        .collect();
    let folder = version_folder(&title.version_token());
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
        let uri = Resource::MediaPlaylist {
            track_id: text.track_id,
        };
        attrs = (attrs.plain("DEFAULT", "NO").plain("AUTOSELECT", "YES"))
            .quoted("URI", format_args!("{folder}{uri}"));
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
    sidecar_renditions(out, title, &folder, texts.len());
}

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each sidecar file of a title document, after the
/// text tracks: NAME as the document gives it, else the language, else `subtitles N`
/// (counting on from the text tracks); DEFAULT and FORCED as the document says, except
/// that only the first sidecar marked default gets DEFAULT=YES (4.4.6.1.1: at most one
/// per group).
fn sidecar_renditions(out: &mut String, title: &Title, folder: &str, texts: usize) {
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
        let uri = Resource::MediaPlaylist {
            track_id: sidecar.track_id,
        };
        attrs = attrs.quoted("URI", format_args!("{folder}{uri}"));
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
}

/// Render the subtitle playlist (`index-tN.m3u8` of text track `track_id`): one WebVTT
/// segment per segment of the title, numbered and lasting as the reference rendition's
/// (`plan`), so players line them up with the video's segments.
pub fn render_subtitle_playlist(plan: &SubtitlePlan, track_id: u32) -> String {
    subtitle_playlist_of(plan, |number| Resource::SubtitleSegment {
        track_id,
        number,
    })
}

/// A subtitle playlist of `plan`'s segments, segment `number` named by `segment(number)`
/// (the CMAF and the TS outputs name their WebVTT segments apart).
pub(super) fn subtitle_playlist_of(
    plan: &SubtitlePlan,
    segment: impl Fn(u64) -> Resource,
) -> String {
    let rounded = plan.durations_us.iter().map(|d| (d + 500_000) / 1_000_000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n"
    );
    for (number, micros) in (plan.first_number..).zip(&plan.durations_us) {
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{}", segment(number));
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
        let clean: String = (value.to_string().chars())
            .map(|c| match c {
                '"' => '\'',
                '\r' | '\n' => ' ',
                c => c,
            })
            .collect();
        self.plain(name, format_args!("\"{clean}\""))
    }
}

/// Shared with the DASH tests: the same title in both.
#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::media::{CodecInfo, EditList, MediaIndex, SampleTable, TextFormat, TextTrackIndex};
    use crate::source::ObjectIdentity;

    /// 10 s of 320x180 AVC at 30 fps, 15360 Hz, a sync sample every 30; or 10 s of stereo
    /// 48 kHz AAC in English, 1024-sample frames.
    pub(in crate::package) fn track(track_id: u32, video: bool) -> TrackIndex {
        let (codec, w, h, channels, sample_rate, timescale, n, delta) = match video {
            true => ("avc1.64000d", 320, 180, 0, 0, 15360, 300, 512),
            false => ("mp4a.40.2", 0, 0, 2, 48000, 48000, 469, 1024),
        };
        let kind = [TrackKind::Audio, TrackKind::Video][usize::from(video)];
        let codec = CodecInfo {
            fourcc: *b"test",
            rfc6381: codec.to_owned(),
            width: w,
            height: h,
            channels,
            sample_rate,
            color: None,
            dolby_vision: None,
        };
        let samples = SampleTable {
            sizes: vec![if video { 2000 } else { 300 }; n as usize],
            offsets: (0..u64::from(n)).map(|i| i * 2000).collect(),
            dts: (0..u64::from(n)).map(|i| i * delta).collect(),
            durations: vec![delta as u32; n as usize],
            cts_offsets: Vec::new(),
            sync: video.then(|| (0..n).step_by(30).collect()),
        };
        TrackIndex {
            track_id,
            kind,
            timescale,
            language: (!video).then(|| "eng".to_owned()),
            codec,
            sample_description: bytes::Bytes::new(),
            tkhd_width: u32::from(w) << 16,
            tkhd_height: u32::from(h) << 16,
            edits: EditList::default(),
            samples,
        }
    }

    /// Video track 1 and audio track 2 but those `keep` rejects, then `more`; 4 s segments.
    pub(in crate::package) fn title(keep: fn(&TrackIndex) -> bool, more: Vec<TrackIndex>) -> Title {
        let mut tracks = vec![track(1, true), track(2, false)];
        tracks.retain(keep);
        tracks.extend(more);
        let identity = ObjectIdentity {
            size: 0,
            version: String::new(),
        };
        let index = MediaIndex {
            identity,
            movie_timescale: 1000,
            tracks,
            text_tracks: Vec::new(),
        };
        Title::new(index, 4000).unwrap()
    }

    /// A 10 s text track (one cue a second) in `language`; 1000 Hz.
    pub(in crate::package) fn text(track_id: u32, language: Option<&str>) -> TextTrackIndex {
        TextTrackIndex {
            track_id,
            format: TextFormat::Tx3g,
            timescale: 1000,
            language: language.map(str::to_owned),
            edits: EditList::default(),
            samples: SampleTable {
                sizes: vec![10; 10],
                offsets: (0..10).map(|i| i * 10).collect(),
                dts: (0..10).map(|i| i * 1000).collect(),
                durations: vec![1000; 10],
                cts_offsets: Vec::new(),
                sync: None,
            },
        }
    }

    /// The value of attribute `name` in a tag line.
    fn attr<'a>(line: &'a str, name: &str) -> &'a str {
        let rest = &line[line.find(&format!("{name}=")).unwrap() + name.len() + 1..];
        match rest.strip_prefix('"') {
            Some(quoted) => &quoted[..quoted.find('"').unwrap()],
            None => rest.split(',').next().unwrap(),
        }
    }

    #[test]
    fn media_playlists_list_every_segment_with_exact_durations() {
        let title = title(|_| true, Vec::new());
        for rendition in &title.renditions {
            let text = render_media_playlist(&title, rendition);
            let lines: Vec<&str> = text.lines().collect();
            let id = rendition.track_id;
            assert_eq!(lines[..2], ["#EXTM3U", "#EXT-X-VERSION:7"]);
            assert!(lines.contains(&"#EXT-X-PLAYLIST-TYPE:VOD"));
            assert!(lines.contains(&format!("#EXT-X-MAP:URI=\"init-t{id}.mp4\"").as_str()));
            assert_eq!(lines.last(), Some(&"#EXT-X-ENDLIST"));
            let mut durations = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                if let Some(d) = line.strip_prefix("#EXTINF:") {
                    durations.push(d.trim_end_matches(',').parse::<f64>().unwrap());
                    assert_eq!(lines[i + 1], format!("seg-t{id}-{}.m4s", durations.len()));
                    assert!(Resource::parse(lines[i + 1]).is_some());
                }
            }
            assert_eq!(durations.len(), title.plan.segment_count);
            let max = durations.iter().map(|d| d.round() as u64).max().unwrap();
            assert!(lines.contains(&format!("#EXT-X-TARGETDURATION:{max}").as_str()));
            let track = &title.index.tracks[rendition.track_pos];
            let expected = track.duration_ticks() as f64 / f64::from(track.timescale);
            let sum: f64 = durations.iter().sum();
            assert!((sum - expected).abs() < 0.001, "{sum} vs {expected}");
        }
    }

    /// Given video and audio muxed, then the muxed playlist is the video's media playlist
    /// with the muxed names: the same segments and durations, its own `EXT-X-MAP`; audio
    /// alone is timed as the audio's playlist; no member, no playlist.
    #[test]
    fn a_muxed_playlist_is_timed_as_its_video() {
        let title = title(|_| true, Vec::new());
        let members: Vec<&Rendition> = title.renditions.iter().rev().collect();
        let muxed = render_muxed_media_playlist(&title, &members, "init-v1-a1.mp4", |n| {
            format!("seg-{n}-v1-a1.m4s")
        })
        .unwrap();
        let video = render_media_playlist(&title, &title.renditions[0]);
        let renamed = video
            .replace("init-t1.mp4", "init-v1-a1.mp4")
            .lines()
            .map(|l| match l.strip_prefix("seg-t1-") {
                Some(rest) => format!("seg-{}-v1-a1.m4s", rest.trim_end_matches(".m4s")),
                None => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(muxed.trim_end(), renamed);
        let audio = &title.renditions[1];
        let alone = render_muxed_media_playlist(&title, &[audio], "i.mp4", |n| n).unwrap();
        let durations = |text: &str| -> Vec<String> {
            (text.lines())
                .filter(|l| l.starts_with("#EXTINF"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(
            durations(&alone),
            durations(&render_media_playlist(&title, audio))
        );
        assert_eq!(
            render_muxed_media_playlist(&title, &[], "i.mp4", |n| n),
            None
        );
    }

    /// Given a video, then its I-frame playlist lists each key frame offered as the whole
    /// of its one-frame resource, lasting until the next, and only video has one.
    #[test]
    fn the_iframe_playlist_addresses_each_key_frame_with_a_byte_range() {
        let title = title(|_| true, Vec::new());
        let video = &title.renditions[0];
        let frames = trick::key_frames(&title, video);
        let text = render_iframe_playlist(&title, video);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"#EXT-X-I-FRAMES-ONLY"));
        assert!(lines.contains(&"#EXT-X-MAP:URI=\"init-t1.mp4\""));
        assert_eq!(lines.last(), Some(&"#EXT-X-ENDLIST"));
        let entries: Vec<&[&str]> = (lines.iter().position(|l| l.starts_with("#EXTINF")))
            .map(|first| lines[first..lines.len() - 1].chunks(3).collect())
            .unwrap();
        assert_eq!(entries.len(), frames.len());
        let timescale = title.index.tracks[video.track_pos].timescale as f64;
        for (n, (entry, frame)) in entries.iter().zip(&frames).enumerate() {
            let secs: f64 = entry[0]["#EXTINF:".len()..]
                .trim_end_matches(',')
                .parse()
                .unwrap();
            assert!((secs - frame.duration as f64 / timescale).abs() < 1e-6);
            assert_eq!(entry[1], format!("#EXT-X-BYTERANGE:{}@0", frame.bytes));
            assert_eq!(
                Resource::parse(entry[2]),
                Some(Resource::KeyFrame {
                    track_id: 1,
                    number: n as u64 + 1
                })
            );
        }
    }

    #[test]
    fn the_multivariant_playlist_offers_video_with_its_audio_group() {
        let title = title(|_| true, Vec::new());
        let text = render_multivariant_playlist(&title);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..3],
            ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        );
        let media = lines[3];
        assert!(media.starts_with("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"eng\""));
        assert!(media.contains("LANGUAGE=\"eng\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\""));
        let (video, audio) = (&title.renditions[0], &title.renditions[1]);
        let inf = lines[4];
        let peak = video.peak_bandwidth + audio.peak_bandwidth;
        assert_eq!(attr(inf, "BANDWIDTH"), peak.to_string());
        let average = video.average_bandwidth + audio.average_bandwidth;
        assert_eq!(attr(inf, "AVERAGE-BANDWIDTH"), average.to_string());
        assert_eq!(attr(inf, "CODECS"), "avc1.64000d,mp4a.40.2");
        assert_eq!(attr(inf, "RESOLUTION"), "320x180");
        assert_eq!(attr(inf, "FRAME-RATE"), "30.000");
        assert_eq!(attr(inf, "AUDIO"), "audio");
        // Media playlists live under the title's version folder.
        let folder = version_folder(&title.version_token());
        assert_eq!(
            (lines[5], lines.len()),
            (format!("{folder}index-t1.m3u8").as_str(), 7)
        );
        // Then the video's I-frame playlist.
        let iframes = lines[6];
        assert!(iframes.starts_with("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH="));
        assert_eq!(attr(iframes, "CODECS"), "avc1.64000d");
        assert_eq!(attr(iframes, "RESOLUTION"), "320x180");
        assert!(!iframes.contains("AUDIO=") && !iframes.contains("FRAME-RATE="));
        assert_eq!(
            attr(iframes, "URI"),
            format!("{folder}iframes-t1.m3u8").as_str()
        );
        for uri in [attr(media, "URI"), lines[5], attr(iframes, "URI")] {
            let name = uri.strip_prefix(folder.as_str()).unwrap_or_default();
            assert!(Resource::parse(name).is_some(), "{uri}");
        }
    }

    #[test]
    fn several_audio_languages_have_one_default_and_unique_names() {
        let mut french = track(3, false);
        french.language = Some("fra".to_owned());
        let more = vec![french, track(4, false)];
        let text = render_multivariant_playlist(&title(|_| true, more));
        let media: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("#EXT-X-MEDIA:"))
            .collect();
        assert_eq!(
            media.iter().filter(|l| l.contains("DEFAULT=YES")).count(),
            1
        );
        let names: Vec<&str> = media.iter().map(|l| attr(l, "NAME")).collect();
        assert_eq!(names, ["eng (track 2)", "fra", "eng (track 4)"]);
    }

    #[test]
    fn single_media_titles_have_no_audio_group() {
        let audio_only = title(|t| t.kind == TrackKind::Audio, Vec::new());
        let text = render_multivariant_playlist(&audio_only);
        let peak = audio_only.renditions[0].peak_bandwidth;
        assert!(text.contains(&format!("INF:BANDWIDTH={peak},")));
        let folder = version_folder(&audio_only.version_token());
        assert!(text.contains(&format!(",CODECS=\"mp4a.40.2\"\n{folder}index-t2.m3u8\n")));
        let video_only = title(|t| t.kind == TrackKind::Video, Vec::new());
        for text in [text, render_multivariant_playlist(&video_only)] {
            assert!(
                !text.contains("AUDIO=") && !text.contains("#EXT-X-MEDIA:"),
                "{text}"
            );
        }
    }

    #[test]
    fn quoted_strings_hold_no_quotes_or_newlines_and_empty_ends_are_cut() {
        let attrs = Attrs::default()
            .quoted("NAME", "a\"b\nc")
            .plain("BANDWIDTH", 5);
        assert_eq!(attrs.0, "NAME=\"a'b c\",BANDWIDTH=5");
        assert_eq!(listed_segments(&[0, 5, 0, 5, 0]), 1..4);
        assert_eq!(listed_segments(&[0, 0]), 0..2);
    }

    #[test]
    fn text_tracks_are_a_subtitles_group_every_variant_references() {
        for keep in [(|_| true) as fn(&TrackIndex) -> bool, |t| {
            t.kind == TrackKind::Audio
        }] {
            let mut title = title(keep, Vec::new());
            title.index.text_tracks = vec![
                text(3, Some("eng")),
                text(4, Some("fra")),
                text(5, Some("fra")),
                text(6, None),
            ];
            let text = render_multivariant_playlist(&title);
            let folder = version_folder(&title.version_token());
            let subs: Vec<&str> = (text.lines())
                .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES,"))
                .collect();
            let names: Vec<&str> = subs.iter().map(|l| attr(l, "NAME")).collect();
            assert_eq!(
                names,
                ["eng", "fra (track 4)", "fra (track 5)", "subtitles 4"]
            );
            for (line, id) in subs.iter().zip(3..) {
                assert_eq!(attr(line, "GROUP-ID"), "subs");
                assert_eq!(
                    (attr(line, "DEFAULT"), attr(line, "AUTOSELECT")),
                    ("NO", "YES")
                );
                let uri = attr(line, "URI").strip_prefix(folder.as_str()).unwrap();
                assert_eq!(
                    Resource::parse(uri),
                    Some(Resource::MediaPlaylist { track_id: id })
                );
            }
            assert_eq!(attr(subs[0], "LANGUAGE"), "eng");
            assert!(!subs[3].contains("LANGUAGE="));
            let variants: Vec<&str> = (text.lines())
                .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"))
                .collect();
            assert!(!variants.is_empty());
            for inf in variants {
                assert_eq!(attr(inf, "SUBTITLES"), "subs", "{inf}");
            }
        }
        // Without text tracks, no group and no reference to one.
        let plain = render_multivariant_playlist(&title(|_| true, Vec::new()));
        assert!(!plain.contains("SUBTITLES"), "{plain}");
    }

    #[test]
    fn subtitle_playlists_list_webvtt_segments_timed_like_the_video() {
        let mut title = title(|_| true, Vec::new());
        title.index.text_tracks = vec![text(3, Some("eng"))];
        let plan = SubtitlePlan::new(&title);
        let subtitles = render_subtitle_playlist(&plan, 3);
        let video = render_media_playlist(&title, &title.renditions[0]);
        let timing = |text: &str| -> Vec<String> {
            (text.lines())
                .filter(|l| l.starts_with("#EXTINF:") || l.starts_with("#EXT-X-TARGETDURATION"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(timing(&subtitles), timing(&video));
        assert!(!subtitles.contains("#EXT-X-MAP"));
        assert!(subtitles.ends_with("#EXT-X-ENDLIST\n"));
        let segments: Vec<Option<Resource>> = (subtitles.lines())
            .filter(|l| !l.starts_with('#'))
            .map(Resource::parse)
            .collect();
        let expected: Vec<Option<Resource>> = (1..=3)
            .map(|number| {
                Some(Resource::SubtitleSegment {
                    track_id: 3,
                    number,
                })
            })
            .collect();
        assert_eq!(segments, expected);
    }

    /// A title of HEVC Main 10 in PQ with a Dolby Vision 8.1 layer, and MP3 audio.
    pub(in crate::package) fn hdr_title() -> Title {
        use crate::media::{ColorInfo, ColorSource, DolbyVision};
        let mut video = track(1, true);
        video.codec.fourcc = *b"hvc1";
        video.codec.rfc6381 = "hvc1.2.4.L93.B0".into();
        video.codec.color = Some(ColorInfo {
            primaries: 9,
            transfer: 16,
            matrix: 9,
            full_range: false,
            source: ColorSource::Colr,
        });
        video.codec.dolby_vision = Some(DolbyVision {
            profile: 8,
            level: 7,
            rpu_present: true,
            el_present: false,
            bl_present: true,
            compatibility_id: 1,
            fourcc: *b"dvh1",
        });
        let mut audio = track(2, false);
        audio.codec.rfc6381 = "mp4a.6B".into();
        title(|_| false, vec![video, audio])
    }

    #[test]
    fn hdr_variants_name_their_range_and_dolby_vision_layer() {
        let text = render_multivariant_playlist(&hdr_title());
        let inf = text
            .lines()
            .find(|l| l.starts_with("#EXT-X-STREAM-INF:"))
            .unwrap();
        assert_eq!(attr(inf, "CODECS"), "hvc1.2.4.L93.B0,mp4a.40.34");
        assert_eq!(attr(inf, "VIDEO-RANGE"), "PQ");
        assert_eq!(attr(inf, "SUPPLEMENTAL-CODECS"), "dvh1.08.07/db1p");
        // HLG base (8.4); SDR says nothing; a profile 5 stream is PQ whatever its VUI says.
        let mut codec = hdr_title().index.tracks[0].codec.clone();
        codec.color.as_mut().unwrap().transfer = 18;
        codec.dolby_vision.as_mut().unwrap().compatibility_id = 4;
        let attrs = video_signalling(Attrs::default(), Some(&codec)).0;
        assert_eq!(
            attrs,
            "VIDEO-RANGE=HLG,SUPPLEMENTAL-CODECS=\"dvh1.08.07/db4h\""
        );
        codec.dolby_vision = None;
        codec.color.as_mut().unwrap().transfer = 1;
        assert_eq!(video_signalling(Attrs::default(), Some(&codec)).0, "");
        codec.dolby_vision = Some(crate::media::DolbyVision {
            profile: 5,
            level: 6,
            rpu_present: true,
            el_present: false,
            bl_present: true,
            compatibility_id: 0,
            fourcc: *b"dvh1",
        });
        codec.color = None;
        assert_eq!(
            video_signalling(Attrs::default(), Some(&codec)).0,
            "VIDEO-RANGE=PQ"
        );
        // FLAC is written as the FLAC-in-ISOBMFF spec spells it.
        // A Dolby Vision sample entry is its own codec, even with a compatibility id.
        codec.fourcc = *b"dvh1";
        codec.dolby_vision.as_mut().unwrap().compatibility_id = 1;
        assert_eq!(video_signalling(Attrs::default(), Some(&codec)).0, "");
        codec.fourcc = *b"fLaC";
        codec.rfc6381 = "flac".into();
        assert_eq!(hls_codec(&codec), "fLaC");
        // SDR fixtures keep their playlists as they were.
        let sdr = render_multivariant_playlist(&title(|_| true, Vec::new()));
        assert!(
            !sdr.contains("VIDEO-RANGE") && !sdr.contains("SUPPLEMENTAL"),
            "{sdr}"
        );
    }
}
