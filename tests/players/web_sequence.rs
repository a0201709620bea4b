//! A sequence in the web players: an ident made here before the ladder title, played
//! across the boundary (an HLS discontinuity, a DASH Period), with an ad break there too.

use crate::common;
use crate::jobs::{json_string, Job, Run, Step};
use crate::media::{copy_ad, sequence_folder};
use crate::web_runner::WebPlayers;

/// Given a sequence of an ident made here (5 s, 352x288 at 25 fps, H.264 Constrained
/// Baseline) and the ladder title (three High-profile rungs at 30 fps, two audio
/// languages), when hls.js and Shaka play its HLS (a discontinuity and a new `EXT-X-MAP`
/// at the boundary) and dash.js and Shaka its DASH (a Period per part), then they play
/// into the second part, switch its audio language, seek into the second part and play to
/// the end, strictly. And when the same sequence has an ad break at the boundary (the
/// document's `breaks`), then hls.js plays its interstitial and resumes the film at its
/// start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_play_across_a_sequence_strictly() {
    let Some(players) = WebPlayers::ready(&["ffmpeg"]).await else {
        return;
    };
    let dir = sequence_folder("sequence-players").await;
    let server = common::start_server_with(dir.path(), common::segments_of(1000)).await;
    let mut jobs = Vec::new();
    for run in Run::ALL {
        let url = server.url(&format!("/vod/sequence.json/{}", run.manifest()));
        // Into the second part (from 5 s), an audio switch there, then a seek to its last
        // second and on to the end.
        let steps = vec![
            Step::Play(0.5),
            Step::Seek(4.5),
            Step::Play(1.5),
            Step::Audio("fr"),
            Step::Play(0.5),
            Step::Seek(8.2),
            Step::PlayToEnd,
        ];
        // No known failures: each part's first picture is presented at its first decode
        // time (the init segment's edit takes back the B-frame delay), so hls.js, which
        // maps a part's decode time to the discontinuity, and Shaka, which maps each
        // segment's, find no gap after the boundary (they did, 0.0667 s, before it).
        jobs.push(Job::of_run(run, "sequence.json", url, steps));
    }
    // An ad break at the boundary (the sequence's own `breaks`): hls.js plays its
    // interstitial (another vodpack title, 3 s) when part 2 starts and resumes the film
    // where it starts, then plays to the end.
    copy_ad(dir.path());
    std::fs::write(
        dir.path().join("breaks-sequence.json"),
        format!(
            r#"{{"parts": [{{"file": "ident.mp4"}}, {{"title": "ladder.json"}}],
                "breaks": [{{"id": "intro", "at": 5000, "duration": 3000, "asset_uri": {}}}]}}"#,
            json_string(&server.url("/vod/ad.mp4/master.m3u8"))
        ),
    )
    .expect("document");
    let url = server.url("/vod/breaks-sequence.json/master.m3u8");
    let steps = vec![
        Step::Play(1.0),
        Step::Interstitial {
            id: "intro",
            asset: "/vod/ad.mp4/",
            resume_at_s: 5.0,
        },
        Step::PlayToEnd,
    ];
    jobs.push(Job::of_run(Run::HlsJs, "breaks-sequence.json", url, steps));
    players.play(&jobs, "players-sequence-jobs.json").await;
    server.shutdown().await;
}
