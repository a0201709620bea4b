//! Read buffers kept in memory between index loads, faulted in once.
//!
//! Why: a title's first load reads its whole `moov` into one buffer (4 MB for a 60-minute
//! title, nearly all of it sample tables). Fresh memory costs a page fault per 4 KiB on
//! first touch, about 2 us each on the VMs measured (zeroing and memory-cgroup
//! accounting), so that one read cost about 1,000 faults, a large part of a cold first
//! master (docs/performance.md). And glibc gives such a large buffer back to the kernel
//! when it is freed, so every later load paid them again.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

/// Buffers of one size, each faulted in at start.
#[derive(Debug)]
pub struct WarmBuffers {
    free: Mutex<Vec<Vec<u8>>>,
    size: usize,
}

/// Page size assumed when faulting buffers in (touching more often is harmless).
const PAGE: usize = 4096;

impl WarmBuffers {
    /// Reads shorter than this take fresh memory: a buffer is for an index, not for the
    /// small reads that probe a file or the chunks a stream sends.
    pub const MIN_LEN: usize = 1024 * 1024;

    /// `count` buffers of `size` bytes, every page of them touched now.
    pub fn new(count: usize, size: usize) -> Arc<Self> {
        let free = (0..count)
            .map(|_| {
                let mut buf = vec![0u8; size];
                // calloc maps zero pages lazily: write to each page so it is faulted in
                // here, at start, instead of under the first load. Writing 1, not 0, so
                // the store cannot be dropped as writing what is already there.
                buf.iter_mut().step_by(PAGE).for_each(|b| *b = 1);
                buf
            })
            .collect();
        Arc::new(Self {
            free: Mutex::new(free),
            size,
        })
    }

    /// A buffer for a read of `len` bytes, if one fits and is free.
    pub fn lend(self: &Arc<Self>, len: usize) -> Option<Lent> {
        if len < Self::MIN_LEN || len > self.size {
            return None;
        }
        let buf = self.free.lock().ok()?.pop()?;
        Some(Lent {
            buf,
            len,
            home: Some(self.clone()),
        })
    }

    /// Buffers not lent out now.
    #[cfg(test)]
    pub fn available(&self) -> usize {
        self.free.lock().map_or(0, |free| free.len())
    }
}

/// A buffer lent for one read: its first `len` bytes are the read's. Back to its pool
/// when dropped.
#[derive(Debug)]
pub struct Lent {
    buf: Vec<u8>,
    len: usize,
    home: Option<Arc<WarmBuffers>>,
}

impl Lent {
    /// The bytes to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len.min(self.buf.len());
        self.buf.get_mut(..len).unwrap_or_default()
    }

    /// The filled buffer as `Bytes`; it goes back to its pool when the last clone or
    /// slice is dropped.
    pub fn freeze(self) -> Bytes {
        Bytes::from_owner(self)
    }
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            if let Ok(mut free) = home.free.lock() {
                free.push(std::mem::take(&mut self.buf));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given two warm buffers, when large reads borrow them, then a third read gets none,
    /// and a buffer comes back only once the last slice of its bytes is dropped.
    #[test]
    fn buffers_are_lent_to_large_reads_and_come_back_when_let_go() {
        let pool = WarmBuffers::new(2, 2 * WarmBuffers::MIN_LEN);
        assert!(
            pool.lend(WarmBuffers::MIN_LEN - 1).is_none(),
            "a small read"
        );
        assert!(
            pool.lend(2 * WarmBuffers::MIN_LEN + 1).is_none(),
            "too large"
        );

        let mut first = pool.lend(WarmBuffers::MIN_LEN).unwrap();
        first.as_mut_slice().fill(7);
        let first = first.freeze();
        assert_eq!(first.len(), WarmBuffers::MIN_LEN);
        assert!(first.iter().all(|b| *b == 7));
        let second = pool.lend(WarmBuffers::MIN_LEN + 5).unwrap();
        assert!(pool.lend(WarmBuffers::MIN_LEN).is_none(), "all lent");
        assert_eq!(pool.available(), 0);

        let kept = first.slice(10..20);
        drop(first);
        assert_eq!(pool.available(), 0, "a slice still holds it");
        drop(kept);
        assert_eq!(pool.available(), 1);
        drop(second);
        assert_eq!(pool.available(), 2);
    }
}
