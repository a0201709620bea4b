//! Init segments: `ftyp` + `moov` describing tracks with no samples, and `mvex`.
//!
//! A CMAF init segment describes one track ([`init_segment`]), a muxed one several with the
//! same boxes ([`muxed_init_segment`]), so the two cannot drift apart. The sample description
//! is the source's own bytes, so any codec configuration reaches the player exactly as the
//! source has it; the one edit written is a video track's composition delay.

use super::writer::BoxWriter;
use crate::media::{TrackIndex, TrackKind, UNITY_MATRIX};
use crate::package::plan::composition_delay;

/// The init segment of `track` (ISO/IEC 23000-19 7.3.2.2).
pub fn init_segment(track: &TrackIndex) -> Vec<u8> {
    write_init(&[track], &[b"iso6", b"cmfc", b"mp41", b"dash"])
}

/// The init segment of a muxed fMP4 stream of `tracks`, in that order: one `moov` with a
/// `trak` and a `trex` per track (ISO/IEC 14496-12 8.8.1). Not CMAF (whose files hold one
/// track), so its brands leave out `cmfc`; the movie timescale is the first track's.
pub fn muxed_init_segment(tracks: &[&TrackIndex]) -> Vec<u8> {
    write_init(tracks, &[b"iso6", b"mp41"])
}

/// `ftyp` (major brand `iso6`, then `brands`) and a `moov` of `tracks`.
fn write_init(tracks: &[&TrackIndex], brands: &[&[u8; 4]]) -> Vec<u8> {
    let stsd_bytes: usize = tracks.iter().map(|t| t.sample_description.len()).sum();
    let mut w = BoxWriter::with_capacity(256 + 768 * tracks.len() + stsd_bytes);
    w.begin(b"ftyp");
    w.bytes(b"iso6");
    w.u32(0);
    for brand in brands {
        w.bytes(*brand);
    }
    // AV1-ISOBMFF 2.1: a file with an AV1 track "SHALL have the av01 brand among the
    // compatible brands" (found by ComplianceWarden on the joined CMAF tracks).
    if tracks.iter().any(|t| &t.codec.fourcc == b"av01") {
        w.bytes(b"av01");
    }
    w.end();

    w.begin(b"moov");
    w.begin_full(b"mvhd", 0, 0);
    w.u32(0); // creation_time
    w.u32(0); // modification_time
    w.u32(tracks.first().map_or(1000, |t| t.timescale));
    w.u32(0); // duration: unknown in a fragmented file
    w.u32(0x0001_0000); // rate 1.0
    w.u16(0x0100); // volume 1.0
    w.zeros(10);
    // Each track's matrix already holds the source's `mvhd` one (`media::TrackIndex`).
    UNITY_MATRIX.iter().for_each(|v| w.i32(*v));
    w.zeros(24); // pre_defined
    let last_id = tracks.iter().map(|t| t.track_id).max().unwrap_or(0);
    w.u32(last_id.saturating_add(1)); // next_track_ID
    w.end();
    for track in tracks {
        write_trak(&mut w, track);
    }
    w.begin(b"mvex");
    for track in tracks {
        w.begin_full(b"trex", 0, 0);
        w.u32(track.track_id);
        w.u32(1); // default_sample_description_index
        w.u32(0);
        w.u32(0);
        w.u32(0);
        w.end();
    }
    w.end(); // mvex
    w.end(); // moov
    w.finish()
}

/// `edts(elst)` with one edit taking back `track`'s composition delay, when it has one
/// (ISO/IEC 14496-12 8.6.6: "It is recommended that such an edit be used to establish a
/// presentation time of 0 for the first presented sample, when composition offsets are
/// used"). Its duration is 0, which in an empty initial movie covers the fragments to come
/// (8.6.6.1); MSE requires players to apply it (ISO BMFF byte stream format 3).
fn write_composition_edit(w: &mut BoxWriter, track: &TrackIndex) {
    let delay = composition_delay(track);
    if delay == 0 {
        return;
    }
    w.begin(b"edts");
    w.begin_full(b"elst", 0, 0);
    w.u32(1); // entry_count
    w.u32(0); // segment_duration
    w.u32(delay); // media_time (at most i32::MAX)
    w.u16(1); // media_rate_integer
    w.u16(0); // media_rate_fraction
    w.end(); // elst
    w.end(); // edts
}

/// The `trak` of `track`: header, media header, handler and an empty sample table around
/// the source's `stsd`.
fn write_trak(w: &mut BoxWriter, track: &TrackIndex) {
    w.begin(b"trak");
    w.begin_full(b"tkhd", 0, 0x3); // enabled, in movie
    w.u32(0);
    w.u32(0);
    w.u32(track.track_id);
    w.u32(0); // reserved
    w.u32(0); // duration
    w.zeros(8);
    w.u16(0); // layer
    w.u16(0); // alternate_group
    w.u16(if track.kind == TrackKind::Audio {
        0x0100
    } else {
        0
    });
    w.u16(0);
    track.display_matrix.iter().for_each(|v| w.i32(*v));
    w.u32(track.tkhd_width);
    w.u32(track.tkhd_height);
    w.end();
    write_composition_edit(w, track);

    w.begin(b"mdia");
    w.begin_full(b"mdhd", 0, 0);
    w.u32(0);
    w.u32(0);
    w.u32(track.timescale);
    w.u32(0);
    w.u16(packed_language(track.language.as_deref().unwrap_or("und")));
    w.u16(0);
    w.end();
    w.begin_full(b"hdlr", 0, 0);
    w.u32(0);
    let (handler, name): (&[u8; 4], &[u8]) = match track.kind {
        TrackKind::Video => (b"vide", b"VideoHandler\0"),
        TrackKind::Audio => (b"soun", b"SoundHandler\0"),
    };
    w.bytes(handler);
    w.zeros(12);
    w.bytes(name);
    w.end();

    w.begin(b"minf");
    match track.kind {
        TrackKind::Video => {
            w.begin_full(b"vmhd", 0, 1);
            w.zeros(8); // graphicsmode, opcolor
            w.end();
        }
        TrackKind::Audio => {
            w.begin_full(b"smhd", 0, 0);
            w.zeros(4); // balance, reserved
            w.end();
        }
    }
    write_dinf_and_empty_stbl(w, &track.sample_description);
    w.end(); // minf
    w.end(); // mdia
    w.end(); // trak
}

/// `dinf` (media data in this file) and an `stbl` of `stsd` (the whole box) with empty
/// sample tables, as in every fragmented track's init: its samples are in the fragments.
pub(crate) fn write_dinf_and_empty_stbl(w: &mut BoxWriter, stsd: &[u8]) {
    w.begin(b"dinf");
    w.begin_full(b"dref", 0, 0);
    w.u32(1);
    w.begin_full(b"url ", 0, 1); // media data in the same file
    w.end();
    w.end();
    w.end();
    w.begin(b"stbl");
    w.bytes(stsd);
    for kind in [b"stts", b"stsc", b"stco"] {
        w.begin_full(kind, 0, 0);
        w.u32(0);
        w.end();
    }
    w.begin_full(b"stsz", 0, 0);
    w.u32(0);
    w.u32(0);
    w.end();
    w.end(); // stbl
}

/// ISO 639-2/T code packed as three 5-bit letters (14496-12 8.4.2.3); `und` if malformed.
pub(crate) fn packed_language(code: &str) -> u16 {
    let bytes = code.as_bytes();
    if bytes.len() != 3 || !bytes.iter().all(u8::is_ascii_lowercase) {
        return packed_language("und");
    }
    bytes
        .iter()
        .fold(0u16, |acc, b| (acc << 5) | u16::from(b - 0x60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_pack_as_in_the_spec() {
        assert_eq!(packed_language("und"), 0x55c4);
        assert_eq!(packed_language("eng"), 0x15c7);
        assert_eq!(packed_language("EN"), 0x55c4);
    }
}
