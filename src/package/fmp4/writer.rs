//! A minimal ISO BMFF box writer: big-endian fields into a growing buffer, with box sizes
//! patched when a box is closed.
//!
//! We write our own boxes rather than build mp4-atom structs because segment headers are
//! on the hot path (one per segment request, budget 0.01 ms) and because init segments
//! splice in the source's `stsd` bytes verbatim, which mp4-atom cannot encode. Every box
//! written here is decoded back with mp4-atom in the tests.

/// Writes boxes into a `Vec<u8>`. Open boxes are closed in LIFO order with [`BoxWriter::end`].
#[derive(Debug, Default)]
pub(crate) struct BoxWriter {
    buf: Vec<u8>,
    open: Vec<usize>,
}

impl BoxWriter {
    /// A writer with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: Vec::with_capacity(capacity),
            open: Vec::with_capacity(8),
        }
    }

    /// Open a plain box.
    pub(crate) fn begin(&mut self, kind: &[u8; 4]) {
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&[0, 0, 0, 0]);
        self.buf.extend_from_slice(kind);
    }

    /// Open a full box (ISO/IEC 14496-12 4.2) with its version and 24-bit flags.
    pub(crate) fn begin_full(&mut self, kind: &[u8; 4], version: u8, flags: u32) {
        self.begin(kind);
        self.u32((u32::from(version) << 24) | (flags & 0x00ff_ffff));
    }

    /// Close the innermost open box, writing its size.
    pub(crate) fn end(&mut self) {
        if let Some(start) = self.open.pop() {
            // Boxes we write are far below 4 GiB (headers and init segments).
            let size = u32::try_from(self.buf.len() - start).unwrap_or(u32::MAX);
            if let Some(slot) = self.buf.get_mut(start..start + 4) {
                slot.copy_from_slice(&size.to_be_bytes());
            }
        }
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
    }

    pub(crate) fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }

    /// Current length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Overwrite 4 bytes at `pos` (a field whose value is known only later).
    pub(crate) fn patch_u32(&mut self, pos: usize, v: u32) {
        if let Some(slot) = self.buf.get_mut(pos..pos + 4) {
            slot.copy_from_slice(&v.to_be_bytes());
        }
    }

    /// The bytes written; every open box should have been closed.
    pub(crate) fn finish(self) -> Vec<u8> {
        debug_assert!(self.open.is_empty(), "unclosed box");
        self.buf
    }
}
