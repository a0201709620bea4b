//! `LogFormat`: how log lines are written. Telemetry owns it because it writes them; the
//! settings only choose one.

use serde::Deserialize;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (the default on a terminal).
    Text,
    /// One JSON object per line (the container default).
    Json,
}
