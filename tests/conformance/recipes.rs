//! Conformance on media ffmpeg makes at test time. Each recipe is a file made
//! the way encoders and editors make them: AAC at 48 and 22.05 kHz, AC-3 and E-AC-3 (each
//! with its encoder delay), audio starting after the video on an empty edit, fragmented
//! input, audio only, and a stream-copy trim whose edits start inside a GOP and inside an
//! audio frame. Served with 6 s segments, every output (HLS CMAF, DASH, HLS MPEG-TS) is
//! held to the SOURCE FILE:
//!
//! - a. the same decoded pictures in order, allowing the pre-roll an edit inside a GOP needs;
//! - b. the same decoded audio frames after the first, in order;
//! - c. the same audio against video to 2 ms (`lip_sync::av_times`), and no audio drift;
//! - d. the duration its manifest states, to one frame;
//! - e. in DASH, every Representation covering its Period, to one frame of its track.
//!
//! Each test makes its file once, checks every output, prints what it measured (see it
//! with `--nocapture`), and fails listing each failed check with its figures. To run only
//! these: `cargo test --test conformance recipes -- --nocapture`.

use std::path::{Path, PathBuf};

use super::boxes::{movie_timing, MovieTiming};
use super::common::{self, TempDir, TestServer};
use super::lip_sync::*;
use super::media_recipes::{make, Recipe};
use super::*;

/// The outputs every recipe is read through.
const OUTPUTS: [Via; 3] = [Via::Hls, Via::Dash, Via::HlsTs];

/// A recipe made in its own folder and served from it with 6 s target segments.
struct Title {
    folder: TempDir,
    name: &'static str,
    server: TestServer,
    /// The source's timing boxes (a box dump).
    movie: MovieTiming,
}

impl Title {
    /// Make `recipe` in a new folder and start a server over it.
    async fn make(recipe: fn(&Path) -> Recipe) -> Self {
        let folder = TempDir::new("recipe");
        let name = make(folder.path(), recipe).await;
        let server = common::start_server_with(folder.path(), common::segments_of(6000)).await;
        let movie = movie_timing(&folder.path().join(name));
        Self {
            folder,
            name,
            server,
            movie,
        }
    }

    fn source_path(&self) -> PathBuf {
        self.folder.path().join(self.name)
    }

    fn input(&self, via: Via) -> String {
        via.input_under(self.folder.path(), &self.server, self.name)
    }

    /// Read the source and every output, check a to e, print the table, stop the server,
    /// and fail listing every check that failed.
    async fn hold_every_output_to_the_source(self) {
        let source = SourceReading::read(&self).await;
        let mut table = Table::new(self.name, &source);
        for via in OUTPUTS {
            let output = Reading::read(&self.input(via)).await;
            let mpd = match via {
                Via::Dash => {
                    let path = format!("/vod/{}/manifest.mpd", self.name);
                    Some(fetch_text(&self.server, &path).await)
                }
                _ => None,
            };
            let representations = mpd.as_deref().map(mpd_representations).unwrap_or_default();
            check_pictures(&mut table, via, &source, &output);
            check_audio_frames(&mut table, via, &source, &output);
            check_lip_sync(&mut table, via, &source, &output, &representations);
            let stated = self.stated_duration(via, mpd.as_deref()).await;
            check_duration(&mut table, via, &source, stated);
            if let Some(mpd) = &mpd {
                check_period_cover(&mut table, &source, mpd, &representations);
            }
        }
        self.server.shutdown().await;
        table.print_and_assert();
    }

    /// The title's duration as `via`'s manifest states it, the one players show: the
    /// MPD's `mediaPresentationDuration`, or the EXTINFs of the first variant's playlist
    /// added up (players take an HLS title's timeline from the variant they play, not from
    /// its alternate audio).
    async fn stated_duration(&self, via: Via, mpd: Option<&str>) -> Option<f64> {
        let base = format!("/vod/{}/", self.name);
        let master = match via {
            Via::Dash => return mpd.and_then(mpd_duration),
            Via::HlsTs => "master-ts.m3u8",
            _ => "master.m3u8",
        };
        let master = fetch_text(&self.server, &format!("{base}{master}")).await;
        let mut lines = master.lines().map(str::trim);
        lines.find(|line| line.starts_with("#EXT-X-STREAM-INF:"))?;
        let variant = lines.find(|line| !line.is_empty() && !line.starts_with('#'))?;
        let playlist = fetch_text(&self.server, &format!("{base}{variant}")).await;
        Some(MediaPlaylist::parse(&playlist).extinfs.iter().sum())
    }
}

/// What ffmpeg decodes through one input.
struct Reading {
    video: Option<Vec<Decoded>>,
    audio: Option<DecodedAudio>,
}

impl Reading {
    async fn read(input: &str) -> Self {
        let probe = probe_streams(input).await;
        let video = match probe.count("video") {
            0 => None,
            _ => Some(decoded_frames(input, "v:0").await),
        };
        let audio = match probe.count("audio") {
            0 => None,
            _ => Some(decoded_audio(input, "a:0").await),
        };
        Self { video, audio }
    }
}

/// The source as the checks use it.
struct SourceReading {
    decoded: Reading,
    /// Pictures its first edit needs before the first one presented.
    preroll: usize,
    /// Its duration (ffprobe's, of the whole file), and one video frame and one audio frame
    /// in seconds (the duration tolerances).
    duration_s: f64,
    video_frame_s: Option<f64>,
    audio_frame_s: Option<f64>,
    /// The known frame and sample, and the A/V times per ISO/IEC 14496-12 and as ffmpeg's
    /// mov reader gives them (see `lip_sync::source_av_times`).
    marks: Option<SyncMarks>,
    av: Option<(AvTimes, AvTimes)>,
    /// Per kind (`video`, `audio`), how long the source's first stream of that kind starts
    /// after the file's start and ends before the file's end, in seconds, as ffprobe reads
    /// it through the edit lists: the gaps the source itself has.
    gaps: Vec<(String, f64, f64)>,
}

impl SourceReading {
    async fn read(title: &Title) -> Self {
        let path = title.source_path();
        let input = path.to_string_lossy().into_owned();
        let decoded = Reading::read(&input).await;
        let preroll = match decoded.video {
            Some(_) => preroll_packets(&input, "v:0").await,
            None => 0,
        };
        let duration_s = (probe_streams(&input).await.duration)
            .unwrap_or_else(|| panic!("{}: no duration", title.name));
        let longest = |frames: &Option<Vec<Decoded>>| {
            frames
                .as_ref()
                .map(|f| f.iter().map(|f| f.duration_s).fold(0.0, f64::max))
        };
        let audio_frames = decoded.audio.as_ref().map(|a| a.frames.clone());
        let marks = match (&decoded.video, &decoded.audio) {
            (Some(video), Some(audio)) => SyncMarks::from_source(video, audio),
            _ => None,
        };
        let av = match (&decoded.video, &decoded.audio, &marks) {
            (Some(video), Some(audio), Some(marks)) => Some(
                source_av_times(&path, &title.movie, video, audio, marks)
                    .await
                    .unwrap_or_else(|e| panic!("{}: source A/V times: {e}", title.name)),
            ),
            _ => None,
        };
        let gaps = source_gaps(&input).await;
        Self {
            gaps,
            video_frame_s: longest(&decoded.video),
            audio_frame_s: longest(&audio_frames),
            decoded,
            preroll,
            duration_s,
            marks,
            av,
        }
    }

    /// One frame of the title: a video frame, or an audio frame for audio only.
    fn frame_s(&self) -> f64 {
        self.video_frame_s.or(self.audio_frame_s).unwrap_or(0.0)
    }
}

/// What `SourceReading::gaps` holds, read with ffprobe (`start_time`, `duration` of each
/// stream and of the format).
async fn source_gaps(input: &str) -> Vec<(String, f64, f64)> {
    let out = ffprobe_show(
        input,
        None,
        "stream=codec_type,start_time,duration:format=start_time,duration",
        "compact=p=0:nk=0",
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    let field = |line: &str, name: &str| {
        line.split('|')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
    };
    let mut streams = Vec::new();
    let mut format = None;
    for line in text.lines() {
        let (start, duration) = (field(line, "start_time"), field(line, "duration"));
        match line
            .split('|')
            .find_map(|kv| kv.strip_prefix("codec_type="))
        {
            Some(kind) => streams.push((kind.to_owned(), start, duration)),
            None => format = start.zip(duration),
        }
    }
    let Some((file_start, file_duration)) = format else {
        panic!("{input}: ffprobe gave no format start and duration:\n{text}");
    };
    let mut gaps: Vec<(String, f64, f64)> = Vec::new();
    for (kind, start, duration) in streams {
        if let (Some(start), Some(duration)) = (start, duration) {
            if gaps.iter().all(|(k, _, _)| *k != kind) {
                let lead = (start - file_start).max(0.0);
                let tail = (file_start + file_duration - start - duration).max(0.0);
                gaps.push((kind, lead, tail));
            }
        }
    }
    gaps
}

/// a. The output decodes to the source's pictures, in order and as many, after at most the
/// source's pre-roll, which comes before the first picture presented.
fn check_pictures(table: &mut Table, via: Via, source: &SourceReading, output: &Reading) {
    let (Some(want), Some(got)) = (&source.decoded.video, &output.video) else {
        if source.decoded.video.is_some() {
            table.record(via, "a. pictures", false, "no video stream".into());
        }
        return;
    };
    let Some(first) = want
        .first()
        .and_then(|w| got.iter().position(|g| g.hash == w.hash))
    else {
        table.record(
            via,
            "a. pictures",
            false,
            "the source's first picture is missing".into(),
        );
        return;
    };
    let rest = &got[first..];
    let differing = (want.iter().zip(rest)).position(|(w, g)| w.hash != g.hash);
    let preroll_first = got[..first].iter().all(|p| p.pts_s < got[first].pts_s);
    let ok =
        first <= source.preroll && preroll_first && differing.is_none() && rest.len() == want.len();
    let mut measured = format!(
        "{} pictures after {first} pre-roll (source {}, pre-roll {})",
        rest.len(),
        want.len(),
        source.preroll
    );
    if let Some(i) = differing {
        measured.push_str(&format!("; picture {i} differs"));
    }
    if !preroll_first {
        measured.push_str("; a pre-roll picture is presented after the first picture");
    }
    table.record(via, "a. pictures", ok, measured);
}

/// b. The output's decoded audio frames hold the source's frames 1.. in order (the first
/// one the source's edit list cuts into is decoded from other samples), and c. their
/// times do not drift from the source's over the title.
fn check_audio_frames(table: &mut Table, via: Via, source: &SourceReading, output: &Reading) {
    let (Some(want), Some(got)) = (&source.decoded.audio, &output.audio) else {
        if source.decoded.audio.is_some() {
            table.record(via, "b. audio frames", false, "no audio stream".into());
        }
        return;
    };
    let alignment = align(&want.frames, &got.frames, 1);
    let percent = 100.0 * alignment.equal as f64 / alignment.compared.max(1) as f64;
    table.record(
        via,
        "b. audio frames",
        alignment.equal == alignment.compared,
        format!(
            "{} of {} equal ({percent:.1}%)",
            alignment.equal, alignment.compared
        ),
    );
    let drift = drift(&want.frames, &got.frames, alignment);
    table.record(
        via,
        "c. audio drift",
        drift.median_spread_s <= LIP_SYNC_TOLERANCE_S,
        format!(
            "{:.2} ms between per-second medians (single frames {:.2} ms)",
            drift.median_spread_s * 1e3,
            drift.frame_spread_s * 1e3
        ),
    );
}

/// c. Audio against video as in the source, to 2 ms (`lip_sync::av_times`).
fn check_lip_sync(
    table: &mut Table,
    via: Via,
    source: &SourceReading,
    output: &Reading,
    representations: &[MpdRepresentation],
) {
    let (Some((want, ffmpeg_want)), Some(marks)) = (&source.av, &source.marks) else {
        return;
    };
    let (Some(video), Some(audio)) = (&output.video, &output.audio) else {
        table.record(via, "c. lip sync", false, "no video or no audio".into());
        return;
    };
    // A player subtracts each DASH Representation's presentationTimeOffset; ffmpeg does not.
    let offset = |kind: &str| {
        (representations.iter())
            .find(|r| r.content_type == kind && !r.trick_play)
            .map_or(0.0, MpdRepresentation::presentation_time_offset_s)
    };
    match av_times(video, audio, marks, (offset("video"), offset("audio"))) {
        Ok(got) => {
            let error = got.offset_s() - want.offset_s();
            let mut measured = format!(
                "{:+.2} ms (A/V {:+.4} s, source {:+.4} s)",
                error * 1e3,
                got.offset_s(),
                want.offset_s()
            );
            let ffmpeg_error = got.offset_s() - ffmpeg_want.offset_s();
            if (ffmpeg_error - error).abs() > 1e-4 {
                measured.push_str(&format!(
                    "; {:+.2} ms against ffmpeg's reading of the source",
                    ffmpeg_error * 1e3
                ));
            }
            table.record(
                via,
                "c. lip sync",
                error.abs() <= LIP_SYNC_TOLERANCE_S,
                measured,
            );
        }
        Err(e) => table.record(via, "c. lip sync", false, e),
    }
}

/// d. The manifest states the source's duration (plus the pre-roll it shows), to one frame.
/// An HLS variant playlist times its own stream (the video, or the audio of an audio-only
/// title), so where the source starts that stream after the file's start (a B-frame delay
/// no edit list hides), it states the duration less that lead: HLS has no way to say a
/// rendition starts later than the title, and vodpack makes up no pictures to fill it.
fn check_duration(table: &mut Table, via: Via, source: &SourceReading, stated: Option<f64>) {
    let Some(stated) = stated else {
        table.record(via, "d. duration", false, "no duration stated".into());
        return;
    };
    let timed = if source.video_frame_s.is_some() {
        "video"
    } else {
        "audio"
    };
    let lead = match via {
        Via::Hls | Via::HlsTs => (source.gaps.iter())
            .find(|(kind, _, _)| kind == timed)
            .map_or(0.0, |(_, lead, _)| *lead),
        _ => 0.0,
    };
    let want =
        source.duration_s + source.preroll as f64 * source.video_frame_s.unwrap_or(0.0) - lead;
    // Manifests write milliseconds (MPD) or microseconds per segment (EXTINF).
    let ok = (stated - want).abs() <= source.frame_s() + 0.0005;
    table.record(
        via,
        "d. duration",
        ok,
        format!(
            "{stated:.3} s, source {want:.3} s ({:+.1} ms)",
            (stated - want) * 1e3
        ),
    );
}

/// e. Every DASH Representation covers its Period, to one frame of its track, except where
/// its source stream itself has no media: it starts at or before the Period start (its
/// presentationTimeOffset) unless the source stream starts later than the source file (a
/// leading empty edit, a composition delay no edit list hides), by no more than that, and
/// reaches the Period's end unless the source stream ends earlier, by no more than that.
/// vodpack never makes up media (silence, repeated pictures) to fill a gap the source has.
fn check_period_cover(
    table: &mut Table,
    source: &SourceReading,
    mpd: &str,
    representations: &[MpdRepresentation],
) {
    let Some(period_s) = mpd_duration(mpd) else {
        table.record(
            Via::Dash,
            "e. Period cover",
            false,
            "no mediaPresentationDuration".into(),
        );
        return;
    };
    for r in representations {
        let kind = r.content_type.as_str();
        let frame = match kind {
            "audio" => source.audio_frame_s,
            _ => source.video_frame_s,
        }
        .unwrap_or(0.0);
        let (gap_start, gap_end) = (source.gaps.iter())
            .find(|(k, _, _)| k == kind)
            .map_or((0.0, 0.0), |(_, lead, tail)| (*lead, *tail));
        let ok = r.lead_s() >= -gap_start - frame && r.reach_s() >= period_s - gap_end - frame;
        let start = match r.lead_s() {
            lead if lead >= 0.0 => format!("starts {lead:.3} s before the Period"),
            lead => format!("starts {:.3} s after the Period start", -lead),
        };
        table.record(
            Via::Dash,
            "e. Period cover",
            ok,
            format!(
                "{} ({kind}): {start}, reaches {:.3} s of {period_s:.3} s; the source's own \
                 gaps {gap_start:.3} s at the start, {gap_end:.3} s at the end",
                r.id,
                r.reach_s()
            ),
        );
    }
}

/// What one recipe measured: a row per output and check.
struct Table {
    title: &'static str,
    rows: Vec<(Via, &'static str, bool, String)>,
}

impl Table {
    fn new(title: &'static str, source: &SourceReading) -> Self {
        let mut table = Self {
            title,
            rows: Vec::new(),
        };
        if let Some((spec, ffmpeg)) = &source.av {
            let note = format!(
                "A/V {:+.4} s per ISO/IEC 14496-12 (ffmpeg's mov reader: {:+.4} s); \
                 {:.3} s; pre-roll {} pictures",
                spec.offset_s(),
                ffmpeg.offset_s(),
                source.duration_s,
                source.preroll
            );
            table.record(Via::Source, "source", true, note);
        }
        table
    }

    fn record(&mut self, via: Via, check: &'static str, ok: bool, measured: String) {
        self.rows.push((via, check, ok, measured));
    }

    /// Print every row, then fail listing the rows that failed.
    fn print_and_assert(self) {
        let line = |(via, check, ok, measured): &(Via, &str, bool, String)| {
            let verdict = if *ok { "ok  " } else { "FAIL" };
            format!("{verdict} {:<7} {check:<16} {measured}", format!("{via:?}"))
        };
        let all: Vec<String> = self.rows.iter().map(line).collect();
        eprintln!("{}:\n  {}", self.title, all.join("\n  "));
        let failed: Vec<String> = self.rows.iter().filter(|r| !r.2).map(line).collect();
        assert!(
            failed.is_empty(),
            "{}: {} checks failed:\n  {}",
            self.title,
            failed.len(),
            failed.join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------------------
// Tests: one per recipe, each over every output.
// ---------------------------------------------------------------------------------------

/// Given H.264 and AAC at 48 kHz (1024 samples of encoder delay hidden by the edit list),
/// then every output decodes to its pictures and audio frames, keeps its lip sync and
/// duration, and every DASH Representation covers the Period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aac_48k_keeps_the_source_pictures_audio_and_lip_sync() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::aac_48k)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given AAC at 22.05 kHz, whose 1024-sample encoder delay lasts 46.4 ms, then every output
/// (MPEG-TS too, which has no edit list to hide it) keeps the source's lip sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aac_22k_keeps_the_source_lip_sync_across_its_encoder_delay() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::aac_22k)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given AC-3 (256 samples of encoder delay inside a 1536-sample frame), then every output
/// keeps the source's lip sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ac3_keeps_the_source_lip_sync_across_its_encoder_delay() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::ac3)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given E-AC-3 (256 samples of encoder delay), then every output keeps the source's lip
/// sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eac3_keeps_the_source_lip_sync_across_its_encoder_delay() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::eac3)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given audio that starts 0.5 s after the video (the box dump shows an empty edit opening
/// the audio track), then every output presents the audio that much later than the video.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_starting_late_on_an_empty_edit_keeps_its_delay() {
    if !tools_available().await {
        return;
    }
    let title = Title::make(Recipe::late_audio).await;
    let audio = title.movie.track("soun").expect("an audio track");
    let empty_s = title.movie.leading_empty_s(audio);
    assert!(
        (0.45..=0.5).contains(&empty_s) && audio.first_media_edit().is_some(),
        "the source's audio should open with a 0.45-0.5 s empty edit: {:?}",
        audio.edits
    );
    title.hold_every_output_to_the_source().await;
}

/// Given fragmented input (empty `moov`, no edit lists: the video starts 0.08 s after the
/// audio, by its B-frame delay), then every output keeps that timing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fragmented_input_keeps_the_source_timing() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::fragmented)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given an audio-only `.m4a`, then every output decodes to its audio frames, and their
/// times keep to the source's over the whole title (no drift beyond 2 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_only_keeps_the_source_frames_without_drift() {
    if !tools_available().await {
        return;
    }
    Title::make(Recipe::audio_only)
        .await
        .hold_every_output_to_the_source()
        .await;
}

/// Given a stream-copy trim (the box dump shows a video edit starting inside a GOP and an
/// audio edit starting inside an AAC frame), then every output keeps its pictures (DASH and
/// ffmpeg show the video pre-roll; HLS skips it with EXT-X-START), its audio frames and
/// lip sync, and in DASH the audio covers the Period the pre-roll opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_copy_trim_keeps_lip_sync_and_covers_the_dash_period() {
    if !tools_available().await {
        return;
    }
    let title = Title::make(Recipe::trim).await;
    let edit = |handler: &str| {
        let track = title.movie.track(handler).expect("a track");
        (
            track.first_media_edit().expect("a media edit"),
            track.timescale,
        )
    };
    let (audio, _) = edit("soun");
    assert!(
        audio.media_time % 1024 != 0,
        "the trim's audio edit should start inside an AAC frame: {audio:?}"
    );
    let (video, timescale) = edit("vide");
    assert!(
        video.media_time > 0 && i64::from(timescale) * 2 > video.media_time,
        "the trim's video edit should start inside its first 2 s GOP: {video:?}"
    );
    title.hold_every_output_to_the_source().await;
}
