//! `vodpack check PREFIX`: will every title under a folder or bucket prefix play?
//!
//! The listing is streamed (source/listing.rs: object-store pages as they come, a folder
//! walked one directory at a time) and each media file and title document is asked of
//! the server in process (`server::probe`), `concurrency` at a time, so memory stays
//! bounded by the concurrency and the metadata cache, not by the number of objects. Each
//! object gets `ok` or the status and one-line reason a player would get. The source's
//! read counters give what the check cost (HEAD and GET requests, bytes), so an operator can
//! price a check of 100,000 objects from a check of 1,000. Other objects (sidecar
//! subtitles, images) are counted as skipped.

use std::io::Write;
use std::sync::Arc;

use futures_util::stream::StreamExt;
use serde::Serialize;

use super::startup::{open_source, StartupError};
use crate::config::Settings;
use crate::server::{probe, App, KeyReport};
use crate::source::{ListedObject, MediaSource, ObjectKey};

/// Extensions of the objects checked: media files and title documents.
const CHECKED_EXTENSIONS: [&str; 5] = [".mp4", ".m4v", ".m4a", ".mov", ".json"];

/// Metadata cache of a check, in bytes: about one title, since each is loaded once.
const CHECK_CACHE_BYTES: u64 = 64 * 1024;

/// The result for one object, one JSON line in the output.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectResult {
    /// The key under the source.
    pub key: String,
    /// `ok` or `failed`.
    pub verdict: &'static str,
    /// The status a player would get for the manifests (200 when served).
    pub status: u16,
    /// The one-line reason of a failure.
    pub reason: Option<String>,
    /// Object size in bytes, as listed.
    pub size: u64,
    /// Variant streams in the HLS playlist.
    pub variants: usize,
}

/// What a whole check found and cost.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    /// Objects listed under the prefix.
    pub listed: u64,
    /// Media files and title documents checked.
    pub checked: u64,
    /// Of those, served.
    pub ok: u64,
    /// Of those, not served.
    pub failed: u64,
    /// Other objects, not checked.
    pub skipped: u64,
    /// Listing failures (the check is then incomplete).
    pub list_errors: u64,
    /// Requests the source made: for an object store every HEAD (an object's identity)
    /// and ranged GET, listing pages not included; for a folder, the ranged reads.
    pub source_requests: u64,
    /// Bytes the source read.
    pub source_read_bytes: u64,
}

impl Totals {
    /// True when everything listed that could be checked was served.
    pub fn all_ok(&self) -> bool {
        self.failed == 0 && self.list_errors == 0
    }
}

/// How the check reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One JSON object per line per object, then `{"totals": ...}` (for scripts).
    JsonLines,
    /// A line per object, a progress line redrawn on stderr, and the totals (a terminal).
    Terminal,
}

/// Check every object under `prefix`, `concurrency` at a time, writing to `out`.
///
/// # Errors
/// A [`StartupError`] when the source cannot be opened; write errors are ignored (a
/// closed pipe ends nothing but the output).
pub async fn check(
    settings: Settings,
    prefix: &str,
    concurrency: usize,
    output: Output,
    out: &mut dyn Write,
) -> Result<Totals, StartupError> {
    let opened = open_source(&settings)?;
    Ok(check_source(settings, opened.source, prefix, concurrency, output, out).await)
}

/// As [`check`], over a source already opened (a test's store, or one opened elsewhere).
pub async fn check_source(
    settings: Settings,
    source: Arc<dyn MediaSource>,
    prefix: &str,
    concurrency: usize,
    output: Output,
    out: &mut dyn Write,
) -> Totals {
    // Each object is loaded once: a title cache would only hold memory that grows with
    // the catalogue (a title keeps its probe read alive), so it holds next to nothing.
    let settings = Settings {
        metadata_cache_bytes: CHECK_CACHE_BYTES,
        ..settings
    };
    let app = App::new(settings, source.clone());
    let mut totals = Totals::default();
    let listing = source
        .clone()
        .list(prefix.trim_matches('/').to_owned(), None);
    let mut results = listing
        .map(|item| {
            let app = app.clone();
            async move { check_one(&app, item).await }
        })
        .buffered(concurrency.max(1));
    let mut progress = Progress::new(output == Output::Terminal);
    while let Some(result) = results.next().await {
        match result {
            Checked::Object(r) => {
                totals.listed += 1;
                totals.checked += 1;
                match r.verdict {
                    "ok" => totals.ok += 1,
                    _ => totals.failed += 1,
                }
                progress.clear();
                let _ = match output {
                    Output::JsonLines => writeln!(out, "{}", json_line(&r)),
                    Output::Terminal => match &r.reason {
                        None => writeln!(out, "ok   {}", r.key),
                        Some(reason) => writeln!(out, "{}  {}: {reason}", r.status, r.key),
                    },
                };
            }
            Checked::Skipped => {
                totals.listed += 1;
                totals.skipped += 1;
            }
            Checked::ListError(reason) => {
                totals.list_errors += 1;
                progress.clear();
                let _ = match output {
                    Output::JsonLines => {
                        writeln!(out, "{}", serde_json::json!({ "list_error": reason }))
                    }
                    Output::Terminal => writeln!(out, "listing failed: {reason}"),
                };
            }
        }
        progress.draw(&totals);
    }
    progress.clear();
    let counters = source.counters();
    totals.source_requests = counters.read_requests.get();
    totals.source_read_bytes = counters.read_bytes.get();
    let _ = match output {
        Output::JsonLines => writeln!(out, "{}", serde_json::json!({ "totals": totals })),
        Output::Terminal => writeln!(
            out,
            "{} checked: {} ok, {} failed; {} skipped (not media); {} source requests, {} bytes read{}",
            totals.checked,
            totals.ok,
            totals.failed,
            totals.skipped,
            totals.source_requests,
            totals.source_read_bytes,
            match totals.list_errors {
                0 => String::new(),
                n => format!("; {n} listing errors"),
            }
        ),
    };
    let _ = out.flush();
    totals
}

/// One listing item, checked.
enum Checked {
    Object(ObjectResult),
    Skipped,
    ListError(String),
}

/// Check one listed object: skip what is not media, refuse a key the router would
/// refuse (400, with its reason), else ask the server.
async fn check_one(
    app: &Arc<App>,
    item: Result<ListedObject, crate::source::SourceError>,
) -> Checked {
    let object = match item {
        Ok(object) => object,
        Err(e) => return Checked::ListError(e.to_string()),
    };
    let lower = object.key.to_ascii_lowercase();
    if !CHECKED_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
        return Checked::Skipped;
    }
    let key = match ObjectKey::parse(&object.key) {
        Ok(key) => key,
        Err(e) => {
            return Checked::Object(ObjectResult {
                key: object.key,
                verdict: "failed",
                status: 400,
                reason: Some(format!("bad request path: {e}")),
                size: object.size,
                variants: 0,
            })
        }
    };
    let report: KeyReport = probe(app, &key).await;
    Checked::Object(ObjectResult {
        verdict: if report.is_ok() { "ok" } else { "failed" },
        status: report.status(),
        variants: report.variants.len(),
        reason: report.reason,
        key: object.key,
        size: object.size,
    })
}

fn json_line(result: &ObjectResult) -> String {
    serde_json::to_string(result).unwrap_or_else(|_| String::from("{}"))
}

/// A one-line progress display on stderr, redrawn in place; off when not a terminal.
struct Progress {
    on: bool,
    drawn: bool,
    spinner: usize,
}

impl Progress {
    fn new(on: bool) -> Self {
        Self {
            on,
            drawn: false,
            spinner: 0,
        }
    }

    fn draw(&mut self, totals: &Totals) {
        if !self.on {
            return;
        }
        const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
        self.spinner = (self.spinner + 1) % FRAMES.len();
        let frame = FRAMES.get(self.spinner).copied().unwrap_or('|');
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K{frame} listed {}  checked {}  ok {}  failed {}",
            totals.listed, totals.checked, totals.ok, totals.failed
        );
        let _ = err.flush();
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.on && self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}
