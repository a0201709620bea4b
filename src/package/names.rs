//! The names of every resource under `/vod/KEY/`, made and parsed in one place.
//!
//! Manifests refer to these names with relative URLs, and the router parses them back, so
//! the two can never drift apart (a round-trip test checks it). Every name ends in a media
//! extension, because players and ffmpeg refuse segment URLs without one.
//!
//! Everything a multivariant playlist or MPD points to lives under a version folder,
//! `v{token}/` (see [`version_folder`]), where the token changes whenever the bytes would:
//! a new object version, another segment duration, another packager format. So media
//! playlists and segments can be cached for ever, and a CDN holding an old playlist never
//! mixes its segments with a new version's.

use std::fmt;

/// One resource of a title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// `master.m3u8`: HLS multivariant playlist with CMAF segments.
    Multivariant,
    /// `master-ts.m3u8`: HLS multivariant playlist with MPEG-TS segments.
    MultivariantTs,
    /// `manifest.mpd`: DASH MPD.
    Mpd,
    /// `index-t{track_id}.m3u8`: HLS media playlist of one rendition.
    MediaPlaylist { track_id: u32 },
    /// `init-t{track_id}.mp4`: CMAF init segment of one rendition.
    Init { track_id: u32 },
    /// `seg-t{track_id}-{number}.m4s`: CMAF media segment, `number` 1-based.
    Segment { track_id: u32, number: u64 },
    /// `sub-t{track_id}-{number}.vtt`: WebVTT segment of a text track's HLS subtitle
    /// playlist (which is its `index-t{track_id}.m3u8`), `number` 1-based as the title's
    /// segments.
    SubtitleSegment { track_id: u32, number: u64 },
    /// `sub-t{track_id}.vtt`: the whole text track as one WebVTT file, for DASH.
    SubtitleFile { track_id: u32 },
}

impl Resource {
    /// Parse a file name (the last path segment of a request).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "master.m3u8" => return Some(Self::Multivariant),
            "master-ts.m3u8" => return Some(Self::MultivariantTs),
            "manifest.mpd" => return Some(Self::Mpd),
            _ => {}
        }
        if let Some(id) = name
            .strip_prefix("index-t")
            .and_then(|r| r.strip_suffix(".m3u8"))
        {
            return Some(Self::MediaPlaylist {
                track_id: parse_number(id)?,
            });
        }
        if let Some(id) = name
            .strip_prefix("init-t")
            .and_then(|r| r.strip_suffix(".mp4"))
        {
            return Some(Self::Init {
                track_id: parse_number(id)?,
            });
        }
        if let Some(rest) = name
            .strip_prefix("sub-t")
            .and_then(|r| r.strip_suffix(".vtt"))
        {
            return match rest.split_once('-') {
                None => Some(Self::SubtitleFile {
                    track_id: parse_number(rest)?,
                }),
                Some((id, number)) => {
                    let number = parse_number(number)?;
                    (number >= 1).then_some(Self::SubtitleSegment {
                        track_id: parse_number(id)?,
                        number,
                    })
                }
            };
        }
        let rest = name.strip_prefix("seg-t")?.strip_suffix(".m4s")?;
        let (id, number) = rest.split_once('-')?;
        let number = parse_number(number)?;
        (number >= 1).then_some(Self::Segment {
            track_id: parse_number(id)?,
            number,
        })
    }

    /// DASH `SegmentTemplate@initialization` for representations named `t{track_id}`.
    pub const DASH_INIT_TEMPLATE: &'static str = "init-$RepresentationID$.mp4";
    /// DASH `SegmentTemplate@media` for representations named `t{track_id}`.
    pub const DASH_MEDIA_TEMPLATE: &'static str = "seg-$RepresentationID$-$Number$.m4s";

    /// DASH `Representation@id` of a track, matching the templates above.
    pub fn dash_representation_id(track_id: u32) -> String {
        format!("t{track_id}")
    }
}

/// The folder, relative to `/vod/KEY/`, that versioned resources live in: `v{token}/`.
pub fn version_folder(token: &str) -> String {
    format!("v{token}/")
}

/// Parse a version folder name (`v` + 16 lowercase hex digits) into its token.
pub fn parse_version_folder(segment: &str) -> Option<&str> {
    let token = segment.strip_prefix('v')?;
    (token.len() == 16
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    .then_some(token)
}

/// A decimal number without sign, leading zeros or excess digits, so every resource has
/// exactly one name.
fn parse_number<T: std::str::FromStr>(s: &str) -> Option<T> {
    let canonical = !s.is_empty()
        && s.len() <= 19
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Multivariant => f.write_str("master.m3u8"),
            Self::MultivariantTs => f.write_str("master-ts.m3u8"),
            Self::Mpd => f.write_str("manifest.mpd"),
            Self::MediaPlaylist { track_id } => write!(f, "index-t{track_id}.m3u8"),
            Self::Init { track_id } => write!(f, "init-t{track_id}.mp4"),
            Self::Segment { track_id, number } => write!(f, "seg-t{track_id}-{number}.m4s"),
            Self::SubtitleSegment { track_id, number } => {
                write!(f, "sub-t{track_id}-{number}.vtt")
            }
            Self::SubtitleFile { track_id } => write!(f, "sub-t{track_id}.vtt"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for r in [
            Resource::Multivariant,
            Resource::MultivariantTs,
            Resource::Mpd,
            Resource::MediaPlaylist { track_id: 1 },
            Resource::Init { track_id: 20 },
            Resource::Segment {
                track_id: 3,
                number: 600,
            },
            Resource::SubtitleSegment {
                track_id: 4,
                number: 12,
            },
            Resource::SubtitleFile { track_id: 4 },
        ] {
            assert_eq!(Resource::parse(&r.to_string()), Some(r));
        }
    }

    #[test]
    fn dash_templates_expand_to_our_names() {
        let id = Resource::dash_representation_id(2);
        let init = Resource::DASH_INIT_TEMPLATE.replace("$RepresentationID$", &id);
        let media = Resource::DASH_MEDIA_TEMPLATE
            .replace("$RepresentationID$", &id)
            .replace("$Number$", "7");
        assert_eq!(Resource::parse(&init), Some(Resource::Init { track_id: 2 }));
        assert_eq!(
            Resource::parse(&media),
            Some(Resource::Segment {
                track_id: 2,
                number: 7
            })
        );
    }

    #[test]
    fn version_folders_round_trip() {
        let folder = version_folder("0123456789abcdef");
        assert_eq!(
            parse_version_folder(folder.trim_end_matches('/')),
            Some("0123456789abcdef")
        );
        for odd in [
            "v0123",
            "V0123456789abcdef",
            "v0123456789ABCDEF",
            "x0123456789abcdef",
        ] {
            assert_eq!(parse_version_folder(odd), None, "{odd}");
        }
    }

    #[test]
    fn odd_spellings_are_not_resources() {
        for name in [
            "seg-t1-0.m4s",
            "seg-t1-01.m4s",
            "seg-t1-99999999999999999999.m4s",
            "seg-t-1.m4s",
            "seg-t1-+1.m4s",
            "sub-t4-0.vtt",
            "sub-t4-01.vtt",
            "sub-t-4.vtt",
            "sub-t4-1-2.vtt",
            "sub-t4.m4s",
            "index-t1.m3u",
            "init-t1",
            "MASTER.m3u8",
            "",
        ] {
            assert_eq!(Resource::parse(name), None, "{name}");
        }
    }
}
