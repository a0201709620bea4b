//! The HTTP server: HTTP/1.x on tokio, one task per connection. A request goes down once:
//! `service.rs` (the front: `run`, held answers, the preview page) over `listen.rs` (the
//! accept loop: `http1/`, `send_timeout.rs`, `drain.rs`); `request.rs` (route `route/`,
//! span, signed URL, method, admission `admission.rs`, then the one dispatch to the
//! output); `outputs/` (one module per output, each returning a plain `Answer`);
//! `respond/` (conditionals, `Range`, `HEAD`, the one way a segment streams). Below the
//! outputs, what they share: `title_request.rs` (a title's request, loaded), `titles/`
//! (titles and what their outputs keep), `access/` (keys, tokens, which output a request
//! gets), `error.rs` (the one error table), `held.rs`, `offload.rs`, `body.rs`,
//! `client.rs`, `cors.rs`, `log_context.rs`; `app.rs` holds the shared state.

pub mod access;
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
mod request;
mod respond;
pub mod route;
mod send_timeout;
mod service;
mod title_request;
pub mod titles;

pub use admission::{Admission, AdmissionLimits, Admitted, RequestClass};
pub use app::App;
pub use body::ResponseBody;
pub use error::{ErrorAnswer, ServeError};
pub use preview::describe::{describe, DetailError};
pub use preview::page::preview_enabled;
pub use preview::probe::{encode_key, probe, KeyReport, Rendition, Variant, Verdict};
pub use request::TRACE_ID_HEADER;
pub use route::path_error::RouteError;
pub use route::paths::{parse_route, Route};
pub use service::{handle, run};
pub use titles::cached::CachedTitle;
pub use titles::catalog::{Catalog, TitleError};
pub use titles::documents::DocumentTitleError;
pub use titles::tiers::{IndexShelves, IndexTiers, Tier, TierHolding};
