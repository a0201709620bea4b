//! Before/after oracle: for every fixture (each media file, and the title document) and
//! every case the server serves (clear; HLS AES-128 and SAMPLE-AES over CMAF; MPEG-TS
//! AES-128 and SAMPLE-AES; DASH `cenc` and `cbcs`; each with and without a signed URL's
//! token), the writers given [`ManifestOptions`] write the very bytes the server made by
//! patching the clear rendering (`patches`, called as `server::protect` and
//! `server::ts` called them).

mod patches;

use std::sync::Arc;

use super::{ManifestOptions, ManifestProtection};
use crate::crypto::keys::{ContentKey, DrmSystem};
use crate::crypto::Scheme;
use crate::media::TrackKind;
use crate::media::{parse_title_document, MediaLimits, SidecarFormat};
use crate::package::testing::{fixture_bytes, fixture_title};
use crate::package::ts::{TsRendition, TsTitle};
use crate::package::webvtt::SubtitlePlan;
use crate::package::*;
use crate::source::{ObjectIdentity, ObjectKey};
use patches::HlsKey;

/// Manifests by name.
type Answers = Vec<(String, String)>;

/// The server's name of the HLS key resource.
const KEY_NAME: &str = "hls.key";
/// A licence URL as the server builds it: base URL, title folder, `clearkey.json`.
const LICENCE: &str = "http://localhost:8080/vod/a%20b.mp4/clearkey.json";

/// An output a request selected: the server's `Protected`.
struct Protected {
    scheme: Scheme,
    key: Arc<ContentKey>,
    token: String,
}

/// What a test title offers: the title, its TS output and subtitle plan.
struct Fixture {
    name: String,
    title: Title,
    ts: Option<TsTitle>,
    plan: SubtitlePlan,
}

/// A key with a DRM system's `pssh`, so the MPD's per-system elements are written too.
fn content_key() -> Arc<ContentKey> {
    Arc::new(ContentKey {
        kid: [0x5a; 16],
        key: [0x22; 16],
        systems: vec![DrmSystem {
            system_id: [0xed; 16],
            pssh: b"\0\0\0\x20psshsome system data".to_vec(),
        }],
    })
}

// ---- the old path: the clear rendering, patched as the server patched it ----

/// `server::protect::clear_manifest`.
fn clear_manifest(resource: &Resource, clear: String, token: Option<&str>) -> String {
    let Some(token) = token else {
        return clear;
    };
    let q = format!("token={token}");
    match resource {
        Resource::Mpd => patches::dash_with_query(&clear, &q),
        _ => patches::hls_with_query(&clear, &q),
    }
}

/// `server::protect::protected_manifest`, with `ts_segment_iv`.
fn protected_manifest(
    title: &Title,
    resource: &Resource,
    text: &str,
    p: &Protected,
    token: Option<&str>,
) -> String {
    let clear_token = title.version_token();
    let query = token.map(|t| format!("token={t}"));
    let licence = LICENCE.to_owned();
    let with_token = |url: &str| match &query {
        Some(q) => format!("{url}?{q}"),
        None => url.to_owned(),
    };
    match resource {
        Resource::Multivariant | Resource::MultivariantTs => {
            let text = patches::hls_without_iframes(text);
            let swapped = patches::swap_version_folder(&text, &clear_token, &p.token);
            let method = HlsKey::of(p.scheme, *resource == Resource::MultivariantTs);
            let uri = match method {
                HlsKey::SampleAesClearKey => licence,
                _ => format!("{}{KEY_NAME}", version_folder(&p.token)),
            };
            let out = patches::hls_multivariant(&swapped, method, &uri, &p.key);
            match &query {
                Some(q) => patches::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::MediaPlaylist { track_id } if title.rendition(*track_id).is_some() => {
            let uri = match p.scheme {
                Scheme::Aes128 => KEY_NAME.to_owned(),
                _ => licence,
            };
            let (token, kid, track) = (&clear_token, p.key.kid, *track_id);
            let method = HlsKey::of(p.scheme, false);
            let out = patches::hls_media_playlist(text, method, &uri, &p.key, |n| {
                protect::hls_segment_iv(token, &kid, track, n)
            });
            match &query {
                Some(q) => patches::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::TsMediaPlaylist { track_id } if title.rendition(*track_id).is_some() => {
            let method = HlsKey::of(p.scheme, true);
            let (token, kid) = (&clear_token, &p.key.kid);
            let out =
                patches::hls_media_playlist(text, method, KEY_NAME, &p.key, |n| match p.scheme {
                    Scheme::Aes128 => protect::hls_ts_segment_iv(token, kid, *track_id, n),
                    _ => protect::hls_ts_sample_aes_iv(token, kid, *track_id),
                });
            match &query {
                Some(q) => patches::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::Mpd => {
            let text = patches::dash_without_trick_play(text);
            let swapped = patches::swap_version_folder(&text, &clear_token, &p.token);
            let out = patches::dash_mpd(&swapped, p.scheme, &p.key, &with_token(&licence));
            match &query {
                Some(q) => patches::dash_with_query(&out, q),
                None => out,
            }
        }
        _ => match &query {
            Some(q) => patches::hls_with_query(text, q),
            None => text.to_owned(),
        },
    }
}

/// The handler's `decorate`: clear output or protected.
fn decorate(
    f: &Fixture,
    resource: &Resource,
    clear: String,
    p: Option<&Protected>,
    token: Option<&str>,
) -> String {
    match p {
        None => clear_manifest(resource, clear, token),
        Some(p) => protected_manifest(&f.title, resource, &clear, p, token),
    }
}

/// TS renditions SAMPLE-AES does not cover (`server::ts::ts_content`'s `uncovered`).
fn uncovered(ts: &TsTitle, p: Option<&Protected>) -> Vec<u32> {
    match p {
        Some(p) if p.scheme == Scheme::Cbcs => (ts.renditions.iter())
            .filter(|r| !r.program.sample_aes_covers())
            .map(|r| r.rendition.track_id)
            .collect(),
        _ => Vec::new(),
    }
}

/// An output of a title, as the server's routes split them.
#[derive(Debug, Clone, Copy)]
enum Output {
    /// `master.m3u8` and its media and subtitle playlists (with the clear output: the
    /// I-frame playlists and nginx-vod's muxed playlist too).
    Cmaf,
    /// `manifest.mpd`.
    Dash,
    /// `master-ts.m3u8` and its TS media, subtitle and (clear) I-frame playlists.
    Ts,
}

/// The answers to `output`'s manifests of `f` in output `p` (clear when `None`) with the
/// request's `token`: (patched, written).
fn answers(
    f: &Fixture,
    output: Output,
    p: Option<&Protected>,
    token: Option<&str>,
) -> (Answers, Answers) {
    let title = &f.title;
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut add = |resource: Resource, clear: String, written: String| {
        old.push((
            resource.to_string(),
            decorate(f, &resource, clear, p, token),
        ));
        new.push((resource.to_string(), written));
    };
    match output {
        Output::Dash => {
            let options = options(title, p, token, Vec::new());
            add(
                Resource::Mpd,
                render_mpd(title),
                render_mpd_with(title, &options),
            );
        }
        Output::Cmaf => {
            let options = options(title, p, token, Vec::new());
            let master = render_multivariant_playlist_with(title, &options);
            add(
                Resource::Multivariant,
                render_multivariant_playlist(title),
                master,
            );
            for r in &title.renditions {
                let resource = Resource::MediaPlaylist {
                    track_id: r.track_id,
                };
                let written = render_media_playlist_with(title, r, &options);
                add(resource, render_media_playlist(title, r), written);
            }
            for track_id in subtitle_ids(title) {
                let resource = Resource::MediaPlaylist { track_id };
                let clear = render_subtitle_playlist(&f.plan, track_id);
                add(
                    resource,
                    clear,
                    render_subtitle_playlist_with(&f.plan, track_id, &options),
                );
            }
        }
        Output::Ts => {
            let Some(ts) = &f.ts else {
                return (old, new);
            };
            let uncovered = uncovered(ts, p);
            let options = options(title, p, token, uncovered.clone());
            let master = render_ts_multivariant_playlist_with(title, ts, &options);
            add(
                Resource::MultivariantTs,
                sample_aes_master(title, ts, p),
                master,
            );
            let offered = |r: &&TsRendition| !uncovered.contains(&r.rendition.track_id);
            for r in ts.renditions.iter().filter(offered) {
                let track_id = r.rendition.track_id;
                let written = render_ts_media_playlist_with(title, r, &options);
                let clear = render_ts_media_playlist(title, r);
                add(Resource::TsMediaPlaylist { track_id }, clear, written);
                // I-frame playlists are clear only (refused with HLS encrypted).
                if p.is_none() && r.program.streams.first().is_some_and(|s| s.is_video()) {
                    let written = render_ts_iframe_playlist_with(r, &options);
                    let clear = render_ts_iframe_playlist(r);
                    add(Resource::TsIframePlaylist { track_id }, clear, written);
                }
            }
            for track_id in subtitle_ids(title) {
                let resource = Resource::TsMediaPlaylist { track_id };
                let clear = render_ts_subtitle_playlist(&f.plan, track_id);
                let written = render_ts_subtitle_playlist_with(&f.plan, track_id, &options);
                add(resource, clear, written);
            }
        }
    }
    if let (Output::Cmaf, None) = (output, p) {
        let (extra_old, extra_new) = clear_extras(f, token);
        old.extend(extra_old);
        new.extend(extra_new);
    }
    (old, new)
}

/// The TS multivariant playlist the server patched: the clear one, trimmed for SAMPLE-AES
/// (`server::ts::ts_content`).
fn sample_aes_master(title: &Title, ts: &TsTitle, p: Option<&Protected>) -> String {
    let master = render_ts_multivariant_playlist(title, ts);
    if p.is_none_or(|p| p.scheme != Scheme::Cbcs) {
        return master;
    }
    let text = patches::without_muxed_only_audio(&master);
    let names: Vec<String> = (uncovered(ts, p).iter())
        .map(|&track_id| Resource::TsMediaPlaylist { track_id }.to_string())
        .collect();
    match names.is_empty() {
        true => text,
        false => patches::without_playlists(&text, &names),
    }
}

/// What the server passes the writers for output `p` (clear when `None`) and the token
/// it carries.
fn options(
    title: &Title,
    p: Option<&Protected>,
    token: Option<&str>,
    withheld: Vec<u32>,
) -> ManifestOptions {
    ManifestOptions {
        version: p.map(|p| p.token.clone()),
        query: token.map(|t| format!("token={t}")),
        trick_play: p.is_none(),
        withheld,
        protection: p.map(|p| ManifestProtection {
            scheme: p.scheme,
            key: p.key.clone(),
            clear_token: title.version_token(),
            key_name: KEY_NAME.to_owned(),
            licence_url: LICENCE.to_owned(),
        }),
    }
}

/// The ids of the title's subtitle playlists: text tracks, then sidecar files.
fn subtitle_ids(title: &Title) -> Vec<u32> {
    let texts = title.index.text_tracks.iter().map(|t| t.track_id);
    texts
        .chain(title.sidecars.iter().map(|s| s.track_id))
        .collect()
}

/// The other answers of the clear output: I-frame playlists (never decorated) and the
/// muxed playlist of nginx-vod's names (the token carried on), old and new.
fn clear_extras(f: &Fixture, token: Option<&str>) -> (Answers, Answers) {
    let title = &f.title;
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for r in title
        .renditions
        .iter()
        .filter(|r| r.kind == TrackKind::Video)
    {
        let name = Resource::IframePlaylist {
            track_id: r.track_id,
        }
        .to_string();
        old.push((name.clone(), render_iframe_playlist(title, r)));
        let text = render_iframe_playlist_with(title, r, &ManifestOptions::default());
        new.push((name, text));
    }
    let members: Vec<&Rendition> = title.renditions.iter().take(2).collect();
    let segment = |n: u64| format!("seg-{n}-v1-a1.m4s");
    let muxed = render_muxed_media_playlist(title, &members, "init-v1-a1.mp4", segment);
    let first = Resource::MediaPlaylist {
        track_id: members.first().map_or(0, |r| r.track_id),
    };
    let old_muxed = clear_manifest(&first, muxed.unwrap_or_default(), token);
    old.push(("index-v1-a1.m3u8".into(), old_muxed));
    let options = options(title, None, token, Vec::new());
    let muxed =
        render_muxed_media_playlist_with(title, &members, "init-v1-a1.mp4", segment, &options);
    new.push(("index-v1-a1.m3u8".into(), muxed.unwrap_or_default()));
    (old, new)
}

/// The title of the repository's title document (`fixtures/ladder/ladder.json`), built as
/// the server builds it: files numbered in entry order, sidecars after the media.
fn ladder_title(target_ms: u32) -> Title {
    let key = ObjectKey::parse("ladder/ladder.json").unwrap();
    let bytes = fixture_bytes("ladder/ladder.json");
    let document = parse_title_document(&key, &bytes, 1 << 20, 64).unwrap();
    let mut files: Vec<&ObjectKey> = Vec::new();
    for entry in document.entries() {
        if !files.contains(&&entry.key) {
            files.push(&entry.key);
        }
    }
    let number = |key: &ObjectKey| files.iter().position(|f| *f == key).unwrap() as u32 + 1;
    let titles: Vec<Title> = (files.iter())
        .map(|key| match SidecarFormat::of(key.as_str()) {
            None => fixture_title(key.as_str(), target_ms),
            // A sidecar has no title; its slot is never read.
            Some(_) => fixture_title(files[0].as_str(), target_ms),
        })
        .collect();
    let roles = (document.video.iter().map(|e| (e, LadderRole::Video)))
        .chain(document.audio.iter().map(|e| (e, LadderRole::Audio)));
    let entries: Vec<LadderEntry> = roles
        .map(|(entry, role)| LadderEntry {
            label: entry.entry.clone(),
            file: number(&entry.key),
            title: &titles[number(&entry.key) as usize - 1],
            role,
            track: entry.track,
            language: entry.language.clone(),
            name: entry.name.clone(),
        })
        .collect();
    let sidecars = (document.subtitles.iter())
        .map(|entry| SidecarSubtitle {
            track_id: document_track_id(number(&entry.key), 0).unwrap(),
            format: SidecarFormat::of(entry.key.as_str()).unwrap(),
            language: entry.language.clone(),
            name: entry.name.clone(),
            default: entry.default,
            forced: entry.forced,
            size_bytes: fixture_bytes(entry.key.as_str()).len() as u64,
            offset_ns: 0,
        })
        .collect();
    let version = ObjectIdentity {
        size: bytes.len() as u64,
        version: "ladder".into(),
    };
    build_ladder(&entries, sidecars, version, target_ms).unwrap()
}

/// H.264 with AAC, then an HEVC video and an MP3 audio taken from other fixtures: a TS
/// output SAMPLE-AES covers only in part (the HEVC variant and the MP3 alternate go).
fn mixed_title(target_ms: u32) -> Title {
    let index = |name: &str| {
        let file = bytes::Bytes::from(fixture_bytes(name));
        crate::media::index_from_bytes(&file, &MediaLimits::default()).unwrap()
    };
    let mut mixed = index("h264-aac-3s.mp4");
    let kind = |t: &&crate::media::TrackIndex, k| t.kind == k;
    let hevc = index("hevc-aac-3s.mp4");
    let video = hevc.tracks.iter().find(|t| kind(t, TrackKind::Video));
    let mp3 = index("h264-mp3-3s.mp4");
    let audio = mp3.tracks.iter().find(|t| kind(t, TrackKind::Audio));
    for (track, id, language) in [(video, 5, None), (audio, 6, Some("fra"))] {
        let mut track = track.unwrap().clone();
        track.track_id = id;
        track.language = language.map(str::to_owned).or(track.language);
        mixed.tracks.push(track);
    }
    Title::new(mixed, target_ms).unwrap()
}

/// Every media fixture of the repository (`fixtures/`, `fixtures/ts/`, `fixtures/ladder/`),
/// the title document, and the mixed title.
fn fixtures(target_ms: u32) -> Vec<Fixture> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut names = Vec::new();
    for folder in ["", "ts", "ladder"] {
        let mut found: Vec<String> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| [".mp4", ".m4a"].iter().any(|x| n.ends_with(x)))
            .map(|n| match folder {
                "" => n,
                _ => format!("{folder}/{n}"),
            })
            .collect();
        found.sort();
        names.extend(found);
    }
    let mut out: Vec<Fixture> = names
        .into_iter()
        .map(|name| {
            let title = fixture_title(&name, target_ms);
            (name, title)
        })
        .chain(std::iter::once((
            "ladder/ladder.json".to_owned(),
            ladder_title(target_ms),
        )))
        .chain(std::iter::once((
            "mixed".to_owned(),
            mixed_title(target_ms),
        )))
        .map(|(name, title)| Fixture {
            name,
            ts: TsTitle::new(&title).ok(),
            plan: SubtitlePlan::new(&title),
            title,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Old and new answers, name by name, the first difference shown whole.
fn same(fixture: &str, case: &str, (old, new): (Answers, Answers)) -> usize {
    let names = |list: &Answers| list.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&old), names(&new), "{fixture}, {case}");
    for ((name, old), (_, new)) in old.iter().zip(&new) {
        assert!(
            old == new,
            "{fixture}, {case}, {name}:\n--- patched\n{old}\n--- written\n{new}"
        );
    }
    old.len()
}

/// Given every fixture and every output the server serves, with and without a signed
/// URL's token (a hostile one too), when the writers take the options the server would
/// give them, then they write the bytes the server made by patching the clear rendering.
#[test]
fn before_after_oracle_writers_match_the_patched_clear_renderings() {
    let key = content_key();
    let outputs = [
        (Output::Cmaf, None),
        (Output::Dash, None),
        (Output::Ts, None),
        (Output::Cmaf, Some(Scheme::Aes128)),
        (Output::Cmaf, Some(Scheme::Cbcs)),
        (Output::Ts, Some(Scheme::Aes128)),
        (Output::Ts, Some(Scheme::Cbcs)),
        (Output::Dash, Some(Scheme::Cenc)),
        (Output::Dash, Some(Scheme::Cbcs)),
    ];
    let (mut compared, mut withheld, mut muxed_only) = (0, 0, 0);
    for target_ms in [1000, 6000] {
        for f in fixtures(target_ms) {
            for (output, scheme) in outputs {
                let p = scheme.map(|scheme| Protected {
                    scheme,
                    key: key.clone(),
                    token: format!("00000000000000{:02x}", scheme as u8 + 0xa0),
                });
                if let (Output::Ts, Some(ts)) = (output, &f.ts) {
                    let uncovered = uncovered(ts, p.as_ref()).len();
                    // The server refuses the playlist when nothing is covered.
                    if uncovered > 0 && uncovered == ts.renditions.len() {
                        continue;
                    }
                    let alternates = ts
                        .renditions
                        .iter()
                        .filter(|r| r.rendition.kind == TrackKind::Audio);
                    withheld += usize::from(uncovered > 0);
                    muxed_only += usize::from(
                        scheme == Some(Scheme::Cbcs)
                            && ts.main_audio.is_some()
                            && alternates.count() == 0,
                    );
                }
                for token in [None, Some("1700000000-abc_DEF.x"), Some("a\"b<c>&d?e")] {
                    let case = format!("{output:?} {scheme:?}, {target_ms} ms, token {token:?}");
                    compared += same(&f.name, &case, answers(&f, output, p.as_ref(), token));
                }
            }
        }
    }
    // The cases that need it were met: SAMPLE-AES leaving TS renditions out, and dropping
    // muxed-only audio groups.
    assert!(compared > 3000, "{compared} manifests compared");
    assert!(withheld > 0 && muxed_only > 0, "{withheld} {muxed_only}");
}
