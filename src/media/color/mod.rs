//! The colour description of a video track (ISO/IEC 23091-2 / ITU-T H.273 code points:
//! colour primaries, transfer characteristics, matrix coefficients, range), which decides
//! HLS `VIDEO-RANGE` and the DASH CICP descriptors.
//!
//! From the sample entry's `colr` box, else the codec's own header (`sps` for the HEVC and
//! AVC VUI, `av1` for the AV1 sequence header, VP9's `vpcC`). Every parse is bounded, and
//! a header that cannot be read means "no colour description", never a refused file.

mod av1;
mod sps;

use mp4_atom::{Colr, VpcC};

use super::CodecInfo;

pub(crate) use av1::from_av1_config;
pub(crate) use sps::{from_avc_vui, from_hevc_vui};

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

#[cfg(test)]
mod tests {
    use super::*;

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
            dolby_channel_mask: None,
        };
        assert_eq!(info.video_range(), VideoRange::Sdr);
        for (transfer, range) in [(16, "PQ"), (18, "HLG"), (1, "SDR"), (14, "SDR"), (2, "SDR")] {
            info.color = Some(ColorInfo { transfer, ..color });
            assert_eq!(info.video_range().as_str(), range, "transfer {transfer}");
        }
    }
}
