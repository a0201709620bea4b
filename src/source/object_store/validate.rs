//! The object store's options checked against their allowed ranges, by the source they
//! configure; the settings report a failure as an invalid setting under the name given.

use super::ObjectStoreOptions;

/// An option out of its allowed range: the setting's name (its flag without dashes) and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidOption {
    /// The setting's name, as `source-timeout-ms`.
    pub(crate) name: &'static str,
    /// Why, with the allowed range.
    pub(crate) reason: String,
}

impl ObjectStoreOptions {
    /// Check every option against its allowed range.
    ///
    /// # Errors
    /// The first option out of range, in the order of the settings.
    pub(crate) fn validate(&self) -> Result<(), InvalidOption> {
        let checks: [(&'static str, u64, std::ops::RangeInclusive<u64>); 9] = [
            (
                "source-connect-timeout-ms",
                self.connect_timeout_ms,
                10..=600_000,
            ),
            ("source-timeout-ms", self.timeout_ms, 10..=600_000),
            ("source-retries", u64::from(self.retries), 0..=20),
            (
                "source-merge-gap-bytes",
                self.max_merge_gap_bytes,
                0..=16 * 1024 * 1024,
            ),
            (
                "source-identity-ttl-ms",
                self.identity_ttl_ms,
                0..=3_600_000,
            ),
            (
                "source-identity-max-stale-ms",
                self.identity_max_stale_ms,
                0..=86_400_000,
            ),
            (
                "source-read-concurrency",
                u64::try_from(self.read_concurrency).unwrap_or(u64::MAX),
                1..=256,
            ),
            (
                "source-hedge-percent",
                u64::from(self.hedge_percent),
                0..=100,
            ),
            ("source-hedge-after-ms", self.hedge_after_ms, 0..=600_000),
        ];
        for (name, value, allowed) in checks {
            if !allowed.contains(&value) {
                return Err(InvalidOption {
                    name,
                    reason: format!("must be between {} and {}", allowed.start(), allowed.end()),
                });
            }
        }
        if let Some(endpoint) = &self.s3_endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                || url::Url::parse(endpoint).is_err()
            {
                return Err(InvalidOption {
                    name: "s3-endpoint",
                    reason: "must be an http:// or https:// URL such as http://127.0.0.1:9000"
                        .into(),
                });
            }
        }
        Ok(())
    }
}
