//! The DASH choices of the settings, as plain values: which rules an MPD is written by
//! (`--dash-profile`, which a title document's `"dash_profile"` overrides) and how its text
//! tracks are offered (`--dash-subtitle-format`). Here, below `media` and `package`, because
//! both the settings and a title document name them; the DASH writer (`package::dash`,
//! DVB specifics in `package::dash::dvb`, text sets in `package::dash::text`) does the
//! writing.

use serde::Deserialize;

/// The DASH profile an MPD is written by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DashProfile {
    /// The ISO live profile and CMAF (`urn:mpeg:dash:profile:isoff-live:2011`,
    /// `urn:mpeg:dash:profile:cmaf:2019`): what every MPD said before profiles.
    #[default]
    Default,
    /// DVB-DASH (ETSI TS 103 285 v1.3.1: the 2014 and 2017 profiles over the ISO live
    /// profile), which HbbTV 2.0.x terminals read.
    Dvb,
}

/// How a DASH MPD offers text tracks (nginx-vod-module's `vod_dash_subtitle_format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum DashSubtitleFormat {
    /// WebVTT in ISO BMFF segments (`codecs="wvtt"`, ISO/IEC 14496-30) on the Period's
    /// segment timeline.
    #[default]
    Wvtt,
    /// IMSC1 Text Profile TTML in ISO BMFF segments (`codecs="stpp.ttml.im1t"`), one
    /// document per segment.
    Imsc1,
    /// One whole WebVTT file per track under `BaseURL` (`text/vtt`), for old players.
    WebvttFile,
}
