//! Shaka Player's trick play, the one web player here that uses the key frames offered for
//! it (hls.js and dash.js use neither the HLS I-frame playlist nor the DASH trick-play
//! set).

use crate::common;
use crate::jobs::{Job, Step};
use crate::media::folder_with_title;
use crate::web_runner::WebPlayers;

/// The 20 s title of the trick-play story: 320x180 at 25 fps, a key frame each second,
/// AAC at 64 kb/s.
const TRICK_PLAY_TITLE: &str = "-f lavfi -i testsrc2=size=320x180:rate=25:duration=20 \
     -f lavfi -i sine=frequency=440:duration=20 \
     -c:v libx264 -g 25 -pix_fmt yuv420p -preset veryfast -c:a aac -b:a 64k -shortest";

/// Given a 20 s title made here with ffmpeg (the fixtures are too short to leave anything
/// unbuffered), served with 2 s segments, when Shaka Player is asked for trick play at 4x
/// on its HLS and its DASH, then it fetches the key frames offered for it (the I-frame
/// playlist, the trick-play set), moves on through the title and returns to normal play,
/// strictly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shaka_trick_plays_from_the_key_frames() {
    let Some(players) = WebPlayers::ready(&["ffmpeg"]).await else {
        return;
    };
    let dir = folder_with_title("trick-play", "trick-20s.mp4", TRICK_PLAY_TITLE).await;
    let server = common::start_server_with(dir.path(), common::segments_of(2000)).await;
    let jobs: Vec<Job> = ["master.m3u8", "manifest.mpd"]
        .into_iter()
        .map(|manifest| {
            let url = server.url(&format!("/vod/trick-20s.mp4/{manifest}"));
            let steps = vec![Step::Play(0.5), Step::Trick(4), Step::Play(0.5)];
            Job::new(format!("shaka trick play {manifest}"), "shaka", url, steps)
        })
        .collect();
    players.play(&jobs, "players-trick-jobs.json").await;
    server.shutdown().await;
}
