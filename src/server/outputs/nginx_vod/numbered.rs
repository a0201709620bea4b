//! nginx-vod's numbered streams: the media playlists and segments of nginx-vod names
//! (`index-v1-a1.m3u8`, `seg-N-a1.m4s`, `seg-N-v1-a1.ts`, DASH `fragment-N-v1-x3.m4s`),
//! numbered as nginx-vod-module numbers them (`package::Windows`), so a player or CDN
//! holding the module's names finds every one, each naming the same span of media: a
//! playlist of the module's count and stated durations; an fMP4 segment cut by the windows
//! (several tracks muxed under `hls`); an MPEG-TS segment the TS output's own at that
//! window (PAT and PMT alone where a window holds none). With HLS AES-128 an MPEG-TS
//! stream is numbered too, as the module's `vod_hls_encryption_method aes-128`; other
//! encrypted output is not numbered (`resolve.rs`), and muxed fMP4 is not encrypted (404
//! pointing at the single-track output).

use std::sync::Arc;

use bytes::Bytes;

use super::resolve::ts_track;
use crate::crypto::cipher::WholeSegmentEncryptor;
use crate::crypto::keys::{hex, ContentKey};
use crate::crypto::Scheme;
use crate::media::TrackKind;
use crate::package::encrypt::hls_ts_segment_iv;
use crate::package::ts::{psi_segment, TsRendition};
use crate::package::{
    module_duration_ms, muxed_init_segment, prepare_media_segment, prepare_muxed_segment,
    render_stated_media_playlist, PackageError, Rendition, Resource, VersionToken, View,
};
use crate::server::access::manifest::{manifest_options, RequestPlace};
use crate::server::access::select::protected_token;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::offload::assemble_off_runtime;
use crate::server::respond::answer::{
    Answer, CmafSegment, Content, SegmentRead, M3U8, MANIFEST, MP2T,
};
use crate::server::route::nginx_names::{NginxOutput, NginxStream, StreamPart};
use crate::server::route::nginx_vod::KEY_NAME;
use crate::server::title_request::TitleRoute;
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::load::load_view;
use crate::server::titles::ts_layout::ts_rendition_named;
use crate::source::{ObjectIdentity, ObjectKey};

/// What a numbered stream's name is answered with.
#[derive(Debug)]
pub enum Numbered {
    /// Its own answer.
    Answer(Answer),
    /// The TS output's own segment at the window (`seg-N-v1.ts` standing for one segment of
    /// the title's TS rendition), as its own name answers it.
    TsSegment(TitleRoute),
}

/// `stream` of the title at `key` as `view` shows it, asked from `place` (a signed-URL
/// token is carried into the playlist's URLs).
///
/// # Errors
/// The title's load errors; 404 for a track the view does not have, a segment past the
/// set's count, and for muxed fMP4 with HLS encryption on (fail closed); 422 for a title
/// the module's numbering would cut into more segments than its limit.
pub async fn numbered_stream(
    app: &Arc<App>,
    key: &ObjectKey,
    view: &View,
    stream: &NginxStream,
    place: &RequestPlace<'_>,
) -> Result<Numbered, ServeError> {
    let (identity, cached) = load_view(&app.catalog, key, view).await?;
    if cached.sequence.is_some() {
        return Err(ServeError::NotOffered(
            "nginx-vod names are not offered for sequences".into(),
        ));
    }
    let single: Vec<String> = (stream.track_ids.iter())
        .map(|id| Resource::dash_representation_id(*id))
        .collect();
    let policy = cached.encryption.unwrap_or(app.protect.policy());
    let aes_ts = stream.output == NginxOutput::HlsTs && policy.hls == Some(Scheme::Aes128);
    if policy.hls.is_some() && stream.output != NginxOutput::Dash && !aes_ts {
        return Err(ServeError::NotOffered(format!(
            "muxed fMP4 is not offered with HLS encryption: play master.m3u8, whose \
             encrypted renditions carry one track each ({})",
            single.join(", ")
        )));
    }
    let title = &cached.title;
    let members: Vec<&Rendition> = (stream.track_ids.iter())
        .filter_map(|id| title.rendition(*id))
        .collect();
    if members.len() != stream.track_ids.len() || members.is_empty() {
        return Err(ServeError::NotOffered("no such track in this title".into()));
    }
    let positions: Vec<usize> = members.iter().map(|r| r.track_pos).collect();
    if stream.output == NginxOutput::HlsTs {
        // Listed only where the TS output has the rendition (the main audio alone too,
        // which it lists nowhere: `TsTitle::main_audio_alone`).
        ts_rendition(&cached, ts_track(title, &stream.track_ids)?).await?;
    }
    let durations = module_durations(app, key, view, &cached).await?;
    let windows = (cached.caches.windows).windows(&cached.title, &durations)?;
    let aes = match aes_ts {
        true => Some(TsAes::of(app, key, &cached, ts_track(title, &stream.track_ids)?).await?),
        false => None,
    };
    let count = windows.count(&title.index, &positions);
    let etag = Some(format!("\"{}-{}-n\"", cached.token, stream.name()));
    let number = match stream.part {
        StreamPart::Playlist => {
            let options = manifest_options(
                &app.protect,
                &cached,
                None,
                place,
                app.settings.dash_profile,
            )?;
            let stated = windows.stated_ms(&positions, count);
            let timing = (members.iter())
                .find(|r| r.kind == TrackKind::Video)
                .or(members.first())
                .ok_or(ServeError::NotOffered("no such track in this title".into()))?;
            let map = (stream.output == NginxOutput::Hls).then(|| stream.init_name());
            let mut playlist = render_stated_media_playlist(
                title,
                timing,
                map,
                &stated,
                |number| stream.segment_name(number),
                &options,
            );
            if let Some(aes) = &aes {
                let uri = match &options.query {
                    Some(query) => format!("{KEY_NAME}?{query}"),
                    None => KEY_NAME.to_owned(),
                };
                let ivs: Vec<[u8; 16]> = (0..count)
                    .map(|w| aes.iv(&cached, windows.title_segments.get(w).copied().flatten(), w))
                    .collect();
                playlist = with_key_lines(&playlist, &uri, &ivs);
            }
            return Ok(Numbered::Answer(Answer {
                content: Content::Inline(Bytes::from(playlist)),
                content_type: M3U8,
                cache_control: MANIFEST,
                etag: etag.filter(|_| options.query.is_none()),
            }));
        }
        StreamPart::Init => {
            let tracks: Vec<_> = (positions.iter())
                .filter_map(|p| title.index.tracks.get(*p))
                .collect();
            let init = Content::Inline(Bytes::from(muxed_init_segment(&tracks)));
            return Ok(Numbered::Answer(Answer {
                content: init,
                content_type: content_type(&members),
                cache_control: MANIFEST,
                etag,
            }));
        }
        StreamPart::Segment { number } => number,
    };
    let segment = usize::try_from(number.saturating_sub(1))
        .ok()
        .filter(|s| *s < count)
        .ok_or(PackageError::SegmentOutOfRange {
            number,
            count: count as u64,
        })?;
    if stream.output == NginxOutput::HlsTs {
        let track_id = ts_track(title, &stream.track_ids)?;
        let Some(own) = windows.title_segments.get(segment).copied().flatten() else {
            let next = (windows.title_segments.iter().skip(segment)).find_map(|s| *s);
            let mut body = Bytes::from(empty_ts_segment(&cached, track_id, next).await?);
            if let Some(aes) = &aes {
                let iv = aes.iv(&cached, None, segment);
                let mut encryptor = WholeSegmentEncryptor::new(&aes.key.key, &iv);
                let mut sealed = encryptor.feed(&body).to_vec();
                sealed.extend_from_slice(&encryptor.finish());
                body = Bytes::from(sealed);
            }
            return Ok(Numbered::Answer(Answer {
                content: Content::Inline(body),
                content_type: MP2T,
                cache_control: MANIFEST,
                etag,
            }));
        };
        // The TS output's own segment, as its own name answers it: encrypted, from the
        // AES-128 output's version folder (its IV for that number). The name carries no
        // version folder (the encrypted output's is only asked for here): answered under
        // the manifest policy, as the name's other answers, never immutable.
        let resource = Resource::TsSegment {
            track_id,
            number: own as u64 + 1,
        };
        return Ok(Numbered::TsSegment(TitleRoute {
            key: key.clone(),
            version: aes.as_ref().map(|aes| aes.token.to_string()),
            resource,
            view: view.clone(),
        }));
    }
    let title = cached.clone();
    let assemble = tracing::info_span!("segment.assemble", vod.segment = number);
    let (prepared, ranges_per_track) = assemble_off_runtime(assemble, move || {
        let windows = (title.caches.windows).windows(&title.title, &durations)?;
        let index = &title.title.index;
        let plan = windows.plan_for(index, &positions);
        match positions.as_slice() {
            // One track: the CMAF writer's own fragment, as its rendition's segments are.
            [pos] => prepare_media_segment(index, plan, *pos, segment).map(|prepared| {
                let ranges = prepared.ranges.len();
                (prepared, vec![ranges])
            }),
            _ => prepare_muxed_segment(index, plan, &positions, segment)
                .map(|muxed| (muxed.segment, muxed.ranges_per_track)),
        }
    })
    .await?;
    // Each track's ranges from its object (a title document's tracks may come from several
    // files), tracks of one object in one read.
    let mut reads: Vec<SegmentRead> = Vec::with_capacity(members.len());
    for (rendition, ranges) in members.iter().zip(&ranges_per_track) {
        let (k, i) = object_of(&cached, rendition.track_id, (key, &identity));
        match reads.last_mut() {
            Some(last) if last.key == *k && last.identity == *i => last.ranges += ranges,
            _ => reads.push(SegmentRead {
                key: k.clone(),
                identity: i.clone(),
                ranges: *ranges,
            }),
        }
    }
    // nginx-vod names carry no version folder: the manifest policy, as theirs.
    let segment = CmafSegment {
        prepared,
        reads,
        cipher: None,
    };
    Ok(Numbered::Answer(Answer {
        content: Content::Segment(segment),
        content_type: content_type(&members),
        cache_control: MANIFEST,
        etag,
    }))
}

/// The IVs of windows holding none of the title's segments start here, past any segment
/// number, so no IV of the key is used twice.
const EMPTY_WINDOW_IVS: u64 = 1 << 40;

/// HLS AES-128 of a numbered MPEG-TS stream: the title's key, the version token of its
/// AES-128 output, and the TS rendition whose IVs are used.
struct TsAes {
    key: Arc<ContentKey>,
    token: VersionToken,
    track_id: u32,
}

impl TsAes {
    /// The AES-128 output of `cached` (at `key`), for the TS rendition of `track_id`.
    ///
    /// # Errors
    /// 503 when the key is unavailable.
    async fn of(
        app: &App,
        key: &ObjectKey,
        cached: &CachedTitle,
        track_id: u32,
    ) -> Result<Self, ServeError> {
        let drm = cached.drm.as_deref().or(app.protect.drm_systems());
        let presets = cached.key_presets.unwrap_or(app.protect.key_presets());
        if !presets.is_shared() {
            return Err(ServeError::NotUnderKeySplit(format!(
                "nginx-vod's MPEG-TS muxes audio into each video rendition under one key, so \
                 it is not offered under a key split ({})",
                presets.name()
            )));
        }
        let content_key = app.protect.content_key(key, drm).await?;
        let keys = crate::crypto::TitleKeys::shared(content_key.clone());
        let token = protected_token(&cached.token, Scheme::Aes128, &keys, drm);
        Ok(Self {
            key: content_key,
            token,
            track_id,
        })
    }

    /// The IV of window `window`: the TS output's own IV for its segment `own` (0-based)
    /// placed there, else one of the window's own.
    fn iv(&self, cached: &CachedTitle, own: Option<usize>, window: usize) -> [u8; 16] {
        let number = match own {
            Some(own) => own as u64 + 1,
            None => EMPTY_WINDOW_IVS + window as u64,
        };
        hls_ts_segment_iv(&cached.token, &self.key.kid, self.track_id, number)
    }
}

/// `playlist` with an AES-128 `EXT-X-KEY` (the key at `uri`, IV `ivs[n]`) before each
/// segment's `#EXTINF`, as the TS output's own playlists key each segment.
fn with_key_lines(playlist: &str, uri: &str, ivs: &[[u8; 16]]) -> String {
    let mut out = String::with_capacity(playlist.len() + ivs.len() * 100);
    let mut ivs = ivs.iter();
    for line in playlist.lines() {
        if line.starts_with("#EXTINF:") {
            if let Some(iv) = ivs.next() {
                out.push_str(&format!(
                    "#EXT-X-KEY:METHOD=AES-128,URI=\"{uri}\",IV=0x{}\n",
                    hex(iv)
                ));
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `video/mp4` for a stream with a video, else `audio/mp4`.
fn content_type(members: &[&Rendition]) -> &'static str {
    match members.iter().any(|r| r.kind == TrackKind::Video) {
        true => "video/mp4",
        false => "audio/mp4",
    }
}

/// The object (and version) track `track_id` is read from: a title document's track from
/// its own file, else the request's (`request`).
fn object_of<'a>(
    cached: &'a CachedTitle,
    track_id: u32,
    request: (&'a ObjectKey, &'a ObjectIdentity),
) -> (&'a ObjectKey, &'a ObjectIdentity) {
    cached.object_of(track_id).unwrap_or(request)
}

/// A TS segment of the TS rendition of `track_id` for a window holding none of its own
/// segments: PAT and PMT, counted on as its segment `next` starts (the one of the next
/// window holding one; else its last).
///
/// # Errors
/// 422 when the title has no TS output; 404 when it has no TS rendition of `track_id`.
async fn empty_ts_segment(
    cached: &Arc<CachedTitle>,
    track_id: u32,
    next: Option<usize>,
) -> Result<Vec<u8>, ServeError> {
    let rendition = ts_rendition(cached, track_id).await?;
    let like = next
        .or_else(|| rendition.layout.segments.len().checked_sub(1))
        .unwrap_or(0);
    Ok(psi_segment(&rendition.program, &rendition.layout, like))
}

/// Each track's duration as nginx-vod-module reads it, in milliseconds, in the order of
/// `cached`'s index (the title as `view` shows it): the samples' total
/// (`module_duration_ms`); for a clip, the module's `min(D, clipTo) - clipFrom` of the
/// whole title's track (0 for a track that ends before the clip starts).
///
/// # Errors
/// The whole title's load errors, for a clip.
async fn module_durations(
    app: &Arc<App>,
    key: &ObjectKey,
    view: &View,
    cached: &CachedTitle,
) -> Result<Vec<u64>, ServeError> {
    let tracks = &cached.title.index.tracks;
    let Some(clip) = view.clip else {
        return Ok(tracks.iter().map(module_duration_ms).collect());
    };
    // The whole title, loaded before any view of it was made: a cache hit.
    let (_, whole) = load_view(&app.catalog, key, &View::default()).await?;
    let whole = &whole.title.index.tracks;
    Ok((tracks.iter())
        .map(|track| {
            let full = (whole.iter())
                .find(|w| w.track_id == track.track_id)
                .unwrap_or(track);
            let end = module_duration_ms(full).min(clip.to_ms.unwrap_or(u64::MAX));
            end.saturating_sub(clip.from_ms)
        })
        .collect())
}

/// The TS rendition of `track_id` in the title's TS output (the main audio alone too).
///
/// # Errors
/// 422 when the title has no TS output; 404 when it has no TS rendition of `track_id`.
async fn ts_rendition(
    cached: &Arc<CachedTitle>,
    track_id: u32,
) -> Result<&TsRendition, ServeError> {
    Ok(ts_rendition_named(cached, track_id).await?.1)
}
