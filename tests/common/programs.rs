//! Outside programs the tests run: whether one is here (or the test skips, or fails under
//! `VODPACK_REQUIRE_TOOLS=1`), and nginx for the tests that put it in front of vodpack.

use std::path::Path;

/// Whether an outside program (ffmpeg, ffprobe) is available. When it is not, tests that
/// need it skip, unless `VODPACK_REQUIRE_TOOLS=1` (set by CI), which turns the skip into
/// a failure.
pub fn have_tool(name: &str) -> bool {
    have_program(name, "-version")
}

/// [`have_tool`] for a program that tells its version with `version_flag` (`nginx -v`).
pub fn have_program(name: &str, version_flag: &str) -> bool {
    let found = std::process::Command::new(name)
        .arg(version_flag)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("{name} is required (VODPACK_REQUIRE_TOOLS=1) but was not found");
    }
    if !found {
        eprintln!("skipping: {name} not found (set VODPACK_REQUIRE_TOOLS=1 to fail instead)");
    }
    found
}

/// A free port on 127.0.0.1 (bound and released, for a program that binds it itself).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// nginx in the foreground over the folder `prefix` (its pid, error log and temporary
/// files there), with `worker_connections` and `http` as the body of its `http` block, its
/// output discarded; the caller stops it.
pub fn spawn_nginx(prefix: &Path, worker_connections: u32, http: &str) -> std::process::Child {
    let p = prefix.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {p}/nginx.pid;\nerror_log {p}/error.log warn;\n\
         events {{ worker_connections {worker_connections}; }}\n\
         http {{\n  client_body_temp_path {p}/body;\n  proxy_temp_path {p}/proxy;\n  \
         fastcgi_temp_path {p}/fastcgi;\n  uwsgi_temp_path {p}/uwsgi;\n  scgi_temp_path {p}/scgi;\n  \
         {http}}}\n"
    );
    std::fs::write(prefix.join("nginx.conf"), conf).expect("write nginx.conf");
    std::process::Command::new("nginx")
        .arg("-p")
        .arg(prefix)
        .arg("-c")
        .arg(prefix.join("nginx.conf"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nginx")
}
