//! The HTTP server: HTTP/1.x on tokio, one task per connection. A request goes down it once:
//!
//! - `listen.rs`: the accept loop (connection cap, drain), with `http1/` for a
//!   connection's HTTP/1.x (heads, answers, keep-alive, the head timeout),
//!   `send_timeout.rs` for its write timeout and `drain.rs` to close connections on
//!   shutdown;
//! - `service.rs`: a held answer, the preview page, or the request's life;
//! - `request.rs`: the request's life: route (`route/`), span, signed-URL check, methods,
//!   admission (`admission.rs`), then the output that owns the route, then the response;
//! - `outputs/`: one module per output (HLS, DASH, CMAF segments, MPEG-TS, subtitles, keys
//!   and licences, nginx-vod names, health), each returning a plain `Answer`;
//! - `respond/`: the answer sent: conditionals, `Range`, `HEAD`, and the one way a
//!   segment streams (clear, encrypted or TS).
//!
//! Below the outputs, what they share: `titles/` (the catalog of titles, documents,
//! views), `protect/` (keys, tokens, the version folder an output lives in, encrypted
//! segments), `error.rs` (every error answer, in one table), `offload.rs` (work moved off
//! the runtime workers), `held.rs` (manifest answers held for the requests like them),
//! `body.rs` (response bodies), `client.rs` (the client's address behind trusted
//! proxies), `cors.rs`, `log_context.rs`. `app.rs` holds the shared
//! state.
//! `preview/` (the page at `/`, `probe`, `describe`) sits above the request's life: it asks
//! the server as a client would. No file here imports one that imports it back.

mod admission;
pub mod app;
mod body;
pub mod client;
mod cors;
mod drain;
pub mod error;
mod held;
mod http1;
mod listen;
mod log_context;
mod offload;
mod outputs;
pub mod preview;
pub mod protect;
mod request;
mod respond;
pub mod route;
mod send_timeout;
mod service;
pub mod titles;

pub use admission::{Admission, AdmissionLimits, Admitted, RequestClass};
pub use app::App;
pub use body::ResponseBody;
pub use error::{ErrorAnswer, ServeError};
pub use listen::run;
pub use preview::describe::{describe, DetailError};
pub use preview::page::preview_enabled;
pub use preview::probe::{encode_key, probe, KeyReport, Rendition, Variant, Verdict};
pub use request::TRACE_ID_HEADER;
pub use route::error::RouteError;
pub use route::paths::{parse_route, Route};
pub use service::handle;
pub use titles::cached::CachedTitle;
pub use titles::catalog::{Catalog, TitleError};
pub use titles::documents::DocumentTitleError;
pub use titles::tiers::{IndexShelves, IndexTiers, Tier, TierHolding};
