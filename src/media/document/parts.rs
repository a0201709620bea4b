//! Sequences: a document's `"parts"`, played one after another, each a file, a
//! title document (one level: a part's title cannot have parts of its own) or an inline
//! `video`/`audio`/`subtitles` list, with its own optional `"clip"`.
//!
//! Only the document is checked here: every path resolved as the entries' are, a part
//! naming exactly one thing. Whether the parts' renditions match (rungs, languages) is
//! known only once their files are read: `package::sequence` decides it.

use serde::Deserialize;

use super::{
    join_relative, resolve_list, DocumentClip, DocumentError, DocumentFile, RawDocument, RawEntry,
    TitleDocument, MEDIA_EXTENSIONS, SUBTITLE_EXTENSIONS,
};

/// One part as written. Closed (`deny_unknown_fields`): a part that names what this
/// version cannot play is refused rather than played differently.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPart {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    video: Vec<RawEntry>,
    #[serde(default)]
    audio: Vec<RawEntry>,
    #[serde(default)]
    subtitles: Vec<RawEntry>,
    #[serde(default)]
    clip: Option<DocumentClip>,
}

/// One part of a sequence, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentPart {
    /// Where the part is in the document, for messages: `parts[1]`.
    pub entry: String,
    /// What it plays.
    pub source: PartSource,
    /// The window of the part that is played (milliseconds of the part's presentation).
    pub clip: Option<DocumentClip>,
}

/// What a part plays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartSource {
    /// Renditions named in the part itself (`{"file": ...}` is a one-rung `video` list):
    /// a document without parts, whose entries are named `parts[1].video[0]`, ...
    Inline(Box<TitleDocument>),
    /// Another title document (`{"title": "episode.json"}`), read when the sequence loads;
    /// it may not have parts of its own.
    Title(crate::source::ObjectKey),
}

impl DocumentPart {
    /// How messages name the part: `parts[1] (episode.json)`, or `parts[1]` inline.
    pub fn label(&self) -> String {
        match &self.source {
            PartSource::Title(key) => format!("{} ({key})", self.entry),
            PartSource::Inline(document) => match document.video.as_slice() {
                [one] if document.audio.is_empty() => format!("{} ({})", self.entry, one.key),
                _ => self.entry.clone(),
            },
        }
    }
}

/// Resolve `list`, the parts of `raw` (whose own `video`, `audio`, `subtitles` and `clip`
/// must then be absent), against `folder`. Every entry of every part counts against
/// `max_renditions`, as a document's entries do.
pub(super) fn resolve_parts(
    folder: &str,
    raw: &RawDocument,
    list: Vec<RawPart>,
    max_renditions: usize,
) -> Result<Vec<DocumentPart>, DocumentError> {
    let bad = |entry: &str, reason: &str| DocumentError::BadPart {
        entry: entry.to_owned(),
        reason: reason.to_owned(),
    };
    if !(raw.video.is_empty() && raw.audio.is_empty() && raw.subtitles.is_empty()) {
        return Err(bad(
            "parts",
            "a sequence has no top-level video, audio or subtitles (each part names its own)",
        ));
    }
    if raw.clip.is_some() {
        return Err(bad(
            "clip",
            "a sequence clips its parts: put \"clip\" in a part",
        ));
    }
    if list.is_empty() {
        return Err(bad("parts", "a sequence needs at least one part"));
    }
    let count: usize = (list.iter())
        .map(|p| 1.max(p.video.len() + p.audio.len() + p.subtitles.len()))
        .sum();
    if count > max_renditions {
        return Err(DocumentError::TooManyRenditions {
            count,
            max: max_renditions,
        });
    }
    (list.into_iter().enumerate())
        .map(|(n, part)| resolve_part(folder, format!("parts[{n}]"), part))
        .collect()
}

fn resolve_part(folder: &str, entry: String, raw: RawPart) -> Result<DocumentPart, DocumentError> {
    let bad = |reason: &str| DocumentError::BadPart {
        entry: entry.clone(),
        reason: reason.to_owned(),
    };
    let inline = !(raw.video.is_empty() && raw.audio.is_empty() && raw.subtitles.is_empty());
    let source = match (raw.file, raw.title, inline) {
        (Some(file), None, false) => {
            let video = vec![RawEntry {
                file,
                track: None,
                language: None,
                name: None,
                default: None,
                forced: None,
                roles: None,
                sdh: None,
            }];
            let video = resolve_list(folder, &format!("{entry}.file"), video, &MEDIA_EXTENSIONS)?;
            PartSource::Inline(Box::new(inline_document(video, Vec::new(), Vec::new())))
        }
        (None, Some(title), false) => {
            if !title.to_ascii_lowercase().ends_with(".json") {
                return Err(DocumentError::BadPath {
                    entry: format!("{entry}.title"),
                    file: title,
                    reason: "does not end in .json".into(),
                });
            }
            let key = join_relative(folder, &title).map_err(|reason| DocumentError::BadPath {
                entry: format!("{entry}.title"),
                file: title.clone(),
                reason: reason.into(),
            })?;
            PartSource::Title(key)
        }
        (None, None, true) => {
            if raw.video.is_empty() {
                return Err(bad("an inline part needs at least one video entry"));
            }
            let list = |kind: &str, entries, extensions: &[&str]| {
                resolve_list(folder, &format!("{entry}.{kind}"), entries, extensions)
            };
            PartSource::Inline(Box::new(inline_document(
                list("video", raw.video, &MEDIA_EXTENSIONS)?,
                list("audio", raw.audio, &MEDIA_EXTENSIONS)?,
                list("subtitles", raw.subtitles, &SUBTITLE_EXTENSIONS)?,
            )))
        }
        (None, None, false) => return Err(bad(
            "names nothing: give \"file\", \"title\" or \"video\" (with \"audio\", \"subtitles\")",
        )),
        _ => {
            return Err(bad(
                "names more than one of \"file\", \"title\" and an inline \"video\" list",
            ))
        }
    };
    Ok(DocumentPart {
        entry,
        source,
        clip: raw.clip,
    })
}

fn inline_document(
    video: Vec<DocumentFile>,
    audio: Vec<DocumentFile>,
    subtitles: Vec<DocumentFile>,
) -> TitleDocument {
    TitleDocument {
        video,
        audio,
        subtitles,
        clip: None,
        encryption: None,
        drm: None,
        key_presets: None,
        dash_profile: None,
        parts: Vec::new(),
        closed_captions: None,
        breaks: Vec::new(),
        program_date_time: None,
    }
}
