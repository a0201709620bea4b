//! WebVTT cue text (W3C WebVTT 4.2.2, the text our cues carry) read back as lines of styled
//! runs, for writers of other text formats (IMSC1). Only bold, italic and underline are
//! kept; class, voice, language, ruby and timestamp tags are dropped with their markup
//! (their text stays). Character references are decoded.

/// Bold, italic, underline bits of a run.
pub(super) const BOLD: u8 = 1;
pub(super) const ITALIC: u8 = 2;
pub(super) const UNDERLINE: u8 = 4;

/// One run of text with its style bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Run {
    pub text: String,
    pub style: u8,
}

/// The lines of cue `text`, each a list of runs (adjacent runs of one style merged).
pub(super) fn styled_lines(text: &str) -> Vec<Vec<Run>> {
    text.split('\n').map(styled_line).collect()
}

fn styled_line(line: &str) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    // The open tags, innermost last: each a style bit (0 for a dropped tag).
    let mut open: Vec<u8> = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(tag_body) = rest.strip_prefix('<') {
            let Some(end) = tag_body.find('>') else {
                push(&mut runs, &decode(tag_body), style(&open));
                break;
            };
            let tag = tag_body.get(..end).unwrap_or_default();
            rest = tag_body.get(end + 1..).unwrap_or_default();
            if let Some(name) = tag.strip_prefix('/') {
                let bit = bit_of(name.trim());
                // Close the innermost tag of that kind and every tag opened inside it.
                if let Some(pos) = open.iter().rposition(|b| *b == bit) {
                    open.truncate(pos);
                }
            } else if !tag.starts_with(|c: char| c.is_ascii_digit()) {
                // A tag name ends at `.` (classes) or whitespace (an annotation).
                let name = tag.split(['.', ' ', '\t']).next().unwrap_or_default();
                open.push(bit_of(name));
            }
            continue;
        }
        let next = rest.find('<').unwrap_or(rest.len());
        let (text, after) = rest.split_at(next);
        push(&mut runs, &decode(text), style(&open));
        rest = after;
    }
    runs
}

/// The style bit of a tag name; 0 for tags whose styling is dropped.
fn bit_of(name: &str) -> u8 {
    match name {
        "b" => BOLD,
        "i" => ITALIC,
        "u" => UNDERLINE,
        _ => 0,
    }
}

fn style(open: &[u8]) -> u8 {
    open.iter().fold(0, |acc, b| acc | b)
}

fn push(runs: &mut Vec<Run>, text: &str, style: u8) {
    if text.is_empty() {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.style == style => last.text.push_str(text),
        _ => runs.push(Run {
            text: text.to_owned(),
            style,
        }),
    }
}

/// Text with WebVTT's character references decoded (named ones WebVTT files use, and
/// numeric); anything else is kept as written.
fn decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at + 1..).unwrap_or_default();
        let reference = after.find(';').filter(|end| *end <= 10).and_then(|end| {
            let name = after.get(..end)?;
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => '\u{a0}',
                "lrm" => '\u{200e}',
                "rlm" => '\u{200f}',
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, end))
        });
        match reference {
            Some((c, end)) => {
                out.push(c);
                rest = after.get(end + 1..).unwrap_or_default();
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, style: u8) -> Run {
        Run {
            text: text.to_owned(),
            style,
        }
    }

    /// Given cue text with nested, unclosed and dropped tags and references, then the runs
    /// carry the right styles and decoded text.
    #[test]
    fn cue_text_becomes_styled_runs() {
        let lines = styled_lines(
            "<i>It's <b>bold</b></i> &amp; <c.yellow>plain</c> &lt;3\n<v Bob><u>under<00:00:01.000>line",
        );
        assert_eq!(
            lines,
            [
                vec![
                    run("It's ", ITALIC),
                    run("bold", ITALIC | BOLD),
                    run(" & plain <3", 0)
                ],
                vec![run("underline", UNDERLINE)],
            ]
        );
        assert_eq!(
            styled_lines("a & b &#x41;&#66; &bogus; <b"),
            [vec![run("a & b AB &bogus; b", 0)]]
        );
    }
}
