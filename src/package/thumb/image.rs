//! A decoded picture to a JPEG of the asked size: colour conversion, scaling, encoding.
//!
//! Colour: the picture's Y'CbCr is turned into R'G'B' by the matrix its stream declares
//! (`MatrixCoefficients`: BT.709, BT.601, BT.2020; unspecified as BT.601, as ffmpeg and
//! browsers take it) and range (limited unless the stream says full), chroma upsampled
//! by the resize filter, and kept at full resolution in the JPEG (4:4:4). Size: both `-w` and `-h` give exactly that size (nginx-vod-module stretches
//! too); one of them, the other from the display aspect (the `tkhd` size, which carries
//! the pixel aspect ratio); neither, the picture's height at its display aspect.

use fast_image_resize::images::Image;
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use jpeg_encoder::{ColorType, Encoder};

use super::{Picture, ThumbError};
use crate::media::ColorInfo;

/// Longest side of an image we make, in pixels.
pub const MAX_SIDE: u32 = 4096;

/// The width and height of a picture, an image or a tile, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PixelSize {
    pub width: u32,
    pub height: u32,
}

impl PixelSize {
    pub const fn new(width: u32, height: u32) -> Self {
        Self { width, height }
    }
}

/// How the picture is turned into a JPEG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JpegOptions {
    /// JPEG quality, 1 to 100.
    pub quality: u8,
}

/// The size of the image for a picture of `picture` pixels displayed at `display` (a side
/// 0 when unknown), as `-wW`/`-hH` ask (`width`, `height`).
///
/// # Errors
/// [`ThumbError::BadSize`] when a side would be 0 or over [`MAX_SIDE`].
pub fn output_size(
    picture: PixelSize,
    display: PixelSize,
    width: Option<u32>,
    height: Option<u32>,
) -> Result<PixelSize, ThumbError> {
    let PixelSize {
        width: pw,
        height: ph,
    } = picture;
    // The display aspect; the picture's own when the file gives none.
    let (dw, dh) = match (display.width, display.height) {
        (w, h) if w > 0 && h > 0 => (u64::from(w), u64::from(h)),
        _ => (u64::from(pw.max(1)), u64::from(ph.max(1))),
    };
    let scaled = |side: u32, num: u64, den: u64| -> u32 {
        let value = (u64::from(side) * num + den / 2) / den.max(1);
        u32::try_from(value.max(1)).unwrap_or(u32::MAX)
    };
    let (w, h) = match (width, height) {
        (Some(w), Some(h)) => (w, h),
        (Some(w), None) => (w, scaled(w, dh, dw)),
        (None, Some(h)) => (scaled(h, dw, dh), h),
        (None, None) => {
            let w = scaled(ph, dw, dh);
            // Square pixels whose `tkhd` size is rounded: keep the picture's own width.
            (if w.abs_diff(pw) <= 1 { pw } else { w }, ph)
        }
    };
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(ThumbError::BadSize {
            width: w,
            height: h,
            max: MAX_SIDE,
        });
    }
    Ok(PixelSize::new(w, h))
}

/// `picture` as a JPEG of `size` (from [`output_size`]).
///
/// # Errors
/// [`ThumbError::Undecodable`] if the picture's planes do not match its size (never for
/// a decoder's picture), [`ThumbError::BadSize`] for a size out of bounds.
pub fn encode_jpeg(
    picture: &Picture,
    color: Option<&ColorInfo>,
    size: PixelSize,
    options: JpegOptions,
) -> Result<Vec<u8>, ThumbError> {
    let rgb = scaled_rgb(picture, color, size)?;
    encode_rgb_jpeg(&rgb, size, options)
}

/// `picture` as packed 8-bit RGB scaled to `size`.
///
/// Each plane is resized to `size` first (chroma from its own resolution, so its
/// upsampling is the resize filter's rather than a blocky copy of each sample to its 2x2
/// luma samples), then only the output's pixels are converted: as ffmpeg's accurate
/// scaler does it, and for a 1080p frame to a 160 px tile, about 100 times fewer pixels
/// to convert. At the picture's own size luma is taken as it is.
///
/// # Errors
/// As [`encode_jpeg`].
pub fn scaled_rgb(
    picture: &Picture,
    color: Option<&ColorInfo>,
    size: PixelSize,
) -> Result<Vec<u8>, ThumbError> {
    let bad_size = || ThumbError::BadSize {
        width: size.width,
        height: size.height,
        max: MAX_SIDE,
    };
    check_planes(picture)?;
    let side = |n: usize| u32::try_from(n).map_err(|_| bad_size());
    let luma = PixelSize::new(side(picture.width)?, side(picture.height)?);
    let chroma = PixelSize::new(
        side(picture.chroma_width())?,
        side(picture.chroma_height())?,
    );
    let y = match luma == size {
        true => picture.y.clone(),
        false => resize_plane(&picture.y, luma, size)?,
    };
    let u = resize_plane(&picture.u, chroma, size)?;
    let v = resize_plane(&picture.v, chroma, size)?;
    Ok(to_rgb([&y, &u, &v], color))
}

/// Packed 8-bit RGB of `size` as a JPEG (4:4:4).
///
/// # Errors
/// [`ThumbError::BadSize`] for a side over 65535 (JPEG's limit);
/// [`ThumbError::Undecodable`] when the encoder fails (`rgb` not of `size`).
pub fn encode_rgb_jpeg(
    rgb: &[u8],
    size: PixelSize,
    options: JpegOptions,
) -> Result<Vec<u8>, ThumbError> {
    let bad_size = || ThumbError::BadSize {
        width: size.width,
        height: size.height,
        max: u32::from(u16::MAX),
    };
    let (w, h) = (
        u16::try_from(size.width).map_err(|_| bad_size())?,
        u16::try_from(size.height).map_err(|_| bad_size())?,
    );
    let mut jpeg = Vec::new();
    let mut encoder = Encoder::new(&mut jpeg, options.quality.clamp(1, 100));
    // Full chroma: colour edges stay where the picture has them.
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_4_4);
    encoder
        .encode(rgb, w, h, ColorType::Rgb)
        .map_err(|e| ThumbError::Undecodable {
            reason: format!("JPEG encoding failed: {e}"),
        })?;
    Ok(jpeg)
}

/// One 8-bit plane of `from` resized to `to`.
fn resize_plane(plane: &[u8], from: PixelSize, to: PixelSize) -> Result<Vec<u8>, ThumbError> {
    let failed = |e: &dyn std::fmt::Display| ThumbError::Undecodable {
        reason: format!("scaling failed: {e}"),
    };
    let src = Image::from_vec_u8(from.width, from.height, plane.to_vec(), PixelType::U8)
        .map_err(|e| failed(&e))?;
    let mut dst = Image::new(to.width, to.height, PixelType::U8);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom));
    Resizer::new()
        .resize(&src, &mut dst, &options)
        .map_err(|e| failed(&e))?;
    Ok(dst.into_vec())
}

/// Luma and chroma weights (Kr, Kb) of a `MatrixCoefficients` value (ITU-T H.273).
fn matrix_weights(matrix: Option<u16>) -> (f32, f32) {
    match matrix {
        Some(1) => (0.2126, 0.0722),
        Some(9 | 10) => (0.2627, 0.0593),
        Some(7) => (0.212, 0.087),
        // 5 and 6 (BT.601), 2 (unspecified) and anything else.
        _ => (0.299, 0.114),
    }
}

/// The planes' sizes must be the picture's (a decoder's always are).
fn check_planes(picture: &Picture) -> Result<(), ThumbError> {
    let (w, h) = (picture.width, picture.height);
    let (cw, ch) = (picture.chroma_width(), picture.chroma_height());
    let luma = w.checked_mul(h);
    let chroma = cw.checked_mul(ch);
    if luma != Some(picture.y.len())
        || chroma != Some(picture.u.len())
        || chroma != Some(picture.v.len())
    {
        return Err(ThumbError::Undecodable {
            reason: "the picture's planes do not match its size".into(),
        });
    }
    Ok(())
}

/// Packed 8-bit RGB of Y'CbCr planes of one size, by the matrix and range `color`
/// declares.
fn to_rgb(planes: [&[u8]; 3], color: Option<&ColorInfo>) -> Vec<u8> {
    let [y_plane, u_plane, v_plane] = planes;
    let (kr, kb) = matrix_weights(color.map(|c| c.matrix));
    let kg = 1.0 - kr - kb;
    let full = color.is_some_and(|c| c.full_range);
    let (y_off, y_scale, c_scale) = match full {
        true => (0.0, 1.0, 1.0),
        false => (16.0, 255.0 / 219.0, 255.0 / 224.0),
    };
    let (rv, bu) = (2.0 * (1.0 - kr), 2.0 * (1.0 - kb));
    let (gu, gv) = (bu * kb / kg, rv * kr / kg);
    let to_u8 = |value: f32| value.round().clamp(0.0, 255.0) as u8;
    let mut rgb = Vec::with_capacity(y_plane.len() * 3);
    for (&luma, (&u, &v)) in y_plane.iter().zip(u_plane.iter().zip(v_plane)) {
        let yy = (f32::from(luma) - y_off) * y_scale;
        let u = (f32::from(u) - 128.0) * c_scale;
        let v = (f32::from(v) - 128.0) * c_scale;
        rgb.push(to_u8(yy + rv * v));
        rgb.push(to_u8(yy - gu * u - gv * v));
        rgb.push(to_u8(yy + bu * u));
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_side_keeps_the_display_aspect_and_both_stretch() {
        let sd = PixelSize::new(320, 180);
        let size = PixelSize::new;
        assert_eq!(output_size(sd, sd, Some(150), None), Ok(size(150, 84)));
        assert_eq!(output_size(sd, sd, None, Some(90)), Ok(size(160, 90)));
        assert_eq!(output_size(sd, sd, Some(150), Some(90)), Ok(size(150, 90)));
        assert_eq!(output_size(sd, sd, None, None), Ok(size(320, 180)));
        // Anamorphic: 720x576 coded, shown 16:9 (tkhd 1024x576).
        let (coded, shown) = (size(720, 576), size(1024, 576));
        assert_eq!(output_size(coded, shown, None, None), Ok(size(1024, 576)));
        assert_eq!(output_size(coded, shown, None, Some(90)), Ok(size(160, 90)));
        assert!(output_size(sd, sd, Some(5000), None).is_err());
        assert!(output_size(sd, sd, None, Some(4000)).is_err());
    }

    #[test]
    fn limited_range_grey_and_primaries_convert_as_bt601() {
        let grey = Picture {
            width: 2,
            height: 2,
            y: vec![16, 235, 126, 126],
            u: vec![128],
            v: vec![128],
        };
        let rgb = scaled_rgb(&grey, None, PixelSize::new(2, 2)).unwrap();
        assert_eq!(&rgb[..6], &[0, 0, 0, 255, 255, 255]);
        // BT.601 limited red: Y 81, Cb 90, Cr 240.
        let red = Picture {
            width: 1,
            height: 1,
            y: vec![81],
            u: vec![90],
            v: vec![240],
        };
        let rgb = scaled_rgb(&red, None, PixelSize::new(1, 1)).unwrap();
        assert!(rgb[0] >= 253 && rgb[1] <= 2 && rgb[2] <= 2, "{rgb:?}");
    }

    #[test]
    fn scaled_pictures_convert_their_scaled_planes_by_the_declared_matrix() {
        // BT.709 limited red (Y 63, Cb 102, Cr 240), 8x8, scaled down and up.
        let red = Picture {
            width: 8,
            height: 8,
            y: vec![63; 64],
            u: vec![102; 16],
            v: vec![240; 16],
        };
        let bt709 = ColorInfo {
            primaries: 1,
            transfer: 1,
            matrix: 1,
            full_range: false,
            source: crate::media::ColorSource::Colr,
        };
        for (w, h) in [(3, 2), (8, 8), (13, 11)] {
            let size = PixelSize::new(w, h);
            let rgb = scaled_rgb(&red, Some(&bt709), size).unwrap();
            assert_eq!(rgb.len(), (w * h * 3) as usize);
            for px in rgb.chunks_exact(3) {
                assert!(px[0] >= 253 && px[1] <= 2 && px[2] <= 2, "{size:?} {px:?}");
            }
        }
        // The same samples read as BT.601 are not red: the matrix matters.
        let rgb = scaled_rgb(&red, None, PixelSize::new(3, 2)).unwrap();
        assert!(rgb[0] < 245, "{:?}", &rgb[..3]);
    }
}
