//! What the preview page reads from a title's manifests, as a player would: its duration
//! and Periods from the MPD (ISO/IEC 23009-1 5.3.1.2 `mediaPresentationDuration`, 5.3.2
//! `Period@start`), whether it is encrypted (`ContentProtection`), its version folder
//! from a media playlist's URI, and its ladder and languages in a few words. The text is
//! the server's own answer; still, nothing here trusts it to be well formed.

use super::probe::KeyReport;

/// One DASH Period: a sequence's part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    /// `@id`, or its position from 1 when it has none.
    pub id: String,
    /// `@start`, in ms (0 when not given).
    pub start_ms: u64,
}

/// The MPD's `mediaPresentationDuration` in ms, if it has one that reads.
pub fn mpd_duration_ms(mpd: &str) -> Option<u64> {
    attribute(mpd.split("<MPD").nth(1)?, "mediaPresentationDuration").and_then(iso_duration_ms)
}

/// The MPD's Periods, in order (at most 1,000).
pub fn mpd_periods(mpd: &str) -> Vec<Period> {
    (mpd.split("<Period").skip(1).take(1000).enumerate())
        .map(|(n, rest)| {
            let head = rest.split('>').next().unwrap_or_default();
            Period {
                id: attribute(head, "id").unwrap_or_else(|| (n + 1).to_string()),
                start_ms: attribute(head, "start")
                    .and_then(iso_duration_ms)
                    .unwrap_or(0),
            }
        })
        .collect()
}

/// Whether the MPD says its content is protected.
pub fn mpd_protected(mpd: &str) -> bool {
    mpd.contains("<ContentProtection")
}

/// The version folder (`vTOKEN`) of a media playlist URI such as `v0123456789abcdef/
/// index-t1.m3u8`, if it has one.
pub fn version_folder(uri: &str) -> Option<&str> {
    let folder = uri.split('/').next()?;
    let hex = folder.strip_prefix('v')?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(folder)
}

/// The video rungs in a few words, highest first: `1080p 720p 360p`; empty for audio only.
pub fn ladder_text(report: &KeyReport) -> String {
    let mut heights: Vec<u32> = (report.variants.iter())
        .filter_map(|v| v.resolution.as_deref()?.split_once('x')?.1.parse().ok())
        .collect();
    heights.sort_unstable_by(|a, b| b.cmp(a));
    heights.dedup();
    (heights.iter().map(|h| format!("{h}p")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The audio and subtitle languages: `audio en fr · subtitles de`; empty when none said.
pub fn languages_text(report: &KeyReport) -> String {
    let of = |kind: &str| {
        let mut langs: Vec<&str> = (report.renditions.iter())
            .filter(|r| r.kind == kind)
            .filter_map(|r| r.language.as_deref())
            .collect();
        langs.dedup();
        langs.join(" ")
    };
    let (audio, subtitles) = (of("AUDIO"), of("SUBTITLES"));
    let mut parts = Vec::new();
    if !audio.is_empty() {
        parts.push(format!("audio {audio}"));
    }
    if !subtitles.is_empty() {
        parts.push(format!("subtitles {subtitles}"));
    }
    parts.join(" \u{b7} ")
}

/// The value of `name="..."` in an XML start tag's text.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let head = tag.split('>').next()?;
    let mut rest = head;
    loop {
        let at = rest.find(name)?;
        let before = rest[..at].chars().last();
        let after = &rest[at + name.len()..];
        rest = after;
        if before.is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        if let Some(value) = after.trim_start().strip_prefix('=') {
            let value = value.trim_start();
            let quote = value.chars().next()?;
            if quote != '"' && quote != '\'' {
                return None;
            }
            return value[1..].split(quote).next().map(str::to_owned);
        }
    }
}

/// An ISO 8601 duration as the MPD writes them (`PT1H2M3.5S`, `P1DT2H`), in ms.
fn iso_duration_ms(text: String) -> Option<u64> {
    let rest = text.trim().strip_prefix('P')?;
    let mut total = 0f64;
    let mut number = String::new();
    let mut in_time = false;
    for c in rest.chars() {
        match c {
            'T' => in_time = true,
            '0'..='9' | '.' => number.push(c),
            unit => {
                let value: f64 = number.parse().ok()?;
                number.clear();
                let seconds = match (unit, in_time) {
                    ('D', false) => 86_400.0,
                    ('H', true) => 3_600.0,
                    ('M', true) => 60.0,
                    ('S', true) => 1.0,
                    _ => return None,
                };
                total += value * seconds;
            }
        }
    }
    (number.is_empty() && (0.0..1e12).contains(&total)).then(|| (total * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_and_periods_are_read_from_an_mpd() {
        let mpd = "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" \
            type=\"static\" mediaPresentationDuration=\"PT1H2M3.456S\" minBufferTime=\"PT2S\">\
            <Period id=\"p1\" start=\"PT0S\"></Period><Period start=\"PT9.5S\"><x/></Period></MPD>";
        assert_eq!(mpd_duration_ms(mpd), Some(3_723_456));
        assert_eq!(
            mpd_periods(mpd),
            [
                Period {
                    id: "p1".into(),
                    start_ms: 0
                },
                Period {
                    id: "2".into(),
                    start_ms: 9_500
                }
            ]
        );
        assert!(!mpd_protected(mpd));
        assert_eq!(iso_duration_ms("P1DT1S".into()), Some(86_401_000));
        assert_eq!(iso_duration_ms("PT1X".into()), None);
        assert_eq!(iso_duration_ms("PT".into()), Some(0));
        assert_eq!(
            mpd_duration_ms("<MPD mediaPresentationDuration=PT3S>"),
            None
        );
    }

    #[test]
    fn the_version_folder_is_read_from_a_media_playlist_uri() {
        assert_eq!(
            version_folder("v0123456789abcdef/index-t1.m3u8?token=x"),
            Some("v0123456789abcdef")
        );
        assert_eq!(version_folder("index-t1.m3u8"), None);
        assert_eq!(version_folder("v01/index-t1.m3u8"), None);
    }
}
