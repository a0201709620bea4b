//! DASH conformance: every MPD the server writes for the fixtures (each media file and
//! title document under `fixtures/`, a sequence document and one with ad breaks written at
//! test time, in the default and the DVB profile, clear with trick play and storyboards,
//! and encrypted) is held to the MPD schema and the rules of ISO/IEC 23009-1, DASH-IF IOP
//! and, in the DVB profile, ETSI TS 103 285, as `mpd_rules` restates them; and each CMAF
//! track those MPDs name, a Representation's init segment and media segments joined, is
//! read by gpac's mp4box.js (`tests/players/isobmff_check.mjs`, the npm lock's pinned
//! `mp4box`), which reports what it finds wrong with every box, and checked there against
//! the structure CMAF asks of a track.
//!
//! Findings accepted for now are written down in one place, [`KNOWN_FAILURES`]. The track
//! test skips when node or the players' npm packages are missing, and fails instead under
//! `VODPACK_REQUIRE_TOOLS=1`.

#[path = "../common/mod.rs"]
mod common;
mod mpd_rules;
mod mpd_schema;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{TempDir, TestServer};
use vodpack::config::Settings;
use vodpack::crypto::{EncryptionPolicy, Secret};
use vodpack::media::DashProfile;

/// The longest any one run of an outside program may take before it is killed.
const TOOL_LIMIT: Duration = Duration::from_secs(300);
/// The sequence document written at test time over a copy of the ladder fixture: an
/// ident (one rung of the ladder) then the ladder title.
const SEQUENCE: &str = r#"{"parts": [{"file": "ladder-180p.mp4"}, {"title": "ladder.json"}]}"#;
/// A title document with ad breaks (SCTE-35 events in the MPD), written beside it.
const BREAKS: &str = r#"{"video": [{"file": "ladder-360p.mp4"}], "breaks": [
    {"id": "mid", "at": 2000, "duration": 15000, "asset_uri": "https://ads.example/a.m3u8"}]}"#;

/// A rule an MPD breaks for a reason written down, and which MPDs may break it.
struct KnownFailure {
    /// The start of the finding's text, or its rule.
    what: &'static str,
    /// Why it is accepted, and until when.
    why: &'static str,
    /// How many times an MPD (by its file name and text) may break it (0: not at all).
    allowed: fn(&str, &str) -> usize,
}

/// The one place accepted MPD findings are written down.
const KNOWN_FAILURES: &[KnownFailure] = &[
    KnownFailure {
        what: "live profile: no SegmentTemplate",
        why: "a whole-file WebVTT text Representation (`--dash-subtitle-format webvtt-file`, \
              for old players, asked for) names one .vtt by BaseURL: once per such \
              Representation; the default forms are segments",
        allowed: |_, mpd| mpd.matches("mimeType=\"text/vtt\"").count(),
    },
    KnownFailure {
        what: "DVB-DASH limits",
        why: "segments are cut at the source's keyframes: nv-sparse-keys-32s has 16 s between \
              them (one segment of 16 s per track, trick play too), and the two edit-list \
              fixtures have a keyframe or an edit half a second in (one short segment per \
              track); DVB wants 1 to 15 s. Re-encoding is not ours to do; an operator \
              serving DVB chooses sources with a keyframe at least every 15 s",
        allowed: |name, _| {
            let dvb = name.starts_with("dvb-");
            let tracks = if name.contains("nv-sparse-keys-32s") {
                3
            } else if name.contains("h264-aac-empty-edit-mid") {
                2
            } else if name.contains("h264-bframes-editlist-aac") {
                1
            } else {
                0
            };
            usize::from(dvb) * tracks
        },
    },
];

/// What the ISO BMFF check reports of a correct track: its reader's own faults.
const TRACK_KNOWN: &[(&str, &str)] = &[(
    "Parsing of box 'dfLa' read",
    "mp4box.js 2.4.1's dfLa reader (dist/mp4box.all.mjs) reads FLAC metadata blocks while \
     the last-block flag is set, the flag's meaning inverted, so a correct single \
     STREAMINFO block marked last (0x80) sends it past the box; ffprobe reads the track",
)];

/// Where the players' npm packages are, with the ISO BMFF script beside them.
fn players_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/players")
}

/// Whether node and the pinned `mp4box` package are here; a test skips without them, or
/// fails under `VODPACK_REQUIRE_TOOLS=1`.
fn have_mp4box() -> bool {
    if !common::have_program("node", "--version") {
        return false;
    }
    let installed = players_dir()
        .join("node_modules/mp4box/package.json")
        .is_file();
    let required = std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    assert!(
        installed || !required,
        "tests/players/node_modules/mp4box is required (VODPACK_REQUIRE_TOOLS=1): \
         `npm ci` in tests/players"
    );
    if !installed {
        eprintln!("skipping: tests/players/node_modules has no mp4box (`npm ci` there)");
    }
    installed
}

/// Run `program` with `args` (bounded, killed by its id past [`TOOL_LIMIT`]) and return
/// its exit success, stdout and stderr.
async fn run(program: &str, args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(program);
    command.args(args);
    let run = common::bounded::run_with_limit(command, TOOL_LIMIT).await;
    assert!(
        !run.timed_out,
        "{program} {args:?}: killed after {TOOL_LIMIT:?}"
    );
    let ok = run.status.is_some_and(|s| s.success());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (ok, text(&run.stdout), text(&run.stderr))
}

/// The value of attribute `name` in the first tag of `text` (which may start right at an
/// attribute, as after a split on `<Element `).
fn attribute<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let tag = text.split('>').next()?;
    let needle = format!("{name}=\"");
    let at = match tag.starts_with(&needle) {
        true => 0,
        false => tag.find(&format!(" {needle}"))? + 1,
    };
    let rest = tag.get(at + needle.len()..)?;
    rest.get(..rest.find('"')?)
}

/// A server over `root` with 1 s segments, storyboards signalled, in `profile`, encrypted
/// with `cenc` when asked.
async fn start(root: &Path, profile: DashProfile, encrypted: bool) -> TestServer {
    let mut settings = Settings {
        segment_duration_ms: 1000,
        dash_profile: profile,
        ..Settings::default()
    };
    settings.storyboards.signalled = true;
    if encrypted {
        settings.protect.encryption = EncryptionPolicy::parse("dash=cenc").expect("a policy");
        settings.protect.key_secret =
            Some(Secret::from_text("dash conformance secret, 32 bytes", "test").expect("secret"));
    }
    common::start_server_with(root, settings).await
}

/// Every media file and title document under `fixtures/` (not the peer's goldens), as keys.
fn fixture_keys() -> Vec<String> {
    let root = common::fixtures();
    let mut keys = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("a fixtures folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() && !matches!(name, "bad" | "peer-nginx-vod") {
                folders.push(path);
            } else if [".mp4", ".m4a", ".m4v", ".mov", ".json"]
                .iter()
                .any(|e| name.ends_with(e))
            {
                let key = path.strip_prefix(&root).expect("under fixtures");
                keys.push(key.to_string_lossy().into_owned());
            }
        }
    }
    keys
}

/// GET `/vod/{key}/manifest.mpd`, which must answer 200.
async fn fetch_mpd(server: &TestServer, key: &str) -> String {
    let reply = common::get(server.addr, &format!("/vod/{key}/manifest.mpd")).await;
    assert_eq!(reply.status, 200, "{key}: {}", reply.text());
    reply.text()
}

/// The MPDs the tests check, as (file name, MPD): every fixture from a server in each
/// profile, clear (with trick play and storyboards) and encrypted, and the documents
/// written here (a title with ad breaks; the sequence, clear only).
async fn every_mpd() -> Vec<(String, String)> {
    let keys = fixture_keys();
    assert!(
        keys.iter().any(|k| k.ends_with(".json")),
        "a title document: {keys:?}"
    );
    let mut mpds = Vec::new();
    let sequence_root = common::ladder_copy("dash-conformance");
    std::fs::write(sequence_root.path().join("sequence.json"), SEQUENCE).expect("write");
    std::fs::write(sequence_root.path().join("breaks.json"), BREAKS).expect("write");
    for profile in [DashProfile::Default, DashProfile::Dvb] {
        for encrypted in [false, true] {
            let label = format!(
                "{}-{}",
                ["default", "dvb"][usize::from(profile == DashProfile::Dvb)],
                ["clear", "cenc"][usize::from(encrypted)]
            );
            let server = start(&common::fixtures(), profile, encrypted).await;
            for key in &keys {
                let name = format!("{label}--{}.mpd", key.replace('/', "_"));
                mpds.push((name, fetch_mpd(&server, key).await));
            }
            server.shutdown().await;
            // The documents written here; sequences are served clear only (encrypted, they
            // are refused).
            let server = start(sequence_root.path(), profile, encrypted).await;
            let written = match encrypted {
                true => &["breaks.json"][..],
                false => &["breaks.json", "sequence.json"][..],
            };
            for key in written {
                let name = format!("{label}--{key}.mpd");
                mpds.push((name, fetch_mpd(&server, key).await));
            }
            server.shutdown().await;
        }
    }
    mpds
}

/// Every MPD (every fixture and title document, in both profiles, clear and encrypted)
/// keeps the MPD schema and the rules of `mpd_rules` (DVB's too on DVB-profile MPDs),
/// but for the findings written down in [`KNOWN_FAILURES`], each only where and as often
/// as it says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mpd_keeps_the_schema_and_the_rules() {
    let mpds = every_mpd().await;
    let has = |what: &str| mpds.iter().any(|(_, mpd)| mpd.contains(what));
    for what in [
        "<EventStream",
        "<Period id=\"1\"",
        "<ContentProtection",
        "trickmode",
        "thumbnail_tile",
        "urn:dvb:dash:profile:dvb-dash:2017",
        "stpp",
    ] {
        assert!(has(what), "some MPD has {what}");
    }
    let mut problems = Vec::new();
    for (name, mpd) in &mpds {
        let findings = mpd_rules::check(mpd);
        for known in KNOWN_FAILURES {
            let count = (findings.iter())
                .filter(|f| f.what.starts_with(known.what))
                .count();
            if count > (known.allowed)(name, mpd) {
                problems.push(format!(
                    "{name}: {count} x {:?} (accepted: {})",
                    known.what, known.why
                ));
            }
        }
        for finding in findings.iter().filter(|f| {
            !KNOWN_FAILURES
                .iter()
                .any(|k| f.what.starts_with(k.what) || f.rule.starts_with(k.what))
        }) {
            problems.push(format!("{name}: {finding}"));
        }
    }
    eprintln!("{} MPDs checked", mpds.len());
    assert!(problems.is_empty(), "MPD rules:\n{}", problems.join("\n"));
}

/// The rules find what they are for: given a good MPD of ours, when one thing in it is
/// broken, then that is reported, with the clause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_catch_a_broken_mpd() {
    let server = start(&common::fixtures(), DashProfile::Dvb, true).await;
    let mpd = fetch_mpd(&server, "h264-aac-3s.mp4").await;
    server.shutdown().await;
    assert_eq!(mpd_rules::check(&mpd), vec![], "the good MPD");
    let broken = [
        (
            "minBufferTime=\"PT",
            "minBufferTime=\"P",
            "not of its schema type",
        ),
        ("<Representation ", "<Foo/><Representation ", "may not hold"),
        (
            "startWithSAP=\"1\"",
            "startWithSAP=\"9\"",
            "not of its schema type",
        ),
        ("$Number$", "$Nmber$", "identifier"),
        ("value=\"main\"", "value=\"mian\"", "Role value"),
        (
            "urn:dvb:dash:profile:dvb-dash:2014",
            "urn:dvb:dash:profile:dvb-dash:2104",
            "unknown profile",
        ),
        ("cenc:default_KID=\"", "cenc:default_KID=\"x", "default_KID"),
    ];
    for (from, to, expected) in broken {
        assert!(mpd.contains(from), "{from} in the MPD");
        let findings = mpd_rules::check(&mpd.replacen(from, to, 1));
        assert!(
            findings.iter().any(|f| f.to_string().contains(expected)),
            "{from} -> {to}: {findings:?}"
        );
    }
    // Children out of the schema's order: Role before the set's AudioChannelConfiguration.
    let swapped = mpd.replacen("<Role ", "<Accessibility schemeIdUri=\"urn:tva:metadata:cs:AudioPurposeCS:2007\" value=\"1\"/><FramePacking schemeIdUri=\"urn:mpeg:mpegB:cicp:VideoFramePackingType\" value=\"0\"/><Role ", 1);
    let findings = mpd_rules::check(&swapped);
    assert!(
        findings.iter().any(|f| f.what.contains("out of order")),
        "{findings:?}"
    );
    // A segment of no length.
    let findings = mpd_rules::check(&with_first_segment_lasting(&mpd, 0));
    assert!(
        findings.iter().any(|f| f.what.contains("@d 0")),
        "{findings:?}"
    );
    // A DVB segment longer than 15 s.
    let long = with_first_segment_lasting(&mpd, 16);
    let findings = mpd_rules::check(&long);
    assert!(
        findings
            .iter()
            .any(|f| f.rule.starts_with("DVB-DASH limits")),
        "{findings:?}"
    );
}

/// `mpd` with the first `S@d` made `seconds` long at its template's timescale.
fn with_first_segment_lasting(mpd: &str, seconds: u64) -> String {
    let template = mpd.split("<SegmentTemplate").nth(1).unwrap_or_default();
    let timescale: u64 = attribute(template, "timescale")
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let s = template.split("<S ").nth(1).unwrap_or_default();
    let d = attribute(s, "d").unwrap_or_default();
    mpd.replacen(
        &format!(" d=\"{d}\""),
        &format!(" d=\"{}\"", timescale * seconds),
        1,
    )
}

/// A Representation of a single-Period MPD, as its segment template names its resources.
#[derive(Debug)]
struct Track {
    id: String,
    /// The init segment's path under the title's folder.
    init: String,
    /// The media segments' paths, in order.
    media: Vec<String>,
}

/// The Representations of `mpd` with their init and media segment paths, from each one's
/// `SegmentTemplate` and `SegmentTimeline`.
fn tracks(mpd: &str) -> Vec<Track> {
    let mut tracks = Vec::new();
    for representation in mpd.split("<Representation ").skip(1) {
        let Some(id) = attribute(representation, "id") else {
            continue;
        };
        let Some(template) = representation.split("<SegmentTemplate").nth(1) else {
            continue;
        };
        let (Some(init), Some(media)) = (
            attribute(template, "initialization"),
            attribute(template, "media"),
        ) else {
            continue;
        };
        let first: u64 = attribute(template, "startNumber")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let timeline = template
            .split("</SegmentTimeline>")
            .next()
            .unwrap_or_default();
        let count: u64 = timeline
            .split("<S ")
            .skip(1)
            .map(|s| {
                1 + attribute(s, "r")
                    .and_then(|r| r.parse::<u64>().ok())
                    .unwrap_or(0)
            })
            .sum();
        let name = |template: &str, number: u64| {
            template
                .replace("$RepresentationID$", id)
                .replace("$Number$", &number.to_string())
        };
        tracks.push(Track {
            id: id.to_owned(),
            init: name(init, 0),
            media: (first..first + count).map(|n| name(media, n)).collect(),
        });
    }
    tracks
}

/// Every CMAF track of every fixture's MPD, clear and `cenc`-encrypted (and the DVB
/// profile's IMSC1 text tracks), its init segment and media segments joined (trick-play
/// tracks too), is read by mp4box.js without a complaint and has the structure CMAF asks
/// of a track (`isobmff_check.mjs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joined_cmaf_tracks_are_clean_iso_bmff() {
    if !have_mp4box() {
        return;
    }
    let work = TempDir::new("isobmff-check");
    let mut files = Vec::new();
    // The DVB profile's MPDs add the IMSC1 (`stpp`) text tracks; their audio and video are
    // the default profile's bytes again.
    let runs = [
        (DashProfile::Default, false),
        (DashProfile::Default, true),
        (DashProfile::Dvb, false),
    ];
    for (profile, encrypted) in runs {
        let server = start(&common::fixtures(), profile, encrypted).await;
        files.extend(join_tracks(&server, work.path(), profile, encrypted).await);
        server.shutdown().await;
    }
    let kinds: Vec<&str> = [
        "avc1", "hvc1", "av01", "mp4a", "encv", "enca", "wvtt", "stpp",
    ]
    .to_vec();
    let reports = isobmff_check(&files).await;
    let mut problems = Vec::new();
    for kind in kinds {
        assert!(
            reports
                .iter()
                .any(|r| r.entry == kind || r.entry.starts_with(kind)),
            "some joined track is {kind}: {:?}",
            reports.iter().map(|r| &r.entry).collect::<Vec<_>>()
        );
    }
    for report in &reports {
        if report.fragments == 0 || report.samples == 0 {
            problems.push(format!("{}: no fragments or samples", report.file));
        }
        let known = |p: &String| TRACK_KNOWN.iter().any(|(what, _)| p.contains(what));
        for problem in report.problems.iter().filter(|p| !known(p)) {
            problems.push(format!("{}: {problem}", report.file));
        }
    }
    eprintln!("{} joined tracks checked", reports.len());
    assert_eq!(reports.len(), files.len());
    assert!(problems.is_empty(), "ISO BMFF:\n{}", problems.join("\n"));
}

/// A damaged track is not clean: given a good joined track, when a box's size or a
/// fragment's decode time is wrong, then the check says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_track_check_catches_a_broken_track() {
    if !have_mp4box() {
        return;
    }
    let work = TempDir::new("isobmff-broken");
    let server = start(&common::fixtures(), DashProfile::Default, true).await;
    let files = join_tracks(&server, work.path(), DashProfile::Default, true).await;
    server.shutdown().await;
    let good = files
        .iter()
        .find(|f| f.contains("h264-aac-3s.mp4") && f.ends_with("-t1.mp4"))
        .expect("the H.264 track");
    let bytes = std::fs::read(good).expect("read");
    let at = |name: &[u8]| bytes.windows(4).position(|w| w == name).expect("the box");
    let mut damaged = Vec::new();
    for (name, offset, what) in [
        (&b"tfdt"[..], 11, "tfdt"),
        (&b"trun"[..], 12, "data_offset"),
        (&b"avcC"[..], -1, "did not read the entire"),
        (&b"saio"[..], 15, "saio points"),
    ] {
        let mut broken = bytes.clone();
        let i = usize::try_from(at(name) as i64 + offset).expect("in range");
        broken[i] = broken[i].wrapping_add(2);
        let file = work
            .path()
            .join(format!("broken-{what}.mp4").replace(' ', "-"));
        std::fs::write(&file, &broken).expect("write");
        damaged.push((file.to_string_lossy().into_owned(), what));
    }
    let paths: Vec<String> = std::iter::once(good.clone())
        .chain(damaged.iter().map(|(f, _)| f.clone()))
        .collect();
    let reports = isobmff_check(&paths).await;
    assert_eq!(reports[0].problems, Vec::<String>::new(), "the good track");
    for (report, (_, what)) in reports[1..].iter().zip(&damaged) {
        assert!(
            report.problems.iter().any(|p| p.contains(what)),
            "{what}: {:?}",
            report.problems
        );
    }
}

/// One file's answer from `isobmff_check.mjs`.
#[derive(Debug, serde::Deserialize)]
struct TrackReport {
    file: String,
    problems: Vec<String>,
    fragments: u64,
    samples: u64,
    #[serde(default)]
    entry: String,
}

/// Run `isobmff_check.mjs` over `files`, in runs of at most 64 files.
async fn isobmff_check(files: &[String]) -> Vec<TrackReport> {
    let script = players_dir().join("isobmff_check.mjs");
    let script = script.to_string_lossy();
    let mut reports = Vec::new();
    for chunk in files.chunks(64) {
        let mut args = vec![script.as_ref()];
        args.extend(chunk.iter().map(String::as_str));
        let (ok, stdout, stderr) = run("node", &args).await;
        assert!(ok, "isobmff_check.mjs: {stderr}");
        for line in stdout.lines().filter(|l| l.starts_with('{')) {
            reports.push(serde_json::from_str(line).expect("a report line"));
        }
    }
    reports
}

/// Join every track of every fixture `server` serves (init then media segments) into a
/// file under `work`; the files' paths.
async fn join_tracks(
    server: &TestServer,
    work: &Path,
    profile: DashProfile,
    encrypted: bool,
) -> Vec<String> {
    let mut files = Vec::new();
    for key in fixture_keys() {
        let mpd = fetch_mpd(server, &key).await;
        for track in tracks(&mpd) {
            // A codec Common Encryption is not implemented for (AV1) answers 422 encrypted.
            let init = common::get(server.addr, &format!("/vod/{key}/{}", track.init)).await;
            if encrypted && init.status == 422 {
                eprintln!("{key} {}: not encrypted here ({})", track.id, init.text());
                continue;
            }
            assert_eq!(init.status, 200, "{key} {}", track.init);
            let mut joined = init.body;
            for path in &track.media {
                let reply = common::get(server.addr, &format!("/vod/{key}/{path}")).await;
                assert_eq!(reply.status, 200, "{key} {path}");
                joined.extend_from_slice(&reply.body);
            }
            let label = match (profile, encrypted) {
                (DashProfile::Dvb, _) => "dvb",
                (DashProfile::Default, false) => "clear",
                (DashProfile::Default, true) => "cenc",
            };
            let file = work.join(format!(
                "{label}-{}-{}.mp4",
                key.replace('/', "_"),
                track.id
            ));
            std::fs::write(&file, &joined).expect("write track");
            files.push(file.to_string_lossy().into_owned());
        }
    }
    files
}
