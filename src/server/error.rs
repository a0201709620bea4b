//! Every error to its HTTP answer, in one `match` (see the table test below).
//!
//! Unknown key, rendition or segment: 404. Malformed URL: 400. A file that is not a usable
//! MP4: 422 with the reason, never 404 (a CDN must not cache "missing" for a broken
//! upload it can re-fetch once fixed). Source unreachable: 502; timing out: 504; an object
//! that changed while being read: 503 with `Retry-After`. Bucket details never reach the
//! body: the full error goes to the log line, the client gets the one-line reason.

use http::StatusCode;

use super::catalog::TitleError;
use super::route::RouteError;
use super::titles::DocumentTitleError;
use crate::media::MediaError;
use crate::package::PackageError;
use crate::source::SourceError;

/// An error answer: status, one-line reason for the body, and an optional `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// HTTP status.
    pub status: StatusCode,
    /// One line for the body (no bucket names, no paths beyond the key).
    pub reason: String,
    /// Seconds for `Retry-After`, on 503.
    pub retry_after: Option<u32>,
    /// The full error, for the log line only (it may name buckets or paths).
    pub detail: Option<String>,
}

impl ErrorAnswer {
    /// An answer with `status` and the one-line `reason`.
    pub fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
            retry_after: None,
            detail: None,
        }
    }

    /// The same answer, with `detail` kept for the log line.
    pub fn with_detail(mut self, detail: impl std::fmt::Display) -> Self {
        self.detail = Some(detail.to_string());
        self
    }
}

impl From<&RouteError> for ErrorAnswer {
    fn from(e: &RouteError) -> Self {
        match e {
            RouteError::NotFound => ErrorAnswer::new(StatusCode::NOT_FOUND, "not found"),
            RouteError::BadPath { .. } => ErrorAnswer::new(StatusCode::BAD_REQUEST, e.to_string()),
        }
    }
}

impl From<&SourceError> for ErrorAnswer {
    fn from(e: &SourceError) -> Self {
        match e {
            SourceError::NotFound { .. } | SourceError::OutsideRoot { .. } => {
                ErrorAnswer::new(StatusCode::NOT_FOUND, "not found")
            }
            SourceError::Changed { .. } => ErrorAnswer {
                retry_after: Some(1),
                ..ErrorAnswer::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "object changed while being read; retry",
                )
            },
            SourceError::Timeout { .. } => {
                ErrorAnswer::new(StatusCode::GATEWAY_TIMEOUT, "media source timed out")
            }
            SourceError::Unreachable { .. } | SourceError::OutOfRange { .. } => {
                ErrorAnswer::new(StatusCode::BAD_GATEWAY, "media source unavailable")
            }
            SourceError::TooLarge { .. } | SourceError::Io { .. } => {
                ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "error reading media")
            }
        }
    }
}

impl From<&MediaError> for ErrorAnswer {
    fn from(e: &MediaError) -> Self {
        match e {
            MediaError::Source(source) => ErrorAnswer::from(source),
            MediaError::Internal { .. } => {
                ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
            }
            MediaError::NotMp4 { .. }
            | MediaError::Truncated { .. }
            | MediaError::InvalidTable { .. }
            | MediaError::Malformed { .. }
            | MediaError::UnsupportedCodec { .. }
            | MediaError::TooLarge { .. }
            | MediaError::UnsupportedEdit { .. }
            | MediaError::NoTracks => {
                ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
            }
        }
    }
}

impl From<&crate::package::protect::ProtectError> for ErrorAnswer {
    fn from(e: &crate::package::protect::ProtectError) -> Self {
        use crate::package::protect::ProtectError;
        match e {
            ProtectError::UnsupportedCodec { .. } | ProtectError::MalformedSample { .. } => {
                ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
            }
            ProtectError::Layout { .. } => {
                ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "encryption failed")
                    .with_detail(e)
            }
        }
    }
}

impl From<&crate::crypto::KeyError> for ErrorAnswer {
    fn from(e: &crate::crypto::KeyError) -> Self {
        use crate::crypto::KeyError;
        match e {
            // Never clear content instead: the client retries.
            KeyError::Unavailable { .. } => ErrorAnswer {
                retry_after: Some(5),
                ..ErrorAnswer::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "content key unavailable; retry",
                )
            }
            .with_detail(e),
            KeyError::Config { .. } => ErrorAnswer::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "key provider misconfigured",
            )
            .with_detail(e),
        }
    }
}

impl From<&PackageError> for ErrorAnswer {
    fn from(e: &PackageError) -> Self {
        match e {
            PackageError::NoSuchTrack { .. } | PackageError::SegmentOutOfRange { .. } => {
                ErrorAnswer::new(StatusCode::NOT_FOUND, e.to_string())
            }
            // Never an empty success: a CDN would cache a title that plays nothing. And a
            // file that cannot be packaged as it is is unusable, not missing.
            PackageError::NoRenditions
            | PackageError::EmptyTrack { .. }
            | PackageError::ZeroDuration { .. }
            | PackageError::UnsupportedEdit { .. }
            | PackageError::LadderMisaligned { .. }
            | PackageError::LadderDuration { .. }
            | PackageError::LadderTrack { .. }
            | PackageError::NotInTs { .. }
            | PackageError::NoTsRenditions => {
                ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
            }
        }
    }
}

impl From<&DocumentTitleError> for ErrorAnswer {
    fn from(e: &DocumentTitleError) -> Self {
        let unusable = || ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string());
        match e {
            // The document, or what it names, cannot be packaged: 422 naming the entry.
            DocumentTitleError::Document(_) | DocumentTitleError::Missing { .. } => unusable(),
            DocumentTitleError::Package(p) => ErrorAnswer {
                reason: e.to_string(),
                ..ErrorAnswer::from(p)
            },
            // A rendition's file: 422 when it is at fault, else the source's answer.
            DocumentTitleError::Rendition { source, .. } => match source.is_about_the_file() {
                true => unusable(),
                false => ErrorAnswer::from(source.as_ref()),
            },
            DocumentTitleError::Source(s) => ErrorAnswer::from(s),
            DocumentTitleError::Internal { .. } => {
                ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl From<&TitleError> for ErrorAnswer {
    fn from(e: &TitleError) -> Self {
        match e {
            TitleError::Media(m) => m.into(),
            // A file with no audio or video track to offer is unusable, not missing.
            TitleError::Package(p) => {
                ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, p.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_maps_to_its_status() {
        let key = || "k.mp4".to_string();
        let table: Vec<(ErrorAnswer, StatusCode)> = vec![
            ((&RouteError::NotFound).into(), StatusCode::NOT_FOUND),
            (
                (&RouteError::BadPath { reason: "x".into() }).into(),
                StatusCode::BAD_REQUEST,
            ),
            (
                (&SourceError::NotFound { key: key() }).into(),
                StatusCode::NOT_FOUND,
            ),
            (
                (&SourceError::OutsideRoot { key: key() }).into(),
                StatusCode::NOT_FOUND,
            ),
            (
                (&SourceError::Timeout { key: key() }).into(),
                StatusCode::GATEWAY_TIMEOUT,
            ),
            (
                (&SourceError::Unreachable {
                    key: key(),
                    reason: "refused".into(),
                })
                    .into(),
                StatusCode::BAD_GATEWAY,
            ),
            (
                (&SourceError::Changed { key: key() }).into(),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (
                (&MediaError::NotMp4 { reason: "x".into() }).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&MediaError::Truncated { reason: "x".into() }).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&MediaError::Source(SourceError::Timeout { key: key() })).into(),
                StatusCode::GATEWAY_TIMEOUT,
            ),
            (
                (&PackageError::SegmentOutOfRange {
                    number: 9,
                    count: 1,
                })
                    .into(),
                StatusCode::NOT_FOUND,
            ),
            (
                (&PackageError::EmptyTrack { track_id: 1 }).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&PackageError::ZeroDuration { track_id: 1 }).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&PackageError::NoRenditions).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&PackageError::NoTsRenditions).into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&PackageError::NotInTs {
                    track_id: 1,
                    reason: "x".into(),
                })
                    .into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&MediaError::UnsupportedEdit {
                    track_id: 1,
                    edit: 2,
                    reason: "x".into(),
                })
                    .into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (
                (&PackageError::UnsupportedEdit {
                    track_id: 1,
                    edit: 2,
                    at_ms: 1000,
                    reason: "x".into(),
                })
                    .into(),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
        ];
        for (answer, status) in table {
            assert_eq!(answer.status, status, "{answer:?}");
        }
        let changed: ErrorAnswer = (&SourceError::Changed { key: key() }).into();
        assert_eq!(changed.retry_after, Some(1));
    }

    #[test]
    fn bucket_details_do_not_reach_the_body() {
        let answer: ErrorAnswer = (&SourceError::Unreachable {
            key: "k.mp4".into(),
            reason: "403 AccessDenied for bucket secret-bucket".into(),
        })
            .into();
        assert!(!answer.reason.contains("secret-bucket"));
    }
}
