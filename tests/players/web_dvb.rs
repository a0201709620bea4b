//! The DVB-DASH profile in the web players: dash.js and Shaka play a DVB-profile MPD as they
//! play the default one.

use crate::common;
use crate::jobs::{Job, Run, Step};
use crate::web_runner::WebPlayers;

/// Given `--dash-profile dvb` and the ladder title (three rungs, English and French audio,
/// sidecar subtitles as EBU-TT-D segments, whose cues `web_text_segments` checks), when dash.js and Shaka play its MPD, switch
/// to a rung, to the French audio (the `alternate` set beside the `main` one) and seek,
/// then they play to the end, strictly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_players_play_a_dvb_profile_mpd_strictly() {
    let Some(players) = WebPlayers::ready(&[]).await else {
        return;
    };
    let mut settings = common::segments_of(1000);
    settings.dash_profile = vodpack::config::DashProfile::Dvb;
    let server = common::start_server_with(&common::fixtures(), settings).await;
    let key = "ladder/ladder.json";
    let jobs: Vec<Job> = [Run::DashJs, Run::ShakaDash]
        .into_iter()
        .map(|run| {
            let steps = vec![
                Step::Play(0.5),
                Step::Variant(1),
                Step::Audio("fr"),
                Step::Seek(2.0),
                Step::PlayToEnd,
            ];
            let url = server.url(&format!("/vod/{key}/{}", run.manifest()));
            Job::of_run(run, &format!("dvb profile {key}"), url, steps)
        })
        .collect();
    players.play(&jobs, "players-dvb-jobs.json").await;
    server.shutdown().await;
}
