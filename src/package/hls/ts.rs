//! HLS playlists for MPEG-TS segments: `master-ts.m3u8`, the TS media playlists, I-frame
//! playlists and subtitle playlists whose WebVTT maps to the TS timeline.
//!
//! The same groups as the CMAF multivariant playlist (`super`), with what TS changes:
//! the main audio is muxed into each video variant, so its `EXT-X-MEDIA` has no URI
//! (RFC 8216 4.4.6.1: the rendition is in the variant stream) and the other languages are
//! audio-only TS renditions; media playlists have no `EXT-X-MAP`; each video variant has
//! an I-frame playlist (`EXT-X-I-FRAME-STREAM-INF`, 4.4.6.3) addressing each key frame's
//! packets, PAT and PMT included, by `EXT-X-BYTERANGE` (version 4). Durations, numbering
//! and `EXT-X-START` are the CMAF playlists', so the two outputs cut and time alike.

use std::fmt::Write as _;

use super::{
    audio_names, codecs, language, subtitle_renditions, track, video_signalling, Attrs,
    AUDIO_GROUP, SUBTITLES_GROUP,
};
use crate::media::TrackKind;
use crate::package::ts::{TsRendition, TsTitle, TS_TIME_OFFSET};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{version_folder, Rendition, Resource, Title};

/// `EXT-X-BYTERANGE` and `EXT-X-I-FRAMES-ONLY` need version 4; nothing here needs more.
const VERSION: u32 = 4;

/// Render `master-ts.m3u8` of `title` from its TS output `ts`.
pub fn render_ts_multivariant_playlist(title: &Title, ts: &TsTitle) -> String {
    let mut out = format!("#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    let folder = version_folder(&title.version_token());
    let mut subtitles = String::new();
    subtitle_renditions(&mut subtitles, title);
    for line in subtitles.lines() {
        out.push_str(&ts_subtitle_uri(line));
        out.push('\n');
    }
    let has_subtitles = !subtitles.is_empty();
    let (videos, audios): (Vec<&TsRendition>, Vec<&TsRendition>) =
        (ts.renditions.iter()).partition(|r| r.rendition.kind == TrackKind::Video);
    if videos.is_empty() {
        for audio in &audios {
            variant(&mut out, title, audio, None, &[], has_subtitles);
        }
        return out;
    }
    // The audio group: the main audio (muxed, no URI), then the audio-only renditions.
    let group: Vec<&Rendition> = (ts.main_audio.iter())
        .chain(audios.iter().map(|a| &a.rendition))
        .collect();
    let default = group.iter().position(|a| a.is_default).unwrap_or(0);
    for (n, (audio, name)) in group.iter().zip(audio_names(title, &group)).enumerate() {
        let mut attrs = Attrs::default()
            .plain("TYPE", "AUDIO")
            .quoted("GROUP-ID", AUDIO_GROUP)
            .quoted("NAME", name);
        if let Some(language) = language(title, audio) {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let yes_no = if n == default { "YES" } else { "NO" };
        attrs = attrs.plain("DEFAULT", yes_no).plain("AUTOSELECT", "YES");
        let channels = track(title, audio).map_or(0, |t| t.codec.channels);
        if channels > 0 {
            attrs = attrs.quoted("CHANNELS", channels);
        }
        let muxed = ts.main_audio.as_ref() == Some(*audio);
        if !muxed {
            let uri = Resource::TsMediaPlaylist {
                track_id: audio.track_id,
            };
            attrs = attrs.quoted("URI", format_args!("{folder}{uri}"));
        }
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
    let alternates: Vec<&TsRendition> = audios.clone();
    for video in &videos {
        let with_group = (!group.is_empty()).then_some(AUDIO_GROUP);
        variant(
            &mut out,
            title,
            video,
            with_group,
            &alternates,
            has_subtitles,
        );
    }
    for video in &videos {
        iframe_variant(&mut out, title, video);
    }
    out
}

/// `#EXT-X-STREAM-INF` of one TS rendition: its own rates plus the largest audio-only
/// alternate's (players fetch both when one is chosen), its codecs with the muxed audio's.
fn variant(
    out: &mut String,
    title: &Title,
    ts: &TsRendition,
    audio_group: Option<&str>,
    alternates: &[&TsRendition],
    has_subtitles: bool,
) {
    let peak = alternates
        .iter()
        .map(|a| a.peak_bandwidth)
        .max()
        .unwrap_or(0);
    let average = (alternates.iter().map(|a| a.average_bandwidth).max()).unwrap_or(0);
    let mut attrs = Attrs::default()
        .plain("BANDWIDTH", ts.peak_bandwidth.saturating_add(peak))
        .plain(
            "AVERAGE-BANDWIDTH",
            ts.average_bandwidth.saturating_add(average),
        );
    // Every codec a player may meet in the variant: its own and its alternates' (4.4.6.2).
    let mut members = program_renditions(title, ts);
    members.extend(alternates.iter().map(|a| &a.rendition));
    if let Some(codecs) = codecs(title, &members) {
        attrs = attrs.quoted("CODECS", codecs);
    }
    let first = &ts.rendition;
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
    if let Some(group) = audio_group {
        attrs = attrs.quoted("AUDIO", group);
    }
    if has_subtitles {
        attrs = attrs.quoted("SUBTITLES", SUBTITLES_GROUP);
    }
    let uri = Resource::TsMediaPlaylist {
        track_id: first.track_id,
    };
    let folder = version_folder(&title.version_token());
    let _ = writeln!(out, "#EXT-X-STREAM-INF:{}\n{folder}{uri}", attrs.0);
}

/// The title's renditions a TS rendition's program carries, video first.
fn program_renditions<'a>(title: &'a Title, ts: &TsRendition) -> Vec<&'a Rendition> {
    (ts.program.streams.iter())
        .filter_map(|s| title.renditions.iter().find(|r| r.track_pos == s.track_pos))
        .collect()
}

/// `#EXT-X-I-FRAME-STREAM-INF` of a video rendition (4.4.6.3): the video's codec alone.
fn iframe_variant(out: &mut String, title: &Title, ts: &TsRendition) {
    let frames = iframes(ts);
    let peak = (frames.iter())
        .filter(|f| f.1 > 0)
        .map(|(_, micros, len)| (*len as f64 * 8.0 * 1e6 / *micros as f64).ceil() as u64)
        .max()
        .unwrap_or(0);
    let mut attrs = Attrs::default().plain("BANDWIDTH", peak);
    if let Some(codecs) = codecs(title, &[&ts.rendition]) {
        attrs = attrs.quoted("CODECS", codecs);
    }
    if let Some(c) = track(title, &ts.rendition)
        .map(|t| &t.codec)
        .filter(|c| c.width > 0 && c.height > 0)
    {
        attrs = attrs.plain("RESOLUTION", format_args!("{}x{}", c.width, c.height));
    }
    attrs = video_signalling(attrs, track(title, &ts.rendition).map(|t| &t.codec));
    let uri = Resource::TsIframePlaylist {
        track_id: ts.rendition.track_id,
    };
    let folder = version_folder(&title.version_token());
    attrs = attrs.quoted("URI", format_args!("{folder}{uri}"));
    let _ = writeln!(out, "#EXT-X-I-FRAME-STREAM-INF:{}", attrs.0);
}

/// Each key frame as (index into the layout's key frames, duration in microseconds until
/// the next key frame or the rendition's end, bytes of its range).
fn iframes(ts: &TsRendition) -> Vec<(usize, u64, u64)> {
    let frames = &ts.layout.key_frames;
    let end_us = (ts.rendition.end_secs * 1e6).round() as u64;
    (frames.iter().enumerate())
        .map(|(i, f)| {
            let next = frames.get(i + 1).map_or(end_us, |n| n.pts_us);
            (i, next.saturating_sub(f.pts_us), f.len)
        })
        .collect()
}

/// Render the media playlist (`index-ts-tN.m3u8`) of a TS rendition: the CMAF playlist's
/// segments and durations, TS segment names, no `EXT-X-MAP`.
pub fn render_ts_media_playlist(title: &Title, ts: &TsRendition) -> String {
    let track_id = ts.rendition.track_id;
    super::media_playlist_of(title, &ts.rendition, None::<Resource>, |number| {
        Resource::TsSegment { track_id, number }
    })
}

/// Render the I-frame playlist (`iframes-ts-tN.m3u8`) of a TS video rendition: each key
/// frame's PAT, PMT and PES packets as a byte range of its segment, lasting until the next.
pub fn render_ts_iframe_playlist(ts: &TsRendition) -> String {
    let frames = iframes(ts);
    let target = (frames.iter())
        .map(|(_, micros, _)| (micros + 500_000) / 1_000_000)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-I-FRAMES-ONLY\n"
    );
    let track_id = ts.rendition.track_id;
    for (i, micros, len) in frames {
        let Some(frame) = ts.layout.key_frames.get(i) else {
            continue;
        };
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let segment = Resource::TsSegment {
            track_id,
            number: frame.segment as u64 + 1,
        };
        let _ = writeln!(
            out,
            "#EXTINF:{secs}.{fraction:06},\n#EXT-X-BYTERANGE:{len}@{}\n{segment}",
            frame.offset
        );
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// Render the subtitle playlist of text track `track_id` for the TS output: the CMAF
/// subtitle playlist's segments, named `sub-ts-*.vtt` (their map is the TS timeline's).
pub fn render_ts_subtitle_playlist(plan: &SubtitlePlan, track_id: u32) -> String {
    super::subtitle_playlist_of(plan, |number| Resource::TsSubtitleSegment {
        track_id,
        number,
    })
}

/// The `X-TIMESTAMP-MAP` line of WebVTT segments for CMAF: local time 0 is output time 0.
const CMAF_TIMESTAMP_MAP: &str = "X-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:0\n";

/// A CMAF WebVTT segment (as `webvtt::render_hls_segment` writes it) made into the TS
/// output's: output time 0 is PTS [`TS_TIME_OFFSET`] in the TS segments, so the map says
/// so. `None` when the text does not start with the CMAF map.
pub fn ts_subtitle_segment(cmaf: &str) -> Option<String> {
    let rest = cmaf
        .strip_prefix("WEBVTT\n")?
        .strip_prefix(CMAF_TIMESTAMP_MAP)?;
    Some(format!(
        "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:{TS_TIME_OFFSET}\n{rest}"
    ))
}

/// An `#EXT-X-MEDIA` line of a subtitle rendition with its URI (the last attribute)
/// pointing at the TS subtitle playlist of the same track.
fn ts_subtitle_uri(line: &str) -> String {
    let Some((head, uri)) = line.rsplit_once(",URI=\"") else {
        return line.to_owned();
    };
    let uri = uri.trim_end_matches('"');
    let (folder, name) = uri.rsplit_once('/').map_or(("", uri), |(f, n)| (f, n));
    match Resource::parse(name) {
        Some(Resource::MediaPlaylist { track_id }) => {
            let ts = Resource::TsMediaPlaylist { track_id };
            format!("{head},URI=\"{folder}/{ts}\"")
        }
        _ => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::webvtt::render_hls_segment;

    /// Given the CMAF WebVTT header, then the TS one maps local 0 to PTS 126000, and the
    /// cues are kept as they are.
    #[test]
    fn ts_subtitle_segments_map_to_the_ts_timeline() {
        let cmaf = render_hls_segment(&[]);
        let ts = ts_subtitle_segment(&format!("{cmaf}\n00:00:01.000 --> 00:00:02.000\nhi\n"))
            .expect("the CMAF header");
        assert_eq!(
            ts,
            "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:126000\n\n\
             00:00:01.000 --> 00:00:02.000\nhi\n"
        );
        assert_eq!(ts_subtitle_segment("WEBVTT\n\nx"), None);
    }

    /// Given two languages, then the default one is muxed (no URI), the other is an
    /// audio-only TS rendition, the variant names both codecs and has an I-frame playlist,
    /// and the media playlist lists TS segments without `EXT-X-MAP`.
    #[test]
    fn the_ts_master_muxes_the_main_audio_and_offers_the_rest() {
        let (_, title) = crate::package::ts::tests::fixture("h264-aac-2lang-3s.mp4");
        let ts = TsTitle::new(&title).unwrap();
        let master = render_ts_multivariant_playlist(&title, &ts);
        let folder = version_folder(&title.version_token());
        let media: Vec<&str> = master
            .lines()
            .filter(|l| l.starts_with("#EXT-X-MEDIA"))
            .collect();
        assert_eq!(media.len(), 2, "{master}");
        assert!(media[0].contains("LANGUAGE=\"eng\",DEFAULT=YES") && !media[0].contains("URI="));
        assert!(
            media[1].ends_with(&format!("URI=\"{folder}index-ts-t3.m3u8\"")),
            "{master}"
        );
        assert!(
            master.contains("CODECS=\"avc1.64000d,mp4a.40.2\""),
            "{master}"
        );
        assert!(
            master.contains(&format!("{folder}index-ts-t1.m3u8\n")),
            "{master}"
        );
        assert!(
            master.contains("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH="),
            "{master}"
        );
        assert!(
            master.contains(&format!("URI=\"{folder}iframes-ts-t1.m3u8\"")),
            "{master}"
        );
        let playlist = render_ts_media_playlist(&title, &ts.renditions[0]);
        assert!(!playlist.contains("EXT-X-MAP"), "{playlist}");
        assert!(playlist.contains("\nseg-ts-t1-1.ts\n"), "{playlist}");
        let iframes = render_ts_iframe_playlist(&ts.renditions[0]);
        assert!(iframes.contains("#EXT-X-I-FRAMES-ONLY\n"), "{iframes}");
        assert_eq!(iframes.matches("#EXT-X-BYTERANGE:").count(), 3, "{iframes}");
    }

    #[test]
    fn subtitle_media_lines_point_at_ts_playlists() {
        let line = "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"eng\",URI=\"v0123456789abcdef/index-t3.m3u8\"";
        assert_eq!(
            ts_subtitle_uri(line),
            "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"eng\",URI=\"v0123456789abcdef/index-ts-t3.m3u8\""
        );
    }
}
