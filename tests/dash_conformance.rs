//! DASH conformance by rules nobody here wrote: every MPD the server writes for the fixtures
//! (each media file and title document under `fixtures/`, a sequence document and one with
//! ad breaks written at test time, in the default and the DVB profile, clear with trick play and storyboards, and
//! encrypted) is checked against the DASH Industry Forum's MPD schema (xmllint) and
//! schematron rules (Saxon: the generic rules, and DVB's on DVB-profile MPDs), vendored in
//! `tests/conformance/dash-if/` (its README says from where and what changed); and each
//! CMAF track those MPDs name, a Representation's init segment and media segments joined,
//! is checked by gpac's ComplianceWarden (`VODPACK_COMPLIANCE_WARDEN`, built by `.ci/run`).
//!
//! Findings accepted for now are written down in one place, [`KNOWN_FAILURES`]. Every test
//! skips when a tool is missing, and fails instead under `VODPACK_REQUIRE_TOOLS=1`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{TempDir, TestServer};
use vodpack::config::Settings;
use vodpack::crypto::{EncryptionPolicy, Secret};
use vodpack::media::DashProfile;

/// Debian's Saxon-HE (`libsaxonhe-java`), XSLT 2 and 3.
const SAXON_JAR: &str = "/usr/share/java/Saxon-HE.jar";
/// The longest any one run of an outside program may take before it is killed.
const TOOL_LIMIT: Duration = Duration::from_secs(300);
/// The default profile's `@profiles`, the only MPDs the CMAF exception applies to.
const DEFAULT_PROFILES: &str =
    "urn:mpeg:dash:profile:isoff-live:2011,urn:mpeg:dash:profile:cmaf:2019";
/// The sequence document written at test time over a copy of the ladder fixture: an
/// ident (one rung of the ladder) then the ladder title.
const SEQUENCE: &str = r#"{"parts": [{"file": "ladder-180p.mp4"}, {"title": "ladder.json"}]}"#;
/// A title document with ad breaks (SCTE-35 events in the MPD), written beside it.
const BREAKS: &str = r#"{"video": [{"file": "ladder-360p.mp4"}], "breaks": [
    {"id": "mid", "at": 2000, "duration": 15000, "asset_uri": "https://ads.example/a.m3u8"}]}"#;

/// A DASH-IF assert an MPD fails for a reason written down, and which MPDs may fail it.
struct KnownFailure {
    /// The start of the assert's message.
    message: &'static str,
    /// Why it is accepted, and until when.
    why: &'static str,
    /// How many times an MPD may fail it (0: not at all).
    allowed: fn(&str) -> usize,
}

/// The one place accepted DASH-IF findings are written down (see the README beside the
/// rules).
const KNOWN_FAILURES: &[KnownFailure] = &[
    KnownFailure {
        message: "At least one unknown profile string found",
        why: "DASH-IF's list of profiles lacks urn:mpeg:dash:profile:cmaf:2019 (the one \
              exception we accept), so only an MPD whose @profiles is exactly the \
              default profile's may fail it",
        allowed: |mpd| usize::from(profiles_of(mpd) == DEFAULT_PROFILES),
    },
    KnownFailure {
        message: "For live profile, the SegmentTemplate element shall be present",
        why: "a whole-file WebVTT text Representation (`--dash-subtitle-format webvtt-file`, \
              for old players, asked for) names one .vtt by BaseURL: once per such \
              Representation; the default forms are segments",
        allowed: |mpd| mpd.matches("mimeType=\"text/vtt\"").count(),
    },
];

/// ComplianceWarden findings that are its own limits, not faults of the tracks: (spec,
/// message, why).
const WARDEN_KNOWN: &[(&str, &str, &str)] = &[
    (
        "av1isobmff",
        "ABORTED TEST: BitReader::bit() overflow",
        "its fragment reader (src/utils/isobmff_get_data.cpp at the pinned commit) ignores \
         tfhd's default-base-is-moof, which CMAF requires, so it reads each fragment's samples \
         from the wrong offset; the AV1 sample rules then see bytes that are not OBUs",
    ),
    ("av1isobmff", "Found an invalid obu in stream", "as above"),
    (
        "av1isobmff",
        "AV1 configuration should be present",
        "as above",
    ),
    (
        "av1isobmff",
        "The AV1CodecConfigurationBox high_bitdepth field value",
        "as above",
    ),
];

/// The outside programs: Saxon (through java), xmllint, and ComplianceWarden.
struct Tools {
    compliance_warden: Option<PathBuf>,
}

impl Tools {
    /// The tools, or `None` (the test skips) when one is missing; under
    /// `VODPACK_REQUIRE_TOOLS=1` a missing one fails the test.
    fn find(need_warden: bool) -> Option<Tools> {
        let required = std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
        if !common::have_program("java", "-version")
            || !common::have_program("xmllint", "--version")
        {
            return None;
        }
        if !Path::new(SAXON_JAR).is_file() {
            assert!(
                !required,
                "{SAXON_JAR} is required (VODPACK_REQUIRE_TOOLS=1)"
            );
            eprintln!("skipping: {SAXON_JAR} not found (Debian's libsaxonhe-java)");
            return None;
        }
        let warden = std::env::var_os("VODPACK_COMPLIANCE_WARDEN")
            .map(PathBuf::from)
            .filter(|p| p.is_file());
        if need_warden && warden.is_none() {
            assert!(
                !required,
                "VODPACK_COMPLIANCE_WARDEN (ComplianceWarden's cw.exe, built by .ci/run) is \
                 required (VODPACK_REQUIRE_TOOLS=1)"
            );
            eprintln!(
                "skipping: VODPACK_COMPLIANCE_WARDEN does not name ComplianceWarden's cw.exe"
            );
            return None;
        }
        Some(Tools {
            compliance_warden: warden,
        })
    }
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

/// The vendored rules.
fn dash_if() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/dash-if")
}

/// Compile DASH-IF's schematron into an XSLT under `dir`, in the three ISO steps of its
/// `create_val_schema.sh`, and return the XSLT's path.
async fn compile_schematron(dir: &Path) -> PathBuf {
    let rules = dash_if().join("schematron");
    let steps = [
        (
            rules.join("schematron.sch"),
            "iso_dsdl_include.xsl",
            dir.join("step1.sch"),
        ),
        (
            dir.join("step1.sch"),
            "iso_abstract_expand.xsl",
            dir.join("step2.sch"),
        ),
        (
            dir.join("step2.sch"),
            "iso_svrl_for_xslt2.xsl",
            dir.join("rules.xsl"),
        ),
    ];
    for (source, xslt, output) in steps {
        let xslt = rules.join("iso-schematron").join(xslt);
        saxon(&source, &xslt, &output).await;
    }
    dir.join("rules.xsl")
}

/// Saxon: transform `source` (a file, or a folder of files into a folder) by `xslt`.
async fn saxon(source: &Path, xslt: &Path, output: &Path) {
    let (s, x, o) = (
        format!("-s:{}", source.display()),
        format!("-xsl:{}", xslt.display()),
        format!("-o:{}", output.display()),
    );
    let args = ["-jar", SAXON_JAR, "-versionmsg:off", &s, &x, &o];
    let (ok, _, stderr) = run("java", &args).await;
    assert!(ok, "saxon {source:?} by {xslt:?}: {stderr}");
}

/// The `@profiles` of an MPD's `MPD` element.
fn profiles_of(mpd: &str) -> &str {
    attribute(mpd.split("<MPD").nth(1).unwrap_or_default(), "profiles").unwrap_or_default()
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

/// One failed assert of a schematron report (SVRL).
#[derive(Debug)]
struct FailedAssert {
    message: String,
    location: String,
    /// Its `role`: `warn` for a should.
    role: String,
}

/// The failed asserts of an SVRL report, and whether a DVB-DASH rule fired.
fn failed_asserts(svrl: &str) -> (Vec<FailedAssert>, bool) {
    let dvb_fired = svrl.contains("context=\"dash:MPD[dlb:isProfile(.,$dvbdash-profile-2017)]");
    let failed = svrl
        .split("<svrl:failed-assert")
        .skip(1)
        .map(|block| {
            let text = block.split("<svrl:text>").nth(1).unwrap_or_default();
            FailedAssert {
                message: text
                    .split("</svrl:text>")
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
                location: attribute(block, "location").unwrap_or_default().to_owned(),
                role: attribute(block, "role").unwrap_or_default().to_owned(),
            }
        })
        .collect();
    (failed, dvb_fired)
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
/// is valid by DASH-IF's MPD schema and passes its schematron rules (the DVB-DASH rules
/// too on DVB-profile MPDs, which they are seen to run on), but for the findings written
/// down in [`KNOWN_FAILURES`], each only where and as often as it says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mpd_passes_the_dash_if_schema_and_rules() {
    let Some(_tools) = Tools::find(false) else {
        return;
    };
    let work = TempDir::new("dash-if");
    let (mpd_dir, svrl_dir) = (work.path().join("mpd"), work.path().join("svrl"));
    std::fs::create_dir_all(&mpd_dir).expect("mkdir");
    std::fs::create_dir_all(&svrl_dir).expect("mkdir");
    let mpds = every_mpd().await;
    let has = |what: &str| mpds.iter().any(|(_, mpd)| mpd.contains(what));
    for what in [
        "<EventStream",
        "<Period id=\"1\"",
        "<ContentProtection",
        "trickmode",
        "thumbnail_tile",
    ] {
        assert!(has(what), "some MPD has {what}");
    }
    let mut files = Vec::new();
    for (name, mpd) in &mpds {
        std::fs::write(mpd_dir.join(name), mpd).expect("write MPD");
        files.push(mpd_dir.join(name).to_string_lossy().into_owned());
    }

    // The schema: xmllint, with no network (the XLink import is local).
    let schema = dash_if().join("schemas/DASH-MPD.xsd");
    let schema = schema.to_string_lossy();
    let mut args = vec!["--noout", "--nonet", "--schema", &schema];
    args.extend(files.iter().map(String::as_str));
    let (valid, _, report) = run("xmllint", &args).await;
    assert!(valid, "DASH-IF's MPD schema:\n{report}");

    // The rules: compiled once, run over the whole folder in one Saxon run.
    let rules = compile_schematron(work.path()).await;
    saxon(&mpd_dir, &rules, &svrl_dir).await;
    let mut problems = Vec::new();
    let mut warnings = 0;
    for (name, mpd) in &mpds {
        // Saxon names each report after its source, with the output method's `.xml`.
        let svrl = std::fs::read_to_string(svrl_dir.join(format!("{name}.xml")))
            .or_else(|_| std::fs::read_to_string(svrl_dir.join(name)))
            .expect("an SVRL report");
        let (failed, dvb_fired) = failed_asserts(&svrl);
        let dvb = profiles_of(mpd).contains("urn:dvb:dash:profile:dvb-dash:2017");
        // DASH-IF's DVB rules find audio sets by a DVB audio codec on the set.
        let dvb_audio = ["mp4a", "ac-3", "ec-3", "ac-4", "dts"]
            .iter()
            .any(|c| mpd.contains(&format!("contentType=\"audio\" codecs=\"{c}")));
        if dvb && dvb_audio && !dvb_fired {
            problems.push(format!("{name}: no DVB-DASH rule ran"));
        }
        let (should, shall): (Vec<_>, Vec<_>) = failed.into_iter().partition(|f| f.role == "warn");
        warnings += should.len();
        for known in KNOWN_FAILURES {
            let count = shall
                .iter()
                .filter(|f| f.message.starts_with(known.message))
                .count();
            if count > (known.allowed)(mpd) {
                problems.push(format!(
                    "{name}: {count} x {:?} (accepted: {})",
                    known.message, known.why
                ));
            }
        }
        for f in shall.iter().filter(|f| {
            !KNOWN_FAILURES
                .iter()
                .any(|k| f.message.starts_with(k.message))
        }) {
            problems.push(format!("{name}: {} at {}", f.message, f.location));
        }
    }
    eprintln!(
        "{} MPDs checked; {warnings} should-level findings",
        mpds.len()
    );
    assert!(
        problems.is_empty(),
        "DASH-IF rules:\n{}",
        problems.join("\n")
    );
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

/// Every CMAF track of every fixture's MPD, clear and `cenc`-encrypted, its init segment and
/// media segments joined (trick-play tracks too), is ISO BMFF as ComplianceWarden's
/// `isobmff` rules read it (and AV1 tracks by its `av1isobmff` rules): no errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joined_cmaf_tracks_pass_compliance_warden() {
    let Some(tools) = Tools::find(true) else {
        return;
    };
    let warden = tools.compliance_warden.expect("found above");
    let warden = warden.to_string_lossy();
    let work = TempDir::new("compliance-warden");
    let mut problems = Vec::new();
    let mut checked = 0;
    // The DVB profile's MPDs add the IMSC1 (`stpp`) text tracks; their audio and video are
    // the default profile's bytes again.
    let runs = [
        (DashProfile::Default, false),
        (DashProfile::Default, true),
        (DashProfile::Dvb, false),
    ];
    for (profile, encrypted) in runs {
        let server = start(&common::fixtures(), profile, encrypted).await;
        let found = check_tracks(&server, &warden, work.path(), profile, encrypted).await;
        server.shutdown().await;
        checked += found.0;
        problems.extend(found.1);
    }
    eprintln!("{checked} joined tracks checked");
    assert!(checked > 0);
    assert!(
        problems.is_empty(),
        "ComplianceWarden:\n{}",
        problems.join("\n")
    );
}

/// Join and check every track of every fixture `server` serves; how many, and the
/// problems found.
async fn check_tracks(
    server: &TestServer,
    warden: &str,
    work: &Path,
    profile: DashProfile,
    encrypted: bool,
) -> (usize, Vec<String>) {
    let mut problems = Vec::new();
    let mut checked = 0;
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
            let file = file.to_string_lossy().into_owned();
            let codecs = mpd
                .split(&format!("id=\"{}\"", track.id))
                .nth(1)
                .unwrap_or_default();
            let av1 = attribute(codecs, "codecs").is_some_and(|c| c.starts_with("av01"));
            let specs: &[&str] = if av1 {
                &["isobmff", "av1isobmff"]
            } else {
                &["isobmff"]
            };
            for spec in specs {
                let (_, report, _) = run(warden, &["-s", spec, &file]).await;
                let errors: Vec<&str> = (report.lines())
                    .filter(|l| l.starts_with('[') && l.contains("] Error: "))
                    .filter(|l| {
                        !WARDEN_KNOWN
                            .iter()
                            .any(|(s, m, _)| l.starts_with(&format!("[{s}]")) && l.contains(m))
                    })
                    .collect();
                if !errors.is_empty() {
                    problems.push(format!(
                        "{label} {key} {} ({spec}):\n{}",
                        track.id,
                        errors.join("\n")
                    ));
                }
            }
            checked += 1;
        }
    }
    (checked, problems)
}
