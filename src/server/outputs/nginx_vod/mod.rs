//! nginx-vod-module's names, answered: resolved against the title (`resolve.rs`), muxed
//! fMP4 of several tracks under the `hls` location (`muxed.rs`), and the answer of a name
//! (`answer.rs`). Their grammar is parsed with the routes (`route::nginx_vod`).

pub mod answer;
mod muxed;
mod resolve;
