//! The `settings!` macro: from one declaration per setting it makes everything a setting
//! needs, so none of it is written twice: the flag and variable (`SettingsArgs`, read by
//! clap), the config file key (`FileSettings`, read by serde), the merge of both onto the
//! defaults, and the setting's row of the configuration reference. Its one use is
//! `table.rs`.
//!
//! A setting's default is the value its field has in `Settings::default()` (the default of
//! the layer options that hold it); `--help` and the reference show that value, so they
//! cannot disagree with the code.

use crate::telemetry::LogFormat;

/// How a default value is shown in `--help` and the configuration reference.
pub(super) trait Shown {
    /// The value as a user writes it.
    fn shown(&self) -> String;
}

macro_rules! shown_by_display {
    ($($ty:ty),*) => {
        $(impl Shown for $ty {
            fn shown(&self) -> String {
                self.to_string()
            }
        })*
    };
}

shown_by_display!(
    u32,
    u64,
    usize,
    bool,
    String,
    std::net::SocketAddr,
    super::StoryboardGrid
);

impl Shown for std::path::PathBuf {
    fn shown(&self) -> String {
        self.display().to_string()
    }
}

impl Shown for LogFormat {
    fn shown(&self) -> String {
        clap::ValueEnum::to_possible_value(self)
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

impl Shown for crate::config::DashProfile {
    fn shown(&self) -> String {
        clap::ValueEnum::to_possible_value(self)
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

impl Shown for crate::config::DashSubtitleFormat {
    fn shown(&self) -> String {
        clap::ValueEnum::to_possible_value(self)
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

/// A flag's `--help` line: what it does, then its default when there is one to show.
pub(super) fn help_line(help: &str, default: Option<String>) -> String {
    match default {
        Some(default) => format!("{help} [default: {default}]"),
        None => help.to_owned(),
    }
}

/// Declares every setting of `vodpack serve`. Each entry reads:
///
/// ```text
/// field: Type {
///     key: "flag-and-toml-key",
///     env: "VODPACK_VARIABLE",
///     to: value(path.in.settings),   // or some(path): the field is an Option
///     shown: "none",                 // optional: the default in words, for a field
///                                    // whose default is no value (shown as "(none)")
///     help_shows: None,              // optional: what `--help` shows instead
///     toml: text,                    // optional: the file holds text, parsed as the flag
///                                    // is, a bad one refused as an invalid setting
///     clap: [value_enum],            // optional: more clap attributes of the flag
///     help: "one line for --help",
///     docs: "the meaning, for the configuration reference",
/// },
/// ```
///
/// Precedence is made here: the flag or its variable (clap reads both), then the file's
/// key, then the default already in `Settings::default()`.
macro_rules! settings {
    ($(
        $field:ident: $ty:ty {
            key: $key:literal,
            env: $env:literal,
            to: $store:ident($($path:ident).+),
            $(shown: $shown:literal,)?
            $(help_shows: $help_shows:expr,)?
            $(toml: $toml:ident,)?
            $(clap: [$($clap:tt)*],)?
            help: $help:literal,
            docs: $docs:literal $(,)?
        }
    ),* $(,)?) => {
        /// The settings given on the command line or in the environment (clap reads
        /// both); `resolve` adds the config file and the defaults.
        #[derive(Debug, Clone, Default, clap::Args)]
        pub struct SettingsArgs {
            $(
                #[doc = $help]
                #[arg(
                    long = $key,
                    env = $env,
                    help = settings!(@help $help, [$($shown)?], [$($help_shows)?],
                        &$crate::config::Settings::default().$($path).+)
                    $(, $($clap)*)?
                )]
                pub $field: Option<$ty>,
            )*
            /// TOML file with any of the settings above (keys as the flag names)
            #[arg(long, env = "VODPACK_CONFIG")]
            pub config: Option<std::path::PathBuf>,
            /// Encryption, key, signed-URL and CORS settings (flags and variables only).
            #[command(flatten)]
            pub protect: $crate::crypto::settings::ProtectArgs,
        }

        /// The same settings as read from a TOML file. Every field is optional (the
        /// container's `default`), and an unknown key is an error.
        #[derive(Debug, Clone, Default, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub(super) struct FileSettings {
            $(
                #[serde(rename = $key)]
                pub(super) $field: settings!(@file_type [$($toml)?], $ty),
            )*
        }

        impl SettingsArgs {
            /// Each setting given as a flag or variable, else in `file`, stored over the
            /// default in `settings`.
            ///
            /// # Errors
            /// A file's text that its setting cannot parse.
            pub(super) fn merge_onto(
                &self,
                file: FileSettings,
                settings: &mut $crate::config::Settings,
            ) -> Result<(), $crate::config::ConfigError> {
                $(
                    let given =
                        settings!(@pick [$($toml)?], $key, self.$field, file.$field);
                    if let Some(value) = given {
                        settings!(@store $store (settings.$($path).+) value);
                    }
                )*
                Ok(())
            }
        }

        /// (key, variable, default as the reference shows it, meaning) of every setting
        /// declared here, in order.
        pub(super) fn declared_rows(
            defaults: &$crate::config::Settings,
        ) -> Vec<$crate::config::reference::Row> {
            vec![$(
                (
                    $key,
                    $env,
                    settings!(@docs_default [$($shown)?], &defaults.$($path).+),
                    $docs,
                ),
            )*]
        }

        /// The keys a config file may hold, in the order of the reference.
        pub const FILE_KEYS: &[&str] = &[$($key),*];
    };

    (@help $help:literal, [], [], $value:expr) => {
        $crate::config::declare::help_line(
            $help,
            Some($crate::config::declare::Shown::shown($value)),
        )
    };
    (@help $help:literal, [$shown:literal], [], $value:expr) => {
        $crate::config::declare::help_line($help, Some($shown.to_owned()))
    };
    (@help $help:literal, [$($shown:literal)?], [$help_shows:expr], $value:expr) => {
        $crate::config::declare::help_line($help, $help_shows.map(str::to_owned))
    };

    (@docs_default [], $value:expr) => {
        $crate::config::declare::Shown::shown($value)
    };
    (@docs_default [$shown:literal], $value:expr) => {
        format!("({})", $shown)
    };

    (@file_type [], $ty:ty) => { Option<$ty> };
    (@file_type [text], $ty:ty) => { Option<String> };

    (@pick [], $key:literal, $arg:expr, $file:expr) => {
        $arg.clone().or($file)
    };
    (@pick [text], $key:literal, $arg:expr, $file:expr) => {
        match (&$arg, $file) {
            (Some(value), _) => Some(value.clone()),
            (None, Some(text)) => Some(text.parse().map_err(|reason| {
                $crate::config::ConfigError::Invalid { name: $key, reason }
            })?),
            (None, None) => None,
        }
    };

    (@store value ($target:expr) $value:ident) => {
        $target = $value
    };
    (@store some ($target:expr) $value:ident) => {
        $target = Some($value)
    };
}

pub(super) use settings;
