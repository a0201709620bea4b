//! The protection of a running server: its key provider (a secret or a CPIX server), its
//! signed-URL checks, and the encryption policy and CORS origins it was configured with.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::crypto::cpix::CpixKeyProvider;
use crate::crypto::drm::DrmId;
use crate::crypto::nginx_vod_keys::NginxVodKeyProvider;
use crate::crypto::raw_drm::raw_systems;
use crate::crypto::settings::{ProtectSettings, SignedUrls};
use crate::crypto::token::token_in_query;
use crate::crypto::{
    ContentKey, EncryptionPolicy, KeyError, KeyPresets, KeyProvider, Scheme, SecretKeyProvider,
    TitleKeys, TokenError, TokenSigner,
};
use crate::server::error::ServeError;
use crate::server::route::paths::Route;
use crate::source::ObjectKey;
use crate::telemetry::Metrics;

/// The client's address (the peer, or the viewer trusted proxies forwarded), put in
/// each request's extensions by `request.rs` from the accept loop's `PeerAddr`.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub IpAddr);

/// Keys, policy and token checks of a running server.
#[derive(Debug)]
pub struct Protector {
    settings: ProtectSettings,
    provider: Option<Arc<dyn KeyProvider>>,
    signer: Option<TokenSigner>,
}

impl Protector {
    /// The protection of `settings` (already checked by `config`), counting its key
    /// server requests and token refusals in `metrics`.
    pub fn new(settings: &ProtectSettings, metrics: &Metrics) -> Self {
        let provider = match (&settings.cpix, settings.key_secret.clone()) {
            (Some(options), _) => match CpixKeyProvider::new(options.clone()) {
                Ok(p) => Some(Arc::new(p.counting_in(metrics.key_server_requests.clone()))
                    as Arc<dyn KeyProvider>),
                Err(e) => {
                    // Fail closed: every encrypted request is then an error answer.
                    tracing::error!(error = %e, "cpix key provider unavailable");
                    None
                }
            },
            (None, Some(secret)) => Some(Arc::new(SecretKeyProvider::new(secret)) as _),
            (None, None) => (settings.nginx_vod_keys.clone())
                .map(|keys| Arc::new(NginxVodKeyProvider::new(keys)) as Arc<dyn KeyProvider>),
        };
        let signer = (settings.url_secret.clone()).map(|s| {
            TokenSigner::new(s, settings.token_skew_secs)
                .with_previous(settings.url_secret_previous.clone())
        });
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
            (SignedUrls::Entry, Route::Vod { resource, .. }) => resource.is_entry(),
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
        self.check_signature(path, query, client)
    }

    /// Whether URLs are signed (`--signed-urls entry` or `all`).
    pub fn signs_urls(&self) -> bool {
        self.settings.signed_urls != SignedUrls::Off
    }

    /// Check the token in `query` as if `path` were requested, whatever route it is: for
    /// the preview page, which asks a token granting the `/vod/` prefix it shows. Always
    /// yes when URLs are not signed.
    ///
    /// # Errors
    /// Why it is refused (the client only ever sees a bare 403).
    pub fn check_path(
        &self,
        path: &str,
        query: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<(), TokenError> {
        if !self.signs_urls() {
            return Ok(());
        }
        self.check_signature(path, query, client)
    }

    /// The token in `query` checked for `path` and the client's address, now.
    fn check_signature(
        &self,
        path: &str,
        query: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<(), TokenError> {
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
    pub fn carried_token<'q>(&self, query: Option<&'q str>) -> Option<&'q str> {
        (self.settings.signed_urls != SignedUrls::Off)
            .then(|| token_in_query(query))
            .flatten()
    }

    /// The origins CORS answers name (`cors-origins`); empty: any origin (`*`).
    pub fn cors_origins(&self) -> &[String] {
        &self.settings.cors_origins
    }

    /// The public base URL manifests write absolute URLs with, when configured.
    pub fn public_url(&self) -> Option<&str> {
        self.settings.public_url.as_deref()
    }

    /// The server's key split (`--key-presets`); a title document's overrides it.
    pub fn key_presets(&self) -> KeyPresets {
        self.settings.key_presets
    }

    /// The DRM systems every title is signalled for (`--drm-systems`), if set.
    pub fn drm_systems(&self) -> Option<&[DrmId]> {
        self.settings.drm_systems.as_deref()
    }

    /// `key` with the DRM systems `wanted` for `scheme`'s output of the title at `title`
    /// (`None`: the key as the provider gave it). From a key server, each wanted system
    /// must be in its answer, and only those are kept; from the secret, the raw-key
    /// systems are made (`crypto::raw_drm`). HLS AES-128 signals no DRM system.
    ///
    /// # Errors
    /// [`KeyError::MissingSystem`] naming a wanted system the key server left out (fail
    /// closed: never a manifest or init segment without it); [`KeyError::Config`] when a
    /// raw-key system lacks its settings.
    pub fn signalled_key(
        &self,
        key: &Arc<ContentKey>,
        title: &ObjectKey,
        scheme: Scheme,
        wanted: Option<&[DrmId]>,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let Some(wanted) = wanted.filter(|_| scheme != Scheme::Aes128) else {
            return Ok(key.clone());
        };
        let systems = if self.settings.cpix.is_none() {
            raw_systems(wanted, &self.settings.raw_drm, key, title.as_str(), scheme)?
        } else {
            self.check_systems(key, Some(wanted))?;
            (wanted.iter())
                .filter_map(|id| key_system(key, *id))
                .cloned()
                .collect()
        };
        Ok(Arc::new(ContentKey {
            systems,
            ..(**key).clone()
        }))
    }

    /// Whether `key` holds every system `wanted` that a key server must supply (none
    /// without a key server: the raw-key systems are made, not fetched). Cheap, for
    /// requests that need no signalling (media segments) but must fail as the manifests do.
    ///
    /// # Errors
    /// [`KeyError::MissingSystem`] naming the first system left out.
    pub fn check_systems(
        &self,
        key: &ContentKey,
        wanted: Option<&[DrmId]>,
    ) -> Result<(), KeyError> {
        if self.settings.cpix.is_none() {
            return Ok(());
        }
        for id in wanted.unwrap_or_default() {
            if id.from_key_server() && key_system(key, *id).is_none() {
                return Err(KeyError::MissingSystem { system: *id });
            }
        }
        Ok(())
    }

    /// The content key of the title at `title_key`, with the signalling of the DRM
    /// systems `drm` (the title's; `None`: the provider's choice).
    ///
    /// # Errors
    /// When no provider could be made, or the provider has no key for it now.
    pub async fn content_key(
        &self,
        title_key: &ObjectKey,
        drm: Option<&[DrmId]>,
    ) -> Result<Arc<ContentKey>, ServeError> {
        let provider = self.provider.as_ref().ok_or(ServeError::NoKeyProvider)?;
        Ok(provider.content_key_for(title_key.as_str(), drm).await?)
    }

    /// The content keys of the title at `title_key` under the key split `presets`, with
    /// the signalling of the DRM systems `drm`; the default split is
    /// [`Protector::content_key`]'s one key.
    ///
    /// # Errors
    /// When no provider could be made, or the provider has no key for one of the usages
    /// now (503 naming it).
    pub async fn title_keys(
        &self,
        title_key: &ObjectKey,
        drm: Option<&[DrmId]>,
        presets: KeyPresets,
    ) -> Result<Arc<TitleKeys>, ServeError> {
        let provider = self.provider.as_ref().ok_or(ServeError::NoKeyProvider)?;
        Ok(provider
            .title_keys(title_key.as_str(), drm, presets)
            .await?)
    }
}

/// `key`'s usable signalling for system `id`, if the key server gave it.
fn key_system(key: &ContentKey, id: DrmId) -> Option<&crate::crypto::drm::DrmSystem> {
    (key.systems.iter()).find(|s| s.system_id == id.system_id() && s.usable())
}
