//! The checks of resolved settings: every value in its allowed range, and the pairs of
//! settings that cannot work together. The object store's options are checked by the
//! source they configure, and the protection settings by `crypto::settings`. The first
//! setting at fault is reported, in the order below.

use super::{ConfigError, Settings};

/// Most memory `load-buffer-bytes` may set aside (it is all resident from the start).
const MAX_LOAD_BUFFER_BYTES: u64 = 1024 * 1024 * 1024;

/// Check `settings` (their protection settings already checked as they were resolved).
///
/// # Errors
/// [`ConfigError::Invalid`] naming the first setting at fault and its allowed range.
pub(super) fn check(settings: &Settings) -> Result<(), ConfigError> {
    // nginx-vod's names are numbered as the module numbers them from the clear output,
    // and from the AES-128 MPEG-TS output (`vod_hls_encryption_method aes-128` under an
    // `hlsts` location). Any other encrypted output under a location would answer its
    // names with other spans than the module's, or clear: refused (fail closed).
    let encryption = settings.protect.encryption;
    let locations = &settings.nginx_vod_locations;
    let refused = (encryption.dash.is_some() && locations.dash.is_some())
        || (encryption.hls.is_some() && locations.hls.is_some())
        || (encryption
            .hls
            .is_some_and(|s| s != crate::crypto::Scheme::Aes128)
            && locations.hlsts.is_some());
    if refused {
        return Err(ConfigError::Invalid {
            name: "nginx-vod-locations",
            reason: "with --encryption, only an hlsts location with hls=aes-128 is numbered \
                     as nginx-vod-module numbers it (vod_hls_encryption_method aes-128); \
                     drop the hls and dash locations, or the encryption"
                .into(),
        });
    }
    let server = &settings.server;
    let thumbnails = &settings.thumbnails;
    let positive: [(&'static str, u64); 9] = [
        ("thumbnail-max-decodes", thumbnails.max_decodes as u64),
        ("thumbnail-max-source-pixels", thumbnails.max_source_pixels),
        ("thumbnail-jpeg-quality", u64::from(thumbnails.jpeg_quality)),
        ("max-connections", server.max_connections as u64),
        ("max-segment-requests", server.max_segment_requests as u64),
        ("max-manifest-requests", server.max_manifest_requests as u64),
        ("request-timeout-ms", server.request_timeout_ms),
        ("send-timeout-ms", server.send_timeout_ms),
        ("drain-timeout-ms", server.drain_timeout_ms),
    ];
    if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
        return Err(ConfigError::Invalid {
            name,
            reason: "must be greater than 0".into(),
        });
    }
    let storyboards = &settings.storyboards;
    if storyboards.interval_ms < super::server::MIN_STORYBOARD_INTERVAL_MS {
        return Err(ConfigError::Invalid {
            name: "storyboard-interval-ms",
            reason: format!(
                "must be at least {}",
                super::server::MIN_STORYBOARD_INTERVAL_MS
            ),
        });
    }
    if !(16..=super::server::MAX_STORYBOARD_TILE_WIDTH).contains(&storyboards.tile_width) {
        return Err(ConfigError::Invalid {
            name: "storyboard-tile-width",
            reason: format!(
                "must be between 16 and {}",
                super::server::MAX_STORYBOARD_TILE_WIDTH
            ),
        });
    }
    if thumbnails.jpeg_quality > 100 {
        return Err(ConfigError::Invalid {
            name: "thumbnail-jpeg-quality",
            reason: "must be between 1 and 100".into(),
        });
    }
    if server
        .worker_threads
        .is_some_and(|n| !(1..=1024).contains(&n))
    {
        return Err(ConfigError::Invalid {
            name: "worker-threads",
            reason: "must be between 1 and 1024".into(),
        });
    }
    let limits = &settings.limits;
    let sizes: [(&'static str, u64); 3] = [
        ("metadata-cache-bytes", settings.metadata_cache_bytes),
        ("max-moov-bytes", limits.max_moov_bytes),
        ("probe-bytes", limits.probe_bytes),
    ];
    if let Some((name, _)) = sizes.iter().find(|(_, v)| *v < 4096) {
        return Err(ConfigError::Invalid {
            name,
            reason: "must be at least 4096 bytes".into(),
        });
    }
    if settings.local_merge_gap_bytes > crate::source::OVER_READ_BUDGET_BYTES {
        return Err(ConfigError::Invalid {
            name: "local-merge-gap-bytes",
            reason: format!("must be at most {}", crate::source::OVER_READ_BUDGET_BYTES),
        });
    }
    if settings.load_buffer_bytes > MAX_LOAD_BUFFER_BYTES {
        return Err(ConfigError::Invalid {
            name: "load-buffer-bytes",
            reason: format!("must be at most {MAX_LOAD_BUFFER_BYTES} (0 turns it off)"),
        });
    }
    if limits.probe_bytes > limits.max_moov_bytes {
        return Err(ConfigError::Invalid {
            name: "probe-bytes",
            reason: format!("must not exceed max-moov-bytes ({})", limits.max_moov_bytes),
        });
    }
    if !(100..=60_000).contains(&settings.segment_duration_ms) {
        return Err(ConfigError::Invalid {
            name: "segment-duration-ms",
            reason: "must be between 100 and 60000".into(),
        });
    }
    // ETSI TS 103 285 4.5: DVB-DASH segments last 1 to 15 s (the last of a Period may be
    // shorter); the plan cuts at the target or the first key frame after it.
    if settings.dash_profile == crate::config::DashProfile::Dvb
        && !(1000..=15_000).contains(&settings.segment_duration_ms)
    {
        return Err(ConfigError::Invalid {
            name: "segment-duration-ms",
            reason: "must be between 1000 and 15000 with dash-profile dvb".into(),
        });
    }
    if !(100..=60_000).contains(&settings.nginx_vod_segment_duration_ms) {
        return Err(ConfigError::Invalid {
            name: "nginx-vod-segment-duration-ms",
            reason: "must be between 100 and 60000".into(),
        });
    }
    if !(4096..=16 * 1024 * 1024).contains(&settings.stream_chunk_bytes) {
        return Err(ConfigError::Invalid {
            name: "stream-chunk-bytes",
            reason: "must be between 4096 and 16777216".into(),
        });
    }
    if !(2..=16 * 1024 * 1024).contains(&settings.limits.max_title_document_bytes) {
        return Err(ConfigError::Invalid {
            name: "max-title-document-bytes",
            reason: "must be between 2 and 16777216".into(),
        });
    }
    if !(1..=1024).contains(&settings.limits.max_title_renditions) {
        return Err(ConfigError::Invalid {
            name: "max-title-renditions",
            reason: "must be between 1 and 1024".into(),
        });
    }
    (settings.object_store.validate()).map_err(|e| ConfigError::Invalid {
        name: e.name,
        reason: e.reason,
    })?;
    if let (Some(_), Some(source)) = (&settings.object_store.s3_endpoint, &settings.source) {
        if !source.starts_with("s3://") && !source.starts_with("s3a://") {
            return Err(ConfigError::Invalid {
                name: "s3-endpoint",
                reason: format!(
                    "applies to s3:// sources only, and the source is {source}; \
                     remove it or use an s3:// source"
                ),
            });
        }
    }
    Ok(())
}
