//! A self-cleaning temporary folder for this module's tests, so they need no extra crate.
//!
//! Each folder is named by the test's process, a counter and a label, so tests running in
//! parallel never share one, and it is removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Folders made so far by this process, to name each one apart.
static MADE: AtomicU64 = AtomicU64::new(0);

/// A temporary folder, removed with everything in it when dropped.
#[derive(Debug)]
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty folder whose name includes `label`.
    pub fn new(label: &str) -> Self {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("vodpack-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("a temporary folder");
        Self(path)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
