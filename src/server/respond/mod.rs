//! From an output's answer to the bytes on the wire: the answer itself (`answer.rs`: plain
//! data), HTTP semantics applied once for every output (`reply.rs`: conditionals in
//! `conditional.rs`, `range.rs`, `HEAD`), the one way a segment body starts and streams
//! (`stream.rs`, with MPEG-TS's chunks in `ts_stream.rs` and the encrypting stream of
//! CMAF segments in `cipher_stream.rs`).

pub mod answer;
pub mod cipher_stream;
pub mod conditional;
pub mod range;
pub mod reply;
pub mod stream;
pub mod ts_stream;
