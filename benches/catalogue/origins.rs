//! The two origins as processes of their own: vodpack's release binary reading the store
//! over HTTP, and the peer (nginx-vod-module in remote mode, from `nginx-remote.conf.in`),
//! each started fresh on a free loopback port and stopped by its own process id; and what
//! they cost, read from /proc (CPU seconds, resident and proportional memory, nginx's
//! workers included).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Vodpack,
    Peer,
}

impl Which {
    pub fn name(self) -> &'static str {
        match self {
            Which::Vodpack => "vodpack",
            Which::Peer => "nginx-vod",
        }
    }
}

/// A running origin; stopped (by its own pid) when dropped.
pub struct Origin {
    pub which: Which,
    pub addr: SocketAddr,
    /// The path the players ask for a title's master under: `/vod/` or `/hls/`.
    pub prefix: &'static str,
    child: Child,
    /// nginx's workers, found once it answers.
    workers: Vec<u32>,
    pub log: PathBuf,
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

impl Origin {
    /// `vodpack serve` over the store at `store`, with its defaults otherwise.
    pub fn vodpack(store: SocketAddr, dir: &Path) -> Result<Origin, String> {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let log = dir.join("vodpack.log");
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
            .args(["serve", "--source", &format!("http://{store}/media")])
            .args(["--source-allow-http", "--listen", &addr.to_string()])
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|e| e.to_string())?)
            .stderr(out)
            .spawn()
            .map_err(|e| format!("cannot start vodpack: {e}"))?;
        Ok(Origin {
            which: Which::Vodpack,
            addr,
            prefix: "/vod/",
            child,
            workers: Vec::new(),
            log,
        })
    }

    /// nginx from `prefix` (sbin/nginx), configured from the template for the store at
    /// `store`, its pid file, logs and temporary files under `dir/peer-run/`.
    pub fn peer(
        prefix: &Path,
        store: SocketAddr,
        dir: &Path,
        unmuxed: bool,
    ) -> Result<Origin, String> {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let run = dir.join("peer-run");
        let logs = run.join("logs");
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let template = include_str!("nginx-remote.conf.in");
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        let conf = template
            .replace("@USER@", &user)
            .replace("@RUN@", &run.to_string_lossy())
            .replace("@PREFIX@", &prefix.to_string_lossy())
            .replace("@PORT@", &addr.port().to_string())
            .replace("@STORE_PORT@", &store.port().to_string());
        let conf_path = run.join("nginx.conf");
        std::fs::write(&conf_path, conf).map_err(|e| format!("{}: {e}", conf_path.display()))?;
        let log = logs.join("error.log");
        let _ = std::fs::remove_file(&log);
        let child = Command::new(prefix.join("sbin/nginx"))
            .arg("-p")
            .arg(format!("{}/", run.display()))
            .arg("-c")
            .arg(&conf_path)
            .arg("-e")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start nginx: {e}"))?;
        Ok(Origin {
            which: Which::Peer,
            addr,
            prefix: if unmuxed { "/hlsu/" } else { "/hls/" },
            child,
            workers: Vec::new(),
            log,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait until it answers `/readyz` (vodpack) or `/ready` (nginx) with 200, up to 30 s.
    pub async fn wait_ready(&mut self) -> Result<(), String> {
        let path = match self.which {
            Which::Vodpack => "/readyz",
            Which::Peer => "/ready",
        };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited ({status}); see {}",
                    self.which.name(),
                    self.log.display()
                ));
            }
            let mut client = crate::players::Conn::connect(self.addr).await.ok();
            if let Some(c) = client.as_mut() {
                if c.get(path, false).await.is_ok_and(|r| r.status == 200) {
                    self.workers = children(self.pid());
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!(
            "{} did not answer {path} in 30 s",
            self.which.name()
        ))
    }

    /// The server's processes: vodpack, or nginx's master and workers.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.pid()];
        pids.extend(&self.workers);
        pids
    }

    /// User and system CPU seconds of its processes so far.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds(&self.pids())
    }

    /// Resident and proportional set sizes of its processes, in bytes (nginx's shared
    /// caches count once per process in RSS, once in all in PSS).
    pub fn memory(&self) -> (u64, u64) {
        let mut sums = (0, 0);
        for pid in self.pids() {
            let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
                continue;
            };
            for line in rollup.lines() {
                let kib = |l: &str| -> u64 {
                    (l.split_whitespace().nth(1))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0)
                };
                if line.starts_with("Rss:") {
                    sums.0 += kib(line) * 1024;
                } else if line.starts_with("Pss:") {
                    sums.1 += kib(line) * 1024;
                }
            }
        }
        sums
    }

    /// Stop it: SIGTERM to its own pid (nginx's master stops its workers), SIGKILL after
    /// 10 s, and then any worker left, each by its pid.
    pub fn stop(&mut self) {
        let pid = self.pid() as libc::pid_t;
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: a signal to our own child, which has not been reaped.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let started = Instant::now();
            while matches!(self.child.try_wait(), Ok(None))
                && started.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
        for worker in std::mem::take(&mut self.workers) {
            if std::fs::metadata(format!("/proc/{worker}")).is_ok() {
                // SAFETY: a process the origin started, found by its parent's pid.
                unsafe { libc::kill(worker as libc::pid_t, libc::SIGKILL) };
            }
        }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop();
    }
}

/// User and system CPU seconds of `pids` so far, from /proc/PID/stat.
pub fn cpu_seconds(pids: &[u32]) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (pids.iter())
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            // The fields after the command, which may hold spaces: the state first.
            let rest = &stat[stat.rfind(')')? + 2..];
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / ticks)
        })
        .sum()
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let rest = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
                rest.split_whitespace().nth(1) == Some(&parent.to_string())
            })
        })
        .collect()
}
