//! TTML sidecars: times in every form, styles and line breaks, and hostile files refused
//! with a typed error.

use super::*;

fn cues(doc: &str) -> Vec<(i128, i128, String)> {
    (parse_ttml(doc.as_bytes()).unwrap().into_iter())
        .map(|c| (c.start_ns / 1_000_000, c.end_ns / 1_000_000, c.payload.text))
        .collect()
}

fn tt(params: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tt xmlns=\"http://www.w3.org/ns/ttml\" \
         xmlns:ttp=\"http://www.w3.org/ns/ttml#parameter\" \
         xmlns:tts=\"http://www.w3.org/ns/ttml#styling\" {params}>\
         <head><styling><style xml:id=\"it\" tts:fontStyle=\"italic\"/>\
         <style xml:id=\"bi\" style=\"it\" tts:fontWeight=\"bold\"/></styling></head>\
         <body>{body}</body></tt>"
    )
}

/// Given clock times (with fractions and with frames), offset times in every metric, `dur`,
/// and times relative to a timed `div`, then each cue starts and ends where TTML says.
#[test]
fn times_in_every_form() {
    let doc = tt(
        "ttp:frameRate=\"25\" ttp:tickRate=\"10000000\"",
        "<div>\
         <p begin=\"00:00:01.250\" end=\"00:00:02.5\">clock</p>\
         <p begin=\"00:00:03:05\" end=\"00:00:04:00\">frames</p>\
         <p begin=\"5s\" dur=\"500ms\">seconds</p>\
         <p begin=\"0.1h\" end=\"6.5m\">hours</p>\
         <p begin=\"200f\" end=\"225f\">frame count</p>\
         <p begin=\"90000000t\" end=\"95000000t\">ticks</p>\
         </div>\
         <div begin=\"20s\" end=\"22s\"><p begin=\"1s\" end=\"5s\">cut by its div</p>\
         <p begin=\"500ms\">to its div's end</p></div>",
    );
    assert_eq!(
        cues(&doc),
        [
            (1250, 2500, "clock".into()),
            (3200, 4000, "frames".into()),
            (5000, 5500, "seconds".into()),
            (360_000, 390_000, "hours".into()),
            (8000, 9000, "frame count".into()),
            (9000, 9500, "ticks".into()),
            (21_000, 22_000, "cut by its div".into()),
            (20_500, 22_000, "to its div's end".into()),
        ]
    );
}

/// Given NTSC frame rates, sub-frames and the default tick rate, then frames count at
/// 30000/1001 and ticks at one per second.
#[test]
fn frame_rate_multiplier_sub_frames_and_default_ticks() {
    let ntsc = tt(
        "ttp:frameRate=\"30\" ttp:frameRateMultiplier=\"1000 1001\" ttp:subFrameRate=\"2\"",
        "<p begin=\"00:00:00:30\" end=\"00:00:01:15.1\">ntsc</p>",
    );
    // 30 frames of 1001/30000 s = 1001 ms; 15.5 frames = 517.183 ms.
    assert_eq!(cues(&ntsc), [(1001, 1517, "ntsc".into())]);
    let ticks = tt("", "<p begin=\"2t\" end=\"3t\">t</p>");
    assert_eq!(cues(&ticks), [(2000, 3000, "t".into())]);
}

/// Given `br`, styles inline and by (chained) reference, whitespace and markup
/// characters, then the cue text is WebVTT with `<b>`, `<i>`, `<u>` and escapes, one line
/// per `br`.
#[test]
fn line_breaks_and_styles_become_webvtt_tags() {
    let doc = tt(
        "",
        "<p begin=\"1s\" end=\"2s\">  Hello,\n   <span style=\"it\">dear</span>\
         <br/><span style=\"bi\">world</span> &amp; <span tts:textDecoration=\"underline\">you</span> &lt;3\
         <metadata>not shown</metadata></p>\
         <p begin=\"2s\" end=\"3s\" tts:fontStyle=\"italic\">all <span tts:fontStyle=\"normal\">but</span> this</p>",
    );
    assert_eq!(
        cues(&doc),
        [
            (
                1000,
                2000,
                "Hello, <i>dear</i>\n<b><i>world</i></b> &amp; <u>you</u> &lt;3".into()
            ),
            (2000, 3000, "<i>all</i> but <i>this</i>".into()),
        ]
    );
}

/// Given DFXP's older namespace and prefixed elements, then it reads as TTML.
#[test]
fn dfxp_and_prefixed_elements_read_the_same() {
    let doc = "<tt:tt xmlns:tt=\"http://www.w3.org/2006/10/ttaf1\"><tt:body><tt:div>\
               <tt:p begin=\"0.5s\" end=\"1s\">old</tt:p></tt:div></tt:body></tt:tt>";
    assert_eq!(cues(doc), [(500, 1000, "old".into())]);
}

/// Given hostile or broken files (truncated, not XML, deep nesting, bad times, bad
/// parameters, huge numbers, no `tt`, no cue, not UTF-8), then each is a typed error
/// and none panics; a `p` with no resolvable end is skipped, not shown forever.
#[test]
fn hostile_files_are_typed_errors() {
    let good = tt("", "<p begin=\"1s\" end=\"2s\">x</p>");
    let deep = format!(
        "<tt><body>{}<p begin=\"0s\" end=\"1s\">x</p>{}</body></tt>",
        "<div>".repeat(100),
        "</div>".repeat(100)
    );
    let huge_number = tt("", "<p begin=\"99999999999999999999999s\" end=\"2s\">x</p>");
    let huge_fraction = tt(
        "",
        &format!("<p begin=\"1.{}s\" end=\"2s\">x</p>", "9".repeat(40)),
    );
    let bad = [
        good[..good.len() / 2].to_owned(),
        "not xml at all <<".to_owned(),
        deep,
        tt("", "<p begin=\"1x\" end=\"2s\">x</p>"),
        tt("", "<p begin=\"00:61:00.000\" end=\"2s\">x</p>"),
        tt("", "<p begin=\"1:00:00\" end=\"2s\">x</p>"),
        tt("", "<p begin=\"-1s\" end=\"2s\">x</p>"),
        tt("", "<p begin=\"1.s\" end=\"2s\">x</p>"),
        tt("ttp:frameRate=\"0\"", "<p begin=\"1f\" end=\"2f\">x</p>"),
        tt(
            "ttp:frameRateMultiplier=\"1000\"",
            "<p begin=\"1f\" end=\"2f\">x</p>",
        ),
        huge_number,
        huge_fraction,
        "<html><body><p begin=\"1s\" end=\"2s\">x</p></body></html>".to_owned(),
        tt(
            "",
            "<p begin=\"1s\">no end</p><p begin=\"3s\" end=\"2s\">backwards</p>",
        ),
        tt("", "<p begin=\"1s\" end=\"2s\">   </p>"),
    ];
    for doc in &bad {
        let got = parse_ttml(doc.as_bytes());
        assert!(
            matches!(got, Err(MediaError::Malformed { .. })),
            "{doc}: {got:?}"
        );
    }
    assert!(parse_ttml(b"<tt>\xff\xfe</tt>").is_err());
    assert!(parse_ttml(&[0xff; 1000]).is_err());
}

/// Given a large file of many cues, then every cue is read (bounded by the file, which
/// the server reads only within `max_text_read_bytes`).
#[test]
fn many_cues_are_read() {
    let body: String = (0..5000)
        .map(|i| format!("<p begin=\"{i}s\" dur=\"1s\">cue {i}</p>"))
        .collect();
    let doc = tt("", &body);
    let parsed = parse_ttml(doc.as_bytes()).unwrap();
    assert_eq!(parsed.len(), 5000);
    assert_eq!(parsed[4999].start_ns, 4999 * 1_000_000_000);
}

/// Given 20,000 seeded mutations of the TTML fixture (bytes flipped, cut, repeated,
/// markup and digits spliced in), then none panics, every error is one printable line, and
/// every cue read ends after it starts.
#[test]
fn mutated_files_never_panic() {
    let fixture = include_bytes!("../../../../fixtures/ladder/ladder-it.ttml");
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % (n.max(1) as u64)) as usize
    };
    const SPLICES: [&[u8]; 8] = [
        b"<",
        b">",
        b"</p>",
        b"<p begin=\"",
        b"99999999999",
        b":",
        b"&#x0;",
        b"<div>",
    ];
    for _ in 0..20_000 {
        let mut bytes = fixture.to_vec();
        for _ in 0..1 + next(4) {
            let at = next(bytes.len());
            match next(4) {
                0 => bytes[at] ^= 1 << next(8),
                1 => bytes.truncate(at),
                2 => {
                    let piece = bytes[at..]
                        .iter()
                        .take(next(64))
                        .copied()
                        .collect::<Vec<_>>();
                    bytes.splice(at..at, piece);
                }
                _ => {
                    bytes.splice(at..at, SPLICES[next(SPLICES.len())].iter().copied());
                }
            }
            if bytes.is_empty() {
                break;
            }
        }
        match parse_ttml(&bytes) {
            Ok(cues) => assert!(cues.iter().all(|c| c.end_ns > c.start_ns)),
            Err(e) => {
                let line = e.to_string();
                assert!(!line.contains('\n') && !line.is_empty(), "{line:?}");
            }
        }
    }
}
