//! The parameter sets a `cbcs` video track's slice headers are read with: taken once from
//! its sample entry's `avcC`/`hvcC` and shared by every segment of the track (the server
//! keeps them with the cached title). In-band parameter sets are added per segment by the
//! scanner (`nal::NalScanner::with_slice_headers`).

use mp4_atom::{Atom, Avcc, Hvcc};

use super::boxes::video_config;
use super::ProtectError;
use crate::media::slice_header::SliceHeaderParams;

/// The parameter sets of the track whose `stsd` is given, for working out slice header
/// lengths.
///
/// An `avc1`/`hvc1`/`dvh1` entry must hold a usable PPS (one whose SPS is there too):
/// its samples carry none of their own. An `avc3`/`hev1`/`dvhe` entry may hold none; its
/// slices then need parameter sets earlier in their segment, and a slice with none fails
/// when it is read.
///
/// # Errors
/// [`ProtectError::UnsupportedCodec`] when the entry is not AVC or HEVC or its record
/// cannot be decoded, [`ProtectError::SliceHeader`] when an out-of-band record has no
/// usable parameter sets.
pub fn slice_header_params(stsd: &[u8], track_id: u32) -> Result<SliceHeaderParams, ProtectError> {
    let fourcc = stsd.get(20..24).unwrap_or_default();
    let unsupported = || ProtectError::UnsupportedCodec {
        fourcc: String::from_utf8_lossy(fourcc).into_owned(),
    };
    let config = video_config(stsd).ok_or_else(unsupported)?;
    let mut body = config.body;
    let (from_record, sets): (Option<SliceHeaderParams>, Vec<Vec<u8>>) = if config.hevc {
        let hvcc = Hvcc::decode_body(&mut body).map_err(|_| unsupported())?;
        let sets = (hvcc.arrays.iter())
            .flat_map(|a| a.nalus.iter().cloned())
            .collect();
        (SliceHeaderParams::from_hvcc(&hvcc), sets)
    } else {
        let avcc = Avcc::decode_body(&mut body).map_err(|_| unsupported())?;
        let sets = (avcc.sequence_parameter_sets.iter())
            .chain(&avcc.picture_parameter_sets)
            .cloned()
            .collect();
        (SliceHeaderParams::from_avcc(&avcc), sets)
    };
    if let Some(params) = from_record {
        return Ok(params);
    }
    if !config.in_band {
        return Err(ProtectError::SliceHeader {
            track_id,
            reason: "its sample entry holds no usable SPS and PPS".into(),
        });
    }
    // Whatever the record holds may still serve, with sets that come in band.
    let mut params = if config.hevc {
        SliceHeaderParams::hevc()
    } else {
        SliceHeaderParams::avc()
    };
    for nal in &sets {
        params.add_parameter_set(nal);
    }
    Ok(params)
}
