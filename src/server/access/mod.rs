//! Who gets which output, decided per request: the configured keys, signed-URL checks and
//! policy (`protector.rs`), which output a request's version folder selects, clear or
//! encrypted (`select.rs`), and what manifests say about it (`manifest.rs`). The ciphers,
//! keys and tokens themselves are `crate::crypto`'s; the boxes and IVs of encrypted
//! segments `package::encrypt`'s; encrypting a segment is its output's (`outputs::cmaf`,
//! `outputs::ts`); the key and licence answers are an output of their own (`outputs::keys`).

pub mod manifest;
pub mod protector;
pub mod select;
