//! The operator's look at a title from the server itself: what the server answers for a
//! key, asked of the server in process (`probe.rs`), the text description of a media file
//! (`describe.rs`, also `vodpack inspect`'s), and the preview page at `/` that shows both
//! and plays the title (`page.rs`).

pub mod describe;
pub mod page;
pub mod probe;
