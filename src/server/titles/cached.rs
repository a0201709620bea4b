//! A cached title: the packaged `Title`, its version token, and what is rendered from it
//! on first use and kept with it (manifests, init segments, the subtitle plan, the MPEG-TS
//! output), so a cached playlist costs a lookup and a clone of `Bytes`.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::media::slice_header::SliceHeaderParams;
use crate::media::TrackKind;
use crate::package::protect::{slice_header_params, ProtectError};
use crate::package::ts::{TsRendition, TsTitle};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{
    init_segment, render_iframe_playlist, render_media_playlist, render_media_playlist_with,
    render_mpd, render_mpd_with, render_multivariant_playlist, render_multivariant_playlist_with,
    render_subtitle_playlist, render_subtitle_playlist_with, split_document_track_id,
    ManifestOptions, PackageError, Title, VersionToken, Windows,
};
use crate::source::{ObjectIdentity, ObjectKey};

/// How long after a load the offsets left for later are worked out: past the first
/// playlist's answer (a few milliseconds), before a player has read a media playlist and an
/// init segment and asks for a segment (several round trips).
pub(super) const OFFSETS_AFTER: std::time::Duration = std::time::Duration::from_millis(20);

/// A title with its rendered manifests and init segments, filled on first use.
#[derive(Debug)]
pub struct CachedTitle {
    /// The packaged title.
    pub title: Title,
    /// Its version token (`Title::version_token`), the folder its resources live in.
    pub token: VersionToken,
    /// A title document's own encryption policy, overriding the server's; `None` for plain
    /// MP4s and documents that do not say (see `server::protect`).
    pub encryption: Option<crate::crypto::EncryptionPolicy>,
    /// A title document's own DRM systems, overriding the server's `--drm-systems`.
    pub drm: Option<Vec<crate::crypto::drm::DrmId>>,
    /// A sequence's parts (issue 31), when the title is one: `title` is then its
    /// reference part as the sequence shows it, and only the sequence's manifests and
    /// its parts' resources are served (`outputs::sequence`).
    pub sequence: Option<Arc<SequenceTitle>>,
    multivariant: OnceLock<Bytes>,
    mpd: OnceLock<Bytes>,
    /// Media playlists, by rendition position.
    media_playlists: Vec<OnceLock<Bytes>>,
    /// Init segments, by rendition position.
    init_segments: Vec<OnceLock<Bytes>>,
    /// HLS I-frame playlists, by rendition position (video renditions only).
    iframe_playlists: Vec<OnceLock<Bytes>>,
    /// How subtitle segments are cut, when the title has text tracks.
    subtitle_plan: OnceLock<SubtitlePlan>,
    /// HLS subtitle playlists, by text track position, then by sidecar position.
    subtitle_playlists: Vec<OnceLock<Bytes>>,
    /// For a title document's title, the object of each file number (1-based: file `f`
    /// is entry `f - 1`) and the version it was loaded at; empty for a plain MP4, whose
    /// one object is the request's key.
    files: Vec<(ObjectKey, ObjectIdentity)>,
    /// The MPEG-TS output, worked out on the first TS request (`outputs::ts`).
    ts: OnceLock<TsOutput>,
    /// Its segments numbered as nginx-vod-module numbers them, worked out on the first
    /// request by an nginx-vod name that needs them (`outputs::nginx_vod::numbered`).
    windows: OnceLock<Result<Windows, PackageError>>,
    /// For `cbcs`, each track's parameter sets for reading slice headers, by track
    /// position, read from its sample entry on the first encrypted segment.
    slice_params: Vec<OnceLock<Result<Arc<SliceHeaderParams>, ProtectError>>>,
}

impl CachedTitle {
    pub(super) fn new(title: Title) -> Self {
        let n = title.renditions.len();
        let texts = title.index.text_tracks.len() + title.sidecars.len();
        let tracks = title.index.tracks.len();
        Self {
            token: title.version_token(),
            encryption: None,
            drm: None,
            sequence: None,
            title,
            multivariant: OnceLock::new(),
            mpd: OnceLock::new(),
            media_playlists: (0..n).map(|_| OnceLock::new()).collect(),
            init_segments: (0..n).map(|_| OnceLock::new()).collect(),
            iframe_playlists: (0..n).map(|_| OnceLock::new()).collect(),
            subtitle_plan: OnceLock::new(),
            subtitle_playlists: (0..texts).map(|_| OnceLock::new()).collect(),
            files: Vec::new(),
            ts: OnceLock::new(),
            windows: OnceLock::new(),
            slice_params: (0..tracks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// A new title's long tracks leave their sample offsets to be worked out on first use
    /// (`media::SampleOffsets`), so its first playlist does not wait for them. They are
    /// worked out on the blocking pool a little later ([`OFFSETS_AFTER`]), once that
    /// playlist is on its way, so a first segment rarely waits either, and the `moov`
    /// buffer they are worked out from is let go. Returns the title, shared.
    pub(in crate::server) fn with_offsets_soon(self) -> Arc<Self> {
        let title = Arc::new(self);
        if (title.title.index.tracks.iter()).any(|t| !t.samples.offsets_known()) {
            let title = title.clone();
            tokio::spawn(async move {
                tokio::time::sleep(OFFSETS_AFTER).await;
                let _ = tokio::task::spawn_blocking(move || {
                    for track in &title.title.index.tracks {
                        let _ = track.samples.offsets();
                    }
                })
                .await;
            });
        }
        title
    }

    /// The title's segments numbered by nginx-vod-module's windows (`package::Windows`),
    /// its tracks lasting `durations_ms` as the module reads them: a walk over the segments
    /// and a search per window of each audio track, the first time. The durations are a
    /// function of the title (and of the whole one it is a clip of), so every caller
    /// passes the same.
    ///
    /// # Errors
    /// [`PackageError::TooManyWindows`] for a title the module's numbering would cut into
    /// more segments than its limit.
    pub fn windows(&self, durations_ms: &[u64]) -> Result<&Windows, PackageError> {
        let windows = self.windows.get_or_init(|| {
            Windows::new(&self.title.index, &self.title.plan, durations_ms.to_vec())
        });
        windows.as_ref().map_err(Clone::clone)
    }

    /// The parameter sets the slice headers of the track at position `pos` are read with
    /// under `cbcs` (`package::protect::slice_header_params`), read on first use; `None`
    /// for a position past the title's tracks.
    pub fn slice_header_params(
        &self,
        pos: usize,
    ) -> Option<Result<Arc<SliceHeaderParams>, ProtectError>> {
        let track = self.title.index.tracks.get(pos)?;
        let slot = self.slice_params.get(pos)?;
        Some(
            slot.get_or_init(|| {
                slice_header_params(&track.sample_description, track.track_id).map(Arc::new)
            })
            .clone(),
        )
    }

    /// The slot of the title's MPEG-TS output (see `outputs::ts`).
    pub fn ts_slot(&self) -> &OnceLock<TsOutput> {
        &self.ts
    }

    /// A title document's title, whose tracks are read from `files` (by file number, see
    /// `package::document_track_id`).
    pub(super) fn with_files(title: Title, files: Vec<(ObjectKey, ObjectIdentity)>) -> Self {
        Self {
            files,
            ..Self::new(title)
        }
    }

    /// Another title made from this one (a view: `views.rs`), read from the same files.
    pub(super) fn derived(&self, title: Title) -> Self {
        Self {
            files: self.files.clone(),
            ..Self::new(title)
        }
    }

    /// The object (and its version) that track `track_id` is read from, when the title
    /// comes from a title document; `None` for a plain MP4 (read the request's key).
    pub fn object_of(&self, track_id: u32) -> Option<(&ObjectKey, &ObjectIdentity)> {
        let (file, _) = split_document_track_id(track_id)?;
        let (key, identity) = self
            .files
            .get(usize::try_from(file).ok()?.checked_sub(1)?)?;
        Some((key, identity))
    }

    /// The HLS multivariant playlist.
    pub fn multivariant(&self) -> Bytes {
        self.multivariant
            .get_or_init(|| Bytes::from(render_multivariant_playlist(&self.title)))
            .clone()
    }

    /// The DASH MPD.
    pub fn mpd(&self) -> Bytes {
        self.mpd
            .get_or_init(|| Bytes::from(render_mpd(&self.title)))
            .clone()
    }

    fn rendition_pos(&self, track_id: u32) -> Option<usize> {
        self.title
            .renditions
            .iter()
            .position(|r| r.track_id == track_id)
    }

    /// The media playlist of track `track_id`, if it is a rendition.
    pub fn media_playlist(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        let slot = self.media_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_media_playlist(&self.title, rendition)))
                .clone(),
        )
    }

    /// The I-frame playlist of track `track_id`, if it is a video rendition.
    pub fn iframe_playlist(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        if rendition.kind != TrackKind::Video {
            return None;
        }
        let slot = self.iframe_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_iframe_playlist(&self.title, rendition)))
                .clone(),
        )
    }

    /// How the title's subtitle segments are cut and timed.
    pub fn subtitle_plan(&self) -> &SubtitlePlan {
        self.subtitle_plan
            .get_or_init(|| SubtitlePlan::new(&self.title))
    }

    /// The HLS subtitle playlist of text track `track_id`, if the title has it.
    pub fn subtitle_playlist(&self, track_id: u32) -> Option<Bytes> {
        let texts = &self.title.index.text_tracks;
        let sidecars = (self.title.sidecars.iter()).position(|s| s.track_id == track_id);
        let pos = (texts.iter().position(|t| t.track_id == track_id))
            .or_else(|| Some(texts.len() + sidecars?))?;
        let slot = self.subtitle_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| {
                Bytes::from(render_subtitle_playlist(self.subtitle_plan(), track_id))
            })
            .clone(),
        )
    }

    /// The HLS multivariant playlist as `options` write it: the kept clear one for the
    /// default options, else written for the request.
    pub fn multivariant_with(&self, options: &ManifestOptions) -> Bytes {
        match options.is_clear() {
            true => self.multivariant(),
            false => Bytes::from(render_multivariant_playlist_with(&self.title, options)),
        }
    }

    /// The DASH MPD as `options` write it (see [`CachedTitle::multivariant_with`]).
    pub fn mpd_with(&self, options: &ManifestOptions) -> Bytes {
        match options.is_clear() {
            true => self.mpd(),
            false => Bytes::from(render_mpd_with(&self.title, options)),
        }
    }

    /// The media playlist of track `track_id` as `options` write it, if it is a rendition.
    pub fn media_playlist_with(&self, track_id: u32, options: &ManifestOptions) -> Option<Bytes> {
        if options.is_clear() {
            return self.media_playlist(track_id);
        }
        let rendition = self.title.rendition(track_id)?;
        let playlist = render_media_playlist_with(&self.title, rendition, options);
        Some(Bytes::from(playlist))
    }

    /// The HLS subtitle playlist of text track `track_id` as `options` write it.
    pub fn subtitle_playlist_with(
        &self,
        track_id: u32,
        options: &ManifestOptions,
    ) -> Option<Bytes> {
        let clear = self.subtitle_playlist(track_id)?;
        if options.is_clear() {
            return Some(clear);
        }
        let playlist = render_subtitle_playlist_with(self.subtitle_plan(), track_id, options);
        Some(Bytes::from(playlist))
    }

    /// The init segment of track `track_id`, if it is a rendition.
    pub fn init_segment(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        let track = self.title.index.tracks.get(rendition.track_pos)?;
        let slot = self.init_segments.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(init_segment(track)))
                .clone(),
        )
    }
}

/// A title's MPEG-TS output and its rendered playlists, filled on first use
/// (`outputs::ts` works it out and answers from it).
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
    /// The TS output of `cached`, its playlists not yet rendered. Walks the title: call it
    /// off the runtime workers.
    pub fn new(cached: &CachedTitle) -> Self {
        let ts = TsTitle::new(&cached.title);
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

/// A sequence with the cached title of each part (1-based part `p` is `parts[p - 1]`),
/// whose segments, init segments and subtitles are served from that part's own title.
#[derive(Debug)]
pub struct SequenceTitle {
    /// The parts matched into the sequence's renditions.
    pub sequence: crate::package::Sequence,
    /// Each part's cached title, in play order.
    pub parts: Vec<Arc<CachedTitle>>,
}

impl SequenceTitle {
    /// Part `part` (1-based) as cached.
    pub fn part(&self, part: u32) -> Option<&Arc<CachedTitle>> {
        self.parts.get((part as usize).checked_sub(1)?)
    }
}
