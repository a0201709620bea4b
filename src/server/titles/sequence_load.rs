//! Sequences, loaded: a document's parts, each a title of its own, matched into one cached
//! sequence. An inline part is cached under the sequence's key with its number in the
//! version, a part naming another document under that document's key (a film played alone
//! and after an ident is loaded once); one level only. The sequence's version covers the
//! document and every part's token, so replacing any file gives new URLs. Matching is
//! `package::build_sequence`'s; this module does the I/O and names parts in every error.

use std::sync::Arc;

use futures_util::future::join_all;

use super::cached::{CachedTitle, SequenceTitle};
use super::catalog::Catalog;
use super::documents::{clip_document_title, read_document, title_of_document, DocumentTitleError};
use crate::media::{
    DocumentBreak, DocumentError, DocumentPart, PartSource, ProgramDateTime, TitleDocument,
    DEFAULT_PROGRAM_DATE_TIME,
};
use crate::package::{apply_breaks, build_sequence, OutOfRange, PartInput};
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
    // The CUE-OUT setting changes the media playlists of a sequence with breaks.
    if catalog.hls_cue_out && !document.breaks.is_empty() {
        version.push_str("\nhls-cue-out");
    }
    let version = ObjectIdentity {
        size: identity.size,
        version,
    };
    let labels: Vec<String> = document.parts.iter().map(DocumentPart::label).collect();
    let encryption = document.encryption;
    let drm = document.drm.clone();
    let key_presets = document.key_presets;
    let dash_profile = document.dash_profile;
    let (target, cue_out) = (catalog.segment_duration_ms, catalog.hls_cue_out);
    catalog
        .ladders
        .try_get_with((key.clone(), version.clone()), async move {
            let cached = tokio::task::spawn_blocking(move || {
                let parts = break_parts(parts, &document, target, cue_out)?;
                let inputs: Vec<PartInput<'_>> = (labels.iter().zip(&parts))
                    .map(|(label, cached)| PartInput {
                        label,
                        title: &cached.title,
                    })
                    .collect();
                let mut sequence = build_sequence(&inputs)?;
                // Captions: the document's, else those found in any part's video, said
                // alike by the one HLS master and every DASH Period (a player shows none
                // while a part without them plays).
                let captions = match &document.closed_captions {
                    Some(declared) => declared.clone(),
                    None => {
                        let mut found: Vec<_> = (parts.iter())
                            .flat_map(|p| p.title.closed_captions.iter().cloned())
                            .collect();
                        found.sort_by_key(|c| c.channel);
                        found.dedup_by_key(|c| c.channel);
                        found
                    }
                };
                for part in &mut sequence.parts {
                    part.title.closed_captions = captions.clone();
                }
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
                cached.key_presets = key_presets;
                cached.dash_profile = dash_profile;
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
                            "{title_key} has ad breaks of its own; a sequence's breaks are its document's (on the sequence's timeline)"
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

/// The parts of a sequence cut at the document's ad breaks, each break in the
/// part it falls in (a break at a part's start: that part, at 0), on the part's own
/// timeline; with breaks or a program date, every part gets the clock of its own start
/// (the document's date plus the earlier parts' durations, as the DASH Periods lay them
/// out), so the program dates after each discontinuity carry on. Without either, the
/// parts as they are.
///
/// # Errors
/// A break at or after the sequence's end (422 naming the break); a part's own refusal.
fn break_parts(
    parts: Vec<Arc<CachedTitle>>,
    document: &TitleDocument,
    target_ms: u32,
    cue_out: bool,
) -> Result<Vec<Arc<CachedTitle>>, DocumentTitleError> {
    if document.breaks.is_empty() && document.program_date_time.is_none() {
        return Ok(parts);
    }
    // Where each part starts and ends on the sequence's timeline, ms.
    let mut spans = Vec::with_capacity(parts.len());
    let mut elapsed = 0.0f64;
    for part in &parts {
        let start = (elapsed * 1000.0).round() as u64;
        elapsed += part.title.period_duration_secs();
        spans.push((start, (elapsed * 1000.0).round() as u64));
    }
    let end = spans.last().map_or(0, |s| s.1);
    let mut per_part: Vec<Vec<DocumentBreak>> = vec![Vec::new(); parts.len()];
    for request in &document.breaks {
        // Relative references are resolved for a title's playlists only (`documents.rs`):
        // a sequence's are refused rather than written as given.
        if request.asset.is_relative() && !request.asset.uri().starts_with("//") {
            return Err(DocumentError::BadEntry {
                entry: request.entry.clone(),
                reason: "a sequence's asset_uri or asset_list must be an absolute http:// or \
                         https:// URI"
                    .into(),
            }
            .into());
        }
        let at = request.at_ms;
        let Some((n, (start, _))) =
            (spans.iter().enumerate()).find(|(_, (s, e))| (*s..*e).contains(&at))
        else {
            return Err(DocumentError::BadEntry {
                entry: request.entry.clone(),
                reason: format!("at {at} ms is at or after the sequence's end ({end} ms)"),
            }
            .into());
        };
        if let Some(list) = per_part.get_mut(n) {
            list.push(DocumentBreak {
                at_ms: at - start,
                ..request.clone()
            });
        }
    }
    let clock = document
        .program_date_time
        .unwrap_or(DEFAULT_PROGRAM_DATE_TIME)
        .0;
    (parts.iter().zip(per_part).zip(&spans))
        .map(|((part, requests), (start, _))| {
            let mut title = part.title.clone();
            title.breaks.cue_out = cue_out;
            let date = ProgramDateTime(clock.saturating_add(i64::try_from(*start).unwrap_or(0)));
            let broken =
                apply_breaks(&title, &requests, Some(date), OutOfRange::Refuse, target_ms)?;
            Ok(Arc::new(part.derived(broken)))
        })
        .collect()
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
