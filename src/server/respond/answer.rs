//! What an output answers with before HTTP semantics apply: its content (bytes in hand, or
//! a segment to stream: CMAF, clear or encrypted, or MPEG-TS), content type, cache policy
//! and entity tag. Plain data, made by `server::outputs` and sent by `reply.rs`.

use std::sync::Arc;

use bytes::Bytes;

use crate::crypto::cipher::SampleMode;
use crate::crypto::{SampleLayout, WholeSegmentEncryptor};
use crate::media::TrackKind;
use crate::package::ts::TsSegment;
use crate::package::PreparedSegment;
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::kept::TsAt;
use crate::source::{ObjectIdentity, ObjectKey};

/// Cache-Control for resources in a version folder (`v{token}/`): the token changes with
/// the object version and the packaging settings, so a CDN may keep them for ever.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Cache-Control for the entry manifests and unversioned names: short, so a replaced file
/// shows within a minute.
pub const MANIFEST: &str = "public, max-age=60";
/// Cache-Control for a manifest that carries the request's signed-URL token into its
/// URLs: a shared cache (a CDN) must neither hand one viewer's token to another nor answer
/// a request that has no token, so only the player keeps it.
pub const PRIVATE_MANIFEST: &str = "private, max-age=60";
/// Cache-Control for keys and licences: never stored by a CDN or a shared cache.
pub const KEYS: &str = "no-store, private";

/// Content type of HLS playlists.
pub const M3U8: &str = "application/vnd.apple.mpegurl";
/// Content type of the DASH MPD.
pub const MPD: &str = "application/dash+xml";
/// Content type of WebVTT subtitles.
pub const WEBVTT: &str = "text/vtt; charset=utf-8";
/// Content type of TS segments (RFC 8216 3.2).
pub const MP2T: &str = "video/mp2t";
/// Content type of DASH text init and media segments (ISO BMFF holding text, RFC 4337).
pub const TEXT_MP4: &str = "application/mp4";

/// Content type of a CMAF init or media segment of a `kind` track.
pub fn mp4_type(kind: TrackKind) -> &'static str {
    match kind {
        TrackKind::Video => "video/mp4",
        TrackKind::Audio => "audio/mp4",
    }
}

/// A successful answer's content and headers.
#[derive(Debug)]
pub struct Answer {
    pub content: Content,
    pub content_type: &'static str,
    pub cache_control: &'static str,
    pub etag: Option<String>,
}

impl Answer {
    /// Bytes known in full, not to be cached by anyone (health, metrics).
    pub fn plain(bytes: Bytes, content_type: &'static str) -> Self {
        Answer {
            content: Content::Inline(bytes),
            content_type,
            cache_control: "no-store",
            etag: None,
        }
    }

    /// A key or a licence: never stored by a CDN, no entity tag.
    pub fn key_material(bytes: Bytes, content_type: &'static str) -> Self {
        Answer {
            content: Content::Inline(bytes),
            content_type,
            cache_control: KEYS,
            etag: None,
        }
    }
}

/// What a successful request answers with, before HEAD, conditionals and ranges.
#[derive(Debug)]
pub enum Content {
    /// Bytes known in full (manifests, init segments, subtitles, metrics).
    Inline(Bytes),
    /// A CMAF media segment, clear or encrypted as it streams.
    Segment(CmafSegment),
    /// An MPEG-TS segment, written from the source as it streams (`ts_stream.rs`).
    Ts(TsSegmentJob),
}

impl Content {
    /// Bytes of the whole content.
    pub fn len(&self) -> u64 {
        match self {
            Content::Inline(b) => b.len() as u64,
            Content::Segment(segment) => segment.len(),
            Content::Ts(job) => job.len,
        }
    }
}

/// A CMAF media segment to stream: its header (with its protection boxes when encrypted),
/// then its payload read from the objects of `reads` in turn, through `cipher` when
/// encrypted.
#[derive(Debug)]
pub struct CmafSegment {
    /// Header bytes and the payload's source ranges.
    pub prepared: PreparedSegment,
    /// The objects its ranges are read from, in order.
    pub reads: Vec<SegmentRead>,
    /// How its bytes are encrypted; `None` when clear.
    pub cipher: Option<SegmentCipher>,
}

impl CmafSegment {
    /// Bytes of the answer: header and payload, padded under HLS AES-128.
    pub fn len(&self) -> u64 {
        let clear = self.prepared.content_length();
        match self.cipher {
            Some(SegmentCipher::Whole { .. }) => WholeSegmentEncryptor::encrypted_len(clear),
            _ => clear,
        }
    }
}

/// How an encrypted CMAF segment's bytes are encrypted.
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

/// The object some of a segment's source ranges are read from: the next `ranges` of its
/// `PreparedSegment::ranges` (a muxed segment's tracks may come from several objects).
#[derive(Debug, Clone)]
pub struct SegmentRead {
    pub key: ObjectKey,
    pub identity: ObjectIdentity,
    pub ranges: usize,
}

/// A TS segment to stream: which, from which objects, and how long it is.
#[derive(Debug)]
pub struct TsSegmentJob {
    pub cached: Arc<CachedTitle>,
    /// Where the rendition is in the TS output.
    pub rendition: TsAt,
    /// Position of the segment (0-based).
    pub segment: usize,
    /// The object (and version) each program stream is read from.
    pub objects: Vec<(ObjectKey, ObjectIdentity)>,
    /// Bytes of the answer: the whole segment, padded when encrypted.
    pub len: u64,
    /// How its bytes are protected.
    pub protection: TsProtection,
}
