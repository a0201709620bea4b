//! What the players play: vodpack over the fixtures, titles made here with ffmpeg (for
//! stories the 3-4 s fixtures are too short for), the sequence and ad-break folders, and
//! servers that encrypt.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use vodpack::config::Settings;

use crate::common::bounded::run_with_limit;
use crate::common::{self, TestServer};

/// vodpack over the fixtures with 1 s target segments, so the 3-4 s titles have several
/// segments and a seek fetches one the player has not buffered.
pub async fn start() -> TestServer {
    common::start_server_with(
        &common::fixtures(),
        common::nginx_vod_settings(1000, "hls=/hls/,dash=/dash/"),
    )
    .await
}

/// A folder with the sequence of the players' tests: `sequence.json`, an ident made here (5
/// s, 352x288 at 25 fps, H.264 Constrained Baseline, one audio language) before the ladder
/// title (three High-profile rungs at 30 fps, two audio languages).
pub async fn sequence_folder(name: &str) -> common::TempDir {
    let dir = common::ladder_copy(name);
    make_title(
        &dir.path().join("ident.mp4"),
        "-f lavfi -i testsrc2=size=352x288:rate=25:duration=5 \
         -f lavfi -i sine=frequency=880:sample_rate=48000:duration=5 \
         -c:v libx264 -profile:v baseline -g 25 -pix_fmt yuv420p -c:a aac -ac 2 \
         -metadata:s:a:0 language=eng -shortest",
    )
    .await;
    std::fs::write(
        dir.path().join("sequence.json"),
        r#"{"parts": [{"file": "ident.mp4"}, {"title": "ladder.json"}]}"#,
    )
    .expect("document");
    dir
}

/// A temporary folder named for `name` holding the title `file`, made with ffmpeg from
/// `recipe` (see [`make_title`]).
pub async fn folder_with_title(name: &str, file: &str, recipe: &str) -> common::TempDir {
    let dir = common::TempDir::new(name);
    make_title(&dir.path().join(file), recipe).await;
    dir
}

/// Make the title `file` with ffmpeg from `recipe` (its inputs and codec options), or
/// fail the test with ffmpeg's complaint.
async fn make_title(file: &Path, recipe: &str) {
    let mut command = Command::new("ffmpeg");
    command.args(["-v", "error", "-nostdin", "-y"]);
    command.args(recipe.split_whitespace());
    command.arg(file);
    let made = run_with_limit(command, Duration::from_secs(120)).await;
    assert!(
        made.status.is_some_and(|s| s.success()),
        "ffmpeg could not make the title: {}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// Copy the 3 s H.264 fixture into `folder` as `ad.mp4`, the asset of the ad breaks.
pub fn copy_ad(folder: &Path) {
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        folder.join("ad.mp4"),
    )
    .expect("copy");
}

/// The secret the encrypting servers derive their keys from.
const KEY_SECRET: &str = "players test key secret!";

/// Settings with `ms` target segments that encrypt as `policy` says (`hls=aes-128`, say),
/// with keys derived from this binary's key secret.
pub fn encrypting(ms: u32, policy: &str) -> Settings {
    let mut settings = common::segments_of(ms);
    settings.protect.encryption = vodpack::crypto::EncryptionPolicy::parse(policy).unwrap();
    settings.protect.key_secret =
        Some(vodpack::crypto::Secret::from_text(KEY_SECRET, "k").unwrap());
    settings
}

/// Settings with 1 s target segments whose `cbcs` output (SAMPLE-AES HLS, `cbcs` DASH) is
/// signalled for FairPlay, Widevine and PlayReady (raw keys) beside ClearKey.
pub fn encrypting_for_every_drm() -> Settings {
    let args = vodpack::crypto::settings::ProtectArgs {
        encryption: Some("hls=sample-aes,dash=cbcs".into()),
        key_secret: Some(KEY_SECRET.into()),
        drm_systems: Some("fairplay,widevine,playready,clearkey".into()),
        playready_la_url: Some("https://pr.example/rightsmanager.asmx".into()),
        fairplay_key_uri: Some("skd://fps.example/{kid}".into()),
        ..Default::default()
    };
    Settings {
        protect: args.resolve().unwrap(),
        ..common::segments_of(1000)
    }
}
