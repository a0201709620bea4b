//! The operator's window: the preview page at `/` and what it stands on.
//!
//! `page.rs` answers `/` (guarded by the `preview` setting and, with signed URLs, a token)
//! and writes the page's frame; `catalogue.rs` a page of titles with posters and facts;
//! `title.rs` a title's players, timeline, chart and tables; `chart.rs` the SVG drawings;
//! `facts.rs` what the page reads from manifests; `assets.rs` the players' and page's
//! static files, built in. Below them, what `inspect` and `check` share: what the server
//! answers for a key, asked of it in process (`probe.rs`), and the text description of a
//! media file (`describe.rs`).

pub mod assets;
pub mod catalogue;
pub mod chart;
pub mod describe;
pub mod facts;
pub mod html;
pub mod page;
pub mod probe;
pub mod title;
