//! `DashProfile`: which rules a title's MPD is written by. The server's `--dash-profile`
//! chooses one for every title and a title document's `"dash_profile"` overrides it; the
//! DASH writer (`package::dash`, DVB specifics in `package::dash::dvb`) does the writing.
//! It lives here because the document names it, and `media` is below `package`.

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
