//! Real players: hls.js, dash.js and Shaka Player in Debian's headless Chromium, and
//! GStreamer's `playbin3`, play vodpack's HLS and DASH of the fixtures, strictly, and
//! hls.js and GStreamer its HLS with MPEG-TS segments (`master-ts.m3u8`).
//!
//! The web players run through `tests/players/run.mjs` (playwright-core driving
//! `/usr/bin/chromium`, the players pinned in `tests/players/package.json`), from a page on
//! another loopback origin than vodpack, so CORS is exercised. Any player error event (fatal
//! or recovered), media element error or HTTP status >= 400 fails a job, and so does a
//! video or audio track that never reaches the browser's decoders (a player may drop a
//! track it cannot play without an error). GStreamer plays every fixture, HEVC included
//! (Chromium cannot decode HEVC), through to the end.
//!
//! Layout: the stories, one file each (`web_every_fixture`, `web_encrypted`,
//! `web_sequence`, `web_ad_breaks`, `web_storyboards`, `web_dvb`, `web_text_segments`,
//! `web_key_presets`,
//! `shaka_trick_play`, `gstreamer`);
//! what they are run over (`titles`: the fixtures' table, `known_failures`, `media`: titles
//! made with ffmpeg and the servers); how they are run (`jobs`: the runner's job list,
//! `web_runner`: node and Chromium, `programs`: whether each program is here;
//! `common::bounded` kills a run past its time limit with what it started).
//!
//! To extend: add a row to `titles::TITLES` (and to `known_failures::KNOWN_FAILURES` only
//! for a player fault we have traced, to vodpack or to how a player meets the source, with
//! the reason). Without node, chromium, `tests/players/node_modules` or gst-launch-1.0 the
//! tests skip with a message, and fail instead under `VODPACK_REQUIRE_TOOLS=1` (set by CI).
//! Install by hand: `apt-get install chromium gstreamer1.0-tools gstreamer1.0-plugins-good
//! gstreamer1.0-plugins-bad gstreamer1.0-libav` and `cd tests/players &&
//! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci`.

#[path = "../common/mod.rs"]
mod common;

mod gstreamer;
mod jobs;
mod known_failures;
mod media;
mod programs;
mod shaka_trick_play;
mod titles;
mod web_ad_breaks;
mod web_dvb;
mod web_encrypted;
mod web_every_fixture;
mod web_key_presets;
mod web_runner;
mod web_sequence;
mod web_storyboards;
mod web_text_segments;

/// One player run at a time: the browser run and the GStreamer runs take turns, so neither
/// starves the other (or the server) of this machine's two cores. Run side by side, a
/// GStreamer DASH download once gave up ("Couldn't download fragments") while Chromium
/// held both cores; alone, the same run passes.
static PLAYER_TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
