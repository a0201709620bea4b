//! A program run with a time limit, in its own process group, so that past the limit it is
//! killed together with what it started (node's Chromium); and whether a program is here
//! at all, or the test skips (or fails under `VODPACK_REQUIRE_TOOLS=1`).

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a bounded run of a program gave.
pub struct Bounded {
    /// The exit status; None when it was killed.
    pub status: Option<ExitStatus>,
    /// Whether it was killed for running past its limit.
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Run `command` (blocking; call on the blocking pool) in its own process group, with
/// stdin closed and both outputs collected. Past `limit` the whole group (the program and
/// anything it started, such as the browser) is killed by its id.
fn run_bounded(mut command: Command, limit: Duration) -> Bounded {
    use std::os::unix::process::CommandExt;
    let mut child = command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {command:?}: {e}"));
    // Drain both pipes on their own threads, so a chatty child never blocks on a full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (Some(status), false),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) | Err(_) => {
                // The group id is the child's pid (process_group(0)).
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
        }
    };
    Bounded {
        status,
        timed_out,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// [`run_bounded`] on the blocking pool, for async tests.
pub async fn run_with_limit(command: Command, limit: Duration) -> Bounded {
    let program = command.get_program().to_string_lossy().into_owned();
    tokio::task::spawn_blocking(move || run_bounded(command, limit))
        .await
        .unwrap_or_else(|e| panic!("the thread running {program}: {e}"))
}

/// Read `pipe` to its end on a new thread.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

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
