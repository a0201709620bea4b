//! nginx-vod names resolved against the title: the Nth video track, a file of a urlset,
//! a language, become a native resource of the title as viewed, a stream of one or several
//! tracks numbered as nginx-vod-module numbers it (`numbered.rs`), or a redirect to a view
//! of the title.

use crate::media::TrackKind;
use crate::package::{split_document_track_id, Resource, Title, TrackPick, TrackSelection, View};
use crate::server::error::ServeError;
use crate::server::route::nginx_names::{
    NginxKind, NginxName, NginxOutput, NginxStream, StreamPart,
};
use crate::server::titles::cached::CachedTitle;

/// What an nginx-vod name stands for in a title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A native resource of the title as viewed.
    Native(Resource, View),
    /// A stream of tracks of the title as viewed, numbered as nginx-vod-module numbers it
    /// (`numbered.rs`).
    Numbered(NginxStream, View),
    /// A multivariant playlist of some of the title's tracks, which lives at this path (the
    /// request's, with the view's folders), where its relative URLs resolve into that
    /// view's version folder: a redirect (302).
    Redirect(String),
}

/// The resource (and view) an nginx-vod name stands for in `cached`, the title as `view`
/// shows it.
///
/// With `numbered` (the name's output is clear), the media playlists and segments of the
/// `hls` and `hlsts` locations and DASH fragments are streams numbered as nginx-vod-module
/// numbers them ([`Resolved::Numbered`]): a playlist name picking tracks (`index-v1.m3u8`,
/// `index-v1-a1.m3u8`; any `index` name under `hlsts`), a segment name, and under `hls` an
/// init segment name picking several tracks (muxed fMP4). Without (an encrypted output),
/// one track's names are its native resources, as the encrypted output numbers them.
///
/// # Errors
/// 404 for tracks the title does not have, for muxed segments and init segments under the
/// `dash` location (vodpack's DASH has one track per rendition).
pub fn resolve(
    cached: &CachedTitle,
    view: View,
    name: &NginxName,
    numbered: bool,
) -> Result<Resolved, ServeError> {
    let not_found = ServeError::NotOffered;
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
    // The stream's tracks, in the title's rendition order (videos, then audios).
    let stream = |part: StreamPart| {
        let track_ids = (title.renditions.iter())
            .map(|r| r.track_id)
            .filter(|id| selected.contains(id))
            .collect();
        let stream = NginxStream {
            output: name.output,
            part,
            track_ids,
            tokens: name.track_tokens(),
        };
        Ok(Resolved::Numbered(stream, view.clone()))
    };
    if name.output == NginxOutput::HlsTs && name.kind != NginxKind::Manifest {
        return match (name.kind, numbered) {
            (NginxKind::Index, true) => {
                ts_track(title, &selected)?;
                stream(StreamPart::Playlist)
            }
            (NginxKind::Segment { number, .. }, true) => {
                ts_track(title, &selected)?;
                stream(StreamPart::Segment { number })
            }
            _ => ts_resource(title, &selected, name).map(|r| Resolved::Native(r, view)),
        };
    }
    let one = match selected.as_slice() {
        [] => return Err(not_found("no such track in this title".into())),
        [one] => Some(*one),
        _ => None,
    };
    // Names of a stream: numbered when the output is clear; several tracks in one stream
    // (muxed fMP4 under the `hls` location) only ever so. A bare `index.m3u8` stays the
    // multivariant playlist (below).
    let picks_tracks = name.video.is_some() || name.audio.is_some();
    let part = match name.kind {
        NginxKind::Init if one.is_none() => Some(StreamPart::Init),
        NginxKind::Segment { number, .. } => Some(StreamPart::Segment { number }),
        NginxKind::Index if picks_tracks => Some(StreamPart::Playlist),
        NginxKind::Init | NginxKind::Index | NginxKind::Manifest | NginxKind::IFrames => None,
    };
    match (name.output, part) {
        (NginxOutput::Hls, Some(part)) if numbered || one.is_none() => return stream(part),
        (NginxOutput::Dash, Some(part @ StreamPart::Segment { .. }))
            if numbered && one.is_some() =>
        {
            return stream(part)
        }
        _ => {}
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

/// The MPEG-TS resource an nginx-vod name under the `hlsts` location stands for, natively
/// numbered (an encrypted output; I-frame playlists).
fn ts_resource(title: &Title, selected: &[u32], name: &NginxName) -> Result<Resource, ServeError> {
    let not_found = |reason: &str| ServeError::NotOffered(reason.to_owned());
    let track_id = ts_track(title, selected)?;
    let video = title
        .rendition(track_id)
        .is_some_and(|r| r.kind == TrackKind::Video);
    match name.kind {
        NginxKind::Index => Ok(Resource::TsMediaPlaylist { track_id }),
        NginxKind::Segment { number, .. } => Ok(Resource::TsSegment { track_id, number }),
        NginxKind::IFrames if video => Ok(Resource::TsIframePlaylist { track_id }),
        NginxKind::IFrames => Err(not_found("an I-frame playlist is of a video track")),
        NginxKind::Init | NginxKind::Manifest => Err(not_found("MPEG-TS has no init segment here")),
    }
}

/// The TS rendition the tracks `selected` (by an nginx-vod name under the `hlsts`
/// location) stand for. vodpack's TS renditions are keyed by their video (muxed with the
/// title's main audio) or, for an audio-only rendition, by their audio: `seg-1-v1-a1.ts`
/// is the video's TS segment.
///
/// # Errors
/// 404 for a video with another audio than the main one, several videos, or several
/// audios alone.
pub fn ts_track(title: &Title, selected: &[u32]) -> Result<u32, ServeError> {
    let not_found = |reason: &str| ServeError::NotOffered(reason.to_owned());
    let kind_of = |id: &u32| title.rendition(*id).map(|r| (r.kind, r.is_default));
    let video = selected
        .iter()
        .find(|id| kind_of(id).is_some_and(|(k, _)| k == TrackKind::Video));
    let audios: Vec<&u32> = (selected.iter())
        .filter(|id| kind_of(id).is_some_and(|(k, _)| k == TrackKind::Audio))
        .collect();
    match (video, audios.as_slice()) {
        (Some(video), []) => Ok(*video),
        // A video TS rendition carries the main audio, and only it.
        (Some(video), [audio]) if kind_of(audio).is_some_and(|(_, main)| main) => Ok(*video),
        (Some(_), _) => Err(not_found(
            "vodpack's MPEG-TS muxes a video with the title's main audio only",
        )),
        (None, [audio]) => Ok(**audio),
        (None, _) => Err(not_found("name one video or one audio track")),
    }
}
