//! Serving from S3-compatible object storage, told as stories against a real S3
//! server on 127.0.0.1 (s3s-fs, signatures checked; see `common/s3.rs`): the same bytes
//! as the local folder, few GETs for metadata and segments, over-read within budget on a
//! long asset, replaced objects never mixed, and faults answered, not fatal.
//!
//! GETs and bytes are counted at the S3 server. No assertion depends on elapsed time;
//! waits are bounded loops. `tokio::time::pause` is not used: the servers here do real
//! socket and file I/O, and a paused clock would jump past the client's timeouts while
//! that I/O is in flight.

mod common;
#[path = "common/s3.rs"]
mod s3;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use common::{get, TempDir};
use s3::{S3Server, Tally, VodServer};
use vodpack::config::Settings;
use vodpack::media::{load_index, load_index_report, FragmentDiscovery, MediaLimits};
use vodpack::package::{prepare_media_segment, Title};
use vodpack::source::{
    LocalMediaSource, MediaSource, ObjectKey, ObjectStoreOptions, OVER_READ_BUDGET_BYTES,
};

const BUCKET: &str = "media";
const MAIN: &str = "h264-aac-3s.mp4";
const MOOV_END: &str = "h264-aac-3s-moov-end.mp4";

/// A folder holding bucket `media` with `files` (key, fixture name) copied in, and the
/// S3 server over it. The bucket folder doubles as a local root for comparisons.
async fn bucket_with(files: &[(&str, &str)]) -> (TempDir, S3Server) {
    let dir = TempDir::new("s3");
    for (key, fixture) in files {
        let to = dir.path().join(BUCKET).join(key);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(common::fixtures().join(fixture), &to).expect("copy fixture");
    }
    std::fs::create_dir_all(dir.path().join(BUCKET)).expect("bucket");
    let server = S3Server::start(dir.path()).await;
    (dir, server)
}

/// Settings with 1 s segments (more segments per fixture).
fn one_second() -> Settings {
    common::segments_of(1000)
}

/// vodpack over the bucket of `s3` with `options`.
async fn vod_over(s3: &S3Server, options: ObjectStoreOptions, settings: Settings) -> VodServer {
    VodServer::start(Arc::new(s3.source(BUCKET, options)), settings).await
}

/// Characters percent-encoded in a key's path segments (and every non-ASCII byte).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'?');

/// `/vod/KEY/` with each segment of `key` percent-encoded.
fn vod_base(key: &str) -> String {
    let encoded: Vec<String> = key
        .split('/')
        .map(|s| percent_encoding::utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    format!("/vod/{}/", encoded.join("/"))
}

/// Every resource of a title: master, MPD, media playlists, inits and segments, found by
/// following the playlists from `master.m3u8`, in a stable order.
async fn every_resource(addr: SocketAddr, key: &str) -> Vec<String> {
    let base = vod_base(key);
    let master = format!("{base}master.m3u8");
    let mut all = vec![master.clone(), format!("{base}manifest.mpd")];
    common::add_linked(addr, &master, &mut all).await;
    all
}

/// The version folder (`v` + 16 hex digits) of a path or body replaced by `vTOKEN`: the
/// token hashes the object's identity, which is an mtime locally and an ETag in a bucket,
/// so it differs by design between the two sources of the same bytes.
fn without_version_token(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut out = String::with_capacity(text.len());
    let mut rest: &str = &text;
    while let Some(at) = rest.find('v') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let token = from.get(1..17).unwrap_or_default();
        if token.len() == 16
            && token
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && from.get(17..18) == Some("/")
        {
            out.push_str("vTOKEN");
            rest = &from[17..];
        } else {
            out.push('v');
            rest = &from[1..];
        }
    }
    out.push_str(rest);
    out.into_bytes()
}

/// The same resource on the local and the S3 vodpack: the path with the S3 title's
/// version token in place of the local one.
fn s3_path(local_path: &str, local_token: &str, s3_token: &str) -> String {
    local_path.replace(local_token, s3_token)
}

/// The version token in the first version folder of `text`.
fn version_token(text: &str) -> String {
    let marked = without_version_token(text.as_bytes());
    let marked = String::from_utf8_lossy(&marked);
    let at = marked.find("vTOKEN/").expect("a version folder");
    // Same offset in the original: everything before it was copied unchanged.
    text[at + 1..at + 17].to_owned()
}

/// Given the two layouts of one file (moov first, moov last) and a nested key with a space
/// and UTF-8, when every resource is fetched from a local folder and from a bucket holding
/// the same files, then every answer is the same bytes (manifests up to the version token,
/// which hashes the object's identity).
#[tokio::test]
async fn a_bucket_serves_the_same_bytes_as_the_local_folder() {
    let nested = "dir/vidéo 1.mp4";
    let (dir, s3) = bucket_with(&[(MAIN, MAIN), (MOOV_END, MOOV_END), (nested, MAIN)]).await;
    let local = common::start_server_with(&dir.path().join(BUCKET), one_second()).await;
    let bucket = vod_over(&s3, ObjectStoreOptions::default(), one_second()).await;
    for key in [MAIN, MOOV_END, nested] {
        let resources = every_resource(local.addr, key).await;
        assert!(resources.len() >= 10, "{key}: {resources:?}");
        let master = format!("{}master.m3u8", vod_base(key));
        let local_token = version_token(&get(local.addr, &master).await.text());
        let s3_token = version_token(&get(bucket.addr, &master).await.text());
        let segments = resources.iter().filter(|r| r.ends_with(".m4s")).count();
        for path in &resources {
            let mine = get(local.addr, path).await;
            let theirs = get(bucket.addr, &s3_path(path, &local_token, &s3_token)).await;
            assert_eq!(mine.status, 200, "local {path}");
            assert_eq!(theirs.status, 200, "s3 {path}: {}", theirs.text());
            assert!(
                without_version_token(&mine.body) == without_version_token(&theirs.body),
                "{key}: {path} differs"
            );
            if path.ends_with(".m4s") || path.ends_with(".mp4") {
                assert_eq!(mine.body, theirs.body, "{key}: {path}");
            }
        }
        eprintln!(
            "{key}: {} resources, {segments} segments identical",
            resources.len()
        );
    }
    bucket.shutdown().await;
    local.shutdown().await;
}

/// The sample index of `fixture` read from the fixtures folder, planned with `segment_ms`.
async fn local_title(folder: &Path, key: &str, segment_ms: u32) -> Title {
    let source: Arc<dyn MediaSource> = Arc::new(LocalMediaSource::new(folder).expect("root"));
    let key = ObjectKey::parse(key).expect("key");
    let identity = source.identify(&key).await.expect("identity");
    let index = load_index(&source, &key, &identity, &MediaLimits::default())
        .await
        .expect("index");
    Title::new(index, segment_ms).expect("title")
}

/// What one segment cost at the S3 server.
#[derive(Debug)]
struct SegmentCost {
    /// Position of its track in the title.
    track: usize,
    /// Contiguous byte runs of the segment's samples in the file.
    runs: usize,
    /// GETs the server received for it.
    gets: u64,
    /// Bytes the server sent minus the segment's payload.
    over_read: u64,
    /// Bytes the server sent, and the segment's payload.
    sent: u64,
    payload: u64,
}

/// Fetch every media segment of `key` (each track, in order) from `vod`, and what each
/// cost at `s3`, against the plan of `title`.
async fn fetch_every_segment(
    vod: &VodServer,
    s3: &S3Server,
    key: &str,
    title: &Title,
) -> Vec<SegmentCost> {
    let base = vod_base(key);
    // The bucket's title has its own version token (it hashes the ETag, not the mtime).
    let (status, token) = current_token(vod, key).await;
    assert_eq!(status, 200);
    let token = token.expect("token");
    let mut costs = Vec::new();
    for (track_pos, track) in title.index.tracks.iter().enumerate() {
        for segment in 0..title.plan.segment_count {
            let prepared = prepare_media_segment(&title.index, &title.plan, track_pos, segment)
                .expect("prepared");
            if prepared.payload_bytes == 0 {
                continue;
            }
            let path = format!("{base}v{token}/seg-t{}-{}.m4s", track.track_id, segment + 1);
            let before = s3.tally();
            let reply = get(vod.addr, &path).await;
            let spent: Tally = s3.tally() - before;
            assert_eq!(reply.status, 200, "{path}: {}", reply.text());
            assert_eq!(reply.body.len() as u64, prepared.content_length(), "{path}");
            costs.push(SegmentCost {
                track: track_pos,
                runs: prepared.ranges.len(),
                gets: spent.gets,
                over_read: spent.get_bytes.saturating_sub(prepared.payload_bytes),
                sent: spent.get_bytes,
                payload: prepared.payload_bytes,
            });
        }
    }
    costs
}

/// Print the GET and over-read figures of a run of segments (for the note).
fn report(what: &str, costs: &[SegmentCost]) {
    let n = costs.len().max(1) as u64;
    let gets: u64 = costs.iter().map(|c| c.gets).sum();
    let runs: usize = costs.iter().map(|c| c.runs).sum();
    let over: u64 = costs.iter().map(|c| c.over_read).sum();
    eprintln!(
        "{what}: {} segments, {runs} contiguous runs, {gets} GETs (max {} per segment), \
         over-read {} B per segment on average, {} B at most",
        costs.len(),
        costs.iter().map(|c| c.gets).max().unwrap_or(0),
        over / n,
        costs.iter().map(|c| c.over_read).max().unwrap_or(0),
    );
}

/// Given a faststart file in a bucket, when a fresh vodpack loads its metadata, then it
/// takes one GET and no HEAD (the GET of the probe brings the identity, ftyp and moov);
/// and when every segment of the interleaved audio/video file is fetched (each track in
/// turn), each takes at most one GET per contiguous run of its samples: exactly one per
/// run with merging off; with the default gap merging fewer, reading at most the
/// over-read budget beyond the payload, and the second track's segments are taken from
/// the first track's reads, which read through them.
#[tokio::test]
async fn metadata_takes_two_gets_at_most_and_a_segment_one_get_per_run_at_most() {
    let (dir, s3) = bucket_with(&[(MAIN, MAIN)]).await;
    let title = local_title(&dir.path().join(BUCKET), MAIN, 1000).await;
    for (label, gap) in [("merging off", 0u64), ("default merging", 65_536)] {
        let options = ObjectStoreOptions {
            max_merge_gap_bytes: gap,
            ..Default::default()
        };
        let vod = vod_over(&s3, options, one_second()).await;
        let before = s3.tally();
        let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(MAIN))).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let spent = s3.tally() - before;
        assert_eq!((spent.gets, spent.heads), (1, 0), "metadata took {spent:?}");
        eprintln!("{label}: metadata {} GET, {} HEAD", spent.gets, spent.heads);
        let shared_before = vod.counters().shared_bytes.get();
        let costs = fetch_every_segment(&vod, &s3, MAIN, &title).await;
        assert!(costs.len() >= 6, "{costs:?}");
        for cost in &costs {
            assert!(cost.gets as usize <= cost.runs, "{cost:?}");
            assert!(cost.over_read <= OVER_READ_BUDGET_BYTES, "{cost:?}");
            if gap == 0 {
                assert_eq!(cost.gets as usize, cost.runs, "{cost:?}");
                assert_eq!(cost.over_read, 0, "{cost:?}");
            }
        }
        let shared = vod.counters().shared_bytes.get() - shared_before;
        let second_track: Vec<&SegmentCost> = costs.iter().filter(|c| c.track == 1).collect();
        let gets: u64 = second_track.iter().map(|c| c.gets).sum();
        let runs: usize = second_track.iter().map(|c| c.runs).sum();
        if gap == 0 {
            // Nothing read through, nothing to take.
            assert_eq!(shared, 0);
        } else {
            assert!(
                shared > 0 && (gets as usize) < runs,
                "{gets} GETs for {runs} runs"
            );
        }
        report(&format!("{MAIN}, 1 s segments, {label}"), &costs);
        vod.shutdown().await;
    }
}

/// Given files with CEA-608 captions made here (`common::captioned`; skipped without
/// ffmpeg), when a fresh vodpack serves each one's first master from the bucket, then it
/// announces CC1 and CC3 and the caption scan costs no GET: a faststart file takes one
/// GET (its head holds `moov` and the first samples), one with `moov` at the end two (the
/// head holds the first samples, the tail `moov`), and a faststart file whose `moov` runs
/// past a small head two (the rest of `moov` and the first samples after it in one GET),
/// as many as a file without captions takes.
#[tokio::test]
async fn a_captioned_titles_first_master_costs_no_more_gets() {
    if !common::have_tool("ffmpeg") {
        return;
    }
    use common::captioned::{make_files, CAPTIONED, CAPTIONED_MOOV_END, PLAIN};
    let dir = TempDir::new("s3-captions");
    let bucket = dir.path().join(BUCKET);
    std::fs::create_dir_all(&bucket).expect("bucket");
    let made = bucket.clone();
    tokio::task::spawn_blocking(move || make_files(&made))
        .await
        .expect("files made");
    let s3 = S3Server::start(dir.path()).await;
    // The files are about 80 KB: heads of 64 KiB leave `moov` at the end out of the
    // first GET, as the default 256 KiB does for a real title; one of 1 KiB is smaller
    // than the faststart file's `moov` (about 3 KB after `ftyp`).
    let (head, small) = (64 * 1024, 1024);
    for (key, head, announced) in [
        (PLAIN, head, false),
        (CAPTIONED, head, true),
        (CAPTIONED_MOOV_END, head, true),
        (CAPTIONED, small, true),
    ] {
        let options = ObjectStoreOptions {
            open_read_bytes: head,
            ..Default::default()
        };
        let mut settings = one_second();
        settings.limits.probe_bytes = head;
        let vod = vod_over(&s3, options, settings).await;
        let before = s3.tally();
        let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(key))).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let spent = s3.tally() - before;
        let master = reply.text();
        eprintln!(
            "{key} (head {}): first master {} GET, {} HEAD, {} bytes; captions announced: {}",
            if head > 0 {
                head.to_string()
            } else {
                "default".to_owned()
            },
            spent.gets,
            spent.heads,
            spent.get_bytes,
            master.contains("INSTREAM-ID=\"CC1\"")
        );
        let want = match (key, head) {
            (CAPTIONED_MOOV_END, _) | (_, 1024) => 2,
            _ => 1,
        };
        assert_eq!((spent.gets, spent.heads), (want, 0), "{key}: {spent:?}");
        assert_eq!(
            master.contains("INSTREAM-ID=\"CC1\"") && master.contains("INSTREAM-ID=\"CC3\""),
            announced,
            "{key}: {master}"
        );
        vod.shutdown().await;
    }
}

/// Given ten copies of the captioned faststart file whose `moov` runs past a 1 KiB head,
/// when one vodpack serves each one's first master in turn, then the first opens take two
/// GETs (the head, then the rest of `moov` with the first samples after it), and once
/// the open has learned from them (after eight) one: the learned head brings `moov` and
/// the samples the caption scan reads, and the captions are still announced.
#[tokio::test]
async fn the_open_learns_to_bring_the_scanned_samples_in_its_first_get() {
    if !common::have_tool("ffmpeg") {
        return;
    }
    use common::captioned::{make_files, CAPTIONED};
    let dir = TempDir::new("s3-captions-learn");
    let bucket = dir.path().join(BUCKET);
    std::fs::create_dir_all(&bucket).expect("bucket");
    let made = bucket.clone();
    tokio::task::spawn_blocking(move || make_files(&made))
        .await
        .expect("files made");
    let keys: Vec<String> = (0..10).map(|n| format!("copy-{n}.mp4")).collect();
    for key in &keys {
        std::fs::copy(bucket.join(CAPTIONED), bucket.join(key)).expect("copy");
    }
    let s3 = S3Server::start(dir.path()).await;
    let options = ObjectStoreOptions {
        open_read_bytes: 1024,
        ..Default::default()
    };
    let mut settings = one_second();
    settings.limits.probe_bytes = 1024;
    let vod = vod_over(&s3, options, settings).await;
    let mut gets = Vec::new();
    for key in &keys {
        let before = s3.tally();
        let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(key))).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert!(reply.text().contains("INSTREAM-ID=\"CC3\""), "{key}");
        gets.push((s3.tally() - before).gets);
    }
    eprintln!("first master GETs, one title after another: {gets:?}");
    assert_eq!(gets[..8], [2; 8]);
    assert_eq!(gets[9], 1, "{gets:?}");
    vod.shutdown().await;
}

/// Given a 5-minute interleaved file (the 3 s fixture concatenated 100 times, stream copy),
/// when all of its 1 s segments (about 300 per track) are fetched from a bucket, then each
/// reads at most 256 KiB beyond its payload and takes at most one GET per contiguous run,
/// and the source's counters agree with the server's byte count: what it sent is the
/// payloads, less what segments took from each other's reads, plus the over-read.
#[tokio::test]
async fn over_read_stays_within_budget_over_300_segments_of_a_long_asset() {
    let ok = tokio::task::spawn_blocking(|| common::have_tool("ffmpeg"))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    if !ok {
        return;
    }
    let (dir, s3) = bucket_with(&[]).await;
    let bucket_dir = dir.path().join(BUCKET);
    let list = dir.path().join("concat.txt");
    let fixture = common::fixtures().join(MAIN);
    let lines = format!("file '{}'\n", fixture.display()).repeat(100);
    std::fs::write(&list, lines).expect("concat list");
    let long = bucket_dir.join("long.mp4");
    let (list_arg, long_arg) = (list.clone(), long.clone());
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "concat", "-safe", "0", "-i"])
            .arg(&list_arg)
            .args(["-c", "copy", "-movflags", "+faststart"])
            .arg(&long_arg)
            .status()
    })
    .await
    .expect("join")
    .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg concat failed");
    let title = local_title(&bucket_dir, "long.mp4", 1000).await;
    assert!(
        title.plan.segment_count >= 290,
        "{}",
        title.plan.segment_count
    );
    let vod = vod_over(&s3, ObjectStoreOptions::default(), one_second()).await;
    let reply = get(vod.addr, &format!("{}master.m3u8", vod_base("long.mp4"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let counters = vod.counters();
    let (over_read_before, shared_before) =
        (counters.over_read_bytes.get(), counters.shared_bytes.get());
    let costs = fetch_every_segment(&vod, &s3, "long.mp4", &title).await;
    assert!(costs.len() >= 300, "{} segments", costs.len());
    for cost in &costs {
        assert!(cost.over_read <= OVER_READ_BUDGET_BYTES, "{cost:?}");
        assert!(cost.gets as usize <= cost.runs, "{cost:?}");
    }
    let sent: u64 = costs.iter().map(|c| c.sent).sum();
    let payload: u64 = costs.iter().map(|c| c.payload).sum();
    let over_read = counters.over_read_bytes.get() - over_read_before;
    let shared = counters.shared_bytes.get() - shared_before;
    assert_eq!(sent + shared, payload + over_read);
    report("long.mp4 (300 s), 1 s segments, default merging", &costs);
    vod.shutdown().await;
}

/// Given the main fixture's content concatenated 20 times (60 s, a keyframe every second)
/// and written fragmented three ways (a fragment per second: with a `sidx`, with only an
/// `mfra`, with neither), when each index is loaded cold from a bucket, then it equals the
/// index read from the local folder, the fragments are found the way the file allows, and
/// the reads stay few: with an index, one batch of reads whatever the fragment count (one
/// round trip; the store still needs a GET per fragment header that lies far from the
/// next, as no GET can skip the `mdat` between them); without one, the walk reads ahead,
/// one round trip per read. The figures are printed for docs/performance.md.
#[tokio::test]
async fn a_fragmented_index_loads_in_few_gets_with_sidx_mfra_or_walk() {
    let ok = tokio::task::spawn_blocking(|| common::have_tool("ffmpeg"))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    if !ok {
        return;
    }
    let (dir, s3) = bucket_with(&[]).await;
    let bucket_dir = dir.path().join(BUCKET);
    let list = dir.path().join("concat.txt");
    let fixture = common::fixtures().join(MAIN);
    std::fs::write(&list, format!("file '{}'\n", fixture.display()).repeat(20)).expect("list");
    let variants = [
        (
            "frag-sidx.mp4",
            "frag_keyframe+empty_moov+default_base_moof+global_sidx",
            FragmentDiscovery::Sidx,
        ),
        (
            "frag-mfra.mp4",
            "frag_keyframe+empty_moov",
            FragmentDiscovery::Mfra,
        ),
        (
            "frag-walk.mp4",
            "frag_keyframe+empty_moov+skip_trailer",
            FragmentDiscovery::Walk,
        ),
    ];
    for (key, flags, _) in variants {
        let (list_arg, out) = (list.clone(), bucket_dir.join(key));
        let status = tokio::task::spawn_blocking(move || {
            std::process::Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-f", "concat", "-safe", "0", "-i"])
                .arg(&list_arg)
                .args(["-map", "0", "-c", "copy", "-movflags", flags])
                .arg(&out)
                .status()
        })
        .await
        .expect("join")
        .expect("run ffmpeg");
        assert!(status.success(), "ffmpeg {flags} failed");
    }
    let source: Arc<dyn MediaSource> = Arc::new(s3.source(BUCKET, ObjectStoreOptions::default()));
    for (key, _, discovery) in variants {
        let local = local_title(&bucket_dir, key, 6000).await;
        let object = ObjectKey::parse(key).expect("key");
        let identity = source.identify(&object).await.expect("identity");
        let before = s3.tally();
        let (index, report) =
            load_index_report(&source, &object, &identity, &MediaLimits::default())
                .await
                .expect("index");
        let spent = s3.tally() - before;
        let fragments = report.fragments.expect("a fragmented file");
        eprintln!(
            "{key} ({} bytes, {} fragments, found by {}): index in {} GETs ({} bytes); \
             moov {} reads, fragments {} reads of {} ranges ({} bytes)",
            identity.size,
            fragments.fragments,
            fragments.discovery.as_str(),
            spent.gets,
            spent.get_bytes,
            report.moov_reads,
            fragments.reads,
            fragments.ranges,
            fragments.bytes,
        );
        assert_eq!(fragments.discovery, discovery, "{key}");
        assert!(fragments.fragments >= 60, "{key}: {fragments:?}");
        for (a, b) in index.tracks.iter().zip(&local.index.tracks) {
            assert_eq!(a.samples, b.samples, "{key}: track {}", a.track_id);
        }
        // At most one GET per fragment header (plus the probe, moov and the end of the
        // file): never one per box, and fewer where fragments lie close together.
        assert!(
            spent.gets <= u64::from(fragments.fragments) + 3,
            "{key}: {} GETs for {fragments:?}",
            spent.gets
        );
        match discovery {
            // The probe, then one batch (plus the end of the file for mfra).
            FragmentDiscovery::Sidx => assert!(fragments.reads <= 1, "{key}: {fragments:?}"),
            FragmentDiscovery::Mfra => assert!(fragments.reads <= 2, "{key}: {fragments:?}"),
            FragmentDiscovery::Walk => {}
        }
    }
}

/// Replace the object `key` of the bucket folder with `fixture`, atomically (as a PUT
/// would: readers see the old bytes or the new, never a mix).
fn replace_object(dir: &TempDir, key: &str, fixture: &str) {
    let to = dir.path().join(BUCKET).join(key);
    let staged = dir.path().join("staged.mp4");
    std::fs::copy(common::fixtures().join(fixture), &staged).expect("stage");
    std::fs::rename(&staged, &to).expect("replace");
}

/// The bytes of `resource` (a name under the version folder) of `fixture` as the local
/// source serves them with 1 s segments.
async fn local_bytes(fixture: &str, resource: &str) -> Vec<u8> {
    let local = common::start_server_with(&common::fixtures(), one_second()).await;
    let base = vod_base(fixture);
    let master = get(local.addr, &format!("{base}master.m3u8")).await.text();
    let token = version_token(&master);
    let reply = get(local.addr, &format!("{base}v{token}/{resource}")).await;
    assert_eq!(reply.status, 200, "{resource}");
    local.shutdown().await;
    reply.body
}

/// GET `path` and read what arrives until the server closes, tolerating a connection the
/// server cuts: (status, Content-Length, body bytes received).
async fn get_lenient(addr: SocketAddr, path: &str) -> (u16, Option<u64>, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    // Bounded: each read makes progress or ends the loop.
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    });
    (status, length, raw[split + 4..].to_vec())
}

/// The version token of `key`'s title as `vod` serves it now.
async fn current_token(vod: &VodServer, key: &str) -> (u16, Option<String>) {
    let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(key))).await;
    let token = (reply.status == 200).then(|| version_token(&reply.text()));
    (reply.status, token)
}

/// Given a title whose identity vodpack holds for an hour, when the object is replaced in
/// the bucket, then a segment read of the old version fails (the GET's If-Match does not
/// match, so no new byte is sent under the old name: a 503, or an answer cut short), the
/// failure makes vodpack ask again, and the next requests serve the new object's bytes.
#[tokio::test]
async fn a_replaced_object_is_never_mixed_and_then_served_fresh() {
    let (dir, s3) = bucket_with(&[("title.mp4", MAIN)]).await;
    let options = ObjectStoreOptions {
        identity_ttl_ms: 3_600_000,
        ..Default::default()
    };
    let vod = vod_over(&s3, options, one_second()).await;
    let (status, old_token) = current_token(&vod, "title.mp4").await;
    assert_eq!(status, 200);
    let old_token = old_token.expect("token");
    let segment = format!("{}v{old_token}/seg-t1-2.m4s", vod_base("title.mp4"));
    let first = get(vod.addr, &segment).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.body, local_bytes(MAIN, "seg-t1-2.m4s").await);

    replace_object(&dir, "title.mp4", "h264-bframes-editlist-aac.mp4");
    let (status, length, body) = get_lenient(vod.addr, &segment).await;
    // The GET for the payload carried If-Match with the old ETag, and the bucket refused.
    assert!(s3.tally().precondition_failures >= 1);
    match status {
        // Refused before the answer started.
        503 => {}
        // Refused after the 200 head went out (the payload is read as it streams): the
        // answer is cut short, and what arrived is the old segment's start, nothing new.
        200 => {
            assert!((body.len() as u64) < length.unwrap_or(0), "a whole answer");
            assert_eq!(body[..], first.body[..body.len()]);
        }
        other => panic!("stale read answered {other}"),
    }

    let (status, new_token) = current_token(&vod, "title.mp4").await;
    assert_eq!(status, 200);
    let new_token = new_token.expect("token");
    assert_ne!(new_token, old_token);
    let fresh = get(
        vod.addr,
        &format!("{}v{new_token}/seg-t1-2.m4s", vod_base("title.mp4")),
    )
    .await;
    assert_eq!(fresh.status, 200);
    assert_eq!(
        fresh.body,
        local_bytes("h264-bframes-editlist-aac.mp4", "seg-t1-2.m4s").await
    );
    vod.shutdown().await;
}

/// Given a short identity staleness window, when the object is replaced, then every answer
/// is wholly the old title or wholly the new one, and once the window has passed (a
/// bounded number of tries) the new one is served.
#[tokio::test]
async fn a_replaced_object_is_served_fresh_after_the_staleness_window() {
    let (dir, s3) = bucket_with(&[("title.mp4", MAIN)]).await;
    let options = ObjectStoreOptions {
        identity_ttl_ms: 50,
        ..Default::default()
    };
    let vod = vod_over(&s3, options, one_second()).await;
    let (_, old_token) = current_token(&vod, "title.mp4").await;
    let old_token = old_token.expect("token");
    replace_object(&dir, "title.mp4", "h264-bframes-editlist-aac.mp4");
    let mut fresh = None;
    for _ in 0..200 {
        let (status, token) = current_token(&vod, "title.mp4").await;
        assert_eq!(status, 200);
        if token.as_deref() != Some(old_token.as_str()) {
            fresh = token;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let fresh = fresh.expect("the new object is served after the window");
    let init = get(
        vod.addr,
        &format!("{}v{fresh}/init-t1.mp4", vod_base("title.mp4")),
    )
    .await;
    assert_eq!(init.status, 200);
    assert_eq!(
        init.body,
        local_bytes("h264-bframes-editlist-aac.mp4", "init-t1.mp4").await
    );
    vod.shutdown().await;
}

/// Given a bucket that answers the next request with a 500, when a title is requested,
/// then vodpack retries and answers 200, and counts the retry.
#[tokio::test]
async fn a_server_error_once_is_retried_transparently() {
    let (_dir, s3) = bucket_with(&[(MAIN, MAIN)]).await;
    let vod = vod_over(&s3, ObjectStoreOptions::default(), one_second()).await;
    s3.fail_next(1);
    let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(MAIN))).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(s3.tally().injected_500s, 1);
    assert_eq!(vod.counters().read_retries.get(), 1);
    let metrics = get(vod.addr, "/metrics").await.text();
    assert!(
        metrics.contains("vod_source_read_retries_total{source_kind=\"object_store\"} 1"),
        "{metrics}"
    );
    vod.shutdown().await;
}

/// Given a bucket that stops answering, when a title is requested, then vodpack answers
/// 504 once its source timeout has passed (the status is asserted, not the time), answers
/// its health check meanwhile, and serves again once the bucket does.
#[tokio::test]
async fn a_stalled_server_gives_504_and_vodpack_keeps_answering() {
    let (_dir, s3) = bucket_with(&[(MAIN, MAIN)]).await;
    let options = ObjectStoreOptions {
        timeout_ms: 300,
        ..Default::default()
    };
    let vod = vod_over(&s3, options, one_second()).await;
    s3.set_stall(true);
    let master = format!("{}master.m3u8", vod_base(MAIN));
    let (stalled, health) = tokio::join!(get(vod.addr, &master), get(vod.addr, "/healthz"));
    assert_eq!(stalled.status, 504, "{}", stalled.text());
    assert_eq!(stalled.text().lines().count(), 1);
    assert_eq!(health.status, 200);
    s3.set_stall(false);
    let reply = get(vod.addr, &master).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    vod.shutdown().await;
}

/// Given a bucket endpoint where nothing listens, when a title is requested, then vodpack
/// answers 502 after its retries, and keeps answering other requests.
#[tokio::test]
async fn a_server_that_is_down_gives_502() {
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        listener.local_addr().expect("addr")
    };
    let options = ObjectStoreOptions {
        retries: 1,
        ..Default::default()
    };
    let source = s3::s3_source(&format!("http://{closed}"), BUCKET, options, s3::SECRET_KEY);
    let vod = VodServer::start(Arc::new(source), one_second()).await;
    let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(MAIN))).await;
    assert_eq!(reply.status, 502, "{}", reply.text());
    assert_eq!(reply.text().lines().count(), 1);
    assert_eq!(get(vod.addr, "/healthz").await.status, 200);
    assert!(vod.counters().read_errors.get() >= 1);
    vod.shutdown().await;
}

/// Given credentials the bucket refuses (403), when a title is requested, then vodpack
/// answers a 5xx whose body names neither the bucket nor the endpoint.
#[tokio::test]
async fn access_denied_is_a_5xx_without_bucket_details() {
    let (dir, s3) = bucket_with(&[]).await;
    let bucket = "private-bucket-7f3a";
    std::fs::create_dir_all(dir.path().join(bucket)).expect("bucket");
    std::fs::copy(
        common::fixtures().join(MAIN),
        dir.path().join(bucket).join(MAIN),
    )
    .expect("copy fixture");
    let source = s3.source_with_secret(bucket, ObjectStoreOptions::default(), "wrong-secret");
    let vod = VodServer::start(Arc::new(source), one_second()).await;
    let reply = get(vod.addr, &format!("{}master.m3u8", vod_base(MAIN))).await;
    assert!((500..600).contains(&reply.status), "{}", reply.status);
    let body = reply.text();
    assert_eq!(body.lines().count(), 1);
    for secret in [bucket, &s3.addr.to_string(), "AccessDenied", "Signature"] {
        assert!(!body.contains(secret), "{body}");
    }
    assert!(s3.seen().iter().any(|seen| seen.status == 403));
    vod.shutdown().await;
}

/// Given a key with no object behind it, the answer is 404.
#[tokio::test]
async fn a_missing_object_is_404() {
    let (_dir, s3) = bucket_with(&[(MAIN, MAIN)]).await;
    let vod = vod_over(&s3, ObjectStoreOptions::default(), one_second()).await;
    let reply = get(vod.addr, "/vod/no-such-title.mp4/master.m3u8").await;
    assert_eq!(reply.status, 404, "{}", reply.text());
    vod.shutdown().await;
}

/// Given three replicas over one bucket, when the bucket stops answering (its server
/// stopped), then every replica stays ready (200, `degraded` with the reason: a shared
/// bucket's outage must not empty the load balancer), media requests answer a 5xx with a
/// one-line reason, and each replica's `vod_source_up` falls to 0 while its
/// `vod_source_check_failures_total` rises: what the shipped alert watches.
#[tokio::test]
async fn a_bucket_outage_keeps_every_replica_ready_and_raises_the_source_metric() {
    let (_dir, s3) = bucket_with(&[(MAIN, MAIN), (MOOV_END, MOOV_END)]).await;
    let options = ObjectStoreOptions {
        retries: 0,
        timeout_ms: 1000,
        identity_ttl_ms: 0,
        ..Default::default()
    };
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(vod_over(&s3, options.clone(), one_second()).await);
    }
    for vod in &replicas {
        let ready = get(vod.addr, "/readyz").await;
        assert_eq!((ready.status, ready.text().as_str()), (200, "ready\n"));
        let master = get(vod.addr, &format!("{}master.m3u8", vod_base(MAIN))).await;
        assert_eq!(master.status, 200);
    }
    drop(s3);
    for vod in &replicas {
        let ready = get(vod.addr, "/readyz").await;
        assert_eq!(ready.status, 200, "still in the load balancer");
        assert!(
            ready
                .text()
                .starts_with("ready, degraded: media source unreachable"),
            "{}",
            ready.text()
        );
        let media = get(vod.addr, &format!("{}master.m3u8", vod_base(MOOV_END))).await;
        assert!(
            matches!(media.status, 502..=504),
            "{} {}",
            media.status,
            media.text()
        );
        assert_eq!(media.text().lines().count(), 1, "{}", media.text());
        let metrics = get(vod.addr, "/metrics").await.text();
        assert!(metrics.contains("vod_source_up 0"), "{metrics}");
        assert!(
            metrics.contains("vod_source_check_failures_total 1"),
            "{metrics}"
        );
    }
    for vod in replicas {
        vod.shutdown().await;
    }
}
