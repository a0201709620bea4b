//! H.264 7.3.2.1.1 `seq_parameter_set_data()` up to the VUI and 7.3.2.2
//! `pic_parameter_set_rbsp()` up to `redundant_pic_cnt_present_flag`.

use crate::media::bits::{ceil_log2, BitReader};

/// The fields of an AVC SPS that the slice header depends on (raw values: the slice
/// header parser checks their ranges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AvcSps {
    /// `seq_parameter_set_id`.
    pub sps_id: u32,
    /// `chroma_format_idc` (1 when absent).
    pub chroma_format_idc: u32,
    /// `separate_colour_plane_flag`.
    pub separate_colour_plane: bool,
    /// `log2_max_frame_num_minus4`.
    pub log2_max_frame_num_minus4: u32,
    /// `pic_order_cnt_type`.
    pub poc_type: u32,
    /// `log2_max_pic_order_cnt_lsb_minus4` (type 0).
    pub log2_max_poc_lsb_minus4: u32,
    /// `delta_pic_order_always_zero_flag` (type 1).
    pub delta_pic_order_always_zero: bool,
    /// `pic_width_in_mbs_minus1`.
    pub pic_width_in_mbs_minus1: u32,
    /// `pic_height_in_map_units_minus1`.
    pub pic_height_in_map_units_minus1: u32,
    /// `frame_mbs_only_flag`.
    pub frame_mbs_only: bool,
}

/// Walks an SPS RBSP (NAL header included) up to `vui_parameters_present_flag`; the reader
/// is left there.
pub(crate) fn parse_sps(rbsp: &[u8]) -> Option<(AvcSps, BitReader<'_>)> {
    let mut r = BitReader::new(rbsp);
    r.skip(8)?; // nal_unit_header
    let profile_idc = r.bits(8)?;
    r.skip(16)?; // constraint flags, level_idc
    let sps_id = r.ue()?;
    let (mut chroma_format_idc, mut separate_colour_plane) = (1, false);
    if matches!(
        profile_idc,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        chroma_format_idc = r.ue()?;
        if chroma_format_idc == 3 {
            separate_colour_plane = r.flag()?;
        }
        r.ue()?; // bit_depth_luma_minus8
        r.ue()?; // bit_depth_chroma_minus8
        r.skip(1)?; // qpprime_y_zero_transform_bypass_flag
        if r.flag()? {
            // seq_scaling_matrix_present_flag
            let lists = if chroma_format_idc == 3 { 12 } else { 8 };
            for i in 0..lists {
                if r.flag()? {
                    scaling_list(&mut r, if i < 6 { 16 } else { 64 })?;
                }
            }
        }
    }
    let log2_max_frame_num_minus4 = r.ue()?;
    let poc_type = r.ue()?;
    let (mut log2_max_poc_lsb_minus4, mut delta_pic_order_always_zero) = (0, false);
    match poc_type {
        0 => log2_max_poc_lsb_minus4 = r.ue()?,
        1 => {
            delta_pic_order_always_zero = r.flag()?;
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
    let pic_width_in_mbs_minus1 = r.ue()?;
    let pic_height_in_map_units_minus1 = r.ue()?;
    let frame_mbs_only = r.flag()?;
    if !frame_mbs_only {
        r.skip(1)?; // mb_adaptive_frame_field_flag
    }
    r.skip(1)?; // direct_8x8_inference_flag
    if r.flag()? {
        for _ in 0..4 {
            r.ue()?; // frame cropping offsets
        }
    }
    let sps = AvcSps {
        sps_id,
        chroma_format_idc,
        separate_colour_plane,
        log2_max_frame_num_minus4,
        poc_type,
        log2_max_poc_lsb_minus4,
        delta_pic_order_always_zero,
        pic_width_in_mbs_minus1,
        pic_height_in_map_units_minus1,
        frame_mbs_only,
    };
    Some((sps, r))
}

/// H.264 7.3.2.1.1.1 `scaling_list()`, skipped.
fn scaling_list(r: &mut BitReader<'_>, size: usize) -> Option<()> {
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

/// The fields of an AVC PPS that the slice header depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AvcPps {
    /// `pic_parameter_set_id` (raw).
    pub pps_id: u32,
    /// `seq_parameter_set_id` (raw).
    pub sps_id: u32,
    /// `entropy_coding_mode_flag`: CABAC.
    pub entropy_coding_mode: bool,
    /// `bottom_field_pic_order_in_frame_present_flag`.
    pub bottom_field_pic_order_in_frame_present: bool,
    /// `num_slice_groups_minus1` (at most 7).
    pub num_slice_groups_minus1: u32,
    /// `slice_group_map_type` (0 without slice groups).
    pub slice_group_map_type: u32,
    /// `slice_group_change_rate_minus1` (map types 3 to 5).
    pub slice_group_change_rate_minus1: u32,
    /// `num_ref_idx_l0_default_active_minus1` (raw).
    pub num_ref_idx_l0_default_minus1: u32,
    /// `num_ref_idx_l1_default_active_minus1` (raw).
    pub num_ref_idx_l1_default_minus1: u32,
    /// `weighted_pred_flag`.
    pub weighted_pred: bool,
    /// `weighted_bipred_idc`.
    pub weighted_bipred_idc: u32,
    /// `deblocking_filter_control_present_flag`.
    pub deblocking_filter_control_present: bool,
    /// `redundant_pic_cnt_present_flag`.
    pub redundant_pic_cnt_present: bool,
}

/// The `pic_parameter_set_id` of a PPS RBSP (NAL header included).
pub(crate) fn pps_id(rbsp: &[u8]) -> Option<u32> {
    let mut r = BitReader::new(rbsp);
    r.skip(8)?;
    r.ue()
}

/// H.264 7.3.2.2 `pic_parameter_set_rbsp()` (NAL header included), up to
/// `redundant_pic_cnt_present_flag` (what follows does not change the slice header).
pub(crate) fn parse_pps(rbsp: &[u8]) -> Option<AvcPps> {
    let mut r = BitReader::new(rbsp);
    r.skip(8)?; // nal_unit_header
    let pps_id = r.ue()?;
    let sps_id = r.ue()?;
    let entropy_coding_mode = r.flag()?;
    let bottom_field_pic_order_in_frame_present = r.flag()?;
    let num_slice_groups_minus1 = r.ue()?;
    if num_slice_groups_minus1 > 7 {
        return None;
    }
    let (mut slice_group_map_type, mut slice_group_change_rate_minus1) = (0, 0);
    if num_slice_groups_minus1 > 0 {
        slice_group_map_type = r.ue()?;
        match slice_group_map_type {
            0 => {
                for _ in 0..=num_slice_groups_minus1 {
                    r.ue()?; // run_length_minus1
                }
            }
            1 => {}
            2 => {
                for _ in 0..num_slice_groups_minus1 {
                    r.ue()?; // top_left
                    r.ue()?; // bottom_right
                }
            }
            3..=5 => {
                r.skip(1)?; // slice_group_change_direction_flag
                slice_group_change_rate_minus1 = r.ue()?;
            }
            6 => {
                let units = u64::from(r.ue()?) + 1; // pic_size_in_map_units_minus1 + 1
                let bits = u64::from(ceil_log2(u64::from(num_slice_groups_minus1) + 1));
                r.skip(usize::try_from(units.checked_mul(bits)?).ok()?)?; // slice_group_id
            }
            _ => return None,
        }
    }
    let num_ref_idx_l0_default_minus1 = r.ue()?;
    let num_ref_idx_l1_default_minus1 = r.ue()?;
    let weighted_pred = r.flag()?;
    let weighted_bipred_idc = r.bits(2)?;
    r.se()?; // pic_init_qp_minus26
    r.se()?; // pic_init_qs_minus26
    r.se()?; // chroma_qp_index_offset
    let deblocking_filter_control_present = r.flag()?;
    r.skip(1)?; // constrained_intra_pred_flag
    let redundant_pic_cnt_present = r.flag()?;
    Some(AvcPps {
        pps_id,
        sps_id,
        entropy_coding_mode,
        bottom_field_pic_order_in_frame_present,
        num_slice_groups_minus1,
        slice_group_map_type,
        slice_group_change_rate_minus1,
        num_ref_idx_l0_default_minus1,
        num_ref_idx_l1_default_minus1,
        weighted_pred,
        weighted_bipred_idc,
        deblocking_filter_control_present,
        redundant_pic_cnt_present,
    })
}
