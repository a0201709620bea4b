//! Shelves: where whole small objects that vodpack writes itself are kept between loads,
//! today the title indexes of the index tiers (`server::titles::tiers`). Unlike a
//! [`MediaSource`](super::MediaSource), a shelf is written to, and what it holds is ours
//! but still untrusted: whoever reads an object back checks it.
//!
//! Two kinds: a folder on this machine ([`Shelf::folder`], optionally bounded in bytes,
//! least recently used out) and a prefix in an object store ([`Shelf::store`], shared by every replica).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ::object_store::path::Path;
use ::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use bytes::Bytes;

use super::counters::SourceCounters;
use super::object_store::{build_shelf_store, ObjectStoreOptions, StoreError};

/// Why a shelf could not answer.
#[derive(Debug, thiserror::Error)]
pub enum ShelfError {
    /// The folder or the store failed.
    #[error("{0}")]
    Io(String),
    /// The object is larger than the caller takes.
    #[error("{size} bytes, over the {max} taken")]
    TooLarge { size: u64, max: u64 },
    /// A name outside `[a-z0-9.-]`.
    #[error("invalid shelf object name {0:?}")]
    Name(String),
}

/// A folder or an object-store prefix of whole objects.
#[derive(Debug)]
pub enum Shelf {
    /// A folder on this machine.
    Folder(Arc<FolderShelf>),
    /// A prefix in an object store.
    Store(StoreShelf),
}

impl Shelf {
    /// The folder `dir` (made if missing), holding at most `max_bytes` (`None`: no bound)
    /// of objects; what it holds already is counted, oldest first out.
    ///
    /// # Errors
    /// The folder cannot be made or listed.
    pub fn folder(dir: &FsPath, max_bytes: Option<u64>) -> Result<Self, ShelfError> {
        let io = |e: std::io::Error| ShelfError::Io(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() || check_name(&name).is_err() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((modified, name, meta.len()));
        }
        found.sort();
        let mut lru = Lru::default();
        for (_, name, size) in found {
            lru.touch(&name, size);
        }
        let shelf = FolderShelf {
            dir: dir.to_path_buf(),
            max_bytes,
            lru: Mutex::new(lru),
        };
        shelf.evict();
        Ok(Shelf::Folder(Arc::new(shelf)))
    }

    /// The objects under `url` (`s3://bucket/prefix/`, ...), connected as a source with
    /// `options` would be, `config` applied as [`ObjectStoreSource::with_config`] does.
    ///
    /// [`ObjectStoreSource::with_config`]: super::ObjectStoreSource::with_config
    ///
    /// # Errors
    /// As building the source for `url`.
    pub fn store(
        url: &str,
        options: &ObjectStoreOptions,
        config: &[(&str, &str)],
    ) -> Result<Self, StoreError> {
        let counters = Arc::new(SourceCounters::default());
        let (store, prefix) = build_shelf_store(url, options, config, &counters)?;
        Ok(Shelf::Store(StoreShelf {
            store,
            prefix,
            url: url.to_owned(),
        }))
    }

    /// Object `name`, if the shelf holds it and it is at most `max_bytes` long.
    ///
    /// # Errors
    /// [`ShelfError::TooLarge`] past `max_bytes`; the folder's or store's failure.
    pub async fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Bytes>, ShelfError> {
        check_name(name)?;
        match self {
            Shelf::Folder(folder) => {
                let (folder, name) = (folder.clone(), name.to_owned());
                tokio::task::spawn_blocking(move || folder.get(&name, max_bytes))
                    .await
                    .map_err(|e| ShelfError::Io(e.to_string()))?
            }
            Shelf::Store(store) => store.get(name, max_bytes).await,
        }
    }

    /// Keep `bytes` as object `name`, replacing any.
    ///
    /// # Errors
    /// The folder's or store's failure.
    pub async fn put(&self, name: &str, bytes: Bytes) -> Result<(), ShelfError> {
        check_name(name)?;
        match self {
            Shelf::Folder(folder) => {
                let (folder, name) = (folder.clone(), name.to_owned());
                tokio::task::spawn_blocking(move || folder.put(&name, &bytes))
                    .await
                    .map_err(|e| ShelfError::Io(e.to_string()))?
            }
            Shelf::Store(store) => {
                let path = store.path(name);
                (store.store.put(&path, PutPayload::from_bytes(bytes)).await)
                    .map(|_| ())
                    .map_err(|e| ShelfError::Io(e.to_string()))
            }
        }
    }

    /// Where the shelf is, for logs and `inspect`.
    pub fn describe(&self) -> String {
        match self {
            Shelf::Folder(folder) => folder.dir.display().to_string(),
            Shelf::Store(store) => store.url.clone(),
        }
    }

    /// Bytes held, for a folder (`None` for a store, which is not counted).
    pub fn held_bytes(&self) -> Option<u64> {
        match self {
            Shelf::Folder(folder) => folder.lru.lock().ok().map(|l| l.bytes),
            Shelf::Store(_) => None,
        }
    }
}

/// Names are flat and plain, so no name reaches outside the folder or prefix.
fn check_name(name: &str) -> Result<(), ShelfError> {
    let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-';
    match !name.is_empty() && name.len() <= 200 && !name.starts_with('.') && name.chars().all(plain)
    {
        true => Ok(()),
        false => Err(ShelfError::Name(name.to_owned())),
    }
}

/// A folder of objects, bounded in bytes.
#[derive(Debug)]
pub struct FolderShelf {
    dir: PathBuf,
    max_bytes: Option<u64>,
    lru: Mutex<Lru>,
}

impl FolderShelf {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Bytes>, ShelfError> {
        let path = self.dir.join(name);
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.forget(name);
                return Ok(None);
            }
            Err(e) => return Err(ShelfError::Io(format!("{}: {e}", path.display()))),
        };
        let io = |e: std::io::Error| ShelfError::Io(format!("{}: {e}", path.display()));
        let size = file.metadata().map_err(io)?.len();
        if size > max_bytes {
            return Err(ShelfError::TooLarge {
                size,
                max: max_bytes,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        use std::io::Read;
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(ShelfError::TooLarge {
                size: bytes.len() as u64,
                max: max_bytes,
            });
        }
        // Recency survives a restart as the modification time.
        if let Ok(file) = std::fs::File::options().write(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        if let Ok(mut lru) = self.lru.lock() {
            lru.touch(name, bytes.len() as u64);
        }
        Ok(Some(Bytes::from(bytes)))
    }

    fn put(&self, name: &str, bytes: &[u8]) -> Result<(), ShelfError> {
        if self.max_bytes.is_some_and(|max| bytes.len() as u64 > max) {
            return Ok(());
        }
        let path = self.dir.join(name);
        let io = |e: std::io::Error| ShelfError::Io(format!("{}: {e}", path.display()));
        // Written aside and renamed, so a reader (or a crash) never meets half an object.
        let temporary = self
            .dir
            .join(format!(".{name}.{}.part", std::process::id()));
        std::fs::write(&temporary, bytes).map_err(io)?;
        // Stamped as a read stamps it: the kernel's own write time is coarser than
        // `SystemTime::now`, and would sort a fresh object before one read just before.
        if let Ok(file) = std::fs::File::options().write(true).open(&temporary) {
            let _ = file.set_modified(SystemTime::now());
        }
        std::fs::rename(&temporary, &path).map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            io(e)
        })?;
        if let Ok(mut lru) = self.lru.lock() {
            lru.touch(name, bytes.len() as u64);
        }
        self.evict();
        Ok(())
    }

    fn forget(&self, name: &str) {
        if let Ok(mut lru) = self.lru.lock() {
            lru.remove(name);
        }
    }

    /// Remove the least recently used objects until the folder is within its bound.
    fn evict(&self) {
        let Some(max) = self.max_bytes else { return };
        loop {
            let oldest = match self.lru.lock() {
                Ok(mut lru) if lru.bytes > max => lru.pop_oldest(),
                _ => None,
            };
            let Some(name) = oldest else { return };
            let _ = std::fs::remove_file(self.dir.join(&name));
        }
    }
}

/// Objects by recency: a tick per use, the oldest first out.
#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    bytes: u64,
    by_name: HashMap<String, (u64, u64)>,
    by_tick: BTreeMap<u64, String>,
}

impl Lru {
    fn touch(&mut self, name: &str, size: u64) {
        self.remove(name);
        self.tick += 1;
        self.bytes = self.bytes.saturating_add(size);
        self.by_name.insert(name.to_owned(), (self.tick, size));
        self.by_tick.insert(self.tick, name.to_owned());
    }

    fn remove(&mut self, name: &str) {
        if let Some((tick, size)) = self.by_name.remove(name) {
            self.by_tick.remove(&tick);
            self.bytes = self.bytes.saturating_sub(size);
        }
    }

    fn pop_oldest(&mut self) -> Option<String> {
        let (_, name) = self.by_tick.pop_first()?;
        if let Some((_, size)) = self.by_name.remove(&name) {
            self.bytes = self.bytes.saturating_sub(size);
        }
        Some(name)
    }
}

/// A prefix in an object store.
pub struct StoreShelf {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    url: String,
}

impl std::fmt::Debug for StoreShelf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreShelf")
            .field("url", &self.url)
            .finish()
    }
}

impl StoreShelf {
    fn path(&self, name: &str) -> Path {
        self.prefix.clone().join(name)
    }

    async fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Bytes>, ShelfError> {
        let result = match self.store.get(&self.path(name)).await {
            Ok(result) => result,
            Err(::object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(ShelfError::Io(e.to_string())),
        };
        if result.meta.size > max_bytes {
            return Err(ShelfError::TooLarge {
                size: result.meta.size,
                max: max_bytes,
            });
        }
        let bytes = (result.bytes().await).map_err(|e| ShelfError::Io(e.to_string()))?;
        if bytes.len() as u64 > max_bytes {
            return Err(ShelfError::TooLarge {
                size: bytes.len() as u64,
                max: max_bytes,
            });
        }
        Ok(Some(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::scratch::ScratchDir;

    /// Given a folder shelf bounded to 250 bytes, when three 100-byte objects are kept and the
    /// first is read in between, then the least recently used one (the second) is dropped,
    /// and a shelf opened again on the folder holds what is left, in the same order.
    #[tokio::test]
    async fn a_folder_keeps_the_most_recently_used_within_its_bound() {
        let dir = ScratchDir::new("shelf-lru");
        let shelf = Shelf::folder(dir.path(), Some(250)).unwrap();
        let body = |b: u8| Bytes::from(vec![b; 100]);
        shelf.put("a.vpix", body(1)).await.unwrap();
        shelf.put("b.vpix", body(2)).await.unwrap();
        assert_eq!(shelf.get("a.vpix", 1000).await.unwrap(), Some(body(1)));
        shelf.put("c.vpix", body(3)).await.unwrap();
        assert_eq!(shelf.get("b.vpix", 1000).await.unwrap(), None);
        assert_eq!(shelf.held_bytes(), Some(200));
        drop(shelf);

        let again = Shelf::folder(dir.path(), Some(150)).unwrap();
        assert_eq!(again.held_bytes(), Some(100), "the older of a and c goes");
        assert_eq!(again.get("a.vpix", 1000).await.unwrap(), None);
        assert_eq!(again.get("c.vpix", 1000).await.unwrap(), Some(body(3)));
    }

    /// Given an object longer than the caller takes, then it is refused, not read.
    #[tokio::test]
    async fn an_object_over_what_is_taken_is_refused() {
        let dir = ScratchDir::new("shelf-large");
        let shelf = Shelf::folder(dir.path(), None).unwrap();
        shelf
            .put("big.vpix", Bytes::from(vec![0; 64]))
            .await
            .unwrap();
        let refused = shelf.get("big.vpix", 63).await;
        assert!(
            matches!(refused, Err(ShelfError::TooLarge { size: 64, .. })),
            "{refused:?}"
        );
    }

    /// Given names that could reach outside the folder or hide in it, then they are refused.
    #[tokio::test]
    async fn names_stay_flat_and_plain() {
        let dir = ScratchDir::new("shelf-names");
        let shelf = Shelf::folder(dir.path(), None).unwrap();
        for name in ["../x", "a/b", ".hidden", "", "A.vpix", "x y"] {
            let refused = shelf.put(name, Bytes::from_static(b"x")).await;
            assert!(matches!(refused, Err(ShelfError::Name(_))), "{name:?}");
        }
    }
}
