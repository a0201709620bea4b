//! HLS SAMPLE-AES for MPEG-TS (Apple, "MPEG-2 Stream Encryption Format for HTTP Live
//! Streaming"): each frame's payload is encrypted in place with AES-128-CBC, leaving the
//! headers a demuxer needs clear, and the PMT says so.
//!
//! Emulation prevention over an encrypted H.264 unit makes its length depend on its
//! ciphertext, so a SAMPLE-AES segment's layout is known only after its video samples are
//! encrypted: [`encrypt_segment`] takes the segment's clear samples whole. A filler NAL unit
//! keeps each segment's packet count what the clear layout says, modulo 16. Written here:
//! no crate implements the format.

use aes::cipher::{BlockModeEncrypt, InnerIvInit, KeyInit};
use aes::Aes128;
use bytes::Bytes;

use super::layout::{segment_units, Unit};
use super::writer::{prepare_sized_segment, TsSegment};
use super::{StreamKind, TsLayout, TsProgram, PACKET_LEN};
use crate::crypto::cipher::BLOCK;
use crate::package::{PackageError, Title};

type Aes128Cbc = cbc::Encryptor<Aes128>;

/// Most bytes of clear samples one SAMPLE-AES segment may hold in memory (all streams):
/// 64 MiB, six seconds at 85 Mbit/s.
pub const MAX_SEGMENT_SAMPLE_BYTES: u64 = 64 << 20;

/// Bytes of an H.264 slice NAL unit (as in the byte stream) left clear first.
const VIDEO_CLEAR_LEAD: usize = 32;
/// A slice NAL unit is encrypted only when longer than this (as in the byte stream).
const VIDEO_MIN_NAL: usize = 48;
/// Bytes left clear after each encrypted video block.
const VIDEO_CLEAR_RUN: usize = 144;
/// Bytes of an audio frame left clear first.
const AUDIO_CLEAR_LEAD: usize = 16;

/// AES-128-CBC from `iv` over the first `blocks` whole blocks of `data`, in place.
fn cbc_blocks(aes: &Aes128, iv: &[u8; 16], data: &mut [u8], blocks: usize) {
    let len = (blocks * BLOCK).min(data.len() - data.len() % BLOCK);
    let Some(data) = data.get_mut(..len) else {
        return;
    };
    let (blocks, _) = aes::Block::slice_as_chunks_mut(data);
    Aes128Cbc::inner_iv_init(aes.clone(), &(*iv).into()).encrypt_blocks(blocks);
}

/// Encrypt one audio frame in place: 16 bytes clear, then every whole block.
fn encrypt_audio_frame(aes: &Aes128, iv: &[u8; 16], frame: &mut [u8]) {
    if let Some(rest) = frame.get_mut(AUDIO_CLEAR_LEAD..) {
        let blocks = rest.len() / BLOCK;
        cbc_blocks(aes, iv, rest, blocks);
    }
}

/// Encrypt each E-AC-3 sync frame of `sample` in place (a sample may hold several: the
/// independent substream and its dependents). A frame whose header does not read as
/// one runs to the sample's end.
fn encrypt_eac3_sample(aes: &Aes128, iv: &[u8; 16], mut sample: &mut [u8]) {
    while !sample.is_empty() {
        let len = match sample {
            // syncword, then strmtyp(2) substreamid(3) frmsiz(11): (frmsiz + 1) words.
            [0x0B, 0x77, hi, lo, ..] => {
                (usize::from(u16::from_be_bytes([*hi, *lo]) & 0x07FF) + 1) * 2
            }
            _ => sample.len(),
        };
        let len = len.min(sample.len());
        let (frame, rest) = std::mem::take(&mut sample).split_at_mut(len);
        encrypt_audio_frame(aes, iv, frame);
        sample = rest;
    }
}

/// Apply emulation prevention: a 0x03 before any byte of 0 to 3 that follows two zero
/// bytes, and after two trailing zero bytes.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    let mut zeros = 0;
    for &b in bytes {
        if zeros >= 2 && b <= 3 {
            out.push(3);
            zeros = 0;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    if zeros >= 2 {
        out.push(3);
    }
}

/// Whether `bytes` hold two zero bytes in a row: without them there is no emulation
/// prevention to apply. Eight bytes at a time; most words of coded video hold no zero
/// byte at all.
fn has_zero_pair(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut previous_zero = false;
    let mut words = bytes.chunks_exact(8);
    let scan = |slice: &[u8], previous_zero: &mut bool| {
        for &b in slice {
            if b == 0 && *previous_zero {
                return true;
            }
            *previous_zero = b == 0;
        }
        false
    };
    for word in words.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_ne_bytes(w);
        if w.wrapping_sub(ONES) & !w & HIGHS == 0 {
            previous_zero = false;
        } else if scan(word, &mut previous_zero) {
            return true;
        }
    }
    scan(words.remainder(), &mut previous_zero)
}

/// Encrypt the protected blocks of a slice NAL unit in place: after the 32-byte lead, one
/// block in every 160 while more than 16 bytes follow, one CBC chain from `iv`. A unit of
/// 48 bytes or fewer has no such block.
fn encrypt_slice(aes: &Aes128, iv: &[u8; 16], nal: &mut [u8]) {
    let mut cbc = Aes128Cbc::inner_iv_init(aes.clone(), &(*iv).into());
    let mut at = VIDEO_CLEAR_LEAD;
    while nal.len().saturating_sub(at) > BLOCK {
        if let Some(block) = nal.get_mut(at..at + BLOCK) {
            let (blocks, _) = aes::Block::slice_as_chunks_mut(block);
            cbc.encrypt_blocks(blocks);
        }
        at += BLOCK + VIDEO_CLEAR_RUN;
    }
}

/// Encrypt one H.264 NAL unit (its bytes after the length) into `out`, length-prefixed.
/// A slice longer than 48 bytes is encrypted as it is, then emulation prevention is
/// applied to it (module comment); a ciphertext with no zero pair (the usual case) needs
/// none and keeps its length. Other units, and shorter slices, which readers neither
/// decrypt nor unescape, are copied.
fn encrypt_nal(aes: &Aes128, iv: &[u8; 16], nal: &[u8], scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    let slice = matches!(nal.first().map(|h| h & 0x1F), Some(1 | 5));
    let start = out.len();
    out.extend_from_slice(&(nal.len() as u32).to_be_bytes());
    out.extend_from_slice(nal);
    if !slice || nal.len() <= VIDEO_MIN_NAL {
        return;
    }
    let Some(body) = out.get_mut(start + 4..) else {
        return;
    };
    encrypt_slice(aes, iv, body);
    if !has_zero_pair(body) {
        return;
    }
    scratch.clear();
    scratch.extend_from_slice(body);
    out.truncate(start + 4);
    escape(scratch, out);
    let len = (out.len() - start - 4) as u32;
    if let Some(field) = out.get_mut(start..start + 4) {
        field.copy_from_slice(&len.to_be_bytes());
    }
}

/// Encrypt one H.264 sample of 4-byte-length NAL units into `out`. A length that runs
/// past the sample is taken to end with it, and fewer than four bytes left are copied as
/// they are, as the clear writer (`annexb`) takes them.
fn encrypt_avc_sample(aes: &Aes128, iv: &[u8; 16], mut sample: &[u8], out: &mut Vec<u8>) {
    let mut scratch = Vec::new();
    while let Some((field, rest)) = sample.split_first_chunk::<4>() {
        let len = (u32::from_be_bytes(*field) as usize).min(rest.len());
        let (nal, rest) = rest.split_at(len);
        encrypt_nal(aes, iv, nal, &mut scratch, out);
        sample = rest;
    }
    out.extend_from_slice(sample);
}

/// A filler data NAL unit (H.264 7.3.2.7, type 12) of `len` bytes with its 4-byte length
/// (`len` at least 6).
fn filler_nal(len: usize, out: &mut Vec<u8>) {
    let body = len.saturating_sub(4).max(2);
    out.extend_from_slice(&(body as u32).to_be_bytes());
    out.push(0x0C);
    out.resize(out.len() + body - 2, 0xFF);
    out.push(0x80);
}

/// Segment `segment` of `program` (a SAMPLE-AES program, [`TsProgram::sample_aes`])
/// encrypted with `key` and `iv`, from `clear`: per program stream, the bytes of its
/// samples in the segment, in order (the clear writer's `ranges`). Returns the writer and,
/// per stream, the encrypted sample bytes it takes.
///
/// # Errors
/// [`PackageError::NotInTs`] when the bytes are not the samples the index lists, or a
/// segment holds more than [`MAX_SEGMENT_SAMPLE_BYTES`].
pub fn encrypt_segment(
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    clear: Vec<Bytes>,
    key: &[u8; 16],
    iv: &[u8; 16],
) -> Result<(TsSegment, Vec<Bytes>), PackageError> {
    let aes = Aes128::new(&(*key).into());
    let mut sizes = Vec::with_capacity(program.streams.len());
    let mut bytes = Vec::with_capacity(program.streams.len());
    let mut video = None;
    for (index, (stream, clear)) in program.streams.iter().zip(clear).enumerate() {
        let track = title.index.tracks.get(stream.track_pos);
        let plan = title.plan.tracks.get(stream.track_pos);
        let refuse = |reason: String| PackageError::NotInTs {
            track_id: track.map_or(0, |t| t.track_id),
            reason,
        };
        let clear_sizes = track
            .zip(plan.and_then(|p| p.samples(segment)))
            .and_then(|(t, range)| t.samples.sizes.get(range))
            .ok_or(PackageError::SegmentOutOfRange {
                number: (segment as u64).saturating_add(1),
                count: layout.segments.len() as u64,
            })?;
        let total: u64 = clear_sizes.iter().map(|s| u64::from(*s)).sum();
        if total != clear.len() as u64 {
            return Err(refuse(format!(
                "read {} bytes of samples where the index lists {total}",
                clear.len()
            )));
        }
        if total > MAX_SEGMENT_SAMPLE_BYTES {
            return Err(refuse(format!(
                "a segment of {total} bytes of samples is too large for SAMPLE-AES"
            )));
        }
        match stream.kind {
            StreamKind::H264 { .. } => {
                let mut out = Vec::with_capacity(clear.len() + clear.len() / 64);
                let mut new_sizes = Vec::with_capacity(clear_sizes.len());
                let mut rest = &clear[..];
                for size in clear_sizes {
                    let (sample, tail) = rest.split_at((*size as usize).min(rest.len()));
                    let before = out.len();
                    encrypt_avc_sample(&aes, iv, sample, &mut out);
                    let grown = u32::try_from(out.len() - before)
                        .map_err(|_| refuse("an encrypted sample past 4 GiB".into()))?;
                    new_sizes.push(grown);
                    rest = tail;
                }
                video = Some(index);
                sizes.push(new_sizes);
                bytes.push(out);
            }
            StreamKind::Aac(_) | StreamKind::Ac3 | StreamKind::Eac3 => {
                let mut out = clear.to_vec();
                let mut rest = &mut out[..];
                for size in clear_sizes {
                    let (frame, tail) = rest.split_at_mut((*size as usize).min(rest.len()));
                    if stream.kind == StreamKind::Eac3 {
                        encrypt_eac3_sample(&aes, iv, frame);
                    } else {
                        encrypt_audio_frame(&aes, iv, frame);
                    }
                    rest = tail;
                }
                sizes.push(clear_sizes.to_vec());
                bytes.push(out);
            }
            StreamKind::Hevc { .. } | StreamKind::Mp3 { .. } => {
                return Err(refuse(
                    "SAMPLE-AES covers H.264, AAC, AC-3 and E-AC-3".into(),
                ))
            }
        }
    }
    if let Some(v) = video {
        pad_video(title, program, segment, v, &mut sizes, &mut bytes)?;
    }
    let writer = prepare_sized_segment(title, program, layout, segment, &sizes)?;
    Ok((writer, bytes.into_iter().map(Bytes::from).collect()))
}

/// Packets of stream `stream`'s PES in segment `segment` with `sizes` (or the index's).
fn video_packets(
    title: &Title,
    program: &TsProgram,
    segment: usize,
    stream: usize,
    sizes: Option<&[Vec<u32>]>,
) -> Result<(u64, Option<super::layout::Pes>), PackageError> {
    let units = segment_units(title, program, segment, sizes)?;
    let mut packets = 0;
    let mut last = None;
    for unit in units {
        if let Unit::Pes(pes) = unit {
            if pes.stream() == stream {
                packets += pes.packets();
                last = Some(pes);
            }
        }
    }
    Ok((packets, last))
}

/// Append a filler NAL unit to the segment's last video frame so its PID carries as
/// many packets, modulo 16, as in the clear layout (module comment).
fn pad_video(
    title: &Title,
    program: &TsProgram,
    segment: usize,
    stream: usize,
    sizes: &mut [Vec<u32>],
    bytes: &mut [Vec<u8>],
) -> Result<(), PackageError> {
    // A segment whose slices hold no zero pair before or after encryption keeps every size:
    // nothing to make up.
    let clear_sizes = (program.streams.get(stream))
        .and_then(|s| {
            Some((
                title.index.tracks.get(s.track_pos)?,
                title.plan.tracks.get(s.track_pos)?,
            ))
        })
        .and_then(|(t, p)| t.samples.sizes.get(p.samples(segment)?));
    if clear_sizes.is_some_and(|c| Some(c) == sizes.get(stream).map(Vec::as_slice)) {
        return Ok(());
    }
    let (clear, _) = video_packets(title, program, segment, stream, None)?;
    let (encrypted, last) = video_packets(title, program, segment, stream, Some(sizes))?;
    let pad = (clear + 16 - encrypted % 16) % 16;
    let (Some(last), true) = (last, pad > 0) else {
        return Ok(());
    };
    // The shortest PES of `target` packets is one byte past the longest of one fewer.
    let payload = (PACKET_LEN - 4) as u64;
    let first = payload - last.first_adaptation_len() as u64;
    let target = last.packets() + pad;
    let shortest = first + (target - 2) * payload + 1;
    let grow = shortest.saturating_sub(last.len()).max(6);
    let (Some(size), Some(out)) = (
        sizes.get_mut(stream).and_then(|s| s.last_mut()),
        bytes.get_mut(stream),
    ) else {
        return Ok(());
    };
    *size = u32::try_from(u64::from(*size) + grow).map_err(|_| PackageError::NotInTs {
        track_id: 0,
        reason: "an encrypted sample past 4 GiB".into(),
    })?;
    filler_nal(grow as usize, out);
    Ok(())
}

#[cfg(test)]
mod tests;
