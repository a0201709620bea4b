//! TTML sidecar files (W3C TTML1/TTML2, IMSC1, EBU-TT-D, SMPTE-TT and DFXP, which are
//! profiles of it) read as cues: each `p` of the body a cue, its text as WebVTT cue text.
//!
//! Timing follows TTML's parallel time containers: `begin`, `end` and `dur` on `body`,
//! `div` and `p`, each relative to its parent's begin, an end bounded by the parent's, in
//! clock time (`HH:MM:SS.fff`, `HH:MM:SS:FF.ss`) or offset time (`h`, `m`, `s`, `ms`, `f`,
//! `t`) with `ttp:frameRate`, `ttp:frameRateMultiplier`, `ttp:subFrameRate` and
//! `ttp:tickRate` (TTML2 10.3). `ttp:timeBase` is read as `media` whatever it says, and
//! `seq` containers as `par`; timing on `span` is ignored (its text shows for the whole
//! `p`). Of styling only bold, italic and underline are kept (`tts:fontWeight`,
//! `tts:fontStyle`, `tts:textDecoration`, inline or by `style` reference), with `br` as
//! line breaks. Written by hand over quick-xml (no DOM): the file is hostile, so depth,
//! styles and numbers are bounded and every failure is a typed error, never a panic.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::SidecarCue;
use crate::media::{MediaError, SampleCue};

/// Deepest element nesting read; a deeper file is refused.
const MAX_DEPTH: usize = 64;
/// Most `style` elements kept.
const MAX_STYLES: usize = 1024;
/// Most digits in one number of a time expression.
const MAX_DIGITS: usize = 18;
const NS_PER_SEC: i128 = 1_000_000_000;

const BOLD: u8 = 1;
const ITALIC: u8 = 2;
const UNDERLINE: u8 = 4;

/// The cues of a TTML document's `bytes`, in document order, on the document's timeline.
///
/// # Errors
/// [`MediaError::Malformed`] when the bytes are not UTF-8 XML, nest deeper than 64
/// elements, hold a time expression that does not parse or a parameter out of range, have
/// no `tt` root, or hold no cue.
pub fn parse_ttml(bytes: &[u8]) -> Result<Vec<SidecarCue>, MediaError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| malformed("TTML file is not UTF-8"))?;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut doc = Document::default();
    loop {
        let event = reader.read_event().map_err(|e| {
            malformed(&format!(
                "TTML file is not XML: {}",
                one_line(&e.to_string())
            ))
        })?;
        match event {
            Event::Start(e) => {
                doc.start(&e)?;
                if doc.stack.len() > MAX_DEPTH {
                    return Err(malformed("TTML file nests elements too deeply"));
                }
            }
            Event::Empty(e) => {
                doc.start(&e)?;
                doc.end();
            }
            Event::End(_) => doc.end(),
            Event::Text(t) => {
                let text = t
                    .decode()
                    .map_err(|_| malformed("TTML text is not UTF-8"))?;
                doc.text(&text);
            }
            Event::CData(t) => doc.text(&String::from_utf8_lossy(&t)),
            Event::GeneralRef(r) => {
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    _ => match &*r {
                        b"amp" => Some('&'),
                        b"lt" => Some('<'),
                        b"gt" => Some('>'),
                        b"quot" => Some('"'),
                        b"apos" => Some('\''),
                        // Entities a DTD would define are not expanded.
                        _ => None,
                    },
                };
                if let Some(c) = c {
                    doc.text(c.encode_utf8(&mut [0; 4]));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !doc.saw_root {
        return Err(malformed("not a TTML document (no tt element)"));
    }
    if doc.cues.is_empty() {
        return Err(malformed("subtitle file holds no cue"));
    }
    Ok(doc.cues)
}

/// `text` as one short line for an error message: control characters (the file's own line
/// breaks, quoted by the XML reader) as spaces, at most 160 characters.
fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(160)
        .collect();
    line
}

fn malformed(reason: &str) -> MediaError {
    MediaError::Malformed {
        reason: reason.to_owned(),
    }
}

/// What the parser knows as it walks the document.
#[derive(Default)]
struct Document {
    /// How frames and ticks count, from the `tt` element.
    rates: Rates,
    saw_root: bool,
    /// Style bits of each `style` by `xml:id`.
    styles: HashMap<String, u8>,
    /// The open elements, outermost first.
    stack: Vec<Open>,
    /// The `p` being read: its times and lines of (text, style) runs.
    cue: Option<CueText>,
    /// Where the `p` being read sits in `stack` (its index).
    p_at: Option<usize>,
    cues: Vec<SidecarCue>,
}

/// An open element: what its children inherit.
#[derive(Clone, Copy)]
struct Open {
    kind: Kind,
    /// Absolute begin, ns.
    begin_ns: i128,
    /// Absolute end, ns; `None` while unresolved (indefinite).
    end_ns: Option<i128>,
    style: u8,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `body`, `div`, `p`, `span`: timed content.
    Content,
    /// `br`.
    Break,
    /// `metadata`, `head`, `styling` and anything else, whose text is not shown.
    Other,
}

struct CueText {
    begin_ns: i128,
    end_ns: Option<i128>,
    lines: Vec<Vec<(String, u8)>>,
}

impl Document {
    fn start(&mut self, e: &BytesStart<'_>) -> Result<(), MediaError> {
        let name = e.local_name();
        let name = name.as_ref();
        let parent = self.stack.last().copied().unwrap_or(Open {
            kind: Kind::Content,
            begin_ns: 0,
            end_ns: None,
            style: 0,
        });
        let hidden = self.stack.iter().any(|o| o.kind == Kind::Other);
        let attrs = Attrs::of(e);
        let kind = match name {
            b"tt" => {
                self.saw_root = true;
                self.rates = Rates::of(&attrs)?;
                Kind::Content
            }
            b"style" if self.cue.is_none() => {
                if let Some(id) = attrs.get(b"id") {
                    if self.styles.len() >= MAX_STYLES {
                        return Err(malformed("TTML file has too many styles"));
                    }
                    let bits = self.style_of(&attrs, 0);
                    self.styles.insert(id.to_owned(), bits);
                }
                Kind::Other
            }
            b"body" | b"div" | b"p" | b"span" if !hidden => Kind::Content,
            b"br" if !hidden => Kind::Break,
            _ => Kind::Other,
        };
        let mut open = Open { kind, ..parent };
        if kind == Kind::Content && name != b"tt" {
            let time = |key: &[u8]| -> Result<Option<i128>, MediaError> {
                attrs.get(key).map(|v| self.rates.time_ns(v)).transpose()
            };
            let (begin, end, dur) = (time(b"begin")?, time(b"end")?, time(b"dur")?);
            open.begin_ns = parent.begin_ns.saturating_add(begin.unwrap_or(0));
            let ends = [
                end.map(|e| parent.begin_ns.saturating_add(e)),
                dur.map(|d| open.begin_ns.saturating_add(d)),
                parent.end_ns,
            ];
            open.end_ns = ends.into_iter().flatten().min();
            open.style = self.style_of(&attrs, parent.style);
        }
        // A `p` inside a `p` (not TTML) reads as a `span`.
        if name == b"p" && kind == Kind::Content && self.cue.is_none() {
            self.p_at = Some(self.stack.len());
            self.cue = Some(CueText {
                begin_ns: open.begin_ns,
                end_ns: open.end_ns,
                lines: vec![Vec::new()],
            });
        }
        if kind == Kind::Break {
            if let Some(cue) = &mut self.cue {
                cue.lines.push(Vec::new());
            }
        }
        self.stack.push(open);
        Ok(())
    }

    /// The style bits of an element with `attrs` inside one with `inherited`: its
    /// referenced styles, then its own `tts:` attributes.
    fn style_of(&self, attrs: &Attrs<'_>, inherited: u8) -> u8 {
        let mut bits = inherited;
        for id in attrs
            .get(b"style")
            .unwrap_or_default()
            .split_ascii_whitespace()
        {
            bits |= self.styles.get(id).copied().unwrap_or(0);
        }
        let mut set = |bit: u8, on: Option<bool>| match on {
            Some(true) => bits |= bit,
            Some(false) => bits &= !bit,
            None => {}
        };
        set(BOLD, attrs.get(b"fontWeight").map(|v| v == "bold"));
        set(
            ITALIC,
            attrs
                .get(b"fontStyle")
                .map(|v| v == "italic" || v == "oblique"),
        );
        set(
            UNDERLINE,
            (attrs.get(b"textDecoration"))
                .map(|v| v.split_ascii_whitespace().any(|w| w == "underline")),
        );
        bits
    }

    fn end(&mut self) {
        self.stack.pop();
        if self.p_at.is_some_and(|depth| self.stack.len() <= depth) {
            self.p_at = None;
            if let Some(cue) = self.cue.take() {
                self.finish(cue);
            }
        }
    }

    fn text(&mut self, text: &str) {
        let Some(open) = self.stack.last() else {
            return;
        };
        if open.kind != Kind::Content {
            return;
        }
        let style = open.style;
        if let Some(line) = self.cue.as_mut().and_then(|c| c.lines.last_mut()) {
            match line.last_mut() {
                Some((run, s)) if *s == style => run.push_str(text),
                _ => line.push((text.to_owned(), style)),
            }
        }
    }

    /// The cue of a finished `p`, if it has a resolved, positive time and visible text.
    fn finish(&mut self, cue: CueText) {
        let Some(end_ns) = cue.end_ns.filter(|e| *e > cue.begin_ns) else {
            return;
        };
        let lines: Vec<String> = (cue.lines.iter())
            .map(|runs| webvtt_line(runs))
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            return;
        }
        self.cues.push(SidecarCue {
            start_ns: cue.begin_ns,
            end_ns,
            payload: SampleCue {
                id: None,
                settings: None,
                text: lines.join("\n"),
            },
        });
    }
}

/// One line of runs as WebVTT cue text: whitespace collapsed (TTML's default
/// `xml:space`), trimmed at the line's ends, markup characters escaped, styles as tags.
fn webvtt_line(runs: &[(String, u8)]) -> String {
    let mut out = String::new();
    let mut last_space = true;
    for (text, style) in runs {
        let mut piece = String::with_capacity(text.len());
        for c in text.chars() {
            if c.is_whitespace() {
                if !last_space {
                    piece.push(' ');
                }
                last_space = true;
                continue;
            }
            last_space = false;
            match c {
                '&' => piece.push_str("&amp;"),
                '<' => piece.push_str("&lt;"),
                '>' => piece.push_str("&gt;"),
                c => piece.push(c),
            }
        }
        if piece.is_empty() {
            continue;
        }
        let tags: Vec<&str> = [(BOLD, "b"), (ITALIC, "i"), (UNDERLINE, "u")]
            .iter()
            .filter(|(bit, _)| style & bit != 0)
            .map(|(_, tag)| *tag)
            .collect();
        // A space at the run's edge goes outside its tags.
        let lead = piece.starts_with(' ');
        let trail = piece.len() > 1 && piece.ends_with(' ');
        let core = piece.trim_matches(' ');
        if lead {
            out.push(' ');
        }
        if !core.is_empty() {
            tags.iter().for_each(|t| {
                out.push('<');
                out.push_str(t);
                out.push('>');
            });
            out.push_str(core);
            tags.iter().rev().for_each(|t| {
                out.push_str("</");
                out.push_str(t);
                out.push('>');
            });
        }
        if trail {
            out.push(' ');
        }
    }
    // No empty line or arrow may end a WebVTT cue early.
    out.trim().replace("-->", "--&gt;")
}

/// The attributes of an element by local name (prefixes dropped: `tts:fontStyle` is
/// `fontStyle`, `xml:id` is `id`), values unescaped; malformed attributes are skipped.
struct Attrs<'a>(Vec<(Vec<u8>, std::borrow::Cow<'a, str>)>);

impl<'a> Attrs<'a> {
    fn of(e: &'a BytesStart<'a>) -> Self {
        let attrs = (e.attributes().flatten())
            .filter_map(|a| {
                let key = a.key.local_name().as_ref().to_vec();
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .ok()?;
                Some((key, value))
            })
            .collect();
        Self(attrs)
    }

    fn get(&self, key: &[u8]) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.as_slice() == key)
            .map(|(_, v)| v.trim())
    }
}

/// How frames, sub-frames and ticks count (TTML2 7.2: `ttp:frameRate` 30,
/// `ttp:frameRateMultiplier` 1:1, `ttp:subFrameRate` 1, `ttp:tickRate` the frame rate
/// times the sub-frame rate when a frame rate is given, else 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rates {
    frame_rate: i128,
    multiplier: (i128, i128),
    sub_frame_rate: i128,
    tick_rate: i128,
}

impl Default for Rates {
    fn default() -> Self {
        Self {
            frame_rate: 30,
            multiplier: (1, 1),
            sub_frame_rate: 1,
            tick_rate: 1,
        }
    }
}

impl Rates {
    fn of(attrs: &Attrs<'_>) -> Result<Self, MediaError> {
        let positive = |key: &[u8], name: &str| -> Result<Option<i128>, MediaError> {
            let Some(value) = attrs.get(key) else {
                return Ok(None);
            };
            let n = digits(value).filter(|n| *n > 0 && *n <= 1_000_000_000);
            n.map(Some).ok_or_else(|| {
                malformed(&format!("TTML {name} {value:?} is not a positive integer"))
            })
        };
        let frame_rate = positive(b"frameRate", "ttp:frameRate")?;
        let sub_frame_rate = positive(b"subFrameRate", "ttp:subFrameRate")?.unwrap_or(1);
        let tick_rate = positive(b"tickRate", "ttp:tickRate")?;
        let multiplier = match attrs.get(b"frameRateMultiplier") {
            None => (1, 1),
            Some(value) => {
                let mut parts = value.split_ascii_whitespace().map(digits);
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(Some(n)), Some(Some(d)), None)
                        if n > 0 && d > 0 && n <= 1_000_000_000 && d <= 1_000_000_000 =>
                    {
                        (n, d)
                    }
                    _ => {
                        return Err(malformed(&format!(
                            "TTML ttp:frameRateMultiplier {value:?} is not two positive integers"
                        )))
                    }
                }
            }
        };
        Ok(Self {
            frame_rate: frame_rate.unwrap_or(30),
            multiplier,
            sub_frame_rate,
            tick_rate: tick_rate.unwrap_or(match frame_rate {
                Some(rate) => rate * sub_frame_rate,
                None => 1,
            }),
        })
    }

    /// A time expression in nanoseconds (TTML2 10.3.1), rounded down.
    fn time_ns(&self, expr: &str) -> Result<i128, MediaError> {
        self.parse_time(expr)
            .ok_or_else(|| malformed(&format!("TTML time expression {expr:?} does not parse")))
    }

    fn parse_time(&self, expr: &str) -> Option<i128> {
        match expr.contains(':') {
            true => self.clock_time(expr),
            false => self.offset_time(expr),
        }
    }

    /// How long one frame lasts, as ns = numerator / denominator: multiplier den /
    /// (frame rate × multiplier num) seconds.
    fn frame(&self) -> (i128, i128) {
        let (num, den) = self.multiplier;
        (NS_PER_SEC * den, self.frame_rate * num)
    }

    /// `HH:MM:SS[.fraction]` or `HH:MM:SS:FF[.sub-frames]` (hours two digits or more,
    /// minutes and seconds two, seconds up to 60 for a leap second as TTML allows).
    fn clock_time(&self, expr: &str) -> Option<i128> {
        let parts: Vec<&str> = expr.split(':').collect();
        let (h, m, s, frames) = match parts.as_slice() {
            [h, m, s] => (*h, *m, *s, None),
            [h, m, s, f] => (*h, *m, *s, Some(*f)),
            _ => return None,
        };
        let (whole_s, _) = s.split_once('.').unwrap_or((s, ""));
        if h.len() < 2 || m.len() != 2 || whole_s.len() != 2 {
            return None;
        }
        let (h, m) = (digits(h)?, digits(m)?);
        if m > 59 || digits(whole_s)? > 60 {
            return None;
        }
        let hm_ns = (h * 3600 + m * 60).checked_mul(NS_PER_SEC)?;
        let Some(f) = frames else {
            return hm_ns.checked_add(decimal_ns(s, (NS_PER_SEC, 1))?);
        };
        // Seconds are whole when frames follow.
        let s_ns = digits(s)?.checked_mul(NS_PER_SEC)?;
        let (whole_f, sub) = f.split_once('.').unwrap_or((f, ""));
        let frame = self.frame();
        let mut ns = hm_ns.checked_add(s_ns)?;
        ns = ns.checked_add(digits(whole_f)?.checked_mul(frame.0)? / frame.1)?;
        if !sub.is_empty() {
            let sub_ns =
                digits(sub)?.checked_mul(frame.0)? / frame.1.checked_mul(self.sub_frame_rate)?;
            ns = ns.checked_add(sub_ns)?;
        }
        Some(ns)
    }

    /// `count[.fraction]metric`, the metric one of `h`, `m`, `s`, `ms`, `f`, `t`.
    fn offset_time(&self, expr: &str) -> Option<i128> {
        let split = expr.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (count, metric) = expr.split_at(split);
        let unit = match metric {
            "h" => (3600 * NS_PER_SEC, 1),
            "m" => (60 * NS_PER_SEC, 1),
            "s" => (NS_PER_SEC, 1),
            "ms" => (1_000_000, 1),
            "f" => self.frame(),
            "t" => (NS_PER_SEC, self.tick_rate),
            _ => return None,
        };
        decimal_ns(count, unit)
    }
}

/// `digits[.digits]` times `unit` (ns per unit as numerator / denominator), rounded down;
/// `None` when it is not such a number, has too many digits, or overflows.
fn decimal_ns(count: &str, unit: (i128, i128)) -> Option<i128> {
    let (whole, fraction) = count.split_once('.').unwrap_or((count, ""));
    if count.ends_with('.') || fraction.len() > MAX_DIGITS {
        return None;
    }
    let whole = digits(whole)?;
    let scale = 10i128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let fraction = match fraction {
        "" => 0,
        f => digits(f)?,
    };
    let mantissa = whole.checked_mul(scale)?.checked_add(fraction)?;
    let ns = mantissa.checked_mul(unit.0)? / scale.checked_mul(unit.1)?;
    Some(ns)
}

/// A run of ASCII digits (1 to 18 of them) as a number.
fn digits(s: &str) -> Option<i128> {
    let ok = !s.is_empty() && s.len() <= MAX_DIGITS && s.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| s.parse().ok()).flatten()
}

#[cfg(test)]
mod tests;
