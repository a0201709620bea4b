//! Reads of a batch of a segment straight into the answer: a range read into its place,
//! a run of close ranges (`LocalMediaSource::with_merge_gap`) read whole into a scratch
//! buffer kept per thread and its parts copied out. No buffer zeroed before the kernel
//! fills it, and no allocation but the answer.
//!
//! Why our own code: std has no `preadv2`, and no read into uninitialised memory
//! (`read_buf` is unstable). Before this module every batch zeroed its answer, and every
//! run zeroed a fresh scratch buffer too: with glibc's allocator, a tenth of a segment's
//! CPU went to zeroing and allocating (docs/performance.md).

use std::fs::File;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;

use bytes::BytesMut;

use crate::source::range::ByteRange;

/// One read: the bytes fetched, and the wanted parts within them, in order.
pub(super) type Span<'a> = (ByteRange, &'a [ByteRange]);

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
    spans: impl Iterator<Item = Span<'a>>,
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
    spans: impl Iterator<Item = Span<'a>>,
    out: &mut [u8],
    wait: Wait,
) -> Result<(), ScatterError> {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and `scatter` only ever stores
    // initialised bytes (the kernel's), so `out` holds initialised bytes throughout.
    let slots = unsafe { &mut *(std::ptr::from_mut::<[u8]>(out) as *mut [MaybeUninit<u8>]) };
    scatter(file, spans, slots, wait)
}

/// Read each span of `spans` into consecutive slots of `out`: a span of one part straight
/// into its slot, a run of several through this thread's scratch buffer. Succeeds only
/// when `out` is filled exactly.
fn scatter<'a>(
    file: &File,
    spans: impl Iterator<Item = Span<'a>>,
    out: &mut [MaybeUninit<u8>],
    wait: Wait,
) -> Result<(), ScatterError> {
    if wait == Wait::CachedOnly && !NOWAIT_SUPPORTED {
        return Err(ScatterError::NotCached);
    }
    let mut rest = out;
    for (fetch, parts) in spans {
        let [part] = parts else {
            rest = read_through(file, fetch, parts, rest, wait)?;
            continue;
        };
        let len = usize::try_from(part.len).map_err(|_| plan_error("part too long"))?;
        if len > rest.len() {
            return Err(plan_error("parts longer than the answer"));
        }
        let (slot, after) = std::mem::take(&mut rest).split_at_mut(len);
        rest = after;
        if len > 0 {
            let iov = libc::iovec {
                iov_base: slot.as_mut_ptr().cast(),
                iov_len: len,
            };
            read_exact(file, iov, part.start, wait)?;
        }
    }
    if !rest.is_empty() {
        return Err(plan_error("parts shorter than the answer"));
    }
    Ok(())
}

/// Longest scratch buffer a thread keeps: a default batch (64 KiB) plus the whole
/// over-read budget (256 KiB) fits, with room.
const KEPT_SCRATCH_BYTES: usize = 1024 * 1024;

thread_local! {
    /// The scratch buffer runs are read through, one per thread (runtime workers and
    /// blocking-pool threads): grown to the longest run read on the thread (at most
    /// `KEPT_SCRATCH_BYTES`), never zeroed again, so it stays in the cache.
    static THROUGH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Read `fetch` whole into this thread's scratch buffer and copy its `parts` into the
/// front of `out`; the rest of `out`. One contiguous read and a copy from the cache cost
/// less than a vectored read with a buffer per part and per gap: the kernel's copy slows
/// with every small buffer (measured on the bench asset: a run of 181 samples of about
/// 600 bytes with audio between them; docs/performance.md).
fn read_through<'o>(
    file: &File,
    fetch: ByteRange,
    parts: &[ByteRange],
    out: &'o mut [MaybeUninit<u8>],
    wait: Wait,
) -> Result<&'o mut [MaybeUninit<u8>], ScatterError> {
    let len = usize::try_from(fetch.len).map_err(|_| plan_error("run too long"))?;
    THROUGH.with(|cell| {
        let mut kept = cell.borrow_mut();
        // A run longer than what a thread keeps (a large `stream_chunk_bytes`) is read
        // through a buffer of its own.
        let mut own = Vec::new();
        let scratch = if len <= KEPT_SCRATCH_BYTES {
            &mut *kept
        } else {
            &mut own
        };
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        let Some(whole) = scratch.get_mut(..len) else {
            return Err(plan_error("short scratch"));
        };
        let iov = libc::iovec {
            iov_base: whole.as_mut_ptr().cast(),
            iov_len: len,
        };
        read_exact(file, iov, fetch.start, wait)?;
        let mut rest = out;
        for part in parts {
            let from =
                usize::try_from(part.start.saturating_sub(fetch.start)).unwrap_or(usize::MAX);
            let n = usize::try_from(part.len).unwrap_or(usize::MAX);
            let bytes = whole
                .get(from..from.saturating_add(n))
                .ok_or_else(|| plan_error("part outside its run"))?;
            if n > rest.len() {
                return Err(plan_error("parts longer than the answer"));
            }
            let (slot, after) = std::mem::take(&mut rest).split_at_mut(n);
            slot.write_copy_of_slice(bytes);
            rest = after;
        }
        Ok(rest)
    })
}

/// Fill the buffer `iov` describes from `file` at `offset`, with as many calls as it takes
/// (a call may read fewer bytes than asked).
fn read_exact(
    file: &File,
    mut iov: libc::iovec,
    mut offset: u64,
    wait: Wait,
) -> Result<(), ScatterError> {
    while iov.iov_len > 0 {
        let at = libc::off_t::try_from(offset).map_err(|_| plan_error("offset too large"))?;
        let read = preadv(file, &iov, at, wait);
        let done = match usize::try_from(read) {
            Ok(0) => {
                return Err(match wait {
                    Wait::CachedOnly => ScatterError::NotCached,
                    Wait::Disk => ScatterError::Eof,
                })
            }
            Ok(n) => n.min(iov.iov_len),
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
        // SAFETY: `done <= iov_len`, so the new base stays inside (or one past the end of)
        // the buffer the iovec describes.
        iov.iov_base = unsafe { iov.iov_base.cast::<u8>().add(done) }.cast();
        iov.iov_len -= done;
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

/// One `preadv` (or `preadv2` with `RWF_NOWAIT`) into `iov` at `at`.
fn preadv(file: &File, iov: &libc::iovec, at: libc::off_t, wait: Wait) -> isize {
    let fd = file.as_raw_fd();
    match wait {
        // SAFETY: `iov` describes memory valid for writes for the whole call (a slot of
        // the caller's answer, or the scratch buffer; see `scatter`). The descriptor
        // belongs to `file`, open for the whole call.
        Wait::Disk => unsafe { libc::preadv(fd, iov, 1, at) },
        Wait::CachedOnly => preadv_nowait(fd, iov, at),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn preadv_nowait(fd: libc::c_int, iov: &libc::iovec, at: libc::off_t) -> isize {
    // SAFETY: as in `preadv`.
    unsafe { libc::preadv2(fd, iov, 1, at, libc::RWF_NOWAIT) }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn preadv_nowait(_fd: libc::c_int, _iov: &libc::iovec, _at: libc::off_t) -> isize {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// Given a run of thousands of parts, then every part is read, in order.
    #[test]
    fn runs_of_many_parts_are_read_whole() {
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

    /// Given parts outside their run or not adding up to the answer, then it is refused.
    #[test]
    fn a_plan_that_does_not_add_up_is_refused() {
        let (file, path) = file_of(b"0123456789", "plan");
        let parts = [ByteRange::new(1, 2), ByteRange::new(6, 2)];
        let run = ByteRange::new(1, 6);
        let read = read_wanted(&file, std::iter::once((run, &parts[..])), 4, Wait::Disk);
        assert!(matches!(read, Err(ScatterError::Io(_))));
        let one = [ByteRange::new(1, 2)];
        let read = read_wanted(&file, std::iter::once((one[0], &one[..])), 5, Wait::Disk);
        assert!(matches!(read, Err(ScatterError::Io(_))));
        let _ = std::fs::remove_file(path);
    }
}
