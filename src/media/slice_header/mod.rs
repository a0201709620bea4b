//! How many bytes at the start of a video NAL unit must stay clear under `cbcs` encryption:
//! the NAL unit header and the whole slice header (ISO/IEC 23001-7 9.5 and 10.4, Apple's
//! "HLS Sample Encryption": the protected range of a VCL NAL unit starts in its slice
//! data). The slice header's length depends on fields of the track's sequence and picture
//! parameter sets, so this module keeps those (by id) and walks the slice header of
//! H.264 (7.3.3 `slice_header()`) and H.265 (7.3.6.1 `slice_segment_header()`) to its end.

mod avc;
mod hevc;

use mp4_atom::{Avcc, Hvcc};

use super::bits::{escaped_len, unescape_rbsp};
use super::param_sets::{avc as avc_sets, hevc as hevc_sets};

/// At most this many bytes of a NAL unit are read: a slice header (entry points of many
/// tiles included) fits well within them. Callers capturing the start of each NAL unit
/// need keep no more.
pub const MAX_SLICE_HEADER_BYTES: usize = 4096;

/// The parameter sets of one AVC or HEVC track, as far as slice header lengths need them.
#[derive(Debug, Clone)]
pub struct SliceHeaderParams {
    codec: Codec,
}

#[derive(Debug, Clone)]
enum Codec {
    Avc(avc::AvcParams),
    Hevc(hevc::HevcParams),
}

impl SliceHeaderParams {
    /// No parameter sets yet, for an AVC track (add them with
    /// [`SliceHeaderParams::add_parameter_set`]).
    pub fn avc() -> Self {
        Self {
            codec: Codec::Avc(avc::AvcParams::new()),
        }
    }

    /// No parameter sets yet, for an HEVC track.
    pub fn hevc() -> Self {
        Self {
            codec: Codec::Hevc(hevc::HevcParams::new()),
        }
    }

    /// The parameter sets of an `avcC` record; `None` when it holds no usable PPS.
    pub fn from_avcc(avcc: &Avcc) -> Option<Self> {
        let mut params = Self::avc();
        let sets = avcc.sequence_parameter_sets.iter();
        for nal in sets.chain(&avcc.picture_parameter_sets) {
            params.add_parameter_set(nal);
        }
        params.has_usable_pps().then_some(params)
    }

    /// The parameter sets of an `hvcC` record; `None` when it holds no usable PPS.
    pub fn from_hvcc(hvcc: &Hvcc) -> Option<Self> {
        let mut params = Self::hevc();
        for array in &hvcc.arrays {
            for nal in &array.nalus {
                params.add_parameter_set(nal);
            }
        }
        params.has_usable_pps().then_some(params)
    }

    /// Takes in one NAL unit (header included, escaped) if it is an SPS or a PPS of this
    /// codec, replacing any earlier set with its id: true when it was. A parameter set that
    /// cannot be read is dropped, and an earlier PPS with its id forgotten.
    pub fn add_parameter_set(&mut self, nal: &[u8]) -> bool {
        let Some(&first) = nal.first() else {
            return false;
        };
        match &mut self.codec {
            Codec::Avc(params) => match first & 0x1f {
                7 => match avc_sets::parse_sps(&unescape_rbsp(nal)) {
                    Some((sps, _)) => keep(&mut params.sps, sps.sps_id, Some(sps)),
                    None => false,
                },
                8 => {
                    let rbsp = unescape_rbsp(nal);
                    match avc_sets::pps_id(&rbsp) {
                        Some(id) => keep(&mut params.pps, id, avc_sets::parse_pps(&rbsp)),
                        None => false,
                    }
                }
                _ => false,
            },
            Codec::Hevc(params) => match (first >> 1) & 0x3f {
                33 => match hevc_sets::parse_sps(&unescape_rbsp(nal)) {
                    Some((sps, _)) => keep(&mut params.sps, sps.sps_id, Some(sps)),
                    None => false,
                },
                34 => {
                    let rbsp = unescape_rbsp(nal);
                    match hevc_sets::pps_id(&rbsp) {
                        Some(id) => keep(&mut params.pps, id, hevc_sets::parse_pps(&rbsp)),
                        None => false,
                    }
                }
                _ => false,
            },
        }
    }

    /// Whether some PPS refers to a known SPS.
    fn has_usable_pps(&self) -> bool {
        match &self.codec {
            Codec::Avc(p) => (p.pps.iter().flatten())
                .any(|pps| p.sps.get(pps.sps_id as usize).is_some_and(Option::is_some)),
            Codec::Hevc(p) => (p.pps.iter().flatten())
                .any(|pps| p.sps.get(pps.sps_id as usize).is_some_and(Option::is_some)),
        }
    }

    /// How many bytes at the start of the VCL NAL unit `nal` (as stored: NAL header
    /// included, emulation prevention bytes present) hold its NAL header and whole slice
    /// header, a partly used last byte included: where the protected range may start.
    /// `nal` may be only the start of the NAL unit (the first [`MAX_SLICE_HEADER_BYTES`]
    /// are enough). `None` when it cannot be told: not a slice this parser reads, an
    /// unknown parameter set, a header cut short or out of the standard's bounds.
    pub fn clear_len(&self, nal: &[u8]) -> Option<usize> {
        let prefix = nal.get(..nal.len().min(MAX_SLICE_HEADER_BYTES))?;
        let rbsp = unescape_rbsp(prefix);
        let bits = match &self.codec {
            Codec::Avc(params) => params.header_bits(&rbsp)?,
            Codec::Hevc(params) => params.header_bits(&rbsp)?,
        };
        escaped_len(prefix, bits.div_ceil(8))
    }
}

/// Put `set` in the slot of `id` in `table` (an id past the table is refused): true when a
/// set was kept. `None` (a set that could not be read) empties the slot, so a later slice
/// never meets an older set of that id.
fn keep<T>(table: &mut [Option<T>], id: u32, set: Option<T>) -> bool {
    let Some(slot) = usize::try_from(id).ok().and_then(|i| table.get_mut(i)) else {
        return false;
    };
    *slot = set;
    slot.is_some()
}

#[cfg(test)]
mod tests;
