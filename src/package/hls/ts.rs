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

use super::attrs::{
    audio_names, codecs, language, picture_attributes, track, video_signalling, Attrs, UriBase,
    AUDIO_GROUP, SUBTITLES_GROUP,
};
use super::break_tags::{write_marks, SegmentStart};
use super::media::{media_playlist_of, subtitle_playlist_of, SegmentKeys};
use super::multivariant::{session_key, subtitle_renditions};
use crate::crypto::Scheme;
use crate::media::TrackKind;
use crate::package::encrypt::manifest::HlsKey;
use crate::package::encrypt::{hls_ts_sample_aes_iv, hls_ts_segment_iv};
use crate::package::signalling::ManifestOptions;
use crate::package::ts::{TsRendition, TsTitle, TS_TIME_OFFSET};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{Rendition, Resource, Title};

/// `EXT-X-BYTERANGE` and `EXT-X-I-FRAMES-ONLY` need version 4; nothing here needs more.
const VERSION: u32 = 4;

/// Render `master-ts.m3u8` of `title` from its TS output `ts`.
pub fn render_ts_multivariant_playlist(title: &Title, ts: &TsTitle) -> String {
    render_ts_multivariant_playlist_with(title, ts, &ManifestOptions::default())
}

/// [`render_ts_multivariant_playlist`] as `options` say: their version folder and query
/// in every URI, `EXT-X-SESSION-KEY` of their protection, I-frame playlists only with
/// trick play, and the withheld renditions left out.
///
/// With SAMPLE-AES, an audio group that only names the muxed audio (no URI) is left out
/// too: ffmpeg (5.1; its hls.c today reads the same) takes a variant with an audio group
/// for packed audio and decrypts nothing, and such a group says nothing the variant does
/// not.
pub fn render_ts_multivariant_playlist_with(
    title: &Title,
    ts: &TsTitle,
    options: &ManifestOptions,
) -> String {
    let folder = options.folder(title);
    let withheld = |track_id: u32| options.withheld.contains(&track_id);
    let mut out = format!("#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    session_key(&mut out, options, &folder, true);
    let mut subtitles = String::new();
    subtitle_renditions(&mut subtitles, title, options, &folder, |track_id| {
        Resource::TsMediaPlaylist { track_id }
    });
    out.push_str(&subtitles);
    let has_subtitles = !subtitles.is_empty();
    let (videos, audios): (Vec<&TsRendition>, Vec<&TsRendition>) =
        (ts.renditions.iter()).partition(|r| r.rendition.kind == TrackKind::Video);
    let uris = UriBase {
        options,
        folder: &folder,
    };
    if videos.is_empty() {
        let offered = |a: &&&TsRendition| {
            !withheld(a.rendition.track_id) && !options.left_out(a.rendition.track_id)
        };
        for audio in audios.iter().filter(offered) {
            variant(
                &mut out,
                title,
                audio,
                AudioAlternates::NONE,
                has_subtitles,
                uris,
            );
        }
        return out;
    }
    // The audio group: the main audio (muxed, no URI), then the audio-only renditions.
    let group: Vec<&Rendition> = (ts.main_audio.iter())
        .chain(audios.iter().map(|a| &a.rendition))
        .collect();
    let muxed = |audio: &Rendition| ts.main_audio.as_ref() == Some(audio);
    let sample_aes = (options.protection.as_ref())
        .is_some_and(|p| HlsKey::of(p.scheme, true) == HlsKey::SampleAesTs);
    let muxed_only = sample_aes && group.iter().all(|a| muxed(a));
    let group = if muxed_only { Vec::new() } else { group };
    let default = group.iter().position(|a| a.is_default).unwrap_or(0);
    super::access::closed_caption_renditions(&mut out, title);
    // The muxed main audio stays whatever a filter says: it is in every video variant.
    let left_out = |audio: &Rendition| {
        !muxed(audio) && (withheld(audio.track_id) || options.left_out(audio.track_id))
    };
    for (n, (audio, name)) in group.iter().zip(audio_names(title, &group)).enumerate() {
        if left_out(audio) {
            continue;
        }
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
        if !muxed(audio) {
            let uri = Resource::TsMediaPlaylist {
                track_id: audio.track_id,
            };
            attrs = attrs.uri(format_args!("{folder}{uri}"), options);
        }
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
    // A withheld alternate still counts in the variants' rates and codecs: players that
    // see it in no other playlist lose nothing by the larger figures.
    // One a filter leaves out does not count: the device asked not to be offered it.
    let alternates: Vec<&TsRendition> = (audios.iter().copied())
        .filter(|a| !options.left_out(a.rendition.track_id))
        .collect();
    let offered = |video: &&&TsRendition| {
        !withheld(video.rendition.track_id) && !options.left_out(video.rendition.track_id)
    };
    for video in videos.iter().filter(offered) {
        let audio = AudioAlternates {
            group: (!group.is_empty()).then_some(AUDIO_GROUP),
            alternates: &alternates,
        };
        variant(&mut out, title, video, audio, has_subtitles, uris);
    }
    if options.trick_play {
        for video in videos.iter().filter(offered) {
            iframe_variant(&mut out, title, video, uris);
        }
    }
    out
}

/// The audio-only alternates of a TS variant: the `AUDIO` group it names, if any, and the
/// renditions in it, whose largest rates and whose codecs the variant adds to its own.
#[derive(Debug, Clone, Copy)]
struct AudioAlternates<'a> {
    group: Option<&'a str>,
    alternates: &'a [&'a TsRendition],
}

impl AudioAlternates<'_> {
    /// No audio group (an audio-only variant).
    const NONE: Self = Self {
        group: None,
        alternates: &[],
    };
}

/// `#EXT-X-STREAM-INF` of one TS rendition: its own rates plus the largest audio-only
/// alternate's (players fetch both when one is chosen), its codecs with the muxed audio's.
fn variant(
    out: &mut String,
    title: &Title,
    ts: &TsRendition,
    AudioAlternates { group, alternates }: AudioAlternates<'_>,
    has_subtitles: bool,
    UriBase { options, folder }: UriBase<'_>,
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
    attrs = picture_attributes(attrs, title, first);
    if let Some(group) = group {
        attrs = attrs.quoted("AUDIO", group);
    }
    if has_subtitles {
        attrs = attrs.quoted("SUBTITLES", SUBTITLES_GROUP);
    }
    if first.kind == TrackKind::Video {
        attrs = super::access::closed_captions_attribute(attrs, title);
    }
    let uri = Resource::TsMediaPlaylist {
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

/// The title's renditions a TS rendition's program carries, video first.
fn program_renditions<'a>(title: &'a Title, ts: &TsRendition) -> Vec<&'a Rendition> {
    (ts.program.streams.iter())
        .filter_map(|s| title.renditions.iter().find(|r| r.track_pos == s.track_pos))
        .collect()
}

/// `#EXT-X-I-FRAME-STREAM-INF` of a video rendition (4.4.6.3): the video's codec alone.
fn iframe_variant(
    out: &mut String,
    title: &Title,
    ts: &TsRendition,
    UriBase { options, folder }: UriBase<'_>,
) {
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
    attrs = attrs.uri(format_args!("{folder}{uri}"), options);
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
    render_ts_media_playlist_with(title, ts, &ManifestOptions::default())
}

/// [`render_ts_media_playlist`] as `options` say: their query in every URI and, when
/// protected, `EXT-X-KEY` naming the key relative to the playlist. AES-128: one before
/// each segment with its own IV ([`hls_ts_segment_iv`]); SAMPLE-AES: one before the
/// first, with the rendition's one IV ([`hls_ts_sample_aes_iv`]).
pub fn render_ts_media_playlist_with(
    title: &Title,
    ts: &TsRendition,
    options: &ManifestOptions,
) -> String {
    let track_id = ts.rendition.track_id;
    let keys = options.protection.as_ref().map(|p| {
        let (token, kid) = (&p.clear_token, &p.key.kid);
        let iv = move |number| match p.scheme {
            Scheme::Aes128 => hls_ts_segment_iv(token, kid, track_id, number),
            _ => hls_ts_sample_aes_iv(token, kid, track_id),
        };
        let uri = options.with_query(&p.key_name);
        SegmentKeys::new(HlsKey::of(p.scheme, true), &uri, &p.key, iv)
    });
    media_playlist_of(
        title,
        &ts.rendition,
        None::<Resource>,
        |number| Resource::TsSegment { track_id, number },
        options,
        keys.as_ref(),
        TS_TIME_OFFSET,
    )
}

/// Render the I-frame playlist (`iframes-ts-tN.m3u8`) of a TS video rendition: each key
/// frame's PAT, PMT and PES packets as a byte range of its segment, lasting until the next.
pub fn render_ts_iframe_playlist(title: &Title, ts: &TsRendition) -> String {
    render_ts_iframe_playlist_with(title, ts, &ManifestOptions::default())
}

/// [`render_ts_iframe_playlist`] with the query of `options` in every URI. Trick play is
/// clear only, so no protection is signalled. The title's ad breaks are marked before the
/// first key frame of each break's segment, as in its other playlists.
pub fn render_ts_iframe_playlist_with(
    title: &Title,
    ts: &TsRendition,
    options: &ManifestOptions,
) -> String {
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
    let mut elapsed_us = 0u64;
    for (i, micros, len) in frames {
        let Some(frame) = ts.layout.key_frames.get(i) else {
            continue;
        };
        // The first key frame of a segment a break starts (ad breaks).
        let opens = i == 0
            || (i.checked_sub(1).and_then(|p| ts.layout.key_frames.get(p)))
                .is_some_and(|p| p.segment != frame.segment);
        let at_break = opens && title.breaks.list.iter().any(|b| b.segment == frame.segment);
        if i == 0 || at_break {
            let at = SegmentStart {
                segment: frame.segment,
                elapsed_ns: i128::from(elapsed_us) * 1000,
            };
            write_marks(&mut out, &title.breaks, at, i == 0, TS_TIME_OFFSET);
        }
        elapsed_us = elapsed_us.saturating_add(micros);
        let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
        let segment = Resource::TsSegment {
            track_id,
            number: frame.segment as u64 + 1,
        }
        .to_string();
        let _ = writeln!(
            out,
            "#EXTINF:{secs}.{fraction:06},\n#EXT-X-BYTERANGE:{len}@{}\n{}",
            frame.offset,
            options.with_query(&segment)
        );
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// Render the subtitle playlist of text track `track_id` for the TS output: the CMAF
/// subtitle playlist's segments, named `sub-ts-*.vtt` (their map is the TS timeline's).
pub fn render_ts_subtitle_playlist(plan: &SubtitlePlan, track_id: u32) -> String {
    render_ts_subtitle_playlist_with(plan, track_id, &ManifestOptions::default())
}

/// [`render_ts_subtitle_playlist`] with the query of `options` in every URI. Subtitles
/// are clear in every output, so no protection is signalled.
pub fn render_ts_subtitle_playlist_with(
    plan: &SubtitlePlan,
    track_id: u32,
    options: &ManifestOptions,
) -> String {
    let segment = |number| Resource::TsSubtitleSegment { track_id, number };
    subtitle_playlist_of(plan, segment, options, TS_TIME_OFFSET)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::version_folder;
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
        let title = crate::package::testing::fixture_title("h264-aac-2lang-3s.mp4", 1000);
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
        let iframes = render_ts_iframe_playlist(&title, &ts.renditions[0]);
        assert!(iframes.contains("#EXT-X-I-FRAMES-ONLY\n"), "{iframes}");
        assert_eq!(iframes.matches("#EXT-X-BYTERANGE:").count(), 3, "{iframes}");
    }

    /// Given text tracks, then the TS multivariant playlist's subtitle renditions name the
    /// TS subtitle playlists (WebVTT mapped to the TS timeline), in the version folder.
    #[test]
    fn subtitle_renditions_point_at_ts_playlists() {
        let title = crate::package::testing::fixture_title("h264-aac-movtext-3s.mp4", 1000);
        let ts = TsTitle::new(&title).unwrap();
        let master = render_ts_multivariant_playlist(&title, &ts);
        let folder = version_folder(&title.version_token());
        let subtitles: Vec<&str> = (master.lines())
            .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES"))
            .collect();
        assert!(!subtitles.is_empty(), "{master}");
        for (line, text) in subtitles.iter().zip(&title.index.text_tracks) {
            let uri = format!("URI=\"{folder}index-ts-t{}.m3u8\"", text.track_id);
            assert!(line.ends_with(&uri), "{line}");
        }
    }
}
