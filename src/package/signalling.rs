//! What a manifest says beyond its title, as plain data the HLS and DASH writers take: the
//! version folder its URIs name, a query every URI carries (a signed URL's token), whether
//! trick play is offered, renditions held back, and the protection it signals (the key's
//! method, URI and IVs in HLS; `ContentProtection` and the licence URL in DASH).
//!
//! [`ManifestOptions::default`] is the clear output, written as it always was. The writers
//! place each piece where it belongs as they write, so nothing edits rendered text.

use std::borrow::Cow;
use std::sync::Arc;

use super::thumb::Storyboard;
use super::{version_folder, Title, VersionToken};
use crate::crypto::keys::ContentKey;
use crate::crypto::Scheme;

/// What a manifest says beyond its title. The default is the clear output.
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    /// The version token of the folder versioned URIs name (`v{token}/`); `None` is the
    /// title's own ([`Title::version_token`]). An encrypted output lives in a folder of
    /// its own, so its URLs never meet the clear ones in a cache.
    pub version: Option<VersionToken>,
    /// A query appended to every URI, without `?` (`token=...`): a signed URL's token
    /// carried on, so the resources a manifest names pass the same check.
    pub query: Option<String>,
    /// Whether trick play is offered: I-frame playlists in multivariant playlists, and
    /// the DASH trick-play sets. Its key frames are served clear only, so an encrypted
    /// output leaves it out.
    pub trick_play: bool,
    /// Renditions (by track id) the MPEG-TS multivariant playlist leaves out: their
    /// variants and `EXT-X-MEDIA` tags go, and nothing else changes (the rates and codecs
    /// of the rest stay as they were). SAMPLE-AES leaves out what it does not cover.
    pub withheld: Vec<u32>,
    /// Track ids (renditions, text tracks, sidecar files) a manifest filter leaves out of
    /// an entry manifest (`filter.rs`), ascending: their tags and elements go, and what
    /// stays keeps its names and numbers.
    pub filtered: Vec<u32>,
    /// The protection to signal; `None` is clear.
    pub protection: Option<ManifestProtection>,
    /// The storyboard to signal (DASH-IF thumbnails in the MPD, an image playlist in
    /// HLS); `None`: not signalled (the setting is off, the title has no video, or the
    /// output is encrypted).
    pub storyboard: Option<Storyboard>,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        Self {
            version: None,
            query: None,
            trick_play: true,
            withheld: Vec::new(),
            filtered: Vec::new(),
            protection: None,
            storyboard: None,
        }
    }
}

/// The protection a manifest signals.
///
/// HLS: `EXT-X-SESSION-KEY` in multivariant playlists and `EXT-X-KEY` in media playlists,
/// by method (`encrypt::manifest::HlsKey`: AES-128 with an IV per segment, SAMPLE-AES
/// MPEG-TS with one IV per rendition, SAMPLE-AES `cbcs` fMP4 with W3C ClearKey and a line
/// per DRM system of the key). DASH: `ContentProtection` in each audio and video
/// AdaptationSet.
#[derive(Debug, Clone)]
pub struct ManifestProtection {
    /// The scheme of the output.
    pub scheme: Scheme,
    /// The title's key: its KID is signalled, its DRM systems' `pssh` data go in the MPD.
    pub key: Arc<ContentKey>,
    /// The clear version token: HLS IVs derive from it and the KID (`encrypt::hls_*_iv`),
    /// as the encrypted segments' do.
    pub clear_token: VersionToken,
    /// The HLS key resource's name (`hls.key`): relative in media playlists (they live in
    /// the version folder), under the version folder in multivariant playlists.
    pub key_name: String,
    /// The W3C ClearKey licence URL (HLS SAMPLE-AES over fMP4, and DASH), absolute.
    pub licence_url: String,
    /// Whether W3C ClearKey is signalled (HLS SAMPLE-AES over fMP4, and DASH); the key's
    /// DRM systems (`ContentKey::systems`) are signalled beside it.
    pub clearkey: bool,
}

impl ManifestOptions {
    /// Whether these are the default options: the clear rendering, which depends on the
    /// title alone (and may be cached with it), is the answer.
    pub fn is_clear(&self) -> bool {
        self.version.is_none()
            && self.query.is_none()
            && self.trick_play
            && self.withheld.is_empty()
            && self.filtered.is_empty()
            && self.protection.is_none()
            && self.storyboard.is_none()
    }

    /// Whether a manifest filter leaves out track `track_id`.
    pub(super) fn left_out(&self, track_id: u32) -> bool {
        self.filtered.binary_search(&track_id).is_ok()
    }

    /// The version folder of the title's versioned URIs, `v{token}/`.
    pub(super) fn folder(&self, title: &Title) -> String {
        match &self.version {
            Some(token) => version_folder(token),
            None => version_folder(&title.version_token()),
        }
    }

    /// `uri` with the query, after `?` (or `&` when it has one already).
    pub(super) fn with_query<'u>(&self, uri: &'u str) -> Cow<'u, str> {
        match &self.query {
            None => Cow::Borrowed(uri),
            Some(query) => {
                let sep = if uri.contains('?') { '&' } else { '?' };
                Cow::Owned(format!("{uri}{sep}{query}"))
            }
        }
    }

    /// `value`, an escaped XML attribute value or element text, with the query (its `&`
    /// escaped), after `?` (or `&amp;` when it has one already).
    pub(super) fn with_xml_query<'u>(&self, value: &'u str) -> Cow<'u, str> {
        match &self.query {
            None => Cow::Borrowed(value),
            Some(query) => {
                let sep = if value.contains('?') { "&amp;" } else { "?" };
                Cow::Owned(format!("{value}{sep}{}", query.replace('&', "&amp;")))
            }
        }
    }
}

#[cfg(test)]
mod tests;
