//! Why a request path is not a route: nothing is served there (404), it is malformed
//! (400), or too long (414). The answer for each is in `server::error`.

use crate::source::KeyError;

/// Why a path is not a route.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// Nothing is served at this path (404).
    #[error("no such resource")]
    NotFound,
    /// The path is malformed: bad percent-encoding, bad key (400).
    #[error("bad request path: {reason}")]
    BadPath { reason: String },
    /// The path is longer than any route's (414, RFC 9110 15.5.15).
    #[error("request path longer than {max} bytes")]
    TooLong { max: usize },
}

impl From<KeyError> for RouteError {
    fn from(e: KeyError) -> Self {
        RouteError::BadPath {
            reason: e.to_string(),
        }
    }
}
