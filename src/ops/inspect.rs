//! `vodpack inspect`: what the server would answer for one file or title document, and
//! what the file holds.
//!
//! The target is a local path, a key of the configured source (`--source`, `--root`), or
//! a URL (`s3://bucket/key.mp4`, `gs://`, `az://`, `https://`) read with the same
//! settings as `serve` (startup.rs opens it). The answer part comes from the server
//! itself (`server::probe`): the manifests' statuses, the one-line reason of a failure,
//! the variants and renditions. For a media file the detail follows: tracks, codecs,
//! colour, edit lists, fragments and the segment plan, read with the same limits.

use std::path::Path;

use serde::Serialize;

use std::sync::Arc;

use super::startup::{open_shelves, open_source, StartupError};
use crate::config::Settings;
use crate::server::{describe, probe, App, DetailError, IndexTiers, KeyReport, TierHolding};
use crate::source::ObjectKey;
use crate::telemetry::Metrics;

/// Why the target of `inspect` cannot be resolved to a source and a key.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The target names no valid key.
    #[error("{target}: {reason}")]
    BadTarget { target: String, reason: String },
}

/// Where `inspect` reads: the settings to open the source with, and the key under it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The settings, with `source` or `root` pointed at the target's folder.
    pub settings: Settings,
    /// The key under that source.
    pub key: ObjectKey,
}

/// Resolve `target`: a URL (its last path segment is the key, the rest the source), a key
/// of the configured source when one is set, a path that exists, else a key under
/// `--root` when it was given.
///
/// # Errors
/// [`TargetError::BadTarget`] when the target names no file or key.
pub fn resolve_target(
    target: &str,
    settings: &Settings,
    root_given: bool,
) -> Result<Target, TargetError> {
    let bad = |reason: &str| TargetError::BadTarget {
        target: target.to_owned(),
        reason: reason.to_owned(),
    };
    let key = |name: &str| ObjectKey::parse(name).map_err(|e| bad(&e.to_string()));
    let mut settings = settings.clone();
    if target.contains("://") {
        let (folder, name) = target
            .rsplit_once('/')
            .filter(|(folder, name)| !name.is_empty() && !folder.ends_with(':'))
            .ok_or_else(|| bad("a URL must end in an object key, e.g. s3://bucket/a.mp4"))?;
        let name = percent_encoding::percent_decode_str(name)
            .decode_utf8()
            .map_err(|_| bad("not valid percent-encoded UTF-8"))?;
        settings.source = Some(format!("{folder}/"));
        return Ok(Target {
            key: key(&name)?,
            settings,
        });
    }
    if settings.source.is_some() {
        return Ok(Target {
            key: key(target)?,
            settings,
        });
    }
    let path = Path::new(target);
    if path.exists() || !root_given {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| bad("not a file name in UTF-8"))?;
        settings.root = parent.to_path_buf();
        return Ok(Target {
            key: key(name)?,
            settings,
        });
    }
    Ok(Target {
        key: key(target)?,
        settings,
    })
}

/// What `inspect --json` prints: the server's answers, and the file's tracks when read.
#[derive(Debug, Serialize)]
pub struct InspectReport {
    /// What is served (the folder or source URL).
    pub source: String,
    /// The server's answers for the key.
    #[serde(flatten)]
    pub answer: KeyReport,
    /// The detail as text lines (tracks, edits, segments) for a media file; or the
    /// reason it could not be read.
    pub detail: Vec<String>,
    /// What each index tier (`--index-cache-dir`, `--index-cache-prefix`) holds for the
    /// file's current version; empty without tiers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub index_tiers: Vec<TierHolding>,
}

/// Inspect `target`: the report, and whether the server would serve it.
///
/// # Errors
/// A [`StartupError`] when the source cannot be opened.
pub async fn inspect(target: Target) -> Result<InspectReport, StartupError> {
    let opened = open_source(&target.settings)?;
    let source = opened.source.clone();
    // Read before the probe below, which loads the title (without tiers: inspect writes
    // nothing to them).
    let shelves = open_shelves(&target.settings)?;
    let mut index_tiers = Vec::new();
    if shelves.disk.is_some() || shelves.store.is_some() {
        let metrics = Arc::new(Metrics::new(source.kind().as_str(), source.counters()));
        let tiers = IndexTiers::new(shelves, metrics);
        if let Ok(identity) = source.identify(&target.key).await {
            let limits = &target.settings.limits;
            index_tiers = tiers.holding(&target.key, &identity, limits).await;
        }
    }
    let app = App::new(target.settings.clone(), opened.source);
    let answer = probe(&app, &target.key).await;
    let is_document = target.key.as_str().to_ascii_lowercase().ends_with(".json");
    let detail = match is_document {
        true => Vec::new(),
        false => match describe(
            &source,
            &target.key,
            &target.settings.limits,
            target.settings.segment_duration_ms,
            target.settings.protect.encryption,
        )
        .await
        {
            Ok(text) => text.lines().map(str::to_owned).collect(),
            Err(DetailError::Package(edits, e)) => edits
                .lines()
                .map(str::to_owned)
                .chain([format!("cannot package: {e}")])
                .collect(),
            Err(e) => vec![format!("cannot read: {e}")],
        },
    };
    Ok(InspectReport {
        source: opened.description,
        answer,
        detail,
        index_tiers,
    })
}

/// The report as text: the answer first, then the detail.
pub fn render_text(report: &InspectReport) -> String {
    let a = &report.answer;
    let mut out = String::new();
    match &a.reason {
        None => out.push_str(&format!(
            "{}: ok (master.m3u8 {}, manifest.mpd {})\n",
            a.key, a.hls_status, a.dash_status
        )),
        Some(reason) => out.push_str(&format!("{}: {} {reason}\n", a.key, a.status())),
    }
    for v in &a.variants {
        out.push_str(&format!(
            "variant {} bit/s{}{} -> {}\n",
            v.bandwidth,
            v.resolution
                .as_deref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default(),
            v.codecs
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default(),
            v.uri
        ));
    }
    for r in &a.renditions {
        out.push_str(&format!(
            "rendition {} group={} lang={} name={}{}\n",
            r.kind,
            r.group,
            r.language.as_deref().unwrap_or("und"),
            r.name.as_deref().unwrap_or("-"),
            if r.default { " default" } else { "" }
        ));
    }
    for line in &report.detail {
        out.push_str(line);
        out.push('\n');
    }
    for t in &report.index_tiers {
        out.push_str(&format!(
            "index tier {} ({}): {}\n",
            t.tier, t.place, t.state
        ));
    }
    out
}
