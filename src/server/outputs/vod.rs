//! A resource of a title (`/vod/KEY/...`, and nginx-vod names that resolve to one): the
//! title loaded as the path views it, the output its version folder selects, then the
//! output that owns the resource answers. A new output is a new arm here and a module
//! beside this one.

use std::sync::Arc;
use std::time::Instant;

use super::context::TitleRequest;
use super::thumb::storyboard;
use super::{cmaf, dash, hls, sequence, subtitles, ts};
use crate::media::is_title_document;
use crate::package::thumb::Storyboard;
use crate::package::{ManifestFilter, ManifestOptions, Resource, View};
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::held::Keep;
use crate::server::protect::manifest::{manifest_options, RequestPlace};
use crate::server::protect::select::{select, Selected};
use crate::server::respond::answer::{
    Answer, Content, IMMUTABLE, MANIFEST, PRIVATE_MANIFEST, WEBVTT,
};
use crate::server::respond::conditional::entity_tag;
use crate::server::titles::load::load_view_until;
use crate::source::ObjectKey;

/// Whether a clear manifest answer may be held for the requests like it (`server::held`):
/// only when it was asked for by its own name, not through an nginx-vod name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Allowed,
    Never,
}

/// The answer to `resource` of the title at `key` as `view` shows it, in version folder
/// `version` (`None` for an entry manifest or an unversioned nginx-vod name).
///
/// # Errors
/// The title's load errors, a gone version, and each output's own.
pub async fn answer(
    app: &Arc<App>,
    (key, version): (ObjectKey, Option<String>),
    resource: Resource,
    view: View,
    place: &RequestPlace<'_>,
    hold: Hold,
) -> Result<Answer, ServeError> {
    // A manifest filter of an entry manifest: a malformed one is refused before any read.
    let entry_manifest = matches!(
        resource,
        Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd
    );
    let filter = match entry_manifest {
        true => ManifestFilter::from_query(place.query)?,
        false => None,
    };
    // The object's identity and title: a file, a title document or a urlset, as viewed.
    let (identity, cached, reuse) = load_view_until(&app.catalog, &key, &view).await?;
    // A request pinned to another version (a playlist cached before the file was replaced)
    // must not get this version's bytes under that name; an encrypted output's folder
    // selects it.
    let selected = select(&app.protect, &key, &cached, version.as_deref(), &resource).await?;
    let protected = match selected {
        Selected::Clear => None,
        Selected::Protected(p) => Some(p),
    };
    let mut etag = entity_tag(
        protected.as_ref().map_or(&cached.token, |p| &p.token),
        &resource,
    );
    let plain_file = !is_title_document(&key);
    // What manifests say beyond the title; segments never read it, so they do not pay
    // for it (an encrypted output's licence URL and key).
    let mut options = match resource.kind().is_manifest() {
        true => manifest_options(&app.protect, &cached, protected.as_ref(), place),
        false => ManifestOptions::default(),
    };
    // Storyboards are signalled when asked, for clear outputs only (thumbnails of an
    // encrypted title are not offered).
    let storyboards = app.settings.storyboards;
    if storyboards.signalled && protected.is_none() && resource.kind().is_manifest() {
        options.storyboard = Storyboard::of_title(&cached.title, storyboard::layout(app));
    }
    if let Some(filter) = filter {
        options.filtered = filter.left_out(&cached.title)?;
        etag = filtered_tag(&etag, &options.filtered);
    }
    let req = TitleRequest {
        app,
        resource,
        key,
        identity,
        cached,
        protected,
        options,
        etag,
        cache_control: if resource.kind().is_manifest()
            && app.protect.carried_token(place.query).is_some()
        {
            PRIVATE_MANIFEST
        } else if version.is_some() {
            IMMUTABLE
        } else {
            MANIFEST
        },
    };
    let answer = match req.cached.sequence.clone() {
        Some(parts) => Box::pin(sequence::answer(&req, &parts)).await?,
        None => single(&req, resource).await?,
    };
    answer_held(app, &req, answer, (place, hold, plain_file), reuse)
}

/// The answer to `resource` of a title that is no sequence.
async fn single(req: &TitleRequest<'_>, resource: Resource) -> Result<Answer, ServeError> {
    let answer = match resource {
        Resource::Multivariant => hls::multivariant(req),
        Resource::MediaPlaylist { track_id } => hls::media_playlist(req, track_id)?,
        Resource::IframePlaylist { track_id } => hls::iframe_playlist(req, track_id)?,
        Resource::Mpd => dash::mpd(req),
        Resource::Init { track_id } => cmaf::init(req, track_id)?,
        Resource::Segment { track_id, number } | Resource::KeyFrame { track_id, number } => {
            Box::pin(cmaf::segment(req, track_id, number)).await?
        }
        Resource::SubtitleSegment { track_id, number } => {
            let request = subtitles::SubtitleRequest::Segment { number };
            Box::pin(subtitle(req, track_id, request)).await?
        }
        Resource::SubtitleFile { track_id } => {
            let request = subtitles::SubtitleRequest::File;
            Box::pin(subtitle(req, track_id, request)).await?
        }
        Resource::MultivariantTs
        | Resource::TsMediaPlaylist { .. }
        | Resource::TsIframePlaylist { .. }
        | Resource::TsSegment { .. }
        | Resource::TsSubtitleSegment { .. } => Box::pin(ts::answer(req)).await?,
        Resource::PartInit { .. }
        | Resource::PartSegment { .. }
        | Resource::PartSubtitleSegment { .. }
        | Resource::PartSubtitleFile { .. } => {
            return Err(ServeError::NoRendition(resource.track_id().unwrap_or(0)))
        }
    };
    Ok(answer)
}

/// `answer`, held for the requests like it when it may be (see [`Hold`]).
fn answer_held(
    app: &Arc<App>,
    req: &TitleRequest<'_>,
    answer: Answer,
    (place, hold, plain_file): (&RequestPlace<'_>, Hold, bool),
    reuse: Option<crate::server::titles::load::Reuse>,
) -> Result<Answer, ServeError> {
    let resource = req.resource;
    // A clear manifest of a plain file, asked for by its own name, is held for the
    // requests like it until the file's identity window ends (`server::held`). A title
    // document's tracks are files of their own, so its answers are not held.
    // A filtered manifest is never held: the map is keyed by path, without the query.
    if hold == Hold::Allowed
        && resource.kind().is_manifest()
        && plain_file
        && req.protected.is_none()
        && req.options.filtered.is_empty()
    {
        if let (Some(reuse), Content::Inline(body), Some(etag)) =
            (reuse, &answer.content, &answer.etag)
        {
            let held = Keep {
                body,
                content_type: answer.content_type,
                cache_control: answer.cache_control,
                etag,
                route: resource.kind().label(),
                reuse,
            };
            app.answers.keep(place.path, held, Instant::now());
        }
    }
    Ok(answer)
}

/// The entity tag of a manifest a filter left `filtered` out of: the unfiltered one's
/// with a hash of the list, so a cache that revalidates one never gets a 304 for the
/// other. A filter that leaves nothing out gives the unfiltered bytes and keeps its tag.
fn filtered_tag(etag: &str, filtered: &[u32]) -> String {
    if filtered.is_empty() {
        return etag.to_owned();
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in filtered.iter().flat_map(|id| id.to_be_bytes()) {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let bare = etag.strip_suffix('"').unwrap_or(etag);
    format!("{bare}-f{hash:016x}\"")
}

/// A text track's WebVTT segment or whole file.
async fn subtitle(
    req: &TitleRequest<'_>,
    track_id: u32,
    request: subtitles::SubtitleRequest,
) -> Result<Answer, ServeError> {
    let (key, identity) = req.object_of(track_id);
    let body =
        subtitles::subtitle_body(req.app, &req.cached, &key, &identity, track_id, request).await?;
    Ok(req.answer(Content::Inline(body), WEBVTT))
}
