//! A program run with a time limit, in its own process group, its outputs collected: past
//! the limit it is killed together with what it started (node's Chromium, say).

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
pub fn run_bounded(mut command: Command, limit: Duration) -> Bounded {
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
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
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
