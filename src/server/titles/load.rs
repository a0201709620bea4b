//! The title a request is about: the object's identity, then its title from the catalog
//! (a plain MP4, a title document, or an nginx-vod urlset made into a document), then the
//! view the path asks for. Every output starts here. A title document is dispatched here
//! too: to `sequence_load` when it lists parts (whose parts are documents' titles), else
//! to `documents`.

use std::sync::Arc;
use std::time::Instant;

use super::cached::CachedTitle;
use super::catalog::{Catalog, TitleError};
use super::documents::{read_document, title_of_document, DocumentTitleError};
use super::sequence_load::sequence_title;
use super::views::{viewed_title, ViewLoadError};
use crate::media::is_title_document;
use crate::package::View;
use crate::server::route::nginx_names::{urlset_document, URLSET_SUFFIX};
use crate::source::{ObjectIdentity, ObjectKey, SourceError};

/// Why the title of a request could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The object's identity could not be had (missing, unreachable, ...).
    #[error(transparent)]
    Source(#[from] SourceError),
    /// An nginx-vod urlset that names no usable set of files.
    #[error("{0}")]
    Urlset(String),
    /// The media file could not be loaded.
    #[error(transparent)]
    Title(Arc<TitleError>),
    /// The title document could not be served.
    #[error(transparent)]
    Document(Arc<DocumentTitleError>),
    /// A URL clip or track selection of a sequence, which sequences do not offer (clip
    /// the parts in the document instead).
    #[error("URL clips and track selections are not offered for sequences; clip the parts in the document")]
    SequenceView,
    /// The view could not be made.
    #[error(transparent)]
    View(Arc<ViewLoadError>),
}

/// How long an identity answered by the source is reused: until `until`, unless the
/// source's identity epoch (`MediaSource::identity_epoch`, read before asking) moves on.
#[derive(Debug, Clone, Copy)]
pub struct Reuse {
    pub until: Instant,
    pub epoch: u64,
}

/// The title of `key` as `view` shows it, with the identity of the object it was read
/// from: a plain MP4, a title document, or an nginx-vod urlset (a document made from the
/// key, whose identity covers only its files).
///
/// # Errors
/// The source's answer for the object, the title's load errors, the view's.
pub async fn load_view(
    catalog: &Catalog,
    key: &ObjectKey,
    view: &View,
) -> Result<(ObjectIdentity, Arc<CachedTitle>), LoadError> {
    let (identity, cached, _) = load_view_until(catalog, key, view).await?;
    Ok((identity, cached))
}

/// [`load_view`], with how long the source reuses the object's identity
/// (`MediaSource::identify_until`; `None` for a urlset, whose identity is made here).
///
/// # Errors
/// As [`load_view`].
pub async fn load_view_until(
    catalog: &Catalog,
    key: &ObjectKey,
    view: &View,
) -> Result<(ObjectIdentity, Arc<CachedTitle>, Option<Reuse>), LoadError> {
    let urlset = key.ends_with_ignore_case(URLSET_SUFFIX);
    // Read before asking, so an identity dropped meanwhile ends the reuse at once.
    let epoch = catalog.source().identity_epoch();
    let (identity, until) = match urlset {
        true => {
            let identity = ObjectIdentity {
                size: 0,
                version: "urlset".into(),
            };
            (identity, None)
        }
        false => catalog.source().identify_until(key).await?,
    };
    let whole = if urlset {
        let document = urlset_document(key).map_err(LoadError::Urlset)?;
        let max = catalog.limits.max_title_renditions;
        if document.video.len() > max {
            let reason = format!(
                "the urlset names {} files, over the limit of {max}",
                document.video.len()
            );
            return Err(LoadError::Urlset(reason));
        }
        // Documents and views are boxed: their futures are large, and a plain file's
        // cached answer should not carry them (see `server::request`).
        Box::pin(title_of_document(
            catalog,
            key,
            &identity,
            Arc::new(document),
        ))
        .await
        .map_err(LoadError::Document)?
    } else if is_title_document(key) {
        Box::pin(document_title(catalog, key, &identity))
            .await
            .map_err(LoadError::Document)?
    } else {
        (catalog.title(key, &identity).await).map_err(LoadError::Title)?
    };
    if whole.sequence.is_some() && !view.is_uncut() {
        return Err(LoadError::SequenceView);
    }
    // A sequence keeps its parts' own cuts: it has no nginx-vod names to number.
    let cached = match view.is_whole() || whole.sequence.is_some() {
        true => whole,
        false => Box::pin(viewed_title(catalog, key, &identity, whole, view))
            .await
            .map_err(LoadError::View)?,
    };
    Ok((identity, cached, until.map(|until| Reuse { until, epoch })))
}

/// The title of the document at `key`, version `identity`, loading what is not cached.
///
/// # Errors
/// A [`DocumentTitleError`] naming the entry at fault, shared with concurrent loads.
async fn document_title(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
) -> Result<Arc<CachedTitle>, Arc<DocumentTitleError>> {
    let document = catalog
        .documents
        .try_get_with(
            (key.clone(), identity.clone()),
            read_document(catalog, key, identity),
        )
        .await?;
    if !document.parts.is_empty() {
        return sequence_title(catalog, key, identity, document).await;
    }
    title_of_document(catalog, key, identity, document).await
}
