//! DASH text segments in the browser: dash.js and Shaka Player render the cues of `wvtt`
//! and IMSC1 (`stpp`) segments at their times, for every subtitle source (a `tx3g` track,
//! a `wvtt` track, WebVTT and SRT sidecars, a TTML sidecar), clear and encrypted.
//! (`web_every_fixture` plays the default `wvtt` form with every player; this story adds
//! IMSC1, a tighter tolerance, and the encrypted title.)

use vodpack::config::{DashProfile, Settings};
use vodpack::package::DashSubtitleFormat;

use crate::common;
use crate::jobs::{Job, Run, Step};
use crate::media::encrypting;
use crate::titles::{title_path, Cues, MOVTEXT_CUES, TITLES};
use crate::web_runner::WebPlayers;

/// How far a cue's start and end as a player shows them may be from the source's, in
/// seconds. DASH puts cues on the Period timeline, where the source's times are, so this
/// allows only for the players' own rounding and polling of cue edges.
const CUE_TOLERANCE_S: f64 = 0.02;

/// The movtext fixture's cues, for the encrypted runs.
static MOVTEXT: Cues = Cues {
    language: Some("eng"),
    cues: MOVTEXT_CUES,
};

/// Given every fixture with subtitles, served with 1 s segments and each DASH text form
/// (`wvtt`, `imsc1`, and the DVB profile's EBU-TT-D, `codecs="stpp"` on the set), and the
/// movtext fixture encrypted (`cenc`, ClearKey), when dash.js
/// and Shaka play the MPD with the title's text track selected, then each cue shows at its
/// source time (within 20 ms) with its text, and the players play on to the end, strictly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_players_render_wvtt_and_imsc1_cues_at_their_times() {
    let Some(players) = WebPlayers::ready(&[]).await else {
        return;
    };
    let mut servers = Vec::new();
    let mut jobs = Vec::new();
    let forms = [
        (DashProfile::Default, DashSubtitleFormat::Wvtt),
        (DashProfile::Default, DashSubtitleFormat::Imsc1),
        // The DVB profile writes IMSC1 whatever the format setting says.
        (DashProfile::Dvb, DashSubtitleFormat::Wvtt),
    ];
    for (profile, format) in forms {
        let clear = Settings {
            dash_subtitle_format: format,
            dash_profile: profile,
            ..common::segments_of(1000)
        };
        let server = common::start_server_with(&common::fixtures(), clear).await;
        for title in TITLES
            .iter()
            .filter(|t| t.browser && !t.key.starts_with("nginx:"))
        {
            let Some(cues) = &title.cues else { continue };
            for run in [Run::DashJs, Run::ShakaDash] {
                let url = server.url(&title_path(title.key, run.manifest()));
                let steps = steps(cues, title.seek_s);
                let what = format!("{profile:?} {format:?} {}", title.key);
                jobs.push(
                    Job::of_run(run, &what, url, steps)
                        .media(title.video_variants > 0, title.audio_tracks > 0),
                );
            }
        }
        let encrypted = Settings {
            dash_subtitle_format: format,
            dash_profile: profile,
            ..encrypting(1000, "hls=aes-128,dash=cenc")
        };
        let protected = common::start_server_with(&common::fixtures(), encrypted).await;
        let key = "h264-aac-movtext-3s.mp4";
        for run in [Run::DashJs, Run::ShakaDash] {
            let url = protected.url(&format!("/vod/{key}/manifest.mpd"));
            let what = format!("{profile:?} {format:?} cenc {key}");
            jobs.push(Job::of_run(run, &what, url, steps(&MOVTEXT, 2.2)));
        }
        servers.extend([server, protected]);
    }
    players.play(&jobs, "players-text-segments-jobs.json").await;
    for server in servers {
        server.shutdown().await;
    }
}

/// Play, check every cue, seek to `seek_s` and play to the end.
fn steps(cues: &'static Cues, seek_s: f64) -> Vec<Step> {
    vec![
        Step::Play(0.5),
        Step::Cues {
            cues,
            tolerance_s: CUE_TOLERANCE_S,
        },
        Step::Seek(seek_s),
        Step::PlayToEnd,
    ]
}
