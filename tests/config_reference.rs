//! The configuration reference stays true: docs/configuration.md has a row for every
//! setting naming its flag, its variable, its default and its meaning as the code has them
//! (`SETTINGS`, made from the declarations), every documented setting exists, the settings
//! of the config file are documented as file keys (the flag without its dashes) and the
//! protection settings as flags and variables only, and the documented defaults are the
//! values the code resolves to.

use std::collections::BTreeSet;

use clap::{Args, Command};
use vodpack::config::{SettingsArgs, FILE_KEYS, SETTINGS};
use vodpack::crypto::settings::{ProtectArgs, SignedUrls};

/// The heading of the reference's section for settings that are never file keys.
const FLAGS_ONLY_SECTION: &str = "## Encryption and access";

/// (flag, variable) of every argument `vodpack serve` accepts.
fn settings_in_code() -> BTreeSet<(String, String)> {
    SettingsArgs::augment_args(Command::new("serve"))
        .get_arguments()
        .filter_map(|arg| {
            let long = arg.get_long()?;
            let env = arg.get_env()?.to_str()?;
            Some((format!("--{long}"), env.to_owned()))
        })
        .collect()
}

/// A row of the reference: the line as written, its cells, and whether it sits in the
/// section of flags-only settings.
struct DocRow {
    line: String,
    cells: Vec<String>,
    flags_only: bool,
}

impl DocRow {
    fn cell(&self, i: usize) -> &str {
        self.cells.get(i).map_or("", String::as_str)
    }
}

/// Every row of the reference's tables that names a flag.
fn rows_in_docs() -> Vec<DocRow> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    let text = std::fs::read_to_string(path).expect("docs/configuration.md");
    let mut flags_only = false;
    let mut rows = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            flags_only = line == FLAGS_ONLY_SECTION;
        }
        if line.starts_with("| `--") {
            let cells = line
                .split(" | ")
                .map(|c| {
                    c.trim_matches(|c| c == '|' || c == ' ' || c == '`')
                        .to_owned()
                })
                .collect();
            rows.push(DocRow {
                line: line.to_owned(),
                cells,
                flags_only,
            });
        }
    }
    rows
}

/// The reference's line for a setting: a value in backticks, a default in words as is,
/// and the `|` of a meaning escaped for the table.
fn expected_line(key: &str, var: &str, default: &str, meaning: &str) -> String {
    let default = match default.starts_with('(') {
        true => default.to_owned(),
        false => format!("`{default}`"),
    };
    let meaning = meaning.replace('|', "\\|");
    format!("| `--{key}` | `{var}` | {default} | {meaning} |")
}

/// Given the serve command's arguments, when compared with the reference, then each is
/// documented once with its variable, and nothing else is documented.
#[test]
fn every_setting_is_documented_and_every_documented_setting_exists() {
    let code = settings_in_code();
    let rows = rows_in_docs();
    let docs: BTreeSet<(String, String)> = rows
        .iter()
        .map(|row| (row.cell(0).to_owned(), row.cell(1).to_owned()))
        .collect();
    let undocumented: Vec<_> = code.difference(&docs).collect();
    let unknown: Vec<_> = docs.difference(&code).collect();
    assert!(undocumented.is_empty(), "not in docs: {undocumented:?}");
    assert!(unknown.is_empty(), "documented but not read: {unknown:?}");
    assert_eq!(rows.len(), docs.len(), "a setting is listed twice");
}

/// Given the rows the code makes from its declarations, then they name the same settings
/// as clap, and the reference has each row as the code has it: flag, variable, default and
/// meaning (the failure shows the line to write).
#[test]
fn each_row_of_the_reference_is_the_code_s() {
    let table: BTreeSet<(String, String)> = SETTINGS
        .iter()
        .map(|(key, var, _, _)| (format!("--{key}"), (*var).to_owned()))
        .collect();
    let without_config: BTreeSet<_> = settings_in_code()
        .into_iter()
        .filter(|(flag, _)| flag != "--config")
        .collect();
    assert_eq!(table, without_config);
    let rows = rows_in_docs();
    for (key, var, default, meaning) in SETTINGS.iter() {
        let expected = expected_line(key, var, default, meaning);
        let row = rows
            .iter()
            .find(|row| row.cell(0) == format!("--{key}"))
            .unwrap_or_else(|| panic!("--{key} missing from the docs; add:\n{expected}"));
        assert_eq!(row.line, expected, "the row of --{key}");
    }
}

/// Given the config file's keys, then each is a setting documented in the file's table
/// (its key is the flag without dashes), every other setting is documented as flags and
/// variables only, and a file giving every documented default under its key resolves to
/// exactly what giving nothing resolves to.
#[test]
fn the_file_keys_are_documented_and_their_defaults_resolve_from_a_file() {
    let rows = rows_in_docs();
    for (key, _, _, _) in SETTINGS.iter() {
        let row = rows.iter().find(|row| row.cell(0) == format!("--{key}"));
        let flags_only = row.is_some_and(|row| row.flags_only);
        assert_eq!(
            flags_only,
            !FILE_KEYS.contains(key),
            "--{key} is documented as a file key only when it is one"
        );
    }
    let mut toml = String::new();
    for key in FILE_KEYS {
        let (_, _, default, _) = (SETTINGS.iter())
            .find(|(name, _, _, _)| name == key)
            .unwrap_or_else(|| panic!("{key} has no row"));
        if default.starts_with('(') {
            continue;
        }
        let plain = default.parse::<u64>().is_ok() || default == "true" || default == "false";
        match plain {
            true => toml.push_str(&format!("{key} = {default}\n")),
            false => toml.push_str(&format!("{key} = {default:?}\n")),
        }
    }
    let dir = std::env::temp_dir().join(format!("vodpack-reference-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("defaults.toml");
    std::fs::write(&path, &toml).expect("write");
    let resolved = SettingsArgs {
        config: Some(path),
        ..Default::default()
    }
    .resolve();
    let _ = std::fs::remove_dir_all(&dir);
    let resolved = resolved.unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let unset = SettingsArgs::default()
        .resolve()
        .expect("the defaults resolve");
    assert_eq!(
        format!("{resolved:?}"),
        format!("{unset:?}"),
        "the documented defaults are the code's"
    );
}

/// Given no protection flags (and a key server URL for its own settings), then what
/// `crypto::settings` resolves to is what the reference documents as the defaults.
#[test]
fn the_protection_defaults_documented_are_the_ones_resolved() {
    let default_of = |key: &str| -> String {
        SETTINGS
            .iter()
            .find(|(name, _, _, _)| *name == key)
            .map(|(_, _, default, _)| default.clone())
            .unwrap_or_else(|| panic!("{key} has no row"))
    };
    let resolved = ProtectArgs::default().resolve().expect("defaults resolve");
    assert_eq!(default_of("encryption"), "none");
    assert!(!resolved.encryption.any());
    assert_eq!(default_of("signed-urls"), "off");
    assert_eq!(resolved.signed_urls, SignedUrls::Off);
    assert_eq!(default_of("cors-origins"), "*");
    assert!(resolved.cors_origins.is_empty(), "any origin");
    assert_eq!(
        default_of("token-skew-secs"),
        resolved.token_skew_secs.to_string()
    );
    assert_eq!(default_of("public-url"), "http://HOST");
    assert_eq!(resolved.public_url, None, "the request's Host");

    let with_key_server = ProtectArgs {
        cpix_url: Some("https://keys.example/cpix".into()),
        ..Default::default()
    };
    let cpix = (with_key_server.resolve().expect("resolves").cpix).expect("a key server");
    assert_eq!(
        default_of("cpix-timeout-ms"),
        cpix.timeout.as_millis().to_string()
    );
    assert_eq!(default_of("cpix-retries"), cpix.retries.to_string());
    assert_eq!(
        default_of("key-cache-ttl-secs"),
        cpix.ttl.as_secs().to_string()
    );
}
