//! Sequences, served (issue 31): a document's parts loaded, each as a title of its own, and
//! matched into one cached sequence.
//!
//! A part is a title document's title: an inline one (a file, or `video`/`audio`/
//! `subtitles` in the part) cached under the sequence's key with the part's number in its
//! version, or another document (`{"title": ...}`) cached under its own key, so a film
//! played alone and after an ident is loaded once. A part's title may not have parts of
//! its own (one level). The sequence is cached under a version covering the document and
//! every part's version token, so replacing any file gives new URLs. Matching the parts is
//! `package::build_sequence`'s business; this module does the I/O and names parts in
//! every error.

use std::sync::Arc;

use futures_util::future::join_all;

use super::cached::CachedTitle;
pub use super::cached::SequenceTitle;
use super::catalog::Catalog;
use super::documents::{clip_document_title, read_document, title_of_document, DocumentTitleError};
use crate::media::{DocumentError, DocumentPart, PartSource, TitleDocument};
use crate::package::{build_sequence, PartInput};
use crate::source::{ObjectIdentity, ObjectKey, SourceError};

/// The title of the sequence `document` (stored under `key` at `identity`).
///
/// # Errors
/// A [`DocumentTitleError`] naming the part at fault, shared with concurrent loads.
pub(super) async fn sequence_title(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    document: Arc<TitleDocument>,
) -> Result<Arc<CachedTitle>, Arc<DocumentTitleError>> {
    let parts = join_all(
        (document.parts.iter().enumerate()).map(|(n, part)| async move {
            load_part(catalog, key, identity, n, part)
                .await
                .map_err(|source| part_error(part, source))
        }),
    )
    .await
    .into_iter()
    .collect::<Result<Vec<_>, _>>()
    .map_err(Arc::new)?;
    // The parts' tokens cover their files, documents and the segment duration.
    let mut version = format!("seq:{}", identity.version);
    for (part, cached) in document.parts.iter().zip(&parts) {
        version.push_str(&format!(
            "\n{}:{}:{:?}",
            part.entry, cached.token, part.clip
        ));
    }
    let version = ObjectIdentity {
        size: identity.size,
        version,
    };
    let labels: Vec<String> = document.parts.iter().map(DocumentPart::label).collect();
    let encryption = document.encryption;
    let drm = document.drm.clone();
    catalog
        .ladders
        .try_get_with((key.clone(), version.clone()), async move {
            let cached = tokio::task::spawn_blocking(move || {
                let inputs: Vec<PartInput<'_>> = (labels.iter().zip(&parts))
                    .map(|(label, cached)| PartInput {
                        label,
                        title: &cached.title,
                    })
                    .collect();
                let sequence = build_sequence(&inputs)?;
                let mut title = (sequence.parts.get(sequence.reference))
                    .map(|p| p.title.clone())
                    .ok_or(crate::package::PackageError::NoRenditions)?;
                // The sequence's own title: the reference part as the sequence shows it,
                // under the sequence's version, so its token names the sequence's folder.
                title.index.identity = version;
                let mut cached = CachedTitle::new(title);
                cached.sequence = Some(Arc::new(SequenceTitle { sequence, parts }));
                cached.encryption = encryption;
                cached.drm = drm;
                Ok::<_, DocumentTitleError>(Arc::new(cached))
            })
            .await
            .map_err(|e| DocumentTitleError::Internal {
                reason: e.to_string(),
            })??;
            Ok(cached)
        })
        .await
}

/// Part `n` of the sequence at `key`: its title, clipped as the part says.
async fn load_part(
    catalog: &Catalog,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    n: usize,
    part: &DocumentPart,
) -> Result<Arc<CachedTitle>, Arc<DocumentTitleError>> {
    let cached = match &part.source {
        PartSource::Inline(document) => {
            // Cached under the sequence's key, the part's number in the version.
            let identity = ObjectIdentity {
                size: identity.size,
                version: format!("{}#part{n}", identity.version),
            };
            let document = Arc::new(document.as_ref().clone());
            title_of_document(catalog, key, &identity, document).await?
        }
        PartSource::Title(title_key) => {
            let missing = || DocumentTitleError::Missing {
                entry: part.entry.clone(),
                file: title_key.to_string(),
            };
            let title_identity = match catalog.source().identify(title_key).await {
                Ok(identity) => identity,
                Err(SourceError::NotFound { .. } | SourceError::OutsideRoot { .. }) => {
                    return Err(Arc::new(missing()))
                }
                Err(e) => return Err(Arc::new(DocumentTitleError::Source(e))),
            };
            let document = catalog
                .documents
                .try_get_with(
                    (title_key.clone(), title_identity.clone()),
                    read_document(catalog, title_key, &title_identity),
                )
                .await?;
            if !document.breaks.is_empty() || document.program_date_time.is_some() {
                return Err(Arc::new(
                    DocumentError::BadPart {
                        entry: part.entry.clone(),
                        reason: format!(
                            "{title_key} has ad breaks; breaks are not offered for sequences"
                        ),
                    }
                    .into(),
                ));
            }
            if !document.parts.is_empty() {
                return Err(Arc::new(
                    DocumentError::BadPart {
                        entry: part.entry.clone(),
                        reason: format!(
                            "{title_key} has parts of its own; a part's title cannot be a sequence (one level only)"
                        ),
                    }
                    .into(),
                ));
            }
            title_of_document(catalog, title_key, &title_identity, document).await?
        }
    };
    let Some(clip) = part.clip else {
        return Ok(cached);
    };
    let target = catalog.segment_duration_ms;
    let whole = cached.clone();
    let clipped = tokio::task::spawn_blocking(move || {
        clip_document_title(&whole.title, clip, target).map(|t| whole.derived(t))
    })
    .await
    .map_err(|e| {
        Arc::new(DocumentTitleError::Internal {
            reason: e.to_string(),
        })
    })?
    .map_err(Arc::new)?;
    Ok(Arc::new(clipped))
}

/// `source`, an error of `part`'s title, named by the part unless it already is (its
/// entries are named within the part's own document: `video[1]`).
fn part_error(part: &DocumentPart, source: Arc<DocumentTitleError>) -> DocumentTitleError {
    let named = source.to_string().starts_with(&part.entry);
    DocumentTitleError::Part {
        prefix: match named {
            true => String::new(),
            false => format!("{}: ", part.label()),
        },
        source,
    }
}
