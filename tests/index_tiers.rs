//! The index tiers under the memory cache, told as stories: a restarted
//! replica loads a title from its disk tier, a new one from the store tier every replica
//! shares (a real S3 server on 127.0.0.1, s3s-fs), neither reading the `moov`; and an index
//! object that is corrupt, truncated, foreign or oversized is rebuilt from the `moov` and
//! written again, never served. Every answer is compared byte for byte with a server
//! without tiers. Waits are bounded loops; no assertion depends on elapsed time.

mod common;
#[path = "common/s3.rs"]
mod s3;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{get, TempDir};
use s3::{s3_shelf, S3Server, VodServer};
use vodpack::config::Settings;
use vodpack::media::{decode_index, encode_index, load_index, max_index_bytes, MediaLimits};
use vodpack::server::titles::tiers::object_name;
use vodpack::server::IndexShelves;
use vodpack::source::{
    LocalMediaSource, MediaSource, ObjectIdentity, ObjectKey, ObjectStoreOptions, Shelf,
};

const MAIN: &str = "h264-aac-3s.mp4";
const OTHER: &str = "h264-bframes-editlist-aac.mp4";
const BUCKET: &str = "media";

/// Settings with 1 s segments (more segments per fixture).
fn one_second() -> Settings {
    common::segments_of(1000)
}

/// Every resource of `key`: both masters (CMAF and MPEG-TS), the MPD, the media
/// playlists, inits and segments they lead to.
async fn every_resource(addr: SocketAddr, key: &str) -> Vec<String> {
    let base = format!("/vod/{key}/");
    let mut all = vec![format!("{base}manifest.mpd")];
    for master in ["master.m3u8", "master-ts.m3u8"] {
        let master = format!("{base}{master}");
        all.push(master.clone());
        common::add_linked(addr, &master, &mut all).await;
    }
    all
}

/// Every answer of `key` from `server` is the bytes `tierless` answers.
async fn answers_as(server: SocketAddr, tierless: SocketAddr, key: &str) {
    let resources = every_resource(tierless, key).await;
    assert!(resources.len() > 12, "{resources:?}");
    for path in &resources {
        let want = get(tierless, path).await;
        let got = get(server, path).await;
        assert_eq!(got.status, want.status, "{path}");
        assert!(got.body == want.body, "{path}: bytes differ");
    }
}

/// `vod_index_loads_total{tier=...}` of `server`.
async fn loads(server: &VodServer, tier: &str) -> u64 {
    counter(server, &format!("vod_index_loads_total{{tier=\"{tier}\"}}")).await
}

/// The value of the counter line starting `series` in the server's metrics (0 if none).
async fn counter(server: &VodServer, series: &str) -> u64 {
    let text = server.app.render_metrics().await;
    (text.lines())
        .find_map(|l| l.strip_prefix(series))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A local source over `root`.
fn local(root: &Path) -> Arc<dyn MediaSource> {
    Arc::new(LocalMediaSource::new(root).expect("media folder"))
}

/// A server over `root` with the disk tier in `disk`.
async fn with_disk(root: &Path, disk: &Path, settings: Settings) -> VodServer {
    let shelves = IndexShelves {
        disk: Some(Shelf::folder(disk, Some(1 << 30)).expect("disk tier")),
        store: None,
    };
    VodServer::start_with(local(root), settings, shelves).await
}

/// Wait until `path` exists (the tiers are written after the answer); bounded.
async fn written(path: &Path) {
    for _ in 0..400 {
        if path.exists() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}

/// `key`'s identity in `source` and the name of its index object.
async fn name_of(source: &Arc<dyn MediaSource>, key: &str) -> (ObjectKey, ObjectIdentity, String) {
    let key = ObjectKey::parse(key).expect("key");
    let identity = source.identify(&key).await.expect("identity");
    let name = object_name(&key, &identity);
    (key, identity, name)
}

/// A folder holding copies of the fixtures `names`.
fn media(names: &[&str]) -> TempDir {
    let dir = TempDir::new("tiers-media");
    for name in names {
        std::fs::copy(common::fixtures().join(name), dir.path().join(name)).expect("copy");
    }
    dir
}

/// Given a replica with a disk tier that has loaded a title, when it is restarted on the
/// same folder, then its first master comes from the disk tier with no source read at all,
/// and every answer of the title is the tierless server's, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_replica_loads_from_its_disk_tier() {
    let root = media(&[MAIN]);
    let disk = TempDir::new("tiers-disk");
    let tierless = VodServer::start(local(root.path()), one_second()).await;

    let first = with_disk(root.path(), disk.path(), one_second()).await;
    let master = format!("/vod/{MAIN}/master.m3u8");
    assert_eq!(get(first.addr, &master).await.status, 200);
    assert_eq!(loads(&first, "moov").await, 1);
    let (_, _, name) = name_of(&local(root.path()), MAIN).await;
    written(&disk.path().join(&name)).await;
    first.shutdown().await;

    let restarted = with_disk(root.path(), disk.path(), one_second()).await;
    assert_eq!(get(restarted.addr, &master).await.status, 200);
    assert_eq!(restarted.counters().read_requests.get(), 0, "a source read");
    assert_eq!(loads(&restarted, "disk").await, 1);
    assert_eq!(loads(&restarted, "moov").await, 0);
    answers_as(restarted.addr, tierless.addr, MAIN).await;
    assert_eq!(loads(&restarted, "moov").await, 0);
    restarted.shutdown().await;
    tierless.shutdown().await;
}

/// A bucket folder holding `files`, and the S3 server over it.
async fn bucket_with(files: &[&str]) -> (TempDir, S3Server) {
    let dir = TempDir::new("tiers-s3");
    std::fs::create_dir_all(dir.path().join(BUCKET)).expect("bucket");
    for name in files {
        let to = dir.path().join(BUCKET).join(name);
        std::fs::copy(common::fixtures().join(name), to).expect("copy");
    }
    let server = S3Server::start(dir.path()).await;
    (dir, server)
}

/// Given one replica that loaded a title from a bucket with the store tier beside the
/// media, when a new replica (no disk tier) is asked for it, then it reads the index object
/// and not one byte of the media object to answer the master, counts a store load, and
/// answers every resource as a tierless replica does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_replica_loads_from_the_store_tier_without_the_moov() {
    let (dir, s3) = bucket_with(&[MAIN]).await;
    // With an index tier, an object is opened with a HEAD, not a GET of its first bytes
    // (`vodpack::ops::startup::open_read_bytes`).
    let options = ObjectStoreOptions {
        open_read_bytes: 0,
        ..ObjectStoreOptions::default()
    };
    let source = || Arc::new(s3.source(BUCKET, options.clone()));
    let store = || IndexShelves {
        disk: None,
        store: Some(s3_shelf(&s3.endpoint(), BUCKET, ".vodpack-index/")),
    };
    let tierless = VodServer::start(source(), one_second()).await;
    let first = VodServer::start_with(source(), one_second(), store()).await;
    let master = format!("/vod/{MAIN}/master.m3u8");
    assert_eq!(get(first.addr, &master).await.status, 200);
    assert_eq!(loads(&first, "moov").await, 1);
    let as_source: Arc<dyn MediaSource> = source();
    let (_, _, name) = name_of(&as_source, MAIN).await;
    let object = dir.path().join(BUCKET).join(".vodpack-index").join(&name);
    written(&object).await;

    let seen_before = s3.seen().len();
    let second = VodServer::start_with(source(), one_second(), store()).await;
    assert_eq!(get(second.addr, &master).await.status, 200);
    let seen: Vec<_> = s3.seen().into_iter().skip(seen_before).collect();
    let media_gets: Vec<_> = (seen.iter())
        .filter(|r| r.method == "GET" && r.path.ends_with(MAIN))
        .collect();
    assert!(
        media_gets.is_empty(),
        "the media object was read: {media_gets:?}"
    );
    assert!(
        seen.iter()
            .any(|r| r.method == "GET" && r.path.ends_with(&name)),
        "the index object was not read: {seen:?}"
    );
    assert_eq!(loads(&second, "store").await, 1);
    assert_eq!(loads(&second, "moov").await, 0);
    answers_as(second.addr, tierless.addr, MAIN).await;
    for server in [second, first, tierless] {
        server.shutdown().await;
    }
}

/// The four kinds of bad index object, each as bytes to put under the title's name.
async fn bad_objects(root: &Path, limits: &MediaLimits) -> Vec<(&'static str, Vec<u8>)> {
    let source = local(root);
    let (key, identity, _) = name_of(&source, MAIN).await;
    let index = load_index(&source, &key, &identity, limits)
        .await
        .expect("index");
    let sound = encode_index(&key, &index);
    let mut corrupt = sound.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0x01;
    let truncated = sound[..sound.len() * 2 / 3].to_vec();
    let (other_key, other_identity, _) = name_of(&source, OTHER).await;
    let other = load_index(&source, &other_key, &other_identity, limits)
        .await
        .expect("other index");
    let foreign = encode_index(&other_key, &other);
    let oversized = vec![0u8; usize::try_from(max_index_bytes(limits)).unwrap() + 1];
    vec![
        ("corrupt", corrupt),
        ("truncated", truncated),
        ("foreign", foreign),
        ("oversized", oversized),
    ]
}

/// Given an index object under the title's name that is corrupt (one bit), truncated, the
/// index of another file, or longer than the limits allow, when the title is asked for,
/// then the object is not used: the title is loaded from its `moov` (one rejection, one
/// `moov` load), every answer is the tierless server's, and the object is written again,
/// sound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_index_object_is_rebuilt_not_served() {
    let root = media(&[MAIN, OTHER]);
    // Limits small enough that an oversized object is a few MB, large enough for the files.
    let settings = Settings {
        limits: MediaLimits {
            max_samples_per_file: 4000,
            max_tracks: 4,
            ..MediaLimits::default()
        },
        ..one_second()
    };
    let tierless = VodServer::start(local(root.path()), settings.clone()).await;
    for (kind, bytes) in bad_objects(root.path(), &settings.limits).await {
        let disk = TempDir::new("tiers-bad");
        let source = local(root.path());
        let (key, identity, name) = name_of(&source, MAIN).await;
        let object: PathBuf = disk.path().join(&name);
        std::fs::write(&object, &bytes).expect("bad object");
        let server = with_disk(root.path(), disk.path(), settings.clone()).await;
        answers_as(server.addr, tierless.addr, MAIN).await;
        assert_eq!(loads(&server, "moov").await, 1, "{kind}");
        assert_eq!(loads(&server, "disk").await, 0, "{kind}");
        let rejected = counter(&server, "vod_index_rejected_total{tier=\"disk\"}").await;
        assert_eq!(rejected, 1, "{kind}");
        let mut rewritten = None;
        for _ in 0..400 {
            let now = std::fs::read(&object).unwrap_or_default();
            if let Ok(index) = decode_index(&now, &key, &identity, &settings.limits) {
                rewritten = Some(index);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        assert!(rewritten.is_some(), "{kind}: never rewritten sound");
        server.shutdown().await;
    }
    tierless.shutdown().await;
}
