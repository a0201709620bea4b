//! The colour description in the AV1 sequence header OBU that `av1C` carries in its
//! `configOBUs` (AV1 Bitstream and Decoding Process 5.3 and 5.5; AV1 Codec ISO Media File
//! Format Binding 2.3), for sample entries without `colr`. Bounded: a header that ends
//! early gives `None`.

use mp4_atom::Av1c;

use super::{ColorInfo, ColorSource};
use crate::media::bits::BitReader;

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

    /// The `configOBUs` of `fixtures/av1-10bit-pq-aac-3s.mp4` (SVT-AV1, PQ): one sequence
    /// header OBU with its size field.
    const SVT_AV1_PQ_OBUS: &[u8] = &[
        0x0a, 0x0e, 0x00, 0x00, 0x00, 0x04, 0x3c, 0xfe, 0xcc, 0x02, 0xf8, 0x50, 0x91, 0x00, 0x90,
        0x40,
    ];

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

    /// Flipping any one bit of the OBUs, or cutting them anywhere, never panics.
    #[test]
    fn mutated_obus_never_panic() {
        for bit in 0..SVT_AV1_PQ_OBUS.len() * 8 {
            let mut bytes = SVT_AV1_PQ_OBUS.to_vec();
            bytes[bit / 8] ^= 0x80 >> (bit % 8);
            let _ = from_av1_config(&av1c(&bytes));
        }
    }
}
