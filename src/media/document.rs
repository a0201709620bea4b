//! Title documents: a `.json` object naming the files of one title (its ABR ladder, extra
//! audio languages and subtitle files), parsed and checked before any of them is read.
//!
//! This module owns the document format and the rules on what it may name: every path is
//! resolved lexically against the document's folder and must stay under the root or bucket
//! prefix, so the backends see only keys that passed the same checks as request keys.
//! Loading and cutting the named files together is left to `server` and `package`.
//! Sequences (`"parts"`), ad breaks and accessibility are parsed in `document/`.

mod access;
mod ad_breaks;

use serde::Deserialize;

pub use crate::config::DashProfile;
use crate::source::ObjectKey;
pub use access::{AudioRole, CaptionChannel, ClosedCaption};
pub use ad_breaks::{BreakAsset, DocumentBreak, ProgramDateTime, DEFAULT_PROGRAM_DATE_TIME};

/// Why a title document cannot be used. Each is about the document itself (422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The document is larger than [`super::MediaLimits::max_title_document_bytes`].
    #[error("title document is {size} bytes, over the limit of {max}")]
    TooLarge { size: u64, max: u64 },
    /// Not JSON, not an object of the format, or an unknown top-level field.
    #[error("title document is not valid: {reason}")]
    Malformed { reason: String },
    /// No `video` entry: a title needs at least one picture rendition.
    #[error("title document has no video rendition")]
    NoVideo,
    /// More entries than [`super::MediaLimits::max_title_renditions`].
    #[error("title document names {count} renditions, over the limit of {max}")]
    TooManyRenditions { count: usize, max: usize },
    /// An entry's `file` is not a usable path: it leaves the root, is absolute, has an
    /// empty segment or a forbidden character, or has the wrong extension.
    #[error("{entry}: file {file:?} {reason}")]
    BadPath {
        entry: String,
        file: String,
        reason: String,
    },
    /// An entry's other field is out of range (an empty language, track 0, ...).
    #[error("{entry}: {reason}")]
    BadEntry { entry: String, reason: String },
    /// A sequence's part cannot be used: both `parts` and a top-level rendition list, an
    /// empty list, a part naming nothing or two things, or a part's title that has parts of
    /// its own (one level only).
    #[error("{entry}: {reason}")]
    BadPart { entry: String, reason: String },
}

/// A title document as written, before its paths are resolved.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocument {
    #[serde(default)]
    video: Vec<RawEntry>,
    #[serde(default)]
    audio: Vec<RawEntry>,
    #[serde(default)]
    subtitles: Vec<RawEntry>,
    /// Play only this window of the title.
    #[serde(default)]
    clip: Option<DocumentClip>,
    /// The title's encryption, overriding the server's: `hls=aes-128,dash=cenc`.
    #[serde(default)]
    encryption: Option<String>,
    /// The DRM systems the title is signalled for, overriding the server's:
    /// `["fairplay", "widevine", "playready"]`.
    #[serde(default)]
    drm: Option<Vec<String>>,
    /// The title's key split, overriding the server's:
    /// `"video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1"`.
    #[serde(default)]
    key_presets: Option<String>,
    /// The profile the title's MPD is written by, overriding the server's:
    /// `"default"` or `"dvb"`.
    #[serde(default)]
    dash_profile: Option<DashProfile>,
    /// Closed captions carried in the video, which the file cannot say.
    #[serde(default)]
    closed_captions: Option<Vec<access::RawCaption>>,
    /// A sequence of parts played one after another, in place of `video`,
    /// `audio` and `subtitles`.
    #[serde(default)]
    parts: Option<Vec<parts::RawPart>>,
    /// Ad breaks on the title's timeline.
    #[serde(default)]
    breaks: Option<Vec<ad_breaks::RawBreak>>,
    /// The wall-clock time of the title's start (RFC 3339), for HLS
    /// `EXT-X-PROGRAM-DATE-TIME` and the breaks' `START-DATE`.
    #[serde(default)]
    program_date_time: Option<String>,
}

/// A document's `"clip": {"from": MS, "to": MS}`: the window of the title's
/// presentation that is served, in milliseconds; `to` may be left out (to the end). The
/// package layer checks it against the title (`package::Clip`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentClip {
    /// Start, ms.
    pub from: u64,
    /// End (exclusive), ms; `None` to the end.
    #[serde(default)]
    pub to: Option<u64>,
}

/// One entry as written. Entries keep unknown fields to themselves (only the top level is
/// closed), so a document written for a later version still loads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct RawEntry {
    file: String,
    #[serde(default)]
    track: Option<u32>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    default: Option<bool>,
    #[serde(default)]
    forced: Option<bool>,
    /// Audio entries: what the audio is for (`description`, ...).
    #[serde(default)]
    roles: Option<Vec<String>>,
    /// Subtitle entries: subtitles for the deaf and hard of hearing.
    #[serde(default)]
    sdh: Option<bool>,
}

pub use parts::{DocumentPart, PartSource};

/// A checked title document: every path resolved to a key under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleDocument {
    /// The video renditions (the ladder), in document order; at least one. The audio and
    /// text tracks of the first are the title's main audio and embedded subtitles.
    pub video: Vec<DocumentFile>,
    /// Extra audio renditions, in document order.
    pub audio: Vec<DocumentFile>,
    /// Sidecar subtitle files (WebVTT or SRT), in document order.
    pub subtitles: Vec<DocumentFile>,
    /// The window of the title served, if the document gives one.
    pub clip: Option<DocumentClip>,
    /// The title's own encryption policy (`"encryption"`), overriding the server's
    /// `--encryption`; `None` when the document does not say.
    pub encryption: Option<crate::crypto::EncryptionPolicy>,
    /// The title's own DRM systems (`"drm"`), overriding the server's `--drm-systems`;
    /// `None` when the document does not say.
    pub drm: Option<Vec<crate::crypto::drm::DrmId>>,
    /// The title's own key split (`"key_presets"`), overriding the server's
    /// `--key-presets`; `None` when the document does not say.
    pub key_presets: Option<crate::crypto::KeyPresets>,
    /// The profile the title's MPD is written by (`"dash_profile"`), overriding the
    /// server's `--dash-profile`; `None` when the document does not say.
    pub dash_profile: Option<DashProfile>,
    /// Closed captions the video carries (`"closed_captions"`), each channel once, which
    /// replace those the scan at load finds (`[]`: none); `None` when the document does
    /// not say, and the scan's stand.
    pub closed_captions: Option<Vec<ClosedCaption>>,
    /// The parts of a sequence (`"parts"`), in play order; empty for a title that is not
    /// one (its renditions are then `video`, `audio` and `subtitles`, which a sequence
    /// leaves empty).
    pub parts: Vec<DocumentPart>,
    /// Ad breaks (`"breaks"`), in document order, checked one by one and for overlap;
    /// empty when the document names none. Not offered for sequences.
    pub breaks: Vec<DocumentBreak>,
    /// `"program_date_time"`, when given.
    pub program_date_time: Option<ProgramDateTime>,
}

/// One entry of a title document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentFile {
    /// Where the entry is in the document, for messages: `video[0]`, `audio[1]`, ...
    pub entry: String,
    /// The object, relative to the root (the document's folder joined with `file`).
    pub key: ObjectKey,
    /// One track of the file (its `tkhd` track id) instead of every track of the kind.
    pub track: Option<u32>,
    /// Language override (BCP 47), else the file's own (`mdhd`/`elng`).
    pub language: Option<String>,
    /// Display name override, else derived from the language.
    pub name: Option<String>,
    /// Subtitles: shown without the viewer asking (`DEFAULT=YES`).
    pub default: bool,
    /// Subtitles: forced narrative (`FORCED=YES`).
    pub forced: bool,
    /// Audio: what it is for (`"roles"`), each once; empty when not said.
    pub roles: Vec<AudioRole>,
    /// Subtitles: for the deaf and hard of hearing (`"sdh"`).
    pub sdh: bool,
}

impl TitleDocument {
    /// Every entry, video first, then audio, then subtitles.
    pub fn entries(&self) -> impl Iterator<Item = &DocumentFile> {
        self.video.iter().chain(&self.audio).chain(&self.subtitles)
    }
}

/// Extensions of media files an entry may name (case-insensitive).
const MEDIA_EXTENSIONS: [&str; 4] = [".mp4", ".m4v", ".m4a", ".mov"];
/// Extensions of sidecar subtitle files.
const SUBTITLE_EXTENSIONS: [&str; 5] = [".vtt", ".srt", ".ttml", ".dfxp", ".xml"];
/// Longest `language` or `name` accepted, in bytes.
const MAX_LABEL_BYTES: usize = 256;

/// True when `key` names a title document (ends in `.json`, any case).
pub fn is_title_document(key: &ObjectKey) -> bool {
    key.ends_with_ignore_case(".json")
}

/// Parse the title document stored under `key` from its `bytes`, resolving each path
/// against the document's folder.
///
/// # Errors
/// A [`DocumentError`] naming the first thing wrong: over `max_bytes`, malformed JSON or
/// an unknown top-level field, no video, more than `max_renditions` entries, or an entry
/// whose path or fields are unusable.
pub fn parse_title_document(
    key: &ObjectKey,
    bytes: &[u8],
    max_bytes: u64,
    max_renditions: usize,
) -> Result<TitleDocument, DocumentError> {
    if bytes.len() as u64 > max_bytes {
        return Err(DocumentError::TooLarge {
            size: bytes.len() as u64,
            max: max_bytes,
        });
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut raw: RawDocument =
        serde_json::from_slice(bytes).map_err(|e| DocumentError::Malformed {
            reason: e.to_string(),
        })?;
    let count = raw.video.len() + raw.audio.len() + raw.subtitles.len();
    if count > max_renditions {
        return Err(DocumentError::TooManyRenditions {
            count,
            max: max_renditions,
        });
    }
    let folder = key
        .as_str()
        .rsplit_once('/')
        .map_or("", |(folder, _)| folder);
    let parts = match raw.parts.take() {
        Some(list) => parts::resolve_parts(folder, &raw, list, max_renditions)?,
        None => Vec::new(),
    };
    if raw.video.is_empty() && parts.is_empty() {
        return Err(DocumentError::NoVideo);
    }
    let resolve = |kind: &str, list: Vec<RawEntry>, extensions: &[&str]| {
        resolve_list(folder, kind, list, extensions)
    };
    let encryption = (raw.encryption.as_deref())
        .map(crate::crypto::EncryptionPolicy::parse)
        .transpose()
        .map_err(|e| DocumentError::Malformed {
            reason: e.to_string(),
        })?;
    let drm = (raw.drm.as_deref())
        .map(|names| crate::crypto::drm::DrmId::parse_list(&names.join(",")))
        .transpose()
        .map_err(|reason| DocumentError::Malformed {
            reason: format!("drm: {reason}"),
        })?;
    let key_presets = (raw.key_presets.as_deref())
        .map(crate::crypto::KeyPresets::parse)
        .transpose()
        .map_err(|reason| DocumentError::Malformed {
            reason: format!("key_presets: {reason}"),
        })?;
    let closed_captions = (raw.closed_captions)
        .map(|raw| access::closed_captions(raw, check_label))
        .transpose()?;
    let breaks = ad_breaks::check_breaks(raw.breaks.unwrap_or_default())?;
    let program_date_time = (raw.program_date_time.as_deref())
        .map(ProgramDateTime::parse)
        .transpose()?;
    Ok(TitleDocument {
        breaks,
        program_date_time,
        encryption,
        drm,
        key_presets,
        dash_profile: raw.dash_profile,
        closed_captions,
        video: resolve("video", raw.video, &MEDIA_EXTENSIONS)?,
        audio: resolve("audio", raw.audio, &MEDIA_EXTENSIONS)?,
        subtitles: resolve("subtitles", raw.subtitles, &SUBTITLE_EXTENSIONS)?,
        clip: raw.clip,
        parts,
    })
}

/// Resolve the entries of one list (`video`, `audio`, `subtitles`) named `kind` in
/// messages, against `folder`.
fn resolve_list(
    folder: &str,
    kind: &str,
    list: Vec<RawEntry>,
    extensions: &[&str],
) -> Result<Vec<DocumentFile>, DocumentError> {
    (list.into_iter().enumerate())
        .map(|(n, raw)| resolve_entry(folder, format!("{kind}[{n}]"), raw, extensions))
        .collect()
}

fn resolve_entry(
    folder: &str,
    entry: String,
    raw: RawEntry,
    extensions: &[&str],
) -> Result<DocumentFile, DocumentError> {
    let bad_path = |reason: &str| DocumentError::BadPath {
        entry: entry.clone(),
        file: raw.file.clone(),
        reason: reason.to_owned(),
    };
    let lower = raw.file.to_ascii_lowercase();
    if !extensions.iter().any(|ext| lower.ends_with(ext)) {
        return Err(bad_path(&format!(
            "does not end in {}",
            extensions.join(", ")
        )));
    }
    let key = join_relative(folder, &raw.file).map_err(bad_path)?;
    let bad_entry = |reason: String| DocumentError::BadEntry {
        entry: entry.clone(),
        reason,
    };
    for (field, value) in [("language", &raw.language), ("name", &raw.name)] {
        if let Some(value) = value {
            check_label(&entry, field, value)?;
        }
    }
    if raw.track == Some(0) {
        return Err(bad_entry("track ids start at 1".into()));
    }
    let kind = entry.split('[').next().unwrap_or("");
    if raw.roles.is_some() && kind != "audio" {
        return Err(bad_entry("roles are for audio entries".into()));
    }
    if raw.sdh.is_some() && kind != "subtitles" {
        return Err(bad_entry("sdh is for subtitle entries".into()));
    }
    let roles = access::audio_roles(&entry, raw.roles.as_deref().unwrap_or_default())?;
    Ok(DocumentFile {
        entry,
        key,
        track: raw.track,
        language: raw.language,
        name: raw.name,
        default: raw.default.unwrap_or(false),
        forced: raw.forced.unwrap_or(false),
        roles,
        sdh: raw.sdh.unwrap_or(false),
    })
}

/// Refuse a `language` or `name` (`field`) of `entry` that is empty, over
/// [`MAX_LABEL_BYTES`] or holds a control character.
fn check_label(entry: &str, field: &str, value: &str) -> Result<(), DocumentError> {
    let bad = |reason: String| DocumentError::BadEntry {
        entry: entry.to_owned(),
        reason,
    };
    if value.trim().is_empty() || value.len() > MAX_LABEL_BYTES {
        return Err(bad(format!("{field} must be 1 to {MAX_LABEL_BYTES} bytes")));
    }
    if value.chars().any(char::is_control) {
        return Err(bad(format!("{field} has a control character")));
    }
    Ok(())
}

/// `file` relative to `folder` (a key prefix without trailing slash, `""` at the root),
/// with `.` and `..` resolved lexically; a `..` above the root is refused, as are absolute
/// paths and empty segments. The result passes [`ObjectKey::parse`].
fn join_relative(folder: &str, file: &str) -> Result<ObjectKey, &'static str> {
    if file.starts_with('/') {
        return Err("is an absolute path");
    }
    let mut segments: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for segment in file.split('/') {
        match segment {
            "" => return Err("has an empty path segment"),
            "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err("leaves the root");
                }
            }
            other => segments.push(other),
        }
    }
    ObjectKey::parse(&segments.join("/")).map_err(|e| match e {
        crate::source::KeyError::TooLong { .. } => "is too long",
        crate::source::KeyError::ForbiddenCharacter => "has a forbidden character",
        _ => "is not a file path",
    })
}

mod parts;
#[cfg(test)]
mod tests;
