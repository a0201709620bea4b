//! Signed URLs: an HMAC-SHA256 token with an expiry, a path prefix and optionally the
//! client's IP, carried in the `token` query parameter and checked in constant time.
//!
//! The token reads `EXPIRY.BINDING.PREFIX.SIGNATURE`: EXPIRY in Unix seconds, BINDING `i`
//! when the signature covers the client IP (which is not written in the URL) or `n`,
//! PREFIX the base64url path prefix it grants (`/vod/films/a.mp4/` grants every resource
//! of that title), SIGNATURE base64url HMAC-SHA256 over all of them. One token thus
//! covers the relative URLs a manifest refers to, which is how it is carried into them.
//! A check answers only yes or no: the reason is for the server's counters, never for the
//! client, and the token itself is never logged.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::keys::Secret;

/// The query parameter carrying the token.
pub const TOKEN_PARAM: &str = "token";
/// Label of the signed message, so URL signatures cannot be replayed as anything else.
const LABEL: &[u8] = b"vodpack url token v1";

/// Why a token was refused (for metrics and tests; clients get a bare 403).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// No token on a protected path.
    #[error("missing token")]
    Missing,
    /// Not in the token format.
    #[error("malformed token")]
    Malformed,
    /// The signature does not match.
    #[error("bad signature")]
    BadSignature,
    /// Past its expiry (plus the allowed skew).
    #[error("expired token")]
    Expired,
    /// The path is outside the prefix it grants.
    #[error("path outside the token's prefix")]
    WrongPath,
}

impl TokenError {
    /// The reason as a metric label (`vod_token_refusals_total{reason}`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Malformed => "malformed",
            Self::BadSignature => "bad_signature",
            Self::Expired => "expired",
            Self::WrongPath => "wrong_path",
        }
    }
}

/// Signs URL tokens with one secret, and checks them against it and, during a rotation,
/// the previous one.
#[derive(Debug, Clone)]
pub struct TokenSigner {
    secret: Secret,
    /// The secret being rotated out: tokens it signed are still accepted, none is signed
    /// with it.
    previous: Option<Secret>,
    /// Seconds a token is still accepted after its expiry, for clocks that disagree.
    pub skew_secs: u64,
}

impl TokenSigner {
    /// A signer with `secret`, accepting tokens up to `skew_secs` past expiry.
    pub fn new(secret: Secret, skew_secs: u64) -> Self {
        Self {
            secret,
            previous: None,
            skew_secs,
        }
    }

    /// The same signer, also accepting tokens signed with `previous` (a rotation window).
    pub fn with_previous(mut self, previous: Option<Secret>) -> Self {
        self.previous = previous;
        self
    }

    /// A token granting `prefix` until `expires` (Unix seconds), bound to `client_ip`
    /// when given.
    pub fn sign(&self, prefix: &str, expires: u64, client_ip: Option<&str>) -> String {
        let binding = if client_ip.is_some() { "i" } else { "n" };
        let exp = expires.to_string();
        let ip = client_ip.unwrap_or("");
        let mac = self.secret.hmac(&[
            LABEL,
            exp.as_bytes(),
            binding.as_bytes(),
            prefix.as_bytes(),
            ip.as_bytes(),
        ]);
        format!(
            "{exp}.{binding}.{}.{}",
            URL_SAFE_NO_PAD.encode(prefix),
            URL_SAFE_NO_PAD.encode(mac)
        )
    }

    /// Check `token` for a request of `path` from `client_ip` at `now` (Unix seconds).
    ///
    /// # Errors
    /// The [`TokenError`] saying why it is refused.
    pub fn check(
        &self,
        token: Option<&str>,
        path: &str,
        client_ip: &str,
        now: u64,
    ) -> Result<(), TokenError> {
        let token = token.ok_or(TokenError::Missing)?;
        let mut parts = token.split('.');
        let (Some(exp), Some(binding), Some(prefix), Some(sig), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(TokenError::Malformed);
        };
        let expires: u64 = exp.parse().map_err(|_| TokenError::Malformed)?;
        let ip = match binding {
            "i" => client_ip,
            "n" => "",
            _ => return Err(TokenError::Malformed),
        };
        let prefix = URL_SAFE_NO_PAD
            .decode(prefix)
            .ok()
            .and_then(|p| String::from_utf8(p).ok())
            .ok_or(TokenError::Malformed)?;
        let sig = URL_SAFE_NO_PAD
            .decode(sig)
            .map_err(|_| TokenError::Malformed)?;
        let parts: [&[u8]; 5] = [
            LABEL,
            exp.as_bytes(),
            binding.as_bytes(),
            prefix.as_bytes(),
            ip.as_bytes(),
        ];
        // The signature first, so nothing about an unsigned token is told apart by timing.
        let signed = self.secret.verify(&parts, &sig)
            || (self.previous.as_ref()).is_some_and(|previous| previous.verify(&parts, &sig));
        if !signed {
            return Err(TokenError::BadSignature);
        }
        if now > expires.saturating_add(self.skew_secs) {
            return Err(TokenError::Expired);
        }
        if prefix.is_empty() || !path.starts_with(&prefix) {
            return Err(TokenError::WrongPath);
        }
        Ok(())
    }
}

/// The value of the `token` query parameter in `query`, if any.
pub fn token_in_query(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix(TOKEN_PARAM)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> TokenSigner {
        TokenSigner::new(Secret::from_text("url signing secret!", "t").unwrap(), 30)
    }

    #[test]
    fn a_token_grants_its_prefix_until_it_expires() {
        let s = signer();
        let t = s.sign("/vod/a.mp4/", 1000, None);
        assert_eq!(
            s.check(Some(&t), "/vod/a.mp4/master.m3u8", "1.2.3.4", 900),
            Ok(())
        );
        assert_eq!(
            s.check(Some(&t), "/vod/a.mp4/v0/seg-t1-1.m4s", "::1", 1029),
            Ok(())
        );
        assert_eq!(
            s.check(Some(&t), "/vod/a.mp4/master.m3u8", "::1", 1031),
            Err(TokenError::Expired)
        );
        assert_eq!(
            s.check(Some(&t), "/vod/b.mp4/master.m3u8", "::1", 900),
            Err(TokenError::WrongPath)
        );
        assert_eq!(
            s.check(None, "/vod/a.mp4/master.m3u8", "::1", 900),
            Err(TokenError::Missing)
        );
    }

    #[test]
    fn tampered_tokens_are_refused() {
        let s = signer();
        let t = s.sign("/vod/a.mp4/", 1000, None);
        let later = t.replacen("1000", "9000", 1);
        assert_eq!(
            s.check(Some(&later), "/vod/a.mp4/x", "::1", 900),
            Err(TokenError::BadSignature)
        );
        let wider = format!(
            "1000.n.{}.{}",
            URL_SAFE_NO_PAD.encode("/vod/"),
            t.rsplit('.').next().unwrap()
        );
        assert_eq!(
            s.check(Some(&wider), "/vod/b.mp4/x", "::1", 900),
            Err(TokenError::BadSignature)
        );
        assert_eq!(
            s.check(Some("garbage"), "/vod/a.mp4/x", "::1", 900),
            Err(TokenError::Malformed)
        );
        let other = TokenSigner::new(
            Secret::from_text("another signing secret", "t").unwrap(),
            30,
        );
        assert_eq!(
            other.check(Some(&t), "/vod/a.mp4/x", "::1", 900),
            Err(TokenError::BadSignature)
        );
    }

    #[test]
    fn during_a_rotation_tokens_of_both_secrets_pass_and_new_ones_use_the_current() {
        let old = signer();
        let new_secret = Secret::from_text("the next url signing secret", "t").unwrap();
        let rotating = TokenSigner::new(new_secret.clone(), 30)
            .with_previous(Some(Secret::from_text("url signing secret!", "t").unwrap()));
        let from_old = old.sign("/vod/a.mp4/", 1000, Some("10.0.0.7"));
        let from_new = rotating.sign("/vod/a.mp4/", 1000, Some("10.0.0.7"));
        for token in [&from_old, &from_new] {
            assert_eq!(
                rotating.check(Some(token), "/vod/a.mp4/x", "10.0.0.7", 900),
                Ok(())
            );
        }
        // New tokens are the current secret's alone.
        let current_only = TokenSigner::new(new_secret, 30);
        assert_eq!(
            current_only.check(Some(&from_new), "/vod/a.mp4/x", "10.0.0.7", 900),
            Ok(())
        );
        assert_eq!(
            old.check(Some(&from_new), "/vod/a.mp4/x", "10.0.0.7", 900),
            Err(TokenError::BadSignature)
        );
        // The previous secret does not widen what a token grants.
        assert_eq!(
            rotating.check(Some(&from_old), "/vod/a.mp4/x", "10.0.0.8", 900),
            Err(TokenError::BadSignature)
        );
    }

    #[test]
    fn an_ip_bound_token_works_only_from_that_ip() {
        let s = signer();
        let t = s.sign("/vod/a.mp4/", 1000, Some("10.0.0.7"));
        assert_eq!(s.check(Some(&t), "/vod/a.mp4/x", "10.0.0.7", 900), Ok(()));
        assert_eq!(
            s.check(Some(&t), "/vod/a.mp4/x", "10.0.0.8", 900),
            Err(TokenError::BadSignature)
        );
    }

    #[test]
    fn the_token_is_found_among_other_parameters() {
        assert_eq!(token_in_query(Some("a=1&token=xyz&b=2")), Some("xyz"));
        assert_eq!(token_in_query(Some("tokens=1")), None);
        assert_eq!(token_in_query(None), None);
    }
}
