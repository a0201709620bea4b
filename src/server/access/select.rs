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
use crate::crypto::{ContentKey, EncryptionPolicy, Scheme};
use crate::package::{Resource, VersionToken};
use crate::server::error::ServeError;
use crate::server::titles::cached::CachedTitle;
use crate::source::ObjectKey;

/// The version token of `scheme`'s output of a title whose clear token is `clear` and
/// whose KID is `kid`, signalled for the DRM systems `drm` (`None`: the provider's, as
/// before DRM systems were chosen, so those URLs stay): 16 lowercase hex digits, like
/// every version token. The systems are an input because init segments carry their
/// `pssh` boxes and are cached as immutable: another choice of systems is another URL.
pub fn protected_token(
    clear: &str,
    scheme: Scheme,
    kid: &[u8; 16],
    drm: Option<&[DrmId]>,
) -> VersionToken {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let names = drm.map(|d| d.iter().map(|d| d.name()).collect::<Vec<_>>().join(","));
    let mut fields: Vec<&[u8]> = vec![clear.as_bytes(), scheme.name().as_bytes(), kid];
    if let Some(names) = &names {
        fields.push(names.as_bytes());
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
    /// The title's key.
    pub key: Arc<ContentKey>,
    /// Its version token.
    pub token: VersionToken,
    /// Whether W3C ClearKey is signalled beside the key's DRM systems.
    pub clearkey: bool,
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
    let content_key = protector.content_key(key, drm).await?;
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
        Ok(Selected::Protected(Protected {
            scheme,
            token: protected_token(&cached.token, scheme, &content_key.kid, drm),
            key: if signals {
                protector.signalled_key(&content_key, key, scheme, drm)?
            } else {
                protector.check_systems(&content_key, drm)?;
                content_key.clone()
            },
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
        version.is_some_and(|v| v == protected_token(&cached.token, *s, &content_key.kid, drm))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_tokens_differ_by_scheme_and_key() {
        let a = protected_token("0123456789abcdef", Scheme::Cenc, &[1; 16], None);
        assert_eq!(a.len(), 16);
        assert!(crate::package::parse_version_folder(&format!("v{a}")).is_some());
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cbcs, &[1; 16], None)
        );
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cenc, &[2; 16], None)
        );
        let widevine = [DrmId::Widevine];
        assert_ne!(
            a,
            protected_token("0123456789abcdef", Scheme::Cenc, &[1; 16], Some(&widevine))
        );
    }
}
