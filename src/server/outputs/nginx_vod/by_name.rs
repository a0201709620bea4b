//! An nginx-vod name, answered: resolved against the title (`resolve.rs`), it stands for a
//! native resource of the title (which the dispatch answers as its own name is answered),
//! a stream numbered as nginx-vod-module numbers it (`numbered.rs`), or a redirect to a
//! view of the title.

use std::sync::Arc;

use super::numbered::{self, Numbered};
use super::resolve::{resolve, Resolved};
use crate::crypto::Scheme;
use crate::package::View;
use crate::server::access::manifest::RequestPlace;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::Answer;
use crate::server::route::nginx_names::{NginxKind, NginxName, NginxOutput};
use crate::server::title_request::TitleRoute;
use crate::server::titles::load::load_view;
use crate::source::ObjectKey;

/// What an nginx-vod name is answered with.
#[derive(Debug)]
pub enum NginxAnswer {
    /// An answer of its own (a numbered stream's).
    Answer(Answer),
    /// The native resource it stands for, answered as its own name is but never held; with
    /// `unversioned`, under the manifest cache policy whatever its folder (the name
    /// carries none).
    Native {
        route: TitleRoute,
        unversioned: bool,
    },
    /// A 302 to this location.
    Redirect(String),
}

/// What `name` of the title at `key` as `view` shows it, asked from `place`, is answered
/// with.
///
/// # Errors
/// The title's load errors, the resolution's (tracks the title does not have), and the
/// numbered stream's.
pub async fn by_name(
    app: &Arc<App>,
    key: ObjectKey,
    view: View,
    name: &NginxName,
    place: &RequestPlace<'_>,
) -> Result<NginxAnswer, ServeError> {
    if matches!(name.kind, NginxKind::Segment { ts: true, .. }) && name.output != NginxOutput::HlsTs
    {
        return Err(ServeError::NotOffered(
            "MPEG-TS segments are served under the hlsts location".into(),
        ));
    }
    let (_, cached) = load_view(&app.catalog, &key, &view).await?;
    if cached.sequence.is_some() {
        return Err(ServeError::NotOffered(
            "nginx-vod names are not offered for sequences".into(),
        ));
    }
    // A clear output's names are numbered as the module numbers them, and so are AES-128
    // MPEG-TS ones; other encrypted outputs' keep the encrypted output's numbering.
    let policy = cached.encryption.unwrap_or(app.protect.policy());
    // MPEG-TS with AES-128 too: its numbered segments are the encrypted output's
    // (`numbered.rs`), as the module's `vod_hls_encryption_method aes-128`.
    let numbered = match name.output {
        NginxOutput::Hls => policy.hls.is_none(),
        NginxOutput::HlsTs => matches!(policy.hls, None | Some(Scheme::Aes128)),
        NginxOutput::Dash => policy.dash.is_none(),
    };
    Ok(match resolve(&cached, view, name, numbered)? {
        Resolved::Native(resource, view) => NginxAnswer::Native {
            route: TitleRoute {
                key,
                version: None,
                resource,
                view,
            },
            unversioned: false,
        },
        Resolved::Numbered(stream, view) => {
            // Numbered playlists write URLs relative to the server.
            let place = RequestPlace {
                headers: None,
                ..place.clone()
            };
            let answer = numbered::numbered_stream(app, &key, &view, &stream, &place);
            match Box::pin(answer).await? {
                Numbered::Answer(answer) => NginxAnswer::Answer(answer),
                Numbered::TsSegment(route) => NginxAnswer::Native {
                    route,
                    unversioned: true,
                },
            }
        }
        Resolved::Redirect(location) => NginxAnswer::Redirect(location),
    })
}
