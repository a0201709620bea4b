//! Loading a `MediaIndex` from a source: locate the boxes (async reads), find the movie
//! fragments when `moov` declares them (more async reads), then parse on the blocking
//! pool, where a caught panic becomes an error instead of a dead worker.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::captions::{ScanPlan, ScanWindow};
use super::fragments::{declares_fragments, find_fragments, FoundFragments};
use super::locate::{locate_in, Reader, TopLevelBoxes};
use super::parse::parse_with_fragments;
use super::{FragmentReport, MediaError, MediaIndex, MediaLimits};
use crate::source::{MediaSource, ObjectIdentity, ObjectKey};

/// What loading an index took, for `vodpack inspect` and the tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Source reads taken to find and read `moov`.
    pub moov_reads: u32,
    /// For a fragmented file (a `moov` with `mvex`), how its fragments were found and what
    /// that took; `None` for a progressive file.
    pub fragments: Option<FragmentReport>,
    /// Batches read for the caption scan (`media::captions`): 0 when the bytes read for
    /// `moov` held every sample head it looks at (on an object store, all but a rare
    /// layout), else 1.
    pub caption_reads: u32,
}

/// Read and parse the index of the object version `identity` under `key`.
///
/// # Errors
/// Any [`MediaError`]: the object is not a usable MP4, breaks a limit, or cannot be read.
pub async fn load_index(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    Ok(load_index_report(source, key, identity, limits).await?.0)
}

/// [`load_index`], also saying what the load took.
///
/// # Errors
/// As [`load_index`].
pub async fn load_index_report(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
) -> Result<(MediaIndex, IndexReport), MediaError> {
    let reader = Reader::Source {
        source: source.as_ref(),
        key,
        identity,
    };
    let boxes = locate_in(reader, identity.size, limits).await?;
    let fragments = match declares_fragments(&boxes.moov)? {
        true => Some(find_fragments(reader, identity.size, &boxes, limits).await?),
        false => None,
    };
    let mut report = IndexReport {
        moov_reads: boxes.reads,
        fragments: fragments.as_ref().map(|f| f.report),
        caption_reads: 0,
    };
    let window = scan_window(identity.size, &boxes);
    let identity = identity.clone();
    let limits = *limits;
    let (mut index, rest) = blocking(move || {
        let mut index = parse_with_fragments(identity, &boxes.moov, fragments.as_ref(), &limits)?;
        let plan = ScanPlan::new(&index, &window);
        let missing = plan.missing(&window);
        if missing.is_empty() {
            plan.apply(&mut index, &window);
            return Ok((index, None));
        }
        Ok((index, Some((plan, window, missing))))
    })
    .await?;
    // A source whose reads are not round trips (local disk) gets here. An object store's
    // load has read the window with the open and `moov`, unless `moov` sits between media
    // far from both ends (more than `max_moov_bytes` after it): then this is one more GET.
    if let Some((plan, mut window, missing)) = rest {
        let bytes = reader.read_many(&missing).await?;
        window
            .held
            .extend(missing.iter().map(|r| r.start).zip(bytes));
        report.caption_reads = 1;
        index = blocking(move || {
            plan.apply(&mut index, &window);
            Ok(index)
        })
        .await?;
    }
    Ok((index, report))
}

/// Run `work` on the blocking pool, a panic in it becoming an error.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, MediaError> + Send + 'static,
) -> Result<T, MediaError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| MediaError::Internal {
            reason: if join.is_panic() {
                "parser panicked".to_owned()
            } else {
                join.to_string()
            },
        })?
}

/// The bytes the caption scan looks in, and those of them the load holds already.
fn scan_window(size: u64, boxes: &TopLevelBoxes) -> ScanWindow {
    let moov_end = boxes.moov_offset.saturating_add(boxes.moov.len() as u64);
    ScanWindow::new(size, &boxes.probe, moov_end, boxes.after_moov.clone())
}

/// The index of a whole MP4 file held in memory, through the same walk and parse as
/// [`load_index`] (same reads, same checks), synchronously. For the fuzz targets and the
/// mutation test; the server always goes through a source.
///
/// # Errors
/// As [`load_index`].
#[doc(hidden)]
pub fn index_from_bytes(file: &Bytes, limits: &MediaLimits) -> Result<MediaIndex, MediaError> {
    Ok(report_from_bytes(file, limits)?.0)
}

/// [`index_from_bytes`], also saying what the load took.
pub(super) fn report_from_bytes(
    file: &Bytes,
    limits: &MediaLimits,
) -> Result<(MediaIndex, IndexReport), MediaError> {
    let size = file.len() as u64;
    let pending = || MediaError::Internal {
        reason: "an in-memory read did not complete at once".to_owned(),
    };
    let reader = Reader::Memory(file);
    let located = ready(locate_in(reader, size, limits)).ok_or_else(pending)??;
    let fragments: Option<FoundFragments> = match declares_fragments(&located.moov)? {
        true => Some(ready(find_fragments(reader, size, &located, limits)).ok_or_else(pending)??),
        false => None,
    };
    let mut report = IndexReport {
        moov_reads: located.reads,
        fragments: fragments.as_ref().map(|f| f.report),
        caption_reads: 0,
    };
    let identity = ObjectIdentity {
        size,
        version: "memory".to_owned(),
    };
    let mut index = parse_with_fragments(identity, &located.moov, fragments.as_ref(), limits)?;
    let mut window = scan_window(size, &located);
    let plan = ScanPlan::new(&index, &window);
    let missing = plan.missing(&window);
    if !missing.is_empty() {
        let bytes = ready(reader.read_many(&missing)).ok_or_else(pending)??;
        window
            .held
            .extend(missing.iter().map(|r| r.start).zip(bytes));
        report.caption_reads = 1;
    }
    plan.apply(&mut index, &window);
    Ok((index, report))
}

/// Polls `future` once: in-memory reads never wait, so it is ready then.
fn ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Bytes {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        Bytes::from(std::fs::read(path).unwrap())
    }

    fn too_large(result: Result<MediaIndex, MediaError>) -> &'static str {
        match result {
            Err(MediaError::TooLarge { limit, .. }) => limit,
            other => panic!("expected a limit, got {other:?}"),
        }
    }

    #[test]
    fn faststart_and_moov_at_end_give_the_same_index() {
        let limits = MediaLimits::default();
        let front = index_from_bytes(&fixture("h264-aac-3s.mp4"), &limits).unwrap();
        let end = index_from_bytes(&fixture("h264-aac-3s-moov-end.mp4"), &limits).unwrap();
        assert_eq!(front.tracks.len(), 2);
        for (a, b) in front.tracks.iter().zip(&end.tracks) {
            assert_eq!(a.samples.sizes, b.samples.sizes);
            assert_eq!(a.samples.dts, b.samples.dts);
            assert_eq!(a.sample_description, b.sample_description);
        }
    }

    /// Given a loaded index, then none of its bytes are a window on the file's: the
    /// `moov` buffer (megabytes for a long title) is let go once the offsets are worked
    /// out, instead of being held by a few hundred bytes of `stsd` for as long as the title
    /// is cached, unweighed by the metadata cache.
    #[test]
    fn an_index_holds_no_window_on_the_file() {
        let file = fixture("h264-aac-3s.mp4");
        let index = index_from_bytes(&file, &MediaLimits::default()).unwrap();
        let within = file.as_ptr_range();
        for track in &index.tracks {
            let stsd = track.sample_description.as_ptr();
            assert!(!within.contains(&stsd), "track {} stsd", track.track_id);
            assert_eq!(&track.sample_description[4..8], b"stsd");
        }
    }

    #[test]
    fn header_reads_past_the_probe_are_limited() {
        // ftyp, then 40 empty `free` boxes, each outside a 16-byte probe.
        let mut file = fixture("h264-aac-3s.mp4").slice(..32).to_vec();
        for _ in 0..40 {
            file.extend_from_slice(&[0, 0, 0, 8, b'f', b'r', b'e', b'e']);
        }
        let limits = MediaLimits {
            probe_bytes: 16,
            ..MediaLimits::default()
        };
        assert_eq!(
            too_large(index_from_bytes(&Bytes::from(file), &limits)),
            "max_header_reads"
        );
    }

    #[test]
    fn samples_are_counted_per_file_before_tables_are_expanded() {
        // 90 video and 142 audio samples.
        let file = fixture("h264-aac-3s.mp4");
        let per_file = MediaLimits {
            max_samples_per_file: 200,
            ..MediaLimits::default()
        };
        assert_eq!(
            too_large(index_from_bytes(&file, &per_file)),
            "max_samples_per_file"
        );
        let per_track = MediaLimits {
            max_samples_per_track: 100,
            ..MediaLimits::default()
        };
        assert_eq!(
            too_large(index_from_bytes(&file, &per_track)),
            "max_samples_per_track"
        );
    }
}
