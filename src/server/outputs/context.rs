//! What every output of a title is handed: the title as the path views it, the object it
//! was read from, the output the version folder selects (clear or encrypted), what its
//! manifests say beyond the title (protection, the signed-URL token carried on), and how
//! the answer is tagged and cached. Made once per request by `vod.rs`.

use std::sync::Arc;

use bytes::Bytes;

use crate::package::{ManifestOptions, Resource};
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::protect::select::Protected;
use crate::server::respond::answer::{Answer, Content};
use crate::server::titles::cached::CachedTitle;
use crate::source::{ObjectIdentity, ObjectKey};

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
    /// What its manifests say beyond the title (`protect::manifest::manifest_options`).
    pub options: ManifestOptions,
    /// The answer's entity tag.
    pub etag: String,
    /// The answer's cache policy.
    pub cache_control: &'static str,
}

impl TitleRequest<'_> {
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
    pub fn rendition(&self, track_id: u32) -> Result<&crate::package::Rendition, ServeError> {
        (self.cached.title.rendition(track_id)).ok_or(ServeError::NoRendition(track_id))
    }
}
