//! The bytes of transport packets (ISO/IEC 13818-1 2.4.3): the 4-byte header, PTS/DTS
//! and PCR fields, the PES header, the adaptation-field-only packet that carries a PCR,
//! and the packetizer that fills the 188-byte packets of one PES as its bytes come.
//!
//! Pure byte writing: what goes where (which unit, which counter, which window of the
//! segment) is decided by `layout` and `writer`, which call these.

use super::annexb::NalRewriter;
use super::layout::Pes;
use super::PACKET_LEN;

/// PTS, DTS and PCR base are 33-bit counters.
const TIME_MASK: u64 = (1 << 33) - 1;

/// A transport packet's 4-byte header (13818-1 2.4.3.2).
#[derive(Debug, Clone, Copy)]
pub(super) struct PacketHeader {
    pub(super) pid: u16,
    pub(super) unit_start: bool,
    pub(super) continuity: u8,
    pub(super) adaptation: bool,
    pub(super) payload: bool,
}

impl PacketHeader {
    pub(super) fn bytes(&self) -> [u8; 4] {
        let control = (u8::from(self.adaptation) << 1) | u8::from(self.payload);
        [
            0x47,
            (u8::from(self.unit_start) << 6) | ((self.pid >> 8) as u8 & 0x1F),
            self.pid as u8,
            (control << 4) | (self.continuity & 0x0F),
        ]
    }
}

/// A PTS or DTS field (13818-1 2.4.3.7): `marker` in the top nibble, 33 bits of time.
fn timestamp_field(marker: u8, time: u64) -> [u8; 5] {
    let t = time & TIME_MASK;
    [
        (marker << 4) | ((t >> 29) as u8 & 0x0E) | 1,
        (t >> 22) as u8,
        ((t >> 14) as u8 & 0xFE) | 1,
        (t >> 7) as u8,
        ((t << 1) as u8 & 0xFE) | 1,
    ]
}

/// A PCR field (13818-1 2.4.3.5): 33-bit base at 90 kHz, 6 reserved bits, extension 0.
fn pcr_field(base: u64) -> [u8; 6] {
    let b = base & TIME_MASK;
    [
        (b >> 25) as u8,
        (b >> 17) as u8,
        (b >> 9) as u8,
        (b >> 1) as u8,
        ((b & 1) as u8) << 7 | 0x7E,
        0,
    ]
}

/// Output with the window applied: `pos` counts every byte offered.
pub(super) struct Sink<'a> {
    pub(super) out: &'a mut Vec<u8>,
    pub(super) pos: u64,
    pub(super) skip: u64,
    pub(super) end: u64,
}

impl Sink<'_> {
    pub(super) fn emit(&mut self, bytes: &[u8]) {
        let (from, to) = (self.pos, self.pos + bytes.len() as u64);
        self.pos = to;
        let (a, b) = (from.max(self.skip), to.min(self.end));
        if a < b {
            self.out
                .extend_from_slice(&bytes[(a - from) as usize..(b - from) as usize]);
        }
    }
}

/// Packets of one PES, filled as its bytes come.
#[derive(Debug, Clone)]
pub(super) struct Packetizer {
    pid: u16,
    continuity: u8,
    /// PES bytes not yet placed in a packet.
    remaining: u64,
    /// Whether the next packet is the PES's first.
    first: bool,
    pcr: Option<u64>,
    key: bool,
    packet: [u8; PACKET_LEN],
    /// Bytes of `packet` filled; 0 when no packet is open.
    pub(super) fill: usize,
}

impl Packetizer {
    pub(super) fn new(pid: u16, continuity: u8, pes: &Pes) -> Self {
        Self {
            pid,
            continuity,
            remaining: pes.len(),
            first: true,
            pcr: pes.pcr(),
            key: pes.key,
            packet: [0xFF; PACKET_LEN],
            fill: 0,
        }
    }

    /// Open a packet: header, then an adaptation field for the PCR / random access flag
    /// (first packet) and for stuffing (last packet, when the PES ends short of it).
    fn open(&mut self) {
        let base = match (self.first, self.pcr.is_some(), self.key) {
            (true, true, _) => 8,
            (true, false, true) => 2,
            _ => 0,
        };
        let room = (PACKET_LEN - 4 - base) as u64;
        let stuffing = room.saturating_sub(self.remaining) as usize;
        let adaptation = base + stuffing;
        let header = PacketHeader {
            pid: self.pid,
            unit_start: self.first,
            continuity: self.continuity,
            adaptation: adaptation > 0,
            payload: true,
        };
        self.continuity = (self.continuity + 1) & 0x0F;
        self.packet[..4].copy_from_slice(&header.bytes());
        let mut at = 4;
        if adaptation > 0 {
            self.packet[4] = (adaptation - 1) as u8;
            at = 5;
            if adaptation > 1 {
                let mut flags = 0u8;
                if self.first && self.key {
                    flags |= 0x40;
                }
                let pcr = self.pcr.filter(|_| self.first);
                if pcr.is_some() {
                    flags |= 0x10;
                }
                self.packet[5] = flags;
                at = 6;
                if let Some(pcr) = pcr {
                    self.packet[6..12].copy_from_slice(&pcr_field(pcr));
                    at = 12;
                }
                let end = 4 + adaptation;
                self.packet[at..end].fill(0xFF);
                at = end;
            }
        }
        self.first = false;
        self.fill = at;
    }

    /// Room left in the open packet (opening one if none is).
    fn room(&mut self) -> usize {
        if self.fill == 0 {
            self.open();
        }
        PACKET_LEN - self.fill
    }

    /// Note `n` bytes placed at `fill`; emit the packet when full.
    fn placed(&mut self, n: usize, sink: &mut Sink<'_>) {
        self.fill += n;
        self.remaining = self.remaining.saturating_sub(n as u64);
        if self.fill == PACKET_LEN {
            sink.emit(&self.packet);
            self.fill = 0;
        }
    }

    pub(super) fn put(&mut self, mut bytes: &[u8], sink: &mut Sink<'_>) {
        while !bytes.is_empty() {
            let n = self.room().min(bytes.len());
            self.packet[self.fill..self.fill + n].copy_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            self.placed(n, sink);
        }
    }

    /// Copy sample bytes, rewriting NAL lengths on the way when asked.
    pub(super) fn put_sample(
        &mut self,
        mut bytes: &[u8],
        rewriter: Option<&mut NalRewriter>,
        sink: &mut Sink<'_>,
    ) {
        let mut rewriter = rewriter;
        while !bytes.is_empty() {
            let n = self.room().min(bytes.len());
            let target = &mut self.packet[self.fill..self.fill + n];
            target.copy_from_slice(&bytes[..n]);
            if let Some(r) = rewriter.as_deref_mut() {
                r.rewrite(target);
            }
            bytes = &bytes[n..];
            self.placed(n, sink);
        }
    }
}

/// The PES header of `pes` into `out`; returns its length (13818-1 2.4.3.6).
pub(super) fn pes_header(pes: &Pes, stream_id: u8, unbounded: bool, out: &mut [u8; 19]) -> usize {
    let header_len = pes.header_len();
    out[..4].copy_from_slice(&[0, 0, 1, stream_id]);
    // Video may say 0 (unbounded), and must past 65535 bytes; audio states its length,
    // which the layout kept in range.
    let length = if unbounded {
        0
    } else {
        u16::try_from(pes.len() - 6).unwrap_or(0)
    };
    out[4..6].copy_from_slice(&length.to_be_bytes());
    // '10', not scrambled, no priority, data_alignment_indicator: each PES starts an
    // access unit (a delimiter, an ADTS header or a sync frame).
    out[6] = 0x84;
    match pes.dts() {
        Some(dts) => {
            out[7] = 0xC0;
            out[8] = 10;
            out[9..14].copy_from_slice(&timestamp_field(0x3, pes.pts));
            out[14..19].copy_from_slice(&timestamp_field(0x1, dts));
        }
        None => {
            out[7] = 0x80;
            out[8] = 5;
            out[9..14].copy_from_slice(&timestamp_field(0x2, pes.pts));
        }
    }
    header_len
}

/// An adaptation-field-only packet carrying `pcr` (its counter does not advance: 2.4.3.3).
pub(super) fn pcr_packet(pid: u16, continuity: u8, pcr: u64) -> [u8; PACKET_LEN] {
    let mut packet = [0xFFu8; PACKET_LEN];
    let header = PacketHeader {
        pid,
        unit_start: false,
        continuity: continuity.wrapping_sub(1) & 0x0F,
        adaptation: true,
        payload: false,
    };
    packet[..4].copy_from_slice(&header.bytes());
    packet[4] = 183;
    packet[5] = 0x10;
    packet[6..12].copy_from_slice(&pcr_field(pcr));
    packet
}
