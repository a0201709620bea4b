//! The jobs `run.mjs` plays (its top comment gives their JSON), built from typed values: a
//! web player on a manifest ([`Run`]), the steps it takes ([`Step`]), the media that must
//! reach the browser's decoders, and the known failures it may show. The stories build
//! these; only this file writes JSON.

use crate::known_failures::KnownFailure;
use crate::titles::Cues;

/// A web player and the manifest it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    HlsJs,
    DashJs,
    ShakaHls,
    ShakaDash,
    /// hls.js on `master-ts.m3u8` (MPEG-TS segments, which it transmuxes to fMP4).
    HlsJsTs,
}

impl Run {
    /// Every web player on the CMAF manifests it reads (HLS, DASH or both).
    pub const ALL: [Run; 4] = [Run::HlsJs, Run::DashJs, Run::ShakaHls, Run::ShakaDash];

    /// The player's name in `run.mjs`.
    pub fn player(self) -> &'static str {
        match self {
            Run::HlsJs | Run::HlsJsTs => "hlsjs",
            Run::DashJs => "dashjs",
            Run::ShakaHls | Run::ShakaDash => "shaka",
        }
    }

    /// The manifest it plays.
    pub fn manifest(self) -> &'static str {
        match self {
            Run::HlsJs | Run::ShakaHls => "master.m3u8",
            Run::DashJs | Run::ShakaDash => "manifest.mpd",
            Run::HlsJsTs => "master-ts.m3u8",
        }
    }
}

/// One thing a player does, and what it must see while doing it.
pub enum Step {
    /// Play until the media time has moved this many seconds on (or the end).
    Play(f64),
    /// Play until the media element reports `ended`.
    PlayToEnd,
    /// Seek to this many seconds; must land within 0.5 s of it.
    Seek(f64),
    /// Force video rendition K (0: the lowest bandwidth), ABR off.
    Variant(usize),
    /// Switch to the audio track of this language.
    Audio(&'static str),
    /// Trick play at this rate (Shaka only), fetching the key frames offered for it.
    Trick(u32),
    /// Lip sync at the start: the earliest audio buffered starts `offset_s` after the
    /// earliest video.
    AvStart { offset_s: f64 },
    /// These cues are shown at their times, within `tolerance_s`.
    Cues {
        cues: &'static Cues,
        tolerance_s: f64,
    },
    /// The player's thumbnail for media time `at_s` is the tile at `x`,`y` of `sheet`.
    Thumbnail {
        at_s: f64,
        sheet: &'static str,
        x: u32,
        y: u32,
    },
    /// (hls.js only) the interstitial `id` plays an asset whose URL holds `asset`, and the
    /// title resumes at `resume_at_s`.
    Interstitial {
        id: &'static str,
        asset: &'static str,
        resume_at_s: f64,
    },
}

impl Step {
    /// The step as `run.mjs` reads it.
    fn json(&self) -> String {
        match self {
            Step::Play(seconds) => format!("{{\"play\":{seconds}}}"),
            Step::PlayToEnd => "{\"play_to_end\":true}".to_owned(),
            Step::Seek(seconds) => format!("{{\"seek\":{seconds}}}"),
            Step::Variant(index) => format!("{{\"variant\":{index}}}"),
            Step::Audio(language) => format!("{{\"audio\":{}}}", json_string(language)),
            Step::Trick(rate) => format!("{{\"trick\":{rate}}}"),
            Step::AvStart { offset_s } => format!("{{\"av_start\":{{\"offset\":{offset_s:.4}}}}}"),
            Step::Cues { cues, tolerance_s } => {
                let list: Vec<String> = (cues.cues.iter())
                    .map(|c| {
                        format!(
                            "{{\"start\":{},\"end\":{},\"text\":{}}}",
                            c.start_s,
                            c.end_s,
                            json_string(c.text)
                        )
                    })
                    .collect();
                let language = (cues.language)
                    .map(|l| format!(",\"lang\":{}", json_string(l)))
                    .unwrap_or_default();
                format!(
                    "{{\"cues\":[{}]{language},\"tolerance\":{tolerance_s}}}",
                    list.join(",")
                )
            }
            Step::Thumbnail { at_s, sheet, x, y } => format!(
                "{{\"thumbnail\":{{\"at\":{at_s},\"url\":{},\"x\":{x},\"y\":{y}}}}}",
                json_string(sheet)
            ),
            Step::Interstitial {
                id,
                asset,
                resume_at_s,
            } => format!(
                "{{\"interstitial\":{{\"id\":{},\"asset\":{},\"resume_at\":{resume_at_s}}}}}",
                json_string(id),
                json_string(asset)
            ),
        }
    }
}

/// One job: a player on a URL, its steps, and what it is held to.
pub struct Job {
    /// How the runner's report names the job.
    name: String,
    /// The player's name in `run.mjs`.
    player: &'static str,
    url: String,
    /// The kinds that must reach the browser's decoders ("video", "audio"): a player that
    /// silently drops a track it cannot play fails.
    media: Vec<&'static str>,
    steps: Vec<Step>,
    /// Faults traced and accepted (see `known_failures`).
    known_failures: Vec<&'static KnownFailure>,
    /// (hls.js) W3C ClearKey licences from this URL, through EME.
    clearkey_licence: Option<String>,
}

impl Job {
    /// `player` on `url` taking `steps`, with video and audio required at the decoders.
    pub fn new(name: String, player: &'static str, url: String, steps: Vec<Step>) -> Self {
        Job {
            name,
            player,
            url,
            media: vec!["video", "audio"],
            steps,
            known_failures: Vec::new(),
            clearkey_licence: None,
        }
    }

    /// `run` on `url`, named by the player, `what` is played and the manifest.
    pub fn of_run(run: Run, what: &str, url: String, steps: Vec<Step>) -> Self {
        let name = format!("{} {what} {}", run.player(), run.manifest());
        Job::new(name, run.player(), url, steps)
    }

    /// The same job requiring video and audio at the decoders only where the title has
    /// them.
    pub fn media(mut self, video: bool, audio: bool) -> Self {
        self.media = [(video, "video"), (audio, "audio")]
            .into_iter()
            .filter_map(|(has, kind)| has.then_some(kind))
            .collect();
        self
    }

    /// The same job, accepting `known` as failures it may show.
    pub fn known_failures(mut self, known: Vec<&'static KnownFailure>) -> Self {
        self.known_failures = known;
        self
    }

    /// The same job with EME on and ClearKey licences from `url`.
    pub fn clearkey_licence(mut self, url: String) -> Self {
        self.clearkey_licence = Some(url);
        self
    }

    /// The job as `run.mjs` reads it.
    fn json(&self) -> String {
        let media: Vec<String> = self.media.iter().map(|m| json_string(m)).collect();
        let steps: Vec<String> = self.steps.iter().map(Step::json).collect();
        let mut job = format!(
            "{{\"name\":{},\"player\":{},\"url\":{},\"media\":[{}],\"steps\":[{}]",
            json_string(&self.name),
            json_string(self.player),
            json_string(&self.url),
            media.join(","),
            steps.join(",")
        );
        if !self.known_failures.is_empty() {
            let known: Vec<String> = (self.known_failures.iter())
                .map(|k| {
                    format!(
                        "{{\"matches\":{},\"reason\":{}}}",
                        json_string(k.matches),
                        json_string(k.reason)
                    )
                })
                .collect();
            job.push_str(&format!(",\"known_failures\":[{}]", known.join(",")));
        }
        if let Some(licence) = &self.clearkey_licence {
            job.push_str(&format!(",\"clearkey_licence\":{}", json_string(licence)));
        }
        job.push('}');
        job
    }
}

/// The job list for `run.mjs`: `jobs`, `parallel` at a time, the whole run stopped after
/// `deadline_s`.
pub fn job_list(jobs: &[Job], parallel: usize, deadline_s: u64) -> String {
    let jobs: Vec<String> = jobs.iter().map(Job::json).collect();
    format!(
        "{{\"deadline_s\":{deadline_s},\"parallel\":{parallel},\"jobs\":[\n{}\n]}}\n",
        jobs.join(",\n")
    )
}

/// `text` as a JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
