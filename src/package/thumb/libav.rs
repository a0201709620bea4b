//! HEVC, AV1 and VP9 samples to a picture through the system's libavcodec, and libswscale
//! for what is not 8-bit 4:2:0 (10-bit HEVC and AV1, 4:2:2, 4:4:4, monochrome): built only
//! with the cargo feature `libavcodec`.
//!
//! Bound through `ffmpeg-sys-next` (bindgen-made from the installed headers, so struct
//! layouts are the installed FFmpeg's), not `ffmpeg-next` nor hand-written FFI. The unsafe
//! surface is this file: owned handles freed on drop, every length checked before it
//! crosses, and the picture's size held to the limits before it is allocated.

use std::ffi::{c_int, CStr};
use std::ptr;
use std::sync::Once;

use bytes::Bytes;
use ff::AVPixelFormat as Pix;
use ffmpeg_sys_next as ff;

use super::{Picture, ThumbError};

/// The codecs decoded here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibavCodec {
    /// HEVC (`hvc1`, `hev1`, Dolby Vision `dvh1`/`dvhe`).
    Hevc,
    /// AV1 (`av01`), through libdav1d where the build has it.
    Av1,
    /// VP9 (`vp09`).
    Vp9,
}

/// Pixel formats the decoders give that are converted; anything else (GBR, for one, whose
/// matrix `image.rs` would not apply) is refused rather than turned into a Rust enum from
/// an integer the headers may not list. Range travels in the frame, not the format, for
/// these decoders, so libswscale keeps the values' range as it is.
const CONVERTED: [Pix; 13] = [
    Pix::AV_PIX_FMT_YUV420P,
    Pix::AV_PIX_FMT_YUVJ420P,
    Pix::AV_PIX_FMT_YUV420P10LE,
    Pix::AV_PIX_FMT_YUV420P12LE,
    Pix::AV_PIX_FMT_YUV422P,
    Pix::AV_PIX_FMT_YUV422P10LE,
    Pix::AV_PIX_FMT_YUV422P12LE,
    Pix::AV_PIX_FMT_YUV444P,
    Pix::AV_PIX_FMT_YUV444P10LE,
    Pix::AV_PIX_FMT_YUV444P12LE,
    Pix::AV_PIX_FMT_GRAY8,
    Pix::AV_PIX_FMT_GRAY10LE,
    Pix::AV_PIX_FMT_GRAY12LE,
];

/// Decode `samples` of `codec` (configured by `config`) and return the picture of the
/// last sample; `rank` (its place in presentation order) stands in when the decoder gives
/// no timestamps.
///
/// # Errors
/// [`ThumbError::FrameTooLarge`] when the stream's header says a size over `max_pixels`;
/// [`ThumbError::Undecodable`] with libavcodec's reason for anything that does not decode.
pub fn decode(
    codec: LibavCodec,
    config: Option<&[u8]>,
    samples: &[Bytes],
    rank: usize,
    max_pixels: u64,
) -> Result<Picture, ThumbError> {
    static QUIET: Once = Once::new();
    // Decoder complaints reach the client as the 422's reason; on stderr they would only
    // interleave with the structured log.
    // SAFETY: sets a global integer; no other state.
    QUIET.call_once(|| unsafe { ff::av_log_set_level(ff::AV_LOG_QUIET) });
    let target = i64::try_from(samples.len()).map_err(|_| undecodable("too many samples"))? - 1;
    let mut decoder = Decoder::open(codec, config, max_pixels)?;
    let mut outputs = 0usize;
    for (n, sample) in samples.iter().enumerate() {
        let packet = Packet::copy_of(sample, n as i64)
            .map_err(|reason| undecodable(&format!("sample {} of the run: {reason}", n + 1)))?;
        decoder
            .send(Some(&packet))
            .map_err(|reason| undecodable(&format!("sample {} of the run: {reason}", n + 1)))?;
        if let Some(picture) = decoder.drain(target, rank, &mut outputs, max_pixels)? {
            return Ok(picture);
        }
    }
    decoder
        .send(None)
        .map_err(|reason| undecodable(&format!("flushing the decoder: {reason}")))?;
    if let Some(picture) = decoder.drain(target, rank, &mut outputs, max_pixels)? {
        return Ok(picture);
    }
    Err(undecodable(&format!(
        "the decoder gave {outputs} pictures for {} samples, not the last one's",
        samples.len()
    )))
}

/// An open decoder context, freed on drop.
struct Decoder {
    context: *mut ff::AVCodecContext,
    frame: Frame,
}

impl Decoder {
    fn open(codec: LibavCodec, config: Option<&[u8]>, max_pixels: u64) -> Result<Self, ThumbError> {
        let found = find_decoder(codec)
            .ok_or_else(|| undecodable(&format!("this libavcodec has no {codec:?} decoder")))?;
        let frame = Frame::new()?;
        // SAFETY: `found` is a registered decoder; a null context is an allocation failure.
        let context = unsafe { ff::avcodec_alloc_context3(found) };
        if context.is_null() {
            return Err(undecodable("out of memory for the decoder"));
        }
        let decoder = Decoder { context, frame };
        // SAFETY: `context` is a live, unopened context owned by `decoder`; extradata is
        // allocated by av_mallocz with the zeroed padding libavcodec requires and is freed
        // with the context.
        unsafe {
            let c = &mut *decoder.context;
            c.thread_count = 1;
            c.err_recognition |= ff::AV_EF_EXPLODE;
            c.max_pixels = i64::try_from(max_pixels).unwrap_or(i64::MAX);
            if let Some(config) = config.filter(|c| !c.is_empty()) {
                let size = c_int::try_from(config.len())
                    .map_err(|_| undecodable("the decoder configuration is too large"))?;
                let padded = config.len() + ff::AV_INPUT_BUFFER_PADDING_SIZE as usize;
                let extradata = ff::av_mallocz(padded).cast::<u8>();
                if extradata.is_null() {
                    return Err(undecodable("out of memory for the decoder configuration"));
                }
                ptr::copy_nonoverlapping(config.as_ptr(), extradata, config.len());
                c.extradata = extradata;
                c.extradata_size = size;
            }
            let opened = ff::avcodec_open2(decoder.context, found, ptr::null_mut());
            if opened < 0 {
                return Err(undecodable(&format!(
                    "the decoder does not start: {}",
                    error_text(opened)
                )));
            }
            // HEVC reads its SPS from the extradata on opening: refuse an oversized
            // picture here, before a frame is decoded.
            let (w, h) = (c.width, c.height);
            let pixels = u64::try_from(w).unwrap_or(0) * u64::try_from(h).unwrap_or(0);
            if pixels > max_pixels {
                return Err(ThumbError::FrameTooLarge {
                    width: w.unsigned_abs(),
                    height: h.unsigned_abs(),
                    pixels,
                    max: max_pixels,
                });
            }
        }
        Ok(decoder)
    }

    /// Send one packet (`None`: the end of the stream), having drained nothing: the
    /// caller drains after each send, so the decoder never answers EAGAIN here.
    fn send(&mut self, packet: Option<&Packet>) -> Result<(), String> {
        let raw = packet.map_or(ptr::null(), |p| p.0.cast_const());
        // SAFETY: an open context and a live packet (or null, the flush).
        let sent = unsafe { ff::avcodec_send_packet(self.context, raw) };
        match sent {
            0 => Ok(()),
            e => Err(error_text(e)),
        }
    }

    /// Take every picture the decoder has ready; the one tagged `target` (or, untagged,
    /// the `rank`-th) is returned as a [`Picture`].
    fn drain(
        &mut self,
        target: i64,
        rank: usize,
        outputs: &mut usize,
        max_pixels: u64,
    ) -> Result<Option<Picture>, ThumbError> {
        loop {
            // SAFETY: an open context and an owned frame, which receive_frame unrefs first.
            let got = unsafe { ff::avcodec_receive_frame(self.context, self.frame.0) };
            if got == ff::AVERROR(libc::EAGAIN) || got == ff::AVERROR_EOF {
                return Ok(None);
            }
            if got < 0 {
                return Err(undecodable(&error_text(got)));
            }
            // SAFETY: receive_frame filled the frame.
            let f = unsafe { &*self.frame.0 };
            let is_it = match f.pts {
                ff::AV_NOPTS_VALUE => *outputs == rank,
                pts => pts == target,
            };
            *outputs += 1;
            if !is_it {
                continue;
            }
            if f.flags & ff::AV_FRAME_FLAG_CORRUPT != 0 || f.decode_error_flags != 0 {
                return Err(undecodable("the decoder flagged the picture as corrupt"));
            }
            let pixels = u64::try_from(f.width).unwrap_or(0) * u64::try_from(f.height).unwrap_or(0);
            if pixels > max_pixels {
                return Err(ThumbError::FrameTooLarge {
                    width: f.width.unsigned_abs(),
                    height: f.height.unsigned_abs(),
                    pixels,
                    max: max_pixels,
                });
            }
            return to_picture(&self.frame).map(Some);
        }
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: the context was allocated by avcodec_alloc_context3 and is freed once.
        unsafe { ff::avcodec_free_context(&mut self.context) };
    }
}

/// An owned `AVFrame`.
struct Frame(*mut ff::AVFrame);

impl Frame {
    fn new() -> Result<Self, ThumbError> {
        // SAFETY: allocation only.
        let frame = unsafe { ff::av_frame_alloc() };
        match frame.is_null() {
            true => Err(undecodable("out of memory for a frame")),
            false => Ok(Frame(frame)),
        }
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        // SAFETY: allocated by av_frame_alloc, freed once.
        unsafe { ff::av_frame_free(&mut self.0) };
    }
}

/// An owned `AVPacket` holding a copy of one sample in a padded buffer.
struct Packet(*mut ff::AVPacket);

impl Packet {
    fn copy_of(sample: &[u8], tag: i64) -> Result<Self, String> {
        if sample.is_empty() {
            return Err("the sample is empty".into());
        }
        let size = c_int::try_from(sample.len()).map_err(|_| "the sample is too large")?;
        // SAFETY: allocation only.
        let packet = Packet(unsafe { ff::av_packet_alloc() });
        if packet.0.is_null() {
            return Err("out of memory for a packet".into());
        }
        // SAFETY: av_new_packet gives `size` bytes plus zeroed padding, which we fill with
        // exactly `size` bytes.
        unsafe {
            let made = ff::av_new_packet(packet.0, size);
            if made < 0 {
                return Err(error_text(made));
            }
            let p = &mut *packet.0;
            ptr::copy_nonoverlapping(sample.as_ptr(), p.data, sample.len());
            p.pts = tag;
            p.dts = tag;
        }
        Ok(packet)
    }
}

impl Drop for Packet {
    fn drop(&mut self) {
        // SAFETY: allocated by av_packet_alloc, freed once (null is allowed).
        unsafe { ff::av_packet_free(&mut self.0) };
    }
}

/// The decoder for `codec`: for AV1 libdav1d first (FFmpeg 5.1's own AV1 decoder works
/// only through hardware), then libaom, then whatever is registered.
fn find_decoder(codec: LibavCodec) -> Option<*const ff::AVCodec> {
    let by_name = |name: &CStr| {
        // SAFETY: a NUL-terminated name; the registry is static.
        let found = unsafe { ff::avcodec_find_decoder_by_name(name.as_ptr()) };
        (!found.is_null()).then_some(found)
    };
    let by_id = |id| {
        // SAFETY: a lookup in the static registry.
        let found = unsafe { ff::avcodec_find_decoder(id) };
        (!found.is_null()).then_some(found)
    };
    match codec {
        LibavCodec::Hevc => by_id(ff::AVCodecID::AV_CODEC_ID_HEVC),
        LibavCodec::Av1 => by_name(c"libdav1d")
            .or_else(|| by_name(c"libaom-av1"))
            .or_else(|| by_id(ff::AVCodecID::AV_CODEC_ID_AV1)),
        LibavCodec::Vp9 => by_id(ff::AVCodecID::AV_CODEC_ID_VP9),
    }
}

/// The decoded frame as 8-bit 4:2:0 planes: copied as they are, or converted by
/// libswscale (bit depth, chroma layout; the Y'CbCr values and range stay, so the colour
/// matrix is applied once, by `image.rs`, as for H.264).
fn to_picture(decoded: &Frame) -> Result<Picture, ThumbError> {
    // SAFETY: a frame filled by the decoder.
    let f = unsafe { &*decoded.0 };
    let format = CONVERTED
        .iter()
        .copied()
        .find(|p| *p as c_int == f.format)
        .ok_or_else(|| undecodable(&format!("pixel format {} is not converted", f.format)))?;
    if matches!(format, Pix::AV_PIX_FMT_YUV420P | Pix::AV_PIX_FMT_YUVJ420P) {
        return packed_planes(f);
    }
    let converted = Frame::new()?;
    // SAFETY: `converted` is a fresh frame given a buffer of the source's size; the
    // scaler is freed before return; sws_scale writes `f.height` rows into buffers that
    // av_frame_get_buffer padded and aligned for it.
    unsafe {
        let out = &mut *converted.0;
        out.width = f.width;
        out.height = f.height;
        out.format = Pix::AV_PIX_FMT_YUV420P as c_int;
        let got = ff::av_frame_get_buffer(converted.0, 0);
        if got < 0 {
            return Err(undecodable(&format!("out of memory: {}", error_text(got))));
        }
        let scaler = ff::sws_getContext(
            f.width,
            f.height,
            format,
            f.width,
            f.height,
            Pix::AV_PIX_FMT_YUV420P,
            ff::SWS_BICUBIC | ff::SWS_ACCURATE_RND,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null(),
        );
        if scaler.is_null() {
            return Err(undecodable("the pixel format converter does not start"));
        }
        let rows = ff::sws_scale(
            scaler,
            f.data.as_ptr().cast::<*const u8>(),
            f.linesize.as_ptr(),
            0,
            f.height,
            out.data.as_ptr(),
            out.linesize.as_ptr(),
        );
        ff::sws_freeContext(scaler);
        if rows != f.height {
            return Err(undecodable("the pixel format conversion failed"));
        }
        packed_planes(out)
    }
}

/// Copy the three planes of an 8-bit 4:2:0 frame into a packed [`Picture`].
fn packed_planes(f: &ff::AVFrame) -> Result<Picture, ThumbError> {
    let bad = || undecodable("the decoder's picture is not what it says");
    let width = usize::try_from(f.width).map_err(|_| bad())?;
    let height = usize::try_from(f.height).map_err(|_| bad())?;
    if width == 0 || height == 0 {
        return Err(bad());
    }
    let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
    let plane = |n: usize, w: usize, h: usize| -> Result<Vec<u8>, ThumbError> {
        let data = f.data[n];
        let stride = usize::try_from(f.linesize[n]).map_err(|_| bad())?;
        if data.is_null() || stride < w {
            return Err(bad());
        }
        let mut out = Vec::with_capacity(w.checked_mul(h).ok_or_else(bad)?);
        for row in 0..h {
            // SAFETY: a decoder's (or av_frame_get_buffer's) plane holds `h` rows of
            // `stride` bytes, each at least `w` wide (checked above).
            let line = unsafe { std::slice::from_raw_parts(data.add(row * stride), w) };
            out.extend_from_slice(line);
        }
        Ok(out)
    };
    Ok(Picture {
        width,
        height,
        y: plane(0, width, height)?,
        u: plane(1, cw, ch)?,
        v: plane(2, cw, ch)?,
    })
}

/// libavcodec's text for an error code.
fn error_text(code: c_int) -> String {
    let mut text = [0 as std::ffi::c_char; 128];
    // SAFETY: writes at most `text.len()` bytes, NUL-terminated.
    let known = unsafe { ff::av_strerror(code, text.as_mut_ptr(), text.len()) } == 0;
    match known {
        // SAFETY: av_strerror NUL-terminated it.
        true => unsafe { CStr::from_ptr(text.as_ptr()) }
            .to_string_lossy()
            .into_owned(),
        false => format!("error {code}"),
    }
}

fn undecodable(reason: &str) -> ThumbError {
    ThumbError::Undecodable {
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder configuration and the first `count` samples of the video of `name`.
    fn fixture_run(name: &str, count: usize) -> (Option<Vec<u8>>, Vec<Bytes>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let file = Bytes::from(std::fs::read(path).unwrap());
        let index =
            crate::media::index_from_bytes(&file, &crate::media::MediaLimits::default()).unwrap();
        let track = &index.tracks[0];
        let samples = (0..count)
            .map(|i| {
                let start = track.samples.offsets()[i] as usize;
                file.slice(start..start + track.samples.sizes[i] as usize)
            })
            .collect();
        let config = crate::media::decoder_configuration(&track.sample_description);
        (config, samples)
    }

    /// Given the 320x180 HEVC fixture and a limit of 320x179 pixels, then the decoder
    /// refuses it when it opens, from the SPS, before a sample is sent.
    #[test]
    fn hevc_over_the_pixel_limit_is_refused_before_decoding() {
        let (config, samples) = fixture_run("hevc-aac-3s.mp4", 1);
        let refused = decode(LibavCodec::Hevc, config.as_deref(), &samples, 0, 320 * 179);
        assert!(
            matches!(
                refused,
                Err(ThumbError::FrameTooLarge {
                    width: 320,
                    height: 180,
                    ..
                })
            ),
            "{refused:?}"
        );
        let ok = decode(LibavCodec::Hevc, config.as_deref(), &samples, 0, 320 * 180);
        assert_eq!(ok.map(|p| (p.width, p.height)), Ok((320, 180)));
    }

    /// Given the 10-bit AV1 fixture, then its key frame decodes to 8-bit 4:2:0 planes of
    /// its size; with a limit under its size, no picture comes out.
    #[test]
    fn ten_bit_av1_becomes_eight_bit_planes_and_obeys_the_limit() {
        let (config, samples) = fixture_run("av1-10bit-pq-aac-3s.mp4", 2);
        let picture = decode(LibavCodec::Av1, config.as_deref(), &samples, 1, 1 << 20).unwrap();
        assert_eq!((picture.width, picture.height), (320, 180));
        assert_eq!(picture.y.len(), 320 * 180);
        assert_eq!((picture.u.len(), picture.v.len()), (160 * 90, 160 * 90));
        assert!(decode(LibavCodec::Av1, config.as_deref(), &samples, 1, 320 * 179).is_err());
    }

    /// Given an empty sample or a sample of HEVC fed as VP9, then a reason, never a picture
    /// or a crash.
    #[test]
    fn empty_or_foreign_samples_are_undecodable() {
        let (config, samples) = fixture_run("hevc-aac-3s.mp4", 1);
        let empty = [Bytes::new()];
        let refused = decode(LibavCodec::Hevc, config.as_deref(), &empty, 0, 1 << 20);
        assert!(matches!(refused, Err(ThumbError::Undecodable { .. })));
        let foreign = decode(LibavCodec::Vp9, None, &samples, 0, 1 << 20);
        assert!(
            matches!(foreign, Err(ThumbError::Undecodable { .. })),
            "{foreign:?}"
        );
    }
}
