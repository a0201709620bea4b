//! hls.js, dash.js and Shaka Player on every fixture Chromium can decode: each job plays,
//! switches what the title lets it switch, checks the title's cues, seeks into the last
//! segment and plays to the end.

use crate::common::TestServer;
use crate::jobs::{Job, Run, Step};
use crate::known_failures::known_failures_of;
use crate::media::start;
use crate::titles::{carried_in_ts, source_av_offset, title_path, Title, LIP_SYNC_KEYS, TITLES};
use crate::web_runner::WebPlayers;

/// How far a cue's start and end as a player shows them may be from the table's, in
/// seconds: HLS media sits at the title shift S (a 2-frame B-frame delay here, 0.067 s)
/// on the playlists' timeline, and the players keep the cues with the video.
const CUE_TOLERANCE_S: f64 = 0.1;

/// Given every browser-playable fixture, served with 1 s segments, when hls.js (on the
/// multivariant playlist), dash.js (on the MPD) and Shaka Player (on both) play it
/// cross-origin, and hls.js its MPEG-TS where TS carries every track, then each starts,
/// seeks into the last segment and plays to the end, switches audio language and variant
/// where there are several, with no error, fatal or recovered, and no failed request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_play_every_fixture_strictly() {
    let Some(players) = WebPlayers::ready(&[]).await else {
        return;
    };
    let server = start().await;
    players
        .play(&every_fixture_jobs(&server), "players-jobs.json")
        .await;
    server.shutdown().await;
}

/// Every browser-playable title in every [`Run`], and hls.js on `master-ts.m3u8` of those
/// TS carries whole, each with its known failures.
fn every_fixture_jobs(server: &TestServer) -> Vec<Job> {
    let mut jobs = Vec::new();
    for title in TITLES.iter().filter(|t| t.browser) {
        let ts = carried_in_ts(title).then_some(Run::HlsJsTs);
        for run in Run::ALL.into_iter().chain(ts) {
            let url = server.url(&title_path(title.key, run.manifest()));
            jobs.push(
                Job::of_run(run, title.key, url, steps_for(title, run))
                    .media(title.video_variants > 0, title.audio_tracks > 0)
                    .known_failures(known_failures_of(title.key, run)),
            );
        }
    }
    jobs
}

/// What a player does with `title`: play, check lip sync at the start where the table asks
/// for it, switch what can be switched, check cues, seek into the last segment and play to
/// the end.
fn steps_for(title: &'static Title, run: Run) -> Vec<Step> {
    let mut steps = vec![Step::Play(0.5)];
    // Lip sync at the start, before the first seek. Not on MPEG-TS: hls.js remuxes it
    // itself and fills the audio before the first frame with silence, so its buffered
    // ranges say nothing of sync.
    if let Some(offset_s) = (LIP_SYNC_KEYS.contains(&title.key) && run != Run::HlsJsTs)
        .then(|| source_av_offset(title.key))
        .flatten()
    {
        steps.push(Step::AvStart { offset_s });
    }
    if let Some(language) = title.switch_audio_to {
        steps.extend([Step::Audio(language), Step::Play(0.5)]);
    }
    if title.video_variants > 1 {
        steps.extend([
            Step::Variant(title.video_variants - 1),
            Step::Play(0.5),
            Step::Variant(0),
            Step::Play(0.5),
        ]);
    }
    if let Some(cues) = &title.cues {
        steps.push(Step::Cues {
            cues,
            tolerance_s: CUE_TOLERANCE_S,
        });
    }
    steps.extend([Step::Seek(title.seek_s), Step::PlayToEnd]);
    steps
}
