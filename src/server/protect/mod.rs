//! Protection in the server, in one place: the configured keys, signed-URL checks and
//! policy (`protector.rs`), which output a request's version folder selects (`select.rs`),
//! encrypted init and media segments and the encrypting stream (`segment.rs`), encrypted
//! MPEG-TS segments (`ts.rs`), and what manifests say about it (`manifest.rs`). The ciphers, keys and tokens themselves are
//! `crate::crypto`'s; the boxes and IVs of encrypted output `package::protect`'s; the key
//! and licence answers are an output of their own (`outputs::keys`).

pub mod manifest;
pub mod protector;
pub mod segment;
pub mod select;
pub mod ts;
