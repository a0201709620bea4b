//! Ad breaks in the web players: hls.js plays the break's interstitial (HLS Interstitials)
//! and resumes the title; dash.js and Shaka play the title through the break.

use crate::common;
use crate::jobs::{json_string, Job, Run, Step};
use crate::known_failures::hlsjs_title_shift;
use crate::media::{copy_ad, folder_with_title};
use crate::web_runner::WebPlayers;

/// The film of the ad-break story: 12 s, 640x360 at 25 fps, a key frame each second,
/// stereo AAC at 48 kHz.
const FILM: &str = "-f lavfi -i testsrc2=size=640x360:rate=25:duration=12 \
     -f lavfi -i sine=frequency=440:sample_rate=48000:duration=12 \
     -c:v libx264 -g 25 -pix_fmt yuv420p -c:a aac -ac 2 -shortest";

/// Given a 12 s title made here (640x360 at 25 fps, a key frame each second, AAC) with a
/// break at 7.5 s (cut at the key frame at 7 s) whose asset is another vodpack title
/// (`ad.mp4`, the 3 s H.264 fixture), when the web players play it, then hls.js plays the
/// interstitial at the break (the `EXT-X-DATERANGE` started, the asset played, ended) and
/// resumes the title where it left off, to its end, over CMAF and over MPEG-TS; dash.js
/// and Shaka (DASH with the SCTE-35 EventStream) play the title through the break strictly
/// with a seek past it, and Shaka on the HLS plays from the start through the break to the
/// end (a seek past the break on its HLS landed elsewhere: Shaka reads the interstitial).
/// (On the 4 s ladder fixture hls.js 1.7.4 does not resume: after a 3 s asset it takes the
/// asset's buffered end, 3.07 s, for the title's, past the 2 s left, and loads nothing
/// more.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_play_a_title_with_ad_breaks_strictly() {
    let Some(players) = WebPlayers::ready(&["ffmpeg"]).await else {
        return;
    };
    let dir = folder_with_title("breaks-players", "film.mp4", FILM).await;
    copy_ad(dir.path());
    let server = common::start_server(dir.path()).await;
    // X-ASSET-URI is absolute (RFC 8216bis D.2): this server's own URL of the ad.
    let ad = server.url("/vod/ad.mp4/master.m3u8");
    std::fs::write(
        dir.path().join("breaks.json"),
        format!(
            r#"{{"video": [{{"file": "film.mp4"}}],
                "breaks": [{{"id": "mid-1", "at": 7500, "duration": 3000, "asset_uri": {}}}]}}"#,
            json_string(&ad)
        ),
    )
    .expect("document");
    let mut jobs = Vec::new();
    for run in Run::ALL.into_iter().chain([Run::HlsJsTs]) {
        let steps = match run {
            Run::HlsJs | Run::HlsJsTs => vec![
                Step::Interstitial {
                    id: "mid-1",
                    asset: "/vod/ad.mp4/",
                    resume_at_s: 7.0,
                },
                Step::PlayToEnd,
            ],
            // Shaka reads HLS Interstitials (a seek past the break landed elsewhere), so on
            // the HLS it plays through the break; the DASH has only the events.
            Run::ShakaHls => vec![Step::Play(1.0), Step::PlayToEnd],
            Run::DashJs | Run::ShakaDash => vec![Step::Play(1.0), Step::Seek(8.5), Step::PlayToEnd],
        };
        // The hole hls.js sometimes finds at the start of the MPEG-TS of a title with
        // B-frames (the title shift S).
        let known = match run {
            Run::HlsJsTs => hlsjs_title_shift(),
            _ => Vec::new(),
        };
        let url = server.url(&format!("/vod/breaks.json/{}", run.manifest()));
        jobs.push(Job::of_run(run, "breaks.json", url, steps).known_failures(known));
    }
    players.play(&jobs, "players-breaks-jobs.json").await;
    server.shutdown().await;
}
