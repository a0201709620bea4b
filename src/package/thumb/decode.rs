//! Samples to a picture: H.264 through OpenH264, compiled from the source the `openh264`
//! crate ships (`cc`, no downloaded binary), so a plain `cargo build` decodes H.264 on any
//! machine. HEVC, AV1 and VP9 go to libavcodec (`libav.rs`) when vodpack is built with the
//! cargo feature `libavcodec`; without it they are refused naming that feature, and any
//! other codec as unsupported.

use bytes::Bytes;
use openh264::decoder::{DecodeOptions, Decoder, DecoderConfig, Flush};
use openh264::formats::YUVSource;
use openh264::OpenH264API;

use super::ThumbError;
use crate::media::{stream_config, StreamConfig};

/// Most samples decoded for one thumbnail: a key frame and the frames after it up to the
/// one asked for. Ten seconds at 60 frames a second, well past any streaming GOP; a file
/// with key frames further apart gets 422 for frames far from them.
pub const MAX_DECODE_SAMPLES: usize = 600;

/// A decoded picture: 8-bit 4:2:0 planes, each row packed (stride = width).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// Luma width in pixels (as cropped by the stream).
    pub width: usize,
    /// Luma height in pixels.
    pub height: usize,
    /// Luma, `width * height` bytes.
    pub y: Vec<u8>,
    /// Cb, `chroma_width() * chroma_height()` bytes.
    pub u: Vec<u8>,
    /// Cr, as `u`.
    pub v: Vec<u8>,
}

impl Picture {
    /// Chroma plane width: half the luma's, rounded up.
    pub fn chroma_width(&self) -> usize {
        self.width.div_ceil(2)
    }

    /// Chroma plane height: half the luma's, rounded up.
    pub fn chroma_height(&self) -> usize {
        self.height.div_ceil(2)
    }
}

/// Decode `samples` (in decode order, from a sync sample to the frame asked for) of a
/// track whose sample description is `stsd` and return the `rank`-th picture in
/// presentation order. Pictures over `max_pixels` are refused before they are decoded
/// where the decoder says its size first (libavcodec); the caller checks the picture too.
///
/// # Errors
/// [`ThumbError::CodecNeedsFeature`] or [`ThumbError::UnsupportedCodec`] for codecs not
/// decoded here; [`ThumbError::FrameTooLarge`]; [`ThumbError::Undecodable`] with the reason
/// for a malformed sample or a decoder error, or when the decoder gives fewer pictures than
/// `rank + 1`.
pub fn decode_frame(
    fourcc: [u8; 4],
    stsd: &[u8],
    samples: &[Bytes],
    rank: usize,
    max_pixels: u64,
) -> Result<Picture, ThumbError> {
    // OpenH264 says a picture's size only with the picture: the caller checks that one.
    #[cfg(not(feature = "libavcodec"))]
    let _ = max_pixels;
    match route(fourcc)? {
        Route::OpenH264 => decode_h264(stsd, samples, rank),
        #[cfg(feature = "libavcodec")]
        Route::Libav(codec) => {
            let config = crate::media::decoder_configuration(stsd);
            super::libav::decode(codec, config.as_deref(), samples, rank, max_pixels)
        }
    }
}

/// The decoder a codec goes to.
enum Route {
    /// H.264, always built in.
    OpenH264,
    /// HEVC, AV1 or VP9, with the `libavcodec` feature.
    #[cfg(feature = "libavcodec")]
    Libav(super::libav::LibavCodec),
}

/// H.264 samples through OpenH264.
fn decode_h264(stsd: &[u8], samples: &[Bytes], rank: usize) -> Result<Picture, ThumbError> {
    let StreamConfig::Avc {
        length_size,
        parameter_sets,
    } = stream_config(stsd)
    else {
        return Err(undecodable("the avcC configuration cannot be read".into()));
    };
    let config = DecoderConfig::new().flush_after_decode(Flush::NoFlush);
    let mut decoder = Decoder::with_api_config(OpenH264API::from_source(), config)
        .map_err(|e| undecodable(format!("decoder start failed: {e}")))?;
    let mut stream = Vec::new();
    for set in &parameter_sets {
        stream.extend_from_slice(&START_CODE);
        stream.extend_from_slice(set);
    }
    let mut outputs = 0usize;
    for (n, sample) in samples.iter().enumerate() {
        append_annex_b(&mut stream, sample, length_size)
            .map_err(|reason| undecodable(format!("sample {} of the run: {reason}", n + 1)))?;
        let decoded = decoder
            .decode_with_options(
                &stream,
                DecodeOptions::new().flush_after_decode(Flush::NoFlush),
            )
            .map_err(|e| undecodable(format!("sample {} of the run: {e}", n + 1)))?;
        stream.clear();
        if let Some(yuv) = decoded {
            if outputs == rank {
                return copy_picture(&yuv);
            }
            outputs += 1;
        }
    }
    let rest = decoder
        .flush_remaining()
        .map_err(|e| undecodable(format!("flushing the decoder: {e}")))?;
    for yuv in rest {
        if outputs == rank {
            return copy_picture(&yuv);
        }
        outputs += 1;
    }
    Err(undecodable(format!(
        "the decoder gave {outputs} pictures for {} samples; picture {} was asked for",
        samples.len(),
        rank + 1
    )))
}

/// The decoder of a codec, or why this build has none.
fn route(fourcc: [u8; 4]) -> Result<Route, ThumbError> {
    #[cfg(feature = "libavcodec")]
    use super::libav::LibavCodec;
    #[cfg(not(feature = "libavcodec"))]
    let libav = |codec| {
        Err::<Route, _>(ThumbError::CodecNeedsFeature {
            codec,
            feature: "libavcodec",
        })
    };
    match &fourcc {
        b"avc1" | b"avc3" => Ok(Route::OpenH264),
        #[cfg(feature = "libavcodec")]
        b"hvc1" | b"hev1" | b"dvh1" | b"dvhe" => Ok(Route::Libav(LibavCodec::Hevc)),
        #[cfg(feature = "libavcodec")]
        b"av01" | b"dav1" => Ok(Route::Libav(LibavCodec::Av1)),
        #[cfg(feature = "libavcodec")]
        b"vp09" => Ok(Route::Libav(LibavCodec::Vp9)),
        #[cfg(not(feature = "libavcodec"))]
        b"hvc1" | b"hev1" | b"dvh1" | b"dvhe" => libav("HEVC"),
        #[cfg(not(feature = "libavcodec"))]
        b"av01" | b"dav1" => libav("AV1"),
        #[cfg(not(feature = "libavcodec"))]
        b"vp09" => libav("VP9"),
        _ => Err(ThumbError::UnsupportedCodec {
            fourcc: String::from_utf8_lossy(&fourcc).into_owned(),
        }),
    }
}

const START_CODE: [u8; 4] = [0, 0, 0, 1];

/// Append the NAL units of one length-prefixed sample as Annex B.
fn append_annex_b(out: &mut Vec<u8>, sample: &[u8], length_size: u8) -> Result<(), String> {
    let size = usize::from(length_size);
    if !(1..=4).contains(&size) {
        return Err(format!("NAL length size {length_size} is not 1 to 4"));
    }
    let mut rest = sample;
    if rest.is_empty() {
        return Err("the sample is empty".into());
    }
    while !rest.is_empty() {
        let (len_bytes, after) = rest
            .split_at_checked(size)
            .ok_or("a NAL length is cut off")?;
        let len = len_bytes
            .iter()
            .fold(0usize, |n, b| (n << 8) | usize::from(*b));
        let (nal, after) = after
            .split_at_checked(len)
            .ok_or_else(|| format!("a NAL unit of {len} bytes runs past the sample's end"))?;
        if nal.is_empty() {
            return Err("an empty NAL unit".into());
        }
        out.extend_from_slice(&START_CODE);
        out.extend_from_slice(nal);
        rest = after;
    }
    Ok(())
}

/// Copy a decoder picture (strided planes) into a packed [`Picture`].
fn copy_picture(yuv: &impl YUVSource) -> Result<Picture, ThumbError> {
    let (width, height) = yuv.dimensions();
    let (y_stride, u_stride, v_stride) = yuv.strides();
    let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
    let plane = |data: &[u8], stride: usize, w: usize, h: usize| -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(w.checked_mul(h)?);
        for row in 0..h {
            let start = row.checked_mul(stride)?;
            out.extend_from_slice(data.get(start..start.checked_add(w)?)?);
        }
        Some(out)
    };
    let short = || undecodable("the decoder's picture is smaller than it says".into());
    Ok(Picture {
        width,
        height,
        y: plane(yuv.y(), y_stride, width, height).ok_or_else(short)?,
        u: plane(yuv.u(), u_stride, cw, ch).ok_or_else(short)?,
        v: plane(yuv.v(), v_stride, cw, ch).ok_or_else(short)?,
    })
}

fn undecodable(reason: String) -> ThumbError {
    ThumbError::Undecodable { reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixed_units_become_annex_b_and_cut_ones_are_refused() {
        let mut out = Vec::new();
        append_annex_b(&mut out, &[0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 1, 0x06], 4).unwrap();
        assert_eq!(out, [0, 0, 0, 1, 0x65, 0x88, 0, 0, 0, 1, 0x06]);
        for (sample, size) in [
            (&[0u8, 0, 0, 9, 0x65][..], 4),
            (&[0, 0, 0][..], 4),
            (&[][..], 4),
            (&[0, 0, 0, 0][..], 4),
            (&[1, 0x65][..], 0),
        ] {
            assert!(append_annex_b(&mut Vec::new(), sample, size).is_err());
        }
    }

    #[test]
    fn codecs_go_to_their_decoder_or_name_the_feature() {
        assert!(matches!(route(*b"avc1"), Ok(Route::OpenH264)));
        for fourcc in [*b"hvc1", *b"hev1", *b"av01", *b"vp09"] {
            let routed = route(fourcc);
            #[cfg(feature = "libavcodec")]
            assert!(matches!(routed, Ok(Route::Libav(_))));
            #[cfg(not(feature = "libavcodec"))]
            match routed {
                Err(e) => assert!(e.to_string().contains("`libavcodec`"), "{e}"),
                Ok(_) => panic!("not decoded without the feature"),
            }
        }
        assert!(matches!(
            route(*b"mp4a"),
            Err(ThumbError::UnsupportedCodec { .. })
        ));
    }
}
