//! The colour description of a video track (ISO/IEC 23091-2 / ITU-T H.273 code points:
//! colour primaries, transfer characteristics, matrix coefficients, range), which decides
//! HLS `VIDEO-RANGE` and the DASH CICP descriptors.
//!
//! Sources, first found wins: the sample entry's `colr` box (`nclx`, or QuickTime `nclc`;
//! ISO/IEC 14496-12 12.1.5), else the codec's own header: the VUI of the HEVC or AVC
//! sequence parameter set in `hvcC`/`avcC` (H.265 E.2.1, H.264 E.1.1), the AV1 sequence
//! header OBU in `av1C` `configOBUs` (AV1 5.5.2 `color_config`), or VP9's `vpcC`. Headers
//! come from the file: every parse is bounded and a header that cannot be read means "no
//! colour description", never a refused file (the samples still decode).

use mp4_atom::{Av1c, Avcc, Colr, Hvcc, VpcC};

use super::bits::{unescape_rbsp, BitReader};
use super::CodecInfo;

/// CICP transfer characteristics 16: SMPTE ST 2084 (PQ).
pub const TRANSFER_PQ: u16 = 16;
/// CICP transfer characteristics 18: ARIB STD-B67 (HLG).
pub const TRANSFER_HLG: u16 = 18;
/// CICP "unspecified", for any of the three code points.
pub const CICP_UNSPECIFIED: u16 = 2;

/// Where a track's colour description was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorSource {
    /// The sample entry's `colr` box.
    Colr,
    /// The VUI of the HEVC sequence parameter set in `hvcC`.
    HevcVui,
    /// The VUI of the AVC sequence parameter set in `avcC`.
    AvcVui,
    /// The AV1 sequence header OBU in `av1C`.
    Av1SequenceHeader,
    /// VP9's `vpcC` box.
    Vp9Config,
}

impl ColorSource {
    /// A short name for `inspect`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ColorSource::Colr => "colr",
            ColorSource::HevcVui => "hevc-vui",
            ColorSource::AvcVui => "avc-vui",
            ColorSource::Av1SequenceHeader => "av1-sequence-header",
            ColorSource::Vp9Config => "vpcC",
        }
    }
}

/// A video track's colour description: ISO/IEC 23091-2 code points as the file gives them
/// (2 means unspecified).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColorInfo {
    /// `ColourPrimaries` (1 BT.709, 9 BT.2020, ...).
    pub primaries: u16,
    /// `TransferCharacteristics` (1 BT.709, 16 PQ, 18 HLG, ...).
    pub transfer: u16,
    /// `MatrixCoefficients` (1 BT.709, 9 BT.2020 non-constant, ...).
    pub matrix: u16,
    /// Full-range samples (`VideoFullRangeFlag`); false for limited ("video") range.
    pub full_range: bool,
    /// Where these values were read.
    pub source: ColorSource,
}

/// The dynamic range of a video rendition, as HLS `VIDEO-RANGE` names it
/// (draft-pantos-hls-rfc8216bis 4.4.6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoRange {
    /// Standard dynamic range (any other transfer, or none given).
    Sdr,
    /// Perceptual quantizer, transfer characteristics 16.
    Pq,
    /// Hybrid log-gamma, transfer characteristics 18.
    Hlg,
}

impl VideoRange {
    /// The `VIDEO-RANGE` enumerated string.
    pub fn as_str(&self) -> &'static str {
        match self {
            VideoRange::Sdr => "SDR",
            VideoRange::Pq => "PQ",
            VideoRange::Hlg => "HLG",
        }
    }
}

impl CodecInfo {
    /// The dynamic range of this video track: PQ for transfer characteristics 16, HLG for
    /// 18, SDR otherwise. A Dolby Vision stream without a backward-compatible base layer
    /// (profile 5, 10.0) is PQ whatever its VUI says (its samples are IPTPQc2).
    pub fn video_range(&self) -> VideoRange {
        if self.dolby_vision.is_some_and(|dv| dv.compatibility_id == 0) {
            return VideoRange::Pq;
        }
        match self.color.map(|c| c.transfer) {
            Some(TRANSFER_PQ) => VideoRange::Pq,
            Some(TRANSFER_HLG) => VideoRange::Hlg,
            _ => VideoRange::Sdr,
        }
    }
}

/// The colour of a `colr` box: `nclx` and `nclc` carry code points; ICC profiles do not.
pub(crate) fn from_colr(colr: Option<&Colr>) -> Option<ColorInfo> {
    let (primaries, transfer, matrix, full_range) = match colr? {
        Colr::Nclx {
            colour_primaries,
            transfer_characteristics,
            matrix_coefficients,
            full_range_flag,
        } => (
            *colour_primaries,
            *transfer_characteristics,
            *matrix_coefficients,
            *full_range_flag,
        ),
        Colr::Nclc {
            colour_primaries,
            transfer_characteristics,
            matrix_coefficients,
        } => (
            *colour_primaries,
            *transfer_characteristics,
            *matrix_coefficients,
            false,
        ),
        _ => return None,
    };
    Some(ColorInfo {
        primaries,
        transfer,
        matrix,
        full_range,
        source: ColorSource::Colr,
    })
}

/// The colour of VP9's `vpcC` (VP Codec ISO Media File Format Binding 2.2), which always
/// carries the three code points.
pub(crate) fn from_vpcc(vpcc: &VpcC) -> ColorInfo {
    ColorInfo {
        primaries: u16::from(vpcc.color_primaries),
        transfer: u16::from(vpcc.transfer_characteristics),
        matrix: u16::from(vpcc.matrix_coefficients),
        full_range: vpcc.video_full_range_flag,
        source: ColorSource::Vp9Config,
    }
}

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

/// The colour of the AV1 sequence header among `av1C`'s `configOBUs`.
pub(crate) fn from_av1_config(av1c: &Av1c) -> Option<ColorInfo> {
    const OBU_SEQUENCE_HEADER: u8 = 1;
    let mut rest = av1c.config_obus.as_slice();
    while let Some((&header, after)) = rest.split_first() {
        // AV1 5.3.2: forbidden bit, type (4), extension flag, has_size_field, reserved.
        let obu_type = (header >> 3) & 0x0f;
        let has_extension = header & 0x04 != 0;
        let has_size = header & 0x02 != 0;
        let after = if has_extension {
            after.get(1..)?
        } else {
            after
        };
        let (payload, next) = if has_size {
            let (size, after) = leb128(after)?;
            let size = usize::try_from(size).ok()?;
            (after.get(..size)?, after.get(size..)?)
        } else {
            (after, &[][..])
        };
        if obu_type == OBU_SEQUENCE_HEADER {
            return av1_sequence_header_color(payload);
        }
        rest = next;
    }
    None
}

/// AV1 4.10.5 `leb128()`: at most 8 bytes, a value below 2^32.
fn leb128(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().take(8).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (value <= u64::from(u32::MAX)).then(|| (value, &bytes[i + 1..]));
        }
    }
    None
}

/// H.265 7.3.2.2 `seq_parameter_set_rbsp()` up to `vui_parameters()` (E.2.1), reading only
/// as far as the colour description.
fn hevc_sps_color(rbsp: &[u8]) -> Option<ColorInfo> {
    let mut r = BitReader::new(rbsp);
    r.skip(16)?; // nal_unit_header
    r.skip(4)?; // sps_video_parameter_set_id
    let max_sub_layers_minus1 = r.bits(3)?;
    r.skip(1)?; // sps_temporal_id_nesting_flag
    hevc_profile_tier_level(&mut r, max_sub_layers_minus1)?;
    r.ue()?; // sps_seq_parameter_set_id
    if r.ue()? == 3 {
        r.skip(1)?; // separate_colour_plane_flag
    }
    r.ue()?; // pic_width_in_luma_samples
    r.ue()?; // pic_height_in_luma_samples
    if r.flag()? {
        for _ in 0..4 {
            r.ue()?; // conformance window offsets
        }
    }
    r.ue()?; // bit_depth_luma_minus8
    r.ue()?; // bit_depth_chroma_minus8
    let log2_max_poc_lsb = r.ue()?.checked_add(4).filter(|v| *v <= 16)?;
    let sub_layer_ordering_info_present = r.flag()?;
    let first = if sub_layer_ordering_info_present {
        0
    } else {
        max_sub_layers_minus1
    };
    for _ in first..=max_sub_layers_minus1 {
        r.ue()?; // sps_max_dec_pic_buffering_minus1
        r.ue()?; // sps_max_num_reorder_pics
        r.ue()?; // sps_max_latency_increase_plus1
    }
    for _ in 0..6 {
        r.ue()?; // coding and transform block sizes, transform hierarchy depths
    }
    if r.flag()? && r.flag()? {
        // scaling_list_enabled_flag, sps_scaling_list_data_present_flag
        hevc_scaling_list_data(&mut r)?;
    }
    r.skip(2)?; // amp_enabled_flag, sample_adaptive_offset_enabled_flag
    if r.flag()? {
        // pcm_enabled_flag: bit depths (4 + 4), two sizes, loop filter flag.
        r.skip(8)?;
        r.ue()?;
        r.ue()?;
        r.skip(1)?;
    }
    let num_short_term_ref_pic_sets = r.ue()?;
    if num_short_term_ref_pic_sets > 64 {
        return None;
    }
    let mut sets: Vec<RefPicSet> = Vec::new();
    for index in 0..num_short_term_ref_pic_sets as usize {
        let set = hevc_st_ref_pic_set(&mut r, index, &sets)?;
        sets.push(set);
    }
    if r.flag()? {
        // long_term_ref_pics_present_flag
        let count = r.ue()?;
        if count > 32 {
            return None;
        }
        for _ in 0..count {
            r.skip(log2_max_poc_lsb as usize + 1)?; // lt_ref_pic_poc_lsb_sps, used flag
        }
    }
    r.skip(2)?; // sps_temporal_mvp_enabled_flag, strong_intra_smoothing_enabled_flag
    if !r.flag()? {
        return None; // no vui_parameters
    }
    vui_color(&mut r, ColorSource::HevcVui)
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

/// H.265 7.3.3 `profile_tier_level(1, max_sub_layers_minus1)`.
fn hevc_profile_tier_level(r: &mut BitReader<'_>, max_sub_layers_minus1: u32) -> Option<()> {
    r.skip(96)?; // general profile (8 bits), compatibility (32) and constraint flags (48), level (8)
    let mut profile_present = [false; 8];
    let mut level_present = [false; 8];
    for i in 0..max_sub_layers_minus1 as usize {
        profile_present[i] = r.flag()?;
        level_present[i] = r.flag()?;
    }
    if max_sub_layers_minus1 > 0 {
        for _ in max_sub_layers_minus1..8 {
            r.skip(2)?; // reserved_zero_2bits
        }
    }
    for i in 0..max_sub_layers_minus1 as usize {
        if profile_present[i] {
            r.skip(88)?;
        }
        if level_present[i] {
            r.skip(8)?;
        }
    }
    Some(())
}

/// H.265 7.3.4 `scaling_list_data()`, skipped.
fn hevc_scaling_list_data(r: &mut BitReader<'_>) -> Option<()> {
    for size_id in 0..4u32 {
        let step = if size_id == 3 { 3 } else { 1 };
        for _ in (0..6).step_by(step) {
            if !r.flag()? {
                r.ue()?; // scaling_list_pred_matrix_id_delta
                continue;
            }
            let coefficients = 64.min(1u32 << (4 + (size_id << 1)));
            if size_id > 1 {
                r.se()?; // scaling_list_dc_coef_minus8
            }
            for _ in 0..coefficients {
                r.se()?; // scaling_list_delta_coef
            }
        }
    }
    Some(())
}

/// The delta POCs of one short-term reference picture set (H.265 7.4.8): what later sets
/// predicted from it need to know to be parsed.
struct RefPicSet {
    /// `DeltaPocS0`: negative, in the order of the derivation.
    negative: Vec<i64>,
    /// `DeltaPocS1`: positive.
    positive: Vec<i64>,
}

/// At most this many pictures on either side of a set (`sps_max_dec_pic_buffering` is at
/// most 16).
const MAX_REF_PICS: usize = 16;

/// H.265 7.3.7 `st_ref_pic_set(index)` in an SPS, with the derivation of equations 7-61
/// and 7-62 for sets predicted from an earlier one.
fn hevc_st_ref_pic_set(
    r: &mut BitReader<'_>,
    index: usize,
    earlier: &[RefPicSet],
) -> Option<RefPicSet> {
    let predicted = index != 0 && r.flag()?;
    if !predicted {
        let negatives = r.ue()? as usize;
        let positives = r.ue()? as usize;
        if negatives > MAX_REF_PICS || positives > MAX_REF_PICS {
            return None;
        }
        let mut set = RefPicSet {
            negative: Vec::with_capacity(negatives),
            positive: Vec::with_capacity(positives),
        };
        let mut poc = 0i64;
        for _ in 0..negatives {
            poc -= i64::from(r.ue()?) + 1; // delta_poc_s0_minus1
            r.skip(1)?; // used_by_curr_pic_s0_flag
            set.negative.push(poc);
        }
        poc = 0;
        for _ in 0..positives {
            poc += i64::from(r.ue()?) + 1; // delta_poc_s1_minus1
            r.skip(1)?;
            set.positive.push(poc);
        }
        return Some(set);
    }
    // In an SPS the reference is always the set just before (delta_idx_minus1 is absent).
    let reference = earlier.get(index - 1)?;
    let sign = r.flag()?;
    let magnitude = i64::from(r.ue()?) + 1;
    let delta_rps = if sign { -magnitude } else { magnitude };
    let count = reference.negative.len() + reference.positive.len();
    // use_delta_flag per reference picture (S0 first, then S1), then one for delta_rps.
    let mut use_delta = Vec::with_capacity(count + 1);
    for _ in 0..=count {
        let used_by_curr_pic = r.flag()?;
        use_delta.push(used_by_curr_pic || r.flag()?);
    }
    let used = |j: usize| use_delta.get(j).copied().unwrap_or(false);
    let (ref_neg, ref_pos) = (&reference.negative, &reference.positive);
    let mut set = RefPicSet {
        negative: Vec::new(),
        positive: Vec::new(),
    };
    for (j, d) in ref_pos.iter().enumerate().rev() {
        let poc = d + delta_rps;
        if poc < 0 && used(ref_neg.len() + j) {
            set.negative.push(poc);
        }
    }
    if delta_rps < 0 && used(count) {
        set.negative.push(delta_rps);
    }
    for (j, d) in ref_neg.iter().enumerate() {
        let poc = d + delta_rps;
        if poc < 0 && used(j) {
            set.negative.push(poc);
        }
    }
    for (j, d) in ref_neg.iter().enumerate().rev() {
        let poc = d + delta_rps;
        if poc > 0 && used(j) {
            set.positive.push(poc);
        }
    }
    if delta_rps > 0 && used(count) {
        set.positive.push(delta_rps);
    }
    for (j, d) in ref_pos.iter().enumerate() {
        let poc = d + delta_rps;
        if poc > 0 && used(ref_neg.len() + j) {
            set.positive.push(poc);
        }
    }
    if set.negative.len() > MAX_REF_PICS || set.positive.len() > MAX_REF_PICS {
        return None;
    }
    Some(set)
}

/// H.264 7.3.2.1.1 `seq_parameter_set_data()` up to `vui_parameters()` (E.1.1).
fn avc_sps_color(rbsp: &[u8]) -> Option<ColorInfo> {
    let mut r = BitReader::new(rbsp);
    r.skip(8)?; // nal_unit_header
    let profile_idc = r.bits(8)?;
    r.skip(16)?; // constraint flags, level_idc
    r.ue()?; // seq_parameter_set_id
    if matches!(
        profile_idc,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        let chroma_format_idc = r.ue()?;
        if chroma_format_idc == 3 {
            r.skip(1)?; // separate_colour_plane_flag
        }
        r.ue()?; // bit_depth_luma_minus8
        r.ue()?; // bit_depth_chroma_minus8
        r.skip(1)?; // qpprime_y_zero_transform_bypass_flag
        if r.flag()? {
            // seq_scaling_matrix_present_flag
            let lists = if chroma_format_idc == 3 { 12 } else { 8 };
            for i in 0..lists {
                if r.flag()? {
                    avc_scaling_list(&mut r, if i < 6 { 16 } else { 64 })?;
                }
            }
        }
    }
    r.ue()?; // log2_max_frame_num_minus4
    match r.ue()? {
        0 => {
            r.ue()?; // log2_max_pic_order_cnt_lsb_minus4
        }
        1 => {
            r.skip(1)?; // delta_pic_order_always_zero_flag
            r.se()?; // offset_for_non_ref_pic
            r.se()?; // offset_for_top_to_bottom_field
            let cycle = r.ue()?;
            if cycle > 255 {
                return None;
            }
            for _ in 0..cycle {
                r.se()?;
            }
        }
        _ => {}
    }
    r.ue()?; // max_num_ref_frames
    r.skip(1)?; // gaps_in_frame_num_value_allowed_flag
    r.ue()?; // pic_width_in_mbs_minus1
    r.ue()?; // pic_height_in_map_units_minus1
    if !r.flag()? {
        r.skip(1)?; // mb_adaptive_frame_field_flag
    }
    r.skip(1)?; // direct_8x8_inference_flag
    if r.flag()? {
        for _ in 0..4 {
            r.ue()?; // frame cropping offsets
        }
    }
    if !r.flag()? {
        return None; // no vui_parameters
    }
    vui_color(&mut r, ColorSource::AvcVui)
}

/// H.264 7.3.2.1.1.1 `scaling_list()`, skipped.
fn avc_scaling_list(r: &mut BitReader<'_>, size: usize) -> Option<()> {
    let (mut last, mut next) = (8i64, 8i64);
    for _ in 0..size {
        if next != 0 {
            let delta = r.se()?;
            next = (last + delta).rem_euclid(256);
        }
        if next != 0 {
            last = next;
        }
    }
    Some(())
}

/// AV1 5.5.1 `sequence_header_obu()` up to `color_config()` (5.5.2).
fn av1_sequence_header_color(payload: &[u8]) -> Option<ColorInfo> {
    let mut r = BitReader::new(payload);
    let seq_profile = r.bits(3)?;
    r.skip(1)?; // still_picture
    let reduced_still_picture_header = r.flag()?;
    if reduced_still_picture_header {
        r.skip(5)?; // seq_level_idx[0]
    } else {
        let mut decoder_model_info_present = false;
        let mut buffer_delay_length = 0;
        if r.flag()? {
            // timing_info_present_flag: timing_info()
            r.skip(64)?; // num_units_in_display_tick, time_scale
            if r.flag()? {
                r.uvlc()?; // num_ticks_per_picture_minus_1
            }
            decoder_model_info_present = r.flag()?;
            if decoder_model_info_present {
                buffer_delay_length = r.bits(5)? as usize + 1;
                r.skip(32 + 5 + 5)?; // num_units_in_decoding_tick, two lengths
            }
        }
        let initial_display_delay_present = r.flag()?;
        let operating_points = r.bits(5)? + 1;
        for _ in 0..operating_points {
            r.skip(12)?; // operating_point_idc
            if r.bits(5)? > 7 {
                r.skip(1)?; // seq_tier
            }
            if decoder_model_info_present && r.flag()? {
                // operating_parameters_info(): two delays and low_delay_mode_flag.
                r.skip(2 * buffer_delay_length + 1)?;
            }
            if initial_display_delay_present && r.flag()? {
                r.skip(4)?; // initial_display_delay_minus_1
            }
        }
    }
    let width_bits = r.bits(4)? as usize + 1;
    let height_bits = r.bits(4)? as usize + 1;
    r.skip(width_bits + height_bits)?; // max_frame_width_minus_1, max_frame_height_minus_1
    if !reduced_still_picture_header && r.flag()? {
        // frame_id_numbers_present_flag
        r.skip(7)?;
    }
    r.skip(3)?; // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter
    if !reduced_still_picture_header {
        r.skip(4)?; // interintra, masked compound, warped motion, dual filter
        let enable_order_hint = r.flag()?;
        if enable_order_hint {
            r.skip(2)?; // enable_jnt_comp, enable_ref_frame_mvs
        }
        let force_screen_content_tools = if r.flag()? {
            true // seq_choose_screen_content_tools: SELECT_SCREEN_CONTENT_TOOLS (2)
        } else {
            r.flag()?
        };
        if force_screen_content_tools && !r.flag()? {
            // seq_choose_integer_mv is 0: seq_force_integer_mv follows.
            r.skip(1)?;
        }
        if enable_order_hint {
            r.skip(3)?; // order_hint_bits_minus_1
        }
    }
    r.skip(3)?; // enable_superres, enable_cdef, enable_restoration
                // color_config()
    let high_bitdepth = r.flag()?;
    if seq_profile == 2 && high_bitdepth {
        r.skip(1)?; // twelve_bit
    }
    let mono_chrome = seq_profile != 1 && r.flag()?;
    let (primaries, transfer, matrix) = if r.flag()? {
        (r.bits(8)?, r.bits(8)?, r.bits(8)?)
    } else {
        (2, 2, 2)
    };
    // sRGB (BT.709 primaries, sRGB transfer, identity matrix) is full range by definition.
    let full_range = if !mono_chrome && (primaries, transfer, matrix) == (1, 13, 0) {
        true
    } else {
        r.flag()?
    };
    Some(ColorInfo {
        primaries: u16::try_from(primaries).ok()?,
        transfer: u16::try_from(transfer).ok()?,
        matrix: u16::try_from(matrix).ok()?,
        full_range,
        source: ColorSource::Av1SequenceHeader,
    })
}

#[cfg(test)]
mod tests {
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

    /// The `configOBUs` of `fixtures/av1-10bit-pq-aac-3s.mp4` (SVT-AV1, PQ): one sequence
    /// header OBU with its size field.
    const SVT_AV1_PQ_OBUS: &[u8] = &[
        0x0a, 0x0e, 0x00, 0x00, 0x00, 0x04, 0x3c, 0xfe, 0xcc, 0x02, 0xf8, 0x50, 0x91, 0x00, 0x90,
        0x40,
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

    /// Flipping any one bit of the headers, or cutting them anywhere, never panics.
    #[test]
    fn mutated_headers_never_panic() {
        for sample in [X265_HLG_SPS, BRANCHY_SPS, X264_HLG_SPS, SVT_AV1_PQ_OBUS] {
            for bit in 0..sample.len() * 8 {
                let mut bytes = sample.to_vec();
                bytes[bit / 8] ^= 0x80 >> (bit % 8);
                let _ = from_hevc_vui(&hvcc_with_sps(&bytes));
                let avcc = Avcc {
                    sequence_parameter_sets: vec![bytes.clone()],
                    ..Default::default()
                };
                let _ = from_avc_vui(&avcc);
                let _ = from_av1_config(&av1c(&bytes));
            }
            for len in 0..sample.len() {
                let _ = from_hevc_vui(&hvcc_with_sps(&sample[..len]));
                let _ = from_av1_config(&av1c(&sample[..len]));
            }
        }
    }

    #[test]
    fn avc_vui_gives_the_colour_when_there_is_no_colr() {
        let avcc = Avcc {
            sequence_parameter_sets: vec![X264_HLG_SPS.to_vec()],
            ..Default::default()
        };
        let color = from_avc_vui(&avcc).expect("colour in the VUI");
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
        for len in 0..X264_HLG_SPS.len() - 1 {
            let avcc = Avcc {
                sequence_parameter_sets: vec![X264_HLG_SPS[..len].to_vec()],
                ..Default::default()
            };
            let _ = from_avc_vui(&avcc);
        }
    }

    fn av1c(config_obus: &[u8]) -> Av1c {
        Av1c {
            config_obus: config_obus.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn av1_sequence_header_gives_the_colour() {
        let color = from_av1_config(&av1c(SVT_AV1_PQ_OBUS)).expect("colour in the header");
        assert_eq!(
            (
                color.primaries,
                color.transfer,
                color.matrix,
                color.full_range
            ),
            (9, 16, 9, false)
        );
        assert_eq!(color.source, ColorSource::Av1SequenceHeader);
        // A metadata OBU (type 5) before the sequence header is stepped over.
        let mut with_metadata = vec![0x2a, 0x02, 0xaa, 0xbb];
        with_metadata.extend_from_slice(SVT_AV1_PQ_OBUS);
        assert_eq!(from_av1_config(&av1c(&with_metadata)), Some(color));
        for len in 0..SVT_AV1_PQ_OBUS.len() {
            assert_eq!(from_av1_config(&av1c(&SVT_AV1_PQ_OBUS[..len])), None);
        }
        // A size past the end, and a leb128 that never ends.
        assert_eq!(from_av1_config(&av1c(&[0x0a, 0x7f, 0x00])), None);
        assert_eq!(
            from_av1_config(&av1c(&[
                0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
            ])),
            None
        );
    }

    #[test]
    fn colr_boxes_and_video_ranges() {
        let nclx = Colr::Nclx {
            colour_primaries: 9,
            transfer_characteristics: 16,
            matrix_coefficients: 9,
            full_range_flag: true,
        };
        let color = from_colr(Some(&nclx)).expect("nclx");
        assert_eq!(
            (color.transfer, color.full_range, color.source),
            (16, true, ColorSource::Colr)
        );
        let nclc = Colr::Nclc {
            colour_primaries: 1,
            transfer_characteristics: 1,
            matrix_coefficients: 1,
        };
        assert_eq!(from_colr(Some(&nclc)).map(|c| c.full_range), Some(false));
        let icc = Colr::Prof {
            profile: vec![1, 2],
        };
        assert_eq!(from_colr(Some(&icc)), None);
        assert_eq!(from_colr(None), None);

        let mut info = CodecInfo {
            fourcc: *b"hvc1",
            rfc6381: "hvc1.2.4.L93.B0".into(),
            width: 320,
            height: 180,
            channels: 0,
            sample_rate: 0,
            color: None,
            dolby_vision: None,
        };
        assert_eq!(info.video_range(), VideoRange::Sdr);
        for (transfer, range) in [(16, "PQ"), (18, "HLG"), (1, "SDR"), (14, "SDR"), (2, "SDR")] {
            info.color = Some(ColorInfo { transfer, ..color });
            assert_eq!(info.video_range().as_str(), range, "transfer {transfer}");
        }
    }
}
