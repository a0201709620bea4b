//! The web players' runner: `run.mjs` under node (playwright-core driving Debian's
//! Chromium), given a job list and held to its verdicts: every job reports, and each
//! passes or fails only as a known failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio::sync::MutexGuard;

use crate::common;
use crate::common::bounded::run_with_limit;
use crate::jobs::{job_list, Job};
use crate::programs::{runs, skip_or_fail};
use crate::PLAYER_TURN;

/// The web players, ready to play, with this test's turn at the machine taken (see
/// [`PLAYER_TURN`]) until dropped.
pub struct WebPlayers {
    /// `tests/players/run.mjs`.
    runner: PathBuf,
    _turn: MutexGuard<'static, ()>,
}

impl WebPlayers {
    /// The web players once it is this test's turn, when node, Chromium, the runner's npm
    /// packages and every program in `also` (ffmpeg, say) are here; None (after saying
    /// why: the test skips) when one is missing, or a panic under
    /// `VODPACK_REQUIRE_TOOLS=1`.
    pub async fn ready(also: &[&str]) -> Option<Self> {
        let runner = web_player_runner()?;
        if !also.iter().all(|tool| common::have_tool(tool)) {
            return None;
        }
        let _turn = PLAYER_TURN.lock().await;
        Some(WebPlayers { runner, _turn })
    }

    /// Play `jobs` and assert that every job reported and passed, or failed only as a
    /// known failure (see [`run_web_jobs`]).
    pub async fn play(&self, jobs: &[Job], file_name: &str) {
        run_web_jobs(&self.runner, jobs, file_name).await;
    }
}

/// Browser jobs played at once. Measured on the 2-core machine: 68 jobs (17 titles) took
/// 3 min 46 s one at a time and 2 min 38 s two at a time, with the same verdicts.
const BROWSER_JOBS_AT_ONCE: usize = 1;

/// The longest the whole browser run may take before it is killed (the runner stops
/// itself a minute earlier).
const BROWSER_RUN_LIMIT: Duration = Duration::from_secs(540);

/// `tests/players/run.mjs` when node, chromium and the runner's npm packages are all
/// there; None (after saying why) when one is missing, or a panic under
/// `VODPACK_REQUIRE_TOOLS=1`.
fn web_player_runner() -> Option<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/players");
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let missing = if !runs("node", "--version") {
        Some("node (apt-get install nodejs npm)".to_owned())
    } else if !chromium.exists() {
        Some(format!("{} (apt-get install chromium)", chromium.display()))
    } else if !folder.join("node_modules/playwright-core").is_dir() {
        Some(format!(
            "{}/node_modules (cd tests/players && npm ci)",
            folder.display()
        ))
    } else {
        None
    };
    match missing {
        Some(missing) => skip_or_fail(&missing),
        None => Some(folder.join("run.mjs")),
    }
}

/// Play `jobs` (written to `file_name` in the tests' temp folder, so a failure can be rerun
/// by hand with `node tests/players/run.mjs FILE`) and assert that every job reported and
/// passed (or failed only as a known failure).
async fn run_web_jobs(runner: &Path, jobs: &[Job], file_name: &str) {
    let list = job_list(jobs, BROWSER_JOBS_AT_ONCE, BROWSER_RUN_LIMIT.as_secs() - 60);
    let jobs_file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(file_name);
    std::fs::write(&jobs_file, list).expect("write the job list");
    let mut command = Command::new("node");
    command.arg(runner).arg(&jobs_file);
    let run = run_with_limit(command, BROWSER_RUN_LIMIT).await;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let reports: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    let failed: Vec<&&str> = reports
        .iter()
        .filter(|line| !matches!(verdict_of(line).as_str(), "pass" | "known-failure"))
        .collect();
    for line in reports.iter().filter(|l| verdict_of(l) == "known-failure") {
        eprintln!("known failure (see KNOWN_FAILURES): {line}");
    }
    let expected = jobs.len();
    assert!(
        !run.timed_out
            && run.status.is_some_and(|s| s.success())
            && failed.is_empty()
            && reports.len() == expected,
        "web players: {} of {expected} jobs reported, {} failed{}; exit {:?}\n\
         failed jobs:\n{}\nrunner stderr:\n{stderr}\njobs: {}",
        reports.len(),
        failed.len(),
        if run.timed_out {
            ", and the run was killed after the time limit"
        } else {
            ""
        },
        run.status,
        failed.iter().map(|l| format!("{l}\n")).collect::<String>(),
        jobs_file.display()
    );
}

/// The verdict of one line of the runner's report ("pass", "fail", "known-failure").
fn verdict_of(line: &str) -> String {
    line.strip_prefix("{\"verdict\":\"")
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("unreadable")
        .to_owned()
}
