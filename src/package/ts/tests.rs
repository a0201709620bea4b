//! The TS writer over fixtures: the bytes against the layout and the plan.

use super::writer::Need;
use super::*;
use crate::media::{index_from_bytes, MediaLimits, TrackKind};
use crate::package::Title;

pub(crate) fn fixture(name: &str) -> (bytes::Bytes, Title) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let file = bytes::Bytes::from(std::fs::read(path).unwrap());
    let index = index_from_bytes(&file, &MediaLimits::default()).unwrap();
    (file, Title::new(index, 1000).unwrap())
}

/// The program of the first video with the first audio, or of the first audio alone.
pub(crate) fn main_program(title: &Title) -> TsProgram {
    let pos = |kind| title.index.tracks.iter().position(|t| t.kind == kind);
    TsProgram::new(&title.index, pos(TrackKind::Video), pos(TrackKind::Audio)).unwrap()
}

/// Drive the writer over `file` in chunks of `chunk` bytes, as the server does.
pub(crate) fn write_segment(
    file: &[u8],
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    window: Option<std::ops::Range<u64>>,
    chunk: usize,
) -> Vec<u8> {
    let whole = window.is_none();
    let mut writer = prepare_ts_segment(title, program, layout, segment, window).unwrap();
    let inputs: Vec<Vec<u8>> = writer
        .ranges
        .iter()
        .map(|ranges| {
            ranges
                .iter()
                .flat_map(|r| file[r.start as usize..r.end() as usize].to_vec())
                .collect()
        })
        .collect();
    let mut positions = vec![0usize; inputs.len()];
    let mut out = Vec::new();
    let mut pending: Vec<&[u8]> = vec![&[]; inputs.len()];
    let mut need = writer.write(&mut pending, &mut out);
    while let Need::Stream(s) = need {
        let at = positions[s];
        let end = (at + chunk).min(inputs[s].len());
        positions[s] = end;
        assert!(
            at < end,
            "writer wants more of stream {s} than its ranges hold: {}",
            writer.debug_state()
        );
        pending[s] = &inputs[s][at..end];
        need = writer.write(&mut pending, &mut out);
    }
    if whole {
        assert_eq!(positions, inputs.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(pending.iter().all(|p| p.is_empty()));
    }
    assert!(writer.is_done());
    out
}

/// Given the H.264 + AAC fixture, then every segment is as long as the layout says, made
/// of 188-byte packets starting with the sync byte, opening with PAT and PMT; and any
/// byte range of a segment is exactly that slice of the whole.
#[test]
fn segments_are_as_long_as_laid_out_and_ranges_are_slices() {
    let (file, title) = fixture("h264-aac-3s.mp4");
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    assert_eq!(layout.segments.len(), title.plan.segment_count);
    for (k, summary) in layout.segments.iter().enumerate() {
        let bytes = write_segment(&file, &title, &program, &layout, k, None, 1000);
        assert_eq!(bytes.len() as u64, summary.bytes);
        assert_eq!(bytes.len() % PACKET_LEN, 0);
        assert!(bytes.chunks(PACKET_LEN).all(|p| p[0] == 0x47));
        let pid = |p: &[u8]| u16::from_be_bytes([p[1], p[2]]) & 0x1FFF;
        assert_eq!(pid(&bytes[..188]), PAT_PID);
        assert_eq!(pid(&bytes[188..376]), PMT_PID);
        for chunk in [1, 7, 4096] {
            let again = write_segment(&file, &title, &program, &layout, k, None, chunk);
            assert_eq!(again, bytes, "chunk {chunk}");
        }
        for (a, b) in [(0, 10), (100, 1000), (377, 5000), (1, summary.bytes)] {
            let b = b.min(summary.bytes);
            let part = write_segment(&file, &title, &program, &layout, k, Some(a..b), 333);
            assert_eq!(part, &bytes[a as usize..b as usize], "{a}..{b}");
        }
    }
}

/// Dump the segments of a fixture for manual checks: `TS_DUMP=dir cargo test dump`.
#[test]
fn dump_segments_when_asked() {
    let Ok(dir) = std::env::var("TS_DUMP") else {
        return;
    };
    let name = std::env::var("TS_FIXTURE").unwrap_or("h264-aac-3s.mp4".into());
    let (file, title) = fixture(&name);
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    let mut all = Vec::new();
    for k in 0..layout.segments.len() {
        let bytes = write_segment(&file, &title, &program, &layout, k, None, 4096);
        std::fs::write(format!("{dir}/seg-{}.ts", k + 1), &bytes).unwrap();
        all.extend(bytes);
    }
    std::fs::write(format!("{dir}/all.ts"), all).unwrap();
}
