//! Encrypted output in the browser: ClearKey EME for `cenc` and `cbcs` (DASH, and CMAF
//! HLS with SAMPLE-AES), the raw key for AES-128 and SAMPLE-AES MPEG-TS, and the `cbcs`
//! output signalled for every DRM system beside ClearKey.

use crate::common;
use crate::jobs::{Job, Step};
use crate::known_failures::hlsjs_title_shift;
use crate::media::{encrypting, encrypting_for_every_drm, folder_with_title};
use crate::web_runner::WebPlayers;

/// The long title of the SAMPLE-AES MPEG-TS story: 30 s, 640x360 at 25 fps, a key frame
/// every 2 s with B-frames, AAC at 48 kHz.
const LONG_TITLE: &str = "-f lavfi -i testsrc2=size=640x360:rate=25 \
     -f lavfi -i sine=frequency=440:sample_rate=48000 -t 30 \
     -c:v libx264 -preset veryfast -g 50 -bf 2 -c:a aac";

/// Given the 3 s fixture served encrypted three ways (AES-128 HLS with `cenc` DASH;
/// SAMPLE-AES HLS with `cbcs` DASH; and that `cbcs` output signalled for FairPlay,
/// Widevine and PlayReady beside ClearKey), when the web players play it with a seek, then
/// dash.js and Shaka play `cenc` and `cbcs` DASH through W3C ClearKey EME (the licence URL
/// from the MPD's `dashif:Laurl`, answered by vodpack's ClearKey licence route), and hls.js
/// plays AES-128 HLS, CMAF and MPEG-TS (the key from the `EXT-X-KEY` URI), SAMPLE-AES
/// (CMAF `cbcs`) HLS through ClearKey EME with vodpack's licence route, and SAMPLE-AES
/// MPEG-TS, all strictly; players without the other systems' CDMs pass over their
/// signalling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_players_play_encrypted_output_strictly() {
    let Some(players) = WebPlayers::ready(&[]).await else {
        return;
    };
    let fixtures = common::fixtures();
    let serve = |settings| common::start_server_with(&fixtures, settings);
    let cenc = serve(encrypting(1000, "hls=aes-128,dash=cenc")).await;
    let cbcs = serve(encrypting(1000, "hls=sample-aes,dash=cbcs")).await;
    let drm = serve(encrypting_for_every_drm()).await;
    let key = "h264-aac-3s.mp4";
    let runs = [
        ("dashjs", &cenc, "manifest.mpd", "cenc"),
        ("shaka", &cenc, "manifest.mpd", "cenc"),
        ("dashjs", &cbcs, "manifest.mpd", "cbcs"),
        ("shaka", &cbcs, "manifest.mpd", "cbcs"),
        ("hlsjs", &cenc, "master.m3u8", "aes-128"),
        ("hlsjs", &cenc, "master-ts.m3u8", "aes-128 ts"),
        // SAMPLE-AES (CMAF cbcs) through EME ClearKey, the licence from the playlist's
        // KEYFORMAT="org.w3.clearkey" key (hls.js takes its URL from its configuration).
        ("hlsjs", &cbcs, "master.m3u8", "sample-aes"),
        // SAMPLE-AES MPEG-TS beside it: Apple's sample encryption, the raw key from the
        // EXT-X-KEY URI, decrypted by hls.js's own demuxer.
        ("hlsjs", &cbcs, "master-ts.m3u8", "sample-aes ts"),
        ("dashjs", &drm, "manifest.mpd", "cbcs drm"),
        ("shaka", &drm, "manifest.mpd", "cbcs drm"),
        ("hlsjs", &drm, "master.m3u8", "sample-aes drm"),
    ];
    let jobs: Vec<Job> = runs
        .iter()
        .map(|&(player, server, manifest, scheme)| {
            let url = server.url(&format!("/vod/{key}/{manifest}"));
            let steps = vec![Step::Play(0.5), Step::Seek(2.0), Step::PlayToEnd];
            let mut job = Job::new(format!("{player} {scheme} {key}"), player, url, steps);
            if matches!(scheme, "sample-aes" | "sample-aes drm") {
                job = job.clearkey_licence(server.url(&format!("/vod/{key}/clearkey.json")));
            }
            if player == "hlsjs" && manifest.contains("-ts") {
                job = job.known_failures(hlsjs_title_shift());
            }
            job
        })
        .collect();
    players.play(&jobs, "players-encrypted-jobs.json").await;
    cenc.shutdown().await;
    cbcs.shutdown().await;
    drm.shutdown().await;
}

/// Given a 30 s title made here with ffmpeg, in 6 s segments, encrypted for HLS with
/// SAMPLE-AES, when hls.js plays its MPEG-TS (decrypted by its own demuxer, the raw key
/// from the `EXT-X-KEY` URI), then it plays from the start to the end, strictly. An
/// ordinary x264 encode like this one has slices holding emulation prevention bytes, which
/// the fixtures' do not; a writer that gets them wrong makes Chromium's decoder fail
/// (`PIPELINE_ERROR_DECODE`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hlsjs_plays_sample_aes_ts_of_a_long_title_strictly() {
    let Some(players) = WebPlayers::ready(&["ffmpeg"]).await else {
        return;
    };
    let dir = folder_with_title("sample-aes-long", "long-30s.mp4", LONG_TITLE).await;
    let server = common::start_server_with(dir.path(), encrypting(6000, "hls=sample-aes")).await;
    let url = server.url("/vod/long-30s.mp4/master-ts.m3u8");
    let steps = vec![Step::Play(0.5), Step::PlayToEnd];
    let job = Job::new(
        "hlsjs sample-aes ts long-30s.mp4".into(),
        "hlsjs",
        url,
        steps,
    )
    .known_failures(hlsjs_title_shift());
    players
        .play(&[job], "players-sample-aes-long-jobs.json")
        .await;
    server.shutdown().await;
}
