//! Thumbnail names: `thumb-MS[-wW][-hH][-fN].jpg`, as nginx-vod-module spells them (its
//! `ngx_http_vod_thumb.c`: the time, then width and height, each optional and in that
//! order, then its track tokens, of which a thumbnail honours the file `fN`). Made and
//! parsed here only, with a round-trip test. Numbers are plain decimals without leading
//! zeros, so every thumbnail has one name; nginx-vod's relative times (`thumb--MS`,
//! `thumb-+MS`) are not offered yet.

use std::fmt;

/// One thumbnail request, as its file name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThumbName {
    /// Presentation time of the frame, in milliseconds from the title's start.
    pub time_ms: u64,
    /// Width of the image in pixels; `None`: from the height and the display aspect, or
    /// the picture's own width when neither is given.
    pub width: Option<u32>,
    /// Height of the image in pixels; as `width`.
    pub height: Option<u32>,
    /// The file (1-based) of a title document or urlset whose first video rendition is
    /// pictured; `None`: the title's first video rendition.
    pub file: Option<u32>,
}

/// Prefix and extension of every thumbnail name.
const PREFIX: &str = "thumb-";
const EXTENSION: &str = ".jpg";

impl ThumbName {
    /// Parse a file name; `None` when it is no thumbnail name.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_prefix(PREFIX)?.strip_suffix(EXTENSION)?;
        let mut parts = rest.split('-');
        let time_ms = parse_number(parts.next()?)?;
        let mut thumb = ThumbName {
            time_ms,
            width: None,
            height: None,
            file: None,
        };
        // Each token at most once, in nginx-vod's order: w, h, f.
        let mut order = 0;
        for part in parts {
            let (letter, digits) = part.split_at_checked(1)?;
            let value = u32::try_from(parse_number(digits)?).ok()?;
            let (rank, slot) = match letter {
                "w" => (1, &mut thumb.width),
                "h" => (2, &mut thumb.height),
                "f" => (3, &mut thumb.file),
                _ => return None,
            };
            if rank <= order || value == 0 {
                return None;
            }
            order = rank;
            *slot = Some(value);
        }
        Some(thumb)
    }
}

impl fmt::Display for ThumbName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.time_ms)?;
        if let Some(w) = self.width {
            write!(f, "-w{w}")?;
        }
        if let Some(h) = self.height {
            write!(f, "-h{h}")?;
        }
        if let Some(n) = self.file {
            write!(f, "-f{n}")?;
        }
        f.write_str(EXTENSION)
    }
}

/// A plain decimal: digits only, no sign, no leading zero (but `0` itself).
fn parse_number(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_themselves() {
        for name in [
            "thumb-0.jpg",
            "thumb-1000.jpg",
            "thumb-1000-w150.jpg",
            "thumb-1000-h90.jpg",
            "thumb-1000-w150-h90.jpg",
            "thumb-2500-w320-f2.jpg",
            "thumb-2500-f2.jpg",
        ] {
            let thumb = ThumbName::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(thumb.to_string(), name);
        }
        assert_eq!(
            ThumbName::parse("thumb-1000-w150-h90.jpg"),
            Some(ThumbName {
                time_ms: 1000,
                width: Some(150),
                height: Some(90),
                file: None
            })
        );
    }

    #[test]
    fn other_spellings_are_no_thumbnail() {
        for name in [
            "thumb-.jpg",
            "thumb-01.jpg",
            "thumb--5.jpg",
            "thumb-+5.jpg",
            "thumb-5-h90-w150.jpg",
            "thumb-5-w0.jpg",
            "thumb-5-w150-w150.jpg",
            "thumb-5-x1.jpg",
            "thumb-5-w.jpg",
            "thumb-5-w99999999999.jpg",
            "thumb-5.png",
            "thumb-5-.jpg",
            "thumbs-5.jpg",
        ] {
            assert_eq!(ThumbName::parse(name), None, "{name}");
        }
    }
}
