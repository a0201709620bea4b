//! Keys and licences: the HLS key (`hls.key`: AES-128, and SAMPLE-AES for MPEG-TS) and the
//! W3C ClearKey licence (`clearkey.json`, POST) of a title, answered only when the title's
//! output uses them, and never cached by a CDN.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use bytes::Bytes;

use crate::crypto::drm::DrmId;
use crate::crypto::{EncryptionPolicy, KeyPresets, Scheme};
use crate::package::View;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::Answer;
use crate::server::titles::load::load_view;
use crate::source::ObjectKey;

/// Largest licence request body read.
const MAX_LICENCE_REQUEST_BYTES: usize = 16 * 1024;
/// Most KIDs of one licence request looked at (a key split has at most nine keys).
const MAX_LICENCE_KIDS: usize = 64;

/// How the title at `key` (which must exist) is protected: its encryption policy and DRM
/// systems, a title document's own, else the server's.
struct TitleProtection {
    policy: EncryptionPolicy,
    /// The key split: the title document's, else the server's.
    presets: KeyPresets,
    /// `None`: the key provider's choice, and ClearKey.
    drm: Option<Vec<DrmId>>,
}

impl TitleProtection {
    /// Whether W3C ClearKey is among its systems.
    fn clearkey(&self) -> bool {
        (self.drm.as_ref()).is_none_or(|d| d.contains(&DrmId::ClearKey))
    }
}

/// The protection of the title at `key`.
///
/// # Errors
/// 404 for no such object, 422 for a broken title document, source errors as usual.
async fn title_protection(app: &App, key: &ObjectKey) -> Result<TitleProtection, ServeError> {
    let server = app.protect.drm_systems().map(<[DrmId]>::to_vec);
    if !crate::media::is_title_document(key) {
        app.catalog.source().identify(key).await?;
        return Ok(TitleProtection {
            policy: app.protect.policy(),
            presets: app.protect.key_presets(),
            drm: server,
        });
    }
    let (_, cached) = load_view(&app.catalog, key, &View::default()).await?;
    Ok(TitleProtection {
        policy: cached.encryption.unwrap_or(app.protect.policy()),
        presets: cached.key_presets.unwrap_or(app.protect.key_presets()),
        drm: cached.drm.clone().or(server),
    })
}

/// The HLS key of the title at `key` (AES-128, and SAMPLE-AES for MPEG-TS): 16 raw bytes.
///
/// # Errors
/// 404 when the title's HLS output is clear, or its DRM systems leave ClearKey out; 503
/// when the key is unavailable.
pub async fn hls_key(app: &App, key: &ObjectKey) -> Result<Answer, ServeError> {
    // The raw key is the key of every output of the title, the DRM-protected ones too:
    // not handed out for a title whose DRM systems leave ClearKey out.
    let title = title_protection(app, key).await?;
    if !title.clearkey() || !matches!(title.policy.hls, Some(Scheme::Aes128 | Scheme::Cbcs)) {
        return Err(ServeError::NoKey);
    }
    // The raw key serves AES-128 and SAMPLE-AES MPEG-TS, neither offered under a key split:
    // no one key of a split is handed out for them.
    if !title.presets.is_shared() {
        return Err(ServeError::NoKey);
    }
    let content_key = app.protect.content_key(key, title.drm.as_deref()).await?;
    let bytes = Bytes::copy_from_slice(&content_key.key);
    Ok(Answer::key_material(bytes, "application/octet-stream"))
}

/// The licence route's answer: the request body read (16 KiB at most), then the licence.
///
/// # Errors
/// 400 for a body that cannot be read, else as [`licence_answer`].
pub async fn licence<B>(app: &App, key: &ObjectKey, body: B) -> Result<Answer, ServeError>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt;
    let limited = http_body_util::Limited::new(body, MAX_LICENCE_REQUEST_BYTES);
    let collected = (limited.collect().await).map_err(|_| ServeError::UnreadableLicenceRequest)?;
    let bytes = licence_answer(app, key, &collected.to_bytes()).await?;
    Ok(Answer::key_material(bytes, "application/json"))
}

/// The W3C ClearKey licence (EME, "Clear Key" 9.1.4) for the title at `key`: the keys
/// among the request's `kids` that the title has.
///
/// # Errors
/// 400 for a request that is not ClearKey JSON, 404 when the title uses no CENC scheme
/// or ClearKey is not among its DRM systems (a title for FairPlay, Widevine and PlayReady
/// only must not hand its key out in the clear), 503 when the key is unavailable.
async fn licence_answer(app: &App, key: &ObjectKey, body: &[u8]) -> Result<Bytes, ServeError> {
    let title = title_protection(app, key).await?;
    let cenc = |s: Option<Scheme>| matches!(s, Some(Scheme::Cenc | Scheme::Cbcs));
    if !title.clearkey() || (!cenc(title.policy.hls) && !cenc(title.policy.dash)) {
        return Err(ServeError::NoKey);
    }
    #[derive(serde::Deserialize)]
    struct LicenceRequest {
        kids: Vec<String>,
        #[serde(rename = "type")]
        session_type: Option<String>,
    }
    let bad = || ServeError::BadLicenceRequest;
    if body.len() > MAX_LICENCE_REQUEST_BYTES {
        return Err(bad());
    }
    let request: LicenceRequest = serde_json::from_slice(body).map_err(|_| bad())?;
    // Every requested KID the title has (under a key split, each usage's key asked for:
    // a player asks for those of the tracks it plays), each once, in the request's order.
    let title_keys = (app.protect)
        .title_keys(key, title.drm.as_deref(), title.presets)
        .await?;
    let mut answered: Vec<[u8; 16]> = Vec::new();
    let mut keys: Vec<serde_json::Value> = Vec::new();
    for asked in request.kids.iter().take(MAX_LICENCE_KIDS) {
        let Ok(kid) = URL_SAFE_NO_PAD.decode(asked.trim_end_matches('=')) else {
            continue;
        };
        let Ok(kid) = <[u8; 16]>::try_from(kid.as_slice()) else {
            continue;
        };
        let Some(content_key) = title_keys.by_kid(&kid) else {
            continue;
        };
        if answered.contains(&kid) {
            continue;
        }
        answered.push(kid);
        keys.push(serde_json::json!({
            "kty": "oct",
            "kid": URL_SAFE_NO_PAD.encode(kid),
            "k": URL_SAFE_NO_PAD.encode(content_key.key),
        }));
    }
    let answer = serde_json::json!({
        "keys": keys,
        "type": request.session_type.unwrap_or_else(|| "temporary".into()),
    });
    Ok(Bytes::from(answer.to_string()))
}
