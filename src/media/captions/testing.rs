//! Caption bytes as an encoder writes them, for the parser's tests.

/// `byte` (7 bits) with its odd parity bit set, as CEA-608 sends it.
pub(crate) fn with_parity(byte: u8) -> u8 {
    let byte = byte & 0x7f;
    match byte.count_ones() % 2 {
        0 => byte | 0x80,
        _ => byte,
    }
}

/// Emulation prevention: a 0x03 after two zero bytes before any byte 0-3.
pub(crate) fn escape_rbsp(rbsp: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rbsp.len() + 4);
    let mut zeros = 0;
    for &byte in rbsp {
        if zeros >= 2 && byte <= 3 {
            out.push(3);
            zeros = 0;
        }
        zeros = if byte == 0 { zeros + 1 } else { 0 };
        out.push(byte);
    }
    out
}

/// An H.264 SEI NAL unit (no length prefix) holding one ATSC A/53 `GA94` message with
/// the valid triples `(cc_type, cc_data_1, cc_data_2)`.
pub(crate) fn a53_sei_nal(pairs: &[(u8, u8, u8)]) -> Vec<u8> {
    let mut payload = vec![0xb5, 0x00, 0x31, b'G', b'A', b'9', b'4', 0x03];
    payload.push(0x40 | (pairs.len() as u8 & 0x1f));
    payload.push(0xff);
    for &(kind, one, two) in pairs {
        // A triple of all zeros stands for an invalid one.
        let head = match (one, two) {
            (0, 0) => 0x00,
            _ => 0xf8 | 0x04 | (kind & 3),
        };
        payload.extend_from_slice(&[head, one, two]);
    }
    // marker_bits after the triples (A/53 Part 4 6.2.3.1).
    payload.push(0xff);
    let mut rbsp = vec![4, payload.len() as u8];
    rbsp.extend_from_slice(&payload);
    rbsp.push(0x80);
    let mut nal = vec![0x06];
    nal.extend(escape_rbsp(&rbsp));
    nal
}
