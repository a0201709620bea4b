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
mod tests {
    //! Colour from the VUI of H.264 and HEVC sequence parameter sets, over real and mutated
    //! parameter sets.

    use super::*;

    /// The SPS in the `hvcC` of `fixtures/hevc-main10-hlg-aac-3s.mp4` (x265, Main 10, HLG
    /// in the VUI only: the file has no `colr`), emulation prevention bytes included.
    const X265_HLG_SPS: &[u8] = &[
        0x42, 0x01, 0x01, 0x02, 0x20, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00,
        0x03, 0x00, 0x3c, 0xa0, 0x0a, 0x08, 0x0b, 0x9f, 0x6d, 0x96, 0x56, 0x69, 0x24, 0xca, 0xf0,
        0x16, 0xa1, 0x22, 0x41, 0x20, 0x80, 0x00, 0x00, 0x03, 0x00, 0x80, 0x00, 0x00, 0x0f, 0x04,
    ];

    /// The SPS of an x264 High 10 stream made with `-color_primaries bt2020 -color_trc
    /// arib-std-b67 -colorspace bt2020nc`.
    const X264_HLG_SPS: &[u8] = &[
        0x67, 0x6e, 0x00, 0x0d, 0xa6, 0xcd, 0x94, 0x14, 0x19, 0xf9, 0xf0, 0x16, 0xa1, 0x22, 0x41,
        0x28, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x01, 0xe0, 0x78, 0xa1, 0x4c, 0xb0,
    ];

    /// An SPS built to walk every branch before the VUI: two sub-layers with profile and
    /// level, explicit scaling lists, PCM, four short-term reference picture sets of which
    /// three are predicted (the third yields a delta POC of 0, which the derivation drops,
    /// so the fourth has 3 flags, not 4), two long-term pictures, then a VUI with an
    /// explicit aspect ratio and colour 9/18/9, full range. ffmpeg's own parser (`-bsf:v
    /// trace_headers`) reads the same fields from it.
    const BRANCHY_SPS: &[u8] = &[
        0x42, 0x01, 0x03, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00,
        0x03, 0x00, 0x5d, 0xc0, 0x00, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
        0x00, 0x00, 0x03, 0x00, 0x5a, 0xa0, 0x0a, 0x08, 0x0b, 0x9f, 0x6d, 0x96, 0x57, 0x2b, 0xd5,
        0xa5, 0xaa, 0xac, 0xae, 0x88, 0x57, 0x44, 0x2b, 0xa2, 0x15, 0xd1, 0x0a, 0xe8, 0x85, 0x74,
        0x42, 0xba, 0x21, 0x5d, 0x10, 0xae, 0x88, 0x57, 0x44, 0x2b, 0xa2, 0x15, 0xd1, 0x0a, 0xe9,
        0x55, 0x9c, 0xae, 0x88, 0x57, 0x44, 0x2b, 0xa2, 0x15, 0xd1, 0x0a, 0xe8, 0x85, 0x74, 0x42,
        0xba, 0x21, 0x5d, 0x10, 0xae, 0x88, 0x57, 0x44, 0x2b, 0xa2, 0x15, 0xd1, 0x0a, 0xe9, 0x55,
        0x5e, 0xef, 0x52, 0xb5, 0xaa, 0xfa, 0x65, 0xa5, 0xf6, 0x23, 0xc8, 0x7f, 0xf8, 0x00, 0x20,
        0x00, 0x1d, 0xb8, 0x48, 0x90, 0x48, 0x04,
    ];

    fn avcc_with_sps(sps: &[u8]) -> Avcc {
        Avcc {
            sequence_parameter_sets: vec![sps.to_vec()],
            ..Default::default()
        }
    }

    fn hvcc_with_sps(sps: &[u8]) -> Hvcc {
        Hvcc {
            arrays: vec![mp4_atom::HvcCArray {
                completeness: true,
                nal_unit_type: 33,
                nalus: vec![sps.to_vec()],
            }],
            ..Hvcc::new()
        }
    }

    #[test]
    fn hevc_vui_gives_the_colour_when_there_is_no_colr() {
        let color = from_hevc_vui(&hvcc_with_sps(X265_HLG_SPS)).expect("colour in the VUI");
        assert_eq!(
            (
                color.primaries,
                color.transfer,
                color.matrix,
                color.full_range
            ),
            (9, 18, 9, false)
        );
        assert_eq!(color.source, ColorSource::HevcVui);
        // Every truncation of the SPS is "no colour", never a panic.
        for len in 0..X265_HLG_SPS.len() - 1 {
            let _ = from_hevc_vui(&hvcc_with_sps(&X265_HLG_SPS[..len]));
        }
        assert_eq!(from_hevc_vui(&hvcc_with_sps(&X265_HLG_SPS[..20])), None);
        assert_eq!(from_hevc_vui(&Hvcc::new()), None);
    }

    #[test]
    fn hevc_vui_is_found_past_scaling_lists_pcm_and_predicted_reference_sets() {
        let color = from_hevc_vui(&hvcc_with_sps(BRANCHY_SPS)).expect("colour in the VUI");
        assert_eq!(
            (
                color.primaries,
                color.transfer,
                color.matrix,
                color.full_range
            ),
            (9, 18, 9, true)
        );
    }

    /// Flipping any one bit of the parameter sets, or cutting them anywhere, never panics.
    #[test]
    fn mutated_parameter_sets_never_panic() {
        for sample in [X265_HLG_SPS, BRANCHY_SPS, X264_HLG_SPS] {
            for bit in 0..sample.len() * 8 {
                let mut bytes = sample.to_vec();
                bytes[bit / 8] ^= 0x80 >> (bit % 8);
                let _ = from_hevc_vui(&hvcc_with_sps(&bytes));
                let _ = from_avc_vui(&avcc_with_sps(&bytes));
            }
            for len in 0..sample.len() {
                let _ = from_hevc_vui(&hvcc_with_sps(&sample[..len]));
                let _ = from_avc_vui(&avcc_with_sps(&sample[..len]));
            }
        }
    }

    #[test]
    fn avc_vui_gives_the_colour_when_there_is_no_colr() {
        let color = from_avc_vui(&avcc_with_sps(X264_HLG_SPS)).expect("colour in the VUI");
        assert_eq!(
            (
                color.primaries,
                color.transfer,
                color.matrix,
                color.full_range
            ),
            (9, 18, 9, false)
        );
        assert_eq!(color.source, ColorSource::AvcVui);
    }
}
