//! Titles, loaded and cached: the catalog of titles by object version (`catalog.rs`), a
//! loaded title (`cached.rs`) and what its outputs keep with it (`kept.rs`, with the
//! MPEG-TS layout in `ts_layout.rs`), the index tiers under the cache (`tiers.rs`), title
//! documents (`documents.rs`), sequences of them (`sequence_load.rs`), views (`views.rs`),
//! a text track's WebVTT (`subtitle_text.rs`), and the one entry every output starts from,
//! the title of a request (`load.rs`). Below the outputs and the error table: its errors
//! are typed, answered in `server::error`.

pub mod cached;
pub mod catalog;
pub mod documents;
pub mod kept;
pub mod load;
pub mod sequence_load;
pub mod subtitle_text;
pub mod tiers;
pub mod ts_layout;
pub mod views;
