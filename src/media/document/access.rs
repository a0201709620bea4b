//! Accessibility in title documents: the roles of an audio entry, and the
//! closed captions carried inside the video (CEA-608 channels, CEA-708 services) that a
//! document declares, since nothing in an MP4's boxes says they are there.
//!
//! Parsed and checked here, as plain values; what each becomes in HLS (`CHARACTERISTICS`,
//! `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS`) and DASH (`Role`, `Accessibility`) is the writers'.

use std::fmt;

use serde::Deserialize;

/// What an audio rendition is for, from an audio entry's `"roles"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AudioRole {
    /// The programme's main sound.
    Main,
    /// Audio description for blind and partially sighted viewers (HLS
    /// `public.accessibility.describes-video`, DASH Role `description`).
    Description,
    /// A commentary track.
    Commentary,
    /// A dubbed language.
    Dub,
}

impl AudioRole {
    /// The role as documents and DASH's role scheme (`urn:mpeg:dash:role:2011`) spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            AudioRole::Main => "main",
            AudioRole::Description => "description",
            AudioRole::Commentary => "commentary",
            AudioRole::Dub => "dub",
        }
    }

    /// The role named `name` (lowercase), if any.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Main, Self::Description, Self::Commentary, Self::Dub]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

impl fmt::Display for AudioRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where closed captions sit in the video's SEI/user data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaptionChannel {
    /// CEA-608 channel 1 to 4 (`CC1` .. `CC4`).
    Cea608(u8),
    /// CEA-708 service 1 to 63 (`SERVICE1` .. `SERVICE63`).
    Cea708(u8),
}

impl CaptionChannel {
    /// `CC1` .. `CC4` or `SERVICE1` .. `SERVICE63` (HLS `INSTREAM-ID`, RFC 8216 4.4.6.1);
    /// `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let number = |digits: &str| -> Option<u8> {
            let ok = !digits.is_empty() && digits.len() <= 2 && !digits.starts_with('0');
            ok.then(|| digits.parse().ok()).flatten()
        };
        if let Some(n) = text.strip_prefix("CC").and_then(number) {
            return (1..=4).contains(&n).then_some(Self::Cea608(n));
        }
        let n = text.strip_prefix("SERVICE").and_then(number)?;
        (1..=63).contains(&n).then_some(Self::Cea708(n))
    }
}

impl fmt::Display for CaptionChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptionChannel::Cea608(n) => write!(f, "CC{n}"),
            CaptionChannel::Cea708(n) => write!(f, "SERVICE{n}"),
        }
    }
}

/// Closed captions a title document declares in its video.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedCaption {
    /// Which channel or service.
    pub channel: CaptionChannel,
    /// Language (BCP 47 or ISO 639-2), if the document gives one.
    pub language: Option<String>,
    /// Display name; the document's, else its language, else the channel.
    pub name: String,
}

/// One `"closed_captions"` entry as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCaption {
    channel: String,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// The checked `"closed_captions"` list: each channel once, labels as for entries.
pub(super) fn closed_captions(
    raw: Vec<RawCaption>,
    check_label: impl Fn(&str, &str, &str) -> Result<(), super::DocumentError>,
) -> Result<Vec<ClosedCaption>, super::DocumentError> {
    let mut out: Vec<ClosedCaption> = Vec::with_capacity(raw.len());
    for (n, raw) in raw.into_iter().enumerate() {
        let entry = format!("closed_captions[{n}]");
        let bad = |reason: String| super::DocumentError::BadEntry {
            entry: entry.clone(),
            reason,
        };
        let channel = CaptionChannel::parse(&raw.channel).ok_or_else(|| {
            bad(format!(
                "channel {:?} is not CC1 to CC4 or SERVICE1 to SERVICE63",
                raw.channel
            ))
        })?;
        if out.iter().any(|c| c.channel == channel) {
            return Err(bad(format!("channel {channel} is declared twice")));
        }
        for (field, value) in [("language", &raw.language), ("name", &raw.name)] {
            if let Some(value) = value {
                check_label(&entry, field, value)?;
            }
        }
        let name = (raw.name.clone())
            .or_else(|| raw.language.clone())
            .unwrap_or_else(|| channel.to_string());
        out.push(ClosedCaption {
            channel,
            language: raw.language,
            name,
        });
    }
    Ok(out)
}

/// The checked `"roles"` of entry `entry`: each known, each once, in the order given.
pub(super) fn audio_roles(
    entry: &str,
    raw: &[String],
) -> Result<Vec<AudioRole>, super::DocumentError> {
    let mut roles = Vec::with_capacity(raw.len().min(4));
    for name in raw {
        let role = AudioRole::parse(name).ok_or_else(|| super::DocumentError::BadEntry {
            entry: entry.to_owned(),
            reason: format!(
                "unknown role {:?} (known: main, description, commentary, dub)",
                name.chars().take(64).collect::<String>()
            ),
        })?;
        if !roles.contains(&role) {
            roles.push(role);
        }
    }
    Ok(roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caption_channels_are_cc1_to_cc4_and_service1_to_service63() {
        assert_eq!(
            CaptionChannel::parse("CC1"),
            Some(CaptionChannel::Cea608(1))
        );
        assert_eq!(
            CaptionChannel::parse("CC4"),
            Some(CaptionChannel::Cea608(4))
        );
        assert_eq!(
            CaptionChannel::parse("SERVICE63"),
            Some(CaptionChannel::Cea708(63))
        );
        for bad in [
            "CC0",
            "CC5",
            "CC01",
            "cc1",
            "SERVICE0",
            "SERVICE64",
            "SERVICE",
            "CC",
            "",
        ] {
            assert_eq!(CaptionChannel::parse(bad), None, "{bad}");
        }
        assert_eq!(CaptionChannel::Cea708(7).to_string(), "SERVICE7");
    }
}
