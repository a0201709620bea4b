//! Scatter reads: a batch of a segment read from a file with one `preadv` per run, each
//! wanted part landing in its place in the answer and each gap between parts in a scratch
//! buffer that nobody reads. No intermediate buffer, no copy out of it, no zeroing of the
//! answer before the kernel fills it.
//!
//! Why our own code: std has no vectored positional read (`read_vectored_at` is unstable)
//! and no `preadv2`. Before this module, a run merged through its gaps was read whole into a
//! zeroed scratch buffer and its parts copied out of it: three passes over the bytes where
//! the kernel's own copy into place is one (docs/performance.md, issue 28).
//!
//! Reads that never wait for the disk ([`Wait::CachedOnly`]) use `preadv2` with
//! `RWF_NOWAIT` (Linux 4.14+), on the runtime worker itself. A streamed segment is read in
//! small batches (`stream_chunk_bytes`, 64 KiB by default, so a connection holds little
//! memory). Sent to the blocking pool one by one, each batch cost a hand-off to a pool
//! thread and back: with 1,000 streams of 16 KiB batches the kernel's scheduling of those
//! hand-offs (futex waits and wake-ups) was most of the server's CPU. A media file being
//! served is nearly always in the page cache, as nginx's `sendfile` also counts on, and
//! `RWF_NOWAIT` reads only what is there: if any byte would need the disk, the call fails at
//! once with `EAGAIN` and the batch goes to the blocking pool ([`Wait::Disk`]). Elsewhere
//! (another OS or libc, an old kernel, a filesystem that refuses the flag) a cached-only
//! read answers [`ScatterError::NotCached`] and the blocking path is used.
//!
//! This module holds the crate's `unsafe` blocks: the system calls take raw buffers. Every
//! `iovec` points either into the answer (disjoint slots, in order, inside its length) or
//! into the scratch buffer for gaps (written by the kernel, never read), and lives only for
//! the calls of the function that made it.

use std::fs::File;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;

use bytes::BytesMut;

use super::reads::Span;

/// Most `iovec`s one system call takes (Linux's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;

/// Whether a read may wait for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// Only bytes already in the page cache (`RWF_NOWAIT`): safe on a runtime worker.
    CachedOnly,
    /// Any read: on the blocking pool.
    Disk,
}

/// Why a scatter read gave no answer.
#[derive(Debug)]
pub(super) enum ScatterError {
    /// A cached-only read found a byte outside the page cache, or could not ask (no
    /// `RWF_NOWAIT` here): read again with [`Wait::Disk`].
    NotCached,
    /// The file ended before the last wanted byte: it shrank since it was checked.
    Eof,
    /// The system call failed, or the plan was not a plan (parts out of order, lengths
    /// that do not add up to the answer).
    Io(std::io::Error),
}

/// The wanted parts of `spans`, concatenated, read from `file`: `total` bytes (the sum of
/// the parts' lengths, checked against the caller's limits before the call).
pub(super) fn read_wanted<'a>(
    file: &File,
    spans: impl Iterator<Item = Span<'a>> + Clone,
    total: usize,
    wait: Wait,
) -> Result<BytesMut, ScatterError> {
    let mut out = BytesMut::with_capacity(total);
    let spare = out.spare_capacity_mut();
    let slots = spare
        .get_mut(..total)
        .ok_or_else(|| plan_error("short buffer"))?;
    scatter(file, spans, slots, wait)?;
    // SAFETY: `scatter` returned Ok, so the kernel wrote every one of the first `total`
    // bytes (each slot is read in full, and the slots tile `..total`, checked there).
    unsafe { out.set_len(total) };
    Ok(out)
}

/// As [`read_wanted`], into `out` (a lent buffer of exactly the wanted length).
pub(super) fn read_wanted_into<'a>(
    file: &File,
    spans: impl Iterator<Item = Span<'a>> + Clone,
    out: &mut [u8],
    wait: Wait,
) -> Result<(), ScatterError> {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and `scatter` only ever stores
    // initialised bytes (the kernel's), so `out` holds initialised bytes throughout.
    let slots = unsafe { &mut *(std::ptr::from_mut::<[u8]>(out) as *mut [MaybeUninit<u8>]) };
    scatter(file, spans, slots, wait)
}

/// Read each span of `spans` with one vectored read: its parts into consecutive slots of
/// `out`, its gaps into a scratch buffer. Succeeds only when `out` is filled exactly.
fn scatter<'a>(
    file: &File,
    spans: impl Iterator<Item = Span<'a>> + Clone,
    out: &mut [MaybeUninit<u8>],
    wait: Wait,
) -> Result<(), ScatterError> {
    if wait == Wait::CachedOnly && !NOWAIT_SUPPORTED {
        return Err(ScatterError::NotCached);
    }
    // The largest gap between two parts of a span: the scratch buffer every gap is read
    // into (bounded by the merge gap, itself within the over-read budget).
    let mut widest_gap = 0u64;
    let mut most_parts = 0usize;
    for (fetch, parts) in spans.clone() {
        most_parts = most_parts.max(parts.len());
        let mut at = fetch.start;
        for part in parts {
            widest_gap = widest_gap.max(part.start.saturating_sub(at));
            at = part.end();
        }
    }
    let mut scratch: Vec<u8> = Vec::with_capacity(usize::try_from(widest_gap).unwrap_or(0));
    let junk = scratch.spare_capacity_mut();
    let junk_ptr = junk.as_mut_ptr();
    let junk_len = junk.len();

    // A buffer per part and per gap, at most.
    let mut iov: Vec<libc::iovec> = Vec::with_capacity(2 * most_parts);
    let mut rest = out;
    for (fetch, parts) in spans {
        iov.clear();
        let mut at = fetch.start;
        for part in parts {
            let gap = part
                .start
                .checked_sub(at)
                .ok_or_else(|| plan_error("parts out of order"))?;
            if gap > 0 {
                let gap = usize::try_from(gap)
                    .ok()
                    .filter(|gap| *gap <= junk_len)
                    .ok_or_else(|| plan_error("gap wider than its scratch"))?;
                iov.push(libc::iovec {
                    iov_base: junk_ptr.cast(),
                    iov_len: gap,
                });
            }
            let len = usize::try_from(part.len).map_err(|_| plan_error("part too long"))?;
            if len > rest.len() {
                return Err(plan_error("parts longer than the answer"));
            }
            let (slot, after) = std::mem::take(&mut rest).split_at_mut(len);
            rest = after;
            if len > 0 {
                iov.push(libc::iovec {
                    iov_base: slot.as_mut_ptr().cast(),
                    iov_len: len,
                });
            }
            at = part.end();
        }
        read_iovecs(file, &mut iov, fetch.start, wait)?;
    }
    if !rest.is_empty() {
        return Err(plan_error("parts shorter than the answer"));
    }
    Ok(())
}

/// Fill every buffer of `iov` from `file`, from `offset` on, with as many calls as it
/// takes (a call reads at most `IOV_MAX` buffers, and may read fewer bytes than asked).
fn read_iovecs(
    file: &File,
    iov: &mut [libc::iovec],
    mut offset: u64,
    wait: Wait,
) -> Result<(), ScatterError> {
    let mut first = 0usize;
    while first < iov.len() {
        let Some(window) = iov.get_mut(first..(first + IOV_MAX).min(iov.len())) else {
            break;
        };
        let at = libc::off_t::try_from(offset).map_err(|_| plan_error("offset too large"))?;
        // `window.len()` is at most IOV_MAX, so the cast cannot truncate.
        let count = window.len() as libc::c_int;
        let read = preadv(file, window, count, at, wait);
        let mut done = match usize::try_from(read) {
            Ok(0) => {
                return Err(match wait {
                    Wait::CachedOnly => ScatterError::NotCached,
                    Wait::Disk => ScatterError::Eof,
                })
            }
            Ok(n) => n,
            Err(_) => {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(match wait {
                    // EAGAIN (not all cached), EOPNOTSUPP or EINVAL (no RWF_NOWAIT on this
                    // filesystem or kernel), or anything else: the blocking path decides.
                    Wait::CachedOnly => ScatterError::NotCached,
                    Wait::Disk => ScatterError::Io(error),
                });
            }
        };
        offset += done as u64;
        // Step past the buffers filled, and into the one filled in part.
        for buf in window.iter_mut() {
            if done == 0 {
                break;
            }
            let step = done.min(buf.iov_len);
            // SAFETY: `step <= iov_len`, so the new base stays inside (or one past the end
            // of) the buffer the iovec describes.
            buf.iov_base = unsafe { buf.iov_base.cast::<u8>().add(step) }.cast();
            buf.iov_len -= step;
            done -= step;
            if buf.iov_len == 0 {
                first += 1;
            }
        }
    }
    Ok(())
}

fn plan_error(why: &str) -> ScatterError {
    ScatterError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("scatter read: {why}"),
    ))
}

/// Whether this build can ask for cached-only reads.
const NOWAIT_SUPPORTED: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// One `preadv` (or `preadv2` with `RWF_NOWAIT`) of `iov[..count]` at `at`.
fn preadv(
    file: &File,
    iov: &[libc::iovec],
    count: libc::c_int,
    at: libc::off_t,
    wait: Wait,
) -> isize {
    let fd = file.as_raw_fd();
    match wait {
        // SAFETY: every iovec in `iov` describes memory valid for writes for the whole
        // call (slots of the caller's answer, or its scratch buffer; see `scatter`), and
        // `count <= iov.len()`. The descriptor belongs to `file`, open for the whole call.
        Wait::Disk => unsafe { libc::preadv(fd, iov.as_ptr(), count, at) },
        Wait::CachedOnly => preadv_nowait(fd, iov, count, at),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn preadv_nowait(
    fd: libc::c_int,
    iov: &[libc::iovec],
    count: libc::c_int,
    at: libc::off_t,
) -> isize {
    // SAFETY: as in `preadv`.
    unsafe { libc::preadv2(fd, iov.as_ptr(), count, at, libc::RWF_NOWAIT) }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn preadv_nowait(
    _fd: libc::c_int,
    _iov: &[libc::iovec],
    _count: libc::c_int,
    _at: libc::off_t,
) -> isize {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::range::ByteRange;
    use std::io::Write;

    fn file_of(bytes: &[u8], name: &str) -> (File, std::path::PathBuf) {
        let path =
            std::env::temp_dir().join(format!("vodpack-scatter-{name}-{}", std::process::id()));
        let mut file = File::create(&path).unwrap();
        file.write_all(bytes).unwrap();
        drop(file);
        (File::open(&path).unwrap(), path)
    }

    fn digits() -> Vec<u8> {
        (0..5000u32).map(|i| b'0' + (i % 10) as u8).collect()
    }

    /// Given runs with gaps, when read from disk, then the answer is the parts
    /// concatenated, and nothing of the gaps.
    #[test]
    fn parts_land_in_place_and_gaps_are_dropped() {
        let bytes = digits();
        let (file, path) = file_of(&bytes, "parts");
        let parts = [
            ByteRange::new(3, 4),
            ByteRange::new(10, 2),
            ByteRange::new(4000, 5),
        ];
        let run = ByteRange::new(3, 9);
        let spans: Vec<Span<'_>> = vec![(run, &parts[..2]), (parts[2], &parts[2..])];
        let total = 11;
        let out = read_wanted(&file, spans.iter().copied(), total, Wait::Disk).unwrap();
        let mut expected = Vec::new();
        for part in &parts {
            expected.extend_from_slice(&bytes[part.start as usize..part.end() as usize]);
        }
        assert_eq!(&out[..], &expected[..]);
        // Cached (the file was just written): the same bytes where the kernel can say.
        if let Ok(cached) = read_wanted(&file, spans.iter().copied(), total, Wait::CachedOnly) {
            assert_eq!(&cached[..], &expected[..]);
        }
        let _ = std::fs::remove_file(path);
    }

    /// Given a run of more parts than one system call takes, then every part is read.
    #[test]
    fn runs_longer_than_one_call_are_read_whole() {
        let bytes = digits();
        let (file, path) = file_of(&bytes, "long");
        let parts: Vec<ByteRange> = (0..2400).map(|i| ByteRange::new(i * 2, 1)).collect();
        let run = ByteRange::new(0, 2 * 2399 + 1);
        let out = read_wanted(&file, std::iter::once((run, &parts[..])), 2400, Wait::Disk).unwrap();
        assert!(out.iter().enumerate().all(|(i, b)| *b == bytes[i * 2]));
        let _ = std::fs::remove_file(path);
    }

    /// Given a file shorter than the plan, then the read is refused as the end of the
    /// file, never answered short.
    #[test]
    fn a_read_past_the_end_is_refused() {
        let (file, path) = file_of(b"0123456789", "short");
        let part = [ByteRange::new(8, 4)];
        let read = read_wanted(&file, std::iter::once((part[0], &part[..])), 4, Wait::Disk);
        assert!(matches!(read, Err(ScatterError::Eof)));
        let cached = read_wanted(
            &file,
            std::iter::once((part[0], &part[..])),
            4,
            Wait::CachedOnly,
        );
        assert!(matches!(cached, Err(ScatterError::NotCached)));
        let _ = std::fs::remove_file(path);
    }

    /// Given parts out of order or not adding up to the answer, then no read is made.
    #[test]
    fn a_plan_that_does_not_add_up_is_refused() {
        let (file, path) = file_of(b"0123456789", "plan");
        let parts = [ByteRange::new(5, 2), ByteRange::new(1, 2)];
        let run = ByteRange::new(1, 6);
        let read = read_wanted(&file, std::iter::once((run, &parts[..])), 4, Wait::Disk);
        assert!(matches!(read, Err(ScatterError::Io(_))));
        let one = [ByteRange::new(1, 2)];
        let read = read_wanted(&file, std::iter::once((one[0], &one[..])), 5, Wait::Disk);
        assert!(matches!(read, Err(ScatterError::Io(_))));
        let _ = std::fs::remove_file(path);
    }
}
