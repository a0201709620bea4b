//! Lip sync and frame identity against the source, measured with ffmpeg's demuxers and
//! decoders alone: decoded frames on each input's own clock, where a known audio
//! sample is presented against a known video frame, and whether audio times drift.
//!
//! Every reading is of one stream at a time (see the note at the top of `main.rs`) and uses
//! `-copyts`, so times are the demuxer's, not shifted by ffmpeg to start at zero.

use std::path::Path;

use super::boxes::MovieTiming;
use super::tools::{args, decode_pcm, ffprobe_show, packets, packets_with, run_tool};

/// The most two A/V offsets may differ: the output keeps the source's lip sync.
pub(crate) const LIP_SYNC_TOLERANCE_S: f64 = 0.002;

/// One decoded picture or audio frame.
#[derive(Debug, Clone)]
pub(crate) struct Decoded {
    /// Presentation time in seconds on the input's clock.
    pub(crate) pts_s: f64,
    /// How long it lasts, in seconds (audio: its samples over the rate).
    pub(crate) duration_s: f64,
    /// MD5 of the decoded picture or samples.
    pub(crate) hash: String,
}

/// One audio stream decoded: its frames, its sample rate and its PCM (16-bit stereo).
#[derive(Debug)]
pub(crate) struct DecodedAudio {
    pub(crate) frames: Vec<Decoded>,
    pub(crate) sample_rate: u32,
    pub(crate) pcm: Vec<[i16; 2]>,
}

/// Every decoded frame of stream `selector` of `input`, in output order, with its time on
/// the input's clock.
pub(crate) async fn decoded_frames(input: &str, selector: &str) -> Vec<Decoded> {
    parse_timed_framemd5(&framemd5(input, selector).await)
}

/// Audio stream `selector` of `input`: its frames ([`decoded_frames`]), the sample rate
/// `framemd5` states, and its PCM.
pub(crate) async fn decoded_audio(input: &str, selector: &str) -> DecodedAudio {
    let text = framemd5(input, selector).await;
    let sample_rate = (text.lines())
        .find_map(|line| line.strip_prefix("#sample_rate 0:"))
        .and_then(|rate| rate.trim().parse().ok())
        .unwrap_or_else(|| panic!("{input} {selector}: framemd5 states no sample rate"));
    DecodedAudio {
        frames: parse_timed_framemd5(&text),
        sample_rate,
        pcm: decode_pcm(input, selector, None).await,
    }
}

/// ffmpeg's `framemd5` of stream `selector`: `-copyts` keeps the demuxer's times, and for
/// video `-enc_time_base -1` keeps the stream's time base (the default, one over the frame
/// rate, would round them) and `-vsync passthrough` keeps ffmpeg from dropping or
/// repeating pictures.
async fn framemd5(input: &str, selector: &str) -> String {
    let map = format!("0:{selector}");
    let mut command = args(&[
        "-v", "error", "-nostdin", "-copyts", "-i", input, "-map", &map,
    ]);
    if selector.starts_with('v') {
        command.extend(args(&["-vsync", "passthrough", "-enc_time_base", "-1"]));
    }
    command.extend(args(&["-f", "framemd5", "-"]));
    String::from_utf8_lossy(&run_tool("ffmpeg", command).await).into_owned()
}

/// The frames of `framemd5` output: `stream, dts, pts, duration, size, hash` lines, times in
/// the `#tb 0:` time base.
pub(crate) fn parse_timed_framemd5(text: &str) -> Vec<Decoded> {
    let time_base = (text.lines())
        .find_map(|line| line.strip_prefix("#tb 0:"))
        .and_then(|tb| {
            let (num, den) = tb.trim().split_once('/')?;
            Some(num.parse::<f64>().ok()? / den.parse::<f64>().ok()?)
        })
        .expect("framemd5 states its time base");
    (text.lines())
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let number = |i: usize| fields.get(i)?.parse::<f64>().ok();
            Some(Decoded {
                pts_s: number(2)? * time_base,
                duration_s: number(3)? * time_base,
                hash: fields.last()?.to_string(),
            })
        })
        .collect()
}

/// How many packets of stream `selector` the demuxer flags as discarded and presents
/// before the first one it keeps: the pre-roll an edit starting inside a GOP needs
/// (ISO/IEC 14496-12 8.6.6), decoded but not shown by ffmpeg's mov reader. Counted in
/// presentation order: in decode order a kept P-picture comes before the last B-pictures
/// of the pre-roll.
pub(crate) async fn preroll_packets(input: &str, selector: &str) -> usize {
    let out = ffprobe_show(input, Some(selector), "packet=pts_time,flags", "csv=p=0").await;
    let text = String::from_utf8_lossy(&out);
    let packets: Vec<(f64, bool)> = (text.lines())
        .filter_map(|line| {
            let (pts, flags) = line.split_once(',')?;
            Some((pts.trim().parse().ok()?, flags.contains('D')))
        })
        .collect();
    let first_kept = (packets.iter())
        .filter(|(_, discarded)| !discarded)
        .map(|(pts, _)| *pts)
        .fold(f64::INFINITY, f64::min);
    (packets.iter())
        .filter(|(pts, discarded)| *discarded && *pts < first_kept)
        .count()
}

/// The known video frame and audio sample the A/V offset is measured between, both taken
/// from the source.
#[derive(Debug)]
pub(crate) struct SyncMarks {
    /// MD5 of the first picture the source presents.
    pub(crate) frame_hash: String,
    /// The source PCM from the known sample on, long enough to be found in one place only.
    pub(crate) window: Vec<[i16; 2]>,
}

impl SyncMarks {
    /// Marks in the source's decoded `video` and `audio`: the first picture, and a sample
    /// whose quarter second of PCM is found in one place of the source only: one second
    /// after the first decoded sample (well past the first codec frame, whose decoding
    /// depends on what came before it), else the first such place a quarter second further
    /// on (a title whose edits repeat a clip repeats its PCM), else earlier in a short title.
    pub(crate) fn from_source(video: &[Decoded], audio: &DecodedAudio) -> Option<Self> {
        let rate = audio.sample_rate as usize;
        let len = rate / 4;
        let later = (1..).map(|n| rate + n * len);
        let candidates =
            std::iter::once(rate).chain(later.take_while(|k| k + len <= audio.pcm.len()));
        let sample = (candidates.chain([rate / 2, rate / 4])).find(|&k| {
            (audio.pcm.get(k..k + len)).is_some_and(|w| unique_place(w, &audio.pcm) == Ok(k))
        })?;
        Some(Self {
            frame_hash: video.first()?.hash.clone(),
            window: audio.pcm.get(sample..sample + len)?.to_vec(),
        })
    }
}

/// When the known frame and the known sample are presented through one input (seconds on
/// a clock common to both streams).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AvTimes {
    pub(crate) video_s: f64,
    pub(crate) audio_s: f64,
}

impl AvTimes {
    /// Audio against video: positive when the known sample comes after the known frame.
    pub(crate) fn offset_s(&self) -> f64 {
        self.audio_s - self.video_s
    }
}

/// Where the source's known audio sample stands against its known video frame through one
/// input, the measurement lip sync is held to: `|offset(output) - offset(source)|` must
/// stay within [`LIP_SYNC_TOLERANCE_S`]. Whatever shifts a whole title (vodpack's title
/// shift S, MPEG-TS's fixed 1.4 s) cancels out; only audio moved against video remains.
///
/// - The known frame is the first picture the source presents ([`SyncMarks`]). Its time
///   is that of the first decoded picture of `video` with the same MD5, so pre-roll
///   pictures an output shows before it do not count.
/// - The known sample is source PCM sample K, one second after the first decoded one (or
///   the first later place the source holds once, see [`SyncMarks::from_source`]). It
///   is found in the input's PCM as the one place where the quarter second of source PCM
///   from K reappears sample for sample (AAC, AC-3 and E-AC-3 decode bit-exactly from the
///   same packets; PCM that matched in more places or none is an error, not a guess). Its
///   time is the input's first decoded audio timestamp plus its place over the sample
///   rate: ffmpeg decodes a stream without gaps, and when an MPEG-TS PES holds several
///   audio frames its times for the later ones are guesses (ffmpeg 5.1 gives the second
///   ADTS frame of a stream's first PES the PES's time), while the first frame's is the
///   PES's own PTS.
/// - `clock_offsets` are subtracted from the video and the audio times: a DASH
///   Representation's presentationTimeOffset, which a player subtracts and ffmpeg 5.1's
///   DASH reader does not; zero for HLS and the source.
///
/// For the source itself, the video time must be taken per ISO/IEC 14496-12, not as
/// ffmpeg reads it: see [`source_av_times`].
///
/// Applies to any title with a video and an audio stream: the committed fixtures as well
/// as the recipes.
pub(crate) fn av_times(
    video: &[Decoded],
    audio: &DecodedAudio,
    marks: &SyncMarks,
    clock_offsets: (f64, f64),
) -> Result<AvTimes, String> {
    let frame = (video.iter())
        .find(|f| f.hash == marks.frame_hash)
        .ok_or("the source's first picture is not among the decoded pictures")?;
    let first_audio = audio.frames.first().ok_or("no decoded audio")?;
    let place = unique_place(&marks.window, &audio.pcm)?;
    Ok(AvTimes {
        video_s: frame.pts_s - clock_offsets.0,
        audio_s: first_audio.pts_s + place as f64 / f64::from(audio.sample_rate) - clock_offsets.1,
    })
}

/// The source's own [`AvTimes`] per ISO/IEC 14496-12 8.6.6, and ffmpeg's reading of them
/// where it differs.
///
/// ffmpeg 5.1's mov reader presents the audio as the edit list says (it skips the samples
/// before the edit's media time, to the sample, and starts after any empty edit), but when
/// a video track's first edit starts between two pictures' composition times, it moves the
/// whole track so that the first picture it keeps is at zero ("Offset DTS by N to make
/// first pts zero" in its debug log). The standard presents that picture at its
/// composition time minus the edit's media time (plus any empty edit): a stream-copy trim
/// at 2.5 s into a 25 fps file whose B-frames delay composition by 0.08 s starts its edit
/// 0.02 s before a picture, and ffmpeg shows that picture 20 ms early against the audio.
/// So the known frame's time is taken from the edit list (`movie`, a box dump) and the
/// picture's media time (ffprobe with `-ignore_editlist 1`, matched by packet bytes).
pub(crate) async fn source_av_times(
    source: &Path,
    movie: &MovieTiming,
    video: &[Decoded],
    audio: &DecodedAudio,
    marks: &SyncMarks,
) -> Result<(AvTimes, AvTimes), String> {
    let ffmpeg = av_times(video, audio, marks, (0.0, 0.0))?;
    let input = source.to_string_lossy();
    let track = movie.track("vide").ok_or("the source has no video track")?;
    // The first picture presented, by packet: the lowest pts ffmpeg keeps.
    let presented = packets(&input, "v:0").await;
    let first = (presented.iter())
        .min_by(|a, b| a.pts.total_cmp(&b.pts))
        .ok_or("no video packets")?;
    let media = packets_with(&["-ignore_editlist", "1"], &input, "v:0").await;
    let media_pts = (media.iter())
        .find(|p| p.hash == first.hash)
        .ok_or("the first presented picture is not in the media timeline")?
        .pts;
    let video_s = match track.first_media_time_s() {
        Some(edit_start) => movie.leading_empty_s(track) + media_pts - edit_start,
        None => media_pts,
    };
    Ok((AvTimes { video_s, ..ffmpeg }, ffmpeg))
}

/// The one place in `output` where `window` appears sample for sample.
fn unique_place(window: &[[i16; 2]], output: &[[i16; 2]]) -> Result<usize, String> {
    let Some(first) = window.first() else {
        return Err("the source PCM is too short for a known sample".into());
    };
    let mut places = (0..output.len().saturating_sub(window.len() - 1))
        .filter(|&p| output[p] == *first && output[p..p + window.len()] == *window);
    match (places.next(), places.next()) {
        (Some(place), None) => Ok(place),
        (None, _) => Err(format!(
            "the source's known sample ({} samples of PCM) is nowhere in the output's {} \
             samples",
            window.len(),
            output.len()
        )),
        (Some(a), Some(b)) => Err(format!(
            "the source's known sample is in the output at samples {a} and {b} at least"
        )),
    }
}

/// How the source's frames from `from` on line up in an output: the output index of the
/// source's frame `from` at the alignment most of them agree on, and how many of them
/// have the same MD5 there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Alignment {
    /// Output index minus source index.
    pub(crate) shift: isize,
    pub(crate) equal: usize,
    pub(crate) compared: usize,
}

/// [`Alignment`] of `source[from..]` in `output`, by votes of equal hashes.
pub(crate) fn align(source: &[Decoded], output: &[Decoded], from: usize) -> Alignment {
    let mut places: std::collections::HashMap<&str, Vec<isize>> = Default::default();
    for (i, f) in output.iter().enumerate() {
        places.entry(f.hash.as_str()).or_default().push(i as isize);
    }
    let mut votes: std::collections::HashMap<isize, usize> = Default::default();
    for (i, f) in source.iter().enumerate().skip(from) {
        for p in places.get(f.hash.as_str()).into_iter().flatten() {
            *votes.entry(p - i as isize).or_default() += 1;
        }
    }
    let (shift, equal) = (votes.into_iter())
        .max_by_key(|&(shift, n)| (n, std::cmp::Reverse(shift.abs())))
        .unwrap_or((0, 0));
    Alignment {
        shift,
        equal,
        compared: source.len().saturating_sub(from),
    }
}

/// How much the time of the same frame moves between source and output over the title.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Drift {
    /// Largest minus smallest of the per-second medians of (output pts - source pts).
    pub(crate) median_spread_s: f64,
    /// Largest minus smallest over single frames, reader quirks included.
    pub(crate) frame_spread_s: f64,
}

/// [`Drift`] of the frames `alignment` pairs. Medians over each second of source time
/// measure the packaging, not ffmpeg's MPEG-TS reader, which times the later frames of a
/// PES holding several by guesswork (see [`av_times`]).
pub(crate) fn drift(source: &[Decoded], output: &[Decoded], alignment: Alignment) -> Drift {
    let mut by_second: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    for (i, f) in source.iter().enumerate() {
        let Some(o) = usize::try_from(i as isize + alignment.shift)
            .ok()
            .and_then(|j| output.get(j))
        else {
            continue;
        };
        if o.hash == f.hash {
            (by_second.entry(f.pts_s.floor() as i64).or_default()).push(o.pts_s - f.pts_s);
        }
    }
    let spread = |values: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if lo.is_finite() {
            hi - lo
        } else {
            0.0
        }
    };
    let frame_spread_s = spread(&mut by_second.values().flatten().copied());
    let median_spread_s = spread(&mut by_second.values_mut().map(|shifts| {
        shifts.sort_by(f64::total_cmp);
        shifts[shifts.len() / 2]
    }));
    Drift {
        median_spread_s,
        frame_spread_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PCM that never repeats: the high bits of a 64-bit LCG, from `seed`.
    fn noise(len: usize, seed: u64) -> Vec<[i16; 2]> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let v = (state >> 48) as i16;
                [v, v.wrapping_add(1)]
            })
            .collect()
    }

    /// `count` frames of `duration` seconds from `start`, hashed `prefix` and their index.
    fn frames(count: usize, start: f64, duration: f64, prefix: &str) -> Vec<Decoded> {
        (0..count)
            .map(|i| Decoded {
                pts_s: start + i as f64 * duration,
                duration_s: duration,
                hash: format!("{prefix}{i}"),
            })
            .collect()
    }

    fn audio(start: f64, pcm: Vec<[i16; 2]>) -> DecodedAudio {
        DecodedAudio {
            frames: frames(pcm.len() / 1024, start, 1024.0 / 48_000.0, "a"),
            sample_rate: 48_000,
            pcm,
        }
    }

    /// Given an output that moves the whole title by 1.4 s, shows two pre-roll pictures
    /// and one priming frame, and puts its audio 480 samples later, then its A/V offset is
    /// the source's plus 10 ms exactly; a DASH presentationTimeOffset on the video alone
    /// counts against the video.
    #[test]
    fn audio_moved_against_video_is_measured_to_the_sample() {
        let pcm = noise(3 * 48_000, 1);
        let video = frames(75, 0.0, 0.04, "v");
        let source_audio = audio(0.0, pcm.clone());
        let marks = SyncMarks::from_source(&video, &source_audio).expect("marks");
        let source = av_times(&video, &source_audio, &marks, (0.0, 0.0)).expect("source");

        let mut shown = frames(2, 1.32, 0.04, "pre-roll");
        shown.extend(frames(75, 1.4, 0.04, "v"));
        let priming = 1024.0 / 48_000.0;
        let output_audio = audio(1.4 - priming + 0.010, [noise(1024, 2), pcm].concat());
        let output = av_times(&shown, &output_audio, &marks, (0.0, 0.0)).expect("output");
        assert!((output.offset_s() - source.offset_s() - 0.010).abs() < 1e-9);

        let with_offset = av_times(&shown, &output_audio, &marks, (0.5, 0.0)).expect("output");
        assert!((with_offset.offset_s() - output.offset_s() - 0.5).abs() < 1e-9);
    }

    /// Given output PCM holding the known sample's window twice, or not at all, then there
    /// is no known sample: an error, not a guess.
    #[test]
    fn pcm_found_in_two_places_or_none_is_an_error() {
        let window = noise(100, 3);
        let twice = [noise(50, 4), window.clone(), window.clone()].concat();
        assert!(unique_place(&window, &twice)
            .unwrap_err()
            .contains("at samples 50 and 150"));
        assert!(unique_place(&window, &noise(1000, 5)).is_err());
        assert_eq!(
            unique_place(&window, &[noise(7, 6), window.clone()].concat()),
            Ok(7)
        );
    }

    /// Given an output whose reader stamps frames 1 to 4 one frame early, then the
    /// per-second medians do not drift though single frames do; given audio times that
    /// gain 1 ms a second, then the medians drift by the title's length in ms.
    #[test]
    fn drift_medians_see_the_packaging_not_a_reader_quirk() {
        let frame = 1024.0 / 48_000.0;
        let source = frames(470, 0.0, frame, "a");
        let mut quirky = frames(470, 1.4, frame, "a");
        for f in &mut quirky[1..5] {
            f.pts_s -= frame;
        }
        let quirk = drift(&source, &quirky, align(&source, &quirky, 1));
        assert!(quirk.median_spread_s < 1e-9, "{quirk:?}");
        assert!((quirk.frame_spread_s - frame).abs() < 1e-9);

        let mut drifting = frames(470, 0.0, frame, "a");
        for f in &mut drifting {
            f.pts_s *= 1.001;
        }
        let real = drift(&source, &drifting, align(&source, &drifting, 1));
        assert!(real.median_spread_s > 0.008, "{real:?}");
    }

    /// Given an output that lacks one source frame and carries one of its own first, then
    /// the alignment most frames agree on counts every other frame equal.
    #[test]
    fn alignment_counts_the_frames_that_agree() {
        let source = frames(10, 0.0, 0.02, "a");
        let mut output = frames(1, 0.0, 0.02, "priming");
        output.extend(source.iter().filter(|f| f.hash != "a6").cloned());
        let alignment = align(&source, &output, 1);
        assert_eq!(
            (alignment.shift, alignment.equal, alignment.compared),
            (1, 5, 9)
        );
    }
}
