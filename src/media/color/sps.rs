//! The colour description in the VUI of an HEVC or AVC sequence parameter set (H.265
//! 7.3.2.2 and E.2.1, H.264 7.3.2.1.1 and E.1.1), for sample entries without `colr`.
//! Every syntax element before the VUI is walked with a bounded bit reader over the RBSP;
//! a parameter set that ends early or breaks a bound gives `None`.

use mp4_atom::{Avcc, Hvcc};

use super::{ColorInfo, ColorSource};
use crate::media::bits::{unescape_rbsp, BitReader};

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

#[cfg(test)]
mod tests;
