//! Titles, loaded and cached: the catalog of titles by object version (`catalog.rs`), what
//! is kept with each (`cached.rs`), the index tiers under the cache (`tiers.rs`), title documents (`documents.rs`), sequences of them (`sequences.rs`), views (`views.rs`),
//! and the one entry every output starts from, the title of a request (`load.rs`). Below
//! the outputs and the error table: its errors are typed, answered in `server::error`.

pub mod cached;
pub mod catalog;
pub mod documents;
pub mod load;
pub mod sequences;
pub mod tiers;
pub mod views;
