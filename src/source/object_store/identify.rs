//! How the source learns which version of an object it serves: a HEAD, the GETs of a first
//! open (whose answers carry the identity too), the background check of an identity past
//! its window, and whether an answer is of the version asked for.

use std::sync::Arc;

use ::object_store::{GetRange, ObjectMeta};
use bytes::{Bytes, BytesMut};
use futures_util::stream::StreamExt;
use tracing::Instrument;

use super::identities::Known;
use super::opening::Opened;
use super::store::{io_error, map_error};
use super::ObjectStoreSource;
use crate::source::error::SourceError;
use crate::source::identity::ObjectIdentity;
use crate::source::key::ObjectKey;

/// Prefix of the version of an object whose store gives no ETag: its last-modified time.
pub(super) const LAST_MODIFIED_VERSION: &str = "lm:";

impl ObjectStoreSource {
    /// HEAD `key`: its current identity.
    #[tracing::instrument(
        name = "source.read",
        skip_all,
        fields(vod.source = "object_store", vod.key = %key, vod.request = "HEAD")
    )]
    pub(super) async fn head(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        Ok(identity_of(&self.requests.head(key).await?.meta))
    }

    /// Open `key` for the first time: a GET of its first bytes, and of its last ones when
    /// recent opens needed them (`opening.rs`), at once. Their answers give the identity as
    /// a HEAD would, and their bytes are kept for the reads that follow. A store that will
    /// not answer the GET (an empty object, a range refused) is asked with a HEAD.
    #[tracing::instrument(
        name = "source.open",
        skip_all,
        fields(vod.source = "object_store", vod.key = %key,
               vod.head_bytes = tracing::field::Empty, vod.tail_bytes = tracing::field::Empty)
    )]
    pub(super) async fn open(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        if !self.open_shapes.reads() {
            return self.head(key).await;
        }
        let sizes = self.open_shapes.next();
        let span = tracing::Span::current();
        span.record("vod.head_bytes", sizes.head);
        span.record("vod.tail_bytes", sizes.tail);
        let head = self.read_whole(key, GetRange::Bounded(0..sizes.head));
        let tail = async {
            match sizes.tail {
                0 => None,
                n => Some(self.read_whole(key, GetRange::Suffix(n)).await),
            }
        };
        let (head, tail) = tokio::join!(head, tail);
        let (identity, head) = match head {
            Ok(read) => read,
            Err(e @ (SourceError::NotFound { .. } | SourceError::Timeout { .. })) => return Err(e),
            Err(_) => return self.head(key).await,
        };
        // The tail of the same version only, and only the bytes past the head.
        let tail = match tail {
            Some(Ok((of, bytes))) if of == identity => {
                let at = identity.size.saturating_sub(bytes.len() as u64);
                let head_end = head.len() as u64;
                let skip = usize::try_from(head_end.saturating_sub(at)).unwrap_or(usize::MAX);
                (skip < bytes.len()).then(|| (at.max(head_end), bytes.slice(skip..)))
            }
            _ => None,
        };
        let opened = Opened {
            head,
            tail,
            slot: sizes.slot,
        };
        self.opened.keep(key, &identity, opened).await;
        Ok(identity)
    }

    /// GET `range` of `key` with no version asked for, and the whole answer: the version
    /// it is of, and its bytes.
    async fn read_whole(
        &self,
        key: &ObjectKey,
        range: GetRange,
    ) -> Result<(ObjectIdentity, Bytes), SourceError> {
        let result = self.requests.get(key, Some(range), None).await?;
        let identity = identity_of(&result.meta);
        // The range the store answers with, checked by `object_store` against ours.
        let expected = result.range.end.saturating_sub(result.range.start);
        let counters = &self.requests.counters;
        let mut body = result.into_stream();
        let mut bytes = BytesMut::with_capacity(usize::try_from(expected).unwrap_or(0));
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                counters.read_errors.inc();
                map_error(key, e)
            })?;
            counters.read_bytes.inc_by(chunk.len() as u64);
            if (bytes.len() + chunk.len()) as u64 > expected {
                counters.read_errors.inc();
                return Err(io_error(key, "the store sent more than asked".to_owned()));
            }
            bytes.extend_from_slice(&chunk);
        }
        if (bytes.len() as u64) < expected {
            counters.read_errors.inc();
            return Err(io_error(key, "an answer ended early".to_owned()));
        }
        Ok((identity, bytes.freeze()))
    }

    /// Check the identity `known` of `key` with a HEAD, on its own task.
    pub(super) fn check_in_background(&self, key: &ObjectKey, known: Arc<Known>) {
        let Some(identities) = self.identities.clone() else {
            return;
        };
        if !known.start_check() {
            return;
        }
        let (requests, key) = (self.requests.clone(), key.clone());
        let key_name = key.to_string();
        let check = async move {
            match requests.head(&key).await {
                Ok(result) => {
                    let found = identity_of(&result.meta);
                    identities.checked(&key, &known, Some(found)).await;
                }
                Err(SourceError::NotFound { .. }) => identities.checked(&key, &known, None).await,
                // The store is failing: the identity stays stale, and the next request
                // past its window asks again.
                Err(_) => {}
            }
            known.end_check();
        };
        let span = tracing::info_span!("source.revalidate", vod.key = %key_name);
        tokio::spawn(check.instrument(span));
    }
}

/// The identity of an object as its store describes it: size, and the ETag, or the
/// last-modified time for a store without ETags.
pub(super) fn identity_of(meta: &ObjectMeta) -> ObjectIdentity {
    ObjectIdentity {
        size: meta.size,
        version: meta.e_tag.clone().unwrap_or_else(|| {
            format!("{LAST_MODIFIED_VERSION}{}", meta.last_modified.to_rfc3339())
        }),
    }
}

/// The `If-Match` value for reads of `identity`: its ETag if it has a strong one (a weak
/// ETag never matches `If-Match`, RFC 9110 13.1.1).
pub(super) fn if_match(identity: &ObjectIdentity) -> Option<String> {
    let version = identity.version.as_str();
    (!version.starts_with(LAST_MODIFIED_VERSION) && !version.starts_with("W/"))
        .then(|| version.to_owned())
}

/// Whether a GET answered with `meta` is of the object version `identity`.
pub(super) fn same_version(identity: &ObjectIdentity, meta: &ObjectMeta) -> bool {
    if meta.size != identity.size {
        return false;
    }
    match &meta.e_tag {
        Some(tag) => *tag == identity.version,
        // No ETag on the answer: compare the last-modified time if that is our version,
        // else rely on the If-Match the request carried.
        None => {
            !identity.version.starts_with(LAST_MODIFIED_VERSION)
                || identity_of(meta).version == identity.version
        }
    }
}
