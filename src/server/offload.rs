//! Work that may take long, moved off the runtime workers: a segment's header construction
//! runs on the blocking pool, inside its `segment.assemble` span, so a long segment never
//! holds a worker that other connections need.

use tracing::{Instrument, Span};

use super::error::ServeError;
use crate::package::PackageError;

/// Run `work` (a segment's header construction) on the blocking pool, inside `span`.
///
/// # Errors
/// The packager's error; [`ServeError::Internal`] if the work is lost.
pub async fn assemble_off_runtime<T: Send + 'static>(
    span: Span,
    work: impl FnOnce() -> Result<T, PackageError> + Send + 'static,
) -> Result<T, ServeError> {
    let done = tokio::task::spawn_blocking(work)
        .instrument(span)
        .await
        .map_err(|_| ServeError::Internal("segment preparation failed"))?;
    Ok(done?)
}
