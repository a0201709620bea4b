//! Sidecar subtitle files (WebVTT, SRT, and TTML in `sidecar/ttml.rs`) named by a title document: their cues, with
//! times on the title's source timeline (0 = the presentation start), as [`SampleCue`]s.
//!
//! Parsed here, from bytes the server read whole (bounded by `max_text_read_bytes`), so
//! `package::webvtt` cuts and writes them exactly as it does the cues of text tracks.
//! UTF-8 only, a byte order mark tolerated. SRT is converted to WebVTT cue text: `<b>`,
//! `<i>` and `<u>` are kept (WebVTT has them), `<font>` tags are dropped, and `&` and any
//! other `<` are escaped. WebVTT cue text is kept as written. A cue whose timing line does
//! not parse is skipped, as WebVTT parsers do; a file with no cue at all is an error, so a
//! wrong file is noticed.

mod ttml;

use super::{MediaError, SampleCue};

/// The sidecar formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SidecarFormat {
    /// W3C WebVTT (`.vtt`).
    WebVtt,
    /// SubRip (`.srt`).
    Srt,
    /// W3C TTML and its profiles: IMSC1, EBU-TT-D, SMPTE-TT, DFXP (`.ttml`, `.dfxp`,
    /// `.xml`), read by `ttml.rs`.
    Ttml,
}

impl SidecarFormat {
    /// The format a file name's extension says, if any.
    pub fn of(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        match () {
            _ if lower.ends_with(".vtt") => Some(Self::WebVtt),
            _ if lower.ends_with(".srt") => Some(Self::Srt),
            _ if [".ttml", ".dfxp", ".xml"]
                .iter()
                .any(|e| lower.ends_with(e)) =>
            {
                Some(Self::Ttml)
            }
            _ => None,
        }
    }
}

/// One cue of a sidecar file: start and end in nanoseconds from the presentation start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarCue {
    /// Start, ns.
    pub start_ns: i128,
    /// End, ns (after the start).
    pub end_ns: i128,
    /// Identifier, settings and WebVTT text.
    pub payload: SampleCue,
}

/// The cues of a sidecar file's `bytes`, in file order.
///
/// # Errors
/// [`MediaError::Malformed`] when the bytes are not UTF-8, a WebVTT file does not start
/// with `WEBVTT`, or the file holds no cue.
pub fn parse_sidecar(format: SidecarFormat, bytes: &[u8]) -> Result<Vec<SidecarCue>, MediaError> {
    if format == SidecarFormat::Ttml {
        return ttml::parse_ttml(bytes);
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| MediaError::Malformed {
        reason: "subtitle file is not UTF-8".into(),
    })?;
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut blocks = text.split("\n\n").map(|b| b.trim_matches('\n'));
    if format == SidecarFormat::WebVtt {
        let header = blocks.next().unwrap_or_default();
        let signature = header.lines().next().unwrap_or_default();
        let valid = signature == "WEBVTT"
            || signature.starts_with("WEBVTT ")
            || signature.starts_with("WEBVTT\t");
        if !valid {
            return Err(MediaError::Malformed {
                reason: "WebVTT file does not start with WEBVTT".into(),
            });
        }
    }
    let mut cues = Vec::new();
    for block in blocks.filter(|b| !b.is_empty()) {
        let mut lines = block.lines();
        let Some(mut first) = lines.next() else {
            continue;
        };
        let mut id = None;
        if !first.contains("-->") {
            // A WebVTT NOTE, STYLE or REGION block, or a cue identifier (an SRT index).
            if format == SidecarFormat::WebVtt
                && ["NOTE", "STYLE", "REGION"]
                    .iter()
                    .any(|k| first == *k || first.starts_with(&format!("{k} ")))
            {
                continue;
            }
            id = (format == SidecarFormat::WebVtt).then(|| first.to_owned());
            match lines.next() {
                Some(line) if line.contains("-->") => first = line,
                _ => continue,
            }
        }
        let Some((start_ns, end_ns, settings)) = timing_line(first) else {
            continue;
        };
        let body: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
        let text = match format {
            SidecarFormat::WebVtt | SidecarFormat::Ttml => body.join("\n"),
            SidecarFormat::Srt => body
                .iter()
                .map(|l| srt_to_webvtt(l))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if text.is_empty() || text.contains("-->") || end_ns <= start_ns {
            continue;
        }
        cues.push(SidecarCue {
            start_ns,
            end_ns,
            payload: SampleCue {
                id,
                settings: (format == SidecarFormat::WebVtt)
                    .then_some(settings)
                    .flatten(),
                text,
            },
        });
    }
    if cues.is_empty() {
        return Err(MediaError::Malformed {
            reason: "subtitle file holds no cue".into(),
        });
    }
    Ok(cues)
}

/// `START --> END [settings]`, times as `[HH:]MM:SS.mmm` (WebVTT) or `HH:MM:SS,mmm` (SRT).
fn timing_line(line: &str) -> Option<(i128, i128, Option<String>)> {
    let (start, rest) = line.split_once("-->")?;
    let rest = rest.trim_start();
    let (end, settings) = match rest.split_once([' ', '\t']) {
        Some((end, settings)) => (end, Some(settings.trim()).filter(|s| !s.is_empty())),
        None => (rest, None),
    };
    Some((
        timestamp_ns(start.trim())?,
        timestamp_ns(end.trim())?,
        settings.map(str::to_owned),
    ))
}

/// `[HH:]MM:SS.mmm` or `HH:MM:SS,mmm` in nanoseconds.
fn timestamp_ns(s: &str) -> Option<i128> {
    let (clock, millis) = s.split_once(['.', ','])?;
    if millis.len() != 3 || !millis.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let parts: Vec<&str> = clock.split(':').collect();
    let number = |p: &str| -> Option<i128> {
        (!p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse().ok())
            .flatten()
    };
    let (h, m, sec) = match parts.as_slice() {
        [m, s] => (0, number(m)?, number(s)?),
        [h, m, s] => (number(h)?, number(m)?, number(s)?),
        _ => return None,
    };
    if m > 59 || sec > 59 {
        return None;
    }
    let ms = (h * 3600 + m * 60 + sec) * 1000 + number(millis)?;
    Some(ms * 1_000_000)
}

/// One SRT text line as WebVTT cue text (see the module comment).
fn srt_to_webvtt(line: &str) -> String {
    const KEPT: [&str; 6] = ["<b>", "</b>", "<i>", "</i>", "<u>", "</u>"];
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            let lower = rest.to_ascii_lowercase();
            if let Some(tag) = KEPT.iter().find(|t| lower.starts_with(**t)) {
                out.push_str(tag);
                rest = &rest[tag.len()..];
                continue;
            }
            if lower.starts_with("<font") || lower.starts_with("</font") {
                if let Some(end) = rest.find('>') {
                    rest = &rest[end + 1..];
                    continue;
                }
            }
            out.push_str("&lt;");
        } else if c == '&' {
            out.push_str("&amp;");
        } else if c == '>' {
            out.push_str("&gt;");
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given a WebVTT file with a BOM, CRLF lines, a NOTE, an identifier and settings,
    /// then its cues come back with their times, identifier, settings and text.
    #[test]
    fn webvtt_cues_keep_ids_settings_and_text() {
        let file = "\u{feff}WEBVTT - title\r\n\r\nNOTE a comment\r\n\r\nintro\r\n00:00.500 --> 00:01.250 line:90%\r\nHello, <i>world</i>!\r\n\r\n01:00:01.800 --> 01:00:02.700\r\nTwo\r\nlines\r\n";
        let cues = parse_sidecar(SidecarFormat::WebVtt, file.as_bytes()).unwrap();
        assert_eq!(cues.len(), 2);
        assert_eq!(
            (cues[0].start_ns, cues[0].end_ns),
            (500_000_000, 1_250_000_000)
        );
        assert_eq!(cues[0].payload.id.as_deref(), Some("intro"));
        assert_eq!(cues[0].payload.settings.as_deref(), Some("line:90%"));
        assert_eq!(cues[0].payload.text, "Hello, <i>world</i>!");
        assert_eq!(cues[1].start_ns, 3_601_800_000_000);
        assert_eq!(cues[1].payload.text, "Two\nlines");
    }

    /// Given an SRT file, then its cues are WebVTT: comma times read, tags kept or
    /// dropped, `&` and stray `<` escaped, the index not an identifier.
    #[test]
    fn srt_becomes_webvtt() {
        let file = "1\n00:00:00,500 --> 00:00:01,250\n<font color=\"red\">Caf\u{e9}</font> & <b>cr\u{e8}me</b> <3\n\n2\n00:00:02,000 --> 00:00:03,000\nbye\n";
        let cues = parse_sidecar(SidecarFormat::Srt, file.as_bytes()).unwrap();
        assert_eq!(cues.len(), 2);
        assert_eq!(
            cues[0].payload.text,
            "Caf\u{e9} &amp; <b>cr\u{e8}me</b> &lt;3"
        );
        assert_eq!(cues[0].payload.id, None);
        assert_eq!(
            (cues[1].start_ns, cues[1].end_ns),
            (2_000_000_000, 3_000_000_000)
        );
    }

    /// Given files that are not subtitles, then each is refused.
    #[test]
    fn wrong_files_are_refused() {
        for (format, bytes) in [
            (
                SidecarFormat::WebVtt,
                &b"00:00.000 --> 00:01.000\nno header\n"[..],
            ),
            (SidecarFormat::WebVtt, &b"WEBVTT\n\nnothing here\n"[..]),
            (SidecarFormat::Srt, &b"\xff\xfe\x00"[..]),
            (
                SidecarFormat::Srt,
                &b"1\n00:00:99,000 --> 00:01:00,000\nbad time\n"[..],
            ),
        ] {
            assert!(parse_sidecar(format, bytes).is_err(), "{bytes:?}");
        }
    }
}
