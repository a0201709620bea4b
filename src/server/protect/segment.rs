//! Encrypted init and media segments: the protected sample entries of an init segment, a
//! media segment's `senc`/IVs and subsample layout, and the stream that encrypts its bytes
//! as they go out.
//!
//! Encryption runs while the body streams (`crypto::SampleEncryptor`); for `cenc`/`cbcs`
//! video the segment's NAL units are first scanned in one streamed pass, because `senc`
//! (in the header, sent first) lists every subsample: two source reads of each encrypted
//! video segment, no buffering (see docs/performance.md). Under `cbcs` that pass also
//! reads each slice header, from the start of its NAL unit only.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;

use super::select::Protected;
use crate::crypto::cipher::SampleMode;
use crate::crypto::{SampleEncryptor, SampleLayout, Scheme, Subsample, WholeSegmentEncryptor};
use crate::media::TrackKind;
use crate::package::protect::{
    cenc_sample_iv, constant_iv, hls_segment_iv, iv_base, protect_init_segment,
    protect_segment_header, video_subsamples, NalScanner, ProtectError, SampleEntryFormat,
    TrackProtection,
};
use crate::package::PreparedSegment;
use crate::server::body::window_part;
use crate::server::error::ServeError;
use crate::server::titles::cached::CachedTitle;
use crate::source::{ByteRange, ByteStream, MediaSource, ObjectIdentity, ObjectKey, SourceError};

fn track_protection(
    cached: &CachedTitle,
    stsd: &[u8],
    kind: TrackKind,
    p: &Protected,
) -> Result<TrackProtection, ServeError> {
    let format = TrackProtection::sample_format(stsd, kind)?;
    Ok(TrackProtection {
        scheme: p.scheme,
        key: (*p.key).clone(),
        constant_iv: constant_iv(&cached.token, &p.key.kid, "cbcs"),
        format,
    })
}

/// The init segment of `track_id` in output `p`: clear for AES-128 (the playlist puts
/// `EXT-X-MAP` before `EXT-X-KEY`), with protected sample entries for `cenc`/`cbcs`.
///
/// # Errors
/// 404 for a track that is no rendition, 422 for a codec that cannot be encrypted.
pub fn protected_init(
    cached: &CachedTitle,
    track_id: u32,
    p: &Protected,
) -> Result<Bytes, ServeError> {
    let not_found = || ServeError::NoRendition(track_id);
    let clear = cached.init_segment(track_id).ok_or_else(not_found)?;
    if p.scheme == Scheme::Aes128 {
        return Ok(clear);
    }
    let rendition = cached.title.rendition(track_id).ok_or_else(not_found)?;
    let track = (cached.title.index.tracks.get(rendition.track_pos)).ok_or_else(not_found)?;
    let tp = track_protection(cached, &track.sample_description, track.kind, p)?;
    Ok(Bytes::from(protect_init_segment(&clear, track.kind, &tp)?))
}

/// How a protected segment's bytes are encrypted.
#[derive(Debug)]
pub enum SegmentCipher {
    /// HLS AES-128: the whole segment, padded.
    Whole { key: [u8; 16], iv: [u8; 16] },
    /// `cenc`/`cbcs`: the samples after a clear header.
    Samples {
        key: [u8; 16],
        mode: SampleMode,
        layouts: Vec<SampleLayout>,
    },
}

/// A protected media segment ready to stream: clear header bytes and source ranges in,
/// `len` encrypted bytes out.
#[derive(Debug)]
pub struct ProtectedSegment {
    /// The header (protected boxes included), before encryption.
    pub header: Bytes,
    /// Source ranges of the payload.
    pub ranges: Vec<ByteRange>,
    /// Bytes of the answer.
    pub len: u64,
    /// The encryption.
    pub cipher: SegmentCipher,
}

/// Protect segment `number` of `track_id`, prepared in the clear as `prepared` and read
/// from `key` at `identity`.
///
/// # Errors
/// 422 for a codec that cannot be encrypted or samples that are not what they claim,
/// source errors as usual.
pub async fn protect_segment(
    (source, chunk): (&Arc<dyn MediaSource>, usize),
    (key, identity): (&ObjectKey, &ObjectIdentity),
    cached: &CachedTitle,
    (track_id, number): (u32, u64),
    prepared: PreparedSegment,
    p: &Protected,
) -> Result<ProtectedSegment, ServeError> {
    let PreparedSegment {
        header,
        ranges,
        payload_bytes,
    } = prepared;
    if p.scheme == Scheme::Aes128 {
        let len = WholeSegmentEncryptor::encrypted_len(header.len() as u64 + payload_bytes);
        return Ok(ProtectedSegment {
            header: Bytes::from(header),
            ranges,
            len,
            cipher: SegmentCipher::Whole {
                key: p.key.key,
                iv: hls_segment_iv(&cached.token, &p.key.kid, track_id, number),
            },
        });
    }
    let not_found = || ServeError::NoRendition(track_id);
    let rendition = cached.title.rendition(track_id).ok_or_else(not_found)?;
    let pos = rendition.track_pos;
    let track = cached.title.index.tracks.get(pos).ok_or_else(not_found)?;
    let plan = cached.title.plan.tracks.get(pos).ok_or_else(not_found)?;
    let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
    let samples = plan.samples(segment).ok_or_else(not_found)?;
    let sizes = track
        .samples
        .sizes
        .get(samples.clone())
        .ok_or_else(not_found)?;
    let tp = track_protection(cached, &track.sample_description, track.kind, p)?;
    let subsamples: Vec<Vec<Subsample>> = match tp.format {
        SampleEntryFormat::Nal(format) => {
            let mut scanner = match p.scheme {
                // Slice headers stay clear under `cbcs` (`video_subsamples`): their
                // lengths are read on the way, from the track's parameter sets.
                Scheme::Cbcs => {
                    let params = cached.slice_header_params(pos).ok_or_else(not_found)??;
                    NalScanner::with_slice_headers(format, track_id, sizes.to_vec(), params)
                }
                _ => NalScanner::new(format, track_id, sizes.to_vec()),
            };
            let mut chunks = (source.clone()).stream_ranges(
                key.clone(),
                identity.clone(),
                ranges.clone(),
                chunk,
            );
            while let Some(chunk) = chunks.next().await {
                scanner.feed(&chunk?)?;
            }
            let max = crate::package::protect::max_subsamples(tp.iv_size());
            let nals = scanner.finish()?;
            nals.iter()
                .map(|n| video_subsamples(n, format, p.scheme, max, track_id))
                .collect::<Result<_, ProtectError>>()?
        }
        SampleEntryFormat::Audio => Vec::new(),
    };
    let base = iv_base(&cached.token, &p.key.kid);
    let ivs: Vec<[u8; 16]> = (samples.clone())
        .map(|i| match p.scheme {
            Scheme::Cbcs => tp.constant_iv,
            _ => cenc_sample_iv(base, track_id, i as u64),
        })
        .collect();
    let header = protect_segment_header(&header, &tp, &ivs, &subsamples)?;
    let layouts = (ivs.iter().zip(sizes).enumerate())
        .map(|(k, (iv, size))| SampleLayout {
            iv: *iv,
            subsamples: match subsamples.get(k) {
                Some(subs) => subs.clone(),
                None => vec![Subsample {
                    clear: 0,
                    protected: *size,
                }],
            },
        })
        .collect();
    let mode = match p.scheme {
        Scheme::Cbcs => {
            let (crypt, skip) = tp.pattern();
            SampleMode::CbcPattern { crypt, skip }
        }
        _ => SampleMode::Ctr,
    };
    Ok(ProtectedSegment {
        len: header.len() as u64 + payload_bytes,
        header: Bytes::from(header),
        ranges,
        cipher: SegmentCipher::Samples {
            key: p.key.key,
            mode,
            layouts,
        },
    })
}

enum Encryptor {
    Whole(Box<WholeSegmentEncryptor>),
    Samples(Box<SampleEncryptor>),
}

/// The encrypted bytes `start..end` of a protected segment: the header and the source
/// chunks run through the encryptor, and the window cut from its output. Any failure
/// ends the stream with an error, so the body is cut rather than completed wrongly.
pub fn encrypted_stream(
    key: &ObjectKey,
    segment: ProtectedSegment,
    source_chunks: ByteStream,
    (start, end): (u64, u64),
) -> ByteStream {
    let header_len = segment.header.len() as u64;
    let encryptor = match segment.cipher {
        SegmentCipher::Whole { key, iv } => {
            Encryptor::Whole(Box::new(WholeSegmentEncryptor::new(&key, &iv)))
        }
        SegmentCipher::Samples { key, mode, layouts } => Encryptor::Samples(Box::new(
            SampleEncryptor::new(&key, mode, header_len, layouts),
        )),
    };
    let input = futures_util::stream::once(async move { Ok(segment.header) }).chain(source_chunks);
    let key_name = key.as_str().to_owned();
    let state = (Box::pin(input), Some(encryptor), 0u64);
    futures_util::stream::unfold(state, move |(mut input, mut encryptor, mut pos)| {
        let key_name = key_name.clone();
        async move {
            let fail = |e: String| SourceError::Io {
                key: key_name.clone(),
                source: std::io::Error::other(e),
            };
            loop {
                if pos >= end {
                    return None;
                }
                let out = match input.next().await {
                    Some(Err(e)) => return Some((Err(e), (input, None, end))),
                    Some(Ok(chunk)) => match encryptor.as_mut() {
                        Some(Encryptor::Whole(w)) => Ok(w.feed(&chunk)),
                        Some(Encryptor::Samples(s)) => {
                            s.feed(&chunk).map_err(|e| fail(e.to_string()))
                        }
                        None => return None,
                    },
                    None => match encryptor.take() {
                        Some(Encryptor::Whole(w)) => Ok(w.finish()),
                        Some(Encryptor::Samples(s)) => s
                            .finish()
                            .map(|()| Bytes::new())
                            .map_err(|e| fail(e.to_string())),
                        None => return None,
                    },
                };
                let bytes = match out {
                    Ok(b) => b,
                    Err(e) => return Some((Err(e), (input, None, end))),
                };
                let (from, to) = (pos, pos + bytes.len() as u64);
                pos = to;
                if let Some(piece) = window_part(&bytes, from, start..end) {
                    return Some((Ok(piece), (input, encryptor, pos)));
                }
                if encryptor.is_none() && to == from {
                    return None;
                }
            }
        }
    })
    .boxed()
}
