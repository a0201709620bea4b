//! Settings that cannot work stop `vodpack serve` at start: exit status 2, one line on
//! stderr naming the setting and the fix, and no listener. Each test starts the built
//! binary with an environment holding only `PATH` and what the test adds, and passes
//! `--listen` an address the test itself holds: had vodpack reached its listener, it
//! would have failed on that address instead, with a different line.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::TempDir;

/// What a stopped start printed.
struct Stopped {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Run `vodpack serve ARGS` with only `PATH` and `env`, listening (if it got that far) on
/// an address this test holds, and wait for it to exit.
fn serve(args: &[&str], env: &[(&str, &str)]) -> Stopped {
    let held = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = held.local_addr().expect("addr").to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .arg("serve")
        .args(["--listen", &addr])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("run vodpack");
    drop(held);
    Stopped {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Assert the start stopped with status 2 and one stderr line holding each of `needles`,
/// before any listener (nothing printed that it serves, no bind error).
fn assert_refused(stopped: &Stopped, needles: &[&str]) {
    let lines: Vec<&str> = stopped.stderr.lines().collect();
    assert_eq!(
        stopped.code,
        Some(2),
        "exit status; stderr: {}",
        stopped.stderr
    );
    assert_eq!(lines.len(), 1, "one line: {:?}", stopped.stderr);
    for needle in needles {
        assert!(lines[0].contains(needle), "{needle:?} in {:?}", lines[0]);
    }
    assert!(
        !lines[0].contains("listen "),
        "stopped at the listener: {}",
        lines[0]
    );
    assert!(!stopped.stdout.contains("serving"), "{}", stopped.stdout);
}

/// Given a root that does not exist, then the line names --root and says so.
#[test]
fn a_missing_root_stops_the_start() {
    let stopped = serve(&["--root", "/nonexistent/vodpack-media"], &[]);
    assert_refused(
        &stopped,
        &[
            "root /nonexistent/vodpack-media",
            "no such folder",
            "--root",
        ],
    );
}

/// Given a file as root, then the line says it is not a folder.
#[test]
fn a_file_as_root_stops_the_start() {
    let stopped = serve(&["--root", "Cargo.toml"], &[]);
    assert_refused(&stopped, &["not a folder", "VODPACK_ROOT"]);
}

/// Given MinIO on plain HTTP named by --s3-endpoint, without allowing plain HTTP, then
/// the start stops naming the endpoint and both ways to allow it (this used to start and
/// answer every request with 502).
#[test]
fn a_plain_http_endpoint_without_allowing_it_stops_the_start() {
    let stopped = serve(
        &[
            "--source",
            "s3://media/",
            "--s3-endpoint",
            "http://127.0.0.1:9000",
        ],
        &[("AWS_REGION", "us-east-1")],
    );
    assert_refused(
        &stopped,
        &[
            "s3-endpoint http://127.0.0.1:9000 is plain HTTP",
            "--source-allow-http",
            "AWS_ALLOW_HTTP=true",
        ],
    );
}

/// Given the endpoint in object_store's own variable, then the line names that variable.
#[test]
fn a_plain_http_endpoint_from_the_environment_is_named_by_its_variable() {
    let stopped = serve(
        &["--source", "s3://media/"],
        &[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    assert_refused(
        &stopped,
        &["AWS_ENDPOINT_URL http://127.0.0.1:9000 is plain HTTP"],
    );
}

/// Given an access key id without its secret, then the line names the missing variable.
#[test]
fn a_lone_access_key_stops_the_start() {
    let stopped = serve(
        &["--source", "s3://media/"],
        &[
            ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    assert_refused(
        &stopped,
        &[
            "AWS_SECRET_ACCESS_KEY is not",
            "set AWS_SECRET_ACCESS_KEY too",
        ],
    );
}

/// Given AWS_ALLOW_HTTP that is not a boolean, then the line names it.
#[test]
fn an_unparsable_allow_http_variable_stops_the_start() {
    let stopped = serve(&["--source", "s3://media/"], &[("AWS_ALLOW_HTTP", "maybe")]);
    assert_refused(&stopped, &["AWS_ALLOW_HTTP=maybe", "must be true or false"]);
}

/// Given an unknown key in the TOML file, then the line names the key, the file, the
/// position and the keys that exist.
#[test]
fn an_unknown_config_key_stops_the_start() {
    let dir = TempDir::new("startup-toml");
    let path = dir.path().join("vodpack.toml");
    std::fs::write(&path, "root = \"fixtures\"\nsegment-seconds = 4\n").expect("write");
    let stopped = serve(&["--config", path.to_str().expect("utf-8 path")], &[]);
    assert_refused(
        &stopped,
        &[
            "invalid config file",
            "unknown field `segment-seconds`",
            "line 2",
            "`segment-duration-ms`",
        ],
    );
}

/// Given a limit of 0, from a flag or a variable, then the line names the setting.
#[test]
fn a_limit_of_zero_stops_the_start() {
    let stopped = serve(&["--max-connections", "0"], &[]);
    assert_refused(&stopped, &["max-connections", "must be greater than 0"]);
    let stopped = serve(&[], &[("VODPACK_METADATA_CACHE_BYTES", "0")]);
    assert_refused(&stopped, &["metadata-cache-bytes", "at least 4096"]);
    // Checked before the runtime is built, since it sizes the runtime.
    let stopped = serve(&["--worker-threads", "0"], &[]);
    assert_refused(&stopped, &["worker-threads", "between 1 and 1024"]);
}

/// Given --s3-endpoint with a gs:// source, then the impossible pair is refused.
#[test]
fn an_s3_endpoint_for_another_store_stops_the_start() {
    let stopped = serve(
        &[
            "--source",
            "gs://media/",
            "--s3-endpoint",
            "https://s3.example.com",
        ],
        &[],
    );
    assert_refused(&stopped, &["s3-endpoint", "applies to s3:// sources only"]);
}

/// Given a listen address already in use, then the start stops with status 2 and one
/// line naming --listen (this one is found at the listener, after the other checks).
#[test]
fn an_address_in_use_stops_the_start_with_one_line() {
    let held = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = held.local_addr().expect("addr").to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .args(["serve", "--listen", &addr, "--log-format", "json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run vodpack");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("vodpack: listen {addr}:")),
        "{stderr}"
    );
    assert!(last.contains("--listen"), "{last}");
}

/// Given the endpoint on plain HTTP and object_store's AWS_ALLOW_HTTP=true, then the server
/// starts (the variable is honoured, as the crate documents it), and its one startup line
/// names the effective source, endpoint, limits and versions.
#[test]
fn aws_allow_http_is_honoured_and_the_startup_line_says_what_runs() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .args([
            "--source",
            "s3://media/videos",
            "--s3-endpoint",
            "http://127.0.0.1:9",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vodpack");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let first = BufReader::new(stdout).lines().next();
        let _ = tx.send(first);
    });
    // A guard against a hang, not a measurement.
    let first = rx.recv_timeout(Duration::from_secs(60));
    let _ = child.kill();
    let _ = child.wait();
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    let first = match first {
        Ok(Some(Ok(line))) => line,
        other => panic!("no serving line ({other:?}); stderr: {stderr}"),
    };
    assert!(
        first.contains("serving s3://media/videos on http://127.0.0.1:"),
        "{first}"
    );
    let startup = stderr
        .lines()
        .find(|l| l.contains("\"message\":\"starting\""))
        .unwrap_or_else(|| panic!("no startup line in {stderr}"));
    let line: serde_json::Value = serde_json::from_str(startup).expect("JSON log line");
    let fields = &line;
    assert_eq!(fields["source"], "s3://media/videos");
    assert_eq!(fields["s3_endpoint"], "http://127.0.0.1:9");
    assert_eq!(fields["allow_http"], true);
    assert_eq!(fields["max_connections"], 10000);
    assert!(
        fields["versions"]
            .as_str()
            .is_some_and(|v| v.contains("vodpack ") && v.contains("object_store ")),
        "{startup}"
    );
}

/// Given a plain-HTTP web server as the source, then it too must be allowed.
#[test]
fn a_plain_http_source_url_stops_the_start() {
    let stopped = serve(&["--source", "http://127.0.0.1:9/media/"], &[]);
    assert_refused(
        &stopped,
        &[
            "source http://127.0.0.1:9/media/ is plain HTTP",
            "--source-allow-http",
        ],
    );
}

/// Given AWS_ALLOW_HTTP=true but vodpack's own setting saying false, then vodpack's wins.
#[test]
fn vodpacks_own_setting_wins_over_aws_allow_http() {
    let stopped = serve(
        &[
            "--source",
            "s3://media/",
            "--s3-endpoint",
            "http://127.0.0.1:9000",
            "--source-allow-http",
            "false",
        ],
        &[("AWS_ALLOW_HTTP", "true"), ("AWS_REGION", "us-east-1")],
    );
    assert_refused(
        &stopped,
        &["s3-endpoint http://127.0.0.1:9000 is plain HTTP"],
    );
}

/// Given credentials the store cannot use (an unreadable GCS service account file, an
/// Azure key that is not base64), then the store's own reason is the one line.
#[test]
fn credentials_the_store_refuses_stop_the_start() {
    let stopped = serve(
        &["--source", "gs://media/"],
        &[("GOOGLE_SERVICE_ACCOUNT", "/nonexistent/vodpack-sa.json")],
    );
    assert_refused(
        &stopped,
        &[
            "source gs://media/",
            "/nonexistent/vodpack-sa.json",
            "GOOGLE_*",
        ],
    );
    let stopped = serve(
        &["--source", "az://media/"],
        &[
            ("AZURE_STORAGE_ACCOUNT_NAME", "vodpack"),
            ("AZURE_STORAGE_ACCOUNT_KEY", "!not-base64"),
        ],
    );
    assert_refused(&stopped, &["source az://media/", "Invalid Access Key"]);
}
