//! The recipes of `recipes.rs`: how ffmpeg makes each file, the way encoders
//! and editors make them, at test time. 20-30 s of `testsrc2` pictures at 25 fps and a
//! beeping tone, small pictures so that decoding stays quick.

use std::path::Path;

use super::tools::{args, run_tool};

/// Make `recipe` in `dir`; returns the name of the file to serve. The SAMPLE-AES check
/// makes recipe 1 (`Recipe::aac_48k`) this way too.
pub(crate) async fn make(dir: &Path, recipe: fn(&Path) -> Recipe) -> &'static str {
    let recipe = recipe(dir);
    for run in recipe.runs {
        run_tool("ffmpeg", run).await;
    }
    recipe.name
}

/// A title ffmpeg makes: the file served and the ffmpeg runs that make it, in order.
pub(crate) struct Recipe {
    /// The file served, in the folder it is made in.
    pub(crate) name: &'static str,
    /// The arguments of each ffmpeg run.
    pub(crate) runs: Vec<Vec<String>>,
}

/// `testsrc2` pictures at 25 fps, a picture size small enough to decode quickly.
fn pictures(size: &str) -> Vec<String> {
    let source = format!("testsrc2=size={size}:rate=25");
    args(&["-f", "lavfi", "-i", &source])
}

/// A 440 Hz tone with a beep each second, at `rate` Hz, optionally starting `offset`
/// seconds late (`-itsoffset`, which the MP4 muxer writes as an empty edit).
fn tone(rate: u32, offset: Option<&str>) -> Vec<String> {
    let source = format!("sine=frequency=440:beep_factor=4:sample_rate={rate}");
    let mut input = offset.map_or_else(Vec::new, |o| args(&["-itsoffset", o]));
    input.extend(args(&["-f", "lavfi", "-i", &source]));
    input
}

/// H.264 with B-frames and 2 s GOPs.
const H264: &[&str] = &[
    "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-bf", "2", "-r", "25", "-pix_fmt",
    "yuv420p",
];

/// ffmpeg's AAC encoder at `rate`, as the issue made its files: with its default perceptual
/// noise substitution, whose bands decode to noise from the decoder's random state, which
/// depends on every packet decoded before. So the output's audio decodes to the source's
/// frames only if it starts where ffmpeg's reader starts the source's decoder (up to 1 s
/// before the first edit, `package::edit`), which these recipes hold it to.
fn aac(rate: &str) -> Vec<String> {
    args(&["-c:a", "aac", "-ar", rate])
}

/// A `seconds`-long title of `pictures` and `tone` in `dir`, encoded with H.264 and `audio`,
/// with `extra` output options.
fn av_run(
    dir: &Path,
    name: &str,
    seconds: &str,
    inputs: [Vec<String>; 2],
    audio: Vec<String>,
    extra: &[&str],
) -> Vec<String> {
    let [pictures, tone] = inputs;
    let out = dir.join(name).to_string_lossy().into_owned();
    [
        args(&["-v", "error", "-nostdin", "-y"]),
        pictures,
        tone,
        args(&["-t", seconds, "-map", "0:v", "-map", "1:a"]),
        args(H264),
        audio,
        args(extra),
        vec![out],
    ]
    .concat()
}

/// Recipe 1 and 2: H.264 and `audio` from a tone at `rate` Hz, 30 s.
fn h264_with(dir: &Path, name: &'static str, size: &str, rate: u32, audio: Vec<String>) -> Recipe {
    let inputs = [pictures(size), tone(rate, None)];
    Recipe {
        name,
        runs: vec![av_run(dir, name, "30", inputs, audio, &[])],
    }
}

impl Recipe {
    /// 1: H.264 and AAC at 48 kHz, 640x360 (also the file of the SAMPLE-AES check).
    pub(crate) fn aac_48k(dir: &Path) -> Self {
        h264_with(dir, "h264-aac-48k.mp4", "640x360", 48_000, aac("48000"))
    }

    /// 2: AAC at 22.05 kHz.
    pub(crate) fn aac_22k(dir: &Path) -> Self {
        h264_with(dir, "h264-aac-22k.mp4", "320x180", 22_050, aac("22050"))
    }

    /// 2: AC-3 (encoder delay 256 samples).
    pub(crate) fn ac3(dir: &Path) -> Self {
        h264_with(
            dir,
            "h264-ac3.mp4",
            "320x180",
            48_000,
            args(&["-c:a", "ac3"]),
        )
    }

    /// 2: E-AC-3 (encoder delay 256 samples).
    pub(crate) fn eac3(dir: &Path) -> Self {
        h264_with(
            dir,
            "h264-eac3.mp4",
            "320x180",
            48_000,
            args(&["-c:a", "eac3"]),
        )
    }

    /// 3: audio starting 0.5 s after the video, on an empty edit.
    pub(crate) fn late_audio(dir: &Path) -> Self {
        let name = "h264-aac-audio-late.mp4";
        let inputs = [pictures("320x180"), tone(48_000, Some("0.5"))];
        Recipe {
            name,
            runs: vec![av_run(dir, name, "30", inputs, aac("48000"), &[])],
        }
    }

    /// 4: fragmented input (no edit lists), H.264 with B-frames and AAC.
    pub(crate) fn fragmented(dir: &Path) -> Self {
        let name = "h264-aac-fragmented.mp4";
        let inputs = [pictures("320x180"), tone(48_000, None)];
        let flags = ["-movflags", "frag_keyframe+empty_moov+default_base_moof"];
        Recipe {
            name,
            runs: vec![av_run(dir, name, "30", inputs, aac("48000"), &flags)],
        }
    }

    /// 5: audio only, AAC at 48 kHz, 20 s.
    pub(crate) fn audio_only(dir: &Path) -> Self {
        let name = "aac-48k-audio-only.m4a";
        let out = dir.join(name).to_string_lossy().into_owned();
        let run = [
            args(&["-v", "error", "-nostdin", "-y"]),
            tone(48_000, None),
            args(&["-t", "20"]),
            aac("48000"),
            vec![out],
        ]
        .concat();
        Recipe {
            name,
            runs: vec![run],
        }
    }

    /// 6: a 20 s file with 2 s GOPs, B-frames and AAC, trimmed by stream copy from 2.5 s
    /// for 12 s: its video edit starts inside a GOP, its audio edit inside an AAC frame.
    pub(crate) fn trim(dir: &Path) -> Self {
        let name = "h264-aac-copy-trim.mp4";
        let whole = "h264-aac-20s-untrimmed.mp4";
        let inputs = [pictures("320x180"), tone(48_000, None)];
        let make = av_run(dir, whole, "20", inputs, aac("48000"), &[]);
        let whole = dir.join(whole).to_string_lossy().into_owned();
        let out = dir.join(name).to_string_lossy().into_owned();
        let cut = args(&[
            "-v", "error", "-nostdin", "-y", "-ss", "2.5", "-i", &whole, "-t", "12", "-c", "copy",
            &out,
        ]);
        Recipe {
            name,
            runs: vec![make, cut],
        }
    }
}
