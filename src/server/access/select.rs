//! Which output a request selects: the clear one, or an encrypted one, by its version
//! folder (or, for an entry manifest, by the policy).
//!
//! Protected output lives in its own version folder: the token of an encrypted output is
//! a hash of the clear token, the scheme and the KID ([`protected_token`]), so HLS
//! AES-128 and DASH `cenc` segments of one title never share a URL (or a CDN entry) with
//! each other or with clear ones, and a new key secret changes every URL. The clear
//! folder serves media only while some output is configured clear: fail closed. Every
//! error on a protected path is an error answer, never clear bytes.

use std::sync::Arc;

use super::protector::Protector;
use crate::crypto::drm::DrmId;
use crate::crypto::{ContentKey, EncryptionPolicy, KeyedTrack, Scheme, TitleKeys};
use crate::media::TrackKind;
use crate::package::{Resource, Title, VersionToken};
use crate::server::error::ServeError;
use crate::server::titles::cached::CachedTitle;
use crate::source::ObjectKey;

/// The version token of `scheme`'s output of a title whose clear token is `clear` and
/// whose keys are `keys`, signalled for the DRM systems `drm` (`None`: the provider's, as
/// before DRM systems were chosen, so those URLs stay): 16 lowercase hex digits, like
/// every version token. The systems are an input because init segments carry their
/// `pssh` boxes and are cached as immutable: another choice of systems is another URL.
/// So is the key split: under the default (one key) the token is what it always was (the
/// clear token, the scheme, the KID, the systems); under any other the split's name and
/// every usage's KID follow, so each split has its own folder.
pub fn protected_token(
    clear: &str,
    scheme: Scheme,
    keys: &TitleKeys,
    drm: Option<&[DrmId]>,
) -> VersionToken {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let names = drm.map(|d| d.iter().map(|d| d.name()).collect::<Vec<_>>().join(","));
    let kid = &keys.first().kid;
    let mut fields: Vec<&[u8]> = vec![clear.as_bytes(), scheme.name().as_bytes(), kid];
    if let Some(names) = &names {
        fields.push(names.as_bytes());
    }
    let split = keys.presets.name();
    if !keys.presets.is_shared() {
        fields.push(split.as_bytes());
        for (usage, key) in keys.iter() {
            fields.push(usage.name().as_bytes());
            fields.push(&key.kid);
        }
    }
    for field in fields {
        for b in field.iter().chain(b"\0") {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    VersionToken::of_hash(hash)
}

/// A protected output, as a request selected it.
#[derive(Debug, Clone)]
pub struct Protected {
    /// Its scheme.
    pub scheme: Scheme,
    /// The title's first key (its one key under the default split), with the systems'
    /// signalling where the resource carries it.
    pub key: Arc<ContentKey>,
    /// Every key of the title's split, signalled as `key` is; a track's key is
    /// [`Protected::track_key`].
    /// Its version token.
    pub token: VersionToken,
    pub keys: Arc<TitleKeys>,
    /// Whether W3C ClearKey is signalled beside the key's DRM systems.
    pub clearkey: bool,
}

impl Protected {
    /// The key track `track_id` of `title` is encrypted with; `None` when the key split
    /// leaves it clear (`UNENCRYPTED`).
    ///
    /// # Errors
    /// 404 for a track that is no rendition; 503 for a usage without a key.
    pub fn track_key(
        &self,
        title: &Title,
        track_id: u32,
    ) -> Result<Option<&Arc<ContentKey>>, ServeError> {
        let track = (title.rendition(track_id))
            .and_then(|r| title.index.tracks.get(r.track_pos))
            .ok_or(ServeError::NoRendition(track_id))?;
        Ok(self.keys.for_track(keyed_track(track))?)
    }
}

/// How a key split sees `track`: its picture size or channel count.
pub fn keyed_track(track: &crate::media::TrackIndex) -> KeyedTrack {
    match track.kind {
        TrackKind::Video => KeyedTrack::Video {
            width: track.codec.width,
            height: track.codec.height,
        },
        TrackKind::Audio => KeyedTrack::Audio {
            channels: track.codec.channels,
        },
    }
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
    protector: &Protector,
    key: &ObjectKey,
    cached: &CachedTitle,
    version: Option<&str>,
    resource: &Resource,
) -> Result<Selected, ServeError> {
    let gone = || ServeError::VersionGone;
    let policy = cached.encryption.unwrap_or(protector.policy());
    if !policy.any() {
        return match version {
            Some(v) if v != cached.token => Err(gone()),
            _ => Ok(Selected::Clear),
        };
    }
    // Boxed, so a clear answer's future does not carry the key lookup inline.
    Box::pin(select_protected(
        protector, key, cached, version, resource, policy,
    ))
    .await
}

/// [`select`] for a title with an encrypted output.
async fn select_protected(
    protector: &Protector,
    key: &ObjectKey,
    cached: &CachedTitle,
    version: Option<&str>,
    resource: &Resource,
    policy: EncryptionPolicy,
) -> Result<Selected, ServeError> {
    let gone = || ServeError::VersionGone;
    let ts = resource.is_ts();
    // MPEG-TS is encrypted as HLS is: AES-128 whole segments, or Apple's sample encryption
    // where HLS is SAMPLE-AES. An encrypted TS output has no I-frame playlists, as an
    // encrypted CMAF output has no trick play (fail closed).
    if matches!(resource, Resource::TsIframePlaylist { .. }) && policy.hls.is_some() {
        return Err(ServeError::NotOffered(
            "I-frame playlists are not offered for encrypted output".into(),
        ));
    }
    // The DRM systems signalled: the title document's, else the server's; `None` is what
    // the key provider returns, and ClearKey.
    let drm = cached.drm.as_deref().or(protector.drm_systems());
    let presets = cached.key_presets.unwrap_or(protector.key_presets());
    if !presets.is_shared() {
        under_key_split(cached, resource, policy, presets)?;
    }
    let title_keys = protector.title_keys(key, drm, presets).await?;
    let clearkey = drm.is_none_or(|d| d.contains(&DrmId::ClearKey));
    // SAMPLE-AES MPEG-TS hands its key out raw (`hls.key`), and it is the key of the
    // `cbcs` output too: a title signalled for DRM systems without ClearKey has no TS
    // output (fail closed).
    if ts && policy.hls == Some(Scheme::Cbcs) && !clearkey {
        return Err(ServeError::NotOffered(
            "MPEG-TS is not offered for a title protected by DRM systems only".into(),
        ));
    }
    // Manifests and init segments carry the systems' signalling; media segments need
    // only the key, so the raw-key systems are not made for each of them (the key
    // server's answer is still checked: they fail as the manifests do).
    let signals = matches!(
        resource,
        Resource::Multivariant
            | Resource::MultivariantTs
            | Resource::Mpd
            | Resource::MediaPlaylist { .. }
            | Resource::Init { .. }
            | Resource::TsMediaPlaylist { .. }
    );
    let protected = |scheme: Scheme| -> Result<Selected, ServeError> {
        if scheme == Scheme::Aes128 && !presets.is_shared() {
            let why = format!("{AES128_ONE_KEY} ({})", presets.name());
            return Err(ServeError::NotUnderKeySplit(why));
        }
        let keys = if signals {
            Arc::new(title_keys.map(|_, k| protector.signalled_key(k, key, scheme, drm))?)
        } else {
            for (_, k) in title_keys.iter() {
                protector.check_systems(k, drm)?;
            }
            title_keys.clone()
        };
        Ok(Selected::Protected(Protected {
            scheme,
            token: protected_token(&cached.token, scheme, &title_keys, drm),
            key: keys.first().clone(),
            keys,
            clearkey,
        }))
    };
    let entry_scheme = match resource {
        Resource::Multivariant | Resource::MultivariantTs => Some(policy.hls),
        Resource::Mpd => Some(policy.dash),
        _ => None,
    };
    let clear_allowed = policy.hls.is_none() || policy.dash.is_none();
    let by_version = policy.schemes().into_iter().find(|s| {
        version.is_some_and(|v| v == protected_token(&cached.token, *s, &title_keys, drm))
    });
    let selected = match (entry_scheme, by_version, version) {
        (Some(Some(scheme)), _, None) => protected(scheme),
        (Some(Some(scheme)), Some(found), _) if found == scheme => protected(scheme),
        (Some(None), _, None) => Ok(Selected::Clear),
        (Some(None), _, Some(v)) if v == cached.token => Ok(Selected::Clear),
        (Some(_), _, _) => Err(gone()),
        (None, Some(scheme), _) => protected(scheme),
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

/// Refuse what cannot carry a key split (422, saying why): MPEG-TS, whose segments mux
/// the main audio into each video rendition under one key (its audio as a rendition of
/// its own would change every TS variant's layout for this title alone); HLS AES-128,
/// which hands out one raw key per title; a sequence, whose parts are keyed as one title.
const AES128_ONE_KEY: &str =
    "HLS AES-128 has one raw key per title: use hls=sample-aes for a key split";

fn under_key_split(
    cached: &CachedTitle,
    resource: &Resource,
    policy: EncryptionPolicy,
    presets: crate::crypto::KeyPresets,
) -> Result<(), ServeError> {
    let split = presets.name();
    let refuse = |why: &str| Err(ServeError::NotUnderKeySplit(format!("{why} ({split})")));
    if resource.is_ts() || *resource == Resource::MultivariantTs {
        return refuse(
            "MPEG-TS muxes audio into each video rendition under one key, so it is not \
             offered under a key split: play master.m3u8 (CMAF)",
        );
    }
    if *resource == Resource::Multivariant && policy.hls == Some(Scheme::Aes128) {
        return refuse(AES128_ONE_KEY);
    }
    if cached.sequence.is_some() {
        return refuse("a sequence's parts are keyed as one title: no key split");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(kid: u8) -> TitleKeys {
        TitleKeys::shared(Arc::new(ContentKey {
            kid: [kid; 16],
            key: [9; 16],
            systems: Vec::new(),
        }))
    }

    #[test]
    fn protected_tokens_differ_by_scheme_and_key() {
        let a = protected_token("0123456789abcdef", Scheme::Cenc, &keys(1), None);
        assert_eq!(a.len(), 16);
        assert!(crate::package::parse_version_folder(&format!("v{a}")).is_some());
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cbcs, &keys(1), None)
        );
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cenc, &keys(2), None)
        );
        let widevine = [DrmId::Widevine];
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cenc, &keys(1), Some(&widevine))
        );
    }

    /// Given the default split, then the token is the one-key token as it always was (an
    /// FNV-1a of the clear token, scheme and KID, computed here apart), so no URL moves;
    /// given another split, then the folder is another.
    #[test]
    fn the_default_split_keeps_its_folder_and_a_split_gets_its_own() {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for field in [&b"0123456789abcdef"[..], b"cenc", &[1; 16]] {
            for b in field.iter().chain(b"\0") {
                hash ^= u64::from(*b);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        let shared = protected_token("0123456789abcdef", Scheme::Cenc, &keys(1), None);
        assert_eq!(shared, VersionToken::of_hash(hash));
        let presets = crate::crypto::KeyPresets::parse("video=PRESET-VIDEO-2").unwrap();
        let key = |kid| {
            Arc::new(ContentKey {
                kid: [kid; 16],
                key: [9; 16],
                systems: Vec::new(),
            })
        };
        let split = TitleKeys::of(
            presets,
            vec![
                (crate::crypto::KeyUsage::Sd, key(1)),
                (crate::crypto::KeyUsage::Hd, key(2)),
                (crate::crypto::KeyUsage::Audio, key(3)),
            ],
        )
        .unwrap();
        assert_ne!(
            shared,
            protected_token("0123456789abcdef", Scheme::Cenc, &split, None)
        );
    }
}
