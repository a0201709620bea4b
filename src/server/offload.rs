//! Work that may take long, moved off the runtime workers: a segment's header construction
//! runs on the blocking pool, inside its `segment.assemble` span, so a long segment never
//! holds a worker that other connections need. A segment of few samples is built on the
//! worker itself ([`assemble`]): its header takes microseconds, less than the hop to the
//! blocking pool and back (the hop was most of a cached fMP4 segment's CPU
//! beyond the bytes themselves, docs/performance.md).

use tracing::{Instrument, Span};

use super::error::ServeError;
use crate::package::PackageError;

/// Most samples (all tracks) of a segment whose header is built on the runtime worker.
/// At about a microsecond a sample at most (fMP4 and MPEG-TS alike, the budget harness's
/// header figures), such a header holds a worker for a few milliseconds at the very most.
pub const INLINE_ASSEMBLE_SAMPLES: usize = 4096;

/// Run `work` (a segment's header construction of `samples` samples) inside `span`: on the
/// worker for up to [`INLINE_ASSEMBLE_SAMPLES`], else on the blocking pool.
///
/// # Errors
/// The packager's error; [`ServeError::Internal`] if the work is lost.
pub async fn assemble<T: Send + 'static>(
    span: Span,
    samples: usize,
    work: impl FnOnce() -> Result<T, PackageError> + Send + 'static,
) -> Result<T, ServeError> {
    if samples <= INLINE_ASSEMBLE_SAMPLES {
        return Ok(span.in_scope(work)?);
    }
    assemble_off_runtime(span, work).await
}

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
