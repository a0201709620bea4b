//! Encrypted MPEG-TS segments: how a TS segment's bytes are protected ([`TsProtection`]),
//! its IV, and for HLS SAMPLE-AES the segment's samples read whole and encrypted before its
//! layout is known (`package::ts::sample_aes`: encryption changes the video's sizes). What
//! the multivariant playlist offers with SAMPLE-AES is the writer's
//! (`ManifestOptions::withheld`); AES-128 encrypts the written chunks as they stream
//! (`respond::ts_stream`).

use std::sync::Arc;

use bytes::Bytes;

use super::select::Protected;
use crate::crypto::Scheme;
use crate::package::protect::{hls_ts_sample_aes_iv, hls_ts_segment_iv};
use crate::package::ts::{
    encrypt_sample_aes_segment, prepare_ts_segment, TsRendition, TsSegment,
    MAX_SEGMENT_SAMPLE_BYTES,
};
use crate::package::PackageError;
use crate::server::error::ServeError;
use crate::server::offload::assemble_off_runtime;
use crate::server::titles::cached::{CachedTitle, TsAt};
use crate::source::{ByteRange, MediaSource, ObjectIdentity, ObjectKey};

/// How a TS segment's bytes are protected.
#[derive(Debug)]
pub enum TsProtection {
    Clear,
    /// HLS AES-128 (key, IV): the whole segment, CBC with PKCS#7 padding.
    Aes128([u8; 16], [u8; 16]),
    /// HLS SAMPLE-AES: the writer over the segment's samples, already encrypted (their
    /// sizes shape the layout, `package::ts::sample_aes`), and those samples per stream.
    SampleAes(Box<TsSegment>, Vec<Bytes>),
}

/// The IV of MPEG-TS segment `number` of the TS rendition named by `track_id` in output
/// `p`: AES-128 and SAMPLE-AES each from a base of their own (SAMPLE-AES: one IV for all
/// segments).
pub fn ts_segment_iv(cached: &CachedTitle, p: &Protected, track_id: u32, number: u64) -> [u8; 16] {
    match p.scheme {
        Scheme::Aes128 => hls_ts_segment_iv(&cached.token, &p.key.kid, track_id, number),
        _ => hls_ts_sample_aes_iv(&cached.token, &p.key.kid, track_id),
    }
}

/// Segment `segment` of TS rendition `r` (at `rendition`) of `cached` with HLS SAMPLE-AES: its
/// samples read whole from `objects` (one per program stream) and encrypted on the
/// blocking pool, giving the writer and its input. Encryption changes the video's sizes,
/// so the segment's length is known only now: a SAMPLE-AES segment holds its samples in
/// memory (at most `MAX_SEGMENT_SAMPLE_BYTES`), where a clear or AES-128 one streams.
///
/// # Errors
/// 422 for a program SAMPLE-AES does not cover or a segment too large; the source's
/// answers for its reads.
pub async fn sample_aes_segment(
    source: &Arc<dyn MediaSource>,
    (cached, r): (&Arc<CachedTitle>, &TsRendition),
    objects: &[(ObjectKey, ObjectIdentity)],
    (rendition, segment, key, iv): (TsAt, usize, [u8; 16], [u8; 16]),
) -> Result<TsProtection, ServeError> {
    let title = &cached.title;
    let program = r.program.with_sample_aes(&title.index)?;
    let clear = prepare_ts_segment(title, &r.program, &r.layout, segment, None)?;
    let total: u64 = clear.ranges.iter().flatten().map(|r| r.len).sum();
    if total > MAX_SEGMENT_SAMPLE_BYTES {
        let e = PackageError::NotInTs {
            track_id: r.rendition.track_id,
            reason: format!("a segment of {total} bytes of samples is too large for SAMPLE-AES"),
        };
        return Err(e.into());
    }
    let samples = read_samples(source, objects, &clear.ranges).await?;
    let title = cached.clone();
    let encrypt = move || {
        let r = (title.ts_slot().get())
            .and_then(|o| o.rendition_at(rendition))
            .ok_or(PackageError::NoTsRenditions)?;
        encrypt_sample_aes_segment(
            &title.title,
            &program,
            &r.layout,
            segment,
            samples,
            &key,
            &iv,
        )
    };
    // A usual segment (a few hundred KB) encrypts in well under a millisecond, less than a
    // hop to the blocking pool costs (docs/performance.md); large ones go there.
    let span = tracing::info_span!("segment.encrypt", vod.segment = segment + 1);
    let (writer, samples) = if total <= INLINE_ENCRYPT_BYTES {
        span.in_scope(encrypt)?
    } else {
        assemble_off_runtime(span, encrypt).await?
    };
    Ok(TsProtection::SampleAes(Box::new(writer), samples))
}

/// The bytes of each program stream's `ranges` (its samples, in order), read from its
/// object in `objects`. The streams of one object whose ranges fill most of the span they
/// cover (a muxed file interleaves them sample by sample) are read as that one span: one
/// read, where a read per range would be hundreds.
async fn read_samples(
    source: &Arc<dyn MediaSource>,
    objects: &[(ObjectKey, ObjectIdentity)],
    ranges: &[Vec<ByteRange>],
) -> Result<Vec<Bytes>, ServeError> {
    let mut out = vec![Bytes::new(); ranges.len()];
    let mut done = vec![false; ranges.len()];
    for (s, (key, identity)) in objects.iter().enumerate() {
        if done.get(s).copied().unwrap_or(true) {
            continue;
        }
        let group: Vec<usize> = (s..objects.len())
            .filter(|t| {
                objects
                    .get(*t)
                    .is_some_and(|o| o.0 == *key && o.1 == *identity)
            })
            .collect();
        let (mut first, mut end, mut total) = (u64::MAX, 0u64, 0u64);
        for t in &group {
            for r in ranges.get(*t).map(Vec::as_slice).unwrap_or_default() {
                (first, end, total) = (first.min(r.start), end.max(r.end()), total + r.len);
            }
        }
        let first = first.min(end);
        let span = end - first;
        let whole = if span == 0 {
            Some(Bytes::new())
        } else if span <= total + total / 4 + SPAN_SLACK_BYTES {
            let bytes = source.read_range(key, identity, ByteRange::new(first, span));
            Some(bytes.await?)
        } else {
            None
        };
        for t in group {
            let list = ranges.get(t).map(Vec::as_slice).unwrap_or_default();
            let parts = match &whole {
                Some(whole) => cut_ranges(whole, first, list)?,
                None => source.read_ranges(key, identity, list).await?,
            };
            if let (Some(slot), Some(flag)) = (out.get_mut(t), done.get_mut(t)) {
                *slot = match <[Bytes; 1]>::try_from(parts) {
                    Ok([one]) => one,
                    Err(parts) => Bytes::from(parts.concat()),
                };
                *flag = true;
            }
        }
    }
    Ok(out)
}

/// `ranges` cut from `whole`, the bytes from offset `first` on.
fn cut_ranges(whole: &Bytes, first: u64, ranges: &[ByteRange]) -> Result<Vec<Bytes>, ServeError> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let at = usize::try_from(r.start - first).unwrap_or(usize::MAX);
        let part = at
            .checked_add(r.len as usize)
            .filter(|end| *end <= whole.len())
            .map(|end| whole.slice(at..end));
        out.push(part.ok_or(ServeError::SourceEndedEarly)?);
    }
    Ok(out)
}

/// Bytes between a muxed file's ranges read over rather than split into more reads.
const SPAN_SLACK_BYTES: u64 = 256 * 1024;
/// Most bytes of samples of a SAMPLE-AES segment encrypted on the runtime worker itself.
const INLINE_ENCRYPT_BYTES: u64 = 1024 * 1024;
