//! The outputs, one module each, as mini-redis has a module per command, dispatched from one
//! `match` in `request.rs`. A title's outputs have one shape, `async fn(&TitleRequest) ->
//! Result<Answer, ServeError>`: HLS (`hls.rs`), DASH (`dash.rs`), CMAF segments clear or
//! encrypted (`cmaf.rs`), WebVTT (`subtitles.rs`), MPEG-TS (`ts.rs`) and a sequence's own
//! resources (`sequence.rs`). The others take what their route carries: keys and licences
//! (`keys.rs`), thumbnails and storyboards (`thumb/`), nginx-vod names (`nginx_vod/`), the
//! service routes (`health.rs`). No output imports another; what two share sits below
//! them (`titles/`, `title_request.rs`, `respond/`, the error table).

pub mod cmaf;
pub mod dash;
pub mod health;
pub mod hls;
pub mod keys;
pub mod nginx_vod;
pub mod sequence;
pub mod subtitles;
pub mod thumb;
pub mod ts;
