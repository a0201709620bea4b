//! The hostile-file corpus: broken MP4 files named by their flaw, made deterministically
//! from the committed fixtures (no binary files to keep in step). Each comes with a word
//! its error must contain, so a test can check that the answer names the flaw.
//!
//! Edits that change a box's size are made in `h264-aac-3s-moov-end.mp4`, whose `moov`
//! comes after `mdat`: growing or shrinking it moves no sample, so only the edited box's
//! ancestors need new sizes. To look at the files, run
//! `HOSTILE_CORPUS_DIR=DIR cargo test --test hostile_files` and open DIR.
#![allow(dead_code)]

use std::ops::Range;
use std::path::Path;

/// One broken file.
pub struct Hostile {
    /// File name: the flaw, then `.mp4`.
    pub name: &'static str,
    /// The file.
    pub bytes: Vec<u8>,
    /// A word or phrase the one-line error must contain.
    pub expect: &'static str,
}

/// The committed fixture `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A box found by [`find`]: the whole box and the header offsets of its ancestors.
#[derive(Debug, Clone)]
pub struct Found {
    /// The whole box (header included).
    pub whole: Range<usize>,
    /// Offset of its body.
    pub body: usize,
    /// Offsets of the headers of its ancestors, outermost first.
    pub ancestors: Vec<usize>,
}

/// The box at `path` (`"moov/trak:1/mdia/mdhd"`, `:N` picking the N-th of that type, from
/// 0). 32-bit sizes only, which is what the fixtures use.
pub fn find(file: &[u8], path: &str) -> Found {
    let mut range = 0..file.len();
    let mut ancestors = Vec::new();
    let mut found = None;
    for step in path.split('/') {
        let (kind, nth) = match step.split_once(':') {
            Some((kind, nth)) => (kind, nth.parse::<usize>().expect("index")),
            None => (step, 0),
        };
        if let Some(f) = &found {
            let f: &Found = f;
            ancestors.push(f.whole.start);
            range = f.body..f.whole.end;
        }
        let mut pos = range.start;
        let mut seen = 0;
        let hit = loop {
            assert!(pos + 8 <= range.end, "{path}: no {step}");
            let size = u32::from_be_bytes(file[pos..pos + 4].try_into().unwrap()) as usize;
            if &file[pos + 4..pos + 8] == kind.as_bytes() {
                if seen == nth {
                    break pos..pos + size;
                }
                seen += 1;
            }
            pos += size;
        };
        found = Some(Found {
            body: hit.start + 8,
            whole: hit,
            ancestors: ancestors.clone(),
        });
    }
    found.expect("a path")
}

/// Replace the box at `path` with `new_box` (header included), fixing its ancestors' sizes.
pub fn replace_box(file: &[u8], path: &str, new_box: &[u8]) -> Vec<u8> {
    let found = find(file, path);
    let delta = new_box.len() as i64 - found.whole.len() as i64;
    let mut out = file[..found.whole.start].to_vec();
    out.extend_from_slice(new_box);
    out.extend_from_slice(&file[found.whole.end..]);
    for at in found.ancestors {
        let size = u32::from_be_bytes(out[at..at + 4].try_into().unwrap());
        let size = u32::try_from(i64::from(size) + delta).expect("ancestor size");
        out[at..at + 4].copy_from_slice(&size.to_be_bytes());
    }
    out
}

/// Insert `new_box` as the last child of the box at `path`.
pub fn append_child(file: &[u8], path: &str, new_box: &[u8]) -> Vec<u8> {
    let found = find(file, path);
    let mut grown = file[found.whole.clone()].to_vec();
    grown.extend_from_slice(new_box);
    let size = grown.len() as u32;
    grown[..4].copy_from_slice(&size.to_be_bytes());
    replace_box(file, path, &grown)
}

/// Overwrite the big-endian u32 at `body_offset` of the body of the box at `path`.
pub fn set_u32(file: &[u8], path: &str, body_offset: usize, value: u32) -> Vec<u8> {
    let at = find(file, path).body + body_offset;
    let mut out = file.to_vec();
    out[at..at + 4].copy_from_slice(&value.to_be_bytes());
    out
}

/// A box of `kind` around `body`.
pub fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut b = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    b.extend_from_slice(kind);
    b.extend_from_slice(body);
    b
}

/// A full box (version 0, no flags) of `kind` around `body`.
pub fn full_box(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    boxed(kind, &[&[0, 0, 0, 0][..], body].concat())
}

/// SplitMix64: a tiny deterministic generator, so every run makes the same files.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), near enough for tests.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

const VIDEO_STBL: &str = "moov/trak:0/mdia/minf/stbl";

/// Every broken file, made from the fixtures.
pub fn corpus() -> Vec<Hostile> {
    let faststart = fixture("h264-aac-3s.mp4");
    let end = fixture("h264-aac-3s-moov-end.mp4");
    let moov = find(&faststart, "moov");
    let mut files = Vec::new();
    let mut add = |name, bytes, expect| {
        files.push(Hostile {
            name,
            bytes,
            expect,
        })
    };

    add("empty.mp4", Vec::new(), "only 0 bytes");
    let mut rng = Rng(0x5eed);
    let random: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
    add("random-bytes.mp4", random, "not an mp4");
    add(
        "text.mp4",
        b"This is a text file that someone uploaded with an .mp4 name.\n".repeat(20),
        "not an mp4",
    );
    add(
        "truncated-in-moov.mp4",
        faststart[..moov.whole.start + moov.whole.len() / 2].to_vec(),
        "claims",
    );
    // Cut in the middle of mdat: moov is whole, samples of the second half are gone.
    add(
        "truncated-in-mdat.mp4",
        faststart[..moov.whole.end + (faststart.len() - moov.whole.end) / 2].to_vec(),
        "runs past the end of the file",
    );
    // moov's size field says 4 GiB - 1.
    let mut claims = faststart.clone();
    claims[moov.whole.start..moov.whole.start + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    add("moov-claims-4gib.mp4", claims, "claims 4294967295 bytes");
    // The same claim as a 64-bit size of exactly 4 GiB.
    let mut large = end[..find(&end, "moov").whole.start].to_vec();
    large.extend_from_slice(&1u32.to_be_bytes());
    large.extend_from_slice(b"moov");
    large.extend_from_slice(&(4u64 << 30).to_be_bytes());
    large.extend_from_slice(&end[find(&end, "moov").body..]);
    add(
        "moov-claims-4gib-64-bit-size.mp4",
        large,
        "claims 4294967296 bytes",
    );
    // A top-level box of size 3 right after ftyp.
    let ftyp = find(&faststart, "ftyp");
    let mut size3 = faststart[..ftyp.whole.end].to_vec();
    size3.extend_from_slice(&[0, 0, 0, 3, b'f', b'r', b'e', b'e']);
    size3.extend_from_slice(&faststart[ftyp.whole.end..]);
    add("box-of-size-3.mp4", size3, "has size 3");
    // And one inside moov: mvhd's size field says 3.
    let mut inner3 = faststart.clone();
    let mvhd = find(&faststart, "moov/mvhd").whole.start;
    inner3[mvhd..mvhd + 4].copy_from_slice(&3u32.to_be_bytes());
    add("box-of-size-3-in-moov.mp4", inner3, "has size 3");
    add(
        "zero-timescale.mp4",
        set_u32(&faststart, "moov/trak:0/mdia/mdhd", 12, 0),
        "timescale is 0",
    );
    add(
        "zero-movie-timescale.mp4",
        set_u32(&faststart, "moov/mvhd", 12, 0),
        "timescale is 0",
    );
    // stsz replaced by "4,000,000,000 samples of 1,000 bytes" (20 bytes of table).
    let absurd = full_box(
        b"stsz",
        &[1000u32.to_be_bytes(), 4_000_000_000u32.to_be_bytes()].concat(),
    );
    add(
        "absurd-sample-count.mp4",
        replace_box(&end, &format!("{VIDEO_STBL}/stsz"), &absurd),
        "max_samples_per_track",
    );
    // 100,000 samples of 1,000 bytes: under the limit, but 100 MB in a 95 kB file.
    let liar = full_box(
        b"stsz",
        &[1000u32.to_be_bytes(), 100_000u32.to_be_bytes()].concat(),
    );
    add(
        "sample-count-past-the-file.mp4",
        replace_box(&end, &format!("{VIDEO_STBL}/stsz"), &liar),
        "more than the",
    );
    // stts entry_count of 4 billion in a 24-byte box.
    add(
        "absurd-stts-entry-count.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/stts"), 4, u32::MAX),
        "stts",
    );
    // stts's one entry says 4 billion samples (stsz has 90).
    add(
        "absurd-stts-sample-count.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/stts"), 8, u32::MAX),
        "invalid stts",
    );
    add(
        "ctts-offset-out-of-range.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/ctts"), 12, u32::MAX),
        "composition offset out of range",
    );
    // stsc's first entry puts 4 billion samples in each chunk.
    add(
        "stsc-huge-samples-per-chunk.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/stsc"), 12, u32::MAX),
        "invalid stsc",
    );
    add(
        "chunk-offset-past-the-end.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/stco"), 8, 0xffff_ff00),
        "runs past the end of the file",
    );
    // stco replaced by co64 whose chunks sit at u64::MAX - 10: offset + size overflows u64.
    let stco = find(&end, &format!("{VIDEO_STBL}/stco"));
    let chunks = u32::from_be_bytes(end[stco.body + 4..stco.body + 8].try_into().unwrap());
    let mut co64 = chunks.to_be_bytes().to_vec();
    for _ in 0..chunks {
        co64.extend_from_slice(&(u64::MAX - 10).to_be_bytes());
    }
    add(
        "co64-offset-overflows.mp4",
        replace_box(
            &end,
            &format!("{VIDEO_STBL}/stco"),
            &full_box(b"co64", &co64),
        ),
        "runs past the end of the file",
    );
    add(
        "huge-sample-size.mp4",
        set_u32(&faststart, &format!("{VIDEO_STBL}/stsz"), 12, 0x7fff_ffff),
        "max_sample_bytes",
    );
    // 2,000 nested sample entries in the video stsd (16,000 bytes of box headers).
    let mut nested = Vec::new();
    for _ in 0..2000 {
        nested = boxed(b"avc1", &nested);
    }
    let stsd = full_box(b"stsd", &[&1u32.to_be_bytes()[..], &nested].concat());
    add(
        "nested-2000-boxes.mp4",
        replace_box(&end, &format!("{VIDEO_STBL}/stsd"), &stsd),
        "max_box_depth",
    );
    // The audio track starts 2^64 - 1 movie ticks late (elst v1, one empty edit).
    let mut elst = vec![1, 0, 0, 0, 0, 0, 0, 1];
    elst.extend_from_slice(&u64::MAX.to_be_bytes());
    elst.extend_from_slice(&u64::MAX.to_be_bytes()); // media_time -1: empty
    elst.extend_from_slice(&[0, 1, 0, 0]);
    add(
        "edit-list-to-the-end-of-time.mp4",
        replace_box(&end, "moov/trak:1/edts/elst", &boxed(b"elst", &elst)),
        "invalid elst",
    );
    // The video track's tables describe no sample at all, as in a fragmented MP4 whose
    // fragments are missing: an empty presentation must be a 422, never an empty 200.
    let mut empty_track = end.clone();
    for (table, body) in [
        ("stts", vec![0u8; 4]),
        ("ctts", vec![0u8; 4]),
        ("stss", vec![0u8; 4]),
        ("stsc", vec![0u8; 4]),
        ("stsz", vec![0u8; 8]),
        ("stco", vec![0u8; 4]),
    ] {
        let kind: [u8; 4] = table.as_bytes().try_into().unwrap();
        empty_track = replace_box(
            &empty_track,
            &format!("{VIDEO_STBL}/{table}"),
            &full_box(&kind, &body),
        );
    }
    empty_track = replace_box(
        &empty_track,
        "moov/trak:0/edts/elst",
        &full_box(b"elst", &[0u8; 4]),
    );
    add(
        "track-with-no-samples.mp4",
        empty_track,
        "track 1 has no samples",
    );
    // 65 copies of the video trak.
    let trak = end[find(&end, "moov/trak:0").whole].to_vec();
    let mut many = end.clone();
    for _ in 0..65 {
        many = append_child(&many, "moov", &trak);
    }
    add("65-tracks.mp4", many, "max_tracks");

    // Fragmented files, from the fragmented fixtures. Edits that change
    // a box's size are made in the walk fixture, which has no index to go stale.
    let frag = fixture("h264-aac-3s-frag-mfra.mp4");
    let walk = fixture("h264-aac-3s-frag-walk.mp4");
    let sidx = fixture("h264-aac-3s-frag-sidx.mp4");
    // The last video run's data_offset points 2 GiB past its moof.
    add(
        "frag-trun-data-past-the-file.mp4",
        set_u32(&frag, "moof:2/traf:0/trun", 8, 0x7fff_0000),
        "runs past the end of the file",
    );
    // An audio run of 2^32 - 1 samples with no per-sample field: the claim costs 4 bytes,
    // so only the sample limit stands between it and a huge table.
    let mut absurd = vec![0, 0, 0, 1];
    absurd.extend_from_slice(&u32::MAX.to_be_bytes());
    absurd.extend_from_slice(&0u32.to_be_bytes());
    add(
        "frag-trun-4-billion-samples.mp4",
        replace_box(&walk, "moof:0/traf:1/trun", &boxed(b"trun", &absurd)),
        "max_samples_per_track",
    );
    // A video run that claims 2^32 - 1 samples with sizes, in a box holding 30.
    add(
        "frag-trun-count-past-its-box.mp4",
        set_u32(&frag, "moof:0/traf:0/trun", 4, u32::MAX),
        "invalid trun",
    );
    // The second fragment's video tfdt (version 1) says 0, after a first one of 15360.
    let backwards = set_u32(&frag, "moof:1/traf:0/tfdt", 4, 0);
    add(
        "frag-tfdt-backwards.mp4",
        set_u32(&backwards, "moof:1/traf:0/tfdt", 8, 0),
        "goes backwards",
    );
    // sidx (version 1): first reference of size 0, a reference to itself.
    add(
        "frag-sidx-reference-to-itself.mp4",
        set_u32(&sidx, "sidx", 32, 0),
        "points at itself",
    );
    // sidx first_offset 2^64 - 256: the sum wraps around to before the sidx.
    let back = set_u32(&sidx, "sidx", 20, u32::MAX);
    add(
        "frag-sidx-reference-points-back.mp4",
        set_u32(&back, "sidx", 24, 0xffff_ff00),
        "points outside",
    );
    // sidx first_offset 8: the first reference points inside the first moof.
    add(
        "frag-sidx-reference-into-a-box.mp4",
        set_u32(&sidx, "sidx", 24, 8),
        "not the start of a box",
    );
    // tfra (version 1): the first entry's moof_offset is 0, the ftyp. The last mdat grows
    // by 300 kB first, so the fragments end past the probe and the walk consults the mfra.
    let last = find(&frag, "mdat:2");
    let mut grown = frag[..last.whole.end].to_vec();
    grown.extend_from_slice(&vec![0; 300_000]);
    let size = (last.whole.len() + 300_000) as u32;
    grown[last.whole.start..last.whole.start + 4].copy_from_slice(&size.to_be_bytes());
    grown.extend_from_slice(&frag[last.whole.end..]);
    let tfra = set_u32(&grown, "mfra/tfra:0", 24, 0);
    add(
        "frag-tfra-points-back.mp4",
        set_u32(&tfra, "mfra/tfra:0", 28, 0),
        "outside the fragments",
    );
    // moov with mvex and nothing after it.
    add(
        "frag-no-fragments.mp4",
        frag[..find(&frag, "moov").whole.end].to_vec(),
        "without samples",
    );
    files
}

/// The file the corpus also holds that is odd but fine: 2,000 nested boxes in `udta`,
/// which the parser drops unread. It must be served like the fixture it came from.
pub fn harmless_deep_udta() -> Vec<u8> {
    let end = fixture("h264-aac-3s-moov-end.mp4");
    let mut nested = Vec::new();
    for _ in 0..2000 {
        nested = boxed(b"udta", &nested);
    }
    replace_box(&end, "moov/udta", &nested)
}

/// Write the corpus into `dir` when `HOSTILE_CORPUS_DIR` names one (for looking at it).
pub fn write_if_asked() {
    if let Some(dir) = std::env::var_os("HOSTILE_CORPUS_DIR") {
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir).expect("corpus folder");
        for file in corpus() {
            std::fs::write(dir.join(file.name), &file.bytes).expect("write corpus file");
        }
        std::fs::write(
            dir.join("nested-2000-boxes-in-udta.mp4"),
            harmless_deep_udta(),
        )
        .expect("write corpus file");
    }
}
