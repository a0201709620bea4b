//! What the DVB-DASH profile (ETSI TS 103 285 v1.3.1, read by HbbTV 2.0.x terminals)
//! writes differently from the default profile: its profile URNs, a `urn:mpeg:dash:role:2011`
//! Role on every audio and video set with `main` on exactly one of each kind, `@codecs`
//! on the AdaptationSet where its Representations share one (DASH-IF's DVB rules find an
//! audio set by the codecs on it) and `@mimeType` on every Representation (where those rules
//! read it), each then in that one place only (DASH-IF's generic rules want a common
//! attribute on the set or its Representations, not both), and audio channel configuration
//! in DVB's schemes.
//!
//! `dash.rs` calls in here at the few places the profiles differ; everything else in an
//! MPD (timelines, protection, events, sequences' Periods) is the same in both, which is
//! what keeps the two from drifting apart. Text sets are always EBU-TT-D (IMSC1 Text
//! Profile `stpp` segments, `ManifestOptions::dash_text_format`), never WebVTT, which DVB
//! does not have; `text.rs` writes them.

use super::access;
use super::tag::Tag;
use super::ROLE_SCHEME;
use crate::media::{AudioRole, CodecInfo, TrackKind};
use crate::package::{Rendition, Title};

/// `MPD@profiles` of the DVB profile: DVB-DASH 2014 (every HbbTV 2.0 terminal looks for
/// it) and 2017 (what the DASH-IF DVB rules check), over the ISO live profile both
/// build on (TS 103 285 4.1, 4.2). DVB's sub-profile
/// `urn:dvb:dash:profile:dvb-dash:isoff-ext-live:2014` is not named: the DASH-IF
/// schematron's list of known profiles does not have it, and no terminal needs it.
pub(super) const PROFILES: &str = "urn:dvb:dash:profile:dvb-dash:2014,\
urn:dvb:dash:profile:dvb-dash:2017,urn:mpeg:dash:profile:isoff-live:2011";

/// MPEG's channel configuration scheme (ISO/IEC 23001-8 CICP `ChannelConfiguration`),
/// which DVB-DASH 2017 uses for the AAC family (TS 103 285 6.1.1).
const CICP_CHANNELS_SCHEME: &str = "urn:mpeg:mpegB:cicp:ChannelConfiguration";
/// Dolby's channel configuration scheme, which DVB requires for E-AC-3 and AC-4
/// (TS 103 285 6.3.1): a 16-bit loudspeaker mask in four hex digits.
const DOLBY_CHANNELS_SCHEME: &str = "tag:dolby.com,2014:dash:audio_channel_configuration:2011";

/// The set (by its position among the title's sets) that carries Role `main`, for video
/// and for audio; `None` when there is no set of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct MainSets {
    pub(super) video: Option<usize>,
    pub(super) audio: Option<usize>,
}

/// Which sets are `main` (TS 103 285 10.x and the DASH-IF DVB checks "at least one
/// Adaptation Set SHALL carry a main role", HbbTV 2.0.x picks it first): the first video
/// set; for audio, the first set a title document calls `main`, else the first holding the
/// default rendition with no role of its own, else the first with no role of its own.
pub(super) fn main_sets(groups: &[Vec<&Rendition>]) -> MainSets {
    let first = |kind: TrackKind| groups.iter().position(|g| kind_of(g) == Some(kind));
    let audio = |pick: &dyn Fn(&Rendition) -> bool| {
        let found = groups.iter().position(|g| {
            kind_of(g) == Some(TrackKind::Audio) && g.first().is_some_and(|r| pick(r))
        });
        found
    };
    let declared_main = |r: &Rendition| r.roles.contains(&AudioRole::Main);
    let plain_default = |r: &Rendition| r.roles.is_empty() && r.is_default;
    let plain = |r: &Rendition| r.roles.is_empty();
    MainSets {
        video: first(TrackKind::Video),
        audio: audio(&declared_main)
            .or_else(|| audio(&plain_default))
            .or_else(|| audio(&plain)),
    }
}

fn kind_of(group: &[&Rendition]) -> Option<TrackKind> {
    group.first().map(|r| r.kind)
}

/// The Accessibility and Role elements of an audio or video set: `main` for the main set
/// of its kind, a document's declared roles for the others (audio description keeps its
/// Accessibility), `alternate` where none is declared. Each set so has at least one Role
/// of the 2011 scheme (TS 103 285 6.1.2) and exactly one set of a kind is `main`.
pub(super) fn roles(out: &mut String, rendition: &Rendition, main: bool) {
    let declared: Vec<AudioRole> = (rendition.roles.iter())
        .copied()
        .filter(|role| *role != AudioRole::Main)
        .collect();
    if rendition.kind == TrackKind::Audio && !main && !declared.is_empty() {
        access::audio_roles(out, &declared);
        return;
    }
    let value = if main { "main" } else { "alternate" };
    Tag::new(6, "Role")
        .attr("schemeIdUri", ROLE_SCHEME)
        .attr("value", value)
        .empty(out);
}

/// The `@codecs` all Representations of a set share, written on the AdaptationSet (and
/// then not on them): where DVB terminals and DASH-IF's DVB rules read an audio set's codec
/// (TS 103 285 6.1.1, Table 4); `None` when they differ (a ladder of several levels) or are
/// unknown.
pub(super) fn shared_codecs<'a>(title: &'a Title, group: &[&Rendition]) -> Option<&'a str> {
    let mut codecs = (group.iter())
        .filter_map(|r| title.index.tracks.get(r.track_pos))
        .map(|t| t.codec.rfc6381.as_str());
    let first = codecs.next().filter(|c| !c.is_empty())?;
    codecs.all(|c| c == first).then_some(first)
}

/// An audio Representation's `AudioChannelConfiguration` in DVB's schemes: Dolby's mask
/// for AC-3 and E-AC-3 (from their `dac3`/`dec3`) and AC-4 (mono, stereo or 5.1 by its
/// channel count); CICP `ChannelConfiguration` for AAC with 1 to 6 channels (AAC's channel
/// configurations 1 to 6 are CICP's); ISO/IEC 23009-1's count (which DVB also accepts)
/// where neither says more than the count.
pub(super) fn channel_configuration(out: &mut String, codec: &CodecInfo, default_scheme: &str) {
    let ac4 = codec.rfc6381.starts_with("ac-4");
    let dolby = codec
        .dolby_channel_mask
        .or_else(|| ac4.then(|| dolby_mask(codec.channels)).flatten());
    let aac = codec.rfc6381.starts_with("mp4a.40") && (1..=6).contains(&codec.channels);
    let (scheme, value) = match dolby {
        Some(mask) => (DOLBY_CHANNELS_SCHEME, format!("{mask:04X}")),
        None if aac => (CICP_CHANNELS_SCHEME, codec.channels.to_string()),
        None if codec.channels > 0 => (default_scheme, codec.channels.to_string()),
        None => return,
    };
    Tag::new(8, "AudioChannelConfiguration")
        .attr("schemeIdUri", scheme)
        .attr("value", value)
        .empty(out);
}

/// The Dolby loudspeaker mask of the usual layout of a channel count (mono C, stereo L R,
/// 5.1), for AC-4, whose sample entry this module reads no layout from; `None` for other
/// counts.
fn dolby_mask(channels: u16) -> Option<u16> {
    match channels {
        1 => Some(0x4000),
        2 => Some(0xA000),
        6 => Some(0xF801),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! The DVB profile's MPD, as small stories over the synthetic titles.

    use super::*;
    use crate::package::testing::{fixture_title, title};
    use crate::package::{render_mpd_with, DashProfile, DashSubtitleFormat, ManifestOptions};

    fn dvb() -> ManifestOptions {
        ManifestOptions {
            dash_profile: DashProfile::Dvb,
            ..ManifestOptions::default()
        }
    }

    /// Given the DVB profile, then the MPD names DVB-DASH 2014 and 2017 over the ISO live
    /// profile, and not CMAF (which DASH-IF's rules do not know).
    #[test]
    fn the_mpd_names_the_dvb_profiles() {
        let title = title(|_| true, Vec::new());
        let mpd = render_mpd_with(&title, &dvb());
        assert!(mpd.contains(&format!("profiles=\"{PROFILES}\"")), "{mpd}");
        assert!(!mpd.contains("cmaf:2019"), "{mpd}");
        let default = render_mpd_with(&title, &ManifestOptions::default());
        assert!(default.contains("cmaf:2019") && !default.contains("dvb"));
    }

    /// Given a title of video and audio, then each set has one `main` Role (the trick-play
    /// set, essential to players that know it, none) and the `@codecs` of its one
    /// Representation, which has its own `@mimeType` instead.
    #[test]
    fn every_set_has_a_role_and_each_representation_its_type() {
        let title = title(|_| true, Vec::new());
        let mpd = render_mpd_with(&title, &dvb());
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        assert!(!sets.is_empty());
        for set in sets.iter().filter(|s| !s.contains("trickmode")) {
            let main = "<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"main\"/>";
            assert_eq!(set.matches(main).count(), 1, "{set}");
            let start = set.split('>').next().unwrap_or_default();
            assert!(
                !start.contains("mimeType") && start.contains(" codecs="),
                "{start}"
            );
            for representation in set.split("<Representation").skip(1) {
                let tag = representation.split('>').next().unwrap_or_default();
                assert!(
                    tag.contains(" mimeType=\"") && !tag.contains(" codecs="),
                    "{tag}"
                );
            }
        }
    }

    /// Given AAC stereo, then its channel configuration is in CICP's scheme; given
    /// E-AC-3 5.1 (by its `dec3`), in Dolby's; given MP3, in ISO/IEC 23009-1's count.
    #[test]
    fn channel_configuration_uses_dvbs_schemes() {
        let mut codec = CodecInfo {
            fourcc: *b"mp4a",
            rfc6381: "mp4a.40.2".into(),
            width: 0,
            height: 0,
            channels: 2,
            sample_rate: 48_000,
            color: None,
            dolby_vision: None,
            dolby_channel_mask: None,
        };
        let written = |codec: &CodecInfo| {
            let mut out = String::new();
            channel_configuration(
                &mut out,
                codec,
                "urn:mpeg:dash:23003:3:audio_channel_configuration:2011",
            );
            out
        };
        assert!(written(&codec)
            .contains("schemeIdUri=\"urn:mpeg:mpegB:cicp:ChannelConfiguration\" value=\"2\""));
        codec.fourcc = *b"ec-3";
        codec.rfc6381 = "ec-3".into();
        codec.dolby_channel_mask = Some(0xF801);
        assert!(written(&codec).contains(&format!(
            "schemeIdUri=\"{DOLBY_CHANNELS_SCHEME}\" value=\"F801\""
        )));
        codec.dolby_channel_mask = None;
        codec.fourcc = *b"mp4a";
        codec.rfc6381 = "mp4a.6B".into();
        codec.channels = 2;
        assert!(written(&codec).contains("23003:3:audio_channel_configuration:2011\" value=\"2\""));
    }

    /// Given a file with two audio languages, then the default one's set is `main` and the
    /// other's `alternate`: exactly one audio set is `main`.
    #[test]
    fn exactly_one_audio_set_is_main() {
        let title = fixture_title("h264-aac-2lang-3s.mp4", 1000);
        let mpd = render_mpd_with(&title, &dvb());
        let audio: Vec<&str> = (mpd.split("<AdaptationSet").skip(1))
            .filter(|set| set.contains("contentType=\"audio\""))
            .collect();
        assert_eq!(audio.len(), 2, "{mpd}");
        let role = |value: &str| format!("schemeIdUri=\"{ROLE_SCHEME}\" value=\"{value}\"");
        let mains = audio.iter().filter(|s| s.contains(&role("main"))).count();
        let alternates = audio
            .iter()
            .filter(|s| s.contains(&role("alternate")))
            .count();
        assert_eq!((mains, alternates), (1, 1), "{mpd}");
    }

    /// Given a title with WebVTT subtitles and the server's subtitle form set to WebVTT,
    /// then the DVB MPD still offers them as EBU-TT-D (`stpp`) segments, never WebVTT,
    /// with `@codecs` on the set and `@mimeType` on the Representation.
    #[test]
    fn subtitles_are_ebu_tt_d_segments_whatever_the_setting() {
        let title = fixture_title("h264-aac-wvtt-3s.mp4", 1000);
        for form in [DashSubtitleFormat::Wvtt, DashSubtitleFormat::WebvttFile] {
            let options = ManifestOptions {
                dash_subtitles: form,
                ..dvb()
            };
            let mpd = render_mpd_with(&title, &options);
            let text = mpd
                .split("<AdaptationSet")
                .find(|set| set.contains("contentType=\"text\""))
                .unwrap_or_else(|| panic!("no text set: {mpd}"));
            assert!(text.contains(" codecs=\"stpp\""), "{text}");
            assert!(
                text.contains("<Representation id=\"t3\" mimeType=\"application/mp4\""),
                "{text}"
            );
            assert!(
                text.contains("/ttml-$RepresentationID$-$Number$.m4s"),
                "{text}"
            );
            assert!(!mpd.contains("wvtt") && !mpd.contains("text/vtt"), "{mpd}");
        }
    }
}
