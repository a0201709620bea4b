//! The local source's reads: the ranges of one batch read from a file opened and checked
//! as one version, with one read per range, or per run of close ranges read with the gaps
//! between them (`LocalMediaSource::with_merge_gap`); `scatter.rs` makes the system calls.
//!
//! Every function here is blocking (the source calls them on the blocking pool); the
//! source reads a batch from the page cache on a runtime worker with `scatter.rs` directly.
//! A range past the end of the version is `OutOfRange` before any byte is read; a file that
//! shrank under a read is `Changed`, never a short read.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::files::open_expected;
use super::scatter::{read_wanted, read_wanted_into, ScatterError, Span, Wait};
use crate::source::error::SourceError;
use crate::source::identity::{check_ranges, ObjectIdentity, MAX_READ_BYTES};
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;
use crate::source::runs::Run;
use crate::source::warm::WarmBuffers;

/// Open `key` once, check it is still `expected`, and read every range, concatenated, into
/// one buffer (one pread per range).
pub(super) fn read_checked(
    root: &Path,
    key: &ObjectKey,
    expected: &ObjectIdentity,
    ranges: &[ByteRange],
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    let file = open_expected(root, key, expected)?;
    read_open(&file, key, expected, ranges, warm)
}

/// Read every range of `file` (opened and checked as `identity`), concatenated, into one
/// buffer: one pread per range.
fn read_open(
    file: &File,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    ranges: &[ByteRange],
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    read_spans(file, key, identity, &Reads::Ranges(ranges.to_vec()), warm)
}

/// What one batch reads: its ranges one by one (nothing over-read), or runs of close
/// ranges, each read whole with the gaps between its parts (`with_merge_gap`).
pub(super) enum Reads {
    Ranges(Vec<ByteRange>),
    Runs(Vec<Run>),
}

impl Reads {
    /// Each read, in order (no allocation: a segment's batch is read on the hot path).
    pub fn spans(&self) -> impl Iterator<Item = Span<'_>> + '_ {
        let (ranges, runs): (&[ByteRange], &[Run]) = match self {
            Reads::Ranges(ranges) => (ranges, &[]),
            Reads::Runs(runs) => (&[], runs),
        };
        (ranges.iter().map(|r| (*r, std::slice::from_ref(r))))
            .chain(runs.iter().map(|r| (r.fetch, r.parts.as_slice())))
    }

    /// How many reads.
    pub fn count(&self) -> usize {
        match self {
            Reads::Ranges(ranges) => ranges.len(),
            Reads::Runs(runs) => runs.len(),
        }
    }

    /// The wanted bytes.
    pub fn wanted(&self) -> u64 {
        (self.spans())
            .flat_map(|(_, parts)| parts.iter())
            .map(|part| part.len)
            .sum()
    }

    /// Bytes read through and not wanted.
    pub fn gaps(&self) -> u64 {
        match self {
            Reads::Ranges(_) => 0,
            Reads::Runs(runs) => (runs.iter())
                .map(|run| run.fetch.len.saturating_sub(run.wanted()))
                .sum(),
        }
    }
}

/// Read the wanted parts of `reads` of `file` (opened and checked as `identity`),
/// concatenated, into one buffer: one read per span, the gaps dropped.
pub(super) fn read_spans(
    file: &File,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    reads: &Reads,
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    check_fetched(key, identity, reads)?;
    // Within what was fetched, checked against MAX_READ_BYTES just above: the cast below
    // cannot truncate.
    let total = reads.wanted() as usize;
    let failed = |error: ScatterError| match error {
        // The file shrank between fstat and pread: a changed object, not an I/O fault.
        ScatterError::Eof => SourceError::Changed {
            key: key.to_string(),
        },
        ScatterError::Io(source) => SourceError::Io {
            key: key.to_string(),
            source,
        },
        ScatterError::NotCached => SourceError::Io {
            key: key.to_string(),
            source: std::io::Error::other("a read that may wait was refused as not cached"),
        },
    };
    if let Some(mut lent) = warm.and_then(|warm| warm.lend(total)) {
        read_wanted_into(file, reads.spans(), lent.as_mut_slice(), Wait::Disk).map_err(failed)?;
        return Ok(lent.freeze());
    }
    let out = read_wanted(file, reads.spans(), total, Wait::Disk).map_err(failed)?;
    Ok(out.freeze())
}

/// The checks of [`check_ranges`] on what `reads` fetch, without collecting it: each
/// inside the object, all together within `MAX_READ_BYTES`.
pub(super) fn check_fetched(
    key: &ObjectKey,
    identity: &ObjectIdentity,
    reads: &Reads,
) -> Result<(), SourceError> {
    let mut fetched = 0u64;
    for (fetch, _) in reads.spans() {
        let within = check_ranges(key, identity, std::slice::from_ref(&fetch), None)?;
        fetched = fetched.saturating_add(within);
    }
    if fetched > MAX_READ_BYTES {
        return Err(SourceError::TooLarge {
            key: key.to_string(),
            len: fetched,
            limit: MAX_READ_BYTES,
        });
    }
    Ok(())
}
