//! An nginx-vod name's answer: resolved against the title (`resolve.rs`), then answered as
//! the native resource it stands for (`outputs::vod`), as a stream numbered as
//! nginx-vod-module numbers it (`numbered.rs`), or with a redirect to a view of the title.

use std::sync::Arc;

use super::numbered;
use super::resolve::{resolve, Resolved};
use crate::crypto::Scheme;
use crate::package::View;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::outputs::vod::{self, Hold};
use crate::server::protect::manifest::RequestPlace;
use crate::server::respond::answer::Answer;
use crate::server::route::nginx_names::{NginxKind, NginxName, NginxOutput};
use crate::server::titles::load::load_view;
use crate::source::ObjectKey;

/// What an nginx-vod name is answered with.
pub enum NginxAnswer {
    /// An answer, as any output's.
    Answer(Answer),
    /// A 302 to this location.
    Redirect(String),
}

/// The answer to `name` of the title at `key` as `view` shows it, asked from `place`.
///
/// # Errors
/// The title's load errors, the resolution's (tracks the title does not have), and the
/// answering output's.
pub async fn answer(
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
        Resolved::Native(resource, view) => {
            let answer = vod::answer(app, (key, None), resource, view, place, Hold::Never);
            NginxAnswer::Answer(answer.await?)
        }
        Resolved::Numbered(stream, view) => {
            // Numbered playlists write URLs relative to the server.
            let place = RequestPlace {
                headers: None,
                ..place.clone()
            };
            let answer = numbered::answer(app, &key, &view, &stream, &place);
            NginxAnswer::Answer(Box::pin(answer).await?)
        }
        Resolved::Redirect(location) => NginxAnswer::Redirect(location),
    })
}
