//! A cached title: the packaged `Title`, its version token, what a title document says of
//! its protection, a sequence's parts, the objects its tracks are read from, and what each
//! output renders from it on first use and keeps with it (`kept.rs`, one part per output).

use std::sync::Arc;

use super::kept::OutputCaches;
use crate::package::{split_document_track_id, Title, VersionToken};
use crate::source::{ObjectIdentity, ObjectKey};

/// How long after a load the offsets left for later are worked out: past the first
/// playlist's answer (a few milliseconds), before a player has read a media playlist and an
/// init segment and asks for a segment (several round trips).
pub(super) const OFFSETS_AFTER: std::time::Duration = std::time::Duration::from_millis(20);

/// A loaded title, with what its outputs keep (filled on first use).
#[derive(Debug)]
pub struct CachedTitle {
    /// The packaged title.
    pub title: Title,
    /// Its version token (`Title::version_token`), the folder its resources live in.
    pub token: VersionToken,
    /// A title document's own encryption policy, overriding the server's; `None` for plain
    /// MP4s and documents that do not say (see `server::access`).
    pub encryption: Option<crate::crypto::EncryptionPolicy>,
    /// A title document's own DRM systems, overriding the server's `--drm-systems`.
    pub drm: Option<Vec<crate::crypto::drm::DrmId>>,
    /// A title document's own key split, overriding the server's `--key-presets`.
    pub key_presets: Option<crate::crypto::KeyPresets>,
    /// A title document's own DASH profile, overriding the server's `--dash-profile`;
    /// `None` for plain MP4s and documents that do not say.
    pub dash_profile: Option<crate::config::DashProfile>,
    /// A sequence's parts, when the title is one: `title` is then its
    /// reference part as the sequence shows it, and only the sequence's manifests and
    /// its parts' resources are served (`outputs::sequence`).
    pub sequence: Option<Arc<SequenceTitle>>,
    /// For a title document's title, the object of each file number (1-based: file `f`
    /// is entry `f - 1`) and the version it was loaded at; empty for a plain MP4, whose
    /// one object is the request's key.
    files: Vec<(ObjectKey, ObjectIdentity)>,
    /// What each output renders from the title and keeps with it.
    pub caches: OutputCaches,
}

impl CachedTitle {
    pub(super) fn new(title: Title) -> Self {
        Self {
            token: title.version_token(),
            encryption: None,
            drm: None,
            key_presets: None,
            dash_profile: None,
            sequence: None,
            caches: OutputCaches::new(&title),
            files: Vec::new(),
            title,
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
