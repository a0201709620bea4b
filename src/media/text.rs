//! Timed text samples to cue payloads: `tx3g` (3GPP TS 26.245, "mov_text") and `wvtt`
//! (ISO/IEC 14496-30 WebVTT in ISOBMFF).
//!
//! A text sample covers one stretch of the track's time: a `tx3g` sample holds one string
//! (an empty one for a gap), a `wvtt` sample holds every cue active over its stretch
//! (`vttc` boxes) or none (`vtte`). This module turns one sample's bytes into the cue
//! payloads it holds, as WebVTT cue text; timing, merging and segmenting belong to
//! `package::webvtt`. Styling beyond text and line breaks is dropped for `tx3g` (its
//! modifier boxes after the string are not read); a `wvtt` payload is WebVTT already and
//! keeps its markup and settings. Sample bytes are hostile: every length is checked
//! against what was read, and a malformed sample is a typed error naming the track.

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
/// mark, 3GPP TS 26.245 5.17), then modifier boxes (style, highlight, ...), ignored.
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
    let text = cue_text(&escape(&text));
    Ok(text
        .map(|text| SampleCue {
            id: None,
            settings: None,
            text,
        })
        .into_iter()
        .collect())
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

/// Escape plain text for WebVTT cue text (`&`, `<`, `>` are markup there).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
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
    fn tx3g_text_is_escaped_and_its_style_boxes_are_dropped() {
        // A `styl` box making "world" italic, as ffmpeg writes for `<i>world</i>`.
        let styl = boxed(
            b"styl",
            &[0, 1, 0, 7, 0, 12, 0, 1, 2, 18, 255, 255, 255, 255],
        );
        let sample = tx3g_sample("Hello, world & <you>!\r\nCafé".as_bytes(), &styl);
        let cues = parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap();
        assert_eq!(
            cues,
            [cue("Hello, world &amp; &lt;you&gt;!\nCafé")],
            "markup characters are escaped, CRLF becomes LF"
        );
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
