//! Protection in the server: which output a request's version folder selects, keys and
//! licences, signed-URL checks, CORS origins, and the encrypting segment stream.
//!
//! Protected output lives in its own version folder: the token of an encrypted output is
//! a hash of the clear token, the scheme and the KID ([`protected_token`]), so HLS
//! AES-128 and DASH `cenc` segments of one title never share a URL (or a CDN entry) with
//! each other or with clear ones, and a new key secret changes every URL. The clear
//! folder serves media only while some output is configured clear: fail closed. Every
//! error on a protected path is an error answer, never clear bytes.
//! Encryption runs while the body streams (`crypto::SampleEncryptor`); for `cenc`/`cbcs`
//! video the segment's NAL units are first scanned in one streamed pass, because `senc`
//! (in the header, sent first) lists every subsample: two source reads of each encrypted
//! video segment, no buffering (see docs/performance.md).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{self, HeaderMap, HeaderValue};
use http::StatusCode;

use super::catalog::CachedTitle;
use super::error::ErrorAnswer;
use super::route::Route;
use super::App;
use crate::crypto::cipher::SampleMode;
use crate::crypto::cpix::CpixKeyProvider;
use crate::crypto::settings::{ProtectSettings, SignedUrls};
use crate::crypto::token::token_in_query;
use crate::crypto::{
    ContentKey, EncryptionPolicy, KeyProvider, SampleEncryptor, SampleLayout, Scheme,
    SecretKeyProvider, Subsample, TokenError, TokenSigner, WholeSegmentEncryptor,
};
use crate::media::TrackKind;
use crate::package::protect::manifest::{self, HlsKey};
use crate::package::protect::{
    cenc_sample_iv, constant_iv, hls_segment_iv, hls_ts_sample_aes_iv, hls_ts_segment_iv, iv_base,
    protect_init_segment, protect_segment_header, video_subsamples, NalScanner, ProtectError,
    SampleEntryFormat, TrackProtection,
};
use crate::package::{PreparedSegment, Resource};
use crate::source::{ByteRange, ByteStream, ObjectIdentity, ObjectKey, SourceError};

/// The client's address, put in each request's extensions by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub IpAddr);

/// Name of the HLS AES-128 key resource (GET, 16 raw bytes).
pub const KEY_NAME: &str = "hls.key";
/// Name of the W3C ClearKey licence resource (POST, EME ClearKey JSON).
pub const LICENCE_NAME: &str = "clearkey.json";
/// Largest licence request body read.
const MAX_LICENCE_REQUEST_BYTES: usize = 16 * 1024;

/// Keys, policy and token checks of a running server.
#[derive(Debug)]
pub struct Protector {
    settings: ProtectSettings,
    provider: Option<Arc<dyn KeyProvider>>,
    signer: Option<TokenSigner>,
}

impl Protector {
    /// The protection of `settings` (already checked by `config`).
    pub fn new(settings: &ProtectSettings) -> Self {
        let provider = match (&settings.cpix, settings.key_secret.clone()) {
            (Some(options), _) => match CpixKeyProvider::new(options.clone()) {
                Ok(p) => Some(Arc::new(p) as Arc<dyn KeyProvider>),
                Err(e) => {
                    // Fail closed: every encrypted request is then an error answer.
                    tracing::error!(error = %e, "cpix key provider unavailable");
                    None
                }
            },
            (None, Some(secret)) => Some(Arc::new(SecretKeyProvider::new(secret)) as _),
            (None, None) => None,
        };
        let signer =
            (settings.url_secret.clone()).map(|s| TokenSigner::new(s, settings.token_skew_secs));
        Self {
            settings: settings.clone(),
            provider,
            signer,
        }
    }

    /// The server's default encryption per output.
    pub fn policy(&self) -> EncryptionPolicy {
        self.settings.encryption
    }

    /// The key provider's name, if keys are configured.
    pub fn provider_kind(&self) -> Option<&'static str> {
        self.provider.as_ref().map(|p| p.kind())
    }

    /// Whether `route` needs a token.
    pub fn needs_token(&self, route: &Route) -> bool {
        match (self.settings.signed_urls, route) {
            (SignedUrls::Off, _) => false,
            (_, Route::Key { .. } | Route::Licence { .. }) => true,
            // nginx-vod's names carry no version folder and may be manifests or media:
            // with signing on, each needs its own token (fail closed).
            (_, Route::NginxVod { .. }) => true,
            (SignedUrls::All, Route::Vod { .. }) => true,
            (SignedUrls::Entry, Route::Vod { resource, .. }) => matches!(
                resource,
                Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd
            ),
            _ => false,
        }
    }

    /// Check the token of a request for `route` at `path` with `query`, from `client`.
    ///
    /// # Errors
    /// Why it is refused (the client only ever sees a bare 403).
    pub fn check(
        &self,
        route: &Route,
        path: &str,
        query: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<(), TokenError> {
        if !self.needs_token(route) {
            return Ok(());
        }
        let Some(signer) = &self.signer else {
            return Err(TokenError::Missing);
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let ip = client.map(|ip| ip.to_string()).unwrap_or_default();
        signer.check(token_in_query(query), path, &ip, now)
    }

    /// Whether answers depend on more than the request's path and the title: signed URLs
    /// (their tokens are carried into manifests) or a CORS origin list.
    pub fn answers_vary_by_request(&self) -> bool {
        self.settings.signed_urls != SignedUrls::Off || !self.settings.cors_origins.is_empty()
    }

    /// Whether [`Protector::check`] reads the client's address (signed URLs are on): the
    /// server attaches it to each request only then.
    pub fn reads_client_addr(&self) -> bool {
        self.signer.is_some()
    }

    /// The token to carry into the URLs a manifest refers to, when signing is on.
    fn carried_token<'q>(&self, query: Option<&'q str>) -> Option<&'q str> {
        (self.settings.signed_urls != SignedUrls::Off)
            .then(|| token_in_query(query))
            .flatten()
    }

    /// Replace `*` by the request's origin when it is on the configured list (and drop
    /// the header when it is not); nothing changes when no list is set.
    pub fn apply_cors(&self, origin: Option<&HeaderValue>, headers: &mut HeaderMap) {
        if self.settings.cors_origins.is_empty() {
            return;
        }
        headers.remove(header::ACCESS_CONTROL_ALLOW_ORIGIN);
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
        let allowed = origin.filter(|o| {
            o.to_str()
                .is_ok_and(|o| self.settings.cors_origins.iter().any(|a| a == o))
        });
        if let Some(origin) = allowed {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        }
    }

    async fn content_key(&self, title_key: &ObjectKey) -> Result<Arc<ContentKey>, ErrorAnswer> {
        let provider = self.provider.as_ref().ok_or_else(|| {
            ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "no key provider")
        })?;
        provider
            .content_key(title_key.as_str())
            .await
            .map_err(|e| ErrorAnswer::from(&e))
    }
}

/// The version token of `scheme`'s output of a title whose clear token is `clear` and
/// whose KID is `kid`: 16 lowercase hex digits, like every version token.
pub fn protected_token(clear: &str, scheme: Scheme, kid: &[u8; 16]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let fields: [&[u8]; 3] = [clear.as_bytes(), scheme.name().as_bytes(), kid];
    for field in fields {
        for b in field.iter().chain(b"\0") {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// A protected output, as a request selected it.
#[derive(Debug, Clone)]
pub struct Protected {
    /// Its scheme.
    pub scheme: Scheme,
    /// The title's key.
    pub key: Arc<ContentKey>,
    /// Its version token.
    pub token: String,
}

/// What a request's version folder (or entry manifest) selects.
#[derive(Debug, Clone)]
pub enum Selected {
    /// Clear output, under the clear token.
    Clear,
    /// Encrypted output.
    Protected(Protected),
}

/// Which output a request for `resource` of `cached`, in version folder `version`,
/// selects; a folder that is neither the clear token (while a clear output is
/// configured) nor an encrypted output's token is gone (404).
///
/// # Errors
/// 404 for a gone version, 503 when the key is unavailable.
pub async fn select(
    app: &App,
    key: &ObjectKey,
    cached: &CachedTitle,
    version: Option<&str>,
    resource: &Resource,
) -> Result<Selected, ErrorAnswer> {
    let gone = || {
        ErrorAnswer::new(
            StatusCode::NOT_FOUND,
            "this version of the title is gone; reload the playlist",
        )
    };
    let policy = cached.encryption.unwrap_or(app.protect.policy());
    if !policy.any() {
        return match version {
            Some(v) if v != cached.token => Err(gone()),
            _ => Ok(Selected::Clear),
        };
    }
    // Boxed, so a clear answer's future does not carry the key lookup inline.
    Box::pin(select_protected(
        app, key, cached, version, resource, policy,
    ))
    .await
}

/// [`select`] for a title with an encrypted output.
async fn select_protected(
    app: &App,
    key: &ObjectKey,
    cached: &CachedTitle,
    version: Option<&str>,
    resource: &Resource,
    policy: EncryptionPolicy,
) -> Result<Selected, ErrorAnswer> {
    let gone = || {
        ErrorAnswer::new(
            StatusCode::NOT_FOUND,
            "this version of the title is gone; reload the playlist",
        )
    };
    let ts = matches!(
        resource,
        Resource::MultivariantTs
            | Resource::TsMediaPlaylist { .. }
            | Resource::TsIframePlaylist { .. }
            | Resource::TsSegment { .. }
            | Resource::TsSubtitleSegment { .. }
    );
    // MPEG-TS is encrypted as HLS is: AES-128 whole segments, or Apple's sample encryption
    // where HLS is SAMPLE-AES. An encrypted TS output has no I-frame playlists, as an
    // encrypted CMAF output has no trick play (fail closed).
    if matches!(resource, Resource::TsIframePlaylist { .. }) && policy.hls.is_some() {
        return Err(ErrorAnswer::new(
            StatusCode::NOT_FOUND,
            "I-frame playlists are not offered for encrypted output",
        ));
    }
    let content_key = app.protect.content_key(key).await?;
    let protected = |scheme: Scheme| {
        Selected::Protected(Protected {
            scheme,
            token: protected_token(&cached.token, scheme, &content_key.kid),
            key: content_key.clone(),
        })
    };
    let entry_scheme = match resource {
        Resource::Multivariant | Resource::MultivariantTs => Some(policy.hls),
        Resource::Mpd => Some(policy.dash),
        _ => None,
    };
    let clear_allowed = policy.hls.is_none() || policy.dash.is_none();
    let by_version = policy.schemes().into_iter().find(|s| {
        version.is_some_and(|v| v == protected_token(&cached.token, *s, &content_key.kid))
    });
    let selected = match (entry_scheme, by_version, version) {
        (Some(Some(scheme)), _, None) => Ok(protected(scheme)),
        (Some(Some(scheme)), Some(found), _) if found == scheme => Ok(protected(scheme)),
        (Some(None), _, None) => Ok(Selected::Clear),
        (Some(None), _, Some(v)) if v == cached.token => Ok(Selected::Clear),
        (Some(_), _, _) => Err(gone()),
        (None, Some(scheme), _) => Ok(protected(scheme)),
        (None, None, Some(v)) if v == cached.token && clear_allowed => Ok(Selected::Clear),
        (None, None, None) if clear_allowed => Ok(Selected::Clear),
        (None, None, _) => Err(gone()),
    };
    // MPEG-TS is HLS only: with HLS encrypted it is never served clear, even from a clear
    // folder kept open for DASH (fail closed).
    if ts && matches!(selected, Ok(Selected::Clear)) {
        return Err(gone());
    }
    selected
}

/// Where a request came from, for the URLs protected manifests write.
#[derive(Debug, Clone)]
pub struct RequestPlace<'r> {
    /// The request's headers, for its base URL (see [`base_url`]); `None` writes URLs
    /// relative to the server.
    pub headers: Option<&'r HeaderMap>,
    /// The request path.
    pub path: &'r str,
    /// The query string.
    pub query: Option<&'r str>,
}

impl RequestPlace<'_> {
    /// Whether manifests answered to this request carry its token into their URLs.
    pub fn carries_token(app: &App, place: &RequestPlace<'_>) -> bool {
        app.protect.carried_token(place.query).is_some()
    }

    /// Scheme and authority (`http://host:port`), no trailing slash; empty without
    /// headers. Worked out only by the manifests that write absolute URLs.
    fn base_url(&self, app: &App) -> String {
        self.headers.map_or_else(String::new, |h| base_url(app, h))
    }

    /// `/vod/KEY/` of the request (its path without the name and version folder), as sent.
    fn title_dir(&self) -> &str {
        let dir = self.path.rsplit_once('/').map_or("/", |(d, _)| d);
        let dir = match dir.rsplit_once('/') {
            Some((parent, last)) if crate::package::parse_version_folder(last).is_some() => parent,
            _ => dir,
        };
        // Keep the trailing slash.
        self.path.get(..dir.len() + 1).unwrap_or("/")
    }
}

/// The base URL for a request: the configured public URL, else `http://` and its Host.
pub fn base_url(app: &App, headers: &HeaderMap) -> String {
    if let Some(url) = &app.settings.protect.public_url {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// The protected form of a manifest: its clear rendering with the protected version
/// folder, the key signalling, and the request's token carried into its URLs.
pub fn protected_manifest(
    app: &App,
    cached: &CachedTitle,
    resource: &Resource,
    clear: &Bytes,
    p: &Protected,
    place: &RequestPlace<'_>,
) -> Bytes {
    let text = String::from_utf8_lossy(clear);
    let token = app.protect.carried_token(place.query);
    let query = token.map(|t| format!("token={t}"));
    let licence = format!("{}{}{LICENCE_NAME}", place.base_url(app), place.title_dir());
    let with_token = |url: &str| match &query {
        Some(q) => format!("{url}?{q}"),
        None => url.to_owned(),
    };
    let out = match resource {
        Resource::Multivariant | Resource::MultivariantTs => {
            // Trick play is clear-only for now: its key frames are not encrypted, so an
            // encrypted output does not offer them (fail closed; vod_answer refuses them).
            let text = manifest::hls_without_iframes(&text);
            let swapped = manifest::swap_version_folder(&text, &cached.token, &p.token);
            let method = HlsKey::of(p.scheme, *resource == Resource::MultivariantTs);
            let uri = match method {
                HlsKey::SampleAesClearKey => licence,
                _ => format!("{}{KEY_NAME}", crate::package::version_folder(&p.token)),
            };
            let out = manifest::hls_multivariant(&swapped, method, &uri, &p.key);
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::MediaPlaylist { track_id } if cached.title.rendition(*track_id).is_some() => {
            let uri = match p.scheme {
                Scheme::Aes128 => KEY_NAME.to_owned(),
                _ => licence,
            };
            let (token, kid, track) = (&cached.token, p.key.kid, *track_id);
            let method = HlsKey::of(p.scheme, false);
            let out = manifest::hls_media_playlist(&text, method, &uri, &p.key, |n| {
                hls_segment_iv(token, &kid, track, n)
            });
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        // A TS rendition's playlist (AES-128 or SAMPLE-AES, `select`): named by its video's
        // track.
        Resource::TsMediaPlaylist { track_id } if cached.title.rendition(*track_id).is_some() => {
            let method = HlsKey::of(p.scheme, true);
            let out = manifest::hls_media_playlist(&text, method, KEY_NAME, &p.key, |n| {
                ts_segment_iv(cached, p, *track_id, n)
            });
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::Mpd => {
            let text = manifest::dash_without_trick_play(&text);
            let swapped = manifest::swap_version_folder(&text, &cached.token, &p.token);
            let out = manifest::dash_mpd(&swapped, p.scheme, &p.key, &with_token(&licence));
            match &query {
                Some(q) => manifest::dash_with_query(&out, q),
                None => out,
            }
        }
        // Subtitle playlists: not encrypted, only the token carried on.
        _ => match &query {
            Some(q) => manifest::hls_with_query(&text, q),
            None => text.into_owned(),
        },
    };
    Bytes::from(out)
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

/// A clear manifest with the request's token carried into its URLs (signed URLs on
/// every path, nothing encrypted).
pub fn clear_manifest(app: &App, resource: &Resource, clear: Bytes, query: Option<&str>) -> Bytes {
    let Some(token) = app.protect.carried_token(query) else {
        return clear;
    };
    let q = format!("token={token}");
    let text = String::from_utf8_lossy(&clear);
    Bytes::from(match resource {
        Resource::Mpd => manifest::dash_with_query(&text, &q),
        _ => manifest::hls_with_query(&text, &q),
    })
}

fn track_protection(
    cached: &CachedTitle,
    stsd: &[u8],
    kind: TrackKind,
    p: &Protected,
) -> Result<TrackProtection, ErrorAnswer> {
    let format = TrackProtection::sample_format(stsd, kind).map_err(|e| ErrorAnswer::from(&e))?;
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
) -> Result<Bytes, ErrorAnswer> {
    let not_found = || ErrorAnswer::new(StatusCode::NOT_FOUND, format!("no rendition {track_id}"));
    let clear = cached.init_segment(track_id).ok_or_else(not_found)?;
    if p.scheme == Scheme::Aes128 {
        return Ok(clear);
    }
    let rendition = cached.title.rendition(track_id).ok_or_else(not_found)?;
    let track = (cached.title.index.tracks.get(rendition.track_pos)).ok_or_else(not_found)?;
    let tp = track_protection(cached, &track.sample_description, track.kind, p)?;
    protect_init_segment(&clear, track.kind, &tp)
        .map(Bytes::from)
        .map_err(|e| ErrorAnswer::from(&e))
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
    app: &App,
    (key, identity): (&ObjectKey, &ObjectIdentity),
    cached: &CachedTitle,
    (track_id, number): (u32, u64),
    prepared: PreparedSegment,
    p: &Protected,
) -> Result<ProtectedSegment, ErrorAnswer> {
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
    let not_found = || ErrorAnswer::new(StatusCode::NOT_FOUND, format!("no rendition {track_id}"));
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
            let mut scanner = NalScanner::new(format, track_id, sizes.to_vec());
            let source = app.catalog.source().clone();
            let mut chunks = source.stream_ranges(
                key.clone(),
                identity.clone(),
                ranges.clone(),
                app.settings.stream_chunk_bytes,
            );
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| ErrorAnswer::from(&e).with_detail(&e))?;
                scanner.feed(&chunk).map_err(|e| ErrorAnswer::from(&e))?;
            }
            let max = crate::package::protect::max_subsamples(tp.iv_size());
            let nals = scanner.finish().map_err(|e| ErrorAnswer::from(&e))?;
            nals.iter()
                .map(|n| video_subsamples(n, format, max, track_id))
                .collect::<Result<_, ProtectError>>()
                .map_err(|e| ErrorAnswer::from(&e))?
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
    let header = protect_segment_header(&header, &tp, &ivs, &subsamples)
        .map_err(|e| ErrorAnswer::from(&e))?;
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

/// The part of `bytes`, which sit at `from` in a stream, that falls in `window` of it;
/// `None` when none does.
pub(super) fn window_part(bytes: &Bytes, from: u64, window: std::ops::Range<u64>) -> Option<Bytes> {
    let to = from + bytes.len() as u64;
    let (a, b) = (window.start.max(from), window.end.min(to));
    // from <= a < b <= to, so the slice lies within `bytes`.
    (a < b).then(|| bytes.slice((a - from) as usize..(b - from) as usize))
}

/// The encryption policy of the title at `key` (which must exist): a title document's own,
/// else the server's.
///
/// # Errors
/// 404 for no such object, 422 for a broken title document, source errors as usual.
async fn title_policy(app: &App, key: &ObjectKey) -> Result<EncryptionPolicy, ErrorAnswer> {
    let identity = (app.catalog.source().identify(key).await)
        .map_err(|e| ErrorAnswer::from(&e).with_detail(&e))?;
    if !crate::media::is_title_document(key) {
        return Ok(app.protect.policy());
    }
    let cached = super::titles::document_title(&app.catalog, key, &identity)
        .await
        .map_err(|e| ErrorAnswer::from(e.as_ref()).with_detail(&e))?;
    Ok(cached.encryption.unwrap_or(app.protect.policy()))
}

/// The HLS key of the title at `key` (AES-128, and SAMPLE-AES for MPEG-TS): 16 raw bytes.
///
/// # Errors
/// 404 when the title's HLS output is clear, 503 when the key is unavailable.
pub async fn key_answer(app: &App, key: &ObjectKey) -> Result<Bytes, ErrorAnswer> {
    if !matches!(
        title_policy(app, key).await?.hls,
        Some(Scheme::Aes128 | Scheme::Cbcs)
    ) {
        return Err(ErrorAnswer::new(StatusCode::NOT_FOUND, "not found"));
    }
    let content_key = app.protect.content_key(key).await?;
    Ok(Bytes::copy_from_slice(&content_key.key))
}

/// The W3C ClearKey licence (EME, "Clear Key" 9.1.4) for the title at `key`: the keys
/// among the request's `kids` that the title has.
///
/// # Errors
/// 400 for a request that is not ClearKey JSON, 404 when the title uses no CENC scheme,
/// 503 when the key is unavailable.
pub async fn licence_answer(app: &App, key: &ObjectKey, body: &[u8]) -> Result<Bytes, ErrorAnswer> {
    let policy = title_policy(app, key).await?;
    let cenc = |s: Option<Scheme>| matches!(s, Some(Scheme::Cenc | Scheme::Cbcs));
    if !cenc(policy.hls) && !cenc(policy.dash) {
        return Err(ErrorAnswer::new(StatusCode::NOT_FOUND, "not found"));
    }
    #[derive(serde::Deserialize)]
    struct LicenceRequest {
        kids: Vec<String>,
        #[serde(rename = "type")]
        session_type: Option<String>,
    }
    let bad = || ErrorAnswer::new(StatusCode::BAD_REQUEST, "not a ClearKey licence request");
    if body.len() > MAX_LICENCE_REQUEST_BYTES {
        return Err(bad());
    }
    let request: LicenceRequest = serde_json::from_slice(body).map_err(|_| bad())?;
    let content_key = app.protect.content_key(key).await?;
    let kid = URL_SAFE_NO_PAD.encode(content_key.kid);
    let keys: Vec<serde_json::Value> = (request.kids.iter())
        .filter(|k| k.trim_end_matches('=') == kid)
        .take(1)
        .map(|_| {
            serde_json::json!({
                "kty": "oct",
                "kid": kid,
                "k": URL_SAFE_NO_PAD.encode(content_key.key),
            })
        })
        .collect();
    let answer = serde_json::json!({
        "keys": keys,
        "type": request.session_type.unwrap_or_else(|| "temporary".into()),
    });
    Ok(Bytes::from(answer.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_tokens_differ_by_scheme_and_key() {
        let a = protected_token("0123456789abcdef", Scheme::Cenc, &[1; 16]);
        assert_eq!(a.len(), 16);
        assert!(crate::package::parse_version_folder(&format!("v{a}")).is_some());
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cbcs, &[1; 16])
        );
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cenc, &[2; 16])
        );
    }

    #[test]
    fn the_title_folder_is_found_with_or_without_a_version() {
        let place = |path| RequestPlace {
            headers: None,
            path,
            query: None,
        };
        assert_eq!(
            place("/vod/a%20b.mp4/manifest.mpd").title_dir(),
            "/vod/a%20b.mp4/"
        );
        assert_eq!(
            place("/vod/x/a.mp4/v0123456789abcdef/index-t1.m3u8").title_dir(),
            "/vod/x/a.mp4/"
        );
    }
}
