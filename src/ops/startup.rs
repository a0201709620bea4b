//! Starting up: every setting checked and the source opened before the listener opens.
//!
//! A setting that cannot work (an unreadable root, a plain-HTTP endpoint not allowed, a
//! lone access key, an unknown TOML key, a limit of 0, an address in use) is a
//! [`StartupError`]: the binary prints its one line, which names the setting and the fix,
//! and exits with [`StartupError::EXIT_CODE`] (2, as for a bad command line), so a
//! container restarts loudly instead of serving 502s. `inspect` and `check` open their
//! source through the same function, so they read exactly what `serve` would.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::{ConfigError, Settings};
use crate::server::IndexShelves;
use crate::source::{
    LocalMediaSource, MediaSource, ObjectStoreOptions, ObjectStoreSource, Shelf, StoreError,
};

/// Why the server (or a command reading its source) cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A setting, the config file or an honoured variable is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The root folder cannot be served.
    #[error(
        "root {}: {problem}; give --root (or VODPACK_ROOT) a readable folder of media files, \
         or --source a bucket URL",
        path.display()
    )]
    Root { path: PathBuf, problem: String },
    /// The object store cannot be set up from the source URL and its settings.
    #[error("source {url}: {source}")]
    Source {
        url: String,
        #[source]
        source: StoreError,
    },
    /// An index tier (`--index-cache-dir`, `--index-cache-prefix`) cannot be opened.
    #[error("{setting} {value}: {problem}")]
    IndexCache {
        setting: &'static str,
        value: String,
        problem: String,
    },
    /// The listen address cannot be bound.
    #[error("listen {addr}: {source}; give --listen (or VODPACK_LISTEN) a free local address")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

impl StartupError {
    /// The process exit status for a startup error.
    pub const EXIT_CODE: i32 = 2;

    /// The error as the single line the binary prints (any line break in a wrapped
    /// library message folded into a space).
    pub fn one_line(&self) -> String {
        let text = self.to_string();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A source opened from the settings.
pub struct OpenedSource {
    /// The source every read goes through.
    pub source: Arc<dyn MediaSource>,
    /// The canonical root folder, for a local source; `None` for an object store.
    pub root: Option<PathBuf>,
    /// What is served, for log lines: the folder's path or the source URL.
    pub description: String,
}

/// Open the source the settings name: the object store of `source`, or the `root` folder.
///
/// # Errors
/// [`StartupError::Root`] for a root that is missing, not a folder or unreadable;
/// [`StartupError::Source`] for a URL or store configuration that cannot work.
pub fn open_source(settings: &Settings) -> Result<OpenedSource, StartupError> {
    if let Some(url) = &settings.source {
        let options = ObjectStoreOptions {
            open_read_bytes: open_read_bytes(settings),
            ..settings.object_store.clone()
        };
        let source =
            ObjectStoreSource::new(url, &options).map_err(|source| StartupError::Source {
                url: url.clone(),
                source,
            })?;
        return Ok(OpenedSource {
            source: Arc::new(source),
            root: None,
            description: url.clone(),
        });
    }
    let root = &settings.root;
    check_root(root)?;
    let source = LocalMediaSource::new(root)
        .map_err(|e| StartupError::Root {
            path: root.clone(),
            problem: e.to_string(),
        })?
        .with_identity_ttl(Duration::from_millis(settings.object_store.identity_ttl_ms))
        .with_warm_buffers(
            2,
            usize::try_from(settings.load_buffer_bytes / 2).unwrap_or(0),
        )
        .with_merge_gap(settings.local_merge_gap_bytes);
    let root = source.root().to_path_buf();
    Ok(OpenedSource {
        description: root.display().to_string(),
        source: Arc::new(source),
        root: Some(root),
    })
}

/// Bytes of an object read by the GET that first opens it, which brings its identity: what
/// its index load reads first (the probe of `moov`), or none (a HEAD) when an index tier
/// is configured, since the title's index is then usually found there without reading the
/// media object at all.
pub fn open_read_bytes(settings: &Settings) -> u64 {
    match settings.index_cache_dir.is_some() || settings.index_cache_prefix.is_some() {
        true => 0,
        false => settings.limits.probe_bytes,
    }
}

/// The index tiers the settings name: the folder of `--index-cache-dir`, bounded by
/// `--index-cache-dir-bytes`, and the store of `--index-cache-prefix`, an object-store URL
/// or a prefix beside the media (under the source's URL, or a folder under the root).
///
/// # Errors
/// [`StartupError::IndexCache`] for a folder that cannot be made or listed, a prefix that
/// climbs out of the media, or a store URL that cannot work.
pub fn open_shelves(settings: &Settings) -> Result<IndexShelves, StartupError> {
    let mut shelves = IndexShelves::default();
    if let Some(dir) = &settings.index_cache_dir {
        let disk = Shelf::folder(dir, Some(settings.index_cache_dir_bytes)).map_err(|e| {
            StartupError::IndexCache {
                setting: "--index-cache-dir",
                value: dir.display().to_string(),
                problem: e.to_string(),
            }
        })?;
        shelves.disk = Some(disk);
    }
    if let Some(prefix) = &settings.index_cache_prefix {
        let failed = |problem: String| StartupError::IndexCache {
            setting: "--index-cache-prefix",
            value: prefix.clone(),
            problem,
        };
        let store = if prefix.contains("://") {
            Shelf::store(prefix, &settings.object_store, &[]).map_err(|e| failed(e.to_string()))?
        } else {
            let beside = prefix.trim_matches('/');
            let plain = !beside.is_empty()
                && beside
                    .split('/')
                    .all(|part| !part.is_empty() && part != "." && part != "..");
            if !plain {
                return Err(failed(
                    "a prefix beside the media is a relative path such as .vodpack-index/".into(),
                ));
            }
            match &settings.source {
                Some(url) => {
                    let url = format!("{}/{beside}/", url.trim_end_matches('/'));
                    Shelf::store(&url, &settings.object_store, &[])
                        .map_err(|e| failed(e.to_string()))?
                }
                None => Shelf::folder(&settings.root.join(beside), None)
                    .map_err(|e| failed(e.to_string()))?,
            }
        };
        shelves.store = Some(store);
    }
    Ok(shelves)
}

/// A root must be a folder whose entries can be listed.
fn check_root(root: &Path) -> Result<(), StartupError> {
    let problem = match std::fs::metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("no such folder".to_owned()),
        Err(e) => Some(format!("cannot read it ({e})")),
        Ok(meta) if !meta.is_dir() => Some("not a folder".to_owned()),
        Ok(_) => match std::fs::read_dir(root) {
            Ok(_) => None,
            Err(e) => Some(format!("cannot list it ({e})")),
        },
    };
    match problem {
        Some(problem) => Err(StartupError::Root {
            path: root.to_path_buf(),
            problem,
        }),
        None => Ok(()),
    }
}

/// Versions of vodpack and of the crates that decide its output and its reads, for the
/// startup line (checked against `Cargo.lock` by a test).
pub const VERSIONS: &[(&str, &str)] = &[
    ("vodpack", env!("CARGO_PKG_VERSION")),
    ("mp4-atom", "0.17"),
    ("object_store", "0.14"),
    ("httparse", "1"),
];

/// Log the one startup line: the effective source, limits and versions.
pub fn log_startup(settings: &Settings, opened: &OpenedSource) {
    let versions = VERSIONS
        .iter()
        .map(|(name, version)| format!("{name} {version}"))
        .collect::<Vec<_>>()
        .join(", ");
    let store = &settings.object_store;
    let server = &settings.server;
    tracing::info!(
        source = %opened.description,
        source_kind = opened.source.kind().as_str(),
        s3_endpoint = store.s3_endpoint.as_deref().unwrap_or("-"),
        allow_http = store.allow_http,
        listen = %settings.listen,
        segment_duration_ms = settings.segment_duration_ms,
        metadata_cache_bytes = settings.metadata_cache_bytes,
        load_buffer_bytes = settings.load_buffer_bytes,
        max_moov_bytes = settings.limits.max_moov_bytes,
        stream_chunk_bytes = settings.stream_chunk_bytes,
        max_connections = server.max_connections,
        max_segment_requests = server.max_segment_requests,
        max_manifest_requests = server.max_manifest_requests,
        request_timeout_ms = server.request_timeout_ms,
        source_timeout_ms = store.timeout_ms,
        preview = settings_preview(settings),
        versions = %versions,
        "starting"
    );
}

/// Whether the preview page is on, for the startup line.
fn settings_preview(settings: &Settings) -> bool {
    crate::server::preview_enabled(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_versions_on_the_startup_line_are_the_locked_ones() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
            .expect("Cargo.lock");
        for (name, version) in VERSIONS.iter().skip(1) {
            let needle = format!("name = \"{name}\"\nversion = \"{version}");
            assert!(lock.contains(&needle), "{name} {version} not in Cargo.lock");
        }
    }

    #[test]
    fn a_missing_root_or_a_file_as_root_names_the_setting_and_the_fix() {
        let missing = check_root(Path::new("/nonexistent/vodpack-root")).unwrap_err();
        let line = missing.one_line();
        assert!(
            line.contains("no such folder") && line.contains("--root"),
            "{line}"
        );
        let file = check_root(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("Cargo.toml")
                .as_path(),
        )
        .unwrap_err();
        assert!(file.one_line().contains("not a folder"));
    }
}
