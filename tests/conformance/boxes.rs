//! What a source MP4's boxes say about its timing: the movie timescale, and each track's
//! handler, media timescale and edit list (ISO/IEC 14496-12 8.4.2, 8.4.3, 8.6.5, 8.6.6),
//! read by a small walk of our own, so the tests take the source's edits from neither
//! vodpack's parser nor ffmpeg's reading of them.

use std::path::Path;

/// One `elst` entry: `duration` in movie ticks, `media_time` in media ticks (-1: an empty
/// edit), and the integer part of `media_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) duration: u64,
    pub(crate) media_time: i64,
    pub(crate) rate: i16,
}

/// One track's timing boxes.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrackTiming {
    /// `hdlr` handler type: "vide", "soun", ...
    pub(crate) handler: String,
    /// `mdhd` timescale (media ticks per second).
    pub(crate) timescale: u32,
    /// The `elst` entries; empty when the track has no edit list.
    pub(crate) edits: Vec<Edit>,
}

/// A movie's timing boxes.
#[derive(Debug, Clone, Default)]
pub(crate) struct MovieTiming {
    /// `mvhd` timescale (movie ticks per second).
    pub(crate) timescale: u32,
    pub(crate) tracks: Vec<TrackTiming>,
}

impl MovieTiming {
    /// The first track with `handler` ("vide", "soun").
    pub(crate) fn track(&self, handler: &str) -> Option<&TrackTiming> {
        self.tracks.iter().find(|t| t.handler == handler)
    }

    /// Seconds of the empty edits before `track`'s first media edit.
    pub(crate) fn leading_empty_s(&self, track: &TrackTiming) -> f64 {
        let ticks: u64 = (track.edits.iter())
            .take_while(|e| e.media_time < 0)
            .map(|e| e.duration)
            .sum();
        ticks as f64 / f64::from(self.timescale.max(1))
    }
}

impl TrackTiming {
    /// The first media edit, if the track has an edit list with one.
    pub(crate) fn first_media_edit(&self) -> Option<Edit> {
        self.edits.iter().copied().find(|e| e.media_time >= 0)
    }

    /// The first media edit's start, in seconds of media time.
    pub(crate) fn first_media_time_s(&self) -> Option<f64> {
        let edit = self.first_media_edit()?;
        Some(edit.media_time as f64 / f64::from(self.timescale.max(1)))
    }
}

/// The timing boxes of the MP4 at `path`. Panics if the file cannot be read; a box that is
/// cut short ends the walk of its parent.
pub(crate) fn movie_timing(path: &Path) -> MovieTiming {
    let file = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    movie_timing_of(&file)
}

/// The timing boxes of the MP4 bytes `file`.
pub(crate) fn movie_timing_of(file: &[u8]) -> MovieTiming {
    let mut movie = MovieTiming::default();
    for (kind, body) in children(file) {
        if kind != *b"moov" {
            continue;
        }
        for (kind, body) in children(body) {
            match &kind {
                b"mvhd" => movie.timescale = header_timescale(body).unwrap_or(0),
                b"trak" => movie.tracks.push(track_timing(body)),
                _ => {}
            }
        }
    }
    movie
}

fn track_timing(trak: &[u8]) -> TrackTiming {
    let mut track = TrackTiming::default();
    for (kind, body) in children(trak) {
        match &kind {
            b"edts" => {
                if let Some((_, elst)) = children(body).find(|(k, _)| k == b"elst") {
                    track.edits = edit_list(elst);
                }
            }
            b"mdia" => {
                for (kind, body) in children(body) {
                    match &kind {
                        b"mdhd" => track.timescale = header_timescale(body).unwrap_or(0),
                        // version and flags, pre_defined, then the handler type.
                        b"hdlr" => {
                            track.handler = (body.get(8..12))
                                .map(|h| String::from_utf8_lossy(h).into_owned())
                                .unwrap_or_default();
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    track
}

/// The timescale of an `mvhd` or `mdhd` body: after version and flags, creation and
/// modification times (4 bytes each in version 0, 8 in version 1).
fn header_timescale(body: &[u8]) -> Option<u32> {
    let at = if *body.first()? == 1 { 20 } else { 12 };
    Some(u32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?))
}

/// The entries of an `elst` body (version 0: 32-bit duration and media time, version 1:
/// 64-bit), as many as the body holds.
fn edit_list(body: &[u8]) -> Vec<Edit> {
    let version = body.first().copied().unwrap_or(0);
    let count = (body.get(4..8)).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let size = if version == 1 { 20 } else { 12 };
    let entries = body.get(8..).unwrap_or_default().chunks_exact(size);
    (entries.take(count as usize))
        .map(|e| {
            let be = |range: std::ops::Range<usize>| -> u64 {
                e[range].iter().fold(0, |n, b| n << 8 | u64::from(*b))
            };
            if version == 1 {
                Edit {
                    duration: be(0..8),
                    media_time: be(8..16) as i64,
                    rate: be(16..18) as u16 as i16,
                }
            } else {
                Edit {
                    duration: be(0..4),
                    media_time: i64::from(be(4..8) as u32 as i32),
                    rate: be(8..10) as u16 as i16,
                }
            }
        })
        .collect()
}

/// The boxes directly inside `bytes`: type and body, up to the first one cut short.
fn children(bytes: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let size32 = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        let kind: [u8; 4] = rest.get(4..8)?.try_into().ok()?;
        let (header, size) = match size32 {
            0 => (8, rest.len()),
            1 => (
                16,
                usize::try_from(u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?)).ok()?,
            ),
            n => (8, usize::try_from(n).ok()?),
        };
        let body = rest.get(header..size)?;
        rest = &rest[size..];
        Some((kind, body))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let size = u32::try_from(8 + body.len()).expect("a small box");
        [&size.to_be_bytes()[..], kind, body].concat()
    }

    /// Given an audio track opening with a 478 ms empty edit (version 0 `elst`) and a
    /// version 1 `mdhd`, then the walk reads the handler, both timescales and both edits.
    #[test]
    fn the_walk_reads_an_empty_edit_and_both_timescales() {
        let mvhd = [&[0u8; 12][..], &1000u32.to_be_bytes()].concat();
        let mdhd = [&[1u8, 0, 0, 0][..], &[0; 16], &48_000u32.to_be_bytes()].concat();
        let hdlr = [&[0u8; 8][..], b"soun", &[0; 12]].concat();
        let mut elst = vec![0u8, 0, 0, 0, 0, 0, 0, 2];
        for (duration, media_time) in [(478u32, -1i32), (29_526, 0)] {
            elst.extend(duration.to_be_bytes());
            elst.extend(media_time.to_be_bytes());
            elst.extend([0, 1, 0, 0]);
        }
        let mdia = [boxed(b"mdhd", &mdhd), boxed(b"hdlr", &hdlr)].concat();
        let trak = [
            boxed(b"edts", &boxed(b"elst", &elst)),
            boxed(b"mdia", &mdia),
        ]
        .concat();
        let moov = [boxed(b"mvhd", &mvhd), boxed(b"trak", &trak)].concat();
        let file = [boxed(b"ftyp", b"isom"), boxed(b"moov", &moov)].concat();

        let movie = movie_timing_of(&file);
        assert_eq!(movie.timescale, 1000);
        let audio = movie.track("soun").expect("the audio track");
        assert_eq!(audio.timescale, 48_000);
        assert_eq!(movie.leading_empty_s(audio), 0.478);
        assert_eq!(audio.first_media_time_s(), Some(0.0));
        assert_eq!(audio.edits.len(), 2);
        assert_eq!(audio.edits[0].rate, 1);
        // A file cut inside its moov ends the walk without a panic.
        let cut = movie_timing_of(&file[..file.len() - 30]);
        assert!(cut.track("soun").is_none());
    }
}
