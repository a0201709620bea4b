//! H.265 7.3.6.1 `slice_segment_header()`, walked to its end.

use crate::media::bits::{ceil_log2, BitReader};
use crate::media::param_sets::hevc::{st_ref_pic_set, HevcPps, HevcSps};

/// The parameter sets of an HEVC track, by id.
#[derive(Debug, Clone)]
pub(super) struct HevcParams {
    /// Indexed by `sps_seq_parameter_set_id` (0 to 15).
    pub sps: Vec<Option<HevcSps>>,
    /// Indexed by `pps_pic_parameter_set_id` (0 to 63).
    pub pps: Vec<Option<HevcPps>>,
}

/// `num_ref_idx_lX_active_minus1` is at most 14.
const MAX_REF_IDX_MINUS1: u32 = 14;

/// At most this many long-term pictures in a slice header (the DPB holds at most 16).
const MAX_LONG_TERM: u32 = 32;

impl HevcParams {
    pub fn new() -> Self {
        Self {
            sps: vec![None; 16],
            pps: vec![None; 64],
        }
    }

    /// The slice segment header's length in RBSP bits (NAL header included), through
    /// `byte_alignment()`: a whole number of bytes.
    pub fn header_bits(&self, rbsp: &[u8]) -> Option<usize> {
        let mut r = BitReader::new(rbsp);
        r.skip(1)?; // forbidden_zero_bit
        let nal_unit_type = r.bits(6)?;
        let layer_id = r.bits(6)?;
        r.skip(3)?; // nuh_temporal_id_plus1

        // VCL NAL unit types in use (reserved ones are not read); layers above the base one
        // are not read.
        if !matches!(nal_unit_type, 0..=9 | 16..=21) || layer_id != 0 {
            return None;
        }
        let first_slice_segment_in_pic = r.flag()?;
        if (16..=23).contains(&nal_unit_type) {
            r.skip(1)?; // no_output_of_prior_pics_flag
        }
        let pps_id = usize::try_from(r.ue()?).ok()?;
        let pps = self.pps.get(pps_id)?.as_ref()?;
        let sps = self.sps.get(usize::try_from(pps.sps_id).ok()?)?.as_ref()?;
        if pps.unsupported_extension || sps.maybe_scc {
            return None;
        }
        let pic_size_in_ctbs = pic_size_in_ctbs(sps)?;
        let mut dependent = false;
        if !first_slice_segment_in_pic {
            if pps.dependent_slice_segments {
                dependent = r.flag()?;
            }
            r.skip(ceil_log2(pic_size_in_ctbs) as usize)?; // slice_segment_address
        }
        if !dependent {
            independent_fields(&mut r, sps, pps, nal_unit_type)?;
        }
        if pps.tiles || pps.entropy_coding_sync {
            let offsets = u64::from(r.ue()?); // num_entry_point_offsets
            if offsets > pic_size_in_ctbs {
                return None;
            }
            if offsets > 0 {
                let len = u64::from(r.ue()?) + 1; // offset_len_minus1 + 1
                if len > 32 {
                    return None;
                }
                r.skip(usize::try_from(offsets.checked_mul(len)?).ok()?)?;
            }
        }
        if pps.slice_header_extension_present {
            let len = r.ue()?; // slice_segment_header_extension_length
            if len > 256 {
                return None;
            }
            r.skip(len as usize * 8)?;
        }
        // byte_alignment(): a one, then zeros to the byte boundary.
        if !r.flag()? {
            return None;
        }
        while !r.byte_aligned() {
            if r.flag()? {
                return None;
            }
        }
        Some(r.position())
    }
}

/// `PicSizeInCtbsY` (7-10 to 7-19), from sizes the profiles allow (CTBs of 16 to 64).
fn pic_size_in_ctbs(sps: &HevcSps) -> Option<u64> {
    let min_cb = sps.log2_min_cb_minus3.checked_add(3)?;
    let ctb = min_cb.checked_add(sps.log2_diff_max_min_cb)?;
    if !(4..=6).contains(&ctb) || sps.width == 0 || sps.height == 0 {
        return None;
    }
    let size = 1u64 << ctb;
    let width = u64::from(sps.width).div_ceil(size);
    let height = u64::from(sps.height).div_ceil(size);
    width.checked_mul(height)
}

/// The part of the header absent from a dependent slice segment: from
/// `slice_reserved_flag` to `slice_loop_filter_across_slices_enabled_flag`.
fn independent_fields(
    r: &mut BitReader<'_>,
    sps: &HevcSps,
    pps: &HevcPps,
    nal_unit_type: u32,
) -> Option<()> {
    r.skip(pps.num_extra_slice_header_bits as usize)?; // slice_reserved_flag
    let slice_type = r.ue()?;
    let (b, p) = match slice_type {
        0 => (true, false),
        1 => (false, true),
        2 => (false, false),
        _ => return None,
    };
    if pps.output_flag_present {
        r.skip(1)?; // pic_output_flag
    }
    if sps.separate_colour_plane {
        r.skip(2)?; // colour_plane_id
    }
    let mut num_pic_total_curr = 0usize;
    let mut temporal_mvp = false;
    // Not IDR_W_RADL (19) or IDR_N_LP (20).
    if nal_unit_type != 19 && nal_unit_type != 20 {
        r.skip(sps.log2_max_poc_lsb as usize)?; // slice_pic_order_cnt_lsb
        let sets = sps.st_rps.len();
        let used = if !r.flag()? {
            // short_term_ref_pic_set_sps_flag off: the set is coded here.
            st_ref_pic_set(r, sets, &sps.st_rps, true)?.used_count()
        } else {
            let index = if sets > 1 {
                r.bits(ceil_log2(sets as u64))? as usize // short_term_ref_pic_set_idx
            } else {
                0
            };
            sps.st_rps.get(index)?.used_count()
        };
        num_pic_total_curr += used;
        if sps.long_term_present {
            let lt_sps = sps.lt_used.len();
            let num_long_term_sps = if lt_sps > 0 { r.ue()? } else { 0 };
            if num_long_term_sps as usize > lt_sps {
                return None;
            }
            let num_long_term_pics = r.ue()?;
            let total = num_long_term_sps.checked_add(num_long_term_pics)?;
            if total > MAX_LONG_TERM {
                return None;
            }
            for i in 0..total {
                if i < num_long_term_sps {
                    let index = if lt_sps > 1 {
                        r.bits(ceil_log2(lt_sps as u64))? as usize // lt_idx_sps
                    } else {
                        0
                    };
                    num_pic_total_curr += usize::from(*sps.lt_used.get(index)?);
                } else {
                    r.skip(sps.log2_max_poc_lsb as usize)?; // poc_lsb_lt
                    num_pic_total_curr += usize::from(r.flag()?); // used_by_curr_pic_lt_flag
                }
                if r.flag()? {
                    r.ue()?; // delta_poc_msb_present_flag: delta_poc_msb_cycle_lt
                }
            }
        }
        if sps.temporal_mvp {
            temporal_mvp = r.flag()?; // slice_temporal_mvp_enabled_flag
        }
    }
    let chroma_array_type = if sps.separate_colour_plane {
        0
    } else {
        sps.chroma_format_idc
    };
    let (mut sao_luma, mut sao_chroma) = (false, false);
    if sps.sao {
        sao_luma = r.flag()?;
        if chroma_array_type != 0 {
            sao_chroma = r.flag()?;
        }
    }
    if p || b {
        let mut l0 = pps.num_ref_idx_l0_default_minus1;
        let mut l1 = pps.num_ref_idx_l1_default_minus1;
        if r.flag()? {
            // num_ref_idx_active_override_flag
            l0 = r.ue()?;
            if b {
                l1 = r.ue()?;
            }
        }
        if l0 > MAX_REF_IDX_MINUS1 || (b && l1 > MAX_REF_IDX_MINUS1) {
            return None;
        }
        if pps.lists_modification_present && num_pic_total_curr > 1 {
            // 7.3.6.2 ref_pic_lists_modification(): list_entry_lX of Ceil(Log2(NumPicTotalCurr)) bits.
            let bits = ceil_log2(num_pic_total_curr as u64) as usize;
            if r.flag()? {
                r.skip((l0 as usize + 1) * bits)?;
            }
            if b && r.flag()? {
                r.skip((l1 as usize + 1) * bits)?;
            }
        }
        if b {
            r.skip(1)?; // mvd_l1_zero_flag
        }
        if pps.cabac_init_present {
            r.skip(1)?; // cabac_init_flag
        }
        if temporal_mvp {
            let from_l0 = !b || r.flag()?; // collocated_from_l0_flag (1 when absent)
            if (from_l0 && l0 > 0) || (!from_l0 && l1 > 0) {
                r.ue()?; // collocated_ref_idx
            }
        }
        if (pps.weighted_pred && p) || (pps.weighted_bipred && b) {
            pred_weight_table(r, chroma_array_type, l0, b.then_some(l1))?;
        }
        r.ue()?; // five_minus_max_num_merge_cand
    }
    r.se()?; // slice_qp_delta
    if pps.slice_chroma_qp_offsets_present {
        r.se()?; // slice_cb_qp_offset
        r.se()?; // slice_cr_qp_offset
    }
    if pps.chroma_qp_offset_list {
        r.skip(1)?; // cu_chroma_qp_offset_enabled_flag
    }
    let override_deblocking = pps.deblocking_override_enabled && r.flag()?;
    let mut deblocking_disabled = pps.deblocking_disabled;
    if override_deblocking {
        deblocking_disabled = r.flag()?; // slice_deblocking_filter_disabled_flag
        if !deblocking_disabled {
            r.se()?; // slice_beta_offset_div2
            r.se()?; // slice_tc_offset_div2
        }
    }
    if pps.loop_filter_across_slices && (sao_luma || sao_chroma || !deblocking_disabled) {
        r.skip(1)?; // slice_loop_filter_across_slices_enabled_flag
    }
    Some(())
}

/// H.265 7.3.6.3 `pred_weight_table()`, skipped. Every reference picture has its flags:
/// the condition on layers and on the current picture as a reference concerns only the
/// multilayer and screen content extensions, which are refused before.
fn pred_weight_table(
    r: &mut BitReader<'_>,
    chroma_array_type: u32,
    l0: u32,
    l1: Option<u32>,
) -> Option<()> {
    r.ue()?; // luma_log2_weight_denom
    if chroma_array_type != 0 {
        r.se()?; // delta_chroma_log2_weight_denom
    }
    for count in std::iter::once(l0).chain(l1) {
        let count = count as usize + 1;
        let mut luma = [false; MAX_REF_IDX_MINUS1 as usize + 1];
        let mut chroma = [false; MAX_REF_IDX_MINUS1 as usize + 1];
        for flag in luma.iter_mut().take(count) {
            *flag = r.flag()?; // luma_weight_lX_flag
        }
        if chroma_array_type != 0 {
            for flag in chroma.iter_mut().take(count) {
                *flag = r.flag()?; // chroma_weight_lX_flag
            }
        }
        for (luma, chroma) in luma.iter().zip(&chroma).take(count) {
            if *luma {
                r.se()?; // delta_luma_weight_lX
                r.se()?; // luma_offset_lX
            }
            if *chroma {
                for _ in 0..4 {
                    r.se()?; // delta_chroma_weight_lX, delta_chroma_offset_lX
                }
            }
        }
    }
    Some(())
}
