//! The catalogue: a few real MP4 files (the shapes), made once with ffmpeg into
//! target/bench/catalogue/ and reused, and the keys that map thousands of titles onto them
//! (`t00001-a.mp4` is title 1, shape `a`), so no bytes are duplicated on disk.
//!
//! Two encodes of 2 minutes (720p25 H.264 at 2 Mbit/s, `testsrc2` with grain so the bits are
//! spent; AAC-LC stereo 128 kbit/s of pink noise and a tone), one with a key frame every 2 s
//! and one every 8 s, are stream-copied into the shapes: moov first or last, the long title
//! (five copies of the 2 s GOP encode, 10 minutes, as `make bench` makes its 60-minute
//! asset), and one with 1 s chunks (`-chunk_duration`). Every other shape keeps ffmpeg's
//! default interleave, which `layout` measures from the file's own tables.

use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use mp4_atom::{Decode, Moov, StszSamples};

/// Length of the two encodes, in seconds.
const ENCODE_SECONDS: u32 = 120;
/// Copies of the 2 s GOP encode in the long title.
const LONG_COPIES: usize = 5;

/// How a shape's cold load is judged by the object-store bars (`report::print_bars`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    MoovFirst,
    MoovLast,
    Long,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::MoovFirst => "moov first",
            Group::MoovLast => "moov last",
            Group::Long => "long title",
        }
    }
}

/// One file of the catalogue.
pub struct Shape {
    pub letter: char,
    pub file: &'static str,
    pub what: &'static str,
    pub group: Group,
}

pub const SHAPES: [Shape; 7] = [
    Shape {
        letter: 'a',
        file: "a-gop2-moov-first.mp4",
        what: "2 min, GOP 2 s, moov first",
        group: Group::MoovFirst,
    },
    Shape {
        letter: 'b',
        file: "b-gop2-moov-last.mp4",
        what: "2 min, GOP 2 s, moov last",
        group: Group::MoovLast,
    },
    Shape {
        letter: 'c',
        file: "c-gop8-moov-first.mp4",
        what: "2 min, GOP 8 s, moov first",
        group: Group::MoovFirst,
    },
    Shape {
        letter: 'd',
        file: "d-gop8-moov-last.mp4",
        what: "2 min, GOP 8 s, moov last",
        group: Group::MoovLast,
    },
    Shape {
        letter: 'e',
        file: "e-long-moov-first.mp4",
        what: "10 min, GOP 2 s, moov first",
        group: Group::Long,
    },
    Shape {
        letter: 'f',
        file: "f-long-moov-last.mp4",
        what: "10 min, GOP 2 s, moov last",
        group: Group::Long,
    },
    Shape {
        letter: 'g',
        file: "g-gop2-chunks-1s.mp4",
        what: "2 min, GOP 2 s, moov first, 1 s chunks",
        group: Group::MoovFirst,
    },
];

/// What a shape's file looks like inside.
#[derive(Default)]
pub struct Layout {
    pub moov_offset: u64,
    pub moov_bytes: u64,
    pub seconds: f64,
    pub key_frame_seconds: f64,
    pub audio_chunks_per_6s: f64,
    pub audio_bytes_per_chunk: f64,
    pub video_chunks_per_6s: f64,
}

/// A shape in memory, as the store serves it.
pub struct Loaded {
    pub bytes: Bytes,
    /// Size and mtime: with the title's number, each key's strong ETag.
    pub version: String,
    pub last_modified: String,
    pub layout: Layout,
}

/// The shapes in memory and how many titles map onto them.
pub struct Catalogue {
    pub shapes: Vec<Loaded>,
    pub titles: u32,
}

impl Catalogue {
    /// The key of title `n` (1-based): shapes in turn, so every popularity rank has each.
    pub fn key(&self, n: u32) -> String {
        format!("t{n:05}-{}.mp4", SHAPES[self.shape_of(n)].letter)
    }

    pub fn shape_of(&self, n: u32) -> usize {
        (n.saturating_sub(1) as usize) % SHAPES.len()
    }

    /// Title number and shape of `key`, if it is one of ours.
    pub fn parse(&self, key: &str) -> Option<(u32, usize)> {
        let (n, rest) = key.strip_prefix('t')?.split_once('-')?;
        let n: u32 = n.parse().ok()?;
        let shape = self.shape_of(n);
        let expected = format!("{}.mp4", SHAPES[shape].letter);
        (n >= 1 && n <= self.titles && rest == expected).then_some((n, shape))
    }
}

/// The folder of the shapes: target/bench/catalogue/.
pub fn dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench").join("catalogue")
}

/// Make the shapes that are missing, then load them all.
pub fn load(titles: u32) -> Result<Catalogue, String> {
    let dir = dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    make_shapes(&dir)?;
    let mut shapes = Vec::new();
    for shape in &SHAPES {
        let path = dir.join(shape.file);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let modified = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mtime = modified
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let layout = layout(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        shapes.push(Loaded {
            version: format!("{:x}-{mtime:x}", bytes.len()),
            last_modified: httpdate::fmt_http_date(modified),
            bytes: Bytes::from(bytes),
            layout,
        });
    }
    Ok(Catalogue { shapes, titles })
}

/// Run ffmpeg with `args`, writing `out` through a partial file.
fn ffmpeg(out: &Path, args: &[&str]) -> Result<(), String> {
    if out.exists() {
        return Ok(());
    }
    eprintln!("making {} with ffmpeg...", out.display());
    let partial = out.with_extension("partial.mp4");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .arg(&partial)
        .status()
        .map_err(|e| format!("cannot run ffmpeg (apt-get install ffmpeg): {e}"))?;
    if !status.success() {
        return Err(format!("ffmpeg failed making {}", out.display()));
    }
    std::fs::rename(&partial, out).map_err(|e| format!("{}: {e}", out.display()))
}

/// The two encodes, then every shape from them by stream copy.
fn make_shapes(dir: &Path) -> Result<(), String> {
    let duration = ENCODE_SECONDS.to_string();
    for (name, gop) in [("src-gop2.mp4", "50"), ("src-gop8.mp4", "200")] {
        let video =
            format!("testsrc2=size=1280x720:rate=25:duration={duration},noise=alls=12:allf=t");
        let noise =
            format!("anoisesrc=color=pink:amplitude=0.08:sample_rate=48000:duration={duration}");
        let tone = format!("sine=frequency=440:sample_rate=48000:duration={duration}");
        #[rustfmt::skip]
        let args = [
            "-f", "lavfi", "-i", &video, "-f", "lavfi", "-i", &noise, "-f", "lavfi", "-i", &tone,
            "-filter_complex", "[1:a][2:a]amix=inputs=2,aformat=channel_layouts=stereo[a]",
            "-map", "0:v", "-map", "[a]",
            "-c:v", "libx264", "-preset", "veryfast", "-b:v", "2M", "-maxrate", "2500k",
            "-bufsize", "4M", "-pix_fmt", "yuv420p", "-g", gop, "-keyint_min", gop,
            "-sc_threshold", "0",
            "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2",
        ];
        ffmpeg(&dir.join(name), &args)?;
    }
    let src = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let copy = |from: &str, to: &str, extra: &[&str]| {
        let input = src(from);
        let mut args = vec!["-i", &input, "-map", "0", "-c", "copy"];
        args.extend_from_slice(extra);
        ffmpeg(&dir.join(to), &args)
    };
    let faststart: &[&str] = &["-movflags", "+faststart"];
    copy("src-gop2.mp4", SHAPES[0].file, faststart)?;
    copy("src-gop2.mp4", SHAPES[1].file, &[])?;
    copy("src-gop8.mp4", SHAPES[2].file, faststart)?;
    copy("src-gop8.mp4", SHAPES[3].file, &[])?;
    let list = dir.join("long-list.txt");
    let line = format!("file '{}'\n", src("src-gop2.mp4"));
    std::fs::write(&list, line.repeat(LONG_COPIES)).map_err(|e| format!("{e}"))?;
    let list = list.to_string_lossy().into_owned();
    for (shape, extra) in [(&SHAPES[4], faststart), (&SHAPES[5], &[][..])] {
        let mut args = vec!["-f", "concat", "-safe", "0", "-i", &list];
        args.extend_from_slice(&["-c", "copy", "-use_editlist", "0"]);
        args.extend_from_slice(extra);
        ffmpeg(&dir.join(shape.file), &args)?;
    }
    copy(
        "src-gop2.mp4",
        SHAPES[6].file,
        &["-chunk_duration", "1000000", "-movflags", "+faststart"],
    )
}

/// Where the moov is, and how the tracks are chunked, from the file's own tables.
fn layout(file: &[u8]) -> Result<Layout, String> {
    let mut layout = Layout::default();
    let mut at = 0usize;
    let mut moov = None;
    while at + 8 <= file.len() {
        let word = |i: usize| u32::from_be_bytes([file[i], file[i + 1], file[i + 2], file[i + 3]]);
        let mut size = u64::from(word(at));
        if size == 1 && at + 16 <= file.len() {
            size = (u64::from(word(at + 8)) << 32) | u64::from(word(at + 12));
        } else if size == 0 {
            size = (file.len() - at) as u64;
        }
        let end = at.saturating_add(size as usize).min(file.len());
        if &file[at + 4..at + 8] == b"moov" {
            (layout.moov_offset, layout.moov_bytes) = (at as u64, size);
            moov = Some(&file[at..end]);
        }
        if size < 8 {
            break;
        }
        at = end;
    }
    let mut moov = moov.ok_or("no moov")?;
    let moov = Moov::decode(&mut moov).map_err(|e| e.to_string())?;
    for trak in &moov.trak {
        let (mdhd, stbl) = (&trak.mdia.mdhd, &trak.mdia.minf.stbl);
        let seconds = mdhd.duration as f64 / f64::from(mdhd.timescale.max(1));
        let chunks = (stbl.stco.as_ref().map(|s| s.entries.len()))
            .or(stbl.co64.as_ref().map(|s| s.entries.len()))
            .unwrap_or(0) as f64;
        let bytes: u64 = match &stbl.stsz.samples {
            StszSamples::Identical { count, size } => u64::from(*count) * u64::from(*size),
            StszSamples::Different { sizes } => sizes.iter().map(|&s| u64::from(s)).sum(),
        };
        let per_6s = chunks / seconds.max(0.001) * 6.0;
        match &trak.mdia.hdlr.handler.to_string()[..] {
            "vide" => {
                layout.seconds = seconds;
                layout.video_chunks_per_6s = per_6s;
                let keys = stbl.stss.as_ref().map_or(0, |s| s.entries.len());
                layout.key_frame_seconds = seconds / keys.max(1) as f64;
            }
            "soun" => {
                layout.audio_chunks_per_6s = per_6s;
                layout.audio_bytes_per_chunk = bytes as f64 / chunks.max(1.0);
            }
            _ => {}
        }
    }
    Ok(layout)
}
