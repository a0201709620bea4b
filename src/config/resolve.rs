//! `SettingsArgs::resolve`: the flags and variables over the `--config` file over the
//! defaults, then every check. The one setting with a fallback outside vodpack,
//! plain-HTTP endpoints, also honours the `object_store` crate's own variables.

use std::path::Path;

use super::table::FileSettings;
use super::{validate, ConfigError, Settings, SettingsArgs};

impl SettingsArgs {
    /// Resolve flags and environment over the config file over the defaults.
    ///
    /// # Errors
    /// When the config file cannot be read or parsed, or a value is out of range.
    pub fn resolve(&self) -> Result<Settings, ConfigError> {
        let file = match &self.config {
            None => FileSettings::default(),
            Some(path) => read_file(path)?,
        };
        // Read before the merge takes the file apart; an unusable variable is refused
        // even when the flag or the file decides.
        let allow_http_given = self.source_allow_http.is_some() || file.source_allow_http.is_some();
        let allow_http_env =
            allow_http_from_env(self.source.as_deref().or(file.source.as_deref()))?;
        let mut settings = Settings::default();
        self.merge_onto(file, &mut settings)?;
        if let (false, Some(allow)) = (allow_http_given, allow_http_env) {
            settings.object_store.allow_http = allow;
        }
        settings.protect = self.protect.resolve().map_err(|e| ConfigError::Invalid {
            name: e.name,
            reason: e.reason,
        })?;
        validate::check(&settings)?;
        Ok(settings)
    }
}

/// The settings of the TOML file at `path`.
///
/// # Errors
/// [`ConfigError::Read`] or [`ConfigError::Parse`] (an unknown key among them).
fn read_file(path: &Path) -> Result<FileSettings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.to_owned(),
        source,
    })
}

/// Variables of the `object_store` crate that say whether plain-HTTP endpoints are
/// allowed, by source scheme, as its builders' `from_env` read them. vodpack's own
/// `source-allow-http` wins over them.
const ALLOW_HTTP_VARIABLES: &[(&str, &str)] = &[
    ("s3://", "AWS_ALLOW_HTTP"),
    ("s3a://", "AWS_ALLOW_HTTP"),
    ("az://", "AZURE_ALLOW_HTTP"),
    ("abfs://", "AZURE_ALLOW_HTTP"),
    ("abfss://", "AZURE_ALLOW_HTTP"),
    ("adl://", "AZURE_ALLOW_HTTP"),
    ("azure://", "AZURE_ALLOW_HTTP"),
    ("gs://", "GOOGLE_ALLOW_HTTP"),
];

/// The `*_ALLOW_HTTP` variable for `source`, read as `object_store` reads booleans
/// (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`); `None` when unset or no source.
///
/// # Errors
/// [`ConfigError::Environment`] for a value that is not a boolean.
fn allow_http_from_env(source: Option<&str>) -> Result<Option<bool>, ConfigError> {
    let Some(source) = source else {
        return Ok(None);
    };
    let Some((_, name)) = ALLOW_HTTP_VARIABLES
        .iter()
        .find(|(scheme, _)| source.starts_with(scheme))
    else {
        return Ok(None);
    };
    let Ok(value) = std::env::var(name) else {
        return Ok(None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(Some(true)),
        "false" | "0" | "no" | "off" | "" => Ok(Some(false)),
        _ => Err(ConfigError::Environment {
            name,
            value,
            reason: "must be true or false".into(),
        }),
    }
}
