//! Title documents, served: a `.json` key's document read and checked, the files it names
//! loaded, and their renditions cut together into one cached title.
//!
//! Each file is loaded through the catalog's own per-object cache (single-flight with
//! `try_get_with`), all of them concurrently, so a file shared by two documents, or named
//! twice in one, is read once. The title is cached under a version that covers the
//! document's identity and every file's: replacing any of them gives a new version token,
//! and requests pinned to the old one get 404, never a mix. What the files hold is
//! `package::build_ladder`'s business; this module only does the I/O and names entries in
//! every error.

use std::sync::Arc;

use futures_util::future::join_all;

use super::cached::CachedTitle;
use super::catalog::{Catalog, TitleError};
use crate::media::{
    parse_title_document, DocumentBreak, DocumentClip, DocumentError, DocumentFile,
    ProgramDateTime, SidecarFormat, TitleDocument, DEFAULT_PROGRAM_DATE_TIME,
};
use crate::package::{
    apply_breaks, apply_view, build_ladder, document_track_id, split_document_track_id, Clip,
    LadderEntry, LadderRole, OutOfRange, PackageError, SidecarSubtitle, Title, View, ViewError,
    MAX_DOCUMENT_FILES,
};
use crate::source::{ByteRange, ObjectIdentity, ObjectKey, SourceError};

/// Why a title document's title cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DocumentTitleError {
    /// The document itself is unusable (422).
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// The document could not be read (its own 404, 502, 504, ...).
    #[error("title document: {0}")]
    Source(#[from] SourceError),
    /// An entry names an object that does not exist (422: the document is wrong).
    #[error("{entry}: {file}: no such file")]
    Missing { entry: String, file: String },
    /// An entry's file could not be loaded (422 when it is not a usable MP4, else the
    /// source's answer).
    #[error("{entry}: {file}: {source}")]
    Rendition {
        entry: String,
        file: String,
        #[source]
        source: Arc<TitleError>,
    },
    /// The renditions cannot be cut together (422).
    #[error(transparent)]
    Package(#[from] PackageError),
    /// A part of a sequence cannot be served: `prefix` names the part (empty when the
    /// error already does); the answer is the error's own.
    #[error("{prefix}{source}")]
    Part {
        prefix: String,
        #[source]
        source: Arc<DocumentTitleError>,
    },
    /// A worker failed (500).
    #[error("internal error: {reason}")]
    Internal { reason: String },
}

/// The title of `document` (stored under `key` at `identity`, or made from an nginx-vod
/// urlset: `route::nginx_names`), loading what is not cached.
///
/// # Errors
/// A [`DocumentTitleError`] naming the entry at fault, shared with concurrent loads.
pub(super) async fn title_of_document(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    document: Arc<TitleDocument>,
) -> Result<Arc<CachedTitle>, Arc<DocumentTitleError>> {
    let files = distinct_files(&document);
    if files.len() > MAX_DOCUMENT_FILES as usize {
        return Err(Arc::new(
            DocumentError::TooManyRenditions {
                count: files.len(),
                max: MAX_DOCUMENT_FILES as usize,
            }
            .into(),
        ));
    }
    // Identities (cached by the source for its identity TTL) of every file, together.
    let identities = join_all(files.iter().map(|file| async move {
        catalog
            .source()
            .identify(&file.key)
            .await
            .map_err(|e| match e {
                SourceError::NotFound { .. } | SourceError::OutsideRoot { .. } => {
                    DocumentTitleError::Missing {
                        entry: file.entry.clone(),
                        file: file.key.to_string(),
                    }
                }
                other => DocumentTitleError::Source(other),
            })
    }))
    .await
    .into_iter()
    .collect::<Result<Vec<_>, _>>()
    .map_err(Arc::new)?;
    let objects: Vec<(ObjectKey, ObjectIdentity)> = (files.iter())
        .map(|f| f.key.clone())
        .zip(identities)
        .collect();
    let mut version = title_version(identity, &objects);
    // The CUE-OUT setting changes the media playlists of a title with breaks, so it is
    // part of their version (their URLs are cached as immutable).
    if catalog.hls_cue_out && !document.breaks.is_empty() {
        version.version.push_str("\nhls-cue-out");
    }
    catalog
        .ladders
        .try_get_with(
            (key.clone(), version.clone()),
            load_ladder(catalog, key, document, files, objects, version),
        )
        .await
}

/// Read and parse the document, refusing one over the size limit before reading it.
pub(super) async fn read_document(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
) -> Result<Arc<TitleDocument>, DocumentTitleError> {
    let limits = &catalog.limits;
    if identity.size > limits.max_title_document_bytes {
        return Err(DocumentError::TooLarge {
            size: identity.size,
            max: limits.max_title_document_bytes,
        }
        .into());
    }
    let bytes = match identity.size {
        0 => bytes::Bytes::new(),
        size => {
            catalog
                .source()
                .read_range(key, identity, ByteRange::new(0, size))
                .await?
        }
    };
    let document = parse_title_document(
        key,
        &bytes,
        limits.max_title_document_bytes,
        limits.max_title_renditions,
    )?;
    Ok(Arc::new(document))
}

/// The first entry naming each distinct file, video entries first, then audio, then
/// subtitles, in document order: file number `n` (1-based) is element `n - 1`.
fn distinct_files(document: &TitleDocument) -> Vec<DocumentFile> {
    let mut files: Vec<DocumentFile> = Vec::new();
    for entry in document.entries() {
        if !files.iter().any(|f| f.key == entry.key) {
            files.push(entry.clone());
        }
    }
    files
}

/// A version covering the document and every object it names: the document's size and
/// an opaque string of every (key, size, version), so replacing any one changes it.
fn title_version(
    document: &ObjectIdentity,
    objects: &[(ObjectKey, ObjectIdentity)],
) -> ObjectIdentity {
    let mut version = format!("doc:{}", document.version);
    for (key, identity) in objects {
        version.push_str(&format!("\n{}:{}:{}", key, identity.size, identity.version));
    }
    ObjectIdentity {
        size: document.size,
        version,
    }
}

/// Load every file's title (concurrently, each through the catalog's cache) and cut them
/// together on the blocking pool.
async fn load_ladder(
    catalog: &Catalog,
    key: &ObjectKey,
    document: Arc<TitleDocument>,
    files: Vec<DocumentFile>,
    objects: Vec<(ObjectKey, ObjectIdentity)>,
    version: ObjectIdentity,
) -> Result<Arc<CachedTitle>, DocumentTitleError> {
    let is_media = |file: &DocumentFile| SidecarFormat::of(file.key.as_str()).is_none();
    let max_text = catalog.limits.max_text_read_bytes;
    let encryption = document.encryption;
    let drm = document.drm.clone();
    let key_presets = document.key_presets;
    let dash_profile = document.dash_profile;
    let mut sidecars = Vec::new();
    for entry in &document.subtitles {
        let pos = files.iter().position(|f| f.key == entry.key).unwrap_or(0);
        let size = objects.get(pos).map_or(0, |o| o.1.size);
        let format = SidecarFormat::of(entry.key.as_str());
        let track_id = u32::try_from(pos + 1)
            .ok()
            .and_then(|file| document_track_id(file, 0));
        let (Some(format), Some(track_id)) = (format, track_id) else {
            continue;
        };
        if size > max_text {
            let key = &entry.key;
            return Err(DocumentError::BadEntry {
                entry: entry.entry.clone(),
                reason: format!("{key} is {size} bytes, over the subtitle limit of {max_text}"),
            }
            .into());
        }
        sidecars.push(SidecarSubtitle {
            track_id,
            format,
            language: entry.language.clone(),
            name: entry.name.clone(),
            default: entry.default,
            forced: entry.forced,
            sdh: entry.sdh,
            size_bytes: size,
            offset_ns: 0,
        });
    }
    // Media files come before subtitle files in `files`, so titles[n] is file n + 1.
    let titles = join_all(
        (files.iter().zip(&objects))
            .filter(|(file, _)| is_media(file))
            .map(|(file, (key, identity))| async move {
                catalog
                    .title(key, identity)
                    .await
                    .map_err(|source| DocumentTitleError::Rendition {
                        entry: file.entry.clone(),
                        file: key.to_string(),
                        source,
                    })
            }),
    )
    .await
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let target = catalog.segment_duration_ms;
    let cue_out = catalog.hls_cue_out;
    let title = tokio::task::spawn_blocking(move || {
        let file_number = |key: &ObjectKey| {
            let pos = files.iter().position(|f| f.key == *key).unwrap_or(0);
            (pos + 1) as u32
        };
        let roles = (document.video.iter().map(|e| (e, LadderRole::Video)))
            .chain(document.audio.iter().map(|e| (e, LadderRole::Audio)));
        let mut entries = Vec::new();
        for (entry, role) in roles {
            let file = file_number(&entry.key);
            let Some(title) = titles.get((file as usize).saturating_sub(1)) else {
                continue;
            };
            entries.push(LadderEntry {
                label: format!("{} ({})", entry.entry, entry.key),
                file,
                title: &title.title,
                role,
                track: entry.track,
                language: entry.language.clone(),
                name: entry.name.clone(),
            });
        }
        let mut title = build_ladder(&entries, sidecars, version, target)?;
        give_roles(&mut title, &document);
        title.breaks.cue_out = cue_out;
        let title = match document.clip {
            Some(clip) => clip_document_title(&title, clip, target)?,
            None => title,
        };
        break_document_title(&title, &document, target)
    })
    .await
    .map_err(|e| DocumentTitleError::Internal {
        reason: e.to_string(),
    })??;
    let mut cached = CachedTitle::with_files(title, objects);
    resolve_break_assets(&mut cached, key)?;
    if let Some(policy) = encryption {
        tracing::info!(encryption = %policy, "title document sets its own encryption");
        cached.encryption = Some(policy);
    }
    if drm.is_some() {
        tracing::info!(drm = ?drm, "title document sets its own DRM systems");
        cached.drm = drm;
    }
    if let Some(presets) = key_presets {
        tracing::info!(key_presets = %presets.name(), "title document sets its own key split");
        cached.key_presets = Some(presets);
    }
    cached.dash_profile = dash_profile;
    Ok(cached.with_offsets_soon())
}

/// The document's accessibility on its title: each audio entry's roles on the
/// renditions it brought (its file's audio tracks, or the one it names), and the closed
/// captions it declares, in place of those found in its videos.
fn give_roles(title: &mut Title, document: &TitleDocument) {
    let files = distinct_files(document);
    for rendition in &mut title.renditions {
        let Some((file, own_id)) = split_document_track_id(rendition.track_id) else {
            continue;
        };
        let key = files.get((file as usize).saturating_sub(1)).map(|f| &f.key);
        let entry = (document.audio.iter())
            .filter(|e| Some(&e.key) == key && e.track.is_none_or(|t| t == own_id))
            .find(|e| !e.roles.is_empty());
        if let (Some(entry), crate::media::TrackKind::Audio) = (entry, rendition.kind) {
            rendition.roles = entry.roles.clone();
        }
    }
    if let Some(declared) = &document.closed_captions {
        title.closed_captions = declared.clone();
    }
}

/// Resolve the relative asset URIs of `cached`'s breaks against the URI of its media
/// playlists, `/vod/KEY/vTOKEN/index-tN.m3u8` (RFC 8216 4.1, RFC 3986 5.2), into absolute
/// paths on this server: hls.js resolves `X-ASSET-URI` against its page, not the
/// playlist, so the playlists say where the asset is outright. Resolved once per load, so
/// playlists stay the same for every request (a page on another origin needs absolute
/// URIs in the document).
///
/// # Errors
/// A reference that cannot be resolved: the document's fault, naming the break.
fn resolve_break_assets(
    cached: &mut CachedTitle,
    key: &ObjectKey,
) -> Result<(), DocumentTitleError> {
    if !(cached.title.breaks.list.iter()).any(|b| b.request.asset.is_relative()) {
        return Ok(());
    }
    let base = format!(
        "/vod/{}/{}index.m3u8",
        crate::server::route::paths::encode_key(key.as_str()),
        crate::package::version_folder(&cached.token)
    );
    for b in &mut cached.title.breaks.list {
        let request = &mut b.request;
        request.asset =
            request
                .asset
                .resolved_against(&base)
                .ok_or_else(|| DocumentError::BadEntry {
                    entry: request.entry.clone(),
                    reason: format!("{} cannot be resolved against {base}", request.asset.uri()),
                })?;
    }
    Ok(())
}

/// `title` (already cut to the document's clip) cut again at the document's ad breaks.
/// Breaks and the program date are on the title's timeline before its clip,
/// so with a clip they move by its start; a break before the clip's start, or at or
/// after its end, is the document's fault (422).
fn break_document_title(
    title: &Title,
    document: &TitleDocument,
    target_ms: u32,
) -> Result<Title, DocumentTitleError> {
    if document.breaks.is_empty() && document.program_date_time.is_none() {
        return Ok(title.clone());
    }
    let from = document.clip.map_or(0, |c| c.from);
    let mut requests = Vec::with_capacity(document.breaks.len());
    for request in &document.breaks {
        let Some(at_ms) = request.at_ms.checked_sub(from) else {
            return Err(DocumentError::BadEntry {
                entry: request.entry.clone(),
                reason: format!(
                    "at {} ms is before the clip's start ({from} ms)",
                    request.at_ms
                ),
            }
            .into());
        };
        requests.push(DocumentBreak {
            at_ms,
            ..request.clone()
        });
    }
    // The clock is of the title's time 0, before the clip (the fixed epoch without one).
    let clock = (document
        .program_date_time
        .unwrap_or(DEFAULT_PROGRAM_DATE_TIME)
        .0)
        .saturating_add(i64::try_from(from).unwrap_or(i64::MAX));
    let clock = Some(ProgramDateTime(clock));
    Ok(apply_breaks(
        title,
        &requests,
        clock,
        OutOfRange::Refuse,
        target_ms,
    )?)
}

/// `title` cut to the document's `"clip"`. A clip the title cannot have is the
/// document's fault: 422 naming the field.
pub(super) fn clip_document_title(
    title: &Title,
    clip: DocumentClip,
    target_ms: u32,
) -> Result<Title, DocumentTitleError> {
    let bad = |e: ViewError| DocumentError::BadEntry {
        entry: "clip".into(),
        reason: e.to_string(),
    };
    let view = View {
        clip: Some(Clip::new(clip.from, clip.to).map_err(bad)?),
        tracks: None,
        segment_ms: None,
    };
    apply_view(title, &view, target_ms).map_err(|e| match e {
        ViewError::Package(p) => DocumentTitleError::Package(p),
        other => bad(other).into(),
    })
}
