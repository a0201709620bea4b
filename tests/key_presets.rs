//! Keys by usage (SPEKE v2 presets) over HTTP, on a ladder made at test time: SD, HD and
//! UHD rungs and two audio languages. Each track is encrypted with its tier's key and
//! decrypts (ffmpeg `-decryption_key`) to the clear output's frames with that key only;
//! the KIDs of the MPD, the HLS playlists, the init segments and the ClearKey licence
//! agree; a split's tracks left `UNENCRYPTED` stay clear; MPEG-TS is refused.
//!
//! Needs ffmpeg: skips without it, fails under `VODPACK_REQUIRE_TOOLS=1`.

mod common;
// The MPD schema and rules tests/dash_conformance holds every MPD to, here for the split's.
#[allow(dead_code)]
#[path = "dash_conformance/mpd_rules.rs"]
mod mpd_rules;
#[allow(dead_code)]
#[path = "dash_conformance/mpd_schema.rs"]
mod mpd_schema;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use common::{get, have_tool, post, segments_of, start_server_with, TempDir, TestServer};
use vodpack::crypto::keys::{hex, uuid_string, ContentKey};
use vodpack::crypto::{EncryptionPolicy, KeyPresets, KeyUsage, Secret, SecretKeyProvider};

const SECRET: &str = "key presets test secret, 32 byte";
const DOCUMENT: &str = "ladder.json";

/// The rungs: file, size, and the usage PRESET-VIDEO-3 gives it.
const RUNGS: [(&str, &str, KeyUsage); 3] = [
    ("sd.mp4", "640x360", KeyUsage::Sd),
    ("hd.mp4", "1280x720", KeyUsage::Hd),
    ("uhd.mp4", "2560x1440", KeyUsage::Uhd),
];

/// The longest one ffmpeg run may take before it is killed by its id.
const FFMPEG_LIMIT: Duration = Duration::from_secs(300);

fn run(dir: &Path, args: &str) {
    let mut command = Command::new("ffmpeg");
    command
        .current_dir(dir)
        .args(["-v", "error", "-nostdin", "-y"])
        .args(args.split_whitespace());
    let out = common::bounded::run_bounded(command, FFMPEG_LIMIT);
    assert!(
        out.status.is_some_and(|s| s.success()),
        "ffmpeg {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The ladder: three 2 s H.264 rungs with key frames every second (the SD one with the
/// English audio), French audio apart, and the title document naming them; `extra` is
/// added to the document (its `"key_presets"`, say).
fn make_ladder(dir: &Path, extra: &str) {
    for (file, size, _) in RUNGS {
        let audio = match file {
            "sd.mp4" => {
                "-f lavfi -i sine=frequency=440:duration=2 -c:a aac -b:a 64k \
                         -metadata:s:a:0 language=eng"
            }
            _ => "",
        };
        run(
            dir,
            &format!(
                "-f lavfi -i testsrc2=size={size}:rate=25:duration=2 {audio} -c:v libx264 \
                 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0 -pix_fmt yuv420p {file}"
            ),
        );
    }
    run(
        dir,
        "-f lavfi -i sine=frequency=660:duration=2 -c:a aac -b:a 64k \
         -metadata:s:a:0 language=fra fr.m4a",
    );
    let document = format!(
        "{{\"video\": [{{\"file\": \"sd.mp4\"}}, {{\"file\": \"hd.mp4\"}}, {{\"file\": \"uhd.mp4\"}}],\
          \"audio\": [{{\"file\": \"fr.m4a\", \"language\": \"fr\"}}]{extra}}}"
    );
    std::fs::write(dir.join(DOCUMENT), document).unwrap();
}

/// A server over `dir` with 1 s segments, encrypting as `policy` says with the test's
/// secret, the key split `presets` (`None`: the default, one key).
async fn start(dir: &Path, policy: Option<&str>, presets: Option<&str>) -> TestServer {
    let mut settings = segments_of(1000);
    if let Some(policy) = policy {
        settings.protect.encryption = EncryptionPolicy::parse(policy).unwrap();
        settings.protect.key_secret = Some(Secret::from_text(SECRET, "test").unwrap());
    }
    if let Some(presets) = presets {
        settings.protect.key_presets = KeyPresets::parse(presets).unwrap();
    }
    start_server_with(dir, settings).await
}

/// The key the server derives for the title's `usage`.
fn key_of(usage: KeyUsage) -> ContentKey {
    SecretKeyProvider::new(Secret::from_text(SECRET, "test").unwrap()).derive_for(DOCUMENT, usage)
}

/// The version folder and the Representations of an MPD: (id, width, the `default_KID`s
/// written inside the Representation, and those of its AdaptationSet).
struct MpdRep {
    id: String,
    height: Option<u32>,
    own_kids: Vec<String>,
    set_kids: Vec<String>,
}

fn kids_in(text: &str) -> Vec<String> {
    text.split("cenc:default_KID=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect()
}

fn mpd_reps(mpd: &str) -> (String, Vec<MpdRep>) {
    let folder = (mpd.split("initialization=\"").nth(1))
        .and_then(|s| s.split('/').next())
        .expect("a SegmentTemplate")
        .to_owned();
    let mut reps = Vec::new();
    for set in mpd.split("<AdaptationSet").skip(1) {
        let set = set.split("</AdaptationSet>").next().unwrap_or("");
        let head = set.split("<Representation").next().unwrap_or("");
        let set_kids = kids_in(head);
        for rep in set.split("<Representation").skip(1) {
            let rep = rep.split("</Representation>").next().unwrap_or("");
            let attr = |name: &str| {
                rep.split(&format!(" {name}=\""))
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .map(str::to_owned)
            };
            reps.push(MpdRep {
                id: attr("id").expect("an id"),
                height: attr("height").and_then(|h| h.parse().ok()),
                own_kids: kids_in(rep),
                set_kids: set_kids.clone(),
            });
        }
    }
    (folder, reps)
}

/// The init segment and each media segment of Representation `id`, each joined to its
/// init: one file's bytes per segment.
async fn segment_files(server: &TestServer, folder: &str, id: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let base = format!("/vod/{DOCUMENT}/{folder}");
    let init = get(server.addr, &format!("{base}/init-{id}.mp4")).await;
    assert_eq!(init.status, 200, "init of {id}");
    let mut files = Vec::new();
    for number in 1.. {
        let reply = get(server.addr, &format!("{base}/seg-{id}-{number}.m4s")).await;
        if reply.status == 404 {
            break;
        }
        assert_eq!(
            reply.status,
            200,
            "segment {number} of {id}: {}",
            reply.text()
        );
        files.push([init.body.clone(), reply.body].concat());
    }
    (init.body, files)
}

/// framemd5 lines of `file` (decrypted with `key` when given), sizes and hashes only;
/// empty when ffmpeg cannot read it (a wrong key may make it fail).
fn frames(file: &Path, key: Option<&[u8; 16]>) -> Vec<String> {
    let mut command = Command::new("ffmpeg");
    command.args(["-v", "quiet", "-nostdin"]);
    if let Some(key) = key {
        command.args(["-decryption_key", &hex(key)]);
    }
    command.arg("-i").arg(file);
    command.args(["-map", "0", "-vsync", "passthrough", "-f", "framemd5", "-"]);
    let out = common::bounded::run_bounded(command, FFMPEG_LIMIT);
    assert!(
        !out.timed_out,
        "ffmpeg on {file:?} killed after {FFMPEG_LIMIT:?}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .skip(4)
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// The usage of a Representation of the ladder under PRESET-VIDEO-3 and PRESET-AUDIO-1.
fn usage_of(rep: &MpdRep) -> KeyUsage {
    match rep.height {
        Some(360) => KeyUsage::Sd,
        Some(720) => KeyUsage::Hd,
        Some(1440) => KeyUsage::Uhd,
        Some(h) => panic!("no rung of height {h}"),
        None => KeyUsage::Audio,
    }
}

/// Given a ladder with SD, HD and UHD rungs and English and French audio, under
/// `video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1`, in `cenc` and in `cbcs`: when each
/// Representation's segments are decrypted with its tier's key, then they decode to the
/// clear output's frames, and with any other tier's key they do not; the MPD names each
/// rung's KID on its Representation (the video set's keys differ) and the audio KID on
/// each audio set (both languages share it), and each init segment carries its own KID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rung_and_language_decrypts_with_its_own_tier_key_only() {
    if !have_tool("ffmpeg") {
        return;
    }
    let dir = TempDir::new("key-presets-ladder");
    make_ladder(dir.path(), "");
    let work = TempDir::new("key-presets-ladder-work");
    let clear = start(dir.path(), None, None).await;
    let clear_mpd = get(clear.addr, &format!("/vod/{DOCUMENT}/manifest.mpd")).await;
    let (clear_folder, _) = mpd_reps(&clear_mpd.text());
    let usages = [KeyUsage::Sd, KeyUsage::Hd, KeyUsage::Uhd, KeyUsage::Audio];
    for scheme in ["cenc", "cbcs"] {
        let server = start(
            dir.path(),
            Some(&format!("dash={scheme}")),
            Some("video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1"),
        )
        .await;
        let mpd = get(server.addr, &format!("/vod/{DOCUMENT}/manifest.mpd")).await;
        assert_eq!(mpd.status, 200, "{}", mpd.text());
        let (folder, reps) = mpd_reps(&mpd.text());
        assert_eq!(
            mpd_rules::check(&mpd.text()),
            vec![],
            "the MPD schema and rules"
        );
        assert_eq!(
            reps.len(),
            5,
            "three rungs and two languages: {}",
            mpd.text()
        );
        // The three tiers' sets say a player may switch between them (ISO/IEC 23009-1
        // 5.3.3.5): each names the other two.
        let switching = mpd
            .text()
            .matches("urn:mpeg:dash:adaptation-set-switching:2016")
            .count();
        assert_eq!(switching, 3, "{}", mpd.text());
        let mut audio_sets = 0;
        for rep in &reps {
            let usage = usage_of(rep);
            let kid = uuid_string(&key_of(usage).kid);
            match usage {
                KeyUsage::Audio => {
                    audio_sets += 1;
                    assert_eq!(rep.set_kids, [kid], "audio KID on its set");
                    assert!(rep.own_kids.is_empty());
                }
                _ => {
                    // Each tier's rungs are a set of their own, its KID on the set.
                    assert_eq!(rep.set_kids, [kid], "{usage} KID on its tier's set");
                    assert!(rep.own_kids.is_empty());
                }
            }
            let (init, encrypted) = segment_files(&server, &folder, &rep.id).await;
            let (_, plain) = segment_files(&clear, &clear_folder, &rep.id).await;
            let own = key_of(usage);
            assert!(
                init.windows(16).any(|w| w == own.kid),
                "{} init carries its KID",
                rep.id
            );
            assert_eq!(encrypted.len(), plain.len());
            assert!(encrypted.len() > 1);
            for (n, (enc, plain)) in encrypted.iter().zip(&plain).enumerate() {
                assert_ne!(enc, plain);
                let enc_path = work.path().join(format!("{scheme}-{}-{n}.mp4", rep.id));
                let plain_path = work.path().join(format!("clear-{}-{n}.mp4", rep.id));
                std::fs::write(&enc_path, enc).unwrap();
                std::fs::write(&plain_path, plain).unwrap();
                let want = frames(&plain_path, None);
                assert!(!want.is_empty());
                assert_eq!(
                    frames(&enc_path, Some(&own.key)),
                    want,
                    "{scheme} {} segment {} with its {usage} key",
                    rep.id,
                    n + 1
                );
                for other in usages.iter().filter(|u| **u != usage) {
                    assert_ne!(
                        frames(&enc_path, Some(&key_of(*other).key)),
                        want,
                        "{scheme} {} segment {} must not decrypt with the {other} key",
                        rep.id,
                        n + 1
                    );
                }
            }
        }
        assert_eq!(audio_sets, 2);
        server.shutdown().await;
    }
    clear.shutdown().await;
}

/// Given HLS SAMPLE-AES CMAF under PRESET-VIDEO-3 and PRESET-AUDIO-1: then the
/// multivariant playlist has an `EXT-X-SESSION-KEY` for each of the four keys, each media
/// playlist's `EXT-X-KEY` names its own tier's KID, and the ClearKey licence answers every
/// requested KID the title has (an unknown one left out); MPEG-TS is refused with 422
/// saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_playlists_and_the_licence_name_each_tier_key() {
    if !have_tool("ffmpeg") {
        return;
    }
    let dir = TempDir::new("key-presets-hls");
    make_ladder(dir.path(), "");
    let server = start(
        dir.path(),
        Some("hls=sample-aes,dash=cbcs"),
        Some("video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1"),
    )
    .await;
    let base = format!("/vod/{DOCUMENT}/");
    let master = get(server.addr, &format!("{base}master.m3u8")).await.text();
    let usages = [KeyUsage::Sd, KeyUsage::Hd, KeyUsage::Uhd, KeyUsage::Audio];
    let session: Vec<&str> = (master.lines())
        .filter(|l| l.starts_with("#EXT-X-SESSION-KEY:"))
        .collect();
    assert_eq!(session.len(), 4, "{master}");
    for usage in usages {
        let kid = format!("KEYID=0x{}", hex(&key_of(usage).kid));
        assert!(
            session.iter().any(|l| l.contains(&kid)),
            "{usage}: {master}"
        );
    }
    let playlists: Vec<&str> = (master.lines())
        .filter(|l| !l.starts_with('#') && l.ends_with(".m3u8"))
        .chain(master.lines().filter_map(|l| {
            l.split("URI=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .filter(|u| u.ends_with(".m3u8"))
        }))
        .collect();
    let mut seen = 0;
    for (n, (_, size, usage)) in RUNGS.iter().enumerate() {
        let height = size.split('x').nth(1).unwrap();
        let line = (master.lines())
            .position(|l| l.contains(&format!("RESOLUTION={}", size)) && l.contains(height))
            .and_then(|i| master.lines().nth(i + 1))
            .unwrap_or_else(|| panic!("rung {n}: {master}"));
        let playlist = get(server.addr, &format!("{base}{line}")).await.text();
        let keys: Vec<&str> = (playlist.lines())
            .filter(|l| l.starts_with("#EXT-X-KEY:"))
            .collect();
        assert_eq!(
            keys,
            [format!(
                "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"http://{}/vod/{DOCUMENT}/clearkey.json?kid={kid}\",KEYFORMAT=\"org.w3.clearkey\",KEYFORMATVERSIONS=\"1\",KEYID=0x{kid}",
                server.addr,
                kid = hex(&key_of(*usage).kid)
            )],
            "{line}"
        );
        seen += 1;
    }
    assert_eq!(seen, 3);
    let audio_kid = format!("KEYID=0x{}", hex(&key_of(KeyUsage::Audio).kid));
    let audio: Vec<&&str> = (playlists.iter())
        .filter(|p| p.contains("-f4-") || p.ends_with("-t2.m3u8"))
        .collect();
    assert_eq!(audio.len(), 2, "two audio languages: {master}");
    for uri in audio {
        let playlist = get(server.addr, &format!("{base}{uri}")).await.text();
        assert!(playlist.contains(&audio_kid), "{uri}: {playlist}");
    }

    let mut kids: Vec<String> = (usages.iter())
        .map(|u| URL_SAFE_NO_PAD.encode(key_of(*u).kid))
        .collect();
    kids.push(URL_SAFE_NO_PAD.encode([0x42u8; 16]));
    let body = format!(
        "{{\"kids\":[{}],\"type\":\"temporary\"}}",
        kids.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let licence = post(
        server.addr,
        &format!("{base}clearkey.json"),
        "application/json",
        body.as_bytes(),
    )
    .await;
    assert_eq!(licence.status, 200);
    let answer: serde_json::Value = serde_json::from_slice(&licence.body).unwrap();
    let keys = answer["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 4, "{answer}");
    for (usage, entry) in usages.iter().zip(keys) {
        let key = key_of(*usage);
        assert_eq!(entry["kid"], URL_SAFE_NO_PAD.encode(key.kid));
        assert_eq!(entry["k"], URL_SAFE_NO_PAD.encode(key.key));
    }

    let ts = get(server.addr, &format!("{base}master-ts.m3u8")).await;
    assert_eq!(ts.status, 422);
    assert!(ts.text().contains("MPEG-TS"), "{}", ts.text());
    let raw = get(server.addr, &format!("{base}hls.key")).await;
    assert_eq!(raw.status, 404, "no one raw key of a split is handed out");
    server.shutdown().await;
}

/// Given a title document whose `"key_presets"` leave audio `UNENCRYPTED` under
/// PRESET-VIDEO-2 (the server's default being one key): then the audio sets carry no
/// `ContentProtection` and their init and media segments are the clear output's bytes,
/// while the video rungs are keyed SD and HD (the UHD rung under the HD key, as
/// PRESET-VIDEO-2 has no UHD key), in a version folder of the split's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_s_split_can_leave_audio_clear() {
    if !have_tool("ffmpeg") {
        return;
    }
    let dir = TempDir::new("key-presets-clear-audio");
    make_ladder(
        dir.path(),
        ", \"key_presets\": \"video=PRESET-VIDEO-2,audio=UNENCRYPTED\"",
    );
    let clear = start(dir.path(), None, None).await;
    let server = start(dir.path(), Some("dash=cenc"), None).await;
    let path = format!("/vod/{DOCUMENT}/manifest.mpd");
    let (clear_folder, _) = mpd_reps(&get(clear.addr, &path).await.text());
    let mpd = get(server.addr, &path).await.text();
    let (folder, reps) = mpd_reps(&mpd);
    assert_ne!(folder, clear_folder);
    for rep in &reps {
        let (init, segments) = segment_files(&server, &folder, &rep.id).await;
        let (clear_init, clear_segments) = segment_files(&clear, &clear_folder, &rep.id).await;
        match rep.height {
            None => {
                assert!(rep.set_kids.is_empty() && rep.own_kids.is_empty(), "{mpd}");
                assert_eq!(init, clear_init, "{}: clear audio init", rep.id);
                assert_eq!(segments, clear_segments, "{}: clear audio", rep.id);
            }
            Some(height) => {
                let usage = if height <= 576 {
                    KeyUsage::Sd
                } else {
                    KeyUsage::Hd
                };
                let kid = uuid_string(&key_of(usage).kid);
                assert_eq!(rep.set_kids, [kid], "{}: {mpd}", rep.id);
                assert_ne!(segments, clear_segments);
            }
        }
    }
    server.shutdown().await;
    clear.shutdown().await;
}
