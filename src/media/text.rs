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
mod tests {
    //! Text samples to cues: `tx3g` text, styles and encodings, `wvtt` boxes, and malformed
    //! samples as errors.

    use super::*;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(body);
        out
    }

    fn tx3g_sample(text: &[u8], modifiers: &[u8]) -> Vec<u8> {
        let mut out = (text.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(text);
        out.extend_from_slice(modifiers);
        out
    }

    fn cue(text: &str) -> SampleCue {
        SampleCue {
            id: None,
            settings: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn tx3g_text_is_escaped_and_keeps_its_italics() {
        // A `styl` box making "world" italic, as ffmpeg writes for `<i>world</i>`, and a
        // highlight box, dropped.
        let styl = boxed(
            b"styl",
            &[0, 1, 0, 7, 0, 12, 0, 1, 2, 18, 255, 255, 255, 255],
        );
        let hlit = boxed(b"hlit", &[0, 0, 0, 5]);
        let modifiers = [styl, hlit].concat();
        let sample = tx3g_sample("Hello, world & <you>!\r\nCafé".as_bytes(), &modifiers);
        let cues = parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap();
        assert_eq!(
            cues,
            [cue("Hello, <i>world</i> &amp; &lt;you&gt;!\nCafé")],
            "markup characters are escaped, CRLF becomes LF"
        );
    }

    /// Style runs count characters (not bytes), may run past the text, combine flags, and
    /// are ignored when they overlap an earlier run, are reversed, or are malformed.
    #[test]
    fn tx3g_style_runs_become_tags_and_bad_ones_are_ignored() {
        let record = |start: u16, end: u16, flags: u8| -> Vec<u8> {
            let mut r = [start.to_be_bytes(), end.to_be_bytes()].concat();
            r.extend_from_slice(&[0, 1, flags, 18, 255, 255, 255, 255]);
            r
        };
        let styl = |records: &[Vec<u8>], count: u16| -> Vec<u8> {
            boxed(
                b"styl",
                &[count.to_be_bytes().to_vec(), records.concat()].concat(),
            )
        };
        let cases: [(Vec<u8>, &str); 6] = [
            (
                styl(&[record(0, 2, 1), record(3, 99, 6)], 2),
                "<b>éa</b> <i><u>bc</u></i>",
            ),
            (styl(&[record(1, 4, 1), record(2, 5, 2)], 2), "é<b>a b</b>c"),
            (styl(&[record(0, 5, 8)], 1), "éa bc"),
            (styl(&[record(0, 5, 1)], 9), "<b>éa bc</b>"),
            (styl(&[record(4, 2, 1)], 1), "éa bc"),
            (vec![0, 0, 0, 99, b's', b't', b'y', b'l'], "éa bc"),
        ];
        for (modifiers, want) in cases {
            let sample = tx3g_sample("éa bc".as_bytes(), &modifiers);
            let cues = parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap();
            assert_eq!(cues, [cue(want)], "{modifiers:?}");
        }
    }

    #[test]
    fn empty_tx3g_samples_are_gaps() {
        for sample in [&[][..], &[0, 0][..], &tx3g_sample(b" \n\n ", &[])[..]] {
            assert_eq!(
                parse_text_sample(TextFormat::Tx3g, 3, sample).unwrap(),
                [],
                "{sample:?}"
            );
        }
    }

    #[test]
    fn tx3g_utf16_with_a_byte_order_mark_is_decoded() {
        let mut text = vec![0xfe, 0xff];
        text.extend("é!".encode_utf16().flat_map(u16::to_be_bytes));
        let sample = tx3g_sample(&text, &[]);
        assert_eq!(
            parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap(),
            [cue("é!")]
        );
    }

    #[test]
    fn a_tx3g_length_past_the_sample_is_an_error_naming_the_track() {
        let err = parse_text_sample(TextFormat::Tx3g, 7, &[0, 9, b'a']).unwrap_err();
        assert!(
            matches!(&err, MediaError::InvalidTable { fourcc, track_id: 7, .. } if fourcc == "tx3g"),
            "{err}"
        );
    }

    #[test]
    fn a_blank_line_or_arrow_cannot_end_a_cue_early() {
        let sample = tx3g_sample(b"one\n\ntwo --> three", &[]);
        assert_eq!(
            parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap(),
            [cue("one\ntwo --&gt; three")]
        );
    }

    /// ISO/IEC 14496-30 7.4: `vttc` holds optional `iden`, `sttg` and a `payl`; `vtte`
    /// is a sample without cues; `vtta` is a comment.
    #[test]
    fn wvtt_samples_give_each_cue_with_its_id_and_settings() {
        let first = [
            boxed(b"iden", b"cue-1"),
            boxed(b"sttg", b"line:0 align:start"),
            boxed(b"payl", b"<b>Bold</b> text\nsecond line"),
        ]
        .concat();
        let second = [boxed(b"ctim", b"00:00:01.000"), boxed(b"payl", b"Other\0")].concat();
        let sample = [
            boxed(b"vttc", &first),
            boxed(b"vtta", b"NOTE a comment"),
            boxed(b"vttc", &second),
        ]
        .concat();
        let cues = parse_text_sample(TextFormat::Wvtt, 4, &sample).unwrap();
        assert_eq!(
            cues,
            [
                SampleCue {
                    id: Some("cue-1".into()),
                    settings: Some("line:0 align:start".into()),
                    text: "<b>Bold</b> text\nsecond line".into(),
                },
                cue("Other"),
            ]
        );
        let empty = boxed(b"vtte", &[]);
        assert_eq!(parse_text_sample(TextFormat::Wvtt, 4, &empty).unwrap(), []);
    }

    #[test]
    fn malformed_wvtt_boxes_are_errors_not_panics() {
        let too_long = [0, 0, 0, 200, b'v', b't', b't', b'c', 1, 2];
        let too_short = [0, 0, 0, 4, b'v', b't', b't', b'c'];
        let cut = [0, 0, 0];
        let huge = [
            0, 0, 0, 1, b'v', b't', b't', b'c', 255, 255, 255, 255, 255, 255, 255, 255,
        ];
        let nested = boxed(b"vttc", &[0, 0, 0, 50, b'p', b'a', b'y', b'l']);
        for sample in [&too_long[..], &too_short, &cut, &huge, &nested] {
            assert!(
                matches!(
                    parse_text_sample(TextFormat::Wvtt, 4, sample),
                    Err(MediaError::InvalidTable { track_id: 4, .. })
                ),
                "{sample:?}"
            );
        }
    }
}
