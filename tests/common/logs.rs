//! Every log line of a test binary, captured in memory (for tests that read the access
//! log), and the clock in seconds (for tests that sign URLs with an expiry).

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Every log line of this test binary at `max_level` or above; the first call of the
/// binary installs the subscriber, later calls share it (whatever their level).
pub fn captured_logs(max_level: tracing::Level) -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let make = move || LogSink(sink.clone());
        let _ = tracing_subscriber::fmt()
            .with_writer(make)
            .with_max_level(max_level)
            .with_ansi(false)
            .try_init();
        logs
    })
}

/// Every log line captured so far, as text (see [`captured_logs`]).
pub fn captured_text(max_level: tracing::Level) -> String {
    String::from_utf8_lossy(&captured_logs(max_level).lock().unwrap()).into_owned()
}

/// The access log line of `logs` that holds `needle` (a trace id, say), or a panic
/// showing every line.
pub fn access_line<'a>(logs: &'a str, needle: &str) -> &'a str {
    logs.lines()
        .find(|l| l.contains("access") && l.contains(needle))
        .unwrap_or_else(|| panic!("an access line with {needle} in {logs}"))
}

struct LogSink(Arc<Mutex<Vec<u8>>>);

impl Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}
