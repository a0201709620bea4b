//! Sequences: titles played one after another (an ident, then the film), each
//! part a title of its own, offered as one set of renditions.
//!
//! The renditions of a sequence are those of its reference part (the first with the most
//! renditions), by position: its video rungs, audio and subtitles, under the reference's
//! track ids. Every other part must match it: as many video rungs, or one (played in every
//! rung); as many audio renditions with the same languages, or one (played in every
//! language); every subtitle language of the reference, or none (its time has no cues).
//! Anything else is refused naming the part and the rendition, because a player switching
//! renditions at a boundary would find nothing to switch to.

use super::fmp4::init_segment;
use super::title::SidecarSubtitle;
use super::view::same_language;
use super::{PackageError, Rendition, Title};
use crate::media::{TextTrackIndex, TrackKind};

/// A sequence: its parts in play order, each with the map from the sequence's renditions
/// to its own tracks.
#[derive(Debug, Clone)]
pub struct Sequence {
    /// The parts, in play order; at least one.
    pub parts: Vec<SequencePart>,
    /// Position in `parts` of the reference part, whose renditions the sequence offers.
    pub reference: usize,
}

/// One part of a sequence, as the sequence shows it.
#[derive(Debug, Clone)]
pub struct SequencePart {
    /// How messages name the part: `parts[1] (film.json)`.
    pub label: String,
    /// For each rendition of the sequence (in [`Sequence::renditions`] order): its id in the
    /// sequence and the part's own track id that plays it.
    pub tracks: Vec<(u32, u32)>,
    /// For each text rendition of the sequence (the reference's text tracks, then its
    /// sidecars): its id in the sequence and the part's own text track or sidecar id,
    /// `None` when the part has no subtitles (its time is then without cues).
    pub texts: Vec<(u32, Option<u32>)>,
    /// The part's title with its tracks under the sequence's ids, in the sequence's
    /// rendition order (a part's one rung appears once per rung): what the writers render.
    pub title: Title,
    /// When the part starts on the sequence's timeline (the sum of the earlier parts'
    /// DASH Period durations), seconds.
    pub start_secs: f64,
    /// Whether every rendition's init segment is the same as the previous part's and its
    /// media timeline carries on from it (DASH `period-continuity`); `false` for the first.
    pub continuous: bool,
    /// Whether every rendition's init segment is the same as the previous part's (DASH
    /// `period-connectivity`: the media may be appended without a new init segment);
    /// `false` for the first.
    pub connected: bool,
}

/// One part as the sequence is built from it.
#[derive(Debug, Clone, Copy)]
pub struct PartInput<'a> {
    /// How messages name it.
    pub label: &'a str,
    /// Its title (a title document's ladder, clipped as the part says).
    pub title: &'a Title,
}

impl Sequence {
    /// The sequence's renditions: the reference part's, under their own ids.
    pub fn renditions(&self) -> &[Rendition] {
        self.parts
            .get(self.reference)
            .map_or(&[], |p| p.title.renditions.as_slice())
    }

    /// The part's own track id playing sequence rendition `track_id` in part `part`
    /// (1-based, as in URLs).
    pub fn own_track(&self, part: u32, track_id: u32) -> Option<u32> {
        let part = self.parts.get((part as usize).checked_sub(1)?)?;
        (part.tracks.iter()).find_map(|(seq, own)| (*seq == track_id).then_some(*own))
    }

    /// The part's own text track (or sidecar) id of sequence text rendition `track_id` in
    /// part `part` (1-based): `Some(None)` when the part has no subtitles, `None` when the
    /// sequence has no such text rendition or part.
    pub fn own_text(&self, part: u32, track_id: u32) -> Option<Option<u32>> {
        let part = self.parts.get((part as usize).checked_sub(1)?)?;
        (part.texts.iter()).find_map(|(seq, own)| (*seq == track_id).then_some(*own))
    }

    /// Whether `track_id` is a text rendition of the sequence.
    pub fn is_text(&self, track_id: u32) -> bool {
        (self.parts.first()).is_some_and(|p| p.texts.iter().any(|(seq, _)| *seq == track_id))
    }

    /// When the sequence ends: the last part's start plus its Period's duration, seconds.
    pub fn duration_secs(&self) -> f64 {
        self.parts
            .last()
            .map_or(0.0, |p| p.start_secs + p.title.period_duration_secs())
    }
}

/// Match `parts` against the reference (the first with the most renditions) and make the
/// sequence.
///
/// # Errors
/// [`PackageError::SequenceMismatch`] naming the part and the rendition that does not
/// match; [`PackageError::NoRenditions`] without parts.
pub fn build_sequence(parts: &[PartInput<'_>]) -> Result<Sequence, PackageError> {
    let count = |t: &Title| t.renditions.len() + texts_of(t).len();
    let reference = (parts.iter().enumerate())
        .max_by(|(a, x), (b, y)| count(x.title).cmp(&count(y.title)).then(b.cmp(a)))
        .map(|(n, _)| n)
        .ok_or(PackageError::NoRenditions)?;
    let Some(reference_part) = parts.get(reference) else {
        return Err(PackageError::NoRenditions);
    };
    let ref_title = reference_part.title;
    let mut out: Vec<SequencePart> = Vec::with_capacity(parts.len());
    let mut start_secs = 0.0;
    for part in parts {
        let mismatch =
            |rendition: String, theirs: String, ours: &str| PackageError::SequenceMismatch {
                part: part.label.to_owned(),
                rendition,
                reason: format!("{theirs}, where {} has {ours}", reference_part.label),
            };
        let mut tracks = Vec::new();
        for kind in [TrackKind::Video, TrackKind::Audio] {
            let theirs: Vec<&Rendition> = of_kind(part.title, kind);
            let ours: Vec<&Rendition> = of_kind(ref_title, kind);
            let word = kind.as_str();
            let shape = |n: usize| match kind {
                TrackKind::Video => format!("{n} rung{}", if n == 1 { "" } else { "s" }),
                _ => format!("{n} {word} rendition{}", if n == 1 { "" } else { "s" }),
            };
            if theirs.len() != ours.len() && (theirs.len() != 1 || ours.is_empty()) {
                return Err(mismatch(
                    word.to_owned(),
                    shape(theirs.len()),
                    &shape(ours.len()),
                ));
            }
            for (n, r) in ours.iter().enumerate() {
                let own = match (kind, theirs.as_slice()) {
                    (_, [one]) => *one,
                    (TrackKind::Video, _) => match theirs.get(n) {
                        Some(r) => *r,
                        None => continue,
                    },
                    _ => {
                        // Audio by language: the k-th of the language in each.
                        let language = language_of(ref_title, r);
                        let k = (ours.iter().take(n))
                            .filter(|o| same(language_of(ref_title, o), language))
                            .count();
                        let found = (theirs.iter())
                            .filter(|t| same(language_of(part.title, t), language))
                            .nth(k);
                        let Some(found) = found else {
                            let name = format!("audio {}", language.unwrap_or("without language"));
                            return Err(mismatch(name, "no such audio".into(), "one"));
                        };
                        *found
                    }
                };
                tracks.push((r.track_id, own.track_id));
            }
        }
        let ref_texts = texts_of(ref_title);
        let part_texts = texts_of(part.title);
        let mut texts = Vec::with_capacity(ref_texts.len());
        for (n, (id, language)) in ref_texts.iter().enumerate() {
            let k = (ref_texts.iter().take(n))
                .filter(|(_, l)| same(*l, *language))
                .count();
            let found = (part_texts.iter())
                .filter(|(_, l)| same(*l, *language))
                .nth(k)
                .map(|(own, _)| *own);
            if found.is_none() && !part_texts.is_empty() {
                let name = format!("subtitles {}", language.unwrap_or("without language"));
                let ours = "them (a part has every subtitle language or none)";
                return Err(mismatch(name, "no such subtitles".into(), ours));
            }
            texts.push((*id, found));
        }
        if part_texts.len() > ref_texts.len() {
            let theirs = format!("{} subtitle renditions", part_texts.len());
            return Err(mismatch(
                "subtitles".into(),
                theirs,
                &ref_texts.len().to_string(),
            ));
        }
        let title = project(part.title, ref_title, &tracks, &texts);
        let duration = title.period_duration_secs();
        let (connected, continuous) = match out.last() {
            Some(previous) => joins(previous, part.title, &title, &tracks),
            None => (false, false),
        };
        out.push(SequencePart {
            label: part.label.to_owned(),
            tracks,
            texts,
            title,
            start_secs,
            continuous,
            connected,
        });
        start_secs += duration;
    }
    Ok(Sequence {
        parts: out,
        reference,
    })
}

fn of_kind(title: &Title, kind: TrackKind) -> Vec<&Rendition> {
    (title.renditions.iter())
        .filter(|r| r.kind == kind)
        .collect()
}

fn language_of<'t>(title: &'t Title, r: &Rendition) -> Option<&'t str> {
    let track = title.index.tracks.get(r.track_pos)?;
    track.language.as_deref().filter(|l| !l.is_empty())
}

/// Two languages are the same when their primary subtags name one language (`fr` and
/// `fra`), or both are unknown.
fn same(a: Option<&str>, b: Option<&str>) -> bool {
    let primary = |l: &str| l.split(['-', '_']).next().unwrap_or(l).to_ascii_lowercase();
    match (a, b) {
        (Some(a), Some(b)) => same_language(&primary(a), &primary(b)),
        (None, None) => true,
        _ => false,
    }
}

/// A title's text renditions as (id, language): its text tracks, then its sidecars.
fn texts_of(title: &Title) -> Vec<(u32, Option<&str>)> {
    let embedded = (title.index.text_tracks.iter())
        .map(|t| (t.track_id, t.language.as_deref().filter(|l| !l.is_empty())));
    let sidecars = (title.sidecars.iter())
        .map(|s| (s.track_id, s.language.as_deref().filter(|l| !l.is_empty())));
    embedded.chain(sidecars).collect()
}

/// `part` with its tracks under the sequence's ids, in the reference's rendition order:
/// the renditions (their rates and timing the part's own; default, name and language the
/// reference's, so players see one rendition across parts) and the text renditions it has.
fn project(
    part: &Title,
    reference: &Title,
    tracks: &[(u32, u32)],
    texts: &[(u32, Option<u32>)],
) -> Title {
    let mut title = part.clone();
    title.index.tracks.clear();
    title.plan.tracks.clear();
    title.renditions.clear();
    for (pos, (seq_id, own_id)) in tracks.iter().enumerate() {
        let (Some(own), Some(ours)) = (part.rendition(*own_id), reference.rendition(*seq_id))
        else {
            continue;
        };
        let (Some(track), Some(plan)) = (
            part.index.tracks.get(own.track_pos),
            part.plan.tracks.get(own.track_pos),
        ) else {
            continue;
        };
        let mut track = track.clone();
        track.track_id = *seq_id;
        if let Some(language) = reference
            .index
            .tracks
            .get(ours.track_pos)
            .and_then(|t| t.language.clone())
        {
            track.language = Some(language);
        }
        let mut plan = plan.clone();
        plan.track_id = *seq_id;
        let mut rendition = own.clone();
        rendition.track_pos = title.index.tracks.len();
        rendition.track_id = *seq_id;
        rendition.is_default = ours.is_default;
        rendition.name = ours.name.clone();
        debug_assert_eq!(rendition.track_pos, pos);
        title.index.tracks.push(track);
        title.plan.tracks.push(plan);
        title.renditions.push(rendition);
    }
    let mut text_tracks: Vec<TextTrackIndex> = Vec::new();
    let mut sidecars: Vec<SidecarSubtitle> = Vec::new();
    for (seq_id, own) in texts {
        let Some(own) = own else { continue };
        if let Some(text) = part.index.text_tracks.iter().find(|t| t.track_id == *own) {
            let mut text = text.clone();
            text.track_id = *seq_id;
            text_tracks.push(text);
        } else if let Some(sidecar) = part.sidecars.iter().find(|s| s.track_id == *own) {
            let mut sidecar = sidecar.clone();
            sidecar.track_id = *seq_id;
            let ours = reference.sidecars.iter().find(|s| s.track_id == *seq_id);
            if let Some(ours) = ours {
                (sidecar.name, sidecar.default, sidecar.forced) =
                    (ours.name.clone(), ours.default, ours.forced);
            }
            sidecars.push(sidecar);
        }
    }
    title.index.text_tracks = text_tracks;
    title.sidecars = sidecars;
    title
}

/// (connected, continuous) of a part after `previous`: every rendition's init segment
/// the same (the part's own tracks, as its init segments are written), and, for
/// continuity, each Representation's media timeline carrying on from the previous
/// Period's end (ISO/IEC 23009-1 5.3.2.4: presentationTimeOffset of this Period = the
/// previous one's plus its duration, within a tick).
fn joins(
    previous: &SequencePart,
    part: &Title,
    projected: &Title,
    tracks: &[(u32, u32)],
) -> (bool, bool) {
    let prev = &previous.title;
    let mut continuous = true;
    for (pos, (_, own_id)) in tracks.iter().enumerate() {
        let (Some(a), Some(b)) = (prev.index.tracks.get(pos), projected.index.tracks.get(pos))
        else {
            return (false, false);
        };
        // The init segments as served: each part's own track under its own id.
        let (Some(prev_own), Some(own)) = (
            previous.tracks.get(pos).map(|t| t.1),
            part.rendition(*own_id)
                .and_then(|r| part.index.tracks.get(r.track_pos)),
        ) else {
            return (false, false);
        };
        let mut prev_track = a.clone();
        prev_track.track_id = prev_own;
        if init_segment(&prev_track) != init_segment(own) || a.timescale != b.timescale {
            return (false, false);
        }
        let scale = f64::from(a.timescale.max(1));
        let end =
            prev.dash_presentation_offset_ticks(pos) as f64 + prev.period_duration_secs() * scale;
        if (projected.dash_presentation_offset_ticks(pos) as f64 - end).abs() > 1.0 {
            continuous = false;
        }
    }
    (true, continuous)
}
