//! Storyboards in the web players: the DASH image set and the HLS image stream, listed by
//! the players that read them, passed over by hls.js.

use crate::common;
use crate::jobs::{Job, Run, Step};
use crate::web_runner::WebPlayers;

/// Given `--storyboards on` (a tile a second, 160 px tiles on 10x10 sheets) and the 3 s
/// fixture, when dash.js and Shaka (DASH and HLS) play the manifests with the image set or
/// image stream in them, then they list the storyboard (their thumbnail for 2.5 s is the
/// third tile of sheet 1: x 320, y 0) and play to the end, strictly; hls.js, which has no
/// image streams, plays the HLS with `EXT-X-IMAGE-STREAM-INF` present, strictly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_list_storyboard_thumbnails_and_play_strictly() {
    let Some(players) = WebPlayers::ready(&[]).await else {
        return;
    };
    let mut settings = common::segments_of(1000);
    settings.storyboards.interval_ms = 1000;
    settings.storyboards.tile_width = 160;
    settings.storyboards.signalled = true;
    let server = common::start_server_with(&common::fixtures(), settings).await;
    let key = "h264-aac-3s.mp4";
    let jobs: Vec<Job> = Run::ALL
        .into_iter()
        .map(|run| {
            let steps = match run {
                Run::HlsJs => vec![Step::Play(0.5), Step::PlayToEnd],
                _ => vec![
                    Step::Play(0.5),
                    Step::Thumbnail {
                        at_s: 2.5,
                        sheet: "storyboard-1.jpg",
                        x: 320,
                        y: 0,
                    },
                    Step::PlayToEnd,
                ],
            };
            let url = server.url(&format!("/vod/{key}/{}", run.manifest()));
            Job::of_run(run, &format!("storyboards {key}"), url, steps)
        })
        .collect();
    players.play(&jobs, "players-storyboard-jobs.json").await;
    server.shutdown().await;
}
