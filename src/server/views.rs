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

use super::answers::Reuse;
use super::catalog::{CachedTitle, Catalog};
use super::error::ErrorAnswer;
use super::nginx_vod::{urlset_document, URLSET_SUFFIX};
use super::titles::{document_title, title_of_document};
use super::App;
use crate::media::is_title_document;
use crate::package::{apply_view, View, ViewError};
use crate::source::{ObjectIdentity, ObjectKey};

/// The title of `key` as `view` shows it, with the identity of the object it was read
/// from: a plain MP4, a title document, or an nginx-vod urlset (a document made from the
/// key, whose identity covers only its files).
///
/// # Errors
/// The source's answer for the object, the title's load errors, the view's.
pub(super) async fn load_view(
    app: &App,
    key: &ObjectKey,
    view: &View,
) -> Result<(ObjectIdentity, Arc<CachedTitle>), ErrorAnswer> {
    let (identity, cached, _) = load_view_until(app, key, view).await?;
    Ok((identity, cached))
}

/// [`load_view`], with how long the source reuses the object's identity
/// (`MediaSource::identify_until`; `None` for a urlset, whose identity is made here).
///
/// # Errors
/// As [`load_view`].
pub(super) async fn load_view_until(
    app: &App,
    key: &ObjectKey,
    view: &View,
) -> Result<(ObjectIdentity, Arc<CachedTitle>, Option<Reuse>), ErrorAnswer> {
    let urlset = key.ends_with_ignore_case(URLSET_SUFFIX);
    // Read before asking, so an identity dropped meanwhile ends the reuse at once.
    let epoch = app.catalog.source().identity_epoch();
    let (identity, until) = match urlset {
        true => {
            let identity = ObjectIdentity {
                size: 0,
                version: "urlset".into(),
            };
            (identity, None)
        }
        false => (app.catalog.source().identify_until(key).await)
            .map_err(|e| ErrorAnswer::from(&e).with_detail(&e))?,
    };
    let whole = if urlset {
        let document = urlset_document(key)
            .map_err(|reason| ErrorAnswer::new(StatusCode::BAD_REQUEST, reason))?;
        let max = app.settings.limits.max_title_renditions;
        if document.video.len() > max {
            let reason = format!(
                "the urlset names {} files, over the limit of {max}",
                document.video.len()
            );
            return Err(ErrorAnswer::new(StatusCode::BAD_REQUEST, reason));
        }
        // Documents and views are boxed: their futures are large, and a plain file's
        // cached answer should not carry them (see handler.rs).
        Box::pin(title_of_document(
            &app.catalog,
            key,
            &identity,
            Arc::new(document),
        ))
        .await
        .map_err(|e| ErrorAnswer::from(e.as_ref()).with_detail(&e))?
    } else if is_title_document(key) {
        Box::pin(document_title(&app.catalog, key, &identity))
            .await
            .map_err(|e| ErrorAnswer::from(e.as_ref()).with_detail(&e))?
    } else {
        (app.catalog.title(key, &identity).await)
            .map_err(|e| ErrorAnswer::from(e.as_ref()).with_detail(&e))?
    };
    let cached = match view.is_whole() {
        true => whole,
        false => Box::pin(viewed_title(&app.catalog, key, &identity, whole, view)).await?,
    };
    Ok((identity, cached, until.map(|until| Reuse { until, epoch })))
}

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
            Ok::<_, ErrorAnswer>(whole.derived(title).with_offsets_soon())
        })
        .await
        .map_err(|e| e.as_ref().clone())
}
