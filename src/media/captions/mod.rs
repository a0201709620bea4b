//! Closed captions carried in the video (CEA-608 channels, CEA-708 services in ATSC A/53
//! `GA94` user data of H.264/HEVC SEI), found by a bounded scan when a title is indexed.
//!
//! MP4 metadata does not say whether the video carries captions, so the heads of the first
//! video samples are read: SEI units precede the slices of an access unit, and A/53 puts
//! `cc_data()` in every picture while captions are on, so a sample's first bytes up to its
//! first slice (at most [`HEAD_BYTES`]) hold them. The scan is bounded to bytes the index
//! load reads anyway, so it costs a cold title no store round trip: the object's first
//! `probe_bytes` (the open's GET; for `moov` at the end it holds the first samples, for a
//! faststart file those after a short `moov`), and, when `moov` runs past them, the
//! [`AFTER_MOOV_BYTES`] after `moov` ([`after_moov`]), fetched by the same GET as the rest
//! of `moov`; the open's learner then brings them in its first GET. At most
//! [`MAX_SAMPLES`] samples per track. Longer notes and measurements: docs/design/modules.md. The window depends on the file and the settings
//! only, never on what a replica happens to hold, so every replica announces the same
//! channels. A caption first sent later than the window (a programme whose first line
//! comes after a minute of silence, with no padding) is missed: a title document's
//! `closed_captions` says so instead, and overrides the scan.

mod cc;
mod sei;
#[cfg(test)]
mod testing;

use bytes::Bytes;

use super::elementary::{stream_config, StreamConfig};
use super::{MediaIndex, TrackKind};
use crate::source::{ByteRange, MAX_OPEN_BYTES};

use cc::CaptionTracker;
use sei::{read_sample_head, NalFraming};

/// Bytes read of each sample's head: x264 writes its settings (about 700 bytes) as
/// unregistered user data in the first access unit, before the captions' SEI.
pub(crate) const HEAD_BYTES: u64 = 4 * 1024;

/// Bytes after a `moov` that runs past the probe read with its rest, for the scan: about
/// a second of a 2 Mbit/s title's first samples.
pub(crate) const AFTER_MOOV_BYTES: u64 = 256 * 1024;

/// The bytes after a `moov` ending at `moov_end` that the scan looks in, for an object of
/// `size` bytes: [`AFTER_MOOV_BYTES`], within the object, and never past the most an
/// object store's open reads (`MAX_OPEN_BYTES`) when `moov` ends before it, so a head
/// learned to hold `moov` is not pushed past that cap into a second GET by the scan.
pub(crate) fn after_moov(size: u64, moov_end: u64) -> ByteRange {
    let mut len = AFTER_MOOV_BYTES.min(size.saturating_sub(moov_end));
    if let Some(room) = MAX_OPEN_BYTES.checked_sub(moov_end) {
        len = len.min(room);
    }
    ByteRange::new(moov_end, len)
}

/// Most samples scanned per video track (10 s at 30 frames per second; the byte window
/// bounds it first for any real bit rate).
pub(crate) const MAX_SAMPLES: usize = 300;

/// The parts of an object the scan looks in, and the bytes of them in hand.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanWindow {
    /// The ranges the scan may read: deterministic for the file and the settings.
    pub ranges: Vec<ByteRange>,
    /// Bytes already read, by start offset.
    pub held: Vec<(u64, Bytes)>,
}

impl ScanWindow {
    /// The window of an object of `size` bytes whose first `probe_len` bytes are `probe`
    /// and whose `moov` ends at `moov_end`; `read_after`, the bytes after it when the load
    /// read them with `moov`.
    pub(crate) fn new(size: u64, probe: &Bytes, moov_end: u64, read_after: Option<Bytes>) -> Self {
        let probe_len = probe.len() as u64;
        let mut ranges = vec![ByteRange::new(0, probe_len)];
        let after = after_moov(size, moov_end);
        if moov_end > probe_len && after.len > 0 {
            ranges.push(after);
        }
        let mut held = vec![(0, probe.clone())];
        if let Some(bytes) = read_after {
            held.push((moov_end, bytes));
        }
        Self { ranges, held }
    }

    /// `range`, if one held read covers it.
    fn slice(&self, range: ByteRange) -> Option<Bytes> {
        self.held.iter().find_map(|(start, bytes)| {
            let from = usize::try_from(range.start.checked_sub(*start)?).ok()?;
            let to = from.checked_add(usize::try_from(range.len).ok()?)?;
            (to <= bytes.len()).then(|| bytes.slice(from..to))
        })
    }

    /// The part of the window from `offset` on, up to `len` bytes; `None` outside it.
    fn clip(&self, offset: u64, len: u64) -> Option<ByteRange> {
        let within = self
            .ranges
            .iter()
            .find(|r| r.start <= offset && offset < r.end())?;
        Some(ByteRange::new(offset, len.min(within.end() - offset)))
    }
}

/// The sample heads to scan, per video track whose samples are NAL units.
#[derive(Debug, Default)]
pub(crate) struct ScanPlan {
    tracks: Vec<TrackScan>,
}

#[derive(Debug)]
struct TrackScan {
    /// Position in `MediaIndex::tracks`.
    position: usize,
    framing: NalFraming,
    heads: Vec<ByteRange>,
}

impl ScanPlan {
    /// The heads of the first samples of each H.264/HEVC video track of `index` that
    /// start inside `window`, each cut to it.
    pub(crate) fn new(index: &MediaIndex, window: &ScanWindow) -> Self {
        let mut tracks = Vec::new();
        for (position, track) in index.tracks.iter().enumerate() {
            if track.kind != TrackKind::Video {
                continue;
            }
            let framing = match stream_config(&track.sample_description) {
                StreamConfig::Avc { length_size, .. } => NalFraming {
                    length_size,
                    hevc: false,
                },
                StreamConfig::Hevc { length_size, .. } => NalFraming {
                    length_size,
                    hevc: true,
                },
                _ => continue,
            };
            let samples = &track.samples;
            let offsets = samples.first_offsets(MAX_SAMPLES);
            let heads: Vec<ByteRange> = (offsets.iter().zip(&samples.sizes))
                .filter_map(|(offset, size)| window.clip(*offset, u64::from(*size).min(HEAD_BYTES)))
                .filter(|head| head.len > 0)
                .collect();
            if !heads.is_empty() {
                tracks.push(TrackScan {
                    position,
                    framing,
                    heads,
                });
            }
        }
        Self { tracks }
    }

    /// The heads not in hand, in file order, merged where they touch: one batch to read
    /// (at most `MAX_SAMPLES` heads of [`HEAD_BYTES`] per video track).
    pub(crate) fn missing(&self, window: &ScanWindow) -> Vec<ByteRange> {
        let mut missing: Vec<ByteRange> = (self.tracks.iter())
            .flat_map(|t| t.heads.iter().copied())
            .filter(|head| window.slice(*head).is_none())
            .collect();
        missing.sort_by_key(|r| r.start);
        // Heads that touch or overlap (small samples end to end in a chunk) are one range.
        let mut merged: Vec<ByteRange> = Vec::with_capacity(missing.len());
        for head in missing {
            match merged.last_mut() {
                Some(last) if head.start <= last.end() => {
                    last.len = last.len.max(head.end() - last.start);
                }
                _ => merged.push(head),
            }
        }
        merged
    }

    /// Scan the heads (all held by `window` now) and note on each track what it carries.
    /// A head not held is skipped: the scan never fails a load.
    pub(crate) fn apply(&self, index: &mut MediaIndex, window: &ScanWindow) {
        for scan in &self.tracks {
            let mut tracker = CaptionTracker::default();
            for head in &scan.heads {
                if let Some(bytes) = window.slice(*head) {
                    read_sample_head(&bytes, scan.framing, &mut tracker);
                }
            }
            if let Some(track) = index.tracks.get_mut(scan.position) {
                track.captions = tracker.channels();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::{index_from_bytes, MediaLimits};

    fn probe(len: usize) -> Bytes {
        Bytes::from(vec![0u8; len])
    }

    /// Given where `moov` ends, then the window is the probe, and the bytes after `moov`
    /// only when `moov` runs past the probe (never past the object); heads are cut to it.
    #[test]
    fn the_window_is_the_probe_and_what_follows_a_long_moov() {
        let inside = ScanWindow::new(1_000_000, &probe(1000), 800, None);
        assert_eq!(inside.ranges, vec![ByteRange::new(0, 1000)]);
        let past = ScanWindow::new(1_000_000, &probe(1000), 5000, Some(probe(10)));
        let after = ByteRange::new(5000, AFTER_MOOV_BYTES);
        assert_eq!(past.ranges, vec![ByteRange::new(0, 1000), after]);
        let at_end = ScanWindow::new(9000, &probe(1000), 9000, None);
        assert_eq!(at_end.ranges, vec![ByteRange::new(0, 1000)]);
        let near_end = ScanWindow::new(6000, &probe(1000), 5000, None);
        assert_eq!(near_end.ranges[1], ByteRange::new(5000, 1000));
        // Never past what an open may bring when `moov` ends before it.
        let big = 1 << 30;
        let below_cap = ScanWindow::new(big, &probe(1000), MAX_OPEN_BYTES - 100, None);
        assert_eq!(below_cap.ranges[1].len, 100);
        let at_cap = ScanWindow::new(big, &probe(1000), MAX_OPEN_BYTES, None);
        assert_eq!(at_cap.ranges.len(), 1);
        let past_cap = ScanWindow::new(big, &probe(1000), MAX_OPEN_BYTES + 1, None);
        assert_eq!(past_cap.ranges[1].len, AFTER_MOOV_BYTES);
        assert_eq!(past.clip(990, 4096), Some(ByteRange::new(990, 10)));
        assert_eq!(past.clip(1000, 4096), None);
        assert_eq!(past.slice(ByteRange::new(5002, 8)), Some(probe(8)));
        assert_eq!(past.slice(ByteRange::new(5002, 9)), None);
    }

    /// Given heads partly in hand, then the rest are one batch, touching ones merged, and
    /// a head inside a merged read is found in it.
    #[test]
    fn missing_heads_are_merged_where_they_touch() {
        let window = ScanWindow::new(1_000_000, &probe(1000), 800, None);
        let framing = NalFraming {
            length_size: 4,
            hevc: false,
        };
        let heads = [(500, 100), (2000, 100), (2100, 50), (2120, 10), (5000, 10)];
        let plan = ScanPlan {
            tracks: vec![TrackScan {
                position: 0,
                framing,
                heads: heads.iter().map(|&(s, l)| ByteRange::new(s, l)).collect(),
            }],
        };
        let missing = plan.missing(&window);
        assert_eq!(
            missing,
            vec![ByteRange::new(2000, 150), ByteRange::new(5000, 10)]
        );
        let mut held = window.clone();
        held.held.push((2000, probe(150)));
        assert!(held.slice(ByteRange::new(2120, 10)).is_some());
    }

    /// Given a track whose offsets are left for later, then its first offsets are worked
    /// out alone and equal those of the whole track.
    #[test]
    fn first_offsets_of_a_long_track_equal_the_whole_tracks() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join("h264-aac-3s.mp4");
        let file = Bytes::from(std::fs::read(path).unwrap());
        let limits = MediaLimits {
            offsets_at_load_max_samples: 0,
            ..MediaLimits::default()
        };
        let index = index_from_bytes(&file, &limits).unwrap();
        for track in &index.tracks {
            assert!(!track.samples.offsets_known());
            let first = track.samples.first_offsets(MAX_SAMPLES);
            assert!(!track.samples.offsets_known(), "not all worked out");
            let all = track.samples.offsets();
            assert_eq!(first, all[..first.len()].to_vec());
            assert_eq!(first.len(), all.len().min(MAX_SAMPLES));
        }
    }
}
