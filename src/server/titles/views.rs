//! Views served: a title's clip or track selection (`package::View`), or the title cut to
//! another segment duration (an nginx-vod location's), made from the whole title's cached
//! index, and cached beside it.
//!
//! A view never reads the source again: it is the cached title's index with the clip
//! composed into its edit lists and the unselected tracks left out, re-planned on the
//! blocking pool. It is cached in the catalog's title cache under the object's key and an
//! identity that carries the view, so it ages out, and is dropped with a replaced file,
//! like any title; its version token differs from the whole title's.

use std::sync::Arc;

use super::cached::CachedTitle;
use super::catalog::Catalog;
use crate::package::{apply_view, View, ViewError};
use crate::source::{ObjectIdentity, ObjectKey};

/// Why a view of a title could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewLoadError {
    /// The title cannot show the view, or it cannot be packaged exactly.
    #[error(transparent)]
    View(#[from] ViewError),
    /// The worker that made it failed.
    #[error("internal error: {0}")]
    Worker(String),
}

/// `whole` (the title of `key` at `identity`) as `view` shows it: `whole` itself for the
/// whole title, else the cached view, made on a miss.
///
/// # Errors
/// The view's error (a clip past its end, a selection keeping no track, a view that cannot
/// be packaged exactly), or the worker's failure; shared with concurrent loads.
pub(super) async fn viewed_title(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    whole: Arc<CachedTitle>,
    view: &View,
) -> Result<Arc<CachedTitle>, Arc<ViewLoadError>> {
    if view.is_whole() {
        return Ok(whole);
    }
    let mut viewed_identity = identity.clone();
    viewed_identity
        .version
        .push_str(&format!("\nview:{}", view.path()));
    // A view cut to its own duration (an nginx-vod location's) is another title.
    if let Some(ms) = view.segment_ms {
        viewed_identity
            .version
            .push_str(&format!("\nsegments:{ms}"));
    }
    let target = view.segment_ms.unwrap_or(catalog.segment_duration_ms);
    let view = view.clone();
    catalog
        .cache
        .try_get_with((key.clone(), viewed_identity), async move {
            let source = whole.clone();
            let title =
                tokio::task::spawn_blocking(move || apply_view(&source.title, &view, target))
                    .await
                    .map_err(|e| ViewLoadError::Worker(e.to_string()))??;
            Ok::<_, ViewLoadError>(whole.derived(title).with_offsets_soon())
        })
        .await
}
