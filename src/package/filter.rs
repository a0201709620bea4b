//! Manifest filters: `?max_bandwidth=`, `?max_height=`, `?video_codecs=`,
//! `?audio_languages=` and `?subtitle_languages=` on an entry manifest, which offer a
//! device the subset of a title it can take.
//!
//! A filter only decides which track ids an entry manifest leaves out
//! ([`ManifestFilter::left_out`]); every name, number and URL of what stays is the
//! unfiltered manifest's, so a CDN caches each segment once whatever filter a player asked
//! for. Parsing the query is here too, so the values and their bounds are written down once.

use std::borrow::Cow;

use super::{Rendition, Title};
use crate::media::TrackKind;

/// The query parameters of a filter.
pub const FILTER_PARAMS: [&str; 5] = [
    "max_bandwidth",
    "max_height",
    "video_codecs",
    "audio_languages",
    "subtitle_languages",
];

/// Largest `max_bandwidth` accepted, bits per second (1 Tbit/s: anything above is a typo).
pub const MAX_BANDWIDTH_LIMIT: u64 = 1_000_000_000_000;
/// Largest `max_height` accepted, pixels (16K; no codec vodpack serves goes beyond 8K).
pub const MAX_HEIGHT_LIMIT: u32 = 16_384;
/// Most items in one list parameter.
const MAX_ITEMS: usize = 32;
/// Longest item of a list parameter, bytes.
const MAX_ITEM_BYTES: usize = 64;

/// Why a filter cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A value that is not what the parameter takes (400).
    #[error("{param}: {reason}")]
    BadValue { param: &'static str, reason: String },
    /// A parameter given more than once (400): which one counts would be a guess.
    #[error("{param}: given more than once")]
    Repeated { param: &'static str },
    /// The filter leaves a title nothing to play (422): no video of a title that has
    /// video, no audio of a title that has audio.
    #[error("the filter leaves no {what} rendition")]
    NothingLeft { what: &'static str },
}

impl FilterError {
    /// Whether the request itself is malformed (400), rather than the filter leaving this
    /// title nothing to play (422).
    pub fn is_malformed(&self) -> bool {
        !matches!(self, FilterError::NothingLeft { .. })
    }
}

/// A parsed filter; every field `None` or empty is "no limit".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestFilter {
    /// Variants up to this peak bandwidth, bits per second: a video rendition's with the
    /// largest audio rendition left in (HLS `BANDWIDTH`), an audio-only title's audio.
    pub max_bandwidth: Option<u64>,
    /// Video renditions up to this coded height (HLS `RESOLUTION`, DASH `@height`).
    pub max_height: Option<u32>,
    /// Video renditions whose codec starts with one of these (lowercase), see
    /// [`codec_matches`].
    pub video_codecs: Vec<String>,
    /// Audio renditions in one of these languages (lowercase primary subtags).
    pub audio_languages: Vec<String>,
    /// Subtitles in one of these languages (lowercase primary subtags).
    pub subtitle_languages: Vec<String>,
}

impl ManifestFilter {
    /// The filter in `query` (a URL's query string, without `?`), or `None` when it names
    /// no filter parameter. Other parameters (a signed URL's `token`) are left alone.
    ///
    /// # Errors
    /// [`FilterError::BadValue`] for an empty, non-numeric, out-of-range or malformed
    /// value; [`FilterError::Repeated`] for a parameter given twice.
    pub fn from_query(query: Option<&str>) -> Result<Option<Self>, FilterError> {
        let Some(query) = query else {
            return Ok(None);
        };
        let mut filter = Self::default();
        let mut seen = [false; FILTER_PARAMS.len()];
        for pair in query.split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let Some(at) = FILTER_PARAMS.iter().position(|p| *p == name) else {
                continue;
            };
            let param = FILTER_PARAMS.get(at).copied().unwrap_or("filter");
            let bad = |reason: &str| FilterError::BadValue {
                param,
                reason: reason.to_owned(),
            };
            if let Some(seen) = seen.get_mut(at) {
                if *seen {
                    return Err(FilterError::Repeated { param });
                }
                *seen = true;
            }
            let value: Cow<'_, str> = percent_encoding::percent_decode_str(value)
                .decode_utf8()
                .map_err(|_| bad("is not UTF-8"))?;
            if value.is_empty() {
                return Err(bad("is empty"));
            }
            match param {
                "max_bandwidth" => {
                    let n = whole_number(&value, MAX_BANDWIDTH_LIMIT).ok_or_else(|| {
                        bad(&format!(
                            "must be bits per second, a whole number from 1 to {MAX_BANDWIDTH_LIMIT}"
                        ))
                    })?;
                    filter.max_bandwidth = Some(n);
                }
                "max_height" => {
                    let n = whole_number(&value, u64::from(MAX_HEIGHT_LIMIT)).ok_or_else(|| {
                        bad(&format!(
                            "must be pixels, a whole number from 1 to {MAX_HEIGHT_LIMIT}"
                        ))
                    })?;
                    filter.max_height = u32::try_from(n).ok();
                }
                "video_codecs" => {
                    let ok = |c: char| c.is_ascii_alphanumeric() || c == '.';
                    filter.video_codecs = list(&value, ok)
                        .map_err(|r| bad(&format!("{r} (codec prefixes such as avc1,hvc1)")))?;
                }
                _ => {
                    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-';
                    let codes = list(&value, ok)
                        .map_err(|r| bad(&format!("{r} (language codes such as en,fr)")))?;
                    if codes.iter().any(|c| !primary_subtag_ok(c)) {
                        return Err(bad("a language code starts with 2 to 8 letters"));
                    }
                    let codes = codes.iter().map(|c| primary(c).to_owned()).collect();
                    match param {
                        "audio_languages" => filter.audio_languages = codes,
                        _ => filter.subtitle_languages = codes,
                    }
                }
            }
        }
        Ok((filter != Self::default()).then_some(filter))
    }

    /// The track ids (renditions, text tracks, sidecar files) an entry manifest of `title`
    /// leaves out under this filter, ascending.
    ///
    /// # Errors
    /// [`FilterError::NothingLeft`] when no video rendition of a title with video, or no
    /// audio rendition of a title with audio, is left.
    pub fn left_out(&self, title: &Title) -> Result<Vec<u32>, FilterError> {
        let (videos, audios): (Vec<&Rendition>, Vec<&Rendition>) =
            (title.renditions.iter()).partition(|r| r.kind == TrackKind::Video);
        let mut out = Vec::new();
        let language_of = |r: &Rendition| {
            let track = title.index.tracks.get(r.track_pos);
            track.and_then(|t| t.language.clone())
        };
        let audio_only = videos.is_empty();
        let kept_audio: Vec<&Rendition> = (audios.iter().copied())
            .filter(|a| in_languages(&self.audio_languages, language_of(a).as_deref()))
            .filter(|a| !audio_only || self.max_bandwidth.is_none_or(|m| a.peak_bandwidth <= m))
            .collect();
        if !audios.is_empty() && kept_audio.is_empty() {
            return Err(FilterError::NothingLeft { what: "audio" });
        }
        out.extend(
            (audios.iter())
                .filter(|a| !kept_audio.contains(a))
                .map(|a| a.track_id),
        );
        let audio_peak = kept_audio
            .iter()
            .map(|a| a.peak_bandwidth)
            .max()
            .unwrap_or(0);
        let keeps_video = |v: &Rendition| {
            let Some(codec) = title.index.tracks.get(v.track_pos).map(|t| &t.codec) else {
                return false;
            };
            let height_ok = self.max_height.is_none_or(|m| u32::from(codec.height) <= m);
            let bandwidth = v.peak_bandwidth.saturating_add(audio_peak);
            let bandwidth_ok = self.max_bandwidth.is_none_or(|m| bandwidth <= m);
            let supplemental = codec.supplemental_dolby_vision().map(|dv| dv.codec());
            let codec_ok = self.video_codecs.is_empty()
                || (self.video_codecs.iter()).any(|want| {
                    codec_matches(want, &codec.rfc6381)
                        || supplemental
                            .as_deref()
                            .is_some_and(|s| codec_matches(want, s))
                });
            height_ok && bandwidth_ok && codec_ok
        };
        let dropped_videos: Vec<u32> = (videos.iter())
            .filter(|v| !keeps_video(v))
            .map(|v| v.track_id)
            .collect();
        if !videos.is_empty() && dropped_videos.len() == videos.len() {
            return Err(FilterError::NothingLeft { what: "video" });
        }
        out.extend(dropped_videos);
        let texts = (title.index.text_tracks.iter()).map(|t| (t.track_id, t.language.clone()));
        let sidecars = (title.sidecars.iter()).map(|s| (s.track_id, s.language.clone()));
        for (track_id, language) in texts.chain(sidecars) {
            if !in_languages(&self.subtitle_languages, language.as_deref()) {
                out.push(track_id);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

/// Whether codec string `codec` (RFC 6381, `avc1.64001f`) is of the family `want` names:
/// `want` is a prefix of it (case-insensitive), or `want` is a sample entry whose twin
/// carries the same codec with parameter sets in band (`avc1`/`avc3`, `hvc1`/`hev1`,
/// `dvh1`/`dvhe`), so a device that asks for HEVC as `hvc1` gets `hev1` streams too.
pub fn codec_matches(want: &str, codec: &str) -> bool {
    let codec = codec.to_ascii_lowercase();
    if codec.starts_with(want) {
        return true;
    }
    const TWINS: [[&str; 2]; 3] = [["avc1", "avc3"], ["hvc1", "hev1"], ["dvh1", "dvhe"]];
    let (family, rest) = want.split_at(want.len().min(4));
    (TWINS.iter()).any(|twins| {
        twins.contains(&family)
            && (twins.iter()).any(|twin| codec.starts_with(&format!("{twin}{rest}")))
    })
}

/// Whether a track in `language` passes a language list (`[]`: any language). A track
/// without a language passes only an empty list.
fn in_languages(wanted: &[String], language: Option<&str>) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let Some(language) = language.filter(|l| !l.is_empty()) else {
        return false;
    };
    let have = primary(language).to_ascii_lowercase();
    (wanted.iter()).any(|want| super::view::same_language(want, &have))
}

/// The primary subtag of a language tag, lowercase (`pt-BR` -> `pt`).
fn primary(tag: &str) -> &str {
    tag.split(['-', '_']).next().unwrap_or(tag)
}

fn primary_subtag_ok(tag: &str) -> bool {
    let first = primary(tag);
    (2..=8).contains(&first.len()) && first.chars().all(|c| c.is_ascii_alphabetic())
}

/// `text` as a comma list of 1 to [`MAX_ITEMS`] items of 1 to [`MAX_ITEM_BYTES`] bytes of
/// characters `ok` allows, lowercased.
fn list(text: &str, ok: impl Fn(char) -> bool) -> Result<Vec<String>, String> {
    let items: Vec<&str> = text.split(',').collect();
    if items.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} items"));
    }
    (items.into_iter())
        .map(|item| {
            if item.is_empty() || item.len() > MAX_ITEM_BYTES || !item.chars().all(&ok) {
                return Err(format!(
                    "{:?} is not an item of 1 to {MAX_ITEM_BYTES} letters, digits or dots/dashes",
                    item.chars().take(MAX_ITEM_BYTES).collect::<String>()
                ));
            }
            Ok(item.to_ascii_lowercase())
        })
        .collect()
}

/// A decimal whole number from 1 to `max`, digits only.
fn whole_number(text: &str, max: u64) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = text.parse().ok()?;
    (1..=max).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests;
