//! `MediaLimits`: the bounds checked before anything is allocated from a file's word. The
//! type is plain data defined with the settings (`config::MediaLimits`), which carry four
//! of its fields; `media::MediaLimits` stays the path the parser and its callers use.

pub use crate::config::MediaLimits;
