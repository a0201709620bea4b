//! The colour description in the VUI of an HEVC or AVC sequence parameter set (H.265
//! 7.3.2.2 and E.2.1, H.264 7.3.2.1.1 and E.1.1), for sample entries without `colr`.
//! Every syntax element before the VUI is walked by `media::param_sets` (shared with the
//! slice header parser) with a bounded bit reader over the RBSP; a parameter set that ends
//! early or breaks a bound gives `None`.

use mp4_atom::{Avcc, Hvcc};

use super::{ColorInfo, ColorSource};
use crate::media::bits::{unescape_rbsp, BitReader};
use crate::media::param_sets::{avc, hevc};

/// The colour of the first HEVC sequence parameter set in `hvcC` that has a VUI colour
/// description.
pub(crate) fn from_hevc_vui(hvcc: &Hvcc) -> Option<ColorInfo> {
    const SPS_NUT: u8 = 33;
    let sps = hvcc
        .arrays
        .iter()
        .filter(|a| a.nal_unit_type & 0x3f == SPS_NUT)
        .flat_map(|a| &a.nalus);
    sps.filter_map(|nal| hevc_sps_color(&unescape_rbsp(nal)))
        .next()
}

/// The colour of the first AVC sequence parameter set in `avcC` that has a VUI colour
/// description.
pub(crate) fn from_avc_vui(avcc: &Avcc) -> Option<ColorInfo> {
    (avcc.sequence_parameter_sets.iter())
        .filter_map(|nal| avc_sps_color(&unescape_rbsp(nal)))
        .next()
}

/// H.265 7.3.2.2 `seq_parameter_set_rbsp()` up to `vui_parameters()` (E.2.1), reading only
/// as far as the colour description.
fn hevc_sps_color(rbsp: &[u8]) -> Option<ColorInfo> {
    let (_, mut r) = hevc::parse_sps(rbsp)?;
    if !r.flag()? {
        return None; // no vui_parameters
    }
    vui_color(&mut r, ColorSource::HevcVui)
}

/// H.264 7.3.2.1.1 `seq_parameter_set_data()` up to `vui_parameters()` (E.1.1).
fn avc_sps_color(rbsp: &[u8]) -> Option<ColorInfo> {
    let (_, mut r) = avc::parse_sps(rbsp)?;
    if !r.flag()? {
        return None; // no vui_parameters
    }
    vui_color(&mut r, ColorSource::AvcVui)
}

/// The start of the VUI shared by H.265 E.2.1 and H.264 E.1.1, up to the colour
/// description.
fn vui_color(r: &mut BitReader<'_>, source: ColorSource) -> Option<ColorInfo> {
    if r.flag()? {
        // aspect_ratio_info_present_flag
        if r.bits(8)? == 255 {
            r.skip(32)?; // sar_width, sar_height
        }
    }
    if r.flag()? {
        r.skip(1)?; // overscan_appropriate_flag
    }
    if !r.flag()? {
        return None; // no video_signal_type
    }
    r.skip(3)?; // video_format
    let full_range = r.flag()?;
    if !r.flag()? {
        return None; // no colour_description
    }
    let primaries = u16::try_from(r.bits(8)?).ok()?;
    let transfer = u16::try_from(r.bits(8)?).ok()?;
    let matrix = u16::try_from(r.bits(8)?).ok()?;
    Some(ColorInfo {
        primaries,
        transfer,
        matrix,
        full_range,
        source,
    })
}

#[cfg(test)]
mod tests;
