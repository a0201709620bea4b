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
use std::sync::Arc;

use serde::Serialize;

use super::startup::{open_source, StartupError};
use crate::config::Settings;
use crate::media::{load_index_report, FragmentDiscovery, MediaError, MediaLimits};
use crate::package::{PackageError, Title};
use crate::server::{probe, App, KeyReport};
use crate::source::{MediaSource, ObjectKey, SourceError};

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
}

/// Inspect `target`: the report, and whether the server would serve it.
///
/// # Errors
/// A [`StartupError`] when the source cannot be opened.
pub async fn inspect(target: Target) -> Result<InspectReport, StartupError> {
    let opened = open_source(&target.settings)?;
    let source = opened.source.clone();
    let app = App::new(target.settings.clone(), opened.source);
    let answer = probe(&app, &target.key).await;
    let is_document = target.key.as_str().to_ascii_lowercase().ends_with(".json");
    let detail = match is_document {
        true => Vec::new(),
        false => match detail(
            &source,
            &target.key,
            &target.settings.limits,
            target.settings.segment_duration_ms,
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
    out
}

/// Why the detail of a file could not be made.
#[derive(Debug, thiserror::Error)]
enum DetailError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Media(#[from] MediaError),
    /// The edit listing, and why the title cannot be packaged.
    #[error("{1}")]
    Package(String, PackageError),
}

/// The colour and dynamic range of a video track for `inspect`, e.g.
/// ` colour=9/16/9 limited (colr) range=PQ dolby-vision=dvh1.08.07/db1p`: CICP colour
/// primaries/transfer/matrix, the sample range, and where they were read.
fn colour_note(codec: &crate::media::CodecInfo) -> String {
    let mut note = match codec.color {
        Some(c) => format!(
            " colour={}/{}/{} {} ({})",
            c.primaries,
            c.transfer,
            c.matrix,
            if c.full_range { "full" } else { "limited" },
            c.source.as_str()
        ),
        None => " colour=unspecified".to_owned(),
    };
    note.push_str(&format!(" range={}", codec.video_range().as_str()));
    if let Some(dv) = codec.dolby_vision {
        let name = dv.supplemental_codecs().unwrap_or_else(|| dv.codec());
        note.push_str(&format!(" dolby-vision={name}"));
    }
    note
}

/// The tracks, edits, fragments and segment plan of the media file `key`, as text.
///
/// # Errors
/// The read or parse error, or the edit list that cannot be packaged (after its edits).
async fn detail(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    limits: &MediaLimits,
    segment_duration_ms: u32,
) -> Result<String, DetailError> {
    let identity = source.identify(key).await?;
    let (index, report) = load_index_report(source, key, &identity, limits).await?;
    // The source's edit lists, every edit, before `Title::new` replaces them with what the
    // output presents.
    let source_edits: Vec<_> = index.tracks.iter().map(|t| t.edits.clone()).collect();
    let edit_listing: String = (index.tracks.iter())
        .map(|t| {
            format!(
                "track {}\n{}",
                t.track_id,
                edit_lines(&t.edits, t.timescale)
            )
        })
        .collect();
    let title = match Title::new(index, segment_duration_ms) {
        Ok(title) => title,
        // An edit list that cannot be packaged: every edit, before the reason.
        Err(e) => return Err(DetailError::Package(edit_listing, e)),
    };
    let mut out = String::new();
    out.push_str(&format!("{key}: {} bytes\n", identity.size));
    out.push_str(&format!("moov: {} reads\n", report.moov_reads));
    if let Some(f) = report.fragments {
        // With no read past the probe, the walk found them in bytes already read.
        let how = match (f.discovery, f.reads) {
            (FragmentDiscovery::Walk, 0) => "walk (all in the first read)",
            (discovery, _) => discovery.as_str(),
        };
        out.push_str(&format!(
            "fragments: {} moof, found by {how}, {} reads ({} ranges, {} bytes)\n",
            f.fragments, f.reads, f.ranges, f.bytes
        ));
    }
    for ((track, plan), edits) in title
        .index
        .tracks
        .iter()
        .zip(&title.plan.tracks)
        .zip(&source_edits)
    {
        let secs = track.duration_ticks() as f64 / f64::from(track.timescale);
        let detail = if track.codec.width > 0 {
            let (w, h) = (track.codec.width, track.codec.height);
            format!("{w}x{h}{}", colour_note(&track.codec))
        } else {
            format!(
                "{} Hz, {} ch",
                track.codec.sample_rate, track.codec.channels
            )
        };
        out.push_str(&format!(
            "track {} {} {} {} lang={} timescale={} samples={} duration={secs:.3}s \
             edits={} dts_shift={} cts_base={}\n",
            track.track_id,
            track.kind.as_str(),
            track.codec.rfc6381,
            detail,
            track.language.as_deref().unwrap_or("und"),
            track.timescale,
            track.samples.len(),
            edits.edits.len(),
            plan.dts_shift,
            plan.cts_base,
        ));
        out.push_str(&edit_lines(edits, track.timescale));
    }
    // Text tracks become WebVTT (HLS subtitles, DASH text/vtt), cut at the same times.
    for text in &title.index.text_tracks {
        let secs = text.samples.end_dts() as f64 / f64::from(text.timescale);
        out.push_str(&format!(
            "track {} text {} lang={} timescale={} samples={} duration={secs:.3}s \
             edit(empty={}, media_time={})\n",
            text.track_id,
            text.format.fourcc(),
            text.language.as_deref().unwrap_or("und"),
            text.timescale,
            text.samples.len(),
            text.edits.leading_empty_ticks(),
            text.edits.first_media_time_ticks(),
        ));
    }
    out.push_str(&format!(
        "segments: {} (target {} ms)\n",
        title.plan.segment_count, title.plan.target_ms
    ));
    for segment in 0..title.plan.segment_count {
        let mut line = format!("  {:>4}", segment + 1);
        for (track, plan) in title.index.tracks.iter().zip(&title.plan.tracks) {
            if let (Some(range), Some((start, duration))) = (
                plan.samples(segment),
                plan.segment_span(&track.samples, segment),
            ) {
                let ts = f64::from(track.timescale);
                line.push_str(&format!(
                    "  t{}: {:.3}s +{:.3}s {} samples",
                    track.track_id,
                    start as f64 / ts,
                    duration as f64 / ts,
                    range.len()
                ));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Every edit of `edits` as the file has it, one line each, in seconds and in the track's
/// ticks (`timescale` per second).
fn edit_lines(edits: &crate::media::EditList, timescale: u32) -> String {
    let ts = f64::from(timescale.max(1));
    let mut out = String::new();
    for (n, edit) in edits.edits.iter().enumerate() {
        let media = edit.media_time_ticks.map_or("empty".to_owned(), |m| {
            format!("media_time={m} ({:.3}s)", m as f64 / ts)
        });
        out.push_str(&format!(
            "  edit {}: movie {:.3}s +{:.3}s ({} +{} ticks) {media}\n",
            n + 1,
            edit.start_ticks as f64 / ts,
            edit.duration_ticks as f64 / ts,
            edit.start_ticks,
            edit.duration_ticks,
        ));
    }
    out
}
