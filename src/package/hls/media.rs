//! HLS media playlists of the CMAF output (RFC 8216 4.4.4): a rendition's segments with
//! `EXT-X-MAP` and their keys, the muxed playlist of several renditions, the I-frame
//! playlist of a video (4.4.3.6), and the WebVTT subtitle playlists; the MPEG-TS output
//! (`super::ts`) lists its segments with the same writers.

use std::fmt::{Display, Write as _};

use super::attrs::{track, Attrs, VERSION};
use super::break_tags::{write_marks, SegmentStart};
use crate::crypto::keys::{hex, ContentKey};
use crate::crypto::Scheme;
use crate::package::encrypt::hls_segment_iv;
use crate::package::encrypt::manifest::{hls_drm_lines, key_attributes, HlsKey};
use crate::package::signalling::ManifestOptions;
use crate::package::trick;
use crate::package::webvtt::SubtitlePlan;
use crate::package::{Rendition, Resource, Title};

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
    let plan = title.plan.tracks.get(rendition.track_pos);
    let mut elapsed_us = 0u64;
    for (number, frame) in (1u64..).zip(&frames) {
        // The break segment this key frame starts, if any (ad breaks).
        let segment = (title.breaks.list.iter())
            .map(|b| b.segment)
            .find(|k| plan.and_then(|p| p.first_samples.get(*k)) == Some(&(frame.sample as u32)));
        if number == 1 || segment.is_some() {
            let at = SegmentStart {
                segment: segment.unwrap_or(0),
                elapsed_ns: i128::from(elapsed_us) * 1000,
            };
            write_marks(&mut out, &title.breaks, at, number == 1, 0);
        }
        let us = micros(frame.duration);
        elapsed_us = elapsed_us.saturating_add(us);
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
    // Each media playlist names its own track's key (under a key split, its usage's); a
    // track the split leaves clear has no `EXT-X-KEY`.
    let keys = options.protection.as_ref().and_then(|p| {
        let key = p.key_of(track_id)?;
        let uri = match p.scheme {
            Scheme::Aes128 => std::borrow::Cow::Borrowed(p.key_name.as_str()),
            _ => p.hls_licence_uri(key),
        };
        let iv = |number| hls_segment_iv(&p.clear_token, &key.kid, track_id, number);
        let method = HlsKey::of(p.scheme, false);
        let keys = SegmentKeys::new(method, &options.with_query(&uri), key, iv);
        Some(match method {
            HlsKey::SampleAesClearKey => keys.with_drm(p.clearkey, hls_drm_lines(key, false)),
            _ => keys,
        })
    });
    media_playlist_of(
        title,
        rendition,
        Some(Resource::Init { track_id }),
        |number| Resource::Segment { track_id, number },
        options,
        keys.as_ref(),
        0,
    )
}

/// How a media playlist's segments are keyed: the method, the `EXT-X-KEY` attributes but
/// the IV (`None`: ClearKey is not signalled), the DRM systems' whole `EXT-X-KEY` lines,
/// and the IV of each segment number.
pub(super) struct SegmentKeys<'a> {
    method: HlsKey,
    attributes: Option<String>,
    drm_lines: Vec<String>,
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
            attributes: Some(key_attributes(method, uri, key)),
            drm_lines: Vec::new(),
            iv: Box::new(iv),
        }
    }

    /// These keys with ClearKey's line only when `clearkey`, and the DRM systems' `lines`
    /// after it (SAMPLE-AES CMAF: one `EXT-X-KEY` per system before the first segment).
    pub(super) fn with_drm(mut self, clearkey: bool, lines: Vec<String>) -> Self {
        if !clearkey {
            self.attributes = None;
        }
        self.drm_lines = lines;
        self
    }

    /// `#EXT-X-KEY` before segment `number`, if one goes there: before each segment
    /// with an IV per segment, else before the first (`first`) only. ClearKey's has no IV.
    fn write(&self, out: &mut String, number: u64, first: bool) {
        if !(first || self.method.per_segment()) {
            return;
        }
        for line in &self.drm_lines {
            let _ = writeln!(out, "{line}");
        }
        let Some(attributes) = &self.attributes else {
            return;
        };
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

/// Render a media playlist whose segments' durations are stated rather than measured:
/// nginx-vod's names (`index-v1-a1.m3u8`, `index-a1.m3u8`, under the `hls` and `hlsts`
/// locations) list nginx-vod-module's segments with the module's durations
/// (`package::Windows`). Segment `number` (1-based) lasts `stated_ms[number - 1]` and is
/// named `segment(number)`, with `EXT-X-MAP` of `map` when given (the TS output has none)
/// and the query of `options` in every URI; `EXT-X-START` where `timing`'s presentation
/// starts after pre-roll (a clip), as in its own playlist. Clear only: the server offers
/// these names without HLS encryption.
pub fn render_stated_media_playlist<M: Display, S: Display>(
    title: &Title,
    timing: &Rendition,
    map: Option<M>,
    stated_ms: &[u64],
    segment: impl Fn(u64) -> S,
    options: &ManifestOptions,
) -> String {
    let rounded = stated_ms.iter().map(|ms| (ms + 500) / 1000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n"
    );
    if let Some(offset) = title.video_preroll_secs(timing) {
        let _ = writeln!(out, "#EXT-X-START:TIME-OFFSET={offset:.6},PRECISE=YES");
    }
    if let Some(map) = map {
        let _ = writeln!(out, "#EXT-X-MAP:{}", Attrs::default().uri(map, options).0);
    }
    for (number, ms) in (1u64..).zip(stated_ms) {
        let name = segment(number).to_string();
        let name = options.with_query(&name);
        let _ = writeln!(out, "#EXTINF:{}.{:03}000,\n{name}", ms / 1000, ms % 1000);
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// A media playlist of `rendition`'s planned segments, segment `number` named by
/// `segment(number)`, with `EXT-X-MAP` of `map` when given (the CMAF output; the TS output
/// has none), the query of `options` in every URI, keyed by `keys` when given, its ad
/// breaks' SCTE-35 moved by `pts_adjustment` (90 kHz; the TS output's time offset).
pub(super) fn media_playlist_of<M: Display, S: Display>(
    title: &Title,
    rendition: &Rendition,
    map: Option<M>,
    segment: impl Fn(u64) -> S,
    options: &ManifestOptions,
    keys: Option<&SegmentKeys<'_>>,
    pts_adjustment: u64,
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
    let mut elapsed_us = 0u64;
    for (number, micros) in (first_number..).zip(durations) {
        let at = SegmentStart {
            segment: (number - 1) as usize,
            elapsed_ns: i128::from(elapsed_us) * 1000,
        };
        write_marks(
            &mut out,
            &title.breaks,
            at,
            number == first_number,
            pts_adjustment,
        );
        elapsed_us = elapsed_us.saturating_add(*micros);
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
    subtitle_playlist_of(plan, segment, options, 0)
}

/// A subtitle playlist of `plan`'s segments, segment `number` named by `segment(number)`
/// (the CMAF and the TS outputs name their WebVTT segments apart), with the query of
/// `options` in every URI and the SCTE-35 of ad breaks moved by `pts_adjustment`.
pub(super) fn subtitle_playlist_of(
    plan: &SubtitlePlan,
    segment: impl Fn(u64) -> Resource,
    options: &ManifestOptions,
    pts_adjustment: u64,
) -> String {
    let rounded = plan.durations_us.iter().map(|d| (d + 500_000) / 1_000_000);
    let target = rounded.max().unwrap_or(0).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n"
    );
    let mut elapsed_us = 0u64;
    for (n, (number, micros)) in (plan.first_number..).zip(&plan.durations_us).enumerate() {
        let at = SegmentStart {
            segment: (number - 1) as usize,
            elapsed_ns: i128::from(elapsed_us) * 1000,
        };
        write_marks(&mut out, &plan.breaks, at, n == 0, pts_adjustment);
        elapsed_us = elapsed_us.saturating_add(*micros);
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let name = segment(number).to_string();
        let name = options.with_query(&name);
        let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{name}");
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// Duration of every planned segment of `rendition`, in microseconds rounded to nearest.
pub(super) fn segment_micros(title: &Title, rendition: &Rendition) -> Vec<u64> {
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
pub(super) fn listed_segments(durations: &[u64]) -> std::ops::Range<usize> {
    let first = durations.iter().position(|d| *d > 0);
    let last = durations.iter().rposition(|d| *d > 0);
    match (first, last) {
        (Some(first), Some(last)) => first..last + 1,
        _ => 0..durations.len(),
    }
}
