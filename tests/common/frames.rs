//! Pictures as ffmpeg sees them, for the tests that compare our images (thumbnails,
//! storyboard tiles) with ffmpeg's own decode of the source: raw RGB through a filter,
//! an image's size, PSNR, and where a file's first key frame lies (to break it).

use std::path::Path;
use std::process::{Command, Output};

/// What `command` (an ffmpeg run, say) wrote, failing the test with its stderr when it
/// does not succeed.
pub fn output_of(command: &mut Command) -> Output {
    let program = command.get_program().to_string_lossy().into_owned();
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Raw RGB of an image or of frame `n` (presentation order) of a video, through ffmpeg,
/// with `filter` applied.
pub fn ffmpeg_rgb(input: &Path, filter: &str) -> Vec<u8> {
    let out = output_of(
        Command::new("ffmpeg")
            .args(["-v", "error", "-i"])
            .arg(input)
            .args(["-vf", filter, "-frames:v", "1", "-f", "rawvideo"])
            .args(["-pix_fmt", "rgb24", "-"]),
    );
    out.stdout
}

/// What ffprobe shows of the first video stream of `file` (or of an image): `entries` (its
/// `-show_entries`), as CSV lines without their section names.
pub fn probe_video(file: &Path, entries: &str) -> String {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args([entries, "-of", "csv=p=0"])
        .arg(file)
        .output()
        .expect("ffprobe");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Width and height of an image, or of the first video stream of a video file, as ffprobe
/// reads them.
pub fn image_size(image: &Path) -> (u32, u32) {
    let text = probe_video(image, "stream=width,height");
    let mut sides = text.trim().split(',').map(|s| s.parse().unwrap_or(0));
    (sides.next().unwrap_or(0), sides.next().unwrap_or(0))
}

/// Peak signal-to-noise ratio (dB) of two RGB pictures of the same size; 99 when equal.
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len(), "same size");
    let mse = (a.iter().zip(b))
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    if mse == 0.0 {
        return 99.0;
    }
    10.0 * (255.0f64 * 255.0 / mse).log10()
}

/// The first key frame's place and size in `file` (ffprobe's first video packet).
pub fn first_key_frame(file: &Path) -> (usize, usize) {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["packet=pos,size", "-read_intervals", "%+#1"])
        .args(["-of", "csv=p=0"])
        .arg(file)
        .output()
        .expect("ffprobe");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.trim().split(',');
    let size = fields.next().and_then(|s| s.parse().ok()).expect("size");
    let pos = fields.next().and_then(|s| s.parse().ok()).expect("pos");
    (pos, size)
}
