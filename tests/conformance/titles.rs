//! Titles: the ladder fixture's title document, its variants decoded against
//! their own sources, its audio languages, its bandwidths and its sidecar subtitles.

use super::common;
use super::http::*;
use super::subtitles::{text_server, DASH_FORMATS};
use super::text_segments::dash_text_cues;
use super::tools::*;
use super::webvtt::*;
use super::*;

/// The ladder fixture's title document, and the file behind each of its file numbers
/// (`f1`, `f2`, ... in resource names: distinct files in document order).
const LADDER_DOCUMENT: &str = "ladder/ladder.json";
const LADDER_FILES: &[&str] = &[
    "ladder/ladder-180p.mp4",
    "ladder/ladder-360p.mp4",
    "ladder/ladder-270p.mp4",
    "ladder/ladder-fr.m4a",
    "ladder/ladder-en.vtt",
    "ladder/ladder-de.srt",
];

/// The source file of a document rendition's resource name (`index-f2-t1.m3u8`).
fn ladder_source(name: &str) -> String {
    let file: usize = name
        .split("-f")
        .nth(1)
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .expect("a document rendition name");
    let fixture = LADDER_FILES[file - 1];
    common::fixtures()
        .join(fixture)
        .to_string_lossy()
        .into_owned()
}

/// Every variant of the ladder decodes, through HLS and through DASH, to the frames of
/// its own source file; the audio of both languages decodes to its source's PCM; every
/// rendition is moved by the same shift (video and audio, within 1 ms), so A/V holds
/// whichever variant plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_variants_decode_to_their_own_sources() {
    let Some(server) = start().await else { return };
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let uris = master_playlist_uris(&master);
    assert_eq!(uris.len(), 5, "3 variants and 2 audio renditions: {master}");
    let mut shifts = Vec::new();
    for uri in &uris {
        let source = ladder_source(uri);
        let input = server.url(&format!("{base}{uri}"));
        let video = !uri.ends_with("-f4-t1.m3u8") && !uri.ends_with("-t2.m3u8");
        if video {
            let want = frame_hashes(&source, "v:0").await;
            let got = frame_hashes(&input, "v:0").await;
            assert_eq!(got.len(), want.len(), "{uri}: number of frames");
            if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
                panic!("{uri}: decoded frame {i} differs from {source}");
            }
        } else {
            let want = decode_pcm(&source, "a:0", None).await;
            let got = decode_pcm(&input, "a:0", None).await;
            assert!(want.len() >= 48_000, "{uri}: vacuous");
            let offset = pcm_offset(&want, &got)
                .unwrap_or_else(|| panic!("{uri}: the PCM of {source} is not in the output"));
            assert!(offset <= AAC_FRAME, "{uri}: starts {offset} frames early");
        }
        let selector = if video { "v:0" } else { "a:0" };
        let src = packets(&source, selector).await;
        let out = packets(&input, selector).await;
        let shift = matched_shift(&src, &out)
            .unwrap_or_else(|| panic!("{uri}: the first packets of {source} are not there"));
        shifts.push((uri.clone(), shift));
    }
    let (_, first) = shifts[0].clone();
    for (uri, shift) in &shifts {
        assert!(
            (shift - first).abs() <= SYNC_TOLERANCE_S,
            "{uri} moved by {shift:.6} s, the first variant by {first:.6} s: {shifts:?}"
        );
    }
    // DASH: the video AdaptationSet's Representations in order, each its own source.
    let mpd = fetch_text(&server, &format!("{base}manifest.mpd")).await;
    let ids: Vec<String> = (mpd.split("<Representation id=\"").skip(1))
        .filter_map(|rest| rest.split('"').next().map(str::to_owned))
        .collect();
    let input = server.url(&format!("{base}manifest.mpd"));
    for (n, id) in ids.iter().take(3).enumerate() {
        let source = ladder_source(&format!("index-{id}.m3u8"));
        let want = frame_hashes(&source, "v:0").await;
        let got = frame_hashes(&input, &format!("v:{n}")).await;
        assert_eq!(got.len(), want.len(), "DASH {id}: number of frames");
        if let Some(i) = (0..want.len()).find(|&i| got[i].hash != want[i].hash) {
            panic!("DASH {id}: decoded frame {i} differs from {source}");
        }
    }
    // The two audio Representations; the sidecar subtitles (`-t0`) are checked below.
    for (n, id) in ids.iter().skip(3).take(2).enumerate() {
        let source = ladder_source(&format!("index-{id}.m3u8"));
        let want = decode_pcm(&source, "a:0", None).await;
        let got = decode_pcm(&input, &format!("a:{n}"), None).await;
        let offset = pcm_offset(&want, &got)
            .unwrap_or_else(|| panic!("DASH {id}: the PCM of {source} is not in the output"));
        assert!(
            offset <= AAC_FRAME,
            "DASH {id}: starts {offset} frames early"
        );
    }
    server.shutdown().await;
}

/// Each variant's `BANDWIDTH` is at least, and its `AVERAGE-BANDWIDTH` within 1 % of, the
/// bit rates measured from the segments it is served with: its video's segments plus the
/// audio group's most demanding rendition, each segment over its `EXTINF`.
#[tokio::test]
async fn ladder_bandwidths_match_the_segments() {
    let server = fixtures_server().await;
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    // (segment bytes, EXTINF seconds) of each media playlist.
    let mut measured: Vec<(String, Vec<(u64, f64)>)> = Vec::new();
    for uri in master_playlist_uris(&master) {
        let text = fetch_text(&server, &format!("{base}{uri}")).await;
        let playlist = MediaPlaylist::parse(&text);
        let folder = uri.rsplit_once('/').map_or("", |(f, _)| f);
        let mut segments = Vec::new();
        for (name, secs) in playlist.segments.iter().zip(&playlist.extinfs) {
            let bytes = fetch_ok(&server, &format!("{base}{folder}/{name}"))
                .await
                .body
                .len();
            segments.push((bytes as u64, *secs));
        }
        measured.push((uri, segments));
    }
    let rates = |segments: &[(u64, f64)]| {
        let peak = (segments.iter())
            .map(|(b, s)| *b as f64 * 8.0 / s)
            .fold(0.0, f64::max);
        let (bytes, secs) = (segments.iter()).fold((0, 0.0), |(b, s), x| (b + x.0, s + x.1));
        (peak, bytes as f64 * 8.0 / secs)
    };
    let audios: Vec<(f64, f64)> = (measured.iter())
        .filter(|(uri, _)| uri.ends_with("-f4-t1.m3u8") || uri.ends_with("-t2.m3u8"))
        .map(|(_, s)| rates(s))
        .collect();
    assert_eq!(audios.len(), 2);
    let audio_peak = audios.iter().map(|a| a.0).fold(0.0, f64::max);
    let audio_average = audios.iter().map(|a| a.1).fold(0.0, f64::max);
    let lines: Vec<&str> = master.lines().collect();
    let mut checked = 0;
    for pair in lines.windows(2) {
        let Some(attrs) = pair[0].strip_prefix("#EXT-X-STREAM-INF:") else {
            continue;
        };
        let attr = |name: &str| -> f64 {
            (attrs.split(','))
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {attrs}"))
        };
        let (_, segments) = (measured.iter())
            .find(|(uri, _)| uri == pair[1])
            .expect("variant measured");
        let (peak, average) = rates(segments);
        let (peak, average) = (peak + audio_peak, average + audio_average);
        assert!(
            attr("BANDWIDTH") >= peak,
            "{}: BANDWIDTH {} under the measured peak {peak:.0}",
            pair[1],
            attr("BANDWIDTH")
        );
        let stated = attr("AVERAGE-BANDWIDTH");
        assert!(
            (stated - average).abs() <= 0.01 * average,
            "{}: AVERAGE-BANDWIDTH {stated} not within 1 % of the measured {average:.0}",
            pair[1]
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
    server.shutdown().await;
}

/// The ladder's sidecar subtitles (WebVTT and SRT) read back, through HLS and DASH, with
/// the text and times ffmpeg reads from the files themselves: HLS segments on the output
/// timeline (source time + S, S measured from the video), each holding only cues that
/// overlap it; DASH in every form (`wvtt` and `stpp` segments, the WebVTT file) on the
/// Period timeline (source time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_sidecar_subtitles_keep_their_cues() {
    let Some(server) = start().await else { return };
    let base = format!("/vod/{LADDER_DOCUMENT}/");
    let master = fetch_text(&server, &format!("{base}master.m3u8")).await;
    let variant = master_playlist_uris(&master)
        .into_iter()
        .find(|u| u.contains("-f1-t1"))
        .expect("the first rung");
    let source_video = common::fixtures().join(LADDER_FILES[0]);
    let shift = first_pts(&server.url(&format!("{base}{variant}")), "v:0").await
        - first_pts(&source_video.to_string_lossy(), "v:0").await;
    let mut dash_servers = Vec::new();
    for format in DASH_FORMATS {
        dash_servers.push((format, text_server(&common::fixtures(), format).await));
    }
    for (file, language) in [
        ("ladder/ladder-en.vtt", "en"),
        ("ladder/ladder-de.srt", "de"),
    ] {
        let path = common::fixtures().join(file).to_string_lossy().into_owned();
        let source = run_tool(
            "ffmpeg",
            args(&["-v", "error", "-nostdin", "-i", &path, "-f", "webvtt", "-"]),
        )
        .await;
        let want = WebVtt::parse(&String::from_utf8_lossy(&source)).cues;
        assert_eq!(want.len(), 2, "{file}: {want:?}");
        // HLS: the rendition of this language, its segments, each cue once.
        let media = (master.lines())
            .find(|l| {
                l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES")
                    && quoted_attribute(l, "LANGUAGE").as_deref() == Some(language)
            })
            .unwrap_or_else(|| panic!("{language} subtitles in {master}"));
        let uri = quoted_attribute(media, "URI").expect("URI");
        let folder = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
        let playlist = MediaPlaylist::parse(&fetch_text(&server, &format!("{base}{uri}")).await);
        let mut got: Vec<VttCue> = Vec::new();
        let mut start = shift;
        for (segment, extinf) in playlist.segments.iter().zip(&playlist.extinfs) {
            let text = fetch_text(&server, &format!("{base}{folder}{segment}")).await;
            let vtt = WebVtt::parse(&text);
            assert_eq!(vtt.timestamp_map, Some((0.0, 0)), "{segment}");
            for cue in vtt.cues {
                assert!(
                    cue.end > start - SYNC_TOLERANCE_S && cue.start < start + extinf,
                    "{segment} ({start:.3} s + {extinf}) holds {cue:?}"
                );
                if !got.contains(&cue) {
                    got.push(cue);
                }
            }
            start += extinf;
        }
        // DASH, in every form: the text AdaptationSet of this language.
        let mut outputs = vec![("HLS".to_owned(), got, shift)];
        for (format, dash) in &dash_servers {
            let mpd = fetch_text(dash, &format!("{base}manifest.mpd")).await;
            let set = (mpd.split("<AdaptationSet").skip(1))
                .find(|s| {
                    s.contains(&format!("lang=\"{language}\""))
                        && s.contains("contentType=\"text\"")
                })
                .unwrap_or_else(|| panic!("{language} text set in {mpd}"));
            let cues = dash_text_cues(dash, &base, set).await;
            outputs.push((format!("DASH {format:?}"), cues, 0.0));
        }
        for (via, cues, offset) in &outputs {
            let (cues, offset) = (cues, *offset);
            assert_eq!(cues.len(), want.len(), "{file} via {via}: {cues:?}");
            for (got, want) in cues.iter().zip(&want) {
                assert_eq!(
                    unescaped(&got.text),
                    unescaped(&want.text),
                    "{file} via {via}"
                );
                for (out, src) in [(got.start, want.start), (got.end, want.end)] {
                    assert!(
                        (out - (src + offset)).abs() <= SYNC_TOLERANCE_S + 1e-6,
                        "{file} via {via}: {got:?} against {want:?} + {offset:.6} s"
                    );
                }
            }
        }
    }
    server.shutdown().await;
    for (_, dash) in dash_servers {
        dash.shutdown().await;
    }
}
