//! What the MPD says about accessibility: the Role of each declared audio role
//! (ISO/IEC 23009-1 5.8.5.5, `urn:mpeg:dash:role:2011`) with audio description also as
//! `Accessibility` of `urn:tva:metadata:cs:AudioPurposeCS:2007` value 1 (visually
//! impaired, as DVB-DASH and the DASH-IF IOP signal it), and closed captions carried in the
//! video as `Accessibility` on its set (SCTE 214-1: `urn:scte:dash:cc:cea-608:2015`,
//! `CC1=eng;CC3=spa`, and `urn:scte:dash:cc:cea-708:2015`, `1=lang:eng`). Accessibility
//! elements come before Role, as the schema orders an AdaptationSet's children.

use super::tag::Tag;
use super::ROLE_SCHEME;
use crate::media::{AudioRole, CaptionChannel};
use crate::package::Title;

const AUDIO_PURPOSE_SCHEME: &str = "urn:tva:metadata:cs:AudioPurposeCS:2007";
/// AudioPurposeCS 1: audio description for the visually impaired.
const AUDIO_PURPOSE_DESCRIPTION: u32 = 1;
const CEA_608_SCHEME: &str = "urn:scte:dash:cc:cea-608:2015";
const CEA_708_SCHEME: &str = "urn:scte:dash:cc:cea-708:2015";
/// ISO 639-2 for a language not known.
const UNDETERMINED: &str = "und";

/// `Accessibility` and `Role` elements of an audio set whose renditions declare `roles`.
pub(super) fn audio_roles(out: &mut String, roles: &[AudioRole]) {
    if roles.contains(&AudioRole::Description) {
        Tag::new(6, "Accessibility")
            .attr("schemeIdUri", AUDIO_PURPOSE_SCHEME)
            .attr("value", AUDIO_PURPOSE_DESCRIPTION)
            .empty(out);
    }
    for role in roles {
        Tag::new(6, "Role")
            .attr("schemeIdUri", ROLE_SCHEME)
            .attr("value", role.as_str())
            .empty(out);
    }
}

/// The `Accessibility` elements of the video set for the title's declared closed
/// captions: one for the CEA-608 channels, one for the CEA-708 services, each listing
/// its channels with their languages (three letters where the code is known, `und` when
/// none is given).
pub(super) fn closed_captions(out: &mut String, title: &Title) {
    let mut cea608 = Vec::new();
    let mut cea708 = Vec::new();
    for caption in &title.closed_captions {
        let language = caption.language.as_deref().map(|l| {
            let lower = l.to_ascii_lowercase();
            let primary = lower.split('-').next().unwrap_or("").to_owned();
            crate::package::view::three_letter_code(&primary).map_or(primary, str::to_owned)
        });
        // No language (captions found in the stream, which says none): `und`, ISO 639-2's
        // "undetermined", since readers expect a channel's `=` (ExoPlayer matches
        // `CC[1-4]=`; Shaka takes a bare value for a language).
        let language = language.unwrap_or_else(|| UNDETERMINED.to_owned());
        match caption.channel {
            CaptionChannel::Cea608(_) => cea608.push(format!("{}={language}", caption.channel)),
            CaptionChannel::Cea708(n) => cea708.push(format!("{n}=lang:{language}")),
        }
    }
    for (scheme, values) in [(CEA_608_SCHEME, cea608), (CEA_708_SCHEME, cea708)] {
        if !values.is_empty() {
            Tag::new(6, "Accessibility")
                .attr("schemeIdUri", scheme)
                .attr("value", values.join(";"))
                .empty(out);
        }
    }
}
