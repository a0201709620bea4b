//! Timed text samples to cue payloads: `tx3g` (3GPP TS 26.245, "mov_text") and `wvtt`
//! (ISO/IEC 14496-30 WebVTT in ISOBMFF).
//!
//! One sample's bytes become the WebVTT cue text it holds; timing, merging and segmenting
//! belong to `package::webvtt`. Of `tx3g` styling only bold, italic and underline are kept.
//! Sample bytes are hostile: every length is checked, and a malformed sample is a typed
//! error naming the track.

use std::fmt::Write as _;

use mp4_atom::Codec;

use super::MediaError;

/// How a text track's samples are coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextFormat {
    /// 3GPP timed text (`tx3g`), what ffmpeg writes for `-c:s mov_text`.
    Tx3g,
    /// WebVTT in ISOBMFF (`wvtt`, ISO/IEC 14496-30).
    Wvtt,
}

impl TextFormat {
    /// The text format of a sample entry; `None` for anything else (QuickTime `text`,
    /// `stpp`, ...), which is not served.
    pub fn of(codec: &Codec) -> Option<Self> {
        match codec {
            Codec::Tx3g(_) => Some(Self::Tx3g),
            Codec::Wvtt(_) => Some(Self::Wvtt),
            _ => None,
        }
    }

    /// The sample entry fourcc, for messages and `inspect`.
    pub fn fourcc(&self) -> &'static str {
        match self {
            Self::Tx3g => "tx3g",
            Self::Wvtt => "wvtt",
        }
    }
}

/// One cue as a sample holds it, without times (the sample's time is the cue's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleCue {
    /// WebVTT cue identifier (`wvtt` `iden`), one line without `-->`.
    pub id: Option<String>,
    /// WebVTT cue settings (`wvtt` `sttg`), one line without `-->`.
    pub settings: Option<String>,
    /// WebVTT cue text: lines joined by `\n`, none empty, no `-->`; never empty.
    pub text: String,
}

/// The cues sample `bytes` of a track in `format` holds; empty text yields none.
///
/// # Errors
/// [`MediaError::InvalidTable`] (naming the sample entry and `track_id`) when a length
/// or box in the sample runs past its end.
pub fn parse_text_sample(
    format: TextFormat,
    track_id: u32,
    bytes: &[u8],
) -> Result<Vec<SampleCue>, MediaError> {
    let invalid = |reason: String| MediaError::InvalidTable {
        fourcc: format.fourcc().to_owned(),
        track_id,
        reason,
    };
    match format {
        TextFormat::Tx3g => tx3g(bytes).map_err(invalid),
        TextFormat::Wvtt => wvtt(bytes).map_err(invalid),
    }
}

/// A `tx3g` sample: a 16-bit length, the string (UTF-8, or UTF-16 after a byte order
/// mark, 3GPP TS 26.245 5.17), then modifier boxes. Bold, italic and underline runs of a
/// `styl` box become `<b>`, `<i>` and `<u>`; every other modifier (fonts, colours,
/// highlight, karaoke, placement) is dropped.
fn tx3g(bytes: &[u8]) -> Result<Vec<SampleCue>, String> {
    // An empty sample (no length at all) is a gap, as a zero length is.
    let Some((len, rest)) = bytes.split_first_chunk::<2>() else {
        return Ok(Vec::new());
    };
    let len = usize::from(u16::from_be_bytes(*len));
    let raw = rest.get(..len).ok_or_else(|| {
        format!(
            "text length {len} runs past the {}-byte sample",
            bytes.len()
        )
    })?;
    let text = match raw {
        [0xfe, 0xff, utf16 @ ..] => utf16_text(utf16, u16::from_be_bytes),
        [0xff, 0xfe, utf16 @ ..] => utf16_text(utf16, u16::from_le_bytes),
        _ => String::from_utf8_lossy(raw).into_owned(),
    };
    let modifiers = rest.get(len..).unwrap_or_default();
    let text = cue_text(&styled(&text, modifiers));
    Ok(text
        .map(|text| SampleCue {
            id: None,
            settings: None,
            text,
        })
        .into_iter()
        .collect())
}

/// One run of a `styl` box (3GPP TS 26.245 5.16, StyleRecord): characters
/// `start..end` of the sample's text, and the face style flags (1 bold, 2 italic,
/// 4 underlined).
#[derive(Debug, Clone, Copy)]
struct StyleRun {
    start: usize,
    end: usize,
    flags: u8,
}

/// The tags of the face style flags, in opening order.
const STYLE_TAGS: [(u8, &str); 3] = [(1, "b"), (2, "i"), (4, "u")];

/// `text` escaped for WebVTT, with the bold, italic and underline runs of the `styl` box
/// among `modifiers` as tags. Styling is optional: malformed modifier boxes, runs past the
/// text and runs overlapping an earlier one are ignored, never an error.
fn styled(text: &str, modifiers: &[u8]) -> String {
    let runs = style_runs(modifiers, text.chars().count());
    let mut out = String::with_capacity(text.len() + 16);
    let (mut next, mut open): (usize, Option<StyleRun>) = (0, None);
    for (i, c) in text.chars().enumerate() {
        if let Some(run) = open.filter(|run| run.end == i) {
            close_tags(&mut out, run.flags);
            open = None;
        }
        if let Some(run) = runs
            .get(next)
            .filter(|run| open.is_none() && run.start == i)
        {
            for (_, tag) in STYLE_TAGS.iter().filter(|(bit, _)| run.flags & bit != 0) {
                let _ = write!(out, "<{tag}>");
            }
            open = Some(*run);
            next += 1;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    if let Some(run) = open {
        close_tags(&mut out, run.flags);
    }
    out
}

fn close_tags(out: &mut String, flags: u8) {
    for (_, tag) in STYLE_TAGS.iter().rev().filter(|(bit, _)| flags & bit != 0) {
        let _ = write!(out, "</{tag}>");
    }
}

/// The usable bold/italic/underline runs of the `styl` box in `modifiers`, in order,
/// not overlapping, inside the text's `chars` characters.
fn style_runs(modifiers: &[u8], chars: usize) -> Vec<StyleRun> {
    let Ok(boxes) = boxes(modifiers) else {
        return Vec::new();
    };
    let Some((_, body)) = boxes.into_iter().find(|(kind, _)| kind == b"styl") else {
        return Vec::new();
    };
    let Some((count, records)) = body.split_first_chunk::<2>() else {
        return Vec::new();
    };
    let count = usize::from(u16::from_be_bytes(*count));
    let mut runs: Vec<StyleRun> = (records.chunks_exact(12).take(count))
        .map(|r| StyleRun {
            start: usize::from(u16::from_be_bytes([r[0], r[1]])),
            end: usize::from(u16::from_be_bytes([r[2], r[3]])).min(chars),
            flags: r[6] & 7,
        })
        .filter(|run| run.flags != 0 && run.start < run.end)
        .collect();
    runs.sort_by_key(|run| run.start);
    let mut kept: Vec<StyleRun> = Vec::with_capacity(runs.len());
    for run in runs {
        if kept.last().is_none_or(|last| run.start >= last.end) {
            kept.push(run);
        }
    }
    kept
}

fn utf16_text(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// A `wvtt` sample: `vttc` boxes (one per cue), or one `vtte` (no cue), and possibly
/// `vtta` (comments), ISO/IEC 14496-30 7.4.
fn wvtt(bytes: &[u8]) -> Result<Vec<SampleCue>, String> {
    let mut cues = Vec::new();
    for (kind, body) in boxes(bytes)? {
        if &kind != b"vttc" {
            continue;
        }
        let (mut id, mut settings, mut payload) = (None, None, None);
        for (kind, body) in boxes(body)? {
            match &kind {
                b"iden" => id = one_line(&box_string(body)),
                b"sttg" => settings = one_line(&box_string(body)),
                b"payl" => payload = Some(box_string(body)),
                _ => {}
            }
        }
        // A cue without a payload box has no text to show.
        if let Some(text) = payload.as_deref().and_then(cue_text) {
            cues.push(SampleCue { id, settings, text });
        }
    }
    Ok(cues)
}

/// A box inside a sample: its type and body.
type SampleBox<'a> = ([u8; 4], &'a [u8]);

/// The boxes of `bytes` as (type, body). Sizes follow ISO/IEC 14496-12 4.2 (0: to the end,
/// 1: 64-bit size follows).
fn boxes(mut bytes: &[u8]) -> Result<Vec<SampleBox<'_>>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let Some((size, rest)) = bytes.split_first_chunk::<4>() else {
            return Err("box header cut off".into());
        };
        let Some((kind, rest)) = rest.split_first_chunk::<4>() else {
            return Err("box header cut off".into());
        };
        let (header, size) = match u32::from_be_bytes(*size) {
            0 => (8, bytes.len() as u64),
            1 => {
                let large = rest.first_chunk::<8>().ok_or("64-bit box size cut off")?;
                (16, u64::from_be_bytes(*large))
            }
            n => (8, u64::from(n)),
        };
        let end = usize::try_from(size)
            .ok()
            .filter(|end| *end >= header && *end <= bytes.len())
            .ok_or_else(|| {
                format!(
                    "box '{}' of {size} bytes does not fit the {} left",
                    String::from_utf8_lossy(kind).escape_debug(),
                    bytes.len()
                )
            })?;
        out.push((*kind, &bytes[header..end]));
        bytes = &bytes[end..];
    }
    Ok(out)
}

/// A box string: UTF-8 to the end of the box, without trailing NULs.
fn box_string(body: &[u8]) -> String {
    let end = body.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    String::from_utf8_lossy(&body[..end]).into_owned()
}

/// `s` as one line (line breaks as spaces, `-->` broken up), or `None` when blank.
fn one_line(s: &str) -> Option<String> {
    let line = s.replace(['\r', '\n'], " ").replace("-->", "--");
    let line = line.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// Cue text that cannot end its cue early: line endings as `\n`, no empty line (which
/// ends a cue), no `-->` (which starts one); `None` when nothing visible is left.
fn cue_text(text: &str) -> Option<String> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<String> = normalized
        .split('\n')
        .map(|line| line.trim_end().replace("-->", "--&gt;"))
        .filter(|line| !line.trim().is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests;
