//! What the outputs render from a title once and keep with it, one part per output: each
//! is filled and read by the output that renders it (HLS playlists, the MPD, CMAF init
//! segments, subtitle playlists, the MPEG-TS layout, nginx-vod's numbering, `cbcs` slice
//! header parameters), so a cached playlist costs a lookup and a clone of `Bytes`, and an
//! output touches only what it renders. Each part is handed the title it was made for.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::media::slice_header::SliceHeaderParams;
use crate::media::TrackKind;
use crate::package::encrypt::{slice_header_params, ProtectError};
use crate::package::ts::{TsRendition, TsTitle};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{
    init_segment, render_iframe_playlist, render_media_playlist, render_media_playlist_with,
    render_mpd_with, render_multivariant_playlist, render_multivariant_playlist_with,
    render_subtitle_playlist, render_subtitle_playlist_with, DashProfile, ManifestOptions,
    PackageError, Title, Windows,
};

/// Every output's part of what is kept with a title.
#[derive(Debug)]
pub struct OutputCaches {
    /// HLS playlists over CMAF (`outputs::hls`).
    pub hls: HlsKept,
    /// The DASH MPD (`outputs::dash`).
    pub dash: DashKept,
    /// CMAF init segments (`outputs::cmaf`).
    pub inits: InitsKept,
    /// How subtitle segments are cut, and the subtitle playlists (`outputs::subtitles`,
    /// and the HLS and MPEG-TS playlists that list them).
    pub subtitles: SubtitlesKept,
    /// The MPEG-TS output, worked out on the first TS request (`ts_layout::ts_output`).
    pub ts: OnceLock<TsOutput>,
    /// Segments numbered as nginx-vod-module numbers them (`outputs::nginx_vod`).
    pub windows: WindowsKept,
    /// `cbcs` slice header parameters per track (`outputs::cmaf`, encrypted).
    pub slices: SlicesKept,
}

impl OutputCaches {
    /// Empty parts sized for `title`.
    pub fn new(title: &Title) -> Self {
        let n = title.renditions.len();
        let texts = title.index.text_tracks.len() + title.sidecars.len();
        Self {
            hls: HlsKept {
                multivariant: OnceLock::new(),
                media_playlists: slots(n),
                iframe_playlists: slots(n),
            },
            dash: DashKept {
                mpd: OnceLock::new(),
                dvb_mpd: OnceLock::new(),
            },
            inits: InitsKept {
                init_segments: slots(n),
            },
            subtitles: SubtitlesKept {
                plan: OnceLock::new(),
                playlists: slots(texts),
            },
            ts: OnceLock::new(),
            windows: WindowsKept {
                windows: OnceLock::new(),
            },
            slices: SlicesKept {
                params: slots(title.index.tracks.len()),
            },
        }
    }
}

fn slots<T>(n: usize) -> Vec<OnceLock<T>> {
    (0..n).map(|_| OnceLock::new()).collect()
}

/// The position of rendition `track_id` among the title's renditions.
fn rendition_pos(title: &Title, track_id: u32) -> Option<usize> {
    title.renditions.iter().position(|r| r.track_id == track_id)
}

/// The HLS playlists of a title over CMAF, rendered on first use.
#[derive(Debug)]
pub struct HlsKept {
    multivariant: OnceLock<Bytes>,
    /// Media playlists, by rendition position.
    media_playlists: Vec<OnceLock<Bytes>>,
    /// I-frame playlists, by rendition position (video renditions only).
    iframe_playlists: Vec<OnceLock<Bytes>>,
}

impl HlsKept {
    /// The multivariant playlist as `options` write it: the kept clear one for the
    /// default options, else written for the request.
    pub fn multivariant_with(&self, title: &Title, options: &ManifestOptions) -> Bytes {
        match options.is_clear() {
            true => (self.multivariant)
                .get_or_init(|| Bytes::from(render_multivariant_playlist(title)))
                .clone(),
            false => Bytes::from(render_multivariant_playlist_with(title, options)),
        }
    }

    /// The media playlist of track `track_id` as `options` write it, if it is a rendition.
    pub fn media_playlist_with(
        &self,
        title: &Title,
        track_id: u32,
        options: &ManifestOptions,
    ) -> Option<Bytes> {
        if !options.is_clear() {
            let rendition = title.rendition(track_id)?;
            return Some(Bytes::from(render_media_playlist_with(
                title, rendition, options,
            )));
        }
        let pos = rendition_pos(title, track_id)?;
        let rendition = title.renditions.get(pos)?;
        let slot = self.media_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_media_playlist(title, rendition)))
                .clone(),
        )
    }

    /// The I-frame playlist of track `track_id`, if it is a video rendition.
    pub fn iframe_playlist(&self, title: &Title, track_id: u32) -> Option<Bytes> {
        let pos = rendition_pos(title, track_id)?;
        let rendition = title.renditions.get(pos)?;
        if rendition.kind != TrackKind::Video {
            return None;
        }
        let slot = self.iframe_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_iframe_playlist(title, rendition)))
                .clone(),
        )
    }
}

/// The DASH MPD of a title, rendered on first use, one per profile.
#[derive(Debug)]
pub struct DashKept {
    /// The default profile's MPD.
    mpd: OnceLock<Bytes>,
    /// The DVB-DASH profile's MPD.
    dvb_mpd: OnceLock<Bytes>,
}

impl DashKept {
    /// The MPD as `options` write it (see [`HlsKept::multivariant_with`]). The kept clear
    /// MPD is written in the server's subtitle form (`options.dash_subtitles`, the same for
    /// every request).
    pub fn mpd_with(&self, title: &Title, options: &ManifestOptions) -> Bytes {
        let kept = match options.dash_profile {
            DashProfile::Default => &self.mpd,
            DashProfile::Dvb => &self.dvb_mpd,
        };
        match options.is_clear() {
            true => kept
                .get_or_init(|| Bytes::from(render_mpd_with(title, options)))
                .clone(),
            false => Bytes::from(render_mpd_with(title, options)),
        }
    }
}

/// The CMAF init segments of a title, written on first use.
#[derive(Debug)]
pub struct InitsKept {
    /// By rendition position.
    init_segments: Vec<OnceLock<Bytes>>,
}

impl InitsKept {
    /// The clear init segment of track `track_id`, if it is a rendition.
    pub fn init_segment(&self, title: &Title, track_id: u32) -> Option<Bytes> {
        let pos = rendition_pos(title, track_id)?;
        let rendition = title.renditions.get(pos)?;
        let track = title.index.tracks.get(rendition.track_pos)?;
        let slot = self.init_segments.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(init_segment(track)))
                .clone(),
        )
    }
}

/// How a title's subtitle segments are cut, and its HLS subtitle playlists.
#[derive(Debug)]
pub struct SubtitlesKept {
    plan: OnceLock<SubtitlePlan>,
    /// By text track position, then by sidecar position.
    playlists: Vec<OnceLock<Bytes>>,
}

impl SubtitlesKept {
    /// How the title's subtitle segments are cut and timed.
    pub fn plan(&self, title: &Title) -> &SubtitlePlan {
        self.plan.get_or_init(|| SubtitlePlan::new(title))
    }

    /// The clear HLS subtitle playlist of text track `track_id`, if the title has it.
    pub fn playlist(&self, title: &Title, track_id: u32) -> Option<Bytes> {
        let texts = &title.index.text_tracks;
        let sidecars = (title.sidecars.iter()).position(|s| s.track_id == track_id);
        let pos = (texts.iter().position(|t| t.track_id == track_id))
            .or_else(|| Some(texts.len() + sidecars?))?;
        let slot = self.playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_subtitle_playlist(self.plan(title), track_id)))
                .clone(),
        )
    }

    /// The HLS subtitle playlist of text track `track_id` as `options` write it.
    pub fn playlist_with(
        &self,
        title: &Title,
        track_id: u32,
        options: &ManifestOptions,
    ) -> Option<Bytes> {
        let clear = self.playlist(title, track_id)?;
        if options.is_clear() {
            return Some(clear);
        }
        let playlist = render_subtitle_playlist_with(self.plan(title), track_id, options);
        Some(Bytes::from(playlist))
    }
}

/// A title's segments numbered by nginx-vod-module's windows, worked out on the first
/// request by an nginx-vod name that needs them.
#[derive(Debug)]
pub struct WindowsKept {
    windows: OnceLock<Result<Windows, PackageError>>,
}

impl WindowsKept {
    /// The title's segments numbered by nginx-vod-module's windows (`package::Windows`),
    /// its tracks lasting `durations_ms` as the module reads them: a walk over the segments
    /// and a search per window of each audio track, the first time. The durations are a
    /// function of the title (and of the whole one it is a clip of), so every caller
    /// passes the same.
    ///
    /// # Errors
    /// [`PackageError::TooManyWindows`] for a title the module's numbering would cut into
    /// more segments than its limit.
    pub fn windows(&self, title: &Title, durations_ms: &[u64]) -> Result<&Windows, PackageError> {
        let windows = (self.windows)
            .get_or_init(|| Windows::new(&title.index, &title.plan, durations_ms.to_vec()));
        windows.as_ref().map_err(Clone::clone)
    }
}

/// Each track's parameter sets for reading `cbcs` slice headers, read from its sample
/// entry on the first encrypted segment.
#[derive(Debug)]
pub struct SlicesKept {
    /// By track position.
    params: Vec<OnceLock<Result<Arc<SliceHeaderParams>, ProtectError>>>,
}

impl SlicesKept {
    /// The parameter sets the slice headers of the track at position `pos` are read with
    /// (`package::encrypt::slice_header_params`); `None` for a position past the tracks.
    pub fn slice_header_params(
        &self,
        title: &Title,
        pos: usize,
    ) -> Option<Result<Arc<SliceHeaderParams>, ProtectError>> {
        let track = title.index.tracks.get(pos)?;
        let slot = self.params.get(pos)?;
        Some(
            slot.get_or_init(|| {
                slice_header_params(&track.sample_description, track.track_id).map(Arc::new)
            })
            .clone(),
        )
    }
}

/// A title's MPEG-TS output and its rendered playlists, filled on first use
/// (`ts_layout::ts_output` works it out).
#[derive(Debug)]
pub struct TsOutput {
    /// The TS output, or why the title has none.
    pub ts: Result<TsTitle, PackageError>,
    /// The multivariant playlist.
    pub master: OnceLock<Bytes>,
    /// Media playlists by TS rendition position.
    pub media: Vec<OnceLock<Bytes>>,
    /// I-frame playlists by TS rendition position.
    pub iframes: Vec<OnceLock<Bytes>>,
    /// The main audio alone where it is muxed with the videos (nginx-vod's `index-a1.m3u8`
    /// under `hlsts`; `TsTitle::main_audio_alone`), worked out on the first request for it,
    /// so a title nobody asks that of walks its samples once, not twice; `None` inside when
    /// the main audio is not muxed. Its media playlist beside it.
    main_audio_alone: OnceLock<Option<Result<TsRendition, PackageError>>>,
    main_audio_media: OnceLock<Bytes>,
}

/// Where a TS rendition is in a title's [`TsOutput`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsAt {
    /// At this position of the renditions the TS output lists.
    Listed(usize),
    /// The main audio alone, which it does not list.
    MainAudioAlone,
}

impl TsOutput {
    /// The TS output of `title`, its playlists not yet rendered. Walks the title: call it
    /// off the runtime workers.
    pub fn new(title: &Title) -> Self {
        let ts = TsTitle::new(title);
        for reason in ts.iter().flat_map(|t| &t.skipped) {
            tracing::info!(%reason, "rendition left out of the MPEG-TS output");
        }
        let n = ts.as_ref().map_or(0, |t| t.renditions.len());
        Self {
            ts,
            master: OnceLock::new(),
            media: (0..n).map(|_| OnceLock::new()).collect(),
            iframes: (0..n).map(|_| OnceLock::new()).collect(),
            main_audio_alone: OnceLock::new(),
            main_audio_media: OnceLock::new(),
        }
    }

    /// The TS rendition at `at`, if it is there (the main audio alone: once worked out).
    pub fn rendition_at(&self, at: TsAt) -> Option<&TsRendition> {
        match at {
            TsAt::Listed(pos) => self.ts.as_ref().ok()?.renditions.get(pos),
            TsAt::MainAudioAlone => self.main_audio_alone.get()?.as_ref()?.as_ref().ok(),
        }
    }

    /// The TS rendition named by `track_id`, and where it is: a listed one, else the main
    /// audio alone, worked out on first use (a walk over its samples: call it off the
    /// runtime workers the first time, see [`TsOutput::main_audio_alone_known`]).
    ///
    /// # Errors
    /// The TS output's own error; what laying out the main audio alone met.
    pub fn rendition_named(
        &self,
        title: &Title,
        track_id: u32,
    ) -> Result<Option<(TsAt, &TsRendition)>, PackageError> {
        let ts = self.ts.as_ref().map_err(Clone::clone)?;
        if let Some(pos) = (ts.renditions.iter()).position(|r| r.rendition.track_id == track_id) {
            return Ok(ts.renditions.get(pos).map(|r| (TsAt::Listed(pos), r)));
        }
        let main = ts.main_audio.as_ref().map(|a| a.track_id);
        if main != Some(track_id) {
            return Ok(None);
        }
        let alone = self
            .main_audio_alone
            .get_or_init(|| ts.main_audio_alone(title));
        match alone {
            Some(Ok(rendition)) => Ok(Some((TsAt::MainAudioAlone, rendition))),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(None),
        }
    }

    /// Whether asking [`TsOutput::rendition_named`] for `track_id` walks no samples.
    pub fn main_audio_alone_known(&self, track_id: u32) -> bool {
        let main = (self.ts.as_ref().ok())
            .and_then(|ts| ts.main_audio.as_ref())
            .map(|a| a.track_id);
        main != Some(track_id) || self.main_audio_alone.get().is_some()
    }

    /// The media playlist slot of the rendition at `at`.
    pub fn media_slot(&self, at: TsAt) -> Option<&OnceLock<Bytes>> {
        match at {
            TsAt::Listed(pos) => self.media.get(pos),
            TsAt::MainAudioAlone => Some(&self.main_audio_media),
        }
    }
}
