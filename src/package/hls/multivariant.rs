//! The multivariant playlist of the CMAF output (`master.m3u8`, RFC 8216 4.4.6):
//! `EXT-X-MEDIA` audio and subtitle groups (4.4.6.1), a variant per video (or per audio
//! of an audio-only title) with its bandwidth, codecs, `VIDEO-RANGE` and
//! `SUPPLEMENTAL-CODECS` (4.4.6.2), the I-frame playlists of trick play (4.4.6.3), and
//! `EXT-X-SESSION-KEY` of a protected output (4.4.6.5). The MPEG-TS output's
//! (`super::ts`) shares its subtitle groups and session key.

use std::fmt::Write as _;

use super::attrs::{
    audio_names, codecs, language, picture_attributes, track, video_signalling, Attrs, UriBase,
    AUDIO_GROUP, SUBTITLES_GROUP, VERSION,
};
use crate::media::TrackKind;
use crate::package::encrypt::manifest::{hls_drm_lines, key_attributes, HlsKey};
use crate::package::names::track_label;
use crate::package::signalling::ManifestOptions;
use crate::package::trick;
use crate::package::{Rendition, Resource, Title};

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
    multivariant_of(title, &[], options.folder(title), options)
}

/// The multivariant playlist of `title` under `folder`; each variant's rates are the
/// largest, and its `CODECS` all, of the same renditions (by track id) in `title` and in
/// `also` (a sequence's other parts: `super::sequence`).
pub(super) fn multivariant_of(
    title: &Title,
    also: &[&Title],
    folder: String,
    options: &ManifestOptions,
) -> String {
    let mut out = format!("#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    session_key(&mut out, options, &folder, false);
    subtitle_renditions(&mut out, title, options, &folder, |track_id| {
        Resource::MediaPlaylist { track_id }
    });
    let uris = UriBase {
        options,
        folder: &folder,
    };
    let (videos, all_audios): (Vec<&Rendition>, Vec<&Rendition>) = (title.renditions.iter())
        .filter(|r| r.kind == TrackKind::Audio || !options.left_out(r.track_id))
        .partition(|r| r.kind == TrackKind::Video);
    // Names over every audio rendition, so a filter changes no NAME of what it keeps.
    let names = audio_names(title, &all_audios);
    let (audios, names): (Vec<&Rendition>, Vec<String>) = (all_audios.iter().zip(names))
        .filter(|(a, _)| !options.left_out(a.track_id))
        .map(|(a, n)| (*a, n))
        .unzip();
    if videos.is_empty() {
        for audio in &audios {
            variant(&mut out, title, also, &[audio], false, uris);
        }
        return out;
    }
    super::access::closed_caption_renditions(&mut out, title);
    // The default audio: the title's, unless a filter left it out or it describes the
    // video (audio description is chosen by those who need it, never by default); then
    // the first one left that does not describe the video.
    let described = |a: &&Rendition| a.roles.contains(&crate::media::AudioRole::Description);
    let default_pos = (audios.iter().position(|a| a.is_default && !described(a)))
        .or_else(|| audios.iter().position(|a| !described(a)))
        .unwrap_or(0);
    for (n, (audio, name)) in audios.iter().zip(names).enumerate() {
        let mut attrs = Attrs::default()
            .plain("TYPE", "AUDIO")
            .quoted("GROUP-ID", AUDIO_GROUP)
            .quoted("NAME", name);
        if let Some(language) = language(title, audio) {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let default = if n == default_pos { "YES" } else { "NO" };
        attrs = attrs.plain("DEFAULT", default).plain("AUTOSELECT", "YES");
        attrs = super::access::audio_characteristics(attrs, audio);
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
        variant(&mut out, title, also, &members, !audios.is_empty(), uris);
    }
    if options.trick_play {
        for video in &videos {
            iframe_variant(&mut out, title, video, uris);
        }
    }
    if let Some(board) = &options.storyboard {
        super::image::image_stream_inf(&mut out, board, uris);
    }
    out
}

/// `#EXT-X-SESSION-KEY` (4.4.6.5) of a protected multivariant playlist, for MPEG-TS (`ts`)
/// or CMAF, so players can set up keys before loading media playlists: the key of
/// AES-128 and SAMPLE-AES MPEG-TS under the version folder; for SAMPLE-AES CMAF the
/// licence for ClearKey (when signalled) and a line per DRM system of the key.
pub(super) fn session_key(out: &mut String, options: &ManifestOptions, folder: &str, ts: bool) {
    let Some(p) = &options.protection else {
        return;
    };
    let method = HlsKey::of(p.scheme, ts);
    let uri = match method {
        HlsKey::SampleAesClearKey => p.licence_url.clone(),
        _ => format!("{folder}{}", p.key_name),
    };
    if method != HlsKey::SampleAesClearKey {
        let attributes = key_attributes(method, &options.with_query(&uri), &p.key);
        let _ = writeln!(out, "#EXT-X-SESSION-KEY:{attributes}");
        return;
    }
    // One set of lines per key in use: the title's one key, or each usage's under a key
    // split (RFC 8216bis 4.4.6.5: a session key per key the media playlists name).
    for key in p.keys_in_use() {
        if p.clearkey {
            let uri = p.hls_licence_uri(key);
            let attributes = key_attributes(method, &options.with_query(&uri), key);
            let _ = writeln!(out, "#EXT-X-SESSION-KEY:{attributes}");
        }
        for line in hls_drm_lines(key, true) {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// `#EXT-X-I-FRAME-STREAM-INF` of a video rendition's I-frame playlist (4.4.6.3): the
/// attributes of a variant but for FRAME-RATE and the rendition groups, its rates those of
/// the key frames offered ([`trick::rates`]).
fn iframe_variant(
    out: &mut String,
    title: &Title,
    video: &Rendition,
    UriBase { options, folder }: UriBase<'_>,
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

/// `#EXT-X-STREAM-INF` and URI of the variant playing `members[0]` with the audio group of
/// `members[1..]`, if any: its rates are the first's plus the group's largest (4.4.6.2).
fn variant(
    out: &mut String,
    title: &Title,
    also: &[&Title],
    members: &[&Rendition],
    with_audio: bool,
    UriBase { options, folder }: UriBase<'_>,
) {
    let Some((first, group)) = members.split_first() else {
        return;
    };
    // The same rendition in every title: the largest rate wins (RFC 8216 4.3.4.2 states
    // the peak of the whole presentation).
    let most = |r: &Rendition, rate: fn(&Rendition) -> u64| {
        (also.iter().filter_map(|t| t.rendition(r.track_id)))
            .map(rate)
            .fold(rate(r), u64::max)
    };
    let peak = (group.iter().map(|a| most(a, |r| r.peak_bandwidth)))
        .max()
        .unwrap_or(0);
    let average = (group.iter().map(|a| most(a, |r| r.average_bandwidth)))
        .max()
        .unwrap_or(0);
    let mut attrs = Attrs::default()
        .plain(
            "BANDWIDTH",
            most(first, |r| r.peak_bandwidth).saturating_add(peak),
        )
        .plain(
            "AVERAGE-BANDWIDTH",
            most(first, |r| r.average_bandwidth).saturating_add(average),
        );
    let mut all: Option<Vec<String>> = codecs(title, members).map(|c| vec![c]);
    for other in also {
        let theirs: Vec<&Rendition> = (members.iter())
            .filter_map(|r| other.rendition(r.track_id))
            .collect();
        match (&mut all, codecs(other, &theirs)) {
            (Some(list), Some(c)) => list.push(c),
            _ => all = None,
        }
    }
    if let Some(list) = all {
        let mut distinct: Vec<&str> = Vec::new();
        for codec in list.iter().flat_map(|c| c.split(',')) {
            if !distinct.contains(&codec) {
                distinct.push(codec);
            }
        }
        attrs = attrs.quoted("CODECS", distinct.join(","));
    }
    attrs = picture_attributes(attrs, title, first);
    if with_audio {
        attrs = attrs.quoted("AUDIO", AUDIO_GROUP);
    }
    if super::access::has_subtitles(title, options) {
        attrs = attrs.quoted("SUBTITLES", SUBTITLES_GROUP);
    }
    if first.kind == TrackKind::Video {
        attrs = super::access::closed_captions_attribute(attrs, title);
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

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each text track (4.4.6.1), in the group every variant
/// references. NAME is the language (or `subtitles N`), unique in the group; DEFAULT=NO
/// (subtitles stay off unless the viewer or AUTOSELECT's language match turns them on).
/// Each URI names `playlist(track_id)` (the CMAF and TS outputs name them apart).
pub(super) fn subtitle_renditions(
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
        if options.left_out(text.track_id) {
            continue;
        }
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
    sidecar_renditions(
        out,
        title,
        UriBase { options, folder },
        playlist,
        texts.len(),
    );
}

/// `#EXT-X-MEDIA:TYPE=SUBTITLES` for each sidecar file of a title document, after the
/// text tracks: NAME as the document gives it, else the language, else `subtitles N`
/// (counting on from the text tracks); DEFAULT and FORCED as the document says, except
/// that only the first sidecar marked default gets DEFAULT=YES (4.4.6.1.1: at most one
/// per group).
fn sidecar_renditions(
    out: &mut String,
    title: &Title,
    UriBase { options, folder }: UriBase<'_>,
    playlist: fn(u32) -> Resource,
    texts: usize,
) {
    let default = title.sidecars.iter().position(|s| s.default);
    for (n, sidecar) in title.sidecars.iter().enumerate() {
        if options.left_out(sidecar.track_id) {
            continue;
        }
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
        attrs = super::access::subtitle_characteristics(attrs, sidecar);
        let uri = playlist(sidecar.track_id);
        attrs = attrs.uri(format_args!("{folder}{uri}"), options);
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
}
