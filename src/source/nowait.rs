//! Reads from the page cache that never wait for the disk: `preadv2` with `RWF_NOWAIT`
//! (Linux 4.14+), on the runtime worker itself.
//!
//! A streamed segment is read in small batches (`stream_chunk_bytes`, 64 KiB by default,
//! so a connection holds little memory). Sent to the blocking pool one by one, each batch
//! cost a hand-off to a pool thread and back: with 1,000 streams of 16 KiB batches the
//! kernel's scheduling of those hand-offs (futex waits and wake-ups) was most of the
//! server's CPU, and segments per second fell to a quarter of what 512 KiB batches gave;
//! reading here doubled them (docs/performance.md). A media file being served is nearly always in the page cache, as nginx's
//! `sendfile` also counts on, and `RWF_NOWAIT` reads only what is there: if any byte would
//! need the disk, the call fails at once with `EAGAIN` and the batch goes to the blocking
//! pool as before. So no call here blocks on I/O, which is the rule for runtime workers.
//!
//! This is the crate's one `unsafe` block: std has no `preadv2`, and the `libc` binding
//! takes a raw buffer. Elsewhere (another OS or libc, an old kernel, a filesystem that
//! refuses the flag) [`read_exact_cached`] answers `false` and the blocking path is used.

use std::fs::File;

/// Fill `buf` from `file` at `offset` if every byte is in the page cache. `false` when
/// anything is missing from the cache, the end of the file comes first, or the kernel or
/// filesystem cannot read without waiting: the caller then reads on the blocking pool
/// (which also reports any real error).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn read_exact_cached(file: &File, buf: &mut [u8], offset: u64) -> bool {
    use std::os::fd::AsRawFd;
    let mut done = 0usize;
    while let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) {
        let Some(at) = offset
            .checked_add(done as u64)
            .and_then(|at| libc::off_t::try_from(at).ok())
        else {
            return false;
        };
        let iov = libc::iovec {
            iov_base: rest.as_mut_ptr().cast(),
            iov_len: rest.len(),
        };
        // SAFETY: `iov` describes `rest`, which is valid for writes of `rest.len()` bytes
        // and borrowed mutably for the whole call; the descriptor belongs to `file`, which
        // is open for the whole call. The kernel writes at most `iov_len` bytes.
        let read = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, at, libc::RWF_NOWAIT) };
        match usize::try_from(read) {
            Ok(n) if n > 0 => done += n,
            // 0 (end of file) or -1 (EAGAIN: not all cached; EOPNOTSUPP, EINVAL: no
            // RWF_NOWAIT here; anything else): the blocking path decides.
            _ => return false,
        }
    }
    true
}

/// Elsewhere: never read here; the blocking path reads.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn read_exact_cached(_file: &File, _buf: &mut [u8], _offset: u64) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Given a file just written (so in the page cache), then a read inside it fills the
    /// buffer with its bytes (where the kernel supports the flag), and a read past its
    /// end is refused, never answered with a short buffer.
    #[test]
    fn reads_cached_bytes_and_refuses_past_the_end() {
        let path = std::env::temp_dir().join(format!("vodpack-nowait-{}", std::process::id()));
        let mut file = File::create(&path).unwrap();
        file.write_all(b"0123456789").unwrap();
        drop(file);
        let file = File::open(&path).unwrap();
        let mut buf = [0u8; 4];
        if read_exact_cached(&file, &mut buf, 3) {
            assert_eq!(&buf, b"3456");
        }
        let mut past = [0u8; 4];
        assert!(!read_exact_cached(&file, &mut past, 8));
        let _ = std::fs::remove_file(path);
    }
}
