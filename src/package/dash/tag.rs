//! XML start tags of the MPD, indented, with their attribute values escaped (the one
//! place that escapes) and the references' query.

use std::fmt::{Display, Write as _};

use crate::package::signalling::ManifestOptions;

/// An XML start tag under construction, indented; attribute values are escaped here only.
pub(super) struct Tag(pub(super) String);

impl Tag {
    pub(super) fn new(indent: usize, name: &str) -> Self {
        Self(format!("{:indent$}<{name}", ""))
    }

    pub(super) fn attr(mut self, name: &str, value: impl Display) -> Self {
        let _ = write!(self.0, " {name}=\"{}\"", escape(&value.to_string()));
        self
    }

    /// A reference attribute: `value` escaped, then the query of the options.
    pub(super) fn uri(
        mut self,
        name: &str,
        value: impl Display,
        options: &ManifestOptions,
    ) -> Self {
        let value = escape(&value.to_string());
        let _ = write!(self.0, " {name}=\"{}\"", options.with_xml_query(&value));
        self
    }

    pub(super) fn opt(self, name: &str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.attr(name, value),
            None => self,
        }
    }

    /// End the start tag; the caller writes the content and the end tag.
    pub(super) fn open(self, out: &mut String) {
        out.push_str(&self.0);
        out.push_str(">\n");
    }

    /// End the tag as an empty element.
    pub(super) fn empty(self, out: &mut String) {
        out.push_str(&self.0);
        out.push_str("/>\n");
    }
}

/// Escape text for an XML attribute value in double quotes.
pub(super) fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
