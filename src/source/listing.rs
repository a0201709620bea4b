//! Listing the objects under a prefix, as a stream: for `vodpack check` and the preview
//! page, never for serving.
//!
//! Every backend lists in the byte order of the full keys, so a listing can be resumed
//! after any key (`after`) and a long one is never held whole. A folder is walked on the
//! blocking pool, symlinked folders not followed.

use std::path::{Path, PathBuf};

use futures_util::stream::BoxStream;
use futures_util::StreamExt;

use super::error::SourceError;
use super::key::ObjectKey;

/// One object found by a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    /// Its key relative to the source (not yet validated as an `ObjectKey`: a listing
    /// shows what is there, names the server would refuse included).
    pub key: String,
    /// Size in bytes.
    pub size: u64,
}

/// A stream of listed objects.
pub type ListStream = BoxStream<'static, Result<ListedObject, SourceError>>;

/// Entries buffered between the folder walk and its consumer.
const WALK_CHANNEL_ENTRIES: usize = 64;

/// A listing prefix must be empty or a valid key (no `..`, no empty segment, no control
/// character): the preview page takes it from a request.
///
/// # Errors
/// [`SourceError::OutsideRoot`] for a prefix that is not a valid key.
pub(super) fn check_prefix(prefix: &str) -> Result<(), SourceError> {
    let trimmed = prefix.trim_end_matches('/');
    if trimmed.is_empty() || ObjectKey::parse(trimmed).is_ok() {
        return Ok(());
    }
    Err(SourceError::OutsideRoot {
        key: prefix.to_owned(),
    })
}

/// A stream of one error.
pub(super) fn failed(error: SourceError) -> ListStream {
    futures_util::stream::once(async move { Err(error) }).boxed()
}

/// The files under `root/prefix`, after the key `after`, in key order. A prefix that is
/// not a key, or whose folder resolves outside the root (a symlink), lists nothing but
/// that error.
pub(super) fn walk_folder(root: PathBuf, prefix: String, after: Option<String>) -> ListStream {
    if let Err(e) = check_prefix(&prefix) {
        return failed(e);
    }
    let (tx, rx) = tokio::sync::mpsc::channel(WALK_CHANNEL_ENTRIES);
    tokio::task::spawn_blocking(move || {
        let start = match prefix.is_empty() {
            true => root.clone(),
            false => root.join(&prefix),
        };
        if !start.canonicalize().is_ok_and(|p| p.starts_with(&root)) {
            let error = match start.exists() {
                true => SourceError::OutsideRoot { key: prefix },
                false => SourceError::NotFound { key: prefix },
            };
            let _ = tx.blocking_send(Err(error));
            return;
        }
        let mut walk = Walk {
            tx,
            after: after.unwrap_or_default(),
        };
        let base = prefix.trim_end_matches('/').to_owned();
        if let Err(e) = walk.folder(&start, &base) {
            let _ = walk.tx.blocking_send(Err(SourceError::Io {
                key: prefix.clone(),
                source: e,
            }));
        }
    });
    tokio_stream_from(rx)
}

/// The depth-first walk of one folder listing.
struct Walk {
    tx: tokio::sync::mpsc::Sender<Result<ListedObject, SourceError>>,
    /// Keys up to and including this one are skipped (empty: none).
    after: String,
}

impl Walk {
    /// Send every file under `dir`, whose key prefix is `base` (empty at the root).
    /// Returns early, without error, once the consumer has gone.
    fn folder(&mut self, dir: &Path, base: &str) -> std::io::Result<()> {
        let mut entries: Vec<(String, bool, u64)> = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_dir = kind.is_dir();
            // A symlink is followed for a file (its size), never for a folder.
            let size = match (is_dir, kind.is_symlink()) {
                (true, _) => 0,
                (false, true) => match std::fs::metadata(entry.path()) {
                    Ok(meta) if meta.is_file() => meta.len(),
                    _ => continue,
                },
                (false, false) if kind.is_file() => entry.metadata().map(|m| m.len()).unwrap_or(0),
                (false, false) => continue,
            };
            entries.push((name, is_dir, size));
        }
        let sort_key = |(name, is_dir, _): &(String, bool, u64)| match is_dir {
            true => format!("{name}/"),
            false => name.clone(),
        };
        entries.sort_by_key(sort_key);
        for (name, is_dir, size) in entries {
            let key = match base.is_empty() {
                true => name.clone(),
                false => format!("{base}/{name}"),
            };
            if is_dir {
                let folder = format!("{key}/");
                // Skip a folder wholly at or before `after`.
                if !self.after.is_empty()
                    && folder <= self.after
                    && !self.after.starts_with(&folder)
                {
                    continue;
                }
                if let Err(e) = self.folder(&dir.join(&name), &key) {
                    if self
                        .tx
                        .blocking_send(Err(SourceError::Io { key, source: e }))
                        .is_err()
                    {
                        return Ok(());
                    }
                }
                if self.tx.is_closed() {
                    return Ok(());
                }
            } else if (self.after.is_empty() || key > self.after)
                && self
                    .tx
                    .blocking_send(Ok(ListedObject { key, size }))
                    .is_err()
            {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// A receiver as a stream.
fn tokio_stream_from(
    rx: tokio::sync::mpsc::Receiver<Result<ListedObject, SourceError>>,
) -> ListStream {
    futures_util::stream::unfold(rx, |mut rx| async move {
        let item = rx.recv().await?;
        Some((item, rx))
    })
    .boxed()
}

/// The stream of a source that cannot list.
pub(super) fn unsupported() -> ListStream {
    futures_util::stream::once(async {
        Err(SourceError::Io {
            key: String::new(),
            source: std::io::Error::other("this source cannot list its objects"),
        })
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::TryStreamExt;

    #[tokio::test]
    async fn a_folder_lists_in_key_order_and_resumes_after_a_key() {
        let root = std::env::temp_dir().join(format!("vodpack-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for file in ["a b.mp4", "a/x.mp4", "a/y/z.mp4", "b.mp4", "a.mp4"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"1234").unwrap();
        }
        let keys = |after: Option<&str>, prefix: &str| {
            let stream = walk_folder(root.clone(), prefix.into(), after.map(str::to_owned));
            async move {
                let listed: Vec<ListedObject> = stream.try_collect().await.unwrap();
                listed.into_iter().map(|o| o.key).collect::<Vec<_>>()
            }
        };
        let all = keys(None, "").await;
        assert_eq!(all, ["a b.mp4", "a.mp4", "a/x.mp4", "a/y/z.mp4", "b.mp4"]);
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(all, sorted, "the walk's order is the keys' byte order");
        assert_eq!(keys(Some("a/x.mp4"), "").await, ["a/y/z.mp4", "b.mp4"]);
        assert_eq!(keys(Some("a/y/z.mp4"), "").await, ["b.mp4"]);
        assert_eq!(keys(None, "a").await, ["a/x.mp4", "a/y/z.mp4"]);
        for outside in ["..", "a/../..", "/etc"] {
            let listed: Vec<_> = walk_folder(root.clone(), outside.into(), None)
                .collect()
                .await;
            assert!(
                matches!(listed.as_slice(), [Err(SourceError::OutsideRoot { .. })]),
                "{outside}: {listed:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
