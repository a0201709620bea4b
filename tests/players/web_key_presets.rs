//! Keys by usage in the browser: a ladder whose SD and HD rungs and audio are each under
//! their own key (SPEKE v2's PRESET-VIDEO-3 and PRESET-AUDIO-1), played through W3C
//! ClearKey EME with several keys, across forced rung switches.

use std::path::Path;

use crate::common;
use crate::jobs::{Job, Run, Step};
use crate::media::encrypting;
use crate::web_runner::WebPlayers;

/// The ladder's rungs: 8 s at 25 fps, a key frame every second, H.264 High; the SD one
/// carries the English audio.
const RUNGS: [(&str, &str); 2] = [("sd.mp4", "640x360"), ("hd.mp4", "1280x720")];

async fn make(dir: &Path, args: String) {
    let mut command = std::process::Command::new("ffmpeg");
    command.current_dir(dir);
    command.args(["-v", "error", "-nostdin", "-y"]);
    command.args(args.split_whitespace());
    let made = common::bounded::run_with_limit(command, std::time::Duration::from_secs(120)).await;
    assert!(
        made.status.is_some_and(|s| s.success()),
        "ffmpeg: {}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// A folder with the ladder (SD and HD rungs, English and French audio) and its title
/// document, `ladder.json`.
async fn ladder_folder() -> common::TempDir {
    let dir = common::TempDir::new("players-key-presets");
    for (file, size) in RUNGS {
        let audio = match file {
            "sd.mp4" => {
                "-f lavfi -i sine=frequency=440:sample_rate=48000:duration=8 -c:a aac -ac 2 \
                 -metadata:s:a:0 language=eng"
            }
            _ => "",
        };
        make(
            dir.path(),
            format!(
                "-f lavfi -i testsrc2=size={size}:rate=25:duration=8 {audio} -c:v libx264 \
                 -preset veryfast -g 25 -keyint_min 25 -sc_threshold 0 -pix_fmt yuv420p {file}"
            ),
        )
        .await;
    }
    make(
        dir.path(),
        "-f lavfi -i sine=frequency=660:sample_rate=48000:duration=8 -c:a aac -ac 2 \
         -metadata:s:a:0 language=fra fr.m4a"
            .into(),
    )
    .await;
    std::fs::write(
        dir.path().join("ladder.json"),
        r#"{"video": [{"file": "sd.mp4"}, {"file": "hd.mp4"}],
            "audio": [{"file": "fr.m4a", "language": "fr"}]}"#,
    )
    .expect("document");
    dir
}

/// The jobs of `runs` on the ladder at `server`: forced from the SD rung to the HD one and
/// back, to the French audio (DASH players), a seek, then to the end.
fn jobs(server: &common::TestServer, runs: &[Run], what: &str) -> Vec<Job> {
    let key = "ladder.json";
    (runs.iter().copied())
        .map(|run| {
            let mut steps = vec![
                Step::Play(0.5),
                Step::Variant(0),
                Step::Play(1.0),
                Step::Variant(1),
                Step::Play(1.0),
                Step::Variant(0),
                Step::Play(1.0),
            ];
            if run != Run::HlsJs {
                steps.extend([Step::Audio("fr"), Step::Play(0.5)]);
            }
            steps.extend([Step::Seek(5.0), Step::PlayToEnd]);
            let url = server.url(&format!("/vod/{key}/{}", run.manifest()));
            let job = Job::of_run(run, what, url, steps);
            match run {
                Run::HlsJs => {
                    job.clearkey_licence(server.url(&format!("/vod/{key}/clearkey.json")))
                }
                _ => job,
            }
        })
        .collect()
}

/// A server over `dir` encrypting `cenc` DASH and SAMPLE-AES CMAF HLS under `presets`.
async fn serve(dir: &Path, presets: &str) -> common::TestServer {
    let mut settings = encrypting(1000, "hls=sample-aes,dash=cenc");
    settings.protect.key_presets = vodpack::crypto::KeyPresets::parse(presets).unwrap();
    common::start_server_with(dir, settings).await
}

/// Given the ladder encrypted with an SD, an HD and an audio key (SAMPLE-AES CMAF HLS and
/// `cenc` DASH), when hls.js, dash.js and Shaka play it, forced from the SD rung to the HD
/// one and back, with a seek (and in DASH a switch to the French audio), then they play to
/// the end strictly, their keys from vodpack's ClearKey licence route (in HLS each
/// `EXT-X-KEY` names its own key's licence URI; in DASH each tier is a set of its own
/// key, the sets linked for switching). And the same under one video key and an audio
/// key (PRESET-VIDEO-1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_play_a_ladder_under_a_key_per_tier_strictly() {
    let Some(players) = WebPlayers::ready(&["ffmpeg"]).await else {
        return;
    };
    let dir = ladder_folder().await;
    let tiers = serve(dir.path(), "video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1").await;
    let video_and_audio = serve(dir.path(), "video=PRESET-VIDEO-1,audio=PRESET-AUDIO-1").await;
    let mut all = jobs(
        &tiers,
        &[Run::DashJs, Run::ShakaDash, Run::HlsJs],
        "key per tier",
    );
    all.extend(jobs(
        &video_and_audio,
        &[Run::DashJs, Run::ShakaDash, Run::HlsJs],
        "video and audio keys",
    ));
    players.play(&all, "players-key-presets-jobs.json").await;
    tiers.shutdown().await;
    video_and_audio.shutdown().await;
}
