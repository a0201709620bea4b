//! H.265 7.3.2.2 `seq_parameter_set_rbsp()` up to the VUI and 7.3.2.3
//! `pic_parameter_set_rbsp()` up to its range extension.

use crate::media::bits::BitReader;

/// The fields of an HEVC SPS that the slice segment header depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HevcSps {
    /// `sps_seq_parameter_set_id` (raw, not range checked).
    pub sps_id: u32,
    /// True when the profile may use the screen content coding extensions (general profile
    /// 9 or above, or a compatibility flag 9 or above): their slice header fields
    /// (`use_integer_mv_flag`) depend on an SPS extension past the VUI, which is not read.
    pub maybe_scc: bool,
    /// `chroma_format_idc`.
    pub chroma_format_idc: u32,
    /// `separate_colour_plane_flag`.
    pub separate_colour_plane: bool,
    /// `pic_width_in_luma_samples`.
    pub width: u32,
    /// `pic_height_in_luma_samples`.
    pub height: u32,
    /// `log2_min_luma_coding_block_size_minus3`.
    pub log2_min_cb_minus3: u32,
    /// `log2_diff_max_min_luma_coding_block_size`.
    pub log2_diff_max_min_cb: u32,
    /// `log2_max_pic_order_cnt_lsb_minus4 + 4` (at most 16).
    pub log2_max_poc_lsb: u32,
    /// `sample_adaptive_offset_enabled_flag`.
    pub sao: bool,
    /// The short-term reference picture sets, in order.
    pub st_rps: Vec<RefPicSet>,
    /// `long_term_ref_pics_present_flag`.
    pub long_term_present: bool,
    /// `used_by_curr_pic_lt_sps_flag` of each of the `num_long_term_ref_pics_sps` pictures.
    pub lt_used: Vec<bool>,
    /// `sps_temporal_mvp_enabled_flag`.
    pub temporal_mvp: bool,
}

/// One short-term reference picture set (H.265 7.4.8): each picture's delta POC and
/// whether the current picture uses it (`UsedByCurrPicS0/S1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefPicSet {
    /// `DeltaPocS0` and `UsedByCurrPicS0`: negative, in the order of the derivation.
    pub negative: Vec<(i64, bool)>,
    /// `DeltaPocS1` and `UsedByCurrPicS1`: positive.
    pub positive: Vec<(i64, bool)>,
}

impl RefPicSet {
    /// `NumDeltaPocs`.
    pub fn num_delta_pocs(&self) -> usize {
        self.negative.len() + self.positive.len()
    }

    /// How many of the pictures the current picture uses.
    pub fn used_count(&self) -> usize {
        (self.negative.iter().chain(&self.positive))
            .filter(|(_, used)| *used)
            .count()
    }
}

/// At most this many pictures on either side of a set (`sps_max_dec_pic_buffering` is at
/// most 16).
const MAX_REF_PICS: usize = 16;

/// Walks an SPS RBSP (NAL header included) up to `vui_parameters_present_flag`; the reader
/// is left there.
pub(crate) fn parse_sps(rbsp: &[u8]) -> Option<(HevcSps, BitReader<'_>)> {
    let mut r = BitReader::new(rbsp);
    r.skip(16)?; // nal_unit_header
    r.skip(4)?; // sps_video_parameter_set_id
    let max_sub_layers_minus1 = r.bits(3)?;
    r.skip(1)?; // sps_temporal_id_nesting_flag
    let maybe_scc = profile_tier_level(&mut r, max_sub_layers_minus1)?;
    let sps_id = r.ue()?;
    let chroma_format_idc = r.ue()?;
    let separate_colour_plane = chroma_format_idc == 3 && r.flag()?;
    let width = r.ue()?;
    let height = r.ue()?;
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
    let log2_min_cb_minus3 = r.ue()?;
    let log2_diff_max_min_cb = r.ue()?;
    for _ in 0..4 {
        r.ue()?; // transform block sizes, transform hierarchy depths
    }
    if r.flag()? && r.flag()? {
        // scaling_list_enabled_flag, sps_scaling_list_data_present_flag
        scaling_list_data(&mut r)?;
    }
    r.skip(1)?; // amp_enabled_flag
    let sao = r.flag()?;
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
    let mut st_rps: Vec<RefPicSet> = Vec::new();
    for index in 0..num_short_term_ref_pic_sets as usize {
        let set = st_ref_pic_set(&mut r, index, &st_rps, false)?;
        st_rps.push(set);
    }
    let long_term_present = r.flag()?;
    let mut lt_used = Vec::new();
    if long_term_present {
        let count = r.ue()?;
        if count > 32 {
            return None;
        }
        for _ in 0..count {
            r.skip(log2_max_poc_lsb as usize)?; // lt_ref_pic_poc_lsb_sps
            lt_used.push(r.flag()?);
        }
    }
    let temporal_mvp = r.flag()?;
    r.skip(1)?; // strong_intra_smoothing_enabled_flag
    let sps = HevcSps {
        sps_id,
        maybe_scc,
        chroma_format_idc,
        separate_colour_plane,
        width,
        height,
        log2_min_cb_minus3,
        log2_diff_max_min_cb,
        log2_max_poc_lsb,
        sao,
        st_rps,
        long_term_present,
        lt_used,
        temporal_mvp,
    };
    Some((sps, r))
}

/// H.265 7.3.3 `profile_tier_level(1, max_sub_layers_minus1)`; true when the general
/// profile may be a screen content coding one (see [`HevcSps::maybe_scc`]).
fn profile_tier_level(r: &mut BitReader<'_>, max_sub_layers_minus1: u32) -> Option<bool> {
    r.skip(3)?; // general_profile_space, general_tier_flag
    let profile_idc = r.bits(5)?;
    let compatibility = r.bits(32)?;
    r.skip(56)?; // constraint flags (48), general_level_idc (8)
                 // Compatibility flag j is bit 31 - j: flags 9 to 31 are the low 23 bits.
    let maybe_scc = profile_idc >= 9 || compatibility & 0x007f_ffff != 0;
    let mut profile_present = [false; 8];
    let mut level_present = [false; 8];
    for i in 0..max_sub_layers_minus1 as usize {
        *profile_present.get_mut(i)? = r.flag()?;
        *level_present.get_mut(i)? = r.flag()?;
    }
    if max_sub_layers_minus1 > 0 {
        for _ in max_sub_layers_minus1..8 {
            r.skip(2)?; // reserved_zero_2bits
        }
    }
    for i in 0..max_sub_layers_minus1 as usize {
        if *profile_present.get(i)? {
            r.skip(88)?;
        }
        if *level_present.get(i)? {
            r.skip(8)?;
        }
    }
    Some(maybe_scc)
}

/// H.265 7.3.4 `scaling_list_data()`, skipped.
fn scaling_list_data(r: &mut BitReader<'_>) -> Option<()> {
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

/// H.265 7.3.7 `st_ref_pic_set(index)` with the derivation of equations 7-61 and 7-62 for
/// sets predicted from an earlier one. `earlier` holds the SPS's sets before `index`; in a
/// slice header (`in_slice`), `index` is `num_short_term_ref_pic_sets` and the set it is
/// predicted from is chosen by `delta_idx_minus1`.
pub(crate) fn st_ref_pic_set(
    r: &mut BitReader<'_>,
    index: usize,
    earlier: &[RefPicSet],
    in_slice: bool,
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
            set.negative.push((poc, r.flag()?)); // used_by_curr_pic_s0_flag
        }
        poc = 0;
        for _ in 0..positives {
            poc += i64::from(r.ue()?) + 1; // delta_poc_s1_minus1
            set.positive.push((poc, r.flag()?));
        }
        return Some(set);
    }
    // In an SPS the reference is the set just before (delta_idx_minus1 is absent).
    let delta_idx = if in_slice {
        usize::try_from(r.ue()?).ok()?.checked_add(1)?
    } else {
        1
    };
    let reference = earlier.get(index.checked_sub(delta_idx)?)?;
    let sign = r.flag()?;
    let magnitude = i64::from(r.ue()?) + 1;
    let delta_rps = if sign { -magnitude } else { magnitude };
    let count = reference.num_delta_pocs();
    // Per reference picture (S0 first, then S1), then one for delta_rps:
    // (used_by_curr_pic_flag, use_delta_flag).
    let mut flags = Vec::with_capacity(count + 1);
    for _ in 0..=count {
        let used_by_curr_pic = r.flag()?;
        flags.push((used_by_curr_pic, used_by_curr_pic || r.flag()?));
    }
    let flag = |j: usize| flags.get(j).copied().unwrap_or((false, false));
    let (ref_neg, ref_pos) = (&reference.negative, &reference.positive);
    let mut set = RefPicSet {
        negative: Vec::new(),
        positive: Vec::new(),
    };
    for (j, (d, _)) in ref_pos.iter().enumerate().rev() {
        let poc = d + delta_rps;
        let (used, use_delta) = flag(ref_neg.len() + j);
        if poc < 0 && use_delta {
            set.negative.push((poc, used));
        }
    }
    let (used, use_delta) = flag(count);
    if delta_rps < 0 && use_delta {
        set.negative.push((delta_rps, used));
    }
    for (j, (d, _)) in ref_neg.iter().enumerate() {
        let poc = d + delta_rps;
        let (used, use_delta) = flag(j);
        if poc < 0 && use_delta {
            set.negative.push((poc, used));
        }
    }
    for (j, (d, _)) in ref_neg.iter().enumerate().rev() {
        let poc = d + delta_rps;
        let (used, use_delta) = flag(j);
        if poc > 0 && use_delta {
            set.positive.push((poc, used));
        }
    }
    let (used, use_delta) = flag(count);
    if delta_rps > 0 && use_delta {
        set.positive.push((delta_rps, used));
    }
    for (j, (d, _)) in ref_pos.iter().enumerate() {
        let poc = d + delta_rps;
        let (used, use_delta) = flag(ref_neg.len() + j);
        if poc > 0 && use_delta {
            set.positive.push((poc, used));
        }
    }
    if set.negative.len() > MAX_REF_PICS || set.positive.len() > MAX_REF_PICS {
        return None;
    }
    Some(set)
}

/// The fields of an HEVC PPS that the slice segment header depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HevcPps {
    /// `pps_pic_parameter_set_id` (raw).
    pub pps_id: u32,
    /// `pps_seq_parameter_set_id` (raw).
    pub sps_id: u32,
    /// `dependent_slice_segments_enabled_flag`.
    pub dependent_slice_segments: bool,
    /// `output_flag_present_flag`.
    pub output_flag_present: bool,
    /// `num_extra_slice_header_bits`.
    pub num_extra_slice_header_bits: u32,
    /// `cabac_init_present_flag`.
    pub cabac_init_present: bool,
    /// `num_ref_idx_l0_default_active_minus1` (raw).
    pub num_ref_idx_l0_default_minus1: u32,
    /// `num_ref_idx_l1_default_active_minus1` (raw).
    pub num_ref_idx_l1_default_minus1: u32,
    /// `pps_slice_chroma_qp_offsets_present_flag`.
    pub slice_chroma_qp_offsets_present: bool,
    /// `weighted_pred_flag`.
    pub weighted_pred: bool,
    /// `weighted_bipred_flag`.
    pub weighted_bipred: bool,
    /// `tiles_enabled_flag`.
    pub tiles: bool,
    /// `entropy_coding_sync_enabled_flag`.
    pub entropy_coding_sync: bool,
    /// `pps_loop_filter_across_slices_enabled_flag`.
    pub loop_filter_across_slices: bool,
    /// `deblocking_filter_override_enabled_flag`.
    pub deblocking_override_enabled: bool,
    /// `pps_deblocking_filter_disabled_flag`.
    pub deblocking_disabled: bool,
    /// `lists_modification_present_flag`.
    pub lists_modification_present: bool,
    /// `slice_segment_header_extension_present_flag`.
    pub slice_header_extension_present: bool,
    /// `chroma_qp_offset_list_enabled_flag` (range extension).
    pub chroma_qp_offset_list: bool,
    /// The multilayer, 3D or screen content extension is present: their slice header
    /// fields are not read.
    pub unsupported_extension: bool,
}

/// The `pps_pic_parameter_set_id` of a PPS RBSP (NAL header included).
pub(crate) fn pps_id(rbsp: &[u8]) -> Option<u32> {
    let mut r = BitReader::new(rbsp);
    r.skip(16)?;
    r.ue()
}

/// H.265 7.3.2.3.1 `pic_parameter_set_rbsp()` (NAL header included), through
/// `pps_range_extension()` (7.3.2.3.2).
pub(crate) fn parse_pps(rbsp: &[u8]) -> Option<HevcPps> {
    let mut r = BitReader::new(rbsp);
    r.skip(16)?; // nal_unit_header
    let pps_id = r.ue()?;
    let sps_id = r.ue()?;
    let dependent_slice_segments = r.flag()?;
    let output_flag_present = r.flag()?;
    let num_extra_slice_header_bits = r.bits(3)?;
    r.skip(1)?; // sign_data_hiding_enabled_flag
    let cabac_init_present = r.flag()?;
    let num_ref_idx_l0_default_minus1 = r.ue()?;
    let num_ref_idx_l1_default_minus1 = r.ue()?;
    r.se()?; // init_qp_minus26
    r.skip(1)?; // constrained_intra_pred_flag
    let transform_skip = r.flag()?;
    if r.flag()? {
        r.ue()?; // cu_qp_delta_enabled_flag: diff_cu_qp_delta_depth
    }
    r.se()?; // pps_cb_qp_offset
    r.se()?; // pps_cr_qp_offset
    let slice_chroma_qp_offsets_present = r.flag()?;
    let weighted_pred = r.flag()?;
    let weighted_bipred = r.flag()?;
    r.skip(1)?; // transquant_bypass_enabled_flag
    let tiles = r.flag()?;
    let entropy_coding_sync = r.flag()?;
    if tiles {
        let columns = r.ue()?;
        let rows = r.ue()?;
        if columns > 64 || rows > 64 {
            return None;
        }
        if !r.flag()? {
            // uniform_spacing_flag off: column_width_minus1, row_height_minus1
            for _ in 0..columns + rows {
                r.ue()?;
            }
        }
        r.skip(1)?; // loop_filter_across_tiles_enabled_flag
    }
    let loop_filter_across_slices = r.flag()?;
    let (mut deblocking_override_enabled, mut deblocking_disabled) = (false, false);
    if r.flag()? {
        // deblocking_filter_control_present_flag
        deblocking_override_enabled = r.flag()?;
        deblocking_disabled = r.flag()?;
        if !deblocking_disabled {
            r.se()?; // pps_beta_offset_div2
            r.se()?; // pps_tc_offset_div2
        }
    }
    if r.flag()? {
        scaling_list_data(&mut r)?; // pps_scaling_list_data_present_flag
    }
    let lists_modification_present = r.flag()?;
    r.ue()?; // log2_parallel_merge_level_minus2
    let slice_header_extension_present = r.flag()?;
    let (mut chroma_qp_offset_list, mut unsupported_extension) = (false, false);
    if r.flag()? {
        // pps_extension_present_flag
        let range = r.flag()?;
        let multilayer = r.flag()?;
        let three_d = r.flag()?;
        let scc = r.flag()?;
        r.skip(4)?; // pps_extension_4bits
        unsupported_extension = multilayer || three_d || scc;
        if range {
            if transform_skip {
                r.ue()?; // log2_max_transform_skip_block_size_minus2
            }
            r.skip(1)?; // cross_component_prediction_enabled_flag
            chroma_qp_offset_list = r.flag()?;
            if chroma_qp_offset_list {
                r.ue()?; // diff_cu_chroma_qp_offset_depth
                let len = r.ue()?;
                if len > 5 {
                    return None;
                }
                for _ in 0..=len {
                    r.se()?; // cb_qp_offset_list
                    r.se()?; // cr_qp_offset_list
                }
            }
            r.ue()?; // log2_sao_offset_scale_luma
            r.ue()?; // log2_sao_offset_scale_chroma
        }
    }
    Some(HevcPps {
        pps_id,
        sps_id,
        dependent_slice_segments,
        output_flag_present,
        num_extra_slice_header_bits,
        cabac_init_present,
        num_ref_idx_l0_default_minus1,
        num_ref_idx_l1_default_minus1,
        slice_chroma_qp_offsets_present,
        weighted_pred,
        weighted_bipred,
        tiles,
        entropy_coding_sync,
        loop_filter_across_slices,
        deblocking_override_enabled,
        deblocking_disabled,
        lists_modification_present,
        slice_header_extension_present,
        chroma_qp_offset_list,
        unsupported_extension,
    })
}
