//! H.264 7.3.3 `slice_header()`, walked to its end.

use crate::media::bits::BitReader;
use crate::media::param_sets::avc::{AvcPps, AvcSps};

/// The parameter sets of an AVC track, by id.
#[derive(Debug, Clone)]
pub(super) struct AvcParams {
    /// Indexed by `seq_parameter_set_id` (0 to 31).
    pub sps: Vec<Option<AvcSps>>,
    /// Indexed by `pic_parameter_set_id` (0 to 255).
    pub pps: Vec<Option<AvcPps>>,
}

/// At most this many reference indexes in a list (`num_ref_idx_lX_active_minus1` is at
/// most 31, for field pictures).
const MAX_REF_IDX_MINUS1: u32 = 31;

impl AvcParams {
    pub fn new() -> Self {
        Self {
            sps: vec![None; 32],
            pps: vec![None; 256],
        }
    }

    /// The slice header's length in RBSP bits (NAL header included), up to where
    /// `slice_data()` starts (after `cabac_alignment_one_bit`s with CABAC).
    pub fn header_bits(&self, rbsp: &[u8]) -> Option<usize> {
        let mut r = BitReader::new(rbsp);
        r.skip(1)?; // forbidden_zero_bit
        let nal_ref_idc = r.bits(2)?;
        let nal_unit_type = r.bits(5)?;
        // Coded slices of a non-IDR or an IDR picture; data partitions (2 to 4) and the
        // SVC/MVC extension (20, 21) are not read.
        if nal_unit_type != 1 && nal_unit_type != 5 {
            return None;
        }
        let idr = nal_unit_type == 5;
        r.ue()?; // first_mb_in_slice
        let slice_type = r.ue()?;
        if slice_type > 9 {
            return None;
        }
        let (p, b, i, sp, si) = match slice_type % 5 {
            0 => (true, false, false, false, false),
            1 => (false, true, false, false, false),
            2 => (false, false, true, false, false),
            3 => (false, false, false, true, false),
            _ => (false, false, false, false, true),
        };
        let pps_id = usize::try_from(r.ue()?).ok()?;
        let pps = self.pps.get(pps_id)?.as_ref()?;
        let sps = self.sps.get(usize::try_from(pps.sps_id).ok()?)?.as_ref()?;
        if sps.separate_colour_plane {
            r.skip(2)?; // colour_plane_id
        }
        let log2_max_frame_num = sps.log2_max_frame_num_minus4.checked_add(4)?;
        if log2_max_frame_num > 16 {
            return None;
        }
        r.skip(log2_max_frame_num as usize)?; // frame_num
        let mut field_pic = false;
        if !sps.frame_mbs_only {
            field_pic = r.flag()?;
            if field_pic {
                r.skip(1)?; // bottom_field_flag
            }
        }
        if idr {
            r.ue()?; // idr_pic_id
        }
        let bottom_delta = pps.bottom_field_pic_order_in_frame_present && !field_pic;
        match sps.poc_type {
            0 => {
                let bits = sps.log2_max_poc_lsb_minus4.checked_add(4)?;
                if bits > 16 {
                    return None;
                }
                r.skip(bits as usize)?; // pic_order_cnt_lsb
                if bottom_delta {
                    r.se()?; // delta_pic_order_cnt_bottom
                }
            }
            1 => {
                if !sps.delta_pic_order_always_zero {
                    r.se()?; // delta_pic_order_cnt[0]
                    if bottom_delta {
                        r.se()?; // delta_pic_order_cnt[1]
                    }
                }
            }
            2 => {}
            _ => return None,
        }
        if pps.redundant_pic_cnt_present {
            r.ue()?; // redundant_pic_cnt
        }
        if b {
            r.skip(1)?; // direct_spatial_mv_pred_flag
        }
        let mut l0 = pps.num_ref_idx_l0_default_minus1;
        let mut l1 = pps.num_ref_idx_l1_default_minus1;
        if (p || sp || b) && r.flag()? {
            // num_ref_idx_active_override_flag
            l0 = r.ue()?;
            if b {
                l1 = r.ue()?;
            }
        }
        if ((p || sp || b) && l0 > MAX_REF_IDX_MINUS1) || (b && l1 > MAX_REF_IDX_MINUS1) {
            return None;
        }
        // 7.3.3.1 ref_pic_list_modification()
        if !i && !si {
            ref_pic_list_modification(&mut r)?;
        }
        if b {
            ref_pic_list_modification(&mut r)?;
        }
        let chroma_array_type = if sps.separate_colour_plane {
            0
        } else {
            sps.chroma_format_idc
        };
        if (pps.weighted_pred && (p || sp)) || (pps.weighted_bipred_idc == 1 && b) {
            pred_weight_table(&mut r, chroma_array_type, l0, b.then_some(l1))?;
        }
        if nal_ref_idc != 0 {
            dec_ref_pic_marking(&mut r, idr)?;
        }
        if pps.entropy_coding_mode && !i && !si {
            r.ue()?; // cabac_init_idc
        }
        r.se()?; // slice_qp_delta
        if sp || si {
            if sp {
                r.skip(1)?; // sp_for_switch_flag
            }
            r.se()?; // slice_qs_delta
        }
        if pps.deblocking_filter_control_present {
            let idc = r.ue()?; // disable_deblocking_filter_idc
            if idc > 2 {
                return None;
            }
            if idc != 1 {
                r.se()?; // slice_alpha_c0_offset_div2
                r.se()?; // slice_beta_offset_div2
            }
        }
        if pps.num_slice_groups_minus1 > 0 && (3..=5).contains(&pps.slice_group_map_type) {
            r.skip(slice_group_change_cycle_bits(sps, pps)?)?;
        }
        if pps.entropy_coding_mode {
            while !r.byte_aligned() {
                if !r.flag()? {
                    return None; // cabac_alignment_one_bit must be 1
                }
            }
        }
        Some(r.position())
    }
}

/// The length of `slice_group_change_cycle`: Ceil(Log2(PicSizeInMapUnits ÷
/// SliceGroupChangeRate + 1)) bits (7-34), the division exact: the least `n` with
/// `rate * 2^n >= size + rate`.
fn slice_group_change_cycle_bits(sps: &AvcSps, pps: &AvcPps) -> Option<usize> {
    let width = u64::from(sps.pic_width_in_mbs_minus1) + 1;
    let height = u64::from(sps.pic_height_in_map_units_minus1) + 1;
    let size = width.checked_mul(height)?;
    let rate = u64::from(pps.slice_group_change_rate_minus1) + 1;
    if rate > size {
        return None; // 7.4.2.2: in the range 0 to PicSizeInMapUnits - 1
    }
    let target = size.checked_add(rate)?;
    (0..=32usize).find(|&n| rate.checked_shl(n as u32).is_some_and(|v| v >= target))
}

/// H.264 7.3.3.1: one list's `ref_pic_list_modification_flag_lX` and its operations.
fn ref_pic_list_modification(r: &mut BitReader<'_>) -> Option<()> {
    if !r.flag()? {
        return Some(());
    }
    // At most num_ref_idx_lX_active_minus1 + 1 operations, then the end (3).
    for _ in 0..=MAX_REF_IDX_MINUS1 + 1 {
        match r.ue()? {
            0..=2 => {
                r.ue()?; // abs_diff_pic_num_minus1 or long_term_pic_num
            }
            3 => return Some(()),
            _ => return None,
        }
    }
    None
}

/// H.264 7.3.3.2 `pred_weight_table()`, skipped.
fn pred_weight_table(
    r: &mut BitReader<'_>,
    chroma_array_type: u32,
    l0: u32,
    l1: Option<u32>,
) -> Option<()> {
    r.ue()?; // luma_log2_weight_denom
    if chroma_array_type != 0 {
        r.ue()?; // chroma_log2_weight_denom
    }
    for count in std::iter::once(l0).chain(l1) {
        for _ in 0..=count {
            if r.flag()? {
                r.se()?; // luma_weight
                r.se()?; // luma_offset
            }
            if chroma_array_type != 0 && r.flag()? {
                for _ in 0..4 {
                    r.se()?; // chroma_weight, chroma_offset for Cb and Cr
                }
            }
        }
    }
    Some(())
}

/// At most this many memory management operations in one slice header (the reference
/// lists hold at most 32 pictures; each picture needs at most a couple of operations).
const MAX_MMCO: usize = 100;

/// H.264 7.3.3.3 `dec_ref_pic_marking()`, skipped.
fn dec_ref_pic_marking(r: &mut BitReader<'_>, idr: bool) -> Option<()> {
    if idr {
        return r.skip(2); // no_output_of_prior_pics_flag, long_term_reference_flag
    }
    if !r.flag()? {
        return Some(()); // adaptive_ref_pic_marking_mode_flag
    }
    for _ in 0..MAX_MMCO {
        match r.ue()? {
            0 => return Some(()),
            1 | 2 | 4 | 6 => {
                r.ue()?;
            }
            3 => {
                r.ue()?; // difference_of_pic_nums_minus1
                r.ue()?; // long_term_frame_idx
            }
            5 => {}
            _ => return None,
        }
    }
    None
}
