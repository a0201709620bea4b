//! A short H.264 file with CEA-608 captions, made at test time: x264 encodes 4 s of test
//! pattern, an ATSC A/53 `GA94` SEI unit of `cc_data()` is written before each picture's
//! slice (a pop-on "HELLO" then "WORLD" on CC1, "HOLA" on CC3), and ffmpeg muxes it to
//! MP4 with a stream copy. Needs ffmpeg with libx264 (callers check `have_tool`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The captioned file, faststart.
pub const CAPTIONED: &str = "captioned.mp4";
/// The captioned file with `moov` at the end.
pub const CAPTIONED_MOOV_END: &str = "captioned-moov-end.mp4";
/// The captions in HEVC (made by [`make_hevc_file`]).
pub const CAPTIONED_HEVC: &str = "captioned-hevc.mp4";
/// The same pictures without caption SEI.
pub const PLAIN: &str = "plain.mp4";
/// Pictures per second.
pub const FPS: u32 = 30;
/// The longest a tool may run.
const LIMIT: Duration = Duration::from_secs(120);

/// `byte` with its odd parity bit (CEA-608 sends 7 bits and odd parity).
fn parity(byte: u8) -> u8 {
    let byte = byte & 0x7f;
    match byte.count_ones() % 2 {
        0 => byte | 0x80,
        _ => byte,
    }
}

/// Pairs of a control code, sent twice as encoders do.
fn control(code: [u8; 2]) -> [[u8; 2]; 2] {
    let pair = [parity(code[0]), parity(code[1])];
    [pair, pair]
}

/// A pop-on caption of channel 1 of a field (`first` the first byte of its control codes:
/// 0x14 field 1, 0x15 field 2): load it off screen, then show it.
fn pop_on(first: u8, text: &str) -> Vec<[u8; 2]> {
    let mut pairs = Vec::new();
    pairs.extend(control([first, 0x20])); // RCL
    pairs.extend(control([first, 0x2e])); // ENM
    let mut bytes: Vec<u8> = text.bytes().collect();
    if bytes.len() % 2 == 1 {
        bytes.push(0);
    }
    pairs.extend(bytes.chunks(2).map(|c| [parity(c[0]), parity(c[1])]));
    pairs.extend(control([first, 0x2f])); // EOC
    pairs
}

/// The caption bytes of each picture of a field: `script` items start at their picture.
fn field_bytes(script: &[(usize, Vec<[u8; 2]>)], pictures: usize) -> Vec<[u8; 2]> {
    let mut out = vec![[0x80, 0x80]; pictures];
    for (at, pairs) in script {
        for (i, pair) in pairs.iter().enumerate() {
            if let Some(slot) = out.get_mut(at + i) {
                *slot = *pair;
            }
        }
    }
    out
}

/// Emulation prevention (H.264 7.4.1): a 0x03 after two zero bytes before a byte 0-3.
fn escape(rbsp: &[u8]) -> Vec<u8> {
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

/// An H.264 SEI unit of one ATSC A/53 message: `cc_data()` with one triple per field.
fn a53_sei(field1: [u8; 2], field2: [u8; 2]) -> Vec<u8> {
    let mut payload = vec![
        0xb5,
        0x00,
        0x31,
        b'G',
        b'A',
        b'9',
        b'4',
        0x03,
        0x40 | 2,
        0xff,
    ];
    payload.extend_from_slice(&[0xfc, field1[0], field1[1]]);
    payload.extend_from_slice(&[0xfd, field2[0], field2[1]]);
    payload.push(0xff);
    let mut rbsp = vec![4, payload.len() as u8];
    rbsp.extend_from_slice(&payload);
    rbsp.push(0x80);
    let mut unit = vec![0x06];
    unit.extend(escape(&rbsp));
    unit
}

/// The units of an Annex B stream.
fn annex_b_units(stream: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i..i + 3] == [0, 0, 1] {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut units = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let mut end = starts.get(n + 1).map_or(stream.len(), |next| next - 3);
        while end > start && stream[end - 1] == 0 {
            end -= 1;
        }
        units.push(&stream[start..end]);
    }
    units
}

/// `stream` (Annex B, H.264 or with `hevc` HEVC, one slice a picture, no B-frames) with
/// an A/53 SEI unit (HEVC: a prefix SEI, NAL type 39) before each picture's slice,
/// carrying `field1[n]` and `field2[n]` for picture n.
fn with_captions(
    stream: &[u8],
    hevc: bool,
    field1: &[[u8; 2]],
    field2: &[[u8; 2]],
) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(stream.len() * 2);
    let mut picture = 0;
    for unit in annex_b_units(stream) {
        let first = unit.first().copied().unwrap_or(0);
        let slice = match hevc {
            true => (first >> 1) & 0x3f < 32,
            false => matches!(first & 0x1f, 1 | 5),
        };
        if slice {
            let pad = [0x80, 0x80];
            let one = field1.get(picture).copied().unwrap_or(pad);
            let two = field2.get(picture).copied().unwrap_or(pad);
            out.extend_from_slice(&[0, 0, 0, 1]);
            let sei = a53_sei(one, two);
            if hevc {
                // The same body behind HEVC's two-byte header.
                out.extend_from_slice(&[39 << 1, 1]);
                out.extend_from_slice(&sei[1..]);
            } else {
                out.extend(sei);
            }
            picture += 1;
        }
        out.extend_from_slice(&[0, 0, 0, 1]);
        out.extend_from_slice(unit);
    }
    (out, picture)
}

/// Run `program` in `dir`, with a time limit, and return its stdout.
pub fn run_in(dir: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    let run = super::bounded::run_bounded(command, LIMIT);
    assert!(!run.timed_out, "{program} {args:?}: killed");
    let status = run.status.expect("an exit status");
    assert!(
        status.success(),
        "{program} {args:?}: {status}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    run.stdout
}

/// Run ffmpeg in `dir` with `command` (its arguments separated by spaces, none holding
/// one), quietly.
pub fn ffmpeg(dir: &Path, command: &str) -> Vec<u8> {
    let mut args = vec!["-v", "error", "-nostdin"];
    args.extend(command.split_whitespace());
    run_in(dir, "ffmpeg", &args)
}

/// Make in `dir` [`CAPTIONED`], [`CAPTIONED_MOOV_END`] (the same with `moov` at the end)
/// and [`PLAIN`] (the same pictures, no caption SEI): H.264 at 30 fps, a key frame every
/// second, AAC.
pub fn make_files(dir: &Path) {
    ffmpeg(
        dir,
        "-y -f lavfi -i testsrc=size=320x240:rate=30 -t 4 -c:v libx264 -bf 0 -g 30 \
         -pix_fmt yuv420p -f h264 plain.h264",
    );
    let plain = std::fs::read(dir.join("plain.h264")).unwrap();
    let (captioned, count) = with_captions(&plain, false, &field1(), &field2());
    assert_eq!(count, PICTURES);
    std::fs::write(dir.join("captioned.h264"), captioned).unwrap();
    for (raw, mp4, flags) in [
        ("captioned.h264", CAPTIONED, "-movflags +faststart"),
        ("captioned.h264", CAPTIONED_MOOV_END, ""),
        ("plain.h264", PLAIN, "-movflags +faststart"),
    ] {
        ffmpeg(
            dir,
            &format!(
                "-y -framerate {FPS} -i {raw} -f lavfi -i sine=d=4 -c:v copy -c:a aac \
                 -shortest {flags} {mp4}"
            ),
        );
    }
}

/// Make [`CAPTIONED_HEVC`] in `dir`: the same captions in HEVC (x265, `hvc1`), no audio.
pub fn make_hevc_file(dir: &Path) {
    ffmpeg(
        dir,
        "-y -f lavfi -i testsrc=size=320x240:rate=30 -t 4 -c:v libx265 \
         -x265-params bframes=0:keyint=30:log-level=error -pix_fmt yuv420p -f hevc plain.hevc",
    );
    let plain = std::fs::read(dir.join("plain.hevc")).unwrap();
    let (captioned, count) = with_captions(&plain, true, &field1(), &field2());
    assert_eq!(count, PICTURES);
    std::fs::write(dir.join("captioned.hevc"), captioned).unwrap();
    ffmpeg(
        dir,
        &format!(
            "-y -framerate {FPS} -i captioned.hevc -c:v copy -tag:v hvc1 \
             -movflags +faststart {CAPTIONED_HEVC}"
        ),
    );
}

/// Pictures in each file.
const PICTURES: usize = 120;

/// Field 1: "HELLO" from picture 7 (its EOC) to 45, "WORLD" from 57 to 100, on CC1.
fn field1() -> Vec<[u8; 2]> {
    field_bytes(
        &[
            (0, pop_on(0x14, "HELLO")),
            (45, control([0x14, 0x2c]).to_vec()), // EDM
            (50, pop_on(0x14, "WORLD")),
            (100, control([0x14, 0x2c]).to_vec()),
        ],
        PICTURES,
    )
}

/// Field 2: "HOLA" on CC3.
fn field2() -> Vec<[u8; 2]> {
    field_bytes(&[(10, pop_on(0x15, "HOLA"))], PICTURES)
}
