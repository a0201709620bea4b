//! Views of a title: a clip (a time window of the source) and a track selection, applied to
//! a packaged [`Title`] to give another title that HLS and DASH render like any other.
//!
//! A clip becomes each track's edit list, so `edit.rs` cuts it exactly as a file cut by
//! `ffmpeg -ss`. A view is part of the title's version, so its URLs and ETags differ from
//! the whole title's. Views are parsed from URL path segments here (`clip/FROM-TO`,
//! `tracks/SPEC`) and made into them again by [`View::path`], so the two cannot drift.

use std::fmt;

use super::ladder::align_videos;
use super::{plan_segments, present, PackageError, SidecarSubtitle, Title};
use crate::media::{Edit, EditList, MediaIndex, TrackIndex, TrackKind};

/// Longest clip bound accepted, in milliseconds (about 31 years: far past any media, and
/// small enough that every tick conversion fits in a `u64`).
pub const MAX_CLIP_MS: u64 = 1 << 40;

/// Most items a track selection may list.
pub const MAX_TRACK_PICKS: usize = 32;

/// A time window of the source's presentation, in milliseconds of its movie timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clip {
    /// Start: playback starts exactly here (the key frame before it is pre-roll).
    pub from_ms: u64,
    /// End (exclusive): the last frame kept is the last one presented before it. `None`
    /// runs to the end of the title.
    pub to_ms: Option<u64>,
}

/// One item of a track selection (see [`TrackSelection::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TrackPick {
    /// Every track of a kind (`v`, `a`, `s`), or the `nth` of it (`v1`, `a2`, `s1`:
    /// 1-based, in file order, as nginx-vod-module numbers them).
    Kind { kind: PickKind, nth: Option<u32> },
    /// The track with this id (`t3`: the id in vodpack's resource names, `index-t3.m3u8`).
    Id(u32),
}

/// The kind a [`TrackPick`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PickKind {
    /// `v`
    Video,
    /// `a`
    Audio,
    /// `s`: embedded text tracks.
    Subtitle,
}

/// Which tracks a view keeps: the picked ones and the audio and text tracks in the listed
/// languages; with nothing picked, every video track too, and every track when no
/// language is listed either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TrackSelection {
    /// Picked tracks; empty keeps every track.
    pub picks: Vec<TrackPick>,
    /// Languages (lowercase primary subtags, `fr`, `eng`); empty keeps every language.
    pub languages: Vec<String>,
}

/// A clip, a track selection and a segment duration; the default view is the whole title.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct View {
    /// The time window, if any.
    pub clip: Option<Clip>,
    /// The tracks kept, if not all.
    pub tracks: Option<TrackSelection>,
    /// The segment duration (milliseconds) the title is cut to, when not the server's:
    /// the nginx-vod locations' own (`vod_segment_duration`). Not in [`View::path`]: it is
    /// implied by where the request came in, never by the URL's folders.
    pub segment_ms: Option<u32>,
}

/// Why a view cannot be applied (400: the request asks for something the title cannot
/// be viewed as), or the clipped title cannot be packaged (422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// A clip or track selection that is not well formed.
    #[error("bad {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    /// The clip ends at or before it starts.
    #[error("clip ends at {to_ms} ms, not after its start at {from_ms} ms")]
    EmptyClip { from_ms: u64, to_ms: u64 },
    /// The clip starts at or after the end of the title.
    #[error("clip starts at {from_ms} ms, at or after the end of the title ({end_ms} ms)")]
    PastEnd { from_ms: u64, end_ms: u64 },
    /// The selection keeps no audio or video track.
    #[error("track selection {selection} keeps no audio or video track")]
    NoTracks { selection: String },
    /// The view's title cannot be packaged.
    #[error(transparent)]
    Package(#[from] PackageError),
}

impl Clip {
    /// Parse `FROM-TO` (or `FROM-` for no end), milliseconds as decimal digits.
    ///
    /// # Errors
    /// [`ViewError::Malformed`] for anything else, [`ViewError::EmptyClip`] when TO <= FROM.
    pub fn parse(text: &str) -> Result<Self, ViewError> {
        let malformed = |reason: &str| ViewError::Malformed {
            what: "clip",
            reason: format!("{text:?} {reason}"),
        };
        let (from, to) = text
            .split_once('-')
            .ok_or_else(|| malformed("is not FROM-TO in milliseconds"))?;
        let from_ms = parse_ms(from).ok_or_else(|| malformed("has a malformed FROM"))?;
        let to_ms = match to {
            "" => None,
            to => Some(parse_ms(to).ok_or_else(|| malformed("has a malformed TO"))?),
        };
        Self::new(from_ms, to_ms)
    }

    /// A clip from `from_ms` to `to_ms`.
    ///
    /// # Errors
    /// [`ViewError::EmptyClip`] when `to_ms <= from_ms`, [`ViewError::Malformed`] past
    /// [`MAX_CLIP_MS`].
    pub fn new(from_ms: u64, to_ms: Option<u64>) -> Result<Self, ViewError> {
        if from_ms > MAX_CLIP_MS || to_ms.is_some_and(|t| t > MAX_CLIP_MS) {
            return Err(ViewError::Malformed {
                what: "clip",
                reason: format!("bounds are limited to {MAX_CLIP_MS} ms"),
            });
        }
        if let Some(to_ms) = to_ms.filter(|t| *t <= from_ms) {
            return Err(ViewError::EmptyClip { from_ms, to_ms });
        }
        Ok(Self { from_ms, to_ms })
    }

    /// This clip applied within `outer` (a clip of a clip): the window of the source.
    pub fn within(self, outer: Clip) -> Result<Clip, ViewError> {
        let from_ms = outer.from_ms.saturating_add(self.from_ms);
        let to_ms = match (self.to_ms, outer.to_ms) {
            (Some(inner), Some(outer_to)) => {
                Some(outer.from_ms.saturating_add(inner).min(outer_to))
            }
            (Some(inner), None) => Some(outer.from_ms.saturating_add(inner)),
            (None, outer_to) => outer_to,
        };
        if let Some(outer_to) = outer.to_ms.filter(|t| from_ms >= *t) {
            return Err(ViewError::PastEnd {
                from_ms,
                end_ms: outer_to,
            });
        }
        Clip::new(from_ms, to_ms)
    }
}

/// Decimal milliseconds: 1 to 13 digits, nothing else.
fn parse_ms(text: &str) -> Option<u64> {
    let ok = !text.is_empty() && text.len() <= 13 && text.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

impl fmt::Display for Clip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_ms {
            Some(to) => write!(f, "{}-{to}", self.from_ms),
            None => write!(f, "{}-", self.from_ms),
        }
    }
}

impl TrackSelection {
    /// Parse a selection: items joined by `-`, each `v`, `a`, `s` (every track of the
    /// kind), `vN`, `aN`, `sN` (the Nth of the kind, 1-based, nginx-vod-module's meaning),
    /// `tN` (track id N) or `lang=CODE` (audio and text tracks in that language, by its
    /// primary subtag, with ISO 639-1 and -2 codes taken as the same: `lang=pt` keeps
    /// `pt-BR`, `lang=fr` keeps `fra`). `v1-a2`, `a1`, `v1-lang=fr`.
    ///
    /// # Errors
    /// [`ViewError::Malformed`] for an empty or unknown item, a number 0 or too large,
    /// more than [`MAX_TRACK_PICKS`] items.
    pub fn parse(text: &str) -> Result<Self, ViewError> {
        let malformed = |reason: String| ViewError::Malformed {
            what: "track selection",
            reason,
        };
        let mut selection = Self::default();
        for (n, item) in text.split('-').enumerate() {
            if n >= MAX_TRACK_PICKS {
                return Err(malformed(format!("more than {MAX_TRACK_PICKS} items")));
            }
            if let Some(code) = item.strip_prefix("lang=") {
                let ok =
                    (2..=8).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_alphabetic());
                if !ok {
                    return Err(malformed(format!("{item:?}: a language is 2 to 8 letters")));
                }
                selection.languages.push(code.to_ascii_lowercase());
                continue;
            }
            let bad = || {
                malformed(format!(
                    "{item:?} is not v, a, s, vN, aN, sN, tN or lang=CODE"
                ))
            };
            let mut chars = item.chars();
            let letter = chars.next().ok_or_else(bad)?;
            let digits = chars.as_str();
            let number = match digits {
                "" => None,
                d => Some(
                    parse_ms(d)
                        .and_then(|v| u32::try_from(v).ok())
                        .filter(|v| *v >= 1)
                        .ok_or_else(bad)?,
                ),
            };
            let kind = match letter {
                'v' => PickKind::Video,
                'a' => PickKind::Audio,
                's' => PickKind::Subtitle,
                't' => {
                    selection.picks.push(TrackPick::Id(number.ok_or_else(bad)?));
                    continue;
                }
                _ => return Err(bad()),
            };
            selection.picks.push(TrackPick::Kind { kind, nth: number });
        }
        Ok(selection)
    }

    /// Whether the `nth` (1-based) track of its kind, `track_id`, in `language`, is kept:
    /// when a pick names it, or (audio and text) when its language is listed, or, with
    /// nothing picked, when it is a video or no language is listed.
    fn keeps(&self, kind: PickKind, nth: u32, track_id: u32, language: Option<&str>) -> bool {
        let picked = self.picks.iter().any(|p| match p {
            TrackPick::Kind { kind: k, nth: n } => *k == kind && n.is_none_or(|n| n == nth),
            TrackPick::Id(id) => *id == track_id,
        });
        let in_language = kind != PickKind::Video
            && language.is_some_and(|l| {
                let primary = l.split(['-', '_']).next().unwrap_or(l).to_ascii_lowercase();
                (self.languages.iter()).any(|want| same_language(want, &primary))
            });
        let unpicked =
            self.picks.is_empty() && (kind == PickKind::Video || self.languages.is_empty());
        picked || in_language || unpicked
    }
}

/// ISO 639-1 codes and their ISO 639-2 (T and B) forms, for the languages most catalogues
/// carry: MP4 files say `fra` (`mdhd`), URLs and documents often `fr`.
const LANGUAGE_CODES: &[&[&str]] = &[
    &["en", "eng"],
    &["fr", "fra", "fre"],
    &["de", "deu", "ger"],
    &["es", "spa"],
    &["it", "ita"],
    &["pt", "por"],
    &["nl", "nld", "dut"],
    &["ja", "jpn"],
    &["zh", "zho", "chi"],
    &["ru", "rus"],
    &["ar", "ara"],
    &["ko", "kor"],
    &["hi", "hin"],
    &["sv", "swe"],
    &["pl", "pol"],
    &["tr", "tur"],
    &["he", "heb"],
    &["da", "dan"],
    &["fi", "fin"],
    &["no", "nor"],
];

/// The ISO 639-2 (T) code of a lowercase ISO 639-1 or 639-2 code the table knows
/// (`en` -> `eng`), for schemes that want three letters (SCTE 214 captions).
pub(super) fn three_letter_code(code: &str) -> Option<&'static str> {
    let codes = LANGUAGE_CODES.iter().find(|codes| codes.contains(&code))?;
    codes.get(1).copied()
}

/// Whether two lowercase primary language subtags name the same language.
pub(super) fn same_language(a: &str, b: &str) -> bool {
    a == b
        || LANGUAGE_CODES
            .iter()
            .any(|codes| codes.contains(&a) && codes.contains(&b))
}

impl fmt::Display for TrackSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            let s = if first { "" } else { "-" };
            first = false;
            f.write_str(s)
        };
        for pick in &self.picks {
            sep(f)?;
            match pick {
                TrackPick::Kind { kind, nth } => {
                    let letter = match kind {
                        PickKind::Video => 'v',
                        PickKind::Audio => 'a',
                        PickKind::Subtitle => 's',
                    };
                    write!(f, "{letter}")?;
                    if let Some(n) = nth {
                        write!(f, "{n}")?;
                    }
                }
                TrackPick::Id(id) => write!(f, "t{id}")?,
            }
        }
        for language in &self.languages {
            sep(f)?;
            write!(f, "lang={language}")?;
        }
        Ok(())
    }
}

impl View {
    /// True for the whole title, cut as the server cuts it.
    pub fn is_whole(&self) -> bool {
        self.clip.is_none() && self.tracks.is_none() && self.segment_ms.is_none()
    }

    /// True when the view keeps every track and the whole time (it may still be cut to its
    /// own segment duration).
    pub fn is_uncut(&self) -> bool {
        self.clip.is_none() && self.tracks.is_none()
    }

    /// The view as URL path segments, each followed by `/` (`clip/1000-5000/tracks/v1-a1/`),
    /// empty for the whole title: what `/vod/KEY/` is followed by.
    pub fn path(&self) -> String {
        let mut path = String::new();
        if let Some(clip) = &self.clip {
            path.push_str(&format!("clip/{clip}/"));
        }
        if let Some(tracks) = &self.tracks {
            path.push_str(&format!("tracks/{tracks}/"));
        }
        path
    }
}

/// `title` as `view` shows it (see the module comment); `target_ms` is the segment
/// duration. The result's identity is the title's with the view appended, so its version
/// token differs.
///
/// # Errors
/// [`ViewError::PastEnd`] for a clip starting after every track ends,
/// [`ViewError::NoTracks`] for a selection keeping no audio or video track, and
/// [`ViewError::Package`] when the result cannot be packaged exactly (for example a clip
/// inside a track's leading empty edit whose first frames are mid-GOP).
pub fn apply_view(title: &Title, view: &View, target_ms: u32) -> Result<Title, ViewError> {
    let mut index = MediaIndex {
        identity: title.index.identity.clone(),
        movie_timescale: title.index.movie_timescale,
        tracks: Vec::new(),
        text_tracks: Vec::new(),
    };
    index
        .identity
        .version
        .push_str(&format!("\nview:{}", view.path()));
    // Track selection, counting each kind in index order.
    let (mut videos, mut audios, mut texts) = (0u32, 0u32, 0u32);
    for track in &title.index.tracks {
        let (kind, nth) = match track.kind {
            TrackKind::Video => (PickKind::Video, bump(&mut videos)),
            TrackKind::Audio => (PickKind::Audio, bump(&mut audios)),
        };
        let keep = view
            .tracks
            .as_ref()
            .is_none_or(|s| s.keeps(kind, nth, track.track_id, track.language.as_deref()));
        if keep {
            index.tracks.push(track.clone());
        }
    }
    for text in &title.index.text_tracks {
        let nth = bump(&mut texts);
        let keep = view.tracks.as_ref().is_none_or(|s| {
            s.keeps(
                PickKind::Subtitle,
                nth,
                text.track_id,
                text.language.as_deref(),
            )
        });
        if keep {
            index.text_tracks.push(text.clone());
        }
    }
    if index.tracks.is_empty() {
        return Err(ViewError::NoTracks {
            selection: view
                .tracks
                .as_ref()
                .map_or(String::new(), |s| s.to_string()),
        });
    }
    if let Some(clip) = view.clip {
        let end_ms = (index.tracks.iter())
            .map(|t| movie_end_ticks(t).saturating_mul(1000) / u64::from(t.timescale.max(1)))
            .max()
            .unwrap_or(0);
        index.tracks = (index.tracks.into_iter())
            .filter_map(|mut t| {
                t.edits = clip_edits(&t.edits, clip, t.timescale, movie_end_ticks(&t))?;
                Some(t)
            })
            .collect();
        index.text_tracks = (index.text_tracks.into_iter())
            .filter_map(|mut t| {
                let end = t.samples.end_dts();
                t.edits = clip_edits(&t.edits, clip, t.timescale, end)?;
                Some(t)
            })
            .collect();
        if index.tracks.is_empty() {
            return Err(ViewError::PastEnd {
                from_ms: clip.from_ms,
                end_ms,
            });
        }
    }
    index.tracks = (index.tracks.into_iter())
        .map(present)
        .collect::<Result<_, _>>()?;
    let mut plan = plan_segments(&index, target_ms);
    let labels: Vec<String> = (index.tracks.iter())
        .map(|t| format!("track {}", super::names::track_label(t.track_id)))
        .collect();
    align_videos(&index, &mut plan, &labels)?;
    let mut viewed = Title::from_plan(index, plan)?;
    // Keep what the whole title's renditions say (document names) and their order (a
    // ladder's videos by bandwidth), and its sidecar files, their cues moved by the clip.
    let order = |id: u32| title.renditions.iter().position(|r| r.track_id == id);
    viewed.renditions.sort_by_key(|r| order(r.track_id));
    for rendition in &mut viewed.renditions {
        let whole = title.rendition(rendition.track_id);
        rendition.name = whole.and_then(|r| r.name.clone());
        rendition.roles = whole.map(|r| r.roles.clone()).unwrap_or_default();
    }
    viewed.closed_captions = title.closed_captions.clone();
    let from_ns = view.clip.map_or(0, |c| i128::from(c.from_ms) * 1_000_000);
    viewed.sidecars = (title.sidecars.iter())
        .filter(|s| {
            let kept = view.tracks.as_ref().is_none_or(|sel| {
                // Sidecars count as subtitles after the embedded text tracks.
                let nth = title.index.text_tracks.len()
                    + 1
                    + (title.sidecars.iter())
                        .position(|o| o.track_id == s.track_id)
                        .unwrap_or(0);
                let nth = u32::try_from(nth).unwrap_or(u32::MAX);
                sel.keeps(PickKind::Subtitle, nth, s.track_id, s.language.as_deref())
            });
            kept
        })
        .map(|s| SidecarSubtitle {
            offset_ns: s.offset_ns - from_ns,
            ..s.clone()
        })
        .collect();
    // Ad breaks: those in the window, on its timeline, cut again; the window's
    // start keeps its wall-clock time.
    viewed.breaks.cue_out = title.breaks.cue_out;
    if title.breaks.signalled() {
        let (from_ms, to_ms) = view.clip.map_or((0, None), |c| (c.from_ms, c.to_ms));
        let requests = super::breaks_in_window(title, from_ms, to_ms);
        let clock = Some(crate::media::ProgramDateTime(
            (title.breaks.clock().0).saturating_add(i64::try_from(from_ms).unwrap_or(i64::MAX)),
        ));
        viewed = super::apply_breaks(
            &viewed,
            &requests,
            clock,
            super::OutOfRange::Drop,
            target_ms,
        )?;
    }
    Ok(viewed)
}

fn bump(counter: &mut u32) -> u32 {
    *counter = counter.saturating_add(1);
    *counter
}

/// Where a track's presentation ends on the movie timeline, in its ticks: the end of its
/// last media edit, or without edits the end of its last sample's presentation.
fn movie_end_ticks(track: &TrackIndex) -> u64 {
    let table = &track.samples;
    let media_end = (0..table.len())
        .map(|i| {
            let pts = i128::from(table.dts.get(i).copied().unwrap_or(0))
                + i128::from(table.cts_offset(i))
                + i128::from(table.durations.get(i).copied().unwrap_or(0));
            u64::try_from(pts.max(0)).unwrap_or(u64::MAX)
        })
        .max()
        .unwrap_or(0);
    match track.edits.media_edits().last() {
        None => media_end,
        Some(last) if last.duration_ticks == 0 => last
            .start_ticks
            .saturating_add(media_end.saturating_sub(last.media_time_ticks.unwrap_or(0))),
        Some(last) => last.start_ticks.saturating_add(last.duration_ticks),
    }
}

/// `edits` restricted to the clip window and moved to start at its FROM: the edit list
/// that presents exactly `[from, to)` of the track's movie timeline (ticks: milliseconds
/// times `timescale`, rounded down). `media_end` is the movie end of the track (for a
/// file without edits, or a last edit of duration 0). `None` when nothing of the track
/// is presented in the window.
fn clip_edits(edits: &EditList, clip: Clip, timescale: u32, media_end: u64) -> Option<EditList> {
    let ticks = |ms: u64| -> u64 {
        u64::try_from(u128::from(ms) * u128::from(timescale) / 1000).unwrap_or(u64::MAX)
    };
    let from = ticks(clip.from_ms);
    let to = clip.to_ms.map_or(u64::MAX, ticks);
    let implicit = [Edit {
        start_ticks: 0,
        duration_ticks: media_end,
        media_time_ticks: Some(0),
    }];
    let source: &[Edit] = if edits.edits.is_empty() {
        &implicit
    } else {
        &edits.edits
    };
    let mut out = Vec::new();
    for edit in source {
        let duration = match (edit.duration_ticks, edit.media_time_ticks) {
            // A last media edit of duration 0 runs to the end of the media.
            (0, Some(m)) => media_end.saturating_sub(m),
            (d, _) => d,
        };
        let start = edit.start_ticks.max(from);
        let end = edit.start_ticks.saturating_add(duration).min(to);
        if end <= start {
            continue;
        }
        let skipped = start - edit.start_ticks;
        out.push(Edit {
            start_ticks: start - from,
            duration_ticks: end - start,
            media_time_ticks: edit.media_time_ticks.map(|m| m.saturating_add(skipped)),
        });
    }
    let list = EditList { edits: out };
    let presents = list.media_edits().next().is_some();
    presents.then_some(list)
}

#[cfg(test)]
mod tests;
