//! Views served: a title's clip or track selection (`package::View`, issue 16) made from
//! the whole title's cached index, and cached beside it.
//!
//! A view never reads the source again: it is the cached title's index with the clip
//! composed into its edit lists and the unselected tracks left out, re-planned on the
//! blocking pool. It is cached in the catalog's title cache under the object's key and an
//! identity that carries the view, so it ages out, and is dropped with a replaced file,
//! like any title; its version token differs from the whole title's.

use std::sync::Arc;

use http::StatusCode;

use super::catalog::{CachedTitle, Catalog};
use super::error::ErrorAnswer;
use crate::package::{apply_view, View, ViewError};
use crate::source::{ObjectIdentity, ObjectKey};

impl From<&ViewError> for ErrorAnswer {
    fn from(e: &ViewError) -> Self {
        match e {
            ViewError::Package(p) => ErrorAnswer::from(p),
            ViewError::Malformed { .. }
            | ViewError::EmptyClip { .. }
            | ViewError::PastEnd { .. }
            | ViewError::NoTracks { .. } => {
                ErrorAnswer::new(StatusCode::BAD_REQUEST, e.to_string())
            }
        }
    }
}

/// `whole` (the title of `key` at `identity`) as `view` shows it: `whole` itself for the
/// whole title, else the cached view, made on a miss.
///
/// # Errors
/// 400 for a view the title cannot show (a clip past its end, a selection keeping no
/// track), 422 when the view cannot be packaged exactly, 500 if the worker fails.
pub(super) async fn viewed_title(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    whole: Arc<CachedTitle>,
    view: &View,
) -> Result<Arc<CachedTitle>, ErrorAnswer> {
    if view.is_whole() {
        return Ok(whole);
    }
    let mut viewed_identity = identity.clone();
    viewed_identity
        .version
        .push_str(&format!("\nview:{}", view.path()));
    let target = catalog.segment_duration_ms;
    let view = view.clone();
    catalog
        .cache
        .try_get_with((key.clone(), viewed_identity), async move {
            let source = whole.clone();
            let title =
                tokio::task::spawn_blocking(move || apply_view(&source.title, &view, target))
                    .await
                    .map_err(|e| {
                        ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
                    })?
                    .map_err(|e| ErrorAnswer::from(&e))?;
            Ok::<_, ErrorAnswer>(Arc::new(whole.derived(title)))
        })
        .await
        .map_err(|e| e.as_ref().clone())
}
