//! `ConfigError`: why settings could not be resolved, each on one line for the startup
//! message (the TOML parser's excerpt folded into its position).

use std::path::PathBuf;

/// Why settings could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML for our settings (an unknown key among them).
    /// Shown on one line: the parser's message, then where.
    #[error("invalid config file {}: {}", path.display(), one_line_toml(source))]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    /// A value is out of its allowed range.
    #[error("invalid setting {name}: {reason}")]
    Invalid { name: &'static str, reason: String },
    /// An environment variable vodpack honours holds a value it cannot use.
    #[error("invalid environment variable {name}={value}: {reason}")]
    Environment {
        name: &'static str,
        value: String,
        reason: String,
    },
}

/// A TOML error on one line: its message, then the position the parser gives (its first
/// display line, `TOML parse error at line L, column C`), without the source excerpt.
fn one_line_toml(error: &toml::de::Error) -> String {
    let text = error.to_string();
    let position = text.lines().next().unwrap_or_default().trim();
    let message = error.message().replace('\n', " ");
    match position.strip_prefix("TOML parse error at ") {
        Some(at) => format!("{} ({at})", message.trim()),
        None => message.trim().to_owned(),
    }
}
