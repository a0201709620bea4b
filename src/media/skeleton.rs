//! A bounded copy of `moov`: only the boxes the index needs, so mp4-atom's recursive decoder
//! never sees deeper nesting than [`MediaLimits::max_box_depth`].
//!
//! Why: mp4-atom decodes containers by recursion, and a few dozen nested boxes (a few hundred in
//! a release build) overflow the stack, which aborts the whole process. So `moov` is walked here without
//! recursion along the one path the index reads and copied into a fresh `moov`; every other
//! box is dropped unread. The raw `stsd` and the sample table bodies are set aside for init
//! segments and `tables/`, so mp4-atom never decodes a table.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use bytes::Bytes;

use super::tables::RawTables;
use super::{MediaError, MediaLimits};

/// Depth of `stsd` in the copy: moov (1) / trak / mdia / minf / stbl / stsd (6).
const STSD_DEPTH: usize = 6;

/// A `dinf` with one self-contained `url ` entry. mp4-atom requires a `dinf` in `minf`; the
/// index never reads it, and a copied one could nest boxes.
const MINIMAL_DINF: [u8; 36] = [
    0, 0, 0, 36, b'd', b'i', b'n', b'f', //
    0, 0, 0, 28, b'd', b'r', b'e', b'f', 0, 0, 0, 0, 0, 0, 0, 1, //
    0, 0, 0, 12, b'u', b'r', b'l', b' ', 0, 0, 0, 1,
];

/// What the walk produces.
#[derive(Debug)]
pub(super) struct Skeleton {
    /// A `moov` holding only `mvhd` and, per `trak`, the boxes the index reads.
    pub moov: Vec<u8>,
    /// The source `stsd` box (header included) of each `trak`, in the order of the copy's
    /// `trak`s (which is file order); `None` when a `trak` has none.
    pub sample_descriptions: Vec<Option<Bytes>>,
    /// The sample tables of each `trak`, in the same order.
    pub tables: Vec<RawTables>,
}

/// Empty `stts`, `stsc` and `stsz` boxes: what the copy holds in place of the file's
/// tables (mp4-atom requires the three; `tables/` reads the real ones).
const EMPTY_STTS: [u8; 16] = [0, 0, 0, 16, b's', b't', b't', b's', 0, 0, 0, 0, 0, 0, 0, 0];
/// See [`EMPTY_STTS`].
const EMPTY_STSC: [u8; 16] = [0, 0, 0, 16, b's', b't', b's', b'c', 0, 0, 0, 0, 0, 0, 0, 0];
/// See [`EMPTY_STTS`]: sample size 0, no samples.
const EMPTY_STSZ: [u8; 20] = [
    0, 0, 0, 20, b's', b't', b's', b'z', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// One box inside a parent: its type, the whole box and its body, as ranges of the buffer.
#[derive(Debug, Clone)]
struct Child {
    kind: [u8; 4],
    whole: Range<usize>,
    body: Range<usize>,
}

/// The box header at `pos` of `buf`, inside a parent whose body ends at `end`. Sizes follow
/// ISO/IEC 14496-12 4.2: 0 runs to the end of the parent, 1 means a 64-bit size follows.
fn child_at(buf: &[u8], pos: usize, end: usize) -> Result<Child, MediaError> {
    let word = |at: usize| -> Option<[u8; 4]> { buf.get(at..at.checked_add(4)?)?.try_into().ok() };
    let (Some(size), Some(kind)) = (word(pos), word(pos + 4)) else {
        return Err(MediaError::Truncated {
            reason: format!("box header at offset {pos} of moov is cut off"),
        });
    };
    let size = u32::from_be_bytes(size);
    let name = String::from_utf8_lossy(&kind).escape_debug().to_string();
    let (header_len, box_len) = match size {
        0 => (8, end.saturating_sub(pos)),
        1 => {
            let (Some(high), Some(low)) = (word(pos + 8), word(pos + 12)) else {
                return Err(MediaError::Truncated {
                    reason: format!(
                        "64-bit size of box '{name}' at offset {pos} of moov is cut off"
                    ),
                });
            };
            let large =
                (u64::from(u32::from_be_bytes(high)) << 32) | u64::from(u32::from_be_bytes(low));
            (16, usize::try_from(large).unwrap_or(usize::MAX))
        }
        n => (8, n as usize),
    };
    if box_len < header_len {
        return Err(MediaError::Malformed {
            reason: format!("box '{name}' at offset {pos} of moov has size {box_len}"),
        });
    }
    // `pos < end <= buf.len()`, so the sum only overflows for a size that is too big anyway.
    match pos.checked_add(box_len).filter(|e| *e <= end) {
        Some(box_end) => Ok(Child {
            kind,
            whole: pos..box_end,
            body: pos + header_len..box_end,
        }),
        None => Err(MediaError::Malformed {
            reason: format!(
                "box '{name}' at offset {pos} of moov claims {box_len} bytes, past the end of its parent at {end}"
            ),
        }),
    }
}

/// The children of the body `body` of `buf`, in order. A remainder under 8 bytes after the
/// last child is padding (a QuickTime zero terminator), as mp4-atom also accepts.
fn children(buf: &[u8], body: Range<usize>) -> Result<Vec<Child>, MediaError> {
    let mut out = Vec::new();
    let mut pos = body.start;
    while body.end.saturating_sub(pos) >= 8 {
        let child = child_at(buf, pos, body.end)?;
        pos = child.whole.end;
        out.push(child);
    }
    Ok(out)
}

/// A box writer for the copy: `begin` writes a header whose size `end` fills in.
struct Out {
    bytes: Vec<u8>,
    open: Vec<usize>,
}

impl Out {
    fn begin(&mut self, kind: &[u8; 4]) {
        self.open.push(self.bytes.len());
        self.bytes.extend_from_slice(&[0; 4]);
        self.bytes.extend_from_slice(kind);
    }

    fn end(&mut self) -> Result<(), MediaError> {
        let Some(start) = self.open.pop() else {
            return Ok(());
        };
        let len = u32::try_from(self.bytes.len() - start).map_err(|_| MediaError::Malformed {
            reason: "moov is over 4 GiB".to_owned(),
        })?;
        if let Some(size) = self.bytes.get_mut(start..start + 4) {
            size.copy_from_slice(&len.to_be_bytes());
        }
        Ok(())
    }

    fn copy(&mut self, buf: &[u8], child: &Child) {
        if let Some(bytes) = buf.get(child.whole.clone()) {
            self.bytes.extend_from_slice(bytes);
        }
    }
}

/// Copy the boxes the index reads out of `moov` (one whole box, header included).
///
/// # Errors
/// [`MediaError::Malformed`] or [`MediaError::Truncated`] for a box header that is too short
/// or runs past its parent on the path walked, [`MediaError::TooLarge`] for more `trak`s
/// than `max_tracks` or sample descriptions nested deeper than `max_box_depth`.
pub(super) fn build(moov: &Bytes, limits: &MediaLimits) -> Result<Skeleton, MediaError> {
    let top = child_at(moov, 0, moov.len())?;
    if &top.kind != b"moov" {
        return Err(MediaError::NotMp4 {
            reason: "no moov box found".to_owned(),
        });
    }
    let top_children = children(moov, top.body)?;
    let traks = top_children.iter().filter(|c| &c.kind == b"trak").count();
    if traks > limits.max_tracks {
        return Err(MediaError::TooLarge {
            limit: "max_tracks",
            value: traks as u64,
            max: limits.max_tracks as u64,
        });
    }
    let mut out = Out {
        bytes: Vec::with_capacity(moov.len().min(1 << 20)),
        open: Vec::new(),
    };
    let mut sample_descriptions = Vec::with_capacity(traks);
    let mut tables = Vec::with_capacity(traks);
    out.begin(b"moov");
    for child in &top_children {
        match &child.kind {
            b"mvhd" => out.copy(moov, child),
            b"trak" => {
                let (stsd, raw) = trak(moov, child, &mut out, limits)?;
                sample_descriptions.push(stsd);
                tables.push(raw);
            }
            _ => {}
        }
    }
    out.end()?;
    Ok(Skeleton {
        moov: out.bytes,
        sample_descriptions,
        tables,
    })
}

/// Copy one `trak`; returns its raw `stsd` and sample tables (of its first `stbl`).
fn trak(
    moov: &Bytes,
    trak: &Child,
    out: &mut Out,
    limits: &MediaLimits,
) -> Result<(Option<Bytes>, RawTables), MediaError> {
    let mut stsd = None;
    let mut tables: Option<RawTables> = None;
    out.begin(b"trak");
    for child in children(moov, trak.body.clone())? {
        match &child.kind {
            b"tkhd" => out.copy(moov, &child),
            b"edts" => {
                out.begin(b"edts");
                for edit in children(moov, child.body.clone())? {
                    if &edit.kind == b"elst" {
                        out.copy(moov, &edit);
                    }
                }
                out.end()?;
            }
            b"mdia" => {
                out.begin(b"mdia");
                for part in children(moov, child.body.clone())? {
                    match &part.kind {
                        b"mdhd" | b"hdlr" => out.copy(moov, &part),
                        b"minf" => {
                            out.begin(b"minf");
                            out.bytes.extend_from_slice(&MINIMAL_DINF);
                            for stbl in children(moov, part.body.clone())? {
                                if &stbl.kind == b"stbl" {
                                    let (found, raw) = sample_tables(moov, &stbl, out, limits)?;
                                    stsd = stsd.or(found);
                                    tables.get_or_insert(raw);
                                }
                            }
                            out.end()?;
                        }
                        _ => {}
                    }
                }
                out.end()?;
            }
            _ => {}
        }
    }
    out.end()?;
    Ok((stsd, tables.unwrap_or_default()))
}

/// Copy one `stbl` with the boxes the index reads through mp4-atom; returns its first raw
/// `stsd` and its sample tables.
fn sample_tables(
    moov: &Bytes,
    stbl: &Child,
    out: &mut Out,
    limits: &MediaLimits,
) -> Result<(Option<Bytes>, RawTables), MediaError> {
    let mut stsd = None;
    let mut tables = RawTables::default();
    out.begin(b"stbl");
    for table in children(moov, stbl.body.clone())? {
        match &table.kind {
            b"stsd" => {
                let allowed = limits.max_box_depth.saturating_sub(STSD_DEPTH);
                check_nesting(moov, table.body.clone(), allowed).map_err(|depth| {
                    MediaError::TooLarge {
                        limit: "max_box_depth",
                        value: (STSD_DEPTH + depth) as u64,
                        max: limits.max_box_depth as u64,
                    }
                })?;
                out.copy(moov, &table);
                // A copy, not a slice: the index keeps it as long as the title is cached,
                // and a slice would keep the whole `moov` buffer with it, unweighed.
                if stsd.is_none() {
                    stsd = moov.get(table.whole.clone()).map(Bytes::copy_from_slice);
                }
            }
            b"stts" | b"ctts" | b"stss" | b"stsz" | b"stsc" | b"stco" | b"co64" => {
                // A stand-in for each table mp4-atom requires (one per copy in the file,
                // so a duplicate is still refused as before).
                match &table.kind {
                    b"stts" => out.bytes.extend_from_slice(&EMPTY_STTS),
                    b"stsc" => out.bytes.extend_from_slice(&EMPTY_STSC),
                    b"stsz" => out.bytes.extend_from_slice(&EMPTY_STSZ),
                    _ => {}
                }
                tables.keep(&table.kind, moov.slice(table.body.clone()));
            }
            _ => {}
        }
    }
    out.end()?;
    Ok((stsd, tables))
}

/// Check a standalone sample description (`stsd`, header included: one read back from an
/// index object) as [`build`] checks the file's, before mp4-atom decodes it.
///
/// # Errors
/// [`MediaError::TooLarge`] when its nesting goes deeper than `limits` allow; a malformed
/// header is [`MediaError::Malformed`].
pub(super) fn check_sample_description_nesting(
    stsd: &[u8],
    limits: &MediaLimits,
) -> Result<(), MediaError> {
    let whole = child_at(stsd, 0, stsd.len())?;
    if &whole.kind != b"stsd" || whole.whole.end != stsd.len() {
        return Err(MediaError::Malformed {
            reason: "not one stsd box".into(),
        });
    }
    let allowed = limits.max_box_depth.saturating_sub(STSD_DEPTH);
    check_nesting(stsd, whole.body, allowed).map_err(|depth| MediaError::TooLarge {
        limit: "max_box_depth",
        value: (STSD_DEPTH + depth) as u64,
        max: limits.max_box_depth as u64,
    })
}

/// Whether a box type could be one mp4-atom decodes: every type it knows is printable ASCII
/// (with `©`, 0xa9). The one exception, `mebx` key boxes (any type), sits between `keys`
/// and its children, so a chain can hide at most one level in three from this count.
fn plausible_kind(kind: &[u8]) -> bool {
    kind.iter()
        .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == 0xa9)
}

/// Checks that no byte of `buf[body]` lies inside more than `allowed` plausible boxes.
///
/// Which bytes of a sample description are box headers depends on the entry type, so this
/// counts every offset where a plausible header fits (a printable type and a size that ends
/// inside `body`; size 0 runs to its end) and keeps the ends of those still open in a heap.
/// Real boxes are among them, so the real nesting is never deeper than the count: a false
/// match can only make a file look deeper, never hide depth. Time is linear in the body;
/// memory is at most `allowed + 1` ends.
///
/// # Errors
/// The depth reached, once it exceeds `allowed`.
fn check_nesting(buf: &[u8], body: Range<usize>, allowed: usize) -> Result<(), usize> {
    let mut open: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    let end = body.end.min(buf.len());
    let mut pos = body.start;
    while let Some(head) = buf
        .get(pos..(pos + 8).min(end))
        .and_then(|h| <[u8; 8]>::try_from(h).ok())
    {
        while open.peek().is_some_and(|Reverse(e)| *e <= pos) {
            open.pop();
        }
        let [s0, s1, s2, s3, k0, k1, k2, k3] = head;
        let box_end = if plausible_kind(&[k0, k1, k2, k3]) {
            match u32::from_be_bytes([s0, s1, s2, s3]) {
                0 => Some(end),
                1 => buf
                    .get(pos + 8..pos + 16)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(u64::from_be_bytes)
                    .filter(|n| *n >= 16)
                    .and_then(|n| usize::try_from(n).ok())
                    .and_then(|n| pos.checked_add(n)),
                n if n >= 8 => pos.checked_add(n as usize),
                _ => None,
            }
            .filter(|e| *e <= end)
        } else {
            None
        };
        if let Some(box_end) = box_end {
            open.push(Reverse(box_end));
            if open.len() > allowed {
                return Err(open.len());
            }
        }
        pos += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
