//! `vodpack inspect` and `vodpack check`, run as an operator runs them (the built binary),
//! over a folder holding good files, the hostile corpus and a broken title document, and
//! over a bucket of the in-process S3 server: exit codes, one JSON line per object, the
//! same reason the server gives a player, and the reads reported against the GETs the
//! S3 server counted.

mod common;
mod hostile;
#[path = "common/s3.rs"]
mod s3;

use std::path::Path;
use std::process::{Command, Output};

use common::{get, start_server, TempDir};
use s3::S3Server;
use serde_json::Value;

/// The bucket of the S3 tests.
const BUCKET: &str = "media";

/// Run the binary with `args`, the environment holding only `PATH` and `env`.
fn vodpack(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run vodpack")
}

/// The same, off the runtime's workers (the S3 server runs on them meanwhile).
async fn vodpack_async(args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        vodpack(&args, &env)
    })
    .await
    .expect("join")
}

/// The JSON lines of a check's stdout: the objects by key, and the totals.
fn check_lines(output: &Output) -> (Vec<Value>, Value) {
    let text = String::from_utf8_lossy(&output.stdout);
    let mut objects = Vec::new();
    let mut totals = Value::Null;
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        match value.get("totals") {
            Some(t) => totals = t.clone(),
            None => objects.push(value),
        }
    }
    (objects, totals)
}

/// A folder with two good files (one in a sub-folder), the hostile corpus, a title
/// document naming a missing file, and a text file.
fn mixed_folder(root: &Path) {
    let good = hostile::fixture("h264-aac-3s.mp4");
    std::fs::write(root.join("good.mp4"), &good).expect("write");
    std::fs::create_dir_all(root.join("shows/season 1")).expect("mkdir");
    std::fs::write(root.join("shows/season 1/épisode 1.mp4"), &good).expect("write");
    for file in hostile::corpus() {
        std::fs::write(root.join(file.name), &file.bytes).expect("write");
    }
    std::fs::write(
        root.join("broken-title.json"),
        r#"{"video": [{"file": "good.mp4"}, {"file": "missing.mp4"}]}"#,
    )
    .expect("write");
    std::fs::write(root.join("notes.txt"), "not media").expect("write");
}

/// Given a folder of good and broken files, when checked, then it exits 1, gives one
/// line per media file and title document (text files skipped), `ok` for the good ones,
/// and for each broken one the status and the very line the server answers a player.
#[tokio::test]
async fn check_a_folder_reports_each_object_with_the_servers_reason() {
    let dir = TempDir::new("check-folder");
    mixed_folder(dir.path());
    let corpus = hostile::corpus();
    let root = dir.path().to_str().expect("utf-8").to_owned();
    let output = vodpack_async(
        vec!["check".into(), root, "--concurrency".into(), "3".into()],
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let (objects, totals) = check_lines(&output);
    let expected = corpus.len() + 3;
    assert_eq!(objects.len(), expected, "{objects:?}");
    assert_eq!(totals["checked"], expected);
    assert_eq!(totals["ok"], 2);
    assert_eq!(totals["failed"], corpus.len() + 1);
    assert_eq!(totals["skipped"], 1);
    assert!(
        totals["source_requests"].as_u64().is_some_and(|n| n > 0),
        "{totals}"
    );
    assert!(
        totals["source_read_bytes"].as_u64().is_some_and(|n| n > 0),
        "{totals}"
    );
    let keys: Vec<&str> = objects.iter().filter_map(|o| o["key"].as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted, "objects come in key order");
    let by_key = |key: &str| {
        objects
            .iter()
            .find(|o| o["key"] == key)
            .unwrap_or_else(|| panic!("{key} not reported"))
    };
    assert_eq!(by_key("good.mp4")["verdict"], "ok");
    assert_eq!(by_key("shows/season 1/épisode 1.mp4")["verdict"], "ok");

    let server = start_server(dir.path()).await;
    for file in &corpus {
        let line = by_key(file.name);
        assert_eq!(line["verdict"], "failed", "{line}");
        let reason = line["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains(file.expect),
            "{line} does not name {:?}",
            file.expect
        );
        let reply = get(server.addr, &format!("/vod/{}/master.m3u8", file.name)).await;
        assert_eq!(line["status"], reply.status, "{}", file.name);
        assert_eq!(reason, reply.text().trim_end(), "{}", file.name);
    }
    let title = by_key("broken-title.json");
    assert_eq!(title["status"], 422, "{title}");
    let reply = get(server.addr, "/vod/broken-title.json/master.m3u8").await;
    assert_eq!(title["reason"], reply.text().trim_end());
    assert!(reply.text().contains("missing.mp4"), "{}", reply.text());
}

/// Given a folder where everything plays, when checked under a prefix of --root, then it
/// exits 0 and checks only what is under the prefix.
#[test]
fn check_a_good_prefix_exits_0() {
    let output = vodpack(&["check", "ladder", "--root", "fixtures", "--json"], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let (objects, totals) = check_lines(&output);
    assert!(objects
        .iter()
        .all(|o| o["key"].as_str().is_some_and(|k| k.starts_with("ladder/"))));
    assert_eq!(totals["failed"], 0);
    let title = objects
        .iter()
        .find(|o| o["key"] == "ladder/ladder.json")
        .expect("title");
    assert_eq!(title["variants"], 3);
}

/// The S3 test server over `dir` (bucket `media`) and the variables that reach it.
async fn bucket(dir: &Path) -> (S3Server, Vec<(String, String)>) {
    let server = S3Server::start(dir).await;
    let env = vec![
        ("AWS_ACCESS_KEY_ID".into(), s3::ACCESS_KEY.into()),
        ("AWS_SECRET_ACCESS_KEY".into(), s3::SECRET_KEY.into()),
        ("AWS_REGION".into(), s3::REGION.into()),
        ("AWS_ENDPOINT_URL".into(), server.endpoint()),
        ("AWS_ALLOW_HTTP".into(), "true".into()),
    ];
    (server, env)
}

/// Given a bucket of good and broken files, when checked with the standard AWS variables,
/// then the lines are those of the folder check, and the requests reported are the HEADs
/// and GETs the S3 server received (the one listing page aside).
#[tokio::test]
async fn check_a_bucket_reports_reasons_and_the_gets_it_cost() {
    let dir = TempDir::new("check-bucket");
    let media = dir.path().join(BUCKET);
    std::fs::create_dir_all(&media).expect("mkdir");
    mixed_folder(&media);
    let (server, env) = bucket(dir.path()).await;
    let before = server.tally();
    let output = vodpack_async(
        vec![
            "check".into(),
            format!("s3://{BUCKET}/"),
            "--concurrency".into(),
            "4".into(),
        ],
        env,
    )
    .await;
    let spent = server.tally() - before;
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let (objects, totals) = check_lines(&output);
    let corpus = hostile::corpus();
    assert_eq!(totals["checked"], corpus.len() + 3, "{totals}");
    assert_eq!(totals["ok"], 2, "{objects:?}");
    for file in &corpus {
        let line = objects
            .iter()
            .find(|o| o["key"] == file.name)
            .expect("reported");
        assert!(
            line["reason"]
                .as_str()
                .is_some_and(|r| r.contains(file.expect)),
            "{line}"
        );
    }
    let listing_pages = 1;
    assert_eq!(
        totals["source_requests"].as_u64(),
        Some(spent.heads + spent.gets - listing_pages),
        "reported requests against the server's HEADs and GETs: {totals} {spent:?}"
    );
    // The server's GET bytes also hold the listing's XML.
    let read = totals["source_read_bytes"].as_u64().unwrap_or_default();
    assert!(read > 0 && read < spent.get_bytes, "{totals} {spent:?}");
}

/// Given a key in a bucket, when inspected by URL with the same settings as serve, then
/// a good file shows its variants and exits 0, and a broken one shows the server's
/// reason and exits 1; a title document in a folder shows its ladder.
#[tokio::test]
async fn inspect_by_url_shows_what_the_server_would_answer() {
    let dir = TempDir::new("inspect-bucket");
    let media = dir.path().join(BUCKET);
    std::fs::create_dir_all(&media).expect("mkdir");
    mixed_folder(&media);
    let (_server, env) = bucket(dir.path()).await;
    let good = vodpack_async(
        vec![
            "inspect".into(),
            format!("s3://{BUCKET}/shows/season 1/épisode 1.mp4"),
            "--json".into(),
        ],
        env.clone(),
    )
    .await;
    assert_eq!(good.status.code(), Some(0), "{good:?}");
    let report: Value = serde_json::from_slice(&good.stdout).expect("JSON");
    assert_eq!(report["verdict"], "ok");
    assert_eq!(report["hls_status"], 200);
    assert!(
        report["variants"][0]["codecs"]
            .as_str()
            .is_some_and(|c| c.starts_with("avc1.")),
        "{report}"
    );
    assert!(report["detail"].as_array().is_some_and(|d| !d.is_empty()));

    let corpus = hostile::corpus();
    let broken = corpus.first().expect("a hostile file");
    let bad = vodpack_async(
        vec!["inspect".into(), format!("s3://{BUCKET}/{}", broken.name)],
        env,
    )
    .await;
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    let text = String::from_utf8_lossy(&bad.stdout);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{}: 422 ", broken.name)),
        "{text}"
    );
    assert!(first.contains(broken.expect), "{text}");

    let ladder = vodpack(&["inspect", "fixtures/ladder/ladder.json", "--json"], &[]);
    assert_eq!(ladder.status.code(), Some(0), "{ladder:?}");
    let report: Value = serde_json::from_slice(&ladder.stdout).expect("JSON");
    assert_eq!(report["variants"].as_array().map(Vec::len), Some(3));
    let languages: Vec<&str> = report["renditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["language"].as_str())
        .collect();
    assert!(
        languages.contains(&"fr") || languages.contains(&"fra"),
        "{report}"
    );
}

/// Given a folder whose file has a sound index in the disk tier and a corrupt one in the
/// store tier beside the media, when inspected with both tiers set, then the report says
/// which tier holds the title and why the other's object would not be used; without
/// tiers, it says nothing of them; and inspecting writes nothing to either.
#[tokio::test]
async fn inspect_says_which_index_tier_holds_a_title() {
    use std::sync::Arc;
    use vodpack::media::{encode_index, load_index, MediaLimits};
    use vodpack::server::titles::tiers::object_name;
    use vodpack::source::{LocalMediaSource, MediaSource, ObjectKey};

    let root = TempDir::new("inspect-tiers");
    let name = "h264-aac-3s.mp4";
    std::fs::copy(common::fixtures().join(name), root.path().join(name)).expect("copy");
    let source: Arc<dyn MediaSource> = Arc::new(LocalMediaSource::new(root.path()).unwrap());
    let key = ObjectKey::parse(name).unwrap();
    let identity = source.identify(&key).await.unwrap();
    let index = load_index(&source, &key, &identity, &MediaLimits::default())
        .await
        .unwrap();
    let object = object_name(&key, &identity);
    let disk = TempDir::new("inspect-tiers-disk");
    std::fs::write(disk.path().join(&object), encode_index(&key, &index)).unwrap();
    let store = root.path().join(".vodpack-index");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join(&object), b"VPIX not an index").unwrap();

    let root_arg = root.path().to_string_lossy().into_owned();
    let disk_arg = disk.path().to_string_lossy().into_owned();
    let with_tiers = vodpack(
        &["inspect", name, "--root", &root_arg],
        &[
            ("VODPACK_INDEX_CACHE_DIR", &disk_arg),
            ("VODPACK_INDEX_CACHE_PREFIX", ".vodpack-index/"),
        ],
    );
    assert_eq!(with_tiers.status.code(), Some(0), "{with_tiers:?}");
    let text = String::from_utf8_lossy(&with_tiers.stdout);
    assert!(
        text.contains(&format!("index tier disk ({disk_arg}): holds")),
        "{text}"
    );
    assert!(text.contains("index tier store ("), "{text}");
    let unusable = format!(
        "): unusable: not a format-{} index",
        vodpack::media::INDEX_FORMAT
    );
    assert!(text.contains(&unusable), "{text}");
    let without = vodpack(&["inspect", name, "--root", &root_arg], &[]);
    assert!(!String::from_utf8_lossy(&without.stdout).contains("index tier"));
    // Nothing written: the disk tier holds the one object, the store the corrupt one.
    assert_eq!(std::fs::read_dir(disk.path()).unwrap().count(), 1);
    assert_eq!(
        std::fs::read(store.join(&object)).unwrap(),
        b"VPIX not an index"
    );
}
