//! DASH text sets read back the way a checker that is not vodpack would: the whole WebVTT
//! file of `webvtt-file`, or the init and every media segment of a `wvtt` or `stpp` set
//! (its `SegmentTemplate` and `SegmentTimeline`) joined into one file that ffmpeg demuxes
//! (ffprobe gives each sample's time, `ffmpeg -c copy -f data` its bytes). ffmpeg 5.1
//! decodes neither `wvtt` nor `stpp` (both are data streams to it), so the samples are
//! read here: `vttc`/`payl` boxes walked by hand, TTML documents with quick-xml.

use super::common::{TempDir, TestServer};
use super::http::*;
use super::tools::*;
use super::webvtt::*;

/// The cues of the DASH text AdaptationSet `set` (its XML text) of the title at `base`,
/// on the Period timeline (seconds), pieces of one cue cut at segment edges or repeated
/// in samples joined back into one. Checks the set's MIME type and codecs for its form.
pub(crate) async fn dash_text_cues(server: &TestServer, base: &str, set: &str) -> Vec<VttCue> {
    if set.contains("<BaseURL>") {
        assert_eq!(xml_attribute(set, "mimeType").as_deref(), Some("text/vtt"));
        let start = set.find("<BaseURL>").expect("BaseURL") + "<BaseURL>".len();
        let url = &set[start..start + set[start..].find("</BaseURL>").expect("</BaseURL>")];
        let vtt = WebVtt::parse(&fetch_text(server, &format!("{base}{url}")).await);
        assert_eq!(vtt.timestamp_map, None, "{url}: no X-TIMESTAMP-MAP in DASH");
        return vtt.cues;
    }
    assert_eq!(
        xml_attribute(set, "mimeType").as_deref(),
        Some("application/mp4")
    );
    let codecs = xml_attribute(set, "codecs").expect("codecs");
    let ttml = match codecs.as_str() {
        "wvtt" => false,
        "stpp.ttml.im1t" => true,
        other => panic!("text codecs {other}"),
    };
    let rep = (set.split("<Representation").nth(1))
        .and_then(|r| xml_attribute(r, "id"))
        .expect("Representation@id");
    let timescale: f64 = xml_attribute(set, "timescale")
        .expect("timescale")
        .parse()
        .unwrap();
    let offset: f64 =
        xml_attribute(set, "presentationTimeOffset").map_or(0.0, |o| o.parse().unwrap());
    let first: u64 = xml_attribute(set, "startNumber")
        .expect("startNumber")
        .parse()
        .unwrap();
    let spans = timeline_spans(set);
    let init = xml_attribute(set, "initialization").expect("initialization");
    let media = xml_attribute(set, "media").expect("media");
    let mut joined = fetch_ok(
        server,
        &format!("{base}{}", init.replace("$RepresentationID$", &rep)),
    )
    .await
    .body
    .to_vec();
    for n in 0..spans.len() as u64 {
        let url = media
            .replace("$RepresentationID$", &rep)
            .replace("$Number$", &(first + n).to_string());
        let reply = fetch_ok(server, &format!("{base}{url}")).await;
        assert_eq!(
            reply.header("content-type"),
            Some("application/mp4"),
            "{url}"
        );
        joined.extend_from_slice(&reply.body);
    }
    let dir = TempDir::new("text-segments");
    let path = dir.path().join("joined.mp4");
    std::fs::write(&path, &joined).expect("write joined text track");
    let path = path.to_string_lossy().into_owned();
    let probe = run_tool(
        "ffprobe",
        args(&[
            "-v",
            "error",
            "-select_streams",
            "d:0",
            "-show_entries",
            "stream=codec_tag_string:packet=pts_time,size",
            "-of",
            "compact",
            &path,
        ]),
    )
    .await;
    let probe = String::from_utf8_lossy(&probe);
    let tag = if ttml { "stpp" } else { "wvtt" };
    assert!(
        probe.contains(&format!("codec_tag_string={tag}")),
        "{probe}"
    );
    let field = |line: &str, name: &str| -> Option<String> {
        line.split('|')
            .find_map(|kv| Some(kv.strip_prefix(name)?.strip_prefix('=')?.to_owned()))
    };
    let samples: Vec<(f64, usize)> = (probe.lines())
        .filter(|l| l.starts_with("packet|"))
        .map(|l| {
            let pts = field(l, "pts_time").expect("pts").parse().expect("pts");
            (pts, field(l, "size").expect("size").parse().expect("size"))
        })
        .collect();
    let data = run_tool(
        "ffmpeg",
        args(&[
            "-v", "error", "-nostdin", "-i", &path, "-map", "0:d:0", "-c", "copy", "-f", "data",
            "-",
        ]),
    )
    .await;
    assert_eq!(data.len(), samples.iter().map(|s| s.1).sum::<usize>());
    let end = spans
        .last()
        .map_or(0.0, |(t, d)| (t + d) as f64 / timescale);
    let mut cues: Vec<VttCue> = Vec::new();
    let mut at = 0;
    for (i, &(pts, size)) in samples.iter().enumerate() {
        let bytes = &data[at..at + size];
        at += size;
        let sample_end = samples.get(i + 1).map_or(end, |s| s.0);
        let found = match ttml {
            false => wvtt_sample_cues(bytes, pts, sample_end),
            true => ttml_sample_cues(bytes),
        };
        for cue in found {
            join_cue(&mut cues, cue);
        }
    }
    // Media time to the Period timeline.
    let shift = offset / timescale;
    (cues.into_iter())
        .map(|c| VttCue {
            start: c.start - shift,
            end: c.end - shift,
            text: c.text,
        })
        .collect()
}

/// Add `cue`, or extend the cue it continues (same text, starting where that one ends).
fn join_cue(cues: &mut Vec<VttCue>, cue: VttCue) {
    let continued = cues
        .iter_mut()
        .find(|c| c.text == cue.text && (c.end - cue.start).abs() < 1e-3);
    match continued {
        Some(c) => c.end = c.end.max(cue.end),
        None => cues.push(cue),
    }
}

/// (start, duration) in ticks of every `S` of the set's `SegmentTimeline`.
fn timeline_spans(set: &str) -> Vec<(u64, u64)> {
    let timeline = set
        .split("<SegmentTimeline>")
        .nth(1)
        .expect("SegmentTimeline");
    let timeline = timeline.split("</SegmentTimeline>").next().unwrap();
    let mut spans = Vec::new();
    let mut next = 0;
    for s in timeline.split("<S ").skip(1) {
        let attr =
            |name: &str| xml_attribute(&format!(" {s}"), name).map(|v| v.parse::<u64>().unwrap());
        let mut t = attr("t").unwrap_or(next);
        let d = attr("d").expect("S@d");
        for _ in 0..=attr("r").unwrap_or(0) {
            spans.push((t, d));
            t += d;
        }
        next = t;
    }
    spans
}

/// The boxes of `bytes` as (type, body), 32-bit sizes only (what a sample holds).
fn boxes(mut bytes: &[u8]) -> Vec<([u8; 4], &[u8])> {
    let mut out = Vec::new();
    while bytes.len() >= 8 {
        let size = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        assert!(
            size >= 8 && size <= bytes.len(),
            "box size {size} in {bytes:?}"
        );
        out.push((bytes[4..8].try_into().unwrap(), &bytes[8..size]));
        bytes = &bytes[size..];
    }
    assert!(bytes.is_empty(), "trailing bytes in a sample");
    out
}

/// The cues a `wvtt` sample shows from `start` to `end` (ISO/IEC 14496-30 7.4): a cue per
/// `vttc` (its `payl`), none for `vtte`.
fn wvtt_sample_cues(bytes: &[u8], start: f64, end: f64) -> Vec<VttCue> {
    let mut cues = Vec::new();
    for (kind, body) in boxes(bytes) {
        match &kind {
            b"vtte" => assert!(body.is_empty()),
            b"vttc" => {
                let payload = boxes(body)
                    .into_iter()
                    .find(|(k, _)| k == b"payl")
                    .map(|(_, b)| String::from_utf8(b.to_vec()).expect("UTF-8 payl"))
                    .expect("a payl in every vttc");
                cues.push(VttCue {
                    start,
                    end,
                    text: payload,
                });
            }
            other => panic!("box {:?} in a wvtt sample", String::from_utf8_lossy(other)),
        }
    }
    cues
}

/// The cues of a TTML sample (one IMSC1 document): each `p` with its `begin` and `end`
/// (clock times on the media timeline), its spans' styles as `<b>`, `<i>`, `<u>` and its
/// `br`s as line breaks, markup characters escaped as WebVTT writes them. Checks the
/// document is TTML with `ttp:timeBase="media"` and a region.
fn ttml_sample_cues(bytes: &[u8]) -> Vec<VttCue> {
    use quick_xml::events::Event;
    let doc = std::str::from_utf8(bytes).expect("UTF-8 TTML");
    let mut reader = quick_xml::Reader::from_str(doc);
    let mut cues: Vec<VttCue> = Vec::new();
    let (mut in_p, mut styles, mut saw_tt, mut saw_region) = (false, String::new(), false, false);
    let clock = |v: &str| vtt_time(v);
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("TTML: {e}\n{doc}"))
        {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == name)
                        .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                };
                match e.local_name().as_ref() {
                    b"tt" => {
                        saw_tt = true;
                        assert_eq!(attr(b"xmlns").as_deref(), Some("http://www.w3.org/ns/ttml"));
                        assert_eq!(attr(b"ttp:timeBase").as_deref(), Some("media"));
                    }
                    b"region" => saw_region = true,
                    b"p" => {
                        in_p = true;
                        cues.push(VttCue {
                            start: clock(&attr(b"begin").expect("p@begin")),
                            end: clock(&attr(b"end").expect("p@end")),
                            text: String::new(),
                        });
                    }
                    b"br" => cues.last_mut().unwrap().text.push('\n'),
                    b"span" => styles = attr(b"style").unwrap_or_default(),
                    _ => {}
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"p" => in_p = false,
            Event::End(e) if e.local_name().as_ref() == b"span" => styles.clear(),
            Event::Text(t) if in_p => {
                let text = t.decode().unwrap().into_owned();
                push_styled(cues.last_mut().unwrap(), &styles, &text);
            }
            Event::GeneralRef(r) if in_p => {
                let text = match &*r.decode().unwrap() {
                    "amp" => "&amp;",
                    "lt" => "&lt;",
                    "gt" => "&gt;",
                    "quot" => "\"",
                    other => panic!("entity {other}"),
                };
                push_styled(cues.last_mut().unwrap(), &styles, text);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(saw_tt && saw_region, "{doc}");
    // Adjacent runs of one style are one run in WebVTT.
    for cue in &mut cues {
        for tag in ["b", "i", "u"] {
            cue.text = cue.text.replace(&format!("</{tag}><{tag}>"), "");
        }
    }
    cues
}

/// `text` of a span with `styles` (IDREFS of the document's `b`, `i`, `u` styles) as WebVTT.
fn push_styled(cue: &mut VttCue, styles: &str, text: &str) {
    let tags: Vec<&str> = ["b", "i", "u"]
        .into_iter()
        .filter(|t| styles.split_whitespace().any(|s| s == *t))
        .collect();
    tags.iter()
        .for_each(|t| cue.text.push_str(&format!("<{t}>")));
    cue.text.push_str(text);
    tags.iter()
        .rev()
        .for_each(|t| cue.text.push_str(&format!("</{t}>")));
}
