//! Loading a `MediaIndex` from a source: locate the boxes (async reads), then parse on the
//! blocking pool, where a caught panic becomes an error instead of a dead worker.

use std::sync::Arc;

use super::{locate_boxes, parse_index, MediaError, MediaIndex, MediaLimits};
use crate::source::{MediaSource, ObjectIdentity, ObjectKey};

/// Read and parse the index of the object version `identity` under `key`.
///
/// # Errors
/// Any [`MediaError`]: the object is not a usable MP4, breaks a limit, or cannot be read.
pub async fn load_index(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    let boxes = locate_boxes(source.as_ref(), key, identity, limits).await?;
    let identity = identity.clone();
    let limits = *limits;
    tokio::task::spawn_blocking(move || parse_index(identity, &boxes.moov, &limits))
        .await
        .map_err(|join| MediaError::Internal {
            reason: if join.is_panic() {
                "parser panicked".to_owned()
            } else {
                join.to_string()
            },
        })?
}
