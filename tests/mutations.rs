//! A bounded mutation test on stable: 10,000 byte-level mutations of the committed
//! fixtures, pushed through the same entry points as the fuzz targets in `fuzz/`
//! (`tests/exercise/mod.rs`: index from bytes, then every manifest and segment). None may
//! panic, and every result must be self-consistent. The generator is seeded, so a failure
//! names a case that reproduces: `MUTATION_CASE=<case>` runs that case alone.

mod exercise;
mod hostile;

use std::panic::{catch_unwind, AssertUnwindSafe};

use exercise::{exercise, Outcome};
use hostile::{fixture, Rng};

const CASES: u64 = 10_000;

const FIXTURES: [&str; 15] = [
    "h264-aac-3s.mp4",
    "h264-aac-3s-moov-end.mp4",
    "h264-bframes-editlist-aac.mp4",
    "hevc-aac-3s.mp4",
    "aac-3s-audio-only.m4a",
    "h264-3s-video-only.mp4",
    "h264-aac-2lang-3s.mp4",
    // Colour read from the HEVC VUI, and from colr or the AV1 sequence header.
    "hevc-main10-hlg-aac-3s.mp4",
    "av1-10bit-pq-aac-3s.mp4",
    "h264-aac-movtext-3s.mp4",
    "h264-aac-wvtt-3s.mp4",
    "h264-aac-3s-frag-walk.mp4",
    "h264-aac-3s-frag-sidx.mp4",
    "h264-aac-3s-frag-mfra.mp4",
    "h264-aac-3s-frag-moov-samples.mp4",
];

/// Containers whose children the generic walk below descends into.
const CONTAINERS: [&[u8; 4]; 12] = [
    b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"mvex", b"moof",
    b"traf", b"mfra",
];

/// Top-level boxes of fragmented files that hold metadata, aimed at like `moov`.
const FRAGMENT_METADATA: [&[u8; 4]; 3] = [b"moof", b"sidx", b"mfra"];

/// A fixture with where its interesting bytes are: `moov`, and every box header.
struct Subject {
    name: &'static str,
    bytes: Vec<u8>,
    moov: std::ops::Range<usize>,
    /// Where the metadata is: `moov`, then (fragmented files) every `moof`, `sidx`, `mfra`.
    hot: Vec<std::ops::Range<usize>>,
    /// Offsets of every box header found walking the containers (size field first).
    headers: Vec<usize>,
}

fn subject(name: &'static str) -> Subject {
    let bytes = fixture(name);
    let mut headers = Vec::new();
    let mut hot = Vec::new();
    let mut moov = 0..0;
    let mut stack = Vec::new();
    stack.push(0..bytes.len());
    while let Some(range) = stack.pop() {
        let mut pos = range.start;
        while pos + 8 <= range.end {
            let size = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
            let kind = &bytes[pos + 4..pos + 8];
            if size < 8 || pos + size > range.end {
                break;
            }
            headers.push(pos);
            if kind == b"moov" {
                moov = pos..pos + size;
            }
            if range.start == 0 && FRAGMENT_METADATA.iter().any(|c| &c[..] == kind) {
                hot.push(pos..pos + size);
            }
            if CONTAINERS.iter().any(|c| &c[..] == kind) {
                stack.push(pos + 8..pos + size);
            }
            pos += size;
        }
    }
    assert!(!moov.is_empty(), "{name}: no moov");
    hot.insert(0, moov.clone());
    Subject {
        name,
        bytes,
        moov,
        hot,
        headers,
    }
}

/// One mutation of `s`, chosen by `rng`; returns the file and a description.
fn mutate(s: &Subject, rng: &mut Rng) -> (Vec<u8>, String) {
    let mut file = s.bytes.clone();
    let mut done = Vec::new();
    // Mostly one mutation, sometimes a few stacked.
    let count = [1, 1, 1, 2, 3][rng.below(5)];
    for _ in 0..count {
        // Most bytes that matter are in moov (and a fragmented file's moof, sidx and mfra
        // boxes); aim there nine times in ten.
        let in_moov = |rng: &mut Rng, len: usize| {
            if rng.below(10) < 9 {
                let hot = match s.hot.len() {
                    1 => &s.moov,
                    n => &s.hot[rng.below(n)],
                };
                hot.start + rng.below(hot.len())
            } else {
                rng.below(len)
            }
        };
        let len = file.len();
        if len == 0 {
            break;
        }
        match rng.below(6) {
            0 => {
                let at = in_moov(rng, len).min(len - 1);
                let bit = rng.below(8);
                file[at] ^= 1 << bit;
                done.push(format!("flip bit {bit} at {at}"));
            }
            1 => {
                let at = in_moov(rng, len).min(len - 1);
                let value = [0x00, 0xff, 0x7f, 0x80][rng.below(4)];
                file[at] = value;
                done.push(format!("set byte {at} to {value:#04x}"));
            }
            2 => {
                // A 32-bit field (a count, size, offset or timescale) set to an edge value.
                let at = (in_moov(rng, len) & !3).min(len.saturating_sub(4));
                let value = [
                    0,
                    1,
                    0x7fff_ffff,
                    0xffff_ffff,
                    0x8000_0000,
                    rng.next_u64() as u32,
                ][rng.below(6)];
                file[at..at + 4].copy_from_slice(&value.to_be_bytes());
                done.push(format!("set u32 at {at} to {value:#x}"));
            }
            3 => {
                let cut = if rng.below(2) == 0 {
                    in_moov(rng, len)
                } else {
                    rng.below(len)
                };
                file.truncate(cut);
                done.push(format!("truncate to {cut}"));
            }
            _ => {
                // Corrupt the size field of a random box.
                let at = s.headers[rng.below(s.headers.len())];
                if at + 4 > file.len() {
                    continue;
                }
                let old = u32::from_be_bytes(file[at..at + 4].try_into().unwrap());
                let value = match rng.below(9) {
                    0 => 0,
                    1 => 1,
                    2 => 3,
                    3 => 7,
                    4 => old.wrapping_add(1),
                    5 => old.wrapping_sub(1),
                    6 => old.wrapping_mul(2),
                    7 => u32::MAX,
                    _ => rng.next_u64() as u32 % (old.max(1) * 2),
                };
                file[at..at + 4].copy_from_slice(&value.to_be_bytes());
                done.push(format!("size of box at {at}: {old} -> {value}"));
            }
        }
    }
    (file, done.join(", "))
}

/// Given 10,000 seeded mutations of the fixtures, when each is indexed and packaged as the
/// server would, then none panics, every result is self-consistent, and the mix is real:
/// many are refused and many are still packaged.
#[test]
fn mutated_fixtures_never_panic_and_what_is_served_is_consistent() {
    let subjects: Vec<Subject> = FIXTURES.iter().map(|name| subject(name)).collect();
    let only: Option<u64> = std::env::var("MUTATION_CASE")
        .ok()
        .and_then(|v| v.parse().ok());
    let (mut refused, mut packaged, mut no_title) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in 0..CASES {
        if only.is_some_and(|c| c != case) {
            continue;
        }
        let mut rng = Rng(0x6d75_7461_7465 ^ case.wrapping_mul(0x9e37_79b9));
        let s = &subjects[rng.below(subjects.len())];
        let (file, how) = mutate(s, &mut rng);
        let target_ms = [1000, 6000][rng.below(2)];
        match catch_unwind(AssertUnwindSafe(|| exercise(&file, target_ms))) {
            Ok(Outcome::Refused) => refused += 1,
            Ok(Outcome::NoTitle) => no_title += 1,
            Ok(Outcome::Packaged { .. }) => packaged += 1,
            Err(_) => failures.push(format!("case {case}: {} with {how}", s.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} panics:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if only.is_none() {
        eprintln!(
            "{CASES} mutations: {refused} refused, {packaged} packaged, {no_title} without a title"
        );
        assert!(
            refused >= 1000,
            "only {refused} refused: the mutations miss"
        );
        assert!(
            packaged >= 1000,
            "only {packaged} packaged: the mutations are too blunt"
        );
    }
}
