//! A title's MPEG-TS output, kept with it (`kept::TsOutput`): the layout worked out once,
//! on the blocking pool, on the first request that needs it; and the TS rendition a name
//! stands for (a listed one, or the main audio alone). Shared by the MPEG-TS output and
//! nginx-vod's numbered streams, so neither imports the other.

use std::sync::Arc;

use tracing::Instrument;

use super::cached::CachedTitle;
use super::kept::{TsAt, TsOutput};
use crate::package::ts::TsRendition;
use crate::package::PackageError;

/// Why a title's TS output or one of its renditions cannot be had (answered in
/// `server::error`).
#[derive(Debug, thiserror::Error)]
pub enum TsLayoutError {
    /// The title has no TS output, or laying out a rendition failed.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// The layout's work on the blocking pool was lost.
    #[error("TS layout failed")]
    Lost,
    /// No TS rendition of this track id.
    #[error("no TS rendition {0}")]
    NoRendition(u32),
}

/// The TS output of `cached`, worked out on the blocking pool the first time.
///
/// # Errors
/// 422 when no rendition can go in TS; 500 if the work is lost.
pub async fn ts_output(cached: &Arc<CachedTitle>) -> Result<&TsOutput, TsLayoutError> {
    if cached.caches.ts.get().is_none() {
        let title = cached.clone();
        tokio::task::spawn_blocking(move || {
            (title.caches.ts).get_or_init(|| TsOutput::new(&title.title));
        })
        .instrument(tracing::info_span!("ts.layout"))
        .await
        .map_err(|_| TsLayoutError::Lost)?;
    }
    cached.caches.ts.get().ok_or(TsLayoutError::Lost)
}

/// The TS rendition named by `track_id` in the TS output of `cached`, and where it is: a
/// listed one, or the main audio alone (nginx-vod's `index-a1.m3u8` under `hlsts`), laid
/// out on the blocking pool the first time it is asked for.
///
/// # Errors
/// 422 when the title has no TS output; 404 when it has no TS rendition of `track_id`;
/// 500 if the work is lost.
pub async fn ts_rendition_named(
    cached: &Arc<CachedTitle>,
    track_id: u32,
) -> Result<(TsAt, &TsRendition), TsLayoutError> {
    let output = ts_output(cached).await?;
    if !output.main_audio_alone_known(track_id) {
        let title = cached.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(output) = title.caches.ts.get() {
                let _ = output.rendition_named(&title.title, track_id);
            }
        })
        .instrument(tracing::info_span!("ts.layout.main_audio"))
        .await
        .map_err(|_| TsLayoutError::Lost)?;
    }
    (output.rendition_named(&cached.title, track_id)?).ok_or(TsLayoutError::NoRendition(track_id))
}
