//! The error table: given each error, then its status, reason and `Retry-After`.

use super::*;

fn key() -> String {
    "k.mp4".to_string()
}

#[test]
fn each_error_maps_to_its_status() {
    let table: Vec<(ServeError, StatusCode)> = vec![
        (RouteError::NotFound.into(), StatusCode::NOT_FOUND),
        (
            RouteError::BadPath { reason: "x".into() }.into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            RouteError::TooLong { max: 4096 }.into(),
            StatusCode::URI_TOO_LONG,
        ),
        (ServeError::Forbidden, StatusCode::FORBIDDEN),
        (
            FilterError::BadValue {
                param: "max_height",
                reason: "is empty".into(),
            }
            .into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            FilterError::Repeated {
                param: "max_height",
            }
            .into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            FilterError::NothingLeft { what: "video" }.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            ServeError::MethodNotAllowed { allow: "GET" },
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (ServeError::Overloaded, StatusCode::SERVICE_UNAVAILABLE),
        (ServeError::DeadlineExceeded, StatusCode::GATEWAY_TIMEOUT),
        (ServeError::SourceStalled, StatusCode::GATEWAY_TIMEOUT),
        (ServeError::SourceEndedEarly, StatusCode::BAD_GATEWAY),
        (
            SourceError::NotFound { key: key() }.into(),
            StatusCode::NOT_FOUND,
        ),
        (
            SourceError::OutsideRoot { key: key() }.into(),
            StatusCode::NOT_FOUND,
        ),
        (
            SourceError::Timeout { key: key() }.into(),
            StatusCode::GATEWAY_TIMEOUT,
        ),
        (
            SourceError::Unreachable {
                key: key(),
                reason: "refused".into(),
            }
            .into(),
            StatusCode::BAD_GATEWAY,
        ),
        (
            SourceError::Changed { key: key() }.into(),
            StatusCode::SERVICE_UNAVAILABLE,
        ),
        (
            MediaError::NotMp4 { reason: "x".into() }.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            MediaError::Truncated { reason: "x".into() }.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            MediaError::Source(SourceError::Timeout { key: key() }).into(),
            StatusCode::GATEWAY_TIMEOUT,
        ),
        (
            PackageError::SegmentOutOfRange {
                number: 9,
                count: 1,
            }
            .into(),
            StatusCode::NOT_FOUND,
        ),
        (
            PackageError::EmptyTrack { track_id: 1 }.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            PackageError::ZeroDuration { track_id: 1 }.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            PackageError::NoRenditions.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            PackageError::NoTsRenditions.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            PackageError::NotInTs {
                track_id: 1,
                reason: "x".into(),
            }
            .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            MediaError::UnsupportedEdit {
                track_id: 1,
                edit: 2,
                reason: "x".into(),
            }
            .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            PackageError::UnsupportedEdit {
                track_id: 1,
                edit: 2,
                at_ms: 1000,
                reason: "x".into(),
            }
            .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            LoadError::Title(std::sync::Arc::new(TitleError::Package(
                PackageError::NoRenditions,
            )))
            .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (ServeError::NoRendition(3), StatusCode::NOT_FOUND),
        (ServeError::VersionGone, StatusCode::NOT_FOUND),
        (
            LoadError::Urlset("x".into()).into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            ServeError::SubtitleTooLarge { size: 9, max: 1 },
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (ServeError::NoKeyProvider, StatusCode::INTERNAL_SERVER_ERROR),
        (
            ServeError::NotUnderKeySplit("x".into()),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            crate::crypto::KeyError::MissingKey {
                usage: crate::crypto::KeyUsage::Hd,
            }
            .into(),
            StatusCode::SERVICE_UNAVAILABLE,
        ),
        (
            crate::crypto::KeyError::OneKeyPerTitle {
                source_kind: "nginx-vod",
            }
            .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ];
    for (error, status) in table {
        assert_eq!(error.answer().status, status, "{error:?}");
    }
}

#[test]
fn answers_that_ask_for_a_retry_say_when() {
    let changed = ServeError::from(SourceError::Changed { key: key() });
    assert_eq!(changed.answer().retry_after, Some(1));
    assert_eq!(ServeError::Overloaded.answer().retry_after, Some(1));
    assert_eq!(ServeError::Draining.answer().retry_after, Some(1));
    let missing = ServeError::from(crate::crypto::KeyError::MissingKey {
        usage: crate::crypto::KeyUsage::Uhd,
    });
    let answer = missing.answer();
    assert_eq!(answer.retry_after, Some(5));
    assert!(answer.reason.contains("no UHD key"), "{}", answer.reason);
    assert_eq!(
        ServeError::NotOffered("x".into()).answer().retry_after,
        None
    );
}

#[test]
fn a_refused_method_says_which_are_allowed() {
    let answer = ServeError::MethodNotAllowed {
        allow: "POST, OPTIONS",
    }
    .answer();
    assert_eq!(answer.allow, Some("POST, OPTIONS"));
    assert_eq!(answer.reason, "method not allowed");
}

#[test]
fn bucket_details_do_not_reach_the_body() {
    let answer = ServeError::from(SourceError::Unreachable {
        key: "k.mp4".into(),
        reason: "403 AccessDenied for bucket secret-bucket".into(),
    })
    .answer();
    assert!(!answer.reason.contains("secret-bucket"));
    assert!(answer.detail.is_some_and(|d| d.contains("secret-bucket")));
}
