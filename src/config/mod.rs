//! Settings: every knob of the server, with its default, its `VODPACK_*` variable and its
//! TOML key, resolved in one place.
//!
//! Precedence is command-line flag, then environment variable (both through clap), then the
//! `--config` TOML file, then the default. Each setting is declared once, in `table.rs`,
//! and the `settings!` macro (`declare.rs`) makes its flag, its file key, its merge and its
//! row of the configuration reference from that declaration; its default is the value
//! `Settings::default()` gives its field. A test checks `docs/configuration.md` against
//! the rows ([`SETTINGS`]).

mod dash;
mod declare;
mod error;
mod media;
mod nginx_vod;
mod proxies;
mod reference;
mod resolve;
mod server;
mod settings;
mod table;
mod validate;

#[cfg(test)]
mod tests;

pub use crate::telemetry::LogFormat;
pub use dash::{DashProfile, DashSubtitleFormat};
pub use error::ConfigError;
pub use media::MediaLimits;
pub use nginx_vod::NginxVodLocations;
pub use proxies::TrustedProxies;
pub use reference::{Row, SETTINGS};
pub use server::{
    PreviewOptions, ServerOptions, StoryboardGrid, StoryboardOptions, ThumbnailOptions,
    CDN_DASH_JS_URL, CDN_HLS_JS_URL,
};
pub use settings::Settings;
pub use table::{SettingsArgs, FILE_KEYS};
