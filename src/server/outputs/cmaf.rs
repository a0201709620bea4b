//! CMAF init and media segments, and the key frames trick play offers, clear or encrypted:
//! what a segment's bytes are and how they are protected is decided here, in one step.
//!
//! A segment's header is built on the blocking pool; for `cenc`/`cbcs` video its NAL units
//! are then scanned in one streamed pass, because `senc` (in the header, sent first) lists
//! every subsample: two source reads of each encrypted video segment, no buffering (see
//! docs/performance.md). The boxes and IVs are `package::encrypt`'s; the payload streams
//! from the source, through the cipher when encrypted, when the response is sent
//! (`respond::reply`).

use bytes::Bytes;
use futures_util::StreamExt;

use crate::crypto::{ContentKey, Scheme};
use crate::package::encrypt::{
    constant_iv, encrypt_segment, hls_segment_iv, iv_base, protect_init_segment, NalScanner,
    SampleEntryFormat, TrackProtection,
};
use crate::package::trick::prepare_key_frame;
use crate::package::{prepare_media_segment, PackageError, PreparedSegment, Resource};
use crate::server::access::select::Protected;
use crate::server::error::ServeError;
use crate::server::offload;
use crate::server::respond::answer::{
    mp4_type, Answer, CmafSegment, Content, SegmentCipher, SegmentRead,
};
use crate::server::title_request::TitleRequest;
use crate::source::{ObjectIdentity, ObjectKey};

/// `init-tN.mp4`, `seg-tN-K.m4s` (media segment K) or `ifr-tN-J.m4s` (key frame J, clear
/// only).
///
/// # Errors
/// [`ServeError::NoRendition`] for a track that is no rendition; a segment past the plan;
/// a key frame of an encrypted output; a codec that cannot be encrypted and the
/// encryption's other errors.
pub async fn cmaf_segment(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    match req.resource {
        Resource::Init { track_id } => init(req, track_id),
        Resource::Segment { track_id, number } => {
            Box::pin(segment(req, track_id, number, false)).await
        }
        Resource::KeyFrame { track_id, number } => {
            Box::pin(segment(req, track_id, number, true)).await
        }
        resource => Err(ServeError::NoRendition(resource.track_id().unwrap_or(0))),
    }
}

/// An init segment: clear, or with the protected sample entries of `cenc`/`cbcs` (clear
/// for AES-128: the playlist puts `EXT-X-MAP` before `EXT-X-KEY`).
fn init(req: &TitleRequest<'_>, track_id: u32) -> Result<Answer, ServeError> {
    let kind = req.rendition(track_id)?.kind;
    let cached = &req.cached;
    let not_found = || ServeError::NoRendition(track_id);
    let clear =
        (cached.caches.inits.init_segment(&cached.title, track_id)).ok_or_else(not_found)?;
    // A track the key split leaves clear (`UNENCRYPTED`) has the clear init segment.
    let keyed = match &req.protected {
        Some(p) if p.scheme != Scheme::Aes128 => {
            p.track_key(&cached.title, track_id)?.map(|key| (p, key))
        }
        _ => None,
    };
    let init = match keyed {
        Some((p, key)) => {
            let rendition = cached.title.rendition(track_id).ok_or_else(not_found)?;
            let track =
                (cached.title.index.tracks.get(rendition.track_pos)).ok_or_else(not_found)?;
            let tp = track_protection(req, &track.sample_description, track.kind, p, key)?;
            Bytes::from(protect_init_segment(&clear, track.kind, &tp)?)
        }
        None => clear,
    };
    Ok(req.answer(Content::Inline(init), mp4_type(kind)))
}

/// How the track with sample entry `stsd` is protected in output `p`, under its `key`
/// (the title's one key, or its usage's under a key split): the `cbcs` constant IV
/// derives from that key's KID, as the segments' IVs do.
fn track_protection(
    req: &TitleRequest<'_>,
    stsd: &[u8],
    kind: crate::media::TrackKind,
    p: &Protected,
    key: &ContentKey,
) -> Result<TrackProtection, ServeError> {
    let format = TrackProtection::sample_format(stsd, kind)?;
    let other_kids = match p.keys.presets.is_shared() {
        true => Vec::new(),
        false => (p.keys.iter())
            .map(|(_, k)| k.kid)
            .filter(|kid| *kid != key.kid)
            .collect(),
    };
    Ok(TrackProtection {
        scheme: p.scheme,
        key: key.clone(),
        constant_iv: constant_iv(&req.cached.token, &key.kid, "cbcs"),
        format,
        other_kids,
    })
}

/// Media segment `number` of `track_id`, or its key frame `number` (`key_frame`).
async fn segment(
    req: &TitleRequest<'_>,
    track_id: u32,
    number: u64,
    key_frame: bool,
) -> Result<Answer, ServeError> {
    if key_frame && req.protected.is_some() {
        return Err(ServeError::trick_play_not_offered());
    }
    let kind = req.rendition(track_id)?.kind;
    let (key, identity) = req.object_of(track_id);
    let title = req.cached.clone();
    let assemble = tracing::info_span!(
        "segment.assemble",
        vod.track_id = track_id,
        vod.segment = number
    );
    // A key frame is one sample; a media segment, its track's samples in the plan.
    let samples = match key_frame {
        true => 1,
        false => (req.cached.title.rendition(track_id))
            .and_then(|r| req.cached.title.plan.tracks.get(r.track_pos))
            .and_then(|t| {
                t.samples(usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX))
            })
            .map_or(usize::MAX, |r| r.len()),
    };
    let prepared = Box::pin(offload::assemble(assemble, samples, move || {
        let title = &title.title;
        let rendition = title.rendition(track_id).ok_or(PackageError::NoSuchTrack {
            track: u64::from(track_id),
        })?;
        match key_frame {
            true => prepare_key_frame(title, rendition, number),
            false => {
                let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
                prepare_media_segment(&title.index, &title.plan, rendition.track_pos, segment)
            }
        }
    }))
    .await?;
    // A track the key split leaves clear (`UNENCRYPTED`) streams as the clear output's.
    let keyed = match &req.protected {
        Some(p) => p.track_key(&req.cached.title, track_id)?.map(|k| (p, k)),
        None => None,
    };
    let segment = match keyed {
        Some((p, track_key)) => {
            Box::pin(encrypted(
                req,
                (&key, &identity),
                (track_id, number),
                prepared,
                (p, track_key),
            ))
            .await?
        }
        None => {
            let ranges = prepared.ranges.len();
            let reads = vec![SegmentRead {
                key,
                identity,
                ranges,
            }];
            CmafSegment {
                prepared,
                reads,
                cipher: None,
            }
        }
    };
    Ok(req.answer(Content::Segment(segment), mp4_type(kind)))
}

/// Segment `number` of `track_id`, prepared in the clear as `prepared` and read from `key`
/// at `identity`, encrypted in output `p` under the track's key `ck`: AES-128 whole;
/// `cenc`/`cbcs` by sample, its video samples' NAL units scanned first (one streamed read)
/// for `senc`'s subsamples.
///
/// # Errors
/// 422 for a codec that cannot be encrypted or samples that are not what they claim,
/// source errors as usual.
async fn encrypted(
    req: &TitleRequest<'_>,
    (key, identity): (&ObjectKey, &ObjectIdentity),
    (track_id, number): (u32, u64),
    prepared: PreparedSegment,
    (p, ck): (&Protected, &ContentKey),
) -> Result<CmafSegment, ServeError> {
    let cached = &req.cached;
    let reads = vec![SegmentRead {
        key: key.clone(),
        identity: identity.clone(),
        ranges: prepared.ranges.len(),
    }];
    if p.scheme == Scheme::Aes128 {
        let iv = hls_segment_iv(&cached.token, &ck.kid, track_id, number);
        return Ok(CmafSegment {
            prepared,
            reads,
            cipher: Some(SegmentCipher::Whole { key: ck.key, iv }),
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
    let tp = track_protection(req, &track.sample_description, track.kind, p, ck)?;
    let nals = match tp.format {
        SampleEntryFormat::Nal(format) => {
            let mut scanner = match p.scheme {
                // Slice headers stay clear under `cbcs` (`video_subsamples`): their
                // lengths are read on the way, from the track's parameter sets.
                Scheme::Cbcs => {
                    let params = (cached.caches.slices)
                        .slice_header_params(&cached.title, pos)
                        .ok_or_else(not_found)??;
                    NalScanner::with_slice_headers(format, track_id, sizes.to_vec(), params)
                }
                _ => NalScanner::new(format, track_id, sizes.to_vec()),
            };
            let source = req.app.catalog.source().clone();
            let chunk = req.app.settings.stream_chunk_bytes;
            let ranges = prepared.ranges.clone();
            let mut chunks = source.stream_ranges(key.clone(), identity.clone(), ranges, chunk);
            while let Some(chunk) = chunks.next().await {
                scanner.feed(&chunk?)?;
            }
            scanner.finish()?
        }
        SampleEntryFormat::Audio => Vec::new(),
    };
    let base = iv_base(&cached.token, &ck.kid);
    let sealed = encrypt_segment(
        &prepared.header,
        &tp,
        (track_id, samples),
        sizes,
        &nals,
        base,
    )?;
    Ok(CmafSegment {
        prepared: PreparedSegment {
            header: sealed.header,
            ..prepared
        },
        reads,
        cipher: Some(SegmentCipher::Samples {
            key: ck.key,
            mode: sealed.mode,
            layouts: sealed.layouts,
        }),
    })
}
