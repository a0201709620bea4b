//! nginx-vod names resolved against the title: the Nth video track, a file of a urlset,
//! a language, become a native resource of the title as viewed, a muxed stream of several
//! tracks (`muxed.rs`), or a redirect to a view of the title.

use crate::media::TrackKind;
use crate::package::{split_document_track_id, Resource, Title, TrackPick, TrackSelection, View};
use crate::server::error::ServeError;
use crate::server::route::nginx_names::{Muxed, MuxedPart, NginxKind, NginxName, NginxOutput};
use crate::server::titles::cached::CachedTitle;

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

/// The native resource (and view) an nginx-vod name stands for in `cached`, the title as
/// `view` shows it.
///
/// Under the `hls` location, an init or segment name picking several tracks, or a
/// playlist name whose track tokens pick several, is the muxed fMP4 stream of those
/// tracks ([`Resolved::Muxed`]).
///
/// # Errors
/// 404 for tracks the title does not have, for muxed segments and init segments under the
/// `dash` location (vodpack's DASH has one track per rendition).
pub fn resolve(cached: &CachedTitle, view: View, name: &NginxName) -> Result<Resolved, ServeError> {
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
fn ts_resource(title: &Title, selected: &[u32], name: &NginxName) -> Result<Resource, ServeError> {
    let not_found = |reason: &str| ServeError::NotOffered(reason.to_owned());
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
