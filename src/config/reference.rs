//! The configuration reference (docs/configuration.md) as the code has it: one row per
//! setting, with its variable, its default as the code sets it and its meaning. A test
//! compares the page with these rows.

use std::sync::LazyLock;

use clap::{Args, Command};

use crate::crypto::settings::ProtectArgs;

use super::table::declared_rows;
use super::Settings;

/// One row of the reference: (flag and TOML key, environment variable, default, meaning).
pub type Row = (&'static str, &'static str, String, &'static str);

/// Every setting of `vodpack serve` but `--config`, in the order of the reference: those
/// of `table.rs`, then the protection settings of `crypto::settings`.
pub static SETTINGS: LazyLock<Vec<Row>> = LazyLock::new(|| {
    let mut rows = declared_rows(&Settings::default());
    rows.extend(protection_rows());
    rows
});

/// The protection settings' meanings, for the reference. Their flags, variables and
/// defaults are declared with them in `crypto::settings`; the variable is repeated here
/// because a row holds it as static text, and a test checks it against clap's.
const PROTECTION: &[(&str, &str, &str)] = &[
    (
        "encryption",
        "VODPACK_ENCRYPTION",
        "Encryption per output, overridable per title document: \
         hls=aes-128|sample-aes|none, dash=cenc|cbcs|none",
    ),
    (
        "key-secret-file",
        "VODPACK_KEY_SECRET_FILE",
        "File holding the secret every title's content key and KID are derived from \
         (HMAC-SHA256); needed when anything is encrypted",
    ),
    (
        "key-secret",
        "VODPACK_KEY_SECRET",
        "The key secret itself, at least 16 bytes; prefer the variable or the file to the \
         flag",
    ),
    (
        "nginx-vod-secret-key",
        "VODPACK_NGINX_VOD_SECRET_KEY",
        "nginx-vod-module's vod_secret_key, such as secret-$vod_filepath: every title's \
         content key is then the MD5 of it with $vod_filepath replaced by \
         nginx-vod-filepath-prefix and the object key, as the module derives it, so an \
         encrypted catalogue keeps its keys (docs/migrating-from-nginx-vod.md); instead of \
         the key secret or a key server",
    ),
    (
        "nginx-vod-filepath-prefix",
        "VODPACK_NGINX_VOD_FILEPATH_PREFIX",
        "What nginx's $vod_filepath held before the object key: in the module's local mode \
         the request's path up to the file, so the location with its trailing slash, such \
         as /hls/ (checked against nginx-vod-module: its encryption.key for \
         /hls/a.mp4 is the MD5 of secret-/hls/a.mp4)",
    ),
    (
        "signed-urls",
        "VODPACK_SIGNED_URLS",
        "Which requests need a signed token: off, entry (entry manifests, keys, licences) \
         or all (every /vod/ path; manifests carry the token on)",
    ),
    (
        "url-secret-file",
        "VODPACK_URL_SECRET_FILE",
        "File holding the secret URL tokens are signed with",
    ),
    (
        "url-secret",
        "VODPACK_URL_SECRET",
        "The URL secret itself, at least 16 bytes; prefer the variable or the file",
    ),
    (
        "url-secret-previous-file",
        "VODPACK_URL_SECRET_PREVIOUS_FILE",
        "File holding the previous URL secret during a rotation: tokens signed with it are \
         still accepted, new tokens are signed with url-secret only (docs/protection.md, \
         Rotating the URL secret)",
    ),
    (
        "url-secret-previous",
        "VODPACK_URL_SECRET_PREVIOUS",
        "The previous URL secret itself, at least 16 bytes; prefer the variable or the file",
    ),
    (
        "token-skew-secs",
        "VODPACK_TOKEN_SKEW_SECS",
        "Seconds a token is still accepted after its expiry, for clocks that disagree",
    ),
    (
        "cors-origins",
        "VODPACK_CORS_ORIGINS",
        "Comma-separated origins allowed by CORS; any other origin gets no \
         Access-Control-Allow-Origin",
    ),
    (
        "cpix-url",
        "VODPACK_CPIX_URL",
        "CPIX 2.3 key server URL; when set, content keys are fetched from it (POST of a \
         CPIX request per title) instead of derived from the key secret",
    ),
    (
        "cpix-systems",
        "VODPACK_CPIX_SYSTEMS",
        "DRM systems whose signalling is asked of the key server without being required: \
         widevine, playready, fairplay (comma-separated); --drm-systems replaces it",
    ),
    (
        "cpix-timeout-ms",
        "VODPACK_CPIX_TIMEOUT_MS",
        "Deadline of one key server request; a request past it is retried, and when every \
         try fails the answer is 503, never clear content",
    ),
    (
        "cpix-retries",
        "VODPACK_CPIX_RETRIES",
        "Retries of a key server request that failed with a transport error, a timeout or a \
         5xx, with backoff from 100 ms",
    ),
    (
        "key-cache-ttl-secs",
        "VODPACK_KEY_CACHE_TTL_SECS",
        "How long a key fetched from the key server is reused for its title",
    ),
    (
        "cpix-mode",
        "VODPACK_CPIX_MODE",
        "The key server's protocol: cpix (a CPIX 2.3 document POSTed as is) or speke2 (AWS \
         SPEKE v2: CPIX 2.3 with the X-Speke-Version: 2.0 header, the key's \
         commonEncryptionScheme and a ContentKeyUsageRuleList)",
    ),
    (
        "drm-systems",
        "VODPACK_DRM_SYSTEMS",
        "DRM systems every title is signalled for, comma-separated: fairplay, widevine, \
         playready, clearkey; a title document's \"drm\" list overrides it. With a key server \
         each but clearkey must be in its answer (else 503 naming the system); without one \
         the key secret's raw keys make them",
    ),
    (
        "key-presets",
        "VODPACK_KEY_PRESETS",
        "Content keys by usage, as AWS SPEKE v2's presets: \
         video=PRESET-VIDEO-N (1 to 8, or SHARED, or UNENCRYPTED),audio=PRESET-AUDIO-N (1 to 3, or SHARED, or UNENCRYPTED) \
         (SD up to 1024x576, HD up to 1920x1080, UHD above; stereo and multichannel audio); a \
         title document's \"key_presets\" overrides it. Needs the key secret or a key server, \
         and hls=sample-aes or none; MPEG-TS is refused (422) under a split",
    ),
    (
        "playready-la-url",
        "VODPACK_PLAYREADY_LA_URL",
        "PlayReady licence URL written as LA_URL into the PlayReady headers made without a \
         key server",
    ),
    (
        "fairplay-key-uri",
        "VODPACK_FAIRPLAY_KEY_URI",
        "FairPlay key URI template without a key server: skd://... with {kid} (hex), \
         {kid_uuid} and {title} (percent-encoded); needed for fairplay without a key server",
    ),
    (
        "public-url",
        "VODPACK_PUBLIC_URL",
        "Public base URL of the server, used for the absolute licence URL in MPDs (default: \
         http:// and the request's Host)",
    ),
];

/// The protection settings' rows, each default as its `--help` line gives it
/// (`[default: X]`), or `(none)`.
fn protection_rows() -> Vec<Row> {
    let command = ProtectArgs::augment_args(Command::new("serve"));
    PROTECTION
        .iter()
        .map(|&(key, env, meaning)| {
            let help = (command.get_arguments())
                .find(|arg| arg.get_long() == Some(key))
                .and_then(|arg| arg.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            let default = help
                .rsplit_once("[default: ")
                .and_then(|(_, tail)| tail.strip_suffix(']'))
                .map_or_else(|| "(none)".to_owned(), str::to_owned);
            (key, env, default, meaning)
        })
        .collect()
}
