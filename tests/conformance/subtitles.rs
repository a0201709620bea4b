//! Subtitles: the cues of embedded text tracks, read back through HLS (segmented WebVTT
//! with `X-TIMESTAMP-MAP`) and DASH (in each `dash-subtitle-format`: `wvtt` and `stpp`
//! segments, or one WebVTT file on the Period timeline), against the source's cues.

use vodpack::package::DashSubtitleFormat;

use super::common::{self, TestServer};
use super::http::*;
use super::text_segments::dash_text_cues;
use super::tools::*;
use super::webvtt::*;
use super::{KnownCue, FIXTURES, KNOWN_CUES, SYNC_TOLERANCE_S};

/// Every DASH subtitle form, each served by its own server over the fixtures.
pub(crate) const DASH_FORMATS: [DashSubtitleFormat; 3] = [
    DashSubtitleFormat::Wvtt,
    DashSubtitleFormat::Imsc1,
    DashSubtitleFormat::WebvttFile,
];

/// A server over `root` with 1 s segments whose MPDs offer subtitles as `format`.
pub(crate) async fn text_server(root: &std::path::Path, format: DashSubtitleFormat) -> TestServer {
    let settings = vodpack::config::Settings {
        dash_subtitle_format: format,
        ..common::segments_of(1000)
    };
    common::start_server_with(root, settings).await
}

/// Every text track of the source (`tx3g`, read with ffmpeg; `wvtt`, which ffmpeg cannot
/// read, against the cues its fixture was written with) reaches players through both
/// protocols with its language, and with the source's cues: the same text and markup
/// (italics of `tx3g` style boxes included) at the same times on the video's output timeline (source time + S,
/// S measured on the video as in the timing test), within 1 ms.
/// - HLS: the `SUBTITLES` rendition every variant references; its playlist's segments
///   match the video playlist's, each WebVTT segment holds the cues that overlap its
///   span (a cue spanning a cut is in both, counted once), and `X-TIMESTAMP-MAP` maps
///   its times to the video's timeline (as hls.js: local - LOCAL + MPEGTS / 90000).
/// - DASH, in every form (`wvtt` and `stpp` segments joined and demuxed by ffmpeg, or the
///   `text/vtt` file): the text set's cues on the Period timeline, so output time = Period
///   time + the video's `presentationTimeOffset`; a cue cut at segment edges counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_and_dash_carry_the_source_cues() {
    let Some(server) = start().await else { return };
    let mut dash_servers = Vec::new();
    for format in DASH_FORMATS {
        dash_servers.push((format, text_server(&common::fixtures(), format).await));
    }
    let mut checked = 0;
    for &fixture in FIXTURES {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        let known = KNOWN_CUES.iter().find(|(name, _)| *name == fixture);
        let text_kind = if known.is_some() { "data" } else { "subtitle" };
        let Some(text) = source.streams.iter().find(|s| s.kind == text_kind) else {
            continue;
        };
        let language = text.language.clone().filter(|l| l != "und");
        let want = match known {
            Some((_, cues)) => (cues.iter())
                .map(|&(start, end, text)| VttCue {
                    start,
                    end,
                    text: text.to_owned(),
                })
                .collect(),
            None => {
                let source_vtt = run_tool(
                    "ffmpeg",
                    args(&[
                        "-v",
                        "error",
                        "-nostdin",
                        "-i",
                        &source_input,
                        "-map",
                        "0:s:0",
                        "-f",
                        "webvtt",
                        "-",
                    ]),
                )
                .await;
                WebVtt::parse(&String::from_utf8_lossy(&source_vtt)).cues
            }
        };
        assert!(want.len() >= 2, "{fixture}: source cues {want:?}");
        let source_video = first_pts(&source_input, "v:0").await;
        let base = format!("/vod/{fixture}/");
        let mut outputs = Vec::new();
        for via in Via::OUTPUTS {
            let shift = first_pts(&via.input(&server, fixture), "v:0").await - source_video;
            match via {
                Via::Hls => {
                    let got = hls_cues(&server, &base, language.as_deref(), shift).await;
                    outputs.push((format!("{via:?}"), got, shift));
                }
                _ => {
                    for (format, dash) in &dash_servers {
                        let got = dash_cues(dash, &base, language.as_deref()).await;
                        outputs.push((format!("{via:?} {format:?}"), got, shift));
                    }
                }
            }
        }
        for (via, got, shift) in outputs {
            assert_eq!(
                got.len(),
                want.len(),
                "{fixture} via {via}: cues {got:?}, source {want:?}"
            );
            for (got, want) in got.iter().zip(&want) {
                assert_eq!(
                    unescaped(&got.text),
                    unescaped(&want.text),
                    "{fixture} via {via}"
                );
                for (what, out, src) in
                    [("start", got.start, want.start), ("end", got.end, want.end)]
                {
                    assert!(
                        (out - (src + shift)).abs() <= SYNC_TOLERANCE_S + 1e-6,
                        "{fixture} via {via}: cue {:?} {what} at {out:.6} s, source \
                         {src:.3} s + S {shift:.6} s",
                        want.text
                    );
                }
            }
        }
        checked += 1;
    }
    // h264-aac-movtext-3s.mp4 (tx3g) and h264-aac-wvtt-3s.mp4.
    assert_eq!(checked, 2, "fixtures with a text track");
    server.shutdown().await;
    for (_, dash) in dash_servers {
        dash.shutdown().await;
    }
}

/// The TTML sidecar fixture's title document, and its video (the source's timeline).
const TTML_TITLE: &str = "ladder/ladder-ttml.json";
const TTML_VIDEO: &str = "ladder/ladder-180p.mp4";

/// The cues `fixtures/ladder/ladder-it.ttml` was written with (fixtures/README.md), as
/// WebVTT cue text: ffmpeg 5.1 has no TTML reader to take them from.
const TTML_CUES: &[KnownCue] = &[
    (0.4, 1.2, "Ciao, <i>scala</i>!"),
    (1.5, 3.0, "Caffè &amp; <b>crema</b>\nsu due righe"),
    (3.4, 3.8, "Fine"),
];

/// Given a title document whose subtitles are a TTML file (times in clock time, ticks and
/// frames, styles inline and by reference, a line break), then HLS and every DASH form
/// (`wvtt` and `stpp` segments, the WebVTT file) show its cues with their text and
/// styles at their source times on the video's output timeline (source time + S, S
/// measured on the video), within 1 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttml_sidecar_reaches_hls_and_every_dash_form_at_its_times() {
    let Some(server) = start().await else { return };
    let source_video = first_pts(&Via::Source.input(&server, TTML_VIDEO), "v:0").await;
    let base = format!("/vod/{TTML_TITLE}/");
    let shift = |via: Via| {
        let input = via.input(&server, TTML_TITLE);
        async move { first_pts(&input, "v:0").await - source_video }
    };
    let hls_shift = shift(Via::Hls).await;
    let dash_shift = shift(Via::Dash).await;
    let mut outputs = vec![(
        "HLS".to_owned(),
        hls_cues(&server, &base, Some("it"), hls_shift).await,
        hls_shift,
    )];
    for format in DASH_FORMATS {
        let dash = text_server(&common::fixtures(), format).await;
        let got = dash_cues(&dash, &base, Some("it")).await;
        outputs.push((format!("DASH {format:?}"), got, dash_shift));
        dash.shutdown().await;
    }
    for (via, got, shift) in outputs {
        assert_eq!(got.len(), TTML_CUES.len(), "via {via}: {got:?}");
        for (got, &(start, end, text)) in got.iter().zip(TTML_CUES) {
            assert_eq!(unescaped(&got.text), unescaped(text), "via {via}");
            for (out, src) in [(got.start, start), (got.end, end)] {
                assert!(
                    (out - (src + shift)).abs() <= SYNC_TOLERANCE_S + 1e-6,
                    "via {via}: {got:?}, source {start}-{end} s + S {shift:.6} s"
                );
            }
        }
    }
    server.shutdown().await;
}

/// The cues of the HLS subtitle rendition of the title at `base`, on the output timeline,
/// each once. Checks the rendition's attributes, that every variant references its group,
/// that its segments match the video's, and that each segment holds only cues overlapping
/// its span (the video segment's: S + the EXTINFs before it; the first reaches back and
/// the last forward without end).
async fn hls_cues(
    server: &TestServer,
    base: &str,
    language: Option<&str>,
    shift: f64,
) -> Vec<VttCue> {
    let master = fetch_text(server, &format!("{base}master.m3u8")).await;
    let media: Vec<&str> = (master.lines())
        .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES"))
        .collect();
    assert_eq!(media.len(), 1, "{base}: one subtitle rendition\n{master}");
    let group = quoted_attribute(media[0], "GROUP-ID").expect("GROUP-ID");
    assert_eq!(
        quoted_attribute(media[0], "LANGUAGE").as_deref(),
        language,
        "{master}"
    );
    for inf in master
        .lines()
        .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"))
    {
        assert_eq!(
            quoted_attribute(inf, "SUBTITLES").as_ref(),
            Some(&group),
            "{inf}"
        );
    }
    let uri = quoted_attribute(media[0], "URI").expect("URI");
    let folder = &uri[..uri.rfind('/').map_or(0, |i| i + 1)];
    let playlist = MediaPlaylist::parse(&fetch_text(server, &format!("{base}{uri}")).await);
    let video_uri = master
        .lines()
        .skip_while(|l| !l.starts_with("#EXT-X-STREAM-INF:"))
        .nth(1)
        .expect("a variant");
    let video = MediaPlaylist::parse(&fetch_text(server, &format!("{base}{video_uri}")).await);
    assert_eq!(
        playlist.extinfs, video.extinfs,
        "{base}{uri}: segment durations"
    );
    assert_eq!(playlist.target_duration, video.target_duration);
    let mut cues: Vec<VttCue> = Vec::new();
    let mut start = shift;
    let last = playlist.segments.len().saturating_sub(1);
    for (j, (segment, extinf)) in playlist.segments.iter().zip(&playlist.extinfs).enumerate() {
        let reply = fetch_ok(server, &format!("{base}{folder}{segment}")).await;
        assert!(
            reply
                .headers
                .iter()
                .any(|(k, v)| k == "content-type" && v.starts_with("text/vtt")),
            "{segment}: {:?}",
            reply.headers
        );
        let vtt = WebVtt::parse(&reply.text());
        let (local, mpegts) = vtt.timestamp_map.expect("X-TIMESTAMP-MAP in every segment");
        let end = start + extinf;
        for cue in vtt.cues {
            let cue = VttCue {
                start: cue.start - local + mpegts as f64 / 90_000.0,
                end: cue.end - local + mpegts as f64 / 90_000.0,
                text: cue.text,
            };
            assert!(
                (j == 0 || cue.end > start - SYNC_TOLERANCE_S)
                    && (j == last || cue.start < end + SYNC_TOLERANCE_S),
                "{segment} ({start:.3}..{end:.3} s) holds {cue:?}"
            );
            // A cue written whole in two segments counts once; a cue cut at a segment's
            // edge (`wvtt`) continues in the next one, and shows as one cue.
            if cues.contains(&cue) {
                continue;
            }
            let continues = cues.iter_mut().find(|c| {
                c.text == cue.text && (cue.start - c.end).abs() <= SYNC_TOLERANCE_S / 2.0
            });
            match continues {
                Some(earlier) => earlier.end = earlier.end.max(cue.end),
                None => cues.push(cue),
            }
        }
        start = end;
    }
    cues
}

/// The cues of the DASH text AdaptationSet of the title at `base`, on the output timeline
/// (Period time + the video's presentationTimeOffset). Checks its `lang`, and that the
/// form the server offers is the one read.
async fn dash_cues(server: &TestServer, base: &str, language: Option<&str>) -> Vec<VttCue> {
    let mpd = fetch_text(server, &format!("{base}manifest.mpd")).await;
    let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
    let text_sets: Vec<&&str> = sets
        .iter()
        .filter(|s| s.contains("contentType=\"text\""))
        .collect();
    assert_eq!(text_sets.len(), 1, "{base}: one text AdaptationSet\n{mpd}");
    let set = text_sets[0];
    assert_eq!(xml_attribute(set, "lang").as_deref(), language);
    let video = sets
        .iter()
        .find(|s| s.contains("contentType=\"video\""))
        .expect("a video AdaptationSet");
    let timescale: f64 = xml_attribute(video, "timescale")
        .expect("timescale")
        .parse()
        .unwrap();
    let offset: f64 =
        xml_attribute(video, "presentationTimeOffset").map_or(0.0, |o| o.parse().unwrap());
    (dash_text_cues(server, base, set).await.into_iter())
        .map(|c| VttCue {
            start: c.start + offset / timescale,
            end: c.end + offset / timescale,
            text: c.text,
        })
        .collect()
}
