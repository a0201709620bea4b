//! IMSC1 Text Profile TTML in ISO BMFF (W3C TTML IMSC 1.0.1; ISO/IEC 14496-30 clause 6):
//! the `stpp` `XMLSubtitleSampleEntry` (namespace `http://www.w3.org/ns/ttml`), and one
//! TTML document per segment as its single sample (DASH-IF IOP 6.4.4).
//!
//! Documents are written to be EBU-TT-D compatible too (EBU Tech 3380): `ttp:timeBase`
//! `media`, clock times on the track's media timeline (the `tfdt`'s, 14496-30 6.4), one
//! region at the bottom, and styling only by reference (`style` IDREFS on `p` and `span`,
//! no nested spans): a run that is bold and italic is one `span style="b i"`. An empty
//! segment is a document with an empty `body`.

use std::fmt::Write as _;

use super::markup::{styled_lines, BOLD, ITALIC, UNDERLINE};
use super::{write_fragment, write_init, TextSegmentSpan, TextTrak, TimedCue};
use crate::package::fmp4::BoxWriter;

/// The TTML namespace, the `stpp` entry's `namespace` (14496-30 12.2.3).
const TTML_NAMESPACE: &str = "http://www.w3.org/ns/ttml";

/// The `stpp` init segment: handler `subt`, `sthd`, and an `XMLSubtitleSampleEntry` with
/// the TTML namespace, no schema location and no auxiliary MIME types.
pub(super) fn init_segment(track_id: u32, timescale: u32, language: Option<&str>) -> Vec<u8> {
    let mut entry = BoxWriter::with_capacity(64);
    entry.begin(b"stpp");
    entry.zeros(6); // SampleEntry reserved
    entry.u16(1); // data_reference_index
    entry.bytes(TTML_NAMESPACE.as_bytes());
    entry.bytes(b"\0"); // namespace
    entry.bytes(b"\0"); // schema_location
    entry.bytes(b"\0"); // auxiliary_mime_types
    entry.end();
    let entry = entry.finish();
    let trak = TextTrak {
        handler: (b"subt", b"SubtitleHandler\0"),
        subtitle_header: true,
        sample_entry: &entry,
    };
    write_init(track_id, timescale, language, &trak)
}

/// The `moof` + `mdat` of `segment`: one sample, the TTML document of its cues, lasting
/// the whole segment.
pub(super) fn media_segment(
    track_id: u32,
    language: Option<&str>,
    segment: &TextSegmentSpan<'_>,
) -> Vec<u8> {
    let document = ttml_document(&segment.timed_cues(), segment.timescale, language);
    let duration = u32::try_from(segment.duration_ticks).unwrap_or(u32::MAX);
    let samples = [(duration, document.into_bytes())];
    write_fragment(track_id, segment.number, segment.start_ticks, &samples)
}

/// The TTML document of `cues` (times in `timescale` ticks on the media timeline).
pub(super) fn ttml_document(
    cues: &[TimedCue<'_>],
    timescale: u32,
    language: Option<&str>,
) -> String {
    let mut out = String::with_capacity(1024 + 160 * cues.len());
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<tt xmlns=\"{TTML_NAMESPACE}\" xmlns:ttp=\"http://www.w3.org/ns/ttml#parameter\" \
         xmlns:tts=\"http://www.w3.org/ns/ttml#styling\" \
         xmlns:ttm=\"http://www.w3.org/ns/ttml#metadata\" \
         xmlns:ebuttm=\"urn:ebu:tt:metadata\" ttp:timeBase=\"media\" \
         ttp:cellResolution=\"32 15\" xml:lang=\"{}\">",
        escape(language.unwrap_or(""))
    );
    out.push_str(concat!(
        "<head>\n",
        "<metadata><ebuttm:documentMetadata>",
        "<ebuttm:conformsToStandard>http://www.w3.org/ns/ttml/profile/imsc1/text</ebuttm:conformsToStandard>",
        "<ebuttm:conformsToStandard>urn:ebu:tt:distribution:2018-04</ebuttm:conformsToStandard>",
        "</ebuttm:documentMetadata></metadata>\n",
        "<styling>\n",
        "<style xml:id=\"p\" tts:color=\"#FFFFFF\" tts:backgroundColor=\"#000000C2\" ",
        "tts:fontFamily=\"proportionalSansSerif\" tts:fontSize=\"100%\" ",
        "tts:lineHeight=\"normal\" tts:textAlign=\"center\"/>\n",
        "<style xml:id=\"b\" tts:fontWeight=\"bold\"/>\n",
        "<style xml:id=\"i\" tts:fontStyle=\"italic\"/>\n",
        "<style xml:id=\"u\" tts:textDecoration=\"underline\"/>\n",
        "</styling>\n",
        "<layout>\n",
        "<region xml:id=\"bottom\" tts:origin=\"10% 10%\" tts:extent=\"80% 80%\" ",
        "tts:displayAlign=\"after\"/>\n",
        "</layout>\n",
        "</head>\n",
    ));
    if cues.is_empty() {
        out.push_str("<body/>\n</tt>\n");
        return out;
    }
    out.push_str("<body>\n<div region=\"bottom\">\n");
    for cue in cues {
        let _ = write!(
            out,
            "<p begin=\"{}\" end=\"{}\" style=\"p\">",
            clock(cue.start, timescale),
            clock(cue.end, timescale)
        );
        for (n, line) in styled_lines(&cue.payload.text).iter().enumerate() {
            if n > 0 {
                out.push_str("<br/>");
            }
            for run in line {
                let styles: Vec<&str> = [(BOLD, "b"), (ITALIC, "i"), (UNDERLINE, "u")]
                    .iter()
                    .filter(|(bit, _)| run.style & bit != 0)
                    .map(|(_, id)| *id)
                    .collect();
                match styles.is_empty() {
                    true => out.push_str("<span>"),
                    false => {
                        let _ = write!(out, "<span style=\"{}\">", styles.join(" "));
                    }
                }
                out.push_str(&escape(&run.text));
                out.push_str("</span>");
            }
        }
        out.push_str("</p>\n");
    }
    out.push_str("</div>\n</body>\n</tt>\n");
    out
}

/// A TTML clock time `HH:MM:SS.mmm` of `ticks` (rounded to the millisecond; hours grow
/// past two digits when needed).
fn clock(ticks: u64, timescale: u32) -> String {
    let timescale = u128::from(timescale.max(1));
    let ms = (u128::from(ticks) * 1000 + timescale / 2) / timescale;
    let (h, m, s, ms) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h:02}:{m:02}:{s:02}.{ms:03}")
}

/// `text` escaped for XML character data and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Characters XML 1.0 does not allow (2.2) are dropped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}
