//! The MPEG-TS output: `master-ts.m3u8`, TS media, I-frame and subtitle playlists, and TS
//! segments (`output.rs`), and what SAMPLE-AES changes (`sample_aes.rs`).

pub mod output;
mod sample_aes;
