//! The preview page at `/`: the titles under a prefix, each playable in the page.

use crate::config::Settings;

/// Whether the preview page is served: the `preview` setting, else on for a local
/// root and off for a bucket (whose key names may not be for everyone's eyes).
pub fn preview_enabled(settings: &Settings) -> bool {
    settings
        .preview
        .enabled
        .unwrap_or(settings.source.is_none())
}
