//! The local source's files: opening a key's file under the root (refusing a path that
//! leaves it), the identity of what was opened, and the identities and open files kept for
//! a window (`LocalMediaSource::with_identity_ttl`, like nginx's `open_file_cache`).
//!
//! An identity is the file's size, mtime and inode, taken from the open file itself
//! (`fstat`), so the file read later is the version the identity names. Everything here
//! that touches the filesystem is blocking: the source calls it on the blocking pool.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::future::Cache;

use crate::source::error::SourceError;
use crate::source::identity::{KnownIdentity, ObjectIdentity};
use crate::source::key::ObjectKey;

/// Most file identities remembered at once when they are reused (`with_identity_ttl`).
const IDENTITY_CACHE_ENTRIES: u64 = 100_000;
/// Most files kept open at once for reuse, each one file descriptor.
const OPEN_FILE_CACHE_ENTRIES: u64 = 1_024;

/// A file kept open with the identity it had when opened.
#[derive(Debug, Clone)]
struct OpenFile {
    identity: ObjectIdentity,
    file: Arc<File>,
}

/// Identities taken within the reuse window, and the files opened to take them, kept open
/// for the same window. Failures (a missing file) are never kept.
#[derive(Debug)]
pub(super) struct KeptFiles {
    /// How long an identity is reused (never zero: no `KeptFiles` then).
    ttl: Duration,
    identities: Cache<ObjectKey, KnownIdentity>,
    open_files: Cache<ObjectKey, OpenFile>,
}

impl KeptFiles {
    /// Identities and files kept for `ttl`; `None` for a zero `ttl` (nothing is kept).
    pub fn new(ttl: Duration) -> Option<Self> {
        (!ttl.is_zero()).then(|| Self {
            ttl,
            identities: Cache::builder()
                .max_capacity(IDENTITY_CACHE_ENTRIES)
                .time_to_live(ttl)
                .build(),
            open_files: Cache::builder()
                .max_capacity(OPEN_FILE_CACHE_ENTRIES)
                .time_to_live(ttl)
                .build(),
        })
    }

    /// How long an identity is reused.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The identity of `key` kept from an earlier call, if its window is still open.
    pub async fn identity(&self, key: &ObjectKey) -> Option<KnownIdentity> {
        self.identities.get(key).await
    }

    /// Keep `identity`, reused until `until`, and `file`, the file it was taken from.
    pub async fn keep(
        &self,
        key: &ObjectKey,
        file: File,
        identity: &ObjectIdentity,
        until: Option<Instant>,
    ) {
        let known = KnownIdentity {
            identity: identity.clone(),
            until,
        };
        self.identities.insert(key.clone(), known).await;
        let open = OpenFile {
            identity: identity.clone(),
            file: Arc::new(file),
        };
        self.open_files.insert(key.clone(), open).await;
    }

    /// The file kept open for `key` if it is the version `identity` names.
    pub async fn file(&self, key: &ObjectKey, identity: &ObjectIdentity) -> Option<Arc<File>> {
        (self.open_files.get(key).await)
            .filter(|open| open.identity == *identity)
            .map(|open| open.file)
    }
}

/// Resolve `key` under `root`, refuse symlink escapes, open it and take its identity.
pub(super) fn open_checked(
    root: &Path,
    key: &ObjectKey,
) -> Result<(File, ObjectIdentity), SourceError> {
    let io_err = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => SourceError::NotFound {
            key: key.to_string(),
        },
        _ => SourceError::Io {
            key: key.to_string(),
            source,
        },
    };
    let resolved = root.join(key.as_str()).canonicalize().map_err(io_err)?;
    if !resolved.starts_with(root) {
        return Err(SourceError::OutsideRoot {
            key: key.to_string(),
        });
    }
    let file = File::open(&resolved).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(SourceError::NotFound {
            key: key.to_string(),
        });
    }
    let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    let identity = ObjectIdentity {
        size: meta.len(),
        version: format!("m{mtime_ns}-i{}", meta.ino()),
    };
    Ok((file, identity))
}

/// Open `key` and check it is still `expected`.
pub(super) fn open_expected(
    root: &Path,
    key: &ObjectKey,
    expected: &ObjectIdentity,
) -> Result<File, SourceError> {
    let (file, identity) = open_checked(root, key)?;
    if &identity != expected {
        return Err(SourceError::Changed {
            key: key.to_string(),
        });
    }
    Ok(file)
}
