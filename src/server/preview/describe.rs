//! The text description of one media file, as `vodpack inspect` prints it and the preview
//! page shows it: size, the `moov` reads, fragments, every track (codec, size or rate,
//! colour, language, timescale, samples, duration, edits) and the segment plan.
//!
//! Read with the server's limits through any source, and planned as the server plans it
//! (`package::Title`); a file that cannot be packaged still shows its edits before the
//! reason, since an edit list is the usual culprit.

use std::sync::Arc;

use crate::media::{load_index_report, FragmentDiscovery, MediaError, MediaLimits};
use crate::package::{PackageError, Title};
use crate::source::{MediaSource, ObjectKey, SourceError};

/// Why the detail of a file could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DetailError {
    /// The source could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The file is not a usable MP4.
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

/// The size, tracks, edits, fragments and segment plan of the media file `key`, as text.
///
/// # Errors
/// The read or parse error, or the edit list that cannot be packaged (after its edits).
/// What the caption scan found in the video's first samples (`media::captions`), and
/// what the title announces (a document's `closed_captions` replace the scan's).
fn captions_line(title: &Title, caption_reads: u32) -> String {
    let names = |channels: Vec<String>| match channels.is_empty() {
        true => "none".to_owned(),
        false => channels.join(", "),
    };
    let found = (title.index.tracks.iter())
        .flat_map(|t| t.captions.iter().map(ToString::to_string))
        .collect();
    let announced = (title.closed_captions.iter())
        .map(|c| c.channel.to_string())
        .collect();
    format!(
        "captions: found {} (SEI of the first samples, {caption_reads} reads of their own), announced {}\n",
        names(found),
        names(announced)
    )
}

pub async fn describe(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    limits: &MediaLimits,
    segment_duration_ms: u32,
    encryption: crate::crypto::EncryptionPolicy,
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
    out.push_str(&captions_line(&title, report.caption_reads));
    out.push_str(&encryption_lines(&title, encryption));
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

/// What `inspect` says of encryption: the server's policy (`--encryption`) (a title
/// document's `"encryption"` overrides it per title), and whether each track can be
/// encrypted (AV1 and VP9 video cannot, and are refused with 422 when it applies).
fn encryption_lines(title: &Title, policy: crate::crypto::EncryptionPolicy) -> String {
    use crate::package::encrypt::TrackProtection;
    let mut out = format!("encryption: {policy} (--encryption)\n");
    if policy.any() {
        for track in &title.index.tracks {
            let verdict = TrackProtection::sample_format(&track.sample_description, track.kind)
                .map_or_else(|e| e.to_string(), |_| "can be encrypted".to_owned());
            out.push_str(&format!("  track {}: {verdict}\n", track.track_id));
        }
    }
    out
}
