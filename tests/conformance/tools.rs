//! ffmpeg and ffprobe, run with a time limit, and what the tests read from them: streams,
//! packets, decoded frames and PCM, each read one stream at a time (see the note at the top
//! of `main.rs` on ffmpeg's DASH reader).

use std::path::Path;
use std::process::Command;

use super::common::{self, TestServer};
use super::{AAC_FRAME, MP3_FRAME, TOOL_LIMIT};

/// Where ffmpeg reads a title from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// The MP4 file itself.
    Source,
    /// The server's HLS multivariant playlist.
    Hls,
    /// The server's DASH MPD.
    Dash,
    /// The server's HLS multivariant playlist with MPEG-TS segments (`master-ts.m3u8`).
    HlsTs,
}

impl Via {
    /// The two ways the server packages a title.
    pub(crate) const OUTPUTS: [Via; 2] = [Via::Hls, Via::Dash];

    /// The ffmpeg input (path or URL) for `fixture`.
    pub(crate) fn input(self, server: &TestServer, fixture: &str) -> String {
        self.input_under(&common::fixtures(), server, fixture)
    }

    /// The ffmpeg input for `fixture` of `root`, the folder `server` serves.
    pub(crate) fn input_under(self, root: &Path, server: &TestServer, fixture: &str) -> String {
        match self {
            Via::Source => root.join(fixture).to_string_lossy().into_owned(),
            Via::Hls => server.url(&format!("/vod/{fixture}/master.m3u8")),
            Via::Dash => server.url(&format!("/vod/{fixture}/manifest.mpd")),
            Via::HlsTs => server.url(&format!("/vod/{fixture}/master-ts.m3u8")),
        }
    }
}

/// Run `program` with `args` on the blocking pool and return its stdout. Panics, with the
/// program's stderr, if it fails, and kills it if it runs longer than `TOOL_LIMIT`.
pub(crate) async fn run_tool(program: &'static str, args: Vec<String>) -> Vec<u8> {
    tokio::task::spawn_blocking(move || run_bounded(program, &args))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// The blocking part of `run_tool`.
pub(crate) fn run_bounded(program: &str, args: &[String]) -> Vec<u8> {
    let command_line = format!("{program} {}", args.join(" "));
    let mut command = Command::new(program);
    command.args(args);
    let run = common::bounded::run_bounded(command, TOOL_LIMIT);
    assert!(
        !run.timed_out,
        "{command_line}: still running after {TOOL_LIMIT:?}; killed"
    );
    let status = run.status.expect("an exit status");
    assert!(
        status.success(),
        "{command_line}: {status}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    run.stdout
}

/// `args` as owned strings.
pub(crate) fn args(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// One stream as ffprobe lists it.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamInfo {
    /// `codec_type`: "video", "audio", ...
    pub(crate) kind: String,
    /// `codec_name`: "h264", "hevc", "aac", ...
    pub(crate) codec: String,
    /// The `language` tag, if any.
    pub(crate) language: Option<String>,
    /// `pix_fmt`, `color_primaries` and `color_transfer` (video): the bit depth and
    /// colour a player is told, from the sample entry or the codec's own header.
    pub(crate) pix_fmt: String,
    pub(crate) color_primaries: String,
    pub(crate) color_transfer: String,
}

/// The `kind` of a DASH trick-play stream, which ffmpeg lists after the video streams.
pub(crate) const TRICK_PLAY: &str = "trickplay";

/// What ffprobe says about an input as a whole.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    /// Streams in ffprobe's order (the order `v:N` / `a:N` selectors count in).
    pub(crate) streams: Vec<StreamInfo>,
    /// The format duration in seconds, if ffprobe knows one.
    pub(crate) duration: Option<f64>,
}

impl Probe {
    /// How many streams of `kind` there are.
    pub(crate) fn count(&self, kind: &str) -> usize {
        self.streams.iter().filter(|s| s.kind == kind).count()
    }
}

/// What ffprobe shows of `input`, errors aside: `entries` (its `-show_entries`) of the
/// streams `selector` picks (all of them with None), written as `format` (its `-of`).
pub(crate) async fn ffprobe_show(
    input: &str,
    selector: Option<&str>,
    entries: &str,
    format: &str,
) -> Vec<u8> {
    let mut command = args(&["-v", "error"]);
    if let Some(selector) = selector {
        command.extend(args(&["-select_streams", selector]));
    }
    command.extend(args(&["-show_entries", entries, "-of", format, input]));
    run_tool("ffprobe", command).await
}

/// Probe the streams and format duration of `input`.
pub(crate) async fn probe_streams(input: &str) -> Probe {
    let entries = "stream=codec_type,codec_name,pix_fmt,color_primaries,color_transfer\
                   :stream_tags=language,id:format=duration";
    let out = ffprobe_show(input, None, entries, "flat").await;
    parse_flat_probe(&String::from_utf8_lossy(&out))
}

/// Parse ffprobe's `flat` output: `streams.stream.N.KEY="VALUE"` and
/// `format.duration="SECONDS"` lines. The `programs.program.*` copies are ignored.
pub(crate) fn parse_flat_probe(text: &str) -> Probe {
    let mut probe = Probe::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        if key == "format.duration" {
            probe.duration = value.parse().ok();
            continue;
        }
        let Some(rest) = key.strip_prefix("streams.stream.") else {
            continue;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        let index: usize = index.parse().expect("stream index");
        if probe.streams.len() <= index {
            probe.streams.resize(index + 1, StreamInfo::default());
        }
        let stream = &mut probe.streams[index];
        match field {
            "codec_type" if stream.kind != TRICK_PLAY => stream.kind = value.to_owned(),
            "codec_name" => stream.codec = value.to_owned(),
            "tags.language" => stream.language = Some(value.to_owned()),
            // A DASH trick-play Representation (`ifr-...`): ffmpeg 5.1 lists it as one more
            // video stream, although readers must ignore a set whose EssentialProperty they
            // do not know (ISO/IEC 23009-1 5.8.4.8). It is not a stream of the source.
            "tags.id" if value.starts_with("ifr-") => stream.kind = TRICK_PLAY.to_owned(),
            "pix_fmt" => stream.pix_fmt = value.to_owned(),
            "color_primaries" => stream.color_primaries = value.to_owned(),
            "color_transfer" => stream.color_transfer = value.to_owned(),
            _ => {}
        }
    }
    probe
}

/// A source stream and the output stream that carries it.
#[derive(Debug)]
pub(crate) struct StreamPair {
    /// "video" or "audio".
    pub(crate) kind: String,
    /// Index into the source `Probe::streams`, and its ffmpeg selector (`v:0`, `a:1`).
    pub(crate) source: usize,
    pub(crate) source_selector: String,
    /// The same for the output.
    pub(crate) output: usize,
    pub(crate) output_selector: String,
}

/// Pair every video and audio stream of the source with the output stream that carries
/// it: the N-th stream of the same kind, except that audio with a language (other than
/// `und`) goes to the first unpaired output audio stream with that language, since HLS
/// lists its renditions in its own order. Panics if a source stream has no partner.
pub(crate) fn pair_streams(
    source: &Probe,
    output: &Probe,
    fixture: &str,
    via: Via,
) -> Vec<StreamPair> {
    // (kind, position among streams of that kind, index) of each output stream.
    let numbered = |probe: &Probe| -> Vec<(String, usize, usize)> {
        let mut seen: Vec<String> = Vec::new();
        probe
            .streams
            .iter()
            .enumerate()
            .map(|(index, s)| {
                let n = seen.iter().filter(|k| **k == s.kind).count();
                seen.push(s.kind.clone());
                (s.kind.clone(), n, index)
            })
            .collect()
    };
    let outputs = numbered(output);
    let mut used = vec![false; outputs.len()];
    let mut pairs = Vec::new();
    for (kind, n, index) in numbered(source) {
        if kind != "video" && kind != "audio" {
            continue;
        }
        let language = source.streams[index]
            .language
            .as_deref()
            .filter(|l| kind == "audio" && *l != "und");
        let found = outputs.iter().position(|(out_kind, out_n, out_index)| {
            *out_kind == kind
                && match language {
                    Some(l) => {
                        !used[*out_index]
                            && output.streams[*out_index].language.as_deref() == Some(l)
                    }
                    None => *out_n == n,
                }
        });
        let Some(found) = found else {
            panic!(
                "{fixture} via {via:?}: no output stream for source {kind} #{n} \
                 (language {language:?}); output streams: {:?}",
                output.streams
            );
        };
        used[found] = true;
        let (_, out_n, out_index) = &outputs[found];
        let letter = &kind[..1];
        pairs.push(StreamPair {
            source: index,
            source_selector: format!("{letter}:{n}"),
            output: *out_index,
            output_selector: format!("{letter}:{out_n}"),
            kind,
        });
    }
    pairs
}

/// An audio or video track of a source file, as ffprobe states it.
#[derive(Debug)]
pub(crate) struct SourceTrack {
    /// The MP4 track id (ffprobe's stream `id`).
    pub(crate) track_id: u32,
    /// "video" or "audio".
    pub(crate) kind: String,
    /// The stream's duration in seconds (after its edit list).
    pub(crate) duration: f64,
    /// Its longest packet, in seconds: one frame.
    pub(crate) frame: f64,
}

/// The audio and video tracks of the file `input`.
pub(crate) async fn source_tracks(input: &str) -> Vec<SourceTrack> {
    let out = ffprobe_show(input, None, "stream=id,codec_type,duration", "compact=p=0").await;
    let mut tracks = Vec::new();
    let mut counts = [0usize; 2];
    for line in String::from_utf8_lossy(&out).lines() {
        // ffprobe writes the fields in its own order, whatever order they were asked in:
        // read them by name.
        let field = |name: &str| {
            line.split('|')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .map(str::trim)
        };
        let (Some(id), Some(kind), Some(Ok(duration))) = (
            field("id"),
            field("codec_type"),
            field("duration").map(str::parse::<f64>),
        ) else {
            continue;
        };
        let slot = match kind {
            "video" => 0,
            "audio" => 1,
            _ => continue,
        };
        let selector = format!("{}:{}", &kind[..1], counts[slot]);
        counts[slot] += 1;
        let frame = packets(input, &selector)
            .await
            .iter()
            .filter_map(|p| p.duration)
            .fold(0.0, f64::max);
        tracks.push(SourceTrack {
            track_id: u32::from_str_radix(id.trim_start_matches("0x"), 16).expect("stream id"),
            kind: kind.to_owned(),
            duration,
            frame,
        });
    }
    tracks
}

/// `mediaPresentationDuration` of an MPD (`PT[nH][nM]n.nnnS`), in seconds.
pub(crate) fn mpd_duration(mpd: &str) -> Option<f64> {
    let start = mpd.find("mediaPresentationDuration=\"")? + "mediaPresentationDuration=\"".len();
    let value = mpd[start..].split('"').next()?.strip_prefix("PT")?;
    let mut seconds = 0.0;
    let mut number = String::new();
    for c in value.chars() {
        match c {
            'H' => seconds += number.parse::<f64>().ok()? * 3600.0,
            'M' => seconds += number.parse::<f64>().ok()? * 60.0,
            'S' => seconds += number.parse::<f64>().ok()?,
            _ => {
                number.push(c);
                continue;
            }
        }
        number.clear();
    }
    Some(seconds)
}

/// One packet as ffprobe lists it (seconds).
#[derive(Debug, Clone)]
pub(crate) struct Packet {
    pub(crate) pts: f64,
    /// Unknown for some packets (ffprobe prints N/A for the first fragmented one).
    pub(crate) duration: Option<f64>,
    /// MD5 of the packet's bytes.
    pub(crate) hash: String,
}

/// The packets of stream `selector` (e.g. `a:1`) of `input` that are presented, in decode
/// order. Packets the demuxer flags as discarded (`D`: pre-roll and trailing frames an edit
/// list leaves out, which ffmpeg decodes but does not show) are left out.
pub(crate) async fn packets(input: &str, selector: &str) -> Vec<Packet> {
    packets_with(&[], input, selector).await
}

/// [`packets`] with ffprobe's `input_options` (e.g. `-ignore_editlist 1`) before the input.
pub(crate) async fn packets_with(
    input_options: &[&str],
    input: &str,
    selector: &str,
) -> Vec<Packet> {
    let mut command = args(&["-v", "error"]);
    command.extend(args(input_options));
    let out = run_tool(
        "ffprobe",
        [
            command,
            args(&[
                "-select_streams",
                selector,
                "-show_entries",
                "packet=pts_time,duration_time,flags,data_hash",
                "-show_data_hash",
                "md5",
                "-of",
                "compact",
                input,
            ]),
        ]
        .concat(),
    )
    .await;
    // One record per `packet|` line; a packet with side data continues on lines of its own.
    let text = String::from_utf8_lossy(&out);
    let mut records: Vec<String> = Vec::new();
    for line in text.lines() {
        match (line.starts_with("packet|"), records.last_mut()) {
            (false, Some(last)) => last.push_str(line),
            _ => records.push(line.to_owned()),
        }
    }
    let packets: Vec<Packet> = records
        .iter()
        .filter_map(|record| {
            let field = |name: &str| {
                record
                    .split('|')
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            };
            if field("flags")?.contains('D') {
                return None;
            }
            Some(Packet {
                pts: field("pts_time")?.trim().parse().ok()?,
                duration: field("duration_time").and_then(|d| d.trim().parse().ok()),
                hash: field("data_hash").unwrap_or_default().to_owned(),
            })
        })
        .collect();
    assert!(!packets.is_empty(), "{input} {selector}: no packets");
    packets
}

/// Output pts minus source pts of the source's first packet, found in `output` as the start
/// of a run of packets with the same bytes as the source's first ones (up to 48: a second
/// of AAC, past any run of identical silent frames).
pub(crate) fn matched_shift(source: &[Packet], output: &[Packet]) -> Option<f64> {
    let run = source.len().min(48);
    let want: Vec<&str> = source[..run].iter().map(|p| p.hash.as_str()).collect();
    (0..output.len()).find_map(|j| {
        let got = output.get(j..j + run)?;
        got.iter()
            .map(|p| p.hash.as_str())
            .eq(want.iter().copied())
            .then(|| output[j].pts - source[0].pts)
    })
}

/// The presentation time of the first packet (in decode order) of stream `selector`.
pub(crate) async fn first_pts(input: &str, selector: &str) -> f64 {
    packets(input, selector).await[0].pts
}

/// Output pts minus source pts of the source's last run of packets (up to 20), found last
/// in `output` by their bytes.
pub(crate) fn matched_end_shift(source: &[Packet], output: &[Packet]) -> Option<f64> {
    let run = source.len().min(20);
    let want = &source[source.len() - run..];
    (0..=output.len().checked_sub(run)?).rev().find_map(|j| {
        (output[j..j + run].iter().map(|p| p.hash.as_str()))
            .eq(want.iter().map(|p| p.hash.as_str()))
            .then(|| output[j].pts - want[0].pts)
    })
}

/// How long a stream lasts: the latest packet end minus the earliest presentation time.
/// Independent of any shift of the whole timeline.
pub(crate) fn span(packets: &[Packet]) -> f64 {
    let start = packets.iter().map(|p| p.pts).fold(f64::INFINITY, f64::min);
    let end = packets
        .iter()
        .map(|p| p.pts + p.duration.unwrap_or(0.0))
        .fold(f64::NEG_INFINITY, f64::max);
    end - start
}

/// One decoded video frame: its presentation time (seconds, as ffmpeg's output timeline
/// has it) and the MD5 of its picture.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) pts_s: f64,
    pub(crate) hash: String,
}

/// Every decoded frame of video stream `selector`, in output order. Hashes are compared
/// without timestamps, since the output timeline is shifted; `-vsync passthrough` keeps
/// ffmpeg from dropping or duplicating frames.
/// A video with a display matrix (a rotated phone video) decodes turned as the matrix says,
/// as a player shows it (ffmpeg's `autorotate`, its default).
pub(crate) async fn frame_hashes(input: &str, selector: &str) -> Vec<Frame> {
    decoded_frames(input, selector, &[]).await
}

/// [`frame_hashes`] of the pictures as coded: any display matrix is not applied
/// (`-noautorotate`).
pub(crate) async fn coded_frame_hashes(input: &str, selector: &str) -> Vec<Frame> {
    decoded_frames(input, selector, &["-noautorotate"]).await
}

/// The frames of `framemd5`, with `input_options` before the input.
async fn decoded_frames(input: &str, selector: &str, input_options: &[&str]) -> Vec<Frame> {
    let map = format!("0:{selector}");
    let mut command = args(&["-v", "error", "-nostdin"]);
    command.extend(args(input_options));
    command.extend(args(&[
        "-i",
        input,
        "-map",
        &map,
        "-vsync",
        "passthrough",
        "-f",
        "framemd5",
        "-",
    ]));
    let out = run_tool("ffmpeg", command).await;
    parse_framemd5(&String::from_utf8_lossy(&out))
}

/// The frames of ffmpeg's `framemd5` output.
pub(crate) fn parse_framemd5(text: &str) -> Vec<Frame> {
    // `#tb 0: 1/30`: the time base of the pts column.
    let time_base = text
        .lines()
        .find_map(|line| line.strip_prefix("#tb 0:"))
        .and_then(|tb| {
            let (num, den) = tb.trim().split_once('/')?;
            Some(num.parse::<f64>().ok()? / den.parse::<f64>().ok()?)
        })
        .expect("framemd5 states its time base");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            Frame {
                pts_s: fields
                    .get(2)
                    .and_then(|p| p.parse::<f64>().ok())
                    .unwrap_or(0.0)
                    * time_base,
                hash: fields.last().copied().unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// Audio stream `selector` of `input` decoded to 16-bit stereo PCM, one `[left, right]`
/// per sample frame, through the audio `filter` if any.
pub(crate) async fn decode_pcm(input: &str, selector: &str, filter: Option<&str>) -> Vec<[i16; 2]> {
    let map = format!("0:{selector}");
    let mut command = args(&["-v", "error", "-nostdin", "-i", input, "-map", &map]);
    if let Some(filter) = filter {
        command.extend(args(&["-af", filter]));
    }
    command.extend(args(&["-f", "s16le", "-ac", "2", "-"]));
    let out = run_tool("ffmpeg", command).await;
    out.chunks_exact(4)
        .map(|b| {
            [
                i16::from_le_bytes([b[0], b[1]]),
                i16::from_le_bytes([b[2], b[3]]),
            ]
        })
        .collect()
}

/// Samples per channel in one frame of the audio codec ffprobe names: the most a priming
/// frame or a short last frame may add. AAC's stands for the codecs without priming.
pub(crate) fn audio_frame(codec: &str) -> usize {
    match codec {
        "mp3" => MP3_FRAME,
        _ => AAC_FRAME,
    }
}

/// The smallest number of leading output frames (0 to two AAC frames) to skip so that the
/// rest of `output` equals `source` over their common length, or `None`. The common length
/// must reach to within one AAC frame of the source's end, so a match cannot come from a
/// short overlap.
pub(crate) fn pcm_offset(source: &[[i16; 2]], output: &[[i16; 2]]) -> Option<usize> {
    pcm_offset_within(source, output, 2 * AAC_FRAME)
}

/// [`pcm_offset`] with up to `max_offset` leading output frames skipped (pre-roll).
pub(crate) fn pcm_offset_within(
    source: &[[i16; 2]],
    output: &[[i16; 2]],
    max_offset: usize,
) -> Option<usize> {
    (0..=max_offset).find(|&offset| {
        let Some(rest) = output.get(offset..) else {
            return false;
        };
        let common = rest.len().min(source.len());
        common + AAC_FRAME >= source.len() && rest[..common] == source[..common]
    })
}
