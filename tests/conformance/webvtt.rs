//! WebVTT as the tests read it back from HLS segments and DASH files: cues, times, and
//! the few entities the server escapes.
/// One WebVTT cue: times in seconds, text lines joined by `\n`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VttCue {
    pub(crate) start: f64,
    pub(crate) end: f64,
    pub(crate) text: String,
}

/// The parts of a WebVTT file these tests look at.
#[derive(Debug, Default)]
pub(crate) struct WebVtt {
    /// `X-TIMESTAMP-MAP` as (LOCAL in seconds, MPEGTS in 90 kHz ticks).
    pub(crate) timestamp_map: Option<(f64, i64)>,
    pub(crate) cues: Vec<VttCue>,
}

impl WebVtt {
    pub(crate) fn parse(text: &str) -> Self {
        let text = text.replace("\r\n", "\n");
        assert!(text.starts_with("WEBVTT"), "not WebVTT:\n{text}");
        let mut vtt = WebVtt::default();
        for (n, block) in text.split("\n\n").enumerate() {
            let lines: Vec<&str> = block.lines().collect();
            if n == 0 {
                for line in &lines {
                    if let Some(map) = line.strip_prefix("X-TIMESTAMP-MAP=") {
                        let (mut local, mut mpegts) = (None, None);
                        for part in map.split(',') {
                            if let Some(v) = part.strip_prefix("LOCAL:") {
                                local = Some(vtt_time(v));
                            } else if let Some(v) = part.strip_prefix("MPEGTS:") {
                                mpegts = Some(v.parse().expect("MPEGTS"));
                            }
                        }
                        vtt.timestamp_map = Some((local.expect("LOCAL"), mpegts.expect("MPEGTS")));
                    }
                }
                continue;
            }
            let Some(timing) = lines.iter().position(|l| l.contains("-->")) else {
                continue;
            };
            let (start, rest) = lines[timing].split_once("-->").unwrap();
            let end = rest.split_whitespace().next().expect("end time");
            vtt.cues.push(VttCue {
                start: vtt_time(start.trim()),
                end: vtt_time(end),
                text: lines[timing + 1..].join("\n"),
            });
        }
        vtt
    }
}

/// A WebVTT timestamp (`[HH:]MM:SS.mmm`) in seconds.
pub(crate) fn vtt_time(text: &str) -> f64 {
    let (rest, millis) = text.rsplit_once('.').expect("milliseconds");
    let mut seconds = 0.0;
    for part in rest.split(':') {
        seconds = seconds * 60.0 + part.parse::<f64>().expect("time field");
    }
    seconds + millis.parse::<f64>().expect("milliseconds") / 1000.0
}

/// Cue text with its three character references undone (ffmpeg's WebVTT writer leaves a
/// bare `&`, which is not valid WebVTT; vodpack writes `&amp;`). Tags are kept.
pub(crate) fn unescaped(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of `name="value"` in XML text.
pub(crate) fn xml_attribute(text: &str, name: &str) -> Option<String> {
    let start = text.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = text[start..].find('"')?;
    Some(text[start..start + len].to_owned())
}
