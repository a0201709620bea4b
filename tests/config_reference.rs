//! The configuration reference stays true: every setting the code reads is documented in
//! docs/configuration.md with its variable and default, and every documented setting
//! exists. The code side is read from clap itself (`SettingsArgs`), not from a list kept
//! by hand, and checked against the `SETTINGS` table the reference is generated from.

use std::collections::BTreeSet;

use clap::{Args, Command};
use vodpack::config::{SettingsArgs, SETTINGS};

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

/// (flag, variable, default) of every row of the reference table.
fn settings_in_docs() -> Vec<(String, String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    let text = std::fs::read_to_string(path).expect("docs/configuration.md");
    text.lines()
        .filter(|l| l.starts_with("| `--"))
        .map(|l| {
            let cells: Vec<String> = l
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect();
            (
                cells.get(1).cloned().unwrap_or_default(),
                cells.get(2).cloned().unwrap_or_default(),
                cells.get(3).cloned().unwrap_or_default(),
            )
        })
        .collect()
}

/// Given the serve command's arguments, when compared with the reference, then each is
/// documented once with its variable, and nothing else is documented.
#[test]
fn every_setting_is_documented_and_every_documented_setting_exists() {
    let code = settings_in_code();
    let docs: BTreeSet<(String, String)> = settings_in_docs()
        .into_iter()
        .map(|(flag, var, _)| (flag, var))
        .collect();
    let undocumented: Vec<_> = code.difference(&docs).collect();
    let unknown: Vec<_> = docs.difference(&code).collect();
    assert!(undocumented.is_empty(), "not in docs: {undocumented:?}");
    assert!(unknown.is_empty(), "documented but not read: {unknown:?}");
    assert_eq!(
        settings_in_docs().len(),
        docs.len(),
        "a setting is listed twice"
    );
}

/// Given the SETTINGS table the reference is generated from, then it names the same
/// settings as clap, and the reference shows its defaults.
#[test]
fn the_settings_table_matches_the_code_and_the_docs_defaults() {
    let code = settings_in_code();
    let table: BTreeSet<(String, String)> = SETTINGS
        .iter()
        .map(|(name, var, _, _)| (format!("--{name}"), (*var).to_owned()))
        .collect();
    let without_config: BTreeSet<_> = code
        .iter()
        .filter(|(flag, _)| flag != "--config")
        .cloned()
        .collect();
    assert_eq!(table, without_config);
    let docs = settings_in_docs();
    for (name, _, default, _) in SETTINGS {
        let row = docs
            .iter()
            .find(|(flag, _, _)| *flag == format!("--{name}"))
            .unwrap_or_else(|| panic!("--{name} missing from the docs"));
        assert_eq!(row.2, *default, "default of --{name}");
    }
}
