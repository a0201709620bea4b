//! A request for one resource of a title, as every title output is handed it: the title
//! loaded as the path views it, the object it was read from, the output its version folder
//! selects (clear or encrypted), what its manifests say beyond the title, and how the
//! answer is tagged and cached. Made once per request (`TitleRequest::load`) by the
//! dispatch in `request.rs`, which also asks here for the part of a sequence a resource
//! stands for, and holds a clear manifest's answer for the requests like it.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::media::is_title_document;
use crate::package::thumb::Storyboard;
use crate::package::{
    DashProfile, DashSubtitleFormat, ManifestFilter, ManifestOptions, Rendition, Resource, View,
};
use crate::server::access::manifest::{manifest_options, RequestPlace};
use crate::server::access::select::{select, Protected, Selected};
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::held::Keep;
use crate::server::respond::answer::{Answer, Content, IMMUTABLE, MANIFEST, PRIVATE_MANIFEST};
use crate::server::respond::conditional::entity_tag;
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::load::{load_view_until, Reuse};
use crate::source::{ObjectIdentity, ObjectKey};

/// What a path asks of a title: `/vod/KEY/[clip/..][tracks/..][vTOKEN/]NAME`, or the native
/// resource an nginx-vod name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleRoute {
    /// The key of the title (a file's or a title document's).
    pub key: ObjectKey,
    /// The version token of the folder the name was in; `None` for an entry manifest or an
    /// unversioned name.
    pub version: Option<String>,
    /// The resource asked for.
    pub resource: Resource,
    /// The clip and track selection the path asks for.
    pub view: View,
}

/// Whether a clear manifest answer may be held for the requests like it (`server::held`):
/// only when it was asked for by its own name, not through an nginx-vod name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Allowed,
    Never,
}

/// A request for one resource of a title, with everything its output needs.
pub struct TitleRequest<'r> {
    pub app: &'r Arc<App>,
    /// The resource asked for.
    pub resource: Resource,
    /// The key of the request (a title document's or the file's).
    pub key: ObjectKey,
    /// The identity of the object at `key`.
    pub identity: ObjectIdentity,
    /// The title as the path views it.
    pub cached: Arc<CachedTitle>,
    /// The encrypted output the version folder selects; `None` for the clear output.
    pub protected: Option<Protected>,
    /// What its manifests say beyond the title (`access::manifest::manifest_options`).
    pub options: ManifestOptions,
    /// The answer's entity tag.
    pub etag: String,
    /// The answer's cache policy.
    pub cache_control: &'static str,
    /// How long the object's identity is reused, for holding its answer; `None`: never
    /// held (a urlset, a sequence's part).
    reuse: Option<Reuse>,
}

impl<'r> TitleRequest<'r> {
    /// The request for `route`, asked from `place`: a manifest filter checked (before any
    /// read), the title loaded as viewed, the output its version folder selects, and what
    /// its manifests say beyond the title.
    ///
    /// # Errors
    /// A malformed filter, the title's load errors, a gone version, an unavailable key.
    pub async fn load(
        app: &'r Arc<App>,
        route: TitleRoute,
        place: &RequestPlace<'_>,
    ) -> Result<Self, ServeError> {
        let TitleRoute {
            key,
            version,
            resource,
            view,
        } = route;
        // A manifest filter of an entry manifest: a malformed one is refused before any read.
        let entry_manifest = matches!(
            resource,
            Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd
        );
        let filter = match entry_manifest {
            true => ManifestFilter::from_query(place.query)?,
            false => None,
        };
        // The object's identity and title: a file, a title document or a urlset, as viewed.
        let (identity, cached, reuse) = load_view_until(&app.catalog, &key, &view).await?;
        // A request pinned to another version (a playlist cached before the file was
        // replaced) must not get this version's bytes under that name; an encrypted
        // output's folder selects it.
        let selected = select(&app.protect, &key, &cached, version.as_deref(), &resource).await?;
        let protected = match selected {
            Selected::Clear => None,
            Selected::Protected(p) => Some(p),
        };
        let mut etag = entity_tag(
            protected.as_ref().map_or(&cached.token, |p| &p.token),
            &resource,
        );
        // What manifests say beyond the title; segments never read it, so they do not pay
        // for it (an encrypted output's licence URL and key).
        let mut options = match resource.kind().is_manifest() {
            true => manifest_options(
                &app.protect,
                &cached,
                protected.as_ref(),
                place,
                app.settings.dash_profile,
            )?,
            false => ManifestOptions::default(),
        };
        // Storyboards are signalled when asked, for clear outputs only (thumbnails of an
        // encrypted title are not offered).
        let storyboards = app.settings.storyboards;
        if storyboards.signalled && protected.is_none() && resource.kind().is_manifest() {
            options.storyboard = Storyboard::of_title(&cached.title, app.storyboard_layout());
        }
        options.dash_subtitles = app.settings.dash_subtitle_format;
        if resource == Resource::Mpd {
            etag = dash_form_tag(&etag, &options);
        }
        if let Some(filter) = filter {
            options.filtered = filter.left_out(&cached.title)?;
            etag = filtered_tag(&etag, &options.filtered);
        }
        let cache_control =
            if resource.kind().is_manifest() && app.protect.carried_token(place.query).is_some() {
                PRIVATE_MANIFEST
            } else if version.is_some() {
                IMMUTABLE
            } else {
                MANIFEST
            };
        // A title document's tracks are files of their own, so its answers are not held.
        let reuse = reuse.filter(|_| !is_title_document(&key));
        Ok(TitleRequest {
            app,
            resource,
            key,
            identity,
            cached,
            protected,
            options,
            etag,
            cache_control,
            reuse,
        })
    }

    /// A manifest's answer (written with [`TitleRequest::options`]), tagged unless it
    /// carries the request's token (manifests then differ per token).
    pub fn manifest(&self, bytes: Bytes, content_type: &'static str) -> Answer {
        let carries_token = self.options.query.is_some();
        Answer {
            content: Content::Inline(bytes),
            content_type,
            cache_control: self.cache_control,
            etag: (!carries_token).then(|| self.etag.clone()),
        }
    }

    /// An answer of `content` under the request's tag and cache policy.
    pub fn answer(&self, content: Content, content_type: &'static str) -> Answer {
        Answer {
            content,
            content_type,
            cache_control: self.cache_control,
            etag: Some(self.etag.clone()),
        }
    }

    /// The object (and its version) track `track_id` is read from: a title document's
    /// track from its own file, else the request's object.
    pub fn object_of(&self, track_id: u32) -> (ObjectKey, ObjectIdentity) {
        self.cached
            .object_of(track_id)
            .map_or((self.key.clone(), self.identity.clone()), |(k, i)| {
                (k.clone(), i.clone())
            })
    }

    /// The rendition `track_id` of the title.
    ///
    /// # Errors
    /// [`ServeError::NoRendition`] when the title has none with this id.
    pub fn rendition(&self, track_id: u32) -> Result<&Rendition, ServeError> {
        (self.cached.title.rendition(track_id)).ok_or(ServeError::NoRendition(track_id))
    }

    /// For a resource of a sequence, the request of the part's own title it stands for (an
    /// init segment, a media segment, or the WebVTT of a text track the part has), answered
    /// as that title answers it alone; `None` for the sequence's own resources (its
    /// manifests, a part's empty WebVTT, what sequences do not offer: `outputs::sequence`)
    /// and for a title that is no sequence.
    ///
    /// # Errors
    /// [`ServeError::NotOffered`] for an encrypted sequence (never served clear where
    /// encryption is configured); [`ServeError::NoRendition`] for a rendition or part the
    /// sequence does not have.
    pub fn part_request(&self) -> Result<Option<TitleRequest<'r>>, ServeError> {
        let Some(sequence) = &self.cached.sequence else {
            return Ok(None);
        };
        let policy = self.cached.encryption.unwrap_or(self.app.protect.policy());
        if policy.any() || self.protected.is_some() {
            return Err(ServeError::NotOffered(
                "encryption is not offered for sequences (the title is refused rather than served clear)".into(),
            ));
        }
        let seq = &sequence.sequence;
        let own_track = |part, track_id| {
            (seq.own_track(part, track_id)).ok_or(ServeError::NoRendition(track_id))
        };
        let own_text = |part, track_id| {
            (seq.own_text(part, track_id)).ok_or(ServeError::NoRendition(track_id))
        };
        let (part, inner) = match self.resource {
            Resource::PartInit { part, track_id } => {
                let track_id = own_track(part, track_id)?;
                (part, Resource::Init { track_id })
            }
            Resource::PartSegment {
                part,
                track_id,
                number,
            } => {
                let track_id = own_track(part, track_id)?;
                (part, Resource::Segment { track_id, number })
            }
            Resource::PartSubtitleSegment {
                part,
                track_id,
                number,
            } => match own_text(part, track_id)? {
                Some(track_id) => (part, Resource::SubtitleSegment { track_id, number }),
                None => return Ok(None),
            },
            Resource::PartSubtitleFile { part, track_id } => match own_text(part, track_id)? {
                Some(track_id) => (part, Resource::SubtitleFile { track_id }),
                None => return Ok(None),
            },
            Resource::PartTextInit {
                part,
                track_id,
                coding,
            } => match own_text(part, track_id)? {
                Some(track_id) => (part, Resource::TextInit { track_id, coding }),
                None => return Ok(None),
            },
            Resource::PartTextSegment {
                part,
                track_id,
                coding,
                number,
            } => match own_text(part, track_id)? {
                Some(track_id) => (
                    part,
                    Resource::TextSegment {
                        track_id,
                        coding,
                        number,
                    },
                ),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
        Ok(Some(TitleRequest {
            app: self.app,
            resource: inner,
            key: self.key.clone(),
            identity: self.identity.clone(),
            cached: cached.clone(),
            protected: None,
            options: ManifestOptions::default(),
            etag: self.etag.clone(),
            cache_control: self.cache_control,
            reuse: None,
        }))
    }

    /// `answer`, held for the requests like it at `place` when it may be: a clear manifest
    /// of a plain file, asked for by its own name ([`Hold`]), unfiltered (the map is keyed
    /// by path, without the query), until the file's identity window ends.
    pub fn held(&self, answer: Answer, place: &RequestPlace<'_>, hold: Hold) -> Answer {
        let resource = self.resource;
        if hold == Hold::Allowed
            && resource.kind().is_manifest()
            && self.protected.is_none()
            && self.options.filtered.is_empty()
        {
            if let (Some(reuse), Content::Inline(body), Some(etag)) =
                (self.reuse, &answer.content, &answer.etag)
            {
                let held = Keep {
                    body,
                    content_type: answer.content_type,
                    cache_control: answer.cache_control,
                    etag,
                    route: resource.kind().label(),
                    reuse,
                };
                self.app.answers.keep(place.path, held, Instant::now());
            }
        }
        answer
    }
}

/// The entity tag of an MPD written in a profile or subtitle form other than the defaults:
/// the default one's with the two named, so a cache revalidating an MPD after the
/// server's `--dash-profile` or `--dash-subtitle-format` changed (or a title document's
/// `"dash_profile"`) gets the new MPD rather than a 304 for the old. The defaults keep the
/// plain tag.
fn dash_form_tag(etag: &str, options: &ManifestOptions) -> String {
    let profile = match options.dash_profile {
        DashProfile::Default => None,
        DashProfile::Dvb => Some("dvb"),
    };
    let text = match options.dash_text_format() {
        DashSubtitleFormat::Wvtt => None,
        DashSubtitleFormat::Imsc1 => Some("imsc1"),
        DashSubtitleFormat::WebvttFile => Some("vttfile"),
    };
    let bare = etag.strip_suffix('"').unwrap_or(etag);
    match (profile, text) {
        (None, None) => etag.to_owned(),
        (Some(profile), Some(text)) => format!("{bare}-{profile}-{text}\""),
        (Some(form), None) | (None, Some(form)) => format!("{bare}-{form}\""),
    }
}

/// The entity tag of a manifest a filter left `filtered` out of: the unfiltered one's
/// with a hash of the list, so a cache that revalidates one never gets a 304 for the
/// other. A filter that leaves nothing out gives the unfiltered bytes and keeps its tag.
fn filtered_tag(etag: &str, filtered: &[u32]) -> String {
    if filtered.is_empty() {
        return etag.to_owned();
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in filtered.iter().flat_map(|id| id.to_be_bytes()) {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let bare = etag.strip_suffix('"').unwrap_or(etag);
    format!("{bare}-f{hash:016x}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given the default profile and subtitle form, then an MPD keeps its plain tag; given
    /// another profile or form, then the tag names it, so no cache mistakes one MPD for
    /// the other.
    #[test]
    fn an_mpd_in_another_profile_or_subtitle_form_has_its_own_tag() {
        let tag = "\"abc-manifest.mpd\"";
        let options = |dash_profile, dash_subtitles| ManifestOptions {
            dash_profile,
            dash_subtitles,
            ..ManifestOptions::default()
        };
        let tags: Vec<String> = [
            options(DashProfile::Default, DashSubtitleFormat::Wvtt),
            options(DashProfile::Default, DashSubtitleFormat::Imsc1),
            options(DashProfile::Default, DashSubtitleFormat::WebvttFile),
            options(DashProfile::Dvb, DashSubtitleFormat::Wvtt),
        ]
        .iter()
        .map(|o| dash_form_tag(tag, o))
        .collect();
        assert_eq!(
            tags,
            [
                "\"abc-manifest.mpd\"",
                "\"abc-manifest.mpd-imsc1\"",
                "\"abc-manifest.mpd-vttfile\"",
                "\"abc-manifest.mpd-dvb-imsc1\"",
            ]
        );
    }
}
