//! Every error the server answers with, as a typed [`ServeError`], and its answer (status,
//! one-line reason, `Retry-After`, extra headers) in one table: [`ServeError::answer`].
//!
//! Unknown key, rendition or segment: 404. Malformed URL: 400. A file that is not a usable
//! MP4: 422 with the reason, never 404 (a CDN must not cache "missing" for a broken
//! upload it can re-fetch once fixed). Source unreachable: 502; timing out: 504; an object
//! that changed while being read: 503 with `Retry-After`. Bucket details never reach the
//! body: the full error goes to the log line, the client gets the one-line reason.
//! Signed-URL refusals are a bare 403: the reason is only logged, never the token.

use http::StatusCode;

use super::route::path_error::RouteError;
use super::titles::catalog::TitleError;
use super::titles::documents::DocumentTitleError;
use super::titles::load::LoadError;
use super::titles::subtitle_text::SubtitleTextError;
use super::titles::ts_layout::TsLayoutError;
use super::titles::views::ViewLoadError;
use crate::crypto::KeyError;
use crate::media::MediaError;
use crate::package::encrypt::ProtectError;
use crate::package::thumb::ThumbError;
use crate::package::{FilterError, PackageError, ViewError};
use crate::source::SourceError;

/// Why a request gets an error answer. Every error answer the server gives is one of these.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    // The request itself.
    /// The path names nothing we serve, or is malformed.
    #[error(transparent)]
    Route(#[from] RouteError),
    /// A signed URL's token is missing, wrong or expired.
    #[error("forbidden")]
    Forbidden,
    /// The route does not answer this method.
    #[error("method not allowed")]
    MethodNotAllowed {
        /// The methods it answers, for `Allow`.
        allow: &'static str,
    },
    /// A licence request whose body could not be read.
    #[error("unreadable licence request")]
    UnreadableLicenceRequest,
    /// A licence request that is not W3C ClearKey JSON.
    #[error("not a ClearKey licence request")]
    BadLicenceRequest,
    /// A manifest filter (`?max_height=` ...) that is malformed (400) or leaves the title
    /// nothing to play (422).
    #[error(transparent)]
    Filter(#[from] FilterError),

    // The server's own state.
    /// Over a request class's limit: shed before any read.
    #[error("overloaded; retry")]
    Overloaded,
    /// Shutting down (readiness).
    #[error("draining")]
    Draining,
    /// The request's answer did not start within the request deadline.
    #[error("request deadline exceeded")]
    DeadlineExceeded,
    /// A worker or a layout failed where nothing else could (the reason is fixed text).
    #[error("{0}")]
    Internal(&'static str),

    // The source.
    /// Reading the object failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The source gave no first bytes of a segment within the request deadline.
    #[error("media source timed out")]
    SourceStalled,
    /// The source ended before a segment's bytes did.
    #[error("media source ended early")]
    SourceEndedEarly,

    // What the object holds, and the title made of it.
    /// The file is not a usable MP4.
    #[error(transparent)]
    Media(#[from] MediaError),
    /// The title cannot be packaged as asked.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// The title of the request could not be loaded: its object, media file, title
    /// document, urlset or view.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A subtitle file over the text read limit.
    #[error("subtitle file is {size} bytes, over the limit of {max}")]
    SubtitleTooLarge { size: u64, max: u64 },
    /// A subtitle file that is not WebVTT or SRT.
    #[error("{key}: {reason}")]
    SubtitleMalformed { key: String, reason: String },

    // What this title and version offer.
    /// No rendition with this track id.
    #[error("no rendition {0}")]
    NoRendition(u32),
    /// No video rendition with this track id.
    #[error("no video rendition {0}")]
    NoVideoRendition(u32),
    /// No MPEG-TS rendition with this track id.
    #[error("no TS rendition {0}")]
    NoTsRendition(u32),
    /// No MPEG-TS video rendition with this track id.
    #[error("no TS video rendition {0}")]
    NoTsVideoRendition(u32),
    /// A version folder that is no current output of the title.
    #[error("this version of the title is gone; reload the playlist")]
    VersionGone,
    /// Something this title or output does not offer, with the reason and what to ask for
    /// instead (encrypted outputs without trick play, nginx-vod names vodpack does not
    /// serve, ...).
    #[error("{0}")]
    NotOffered(String),
    /// A key or licence of a title whose output has none.
    #[error("not found")]
    NoKey,
    /// An output that cannot carry the title's key split (MPEG-TS muxes audio into each
    /// video rendition under one key; HLS AES-128 hands out one raw key), with the reason.
    #[error("{0}")]
    NotUnderKeySplit(String),

    // Protection.
    /// The content key could not be had.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A sample could not be encrypted.
    #[error(transparent)]
    Protect(#[from] ProtectError),
    /// A thumbnail cannot be made of this title or frame.
    #[error(transparent)]
    Thumbnail(#[from] ThumbError),
    /// Encryption is configured but no key provider could be made.
    #[error("no key provider")]
    NoKeyProvider,
}

/// The answer to an error: what the client gets, and the detail only the log sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// HTTP status.
    pub status: StatusCode,
    /// One line for the body (no bucket names, no paths beyond the key).
    pub reason: String,
    /// Seconds for `Retry-After`.
    pub retry_after: Option<u32>,
    /// `Allow`, on 405.
    pub allow: Option<&'static str>,
    /// The full error, for the log line only (it may name buckets or paths).
    pub detail: Option<String>,
}

impl ErrorAnswer {
    fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
            retry_after: None,
            allow: None,
            detail: None,
        }
    }

    fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    fn detail(mut self, detail: &impl std::fmt::Display) -> Self {
        self.detail = Some(detail.to_string());
        self
    }

    /// The same answer with the reason `reason` (a title document's errors name the entry).
    fn reason(mut self, reason: String) -> Self {
        self.reason = reason;
        self
    }
}

impl ServeError {
    /// Why an encrypted output has no I-frame playlists or key frames: they are not
    /// encrypted (fail closed).
    pub fn trick_play_not_offered() -> Self {
        ServeError::NotOffered("trick play is not offered for encrypted outputs".into())
    }

    /// The answer to this error: the one table.
    pub fn answer(&self) -> ErrorAnswer {
        use StatusCode as S;
        let said = |status: StatusCode| ErrorAnswer::new(status, self.to_string());
        match self {
            ServeError::Route(RouteError::NotFound) => ErrorAnswer::new(S::NOT_FOUND, "not found"),
            ServeError::Route(RouteError::BadPath { .. }) => said(S::BAD_REQUEST),
            ServeError::Route(RouteError::TooLong { .. }) => said(S::URI_TOO_LONG),
            ServeError::Forbidden => said(S::FORBIDDEN),
            ServeError::MethodNotAllowed { allow } => ErrorAnswer {
                allow: Some(allow),
                ..said(S::METHOD_NOT_ALLOWED)
            },
            ServeError::UnreadableLicenceRequest | ServeError::BadLicenceRequest => {
                said(S::BAD_REQUEST)
            }
            ServeError::Filter(e) if e.is_malformed() => said(S::BAD_REQUEST),
            ServeError::Filter(_) => said(S::UNPROCESSABLE_ENTITY),
            ServeError::Overloaded | ServeError::Draining => {
                said(S::SERVICE_UNAVAILABLE).retry_after(1)
            }
            ServeError::DeadlineExceeded | ServeError::SourceStalled => said(S::GATEWAY_TIMEOUT),
            ServeError::Internal(_) | ServeError::NoKeyProvider => said(S::INTERNAL_SERVER_ERROR),
            ServeError::Source(e) => source_answer(e).detail(e),
            ServeError::SourceEndedEarly => said(S::BAD_GATEWAY),
            ServeError::Media(e) => media_answer(e),
            ServeError::Package(e) => package_answer(e),
            ServeError::Load(e) => load_answer(e),
            ServeError::SubtitleTooLarge { .. }
            | ServeError::SubtitleMalformed { .. }
            | ServeError::NotUnderKeySplit(_) => said(S::UNPROCESSABLE_ENTITY),
            ServeError::NoRendition(_)
            | ServeError::NoVideoRendition(_)
            | ServeError::NoTsRendition(_)
            | ServeError::NoTsVideoRendition(_)
            | ServeError::VersionGone
            | ServeError::NotOffered(_)
            | ServeError::NoKey => said(S::NOT_FOUND),
            ServeError::Key(e) => key_answer(e).detail(e),
            ServeError::Protect(e) => protect_answer(e),
            ServeError::Thumbnail(e) => thumbnail_answer(e),
        }
    }
}

fn load_answer(e: &LoadError) -> ErrorAnswer {
    match e {
        LoadError::Source(e) => source_answer(e).detail(e),
        LoadError::Urlset(reason) => ErrorAnswer::new(StatusCode::BAD_REQUEST, reason.clone()),
        LoadError::SequenceView => ErrorAnswer::new(StatusCode::BAD_REQUEST, e.to_string()),
        LoadError::Title(e) => title_answer(e).detail(e),
        LoadError::Document(e) => document_answer(e).detail(e),
        LoadError::View(e) => match e.as_ref() {
            ViewLoadError::View(v) => view_answer(v),
            ViewLoadError::Worker(_) => {
                ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
            }
        },
    }
}

fn source_answer(e: &SourceError) -> ErrorAnswer {
    use StatusCode as S;
    match e {
        SourceError::NotFound { .. } | SourceError::OutsideRoot { .. } => {
            ErrorAnswer::new(S::NOT_FOUND, "not found")
        }
        SourceError::Changed { .. } => ErrorAnswer::new(
            S::SERVICE_UNAVAILABLE,
            "object changed while being read; retry",
        )
        .retry_after(1),
        SourceError::Timeout { .. } => {
            ErrorAnswer::new(S::GATEWAY_TIMEOUT, "media source timed out")
        }
        SourceError::Unreachable { .. } | SourceError::OutOfRange { .. } => {
            ErrorAnswer::new(S::BAD_GATEWAY, "media source unavailable")
        }
        SourceError::TooLarge { .. } | SourceError::Io { .. } => {
            ErrorAnswer::new(S::INTERNAL_SERVER_ERROR, "error reading media")
        }
    }
}

fn media_answer(e: &MediaError) -> ErrorAnswer {
    match e {
        MediaError::Source(source) => source_answer(source),
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
        | MediaError::NoTracks => ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}

fn package_answer(e: &PackageError) -> ErrorAnswer {
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
        | PackageError::BadBreak { .. }
        | PackageError::LadderTrack { .. }
        | PackageError::SequenceMismatch { .. }
        | PackageError::NotInTs { .. }
        | PackageError::NoTsRenditions
        | PackageError::TooManyWindows { .. }
        | PackageError::TextSegmentTooLarge { .. } => {
            ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        }
    }
}

fn title_answer(e: &TitleError) -> ErrorAnswer {
    match e {
        TitleError::Media(m) => media_answer(m),
        // A file with no audio or video track to offer is unusable, not missing.
        TitleError::Package(p) => ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, p.to_string()),
    }
}

fn document_answer(e: &DocumentTitleError) -> ErrorAnswer {
    let unusable = || ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string());
    match e {
        // The document, or what it names, cannot be packaged: 422 naming the entry.
        DocumentTitleError::Document(_) | DocumentTitleError::Missing { .. } => unusable(),
        DocumentTitleError::Package(p) => package_answer(p).reason(e.to_string()),
        // A rendition's file: 422 when it is at fault, else the source's answer.
        DocumentTitleError::Rendition { source, .. } => match source.is_about_the_file() {
            true => unusable(),
            false => title_answer(source),
        },
        DocumentTitleError::Source(s) => source_answer(s),
        DocumentTitleError::Part { source, .. } => document_answer(source).reason(e.to_string()),
        DocumentTitleError::Internal { .. } => {
            ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    }
}

fn view_answer(e: &ViewError) -> ErrorAnswer {
    match e {
        ViewError::Package(p) => package_answer(p),
        ViewError::Malformed { .. }
        | ViewError::EmptyClip { .. }
        | ViewError::PastEnd { .. }
        | ViewError::NoTracks { .. } => ErrorAnswer::new(StatusCode::BAD_REQUEST, e.to_string()),
    }
}

fn key_answer(e: &KeyError) -> ErrorAnswer {
    match e {
        // Never clear content instead: the client retries.
        KeyError::Unavailable { .. } => ErrorAnswer::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "content key unavailable; retry",
        )
        .retry_after(5),
        KeyError::MissingSystem { system } => ErrorAnswer::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("content key unavailable: the key server gave no {system} signalling; retry"),
        )
        .retry_after(5),
        KeyError::MissingKey { usage } => ErrorAnswer::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("content key unavailable: the key server gave no {usage} key; retry"),
        )
        .retry_after(5),
        KeyError::OneKeyPerTitle { .. } => {
            ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        }
        KeyError::Config { .. } => ErrorAnswer::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "key provider misconfigured",
        ),
    }
}

fn protect_answer(e: &ProtectError) -> ErrorAnswer {
    match e {
        ProtectError::UnsupportedCodec { .. }
        | ProtectError::MalformedSample { .. }
        | ProtectError::SliceHeader { .. } => {
            ErrorAnswer::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        }
        ProtectError::Layout { .. } => {
            ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "encryption failed").detail(e)
        }
    }
}

impl From<SubtitleTextError> for ServeError {
    fn from(e: SubtitleTextError) -> Self {
        match e {
            SubtitleTextError::Package(e) => e.into(),
            SubtitleTextError::Media(e) => e.into(),
            SubtitleTextError::Source(e) => e.into(),
            SubtitleTextError::TooLarge { size, max } => ServeError::SubtitleTooLarge { size, max },
            SubtitleTextError::Malformed { key, reason } => {
                ServeError::SubtitleMalformed { key, reason }
            }
        }
    }
}

impl From<TsLayoutError> for ServeError {
    fn from(e: TsLayoutError) -> Self {
        match e {
            TsLayoutError::Package(e) => e.into(),
            TsLayoutError::Lost => ServeError::Internal("TS layout failed"),
            TsLayoutError::NoRendition(track_id) => ServeError::NoTsRendition(track_id),
        }
    }
}

#[cfg(test)]
mod tests;

/// Thumbnails: nothing to show is 404, an asked size out of bounds 400, and a frame or
/// codec that cannot be decoded 422 with the reason.
fn thumbnail_answer(e: &ThumbError) -> ErrorAnswer {
    let status = match e {
        ThumbError::NoVideo { .. }
        | ThumbError::PastEnd { .. }
        | ThumbError::NoSuchSheet { .. } => StatusCode::NOT_FOUND,
        ThumbError::BadSize { .. } => StatusCode::BAD_REQUEST,
        ThumbError::CodecNeedsFeature { .. }
        | ThumbError::UnsupportedCodec { .. }
        | ThumbError::FrameTooLarge { .. }
        | ThumbError::TooManySamples { .. }
        | ThumbError::Undecodable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ErrorAnswer::new(status, e.to_string())
}
