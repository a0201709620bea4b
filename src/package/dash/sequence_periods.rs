//! The MPD of a sequence: one Period per part, each the part's own sets written
//! by the single-title code (`period_sets`), joined by the Period continuity and
//! connectivity descriptors where the parts allow it.

use super::events::event_stream;
use super::tag::Tag;
use super::{dash_protection, mpd_start, period_sets, seconds, Uris};
use crate::package::signalling::ManifestOptions;
use crate::package::{Sequence, Title};

/// ISO/IEC 23009-1 5.3.2.4: the Representations carry on from the named Period's.
const PERIOD_CONTINUITY: &str = "urn:mpeg:dash:period-continuity:2015";
/// ISO/IEC 23009-1 5.3.2.4: the Representations' segments may follow the named Period's
/// without a new init segment.
const PERIOD_CONNECTIVITY: &str = "urn:mpeg:dash:period-connectivity:2015";

/// Render the MPD of a sequence: one Period per part, starting where the
/// previous one ends, each the part's own sets (the same AdaptationSet and Representation
/// ids in every Period, since every part offers the sequence's renditions), its segments
/// named by part (`seg-p2-f1-t1-$Number$.m4s`). A part whose init segments are those of
/// the part before says so in each set: `urn:mpeg:dash:period-continuity:2015` when its
/// media timeline also carries on, else `urn:mpeg:dash:period-connectivity:2015`
/// (ISO/IEC 23009-1 5.3.2.4). Trick play and storyboards are not offered for sequences.
pub fn render_sequence_mpd(sequence: &Sequence, options: &ManifestOptions) -> String {
    let options = &ManifestOptions {
        trick_play: false,
        storyboard: None,
        ..options.clone()
    };
    let folder = match (&options.version, sequence.parts.get(sequence.reference)) {
        (Some(token), _) => crate::package::version_folder(token),
        (None, Some(part)) => options.folder(&part.title),
        (None, None) => String::new(),
    };
    let protection = dash_protection(options);
    let titles: Vec<&Title> = sequence.parts.iter().map(|p| &p.title).collect();
    let reference = sequence.parts.get(sequence.reference).map(|p| &p.title);
    let mut out = mpd_start(
        &titles,
        sequence.duration_secs(),
        protection.is_some(),
        options.dash_profile,
    );
    for (n, part) in sequence.parts.iter().enumerate() {
        let number = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let join = match (part.continuous, part.connected) {
            (true, _) => Some((PERIOD_CONTINUITY, n.saturating_sub(1))),
            (false, true) => Some((PERIOD_CONNECTIVITY, n.saturating_sub(1))),
            _ => None,
        };
        let uris = Uris {
            options,
            folder: &folder,
            protection: protection.as_ref(),
            part: Some((number, join)),
        };
        Tag::new(2, "Period")
            .attr("id", n)
            .attr("start", seconds(part.start_secs))
            .attr("duration", seconds(part.title.period_duration_secs()))
            .open(&mut out);
        // A part without subtitles still lists the sequence's text sets, each an empty
        // WebVTT file: a player (GStreamer's dashdemux2) that meets a text stream only in a
        // later Period stalls at the boundary, and HLS gives that time empty cues too.
        // The part's ad breaks, from the Period's start.
        event_stream(&mut out, &part.title);
        let silent = part.title.index.text_tracks.is_empty() && part.title.sidecars.is_empty();
        let texts_of = reference.filter(|_| silent);
        period_sets(&mut out, &part.title, texts_of, &uris);
        out.push_str("  </Period>\n");
    }
    out.push_str("</MPD>\n");
    out
}
