//! The outputs, one module each, as mini-redis has a module per command: what each
//! resource of a title answers (`vod.rs` picks the output: `hls.rs`, `dash.rs`, `cmaf.rs`,
//! `subtitles.rs`, `ts.rs`; a sequence's, `sequence.rs`), nginx-vod's names (`nginx_vod/`), keys and licences
//! (`keys.rs`), thumbnails and storyboards (`thumb/`), and the service routes
//! (`health.rs`). Each takes what it needs from the layers below (titles, protection, the
//! error table) and returns a plain `Answer` for `respond` to send; `context.rs` is what
//! every output of a title is handed.

pub mod cmaf;
pub mod context;
pub mod dash;
pub mod health;
pub mod hls;
pub mod keys;
pub mod nginx_vod;
pub mod sequence;
pub mod subtitles;
pub mod thumb;
pub mod ts;
pub mod vod;
