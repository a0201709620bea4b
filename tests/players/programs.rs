//! Whether the players' programs are here (or the test skips, or fails under
//! `VODPACK_REQUIRE_TOOLS=1`), and the story that a player run past its time limit is
//! killed with what it started.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::bounded::run_with_limit;

/// Whether `program flag` runs and exits 0.
pub fn runs(program: &str, flag: &str) -> bool {
    Command::new(program)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// None after printing that the test skips for want of `missing`, or a panic when
/// `VODPACK_REQUIRE_TOOLS=1` (CI) says tools are required.
pub fn skip_or_fail<T>(missing: &str) -> Option<T> {
    if std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("{missing} is required (VODPACK_REQUIRE_TOOLS=1) but was not found");
    }
    eprintln!("skipping: {missing} not found (set VODPACK_REQUIRE_TOOLS=1 to fail instead)");
    None
}

/// The time limit on the players is real: a program still running past it is killed
/// together with what it started (as the browser run's node would have started Chromium).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_run_past_its_limit_is_killed_with_what_it_started() {
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 600 >/dev/null 2>&1 & echo $!; wait"]);
    let run = run_with_limit(command, Duration::from_secs(1)).await;
    assert!(run.timed_out && run.status.is_none(), "sh was not stopped");
    let grandchild = String::from_utf8_lossy(&run.stdout).trim().to_owned();
    assert!(!grandchild.is_empty(), "sh printed no pid");
    // Killed means gone, or a zombie waiting for init to reap it; allow init a moment.
    let stat = format!("/proc/{grandchild}/stat");
    let mut alive = true;
    for _ in 0..100 {
        alive = std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z "));
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive, "the program's child {grandchild} outlived the kill");
}
