//! Conformance of the MPEG-TS output (`master-ts.m3u8`): what ffmpeg reads
//! through it is the source, exactly as through the CMAF output, and the TS bytes are well
//! formed across the whole title.
//!
//! TS segments carry the CMAF output times plus a fixed 1.4 s (`package::ts::
//! TS_TIME_OFFSET`, room for the PCR to lead the first DTS), so a TS stream's shift from
//! the source is the CMAF stream's plus 1.4 s, and the same for every stream of a title.

use super::*;

/// Fixtures with a codec HLS carries in CMAF only: their TS output leaves that track out.
const NOT_IN_TS: &[(&str, &str)] = &[
    ("av1-10bit-pq-aac-3s.mp4", "video"),
    ("h264-flac-3s.mp4", "audio"),
];

/// `TS_TIME_OFFSET` in seconds.
const TS_OFFSET_S: f64 = 1.4;

/// One 90 kHz tick, the precision of TS timestamps.
const TICK_90K: f64 = 1.0 / 90_000.0;

fn ts_fixtures() -> impl Iterator<Item = &'static str> {
    (FIXTURES.iter().copied()).filter(|f| NOT_IN_TS.iter().all(|(n, _)| n != f))
}

/// Decoding the TS output gives the source's frames (in order, same MD5s, pre-roll as the
/// CMAF test describes) and the source's PCM after at most one priming frame, with the
/// same streams (by kind and language) as the source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_decodes_to_the_source_frames_and_audio() {
    let Some(server) = start().await else { return };
    for fixture in ts_fixtures() {
        let source_input = Via::Source.input(&server, fixture);
        let source = probe_streams(&source_input).await;
        let input = Via::HlsTs.input(&server, fixture);
        let output = probe_streams(&input).await;
        for kind in ["video", "audio"] {
            assert_eq!(
                output.count(kind),
                source.count(kind),
                "{fixture} via TS: number of {kind} streams"
            );
        }
        for pair in pair_streams(&source, &output, fixture, Via::HlsTs) {
            assert_eq!(
                output.streams[pair.output].codec, source.streams[pair.source].codec,
                "{fixture} via TS: codec of {}",
                pair.output_selector
            );
            if pair.kind == "video" {
                let mut want = frame_hashes(&source_input, &pair.source_selector).await;
                if let Some((start, end)) = mid_track_empty_edit(fixture) {
                    want.retain(|f| f.pts_s < start - 0.001 || f.pts_s > end - 0.001);
                }
                let got = frame_hashes(&input, &pair.output_selector).await;
                let preroll = video_preroll_frames(fixture);
                assert_eq!(
                    got.len(),
                    want.len() + preroll,
                    "{fixture} via TS: decoded frames"
                );
                if let Some(i) = (0..want.len()).find(|&i| got[preroll + i].hash != want[i].hash) {
                    panic!("{fixture} via TS: decoded frame {i} differs from the source");
                }
                continue;
            }
            let filter = mid_track_empty_edit(fixture).map(|(start, end)| {
                format!(
                    "aselect='not(between(t,{:.4},{:.4}))'",
                    start - 0.0005,
                    end - 0.0005
                )
            });
            let want = decode_pcm(&source_input, &pair.source_selector, filter.as_deref()).await;
            let got = decode_pcm(&input, &pair.output_selector, None).await;
            let frame = audio_frame(&source.streams[pair.source].codec);
            assert!(want.len() >= 48_000, "{fixture}: the source has no audio");
            let preroll = audio_preroll_samples(fixture);
            let offset =
                pcm_offset_within(&want, &got, preroll + 2 * AAC_FRAME).unwrap_or_else(|| {
                    panic!(
                        "{fixture} via TS: {} does not match the source PCM",
                        pair.output_selector
                    )
                });
            assert!(
                offset <= frame + preroll,
                "{fixture} via TS: starts {offset} frames early"
            );
            let extra = (got.len() - offset).abs_diff(want.len());
            assert!(
                extra <= frame,
                "{fixture} via TS: {extra} frames more or fewer"
            );
        }
    }
    server.shutdown().await;
}

/// The TS output keeps the CMAF output's timeline: every packet of every stream is
/// presented when the same packet of the CMAF output is, plus 1.4 s, to the millisecond
/// (the 90 kHz clock rounds down by under a tick). The CMAF tests prove that timeline
/// keeps the source's audio/video relationship; packet bytes differ (Annex B, ADTS), so
/// packets are matched by position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_keeps_the_cmaf_timeline_to_the_millisecond() {
    let Some(server) = start().await else { return };
    for fixture in ts_fixtures() {
        let source = probe_streams(&Via::Source.input(&server, fixture)).await;
        let (cmaf_input, ts_input) = (
            Via::Hls.input(&server, fixture),
            Via::HlsTs.input(&server, fixture),
        );
        let (cmaf, ts) = (
            probe_streams(&cmaf_input).await,
            probe_streams(&ts_input).await,
        );
        let cmaf_pairs = pair_streams(&source, &cmaf, fixture, Via::Hls);
        for pair in pair_streams(&source, &ts, fixture, Via::HlsTs) {
            let what = format!("{fixture} via TS: {}", pair.output_selector);
            let cmaf_pair = (cmaf_pairs.iter())
                .find(|p| p.source_selector == pair.source_selector)
                .expect("the same stream through CMAF");
            let want = packets(&cmaf_input, &cmaf_pair.output_selector).await;
            let got = packets(&ts_input, &pair.output_selector).await;
            assert_eq!(got.len(), want.len(), "{what}: packets");
            // Each audio frame is its own PES with its own PTS, so audio packets are held to
            // the millisecond like video (ffmpeg 5.1 would time the second and later frames
            // of a PES by the frame before).
            let tolerance = SYNC_TOLERANCE_S;
            let first = (got[0].pts - TS_OFFSET_S - want[0].pts).abs();
            assert!(
                first <= SYNC_TOLERANCE_S,
                "{what}: first packet {first:.6} s off"
            );
            for (n, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g.pts - TS_OFFSET_S - w.pts).abs() <= tolerance,
                    "{what}: packet {n} at {:.6} s - 1.4 s, CMAF at {:.6} s",
                    g.pts,
                    w.pts
                );
            }
        }
    }
    server.shutdown().await;
}

/// Each TS media playlist lists the CMAF playlist's segments with the same EXTINFs, no
/// `EXT-X-MAP`, and every segment is served as `video/mp2t` packets, HEAD and GET agreeing
/// on its length; the audio group is the CMAF master's, the main audio muxed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_playlists_list_the_cmaf_segments() {
    let Some(server) = start().await else { return };
    for fixture in FIXTURES.iter().copied() {
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master-ts.m3u8")).await;
        let uris = master_playlist_uris(&master);
        assert!(!uris.is_empty(), "{fixture}: no TS playlists in\n{master}");
        if let Some((_, kind)) = NOT_IN_TS.iter().find(|(n, _)| *n == fixture) {
            let codecs = quoted_attribute(
                master
                    .lines()
                    .find(|l| l.starts_with("#EXT-X-STREAM-INF"))
                    .unwrap(),
                "CODECS",
            )
            .unwrap_or_default();
            let left_out = match *kind {
                "video" => codecs.contains("av01") || master.contains("RESOLUTION="),
                _ => codecs.contains("fLaC") || codecs.contains("flac"),
            };
            assert!(
                !left_out,
                "{fixture}: the {kind} TS cannot carry is listed\n{master}"
            );
        }
        for uri in uris {
            let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
            let media = MediaPlaylist::parse(&playlist);
            assert!(
                media.map_uri.is_none(),
                "{base}{uri}: EXT-X-MAP in TS\n{playlist}"
            );
            let cmaf_uri = uri.replace("index-ts-", "index-");
            let cmaf =
                MediaPlaylist::parse(&fetch_text(&server, &format!("{base}{cmaf_uri}")).await);
            assert_eq!(
                media.extinfs, cmaf.extinfs,
                "{base}{uri}: EXTINFs differ from CMAF"
            );
            assert_eq!(media.target_duration, cmaf.target_duration, "{base}{uri}");
            for segment in &media.segments {
                assert!(segment.ends_with(".ts"), "{base}{uri}: {segment}");
                let path = format!("{base}{}/{segment}", uri.rsplit_once('/').unwrap().0);
                let reply = fetch_ok(&server, &path).await;
                assert_eq!(reply.header("content-type"), Some("video/mp2t"), "{path}");
                assert_eq!(reply.body.len() % 188, 0, "{path}");
                assert_eq!(reply.body.first(), Some(&0x47), "{path}");
                let head = common::request(server.addr, "HEAD", &path, &[]).await;
                assert_eq!(
                    head.header("content-length"),
                    Some(reply.body.len().to_string().as_str()),
                    "{path}: HEAD"
                );
            }
        }
    }
    server.shutdown().await;
}

/// The bytes of every TS rendition, its segments concatenated as a player reads them:
/// 188-byte packets with the sync byte; PAT then PMT opening every segment; continuity
/// counters that run on across segment boundaries on every PID; a PCR at most 40 ms after
/// the one before; video PES timestamps equal to the CMAF output's (+1.4 s, to the 90 kHz
/// tick) and audio PES ones on CMAF frame times; and each I-frame playlist entry a byte
/// range starting with PAT and PMT that decodes to one key frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_segments_are_well_formed_across_the_title() {
    let Some(server) = start().await else { return };
    let dir = std::env::temp_dir().join(format!("vodpack-ts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for fixture in ts_fixtures() {
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master-ts.m3u8")).await;
        for uri in master_playlist_uris(&master) {
            let folder = uri.rsplit_once('/').unwrap().0;
            let playlist = fetch_text(&server, &format!("{base}{uri}")).await;
            let media = MediaPlaylist::parse(&playlist);
            let mut all = Vec::new();
            let mut starts = Vec::new();
            for segment in &media.segments {
                starts.push(all.len());
                all.extend(
                    fetch_ok(&server, &format!("{base}{folder}/{segment}"))
                        .await
                        .body,
                );
            }
            let what = format!("{fixture} {uri}");
            let stream = TsBytes::parse(&all, &what);
            for (k, start) in starts.iter().enumerate() {
                let pids: Vec<u16> = stream.packets_at(*start, 2).iter().map(|p| p.pid).collect();
                assert_eq!(
                    pids,
                    [0, 0x1000],
                    "{what}: segment {} opens with PAT, PMT",
                    k + 1
                );
            }
            stream.check_continuity(&what);
            stream.check_pcr(&what);
            // PES timestamps against the CMAF output's packets.
            let cmaf_uri = format!("{base}{}", uri.replace("index-ts-", "index-"));
            let cmaf_input = server.url(&cmaf_uri);
            for (pid, kind) in [(0x100u16, "v:0"), (0x101, "a:0")] {
                let pes = stream.pes_times(pid);
                if pes.is_empty() {
                    continue;
                }
                // The muxed audio's CMAF playlist is its own rendition's.
                let cmaf_times: Vec<f64> = if pid == 0x101 && stream.has_pid(0x100) {
                    let audio = (master.lines())
                        .find(|l| l.starts_with("#EXT-X-MEDIA:TYPE=AUDIO") && !l.contains("URI="))
                        .expect("the muxed audio's EXT-X-MEDIA");
                    let name = quoted_attribute(audio, "NAME").unwrap();
                    let cmaf_master = fetch_text(&server, &format!("{base}master.m3u8")).await;
                    let line = (cmaf_master.lines())
                        .find(|l| l.contains(&format!("NAME=\"{name}\"")))
                        .expect("the same audio in the CMAF master");
                    let uri = quoted_attribute(line, "URI").unwrap();
                    packets(&server.url(&format!("{base}{uri}")), "a:0").await
                } else {
                    packets(&cmaf_input, kind).await
                }
                .iter()
                .map(|p| p.pts)
                .collect();
                let mut previous = f64::NEG_INFINITY;
                for (n, (pts, _)) in pes.iter().enumerate() {
                    let t = pts - TS_OFFSET_S;
                    let near = |c: &f64| (c - t).abs() <= 1.5 * TICK_90K;
                    if pid == 0x100 {
                        assert!(
                            cmaf_times.get(n).is_some_and(near),
                            "{what}: video PES {n} at {t:.6} s, CMAF frame at {:?}",
                            cmaf_times.get(n)
                        );
                    } else {
                        assert!(
                            cmaf_times.iter().any(near) && t > previous,
                            "{what}: audio PES {n} at {t:.6} s is not on a CMAF frame time"
                        );
                        previous = t;
                    }
                }
                if pid == 0x100 {
                    assert_eq!(pes.len(), cmaf_times.len(), "{what}: one PES per frame");
                }
            }
            // The I-frame playlist of a video rendition.
            if !stream.has_pid(0x100) {
                continue;
            }
            let iframes_uri = uri.replace("index-ts-", "iframes-ts-");
            assert!(
                master.contains(&iframes_uri),
                "{what}: no I-frame playlist in\n{master}"
            );
            let iframes = fetch_text(&server, &format!("{base}{iframes_uri}")).await;
            let ranges = byte_ranges(&iframes);
            assert!(
                !ranges.is_empty(),
                "{what}: empty I-frame playlist\n{iframes}"
            );
            for (n, (len, offset, segment)) in ranges.into_iter().enumerate() {
                let k = media.segments.iter().position(|s| *s == segment).unwrap();
                let at = starts[k] + offset;
                let bytes = &all[at..at + len];
                let pids: Vec<u16> = TsBytes::parse(bytes, &what)
                    .packets
                    .iter()
                    .take(2)
                    .map(|p| p.pid)
                    .collect();
                assert_eq!(
                    pids,
                    [0, 0x1000],
                    "{what}: I-frame {n} starts with PAT, PMT"
                );
                let file = dir.join(format!("iframe-{n}.ts"));
                std::fs::write(&file, bytes).unwrap();
                let file = file.to_string_lossy().into_owned();
                let out = ffprobe_show(&file, Some("v:0"), "packet=flags", "csv=p=0").await;
                let flags = String::from_utf8_lossy(&out);
                let flags: Vec<&str> = flags.lines().collect();
                assert!(
                    flags.len() == 1 && flags[0].starts_with('K'),
                    "{what}: I-frame {n} holds {flags:?}, not one key frame"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    server.shutdown().await;
}

/// (length, offset, segment URI) of each entry of an I-frame playlist.
fn byte_ranges(playlist: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut range = None;
    for line in playlist.lines() {
        if let Some(value) = line.strip_prefix("#EXT-X-BYTERANGE:") {
            let (len, offset) = value.split_once('@').expect("len@offset");
            range = Some((len.parse().unwrap(), offset.parse().unwrap()));
        } else if !line.starts_with('#') && !line.is_empty() {
            let (len, offset) = range.take().expect("a byte range before each URI");
            out.push((len, offset, line.to_owned()));
        }
    }
    out
}

/// One transport packet's header fields.
struct TsPacket {
    pid: u16,
    unit_start: bool,
    has_payload: bool,
    continuity: u8,
    pcr: Option<u64>,
    /// Offset of the payload in the packet.
    payload_at: usize,
    offset: usize,
}

/// A transport stream split into packets.
struct TsBytes<'a> {
    bytes: &'a [u8],
    packets: Vec<TsPacket>,
}

impl<'a> TsBytes<'a> {
    fn parse(bytes: &'a [u8], what: &str) -> Self {
        assert_eq!(bytes.len() % 188, 0, "{what}: not whole packets");
        let packets = bytes
            .chunks(188)
            .enumerate()
            .map(|(n, p)| {
                assert_eq!(p[0], 0x47, "{what}: packet {n} without the sync byte");
                let control = (p[3] >> 4) & 3;
                let has_adaptation = control & 2 != 0;
                let mut pcr = None;
                let mut payload_at = 4;
                if has_adaptation {
                    let len = usize::from(p[4]);
                    payload_at = 5 + len;
                    if len > 0 && p[5] & 0x10 != 0 {
                        let b = &p[6..12];
                        pcr = Some(
                            (u64::from(b[0]) << 25)
                                | (u64::from(b[1]) << 17)
                                | (u64::from(b[2]) << 9)
                                | (u64::from(b[3]) << 1)
                                | u64::from(b[4] >> 7),
                        );
                    }
                }
                TsPacket {
                    pid: u16::from_be_bytes([p[1], p[2]]) & 0x1FFF,
                    unit_start: p[1] & 0x40 != 0,
                    has_payload: control & 1 != 0,
                    continuity: p[3] & 0x0F,
                    pcr,
                    payload_at,
                    offset: n * 188,
                }
            })
            .collect();
        Self { bytes, packets }
    }

    fn packets_at(&self, offset: usize, n: usize) -> &[TsPacket] {
        let first = offset / 188;
        &self.packets[first..(first + n).min(self.packets.len())]
    }

    fn has_pid(&self, pid: u16) -> bool {
        self.packets.iter().any(|p| p.pid == pid)
    }

    /// Every PID's counter goes up by one per packet with payload, and stays put on a
    /// packet without (13818-1 2.4.3.3), across the whole concatenation.
    fn check_continuity(&self, what: &str) {
        let mut last: std::collections::HashMap<u16, u8> = Default::default();
        for (n, p) in self.packets.iter().enumerate() {
            if let Some(prev) = last.get(&p.pid) {
                let want = if p.has_payload {
                    (prev + 1) & 0x0F
                } else {
                    *prev
                };
                assert_eq!(p.continuity, want, "{what}: packet {n} PID {:#x}", p.pid);
            }
            last.insert(p.pid, p.continuity);
        }
    }

    /// PCRs rise and come at most 40 ms apart.
    fn check_pcr(&self, what: &str) {
        let pcrs: Vec<u64> = self.packets.iter().filter_map(|p| p.pcr).collect();
        assert!(!pcrs.is_empty(), "{what}: no PCR");
        for pair in pcrs.windows(2) {
            assert!(
                pair[1] >= pair[0] && pair[1] - pair[0] <= 3600,
                "{what}: PCR {} after {} (90 kHz)",
                pair[1],
                pair[0]
            );
        }
    }

    /// (PTS, DTS) in seconds of each PES on `pid`.
    fn pes_times(&self, pid: u16) -> Vec<(f64, f64)> {
        let time = |b: &[u8]| -> u64 {
            (u64::from(b[0] >> 1 & 7) << 30)
                | (u64::from(b[1]) << 22)
                | (u64::from(b[2] >> 1) << 15)
                | (u64::from(b[3]) << 7)
                | u64::from(b[4] >> 1)
        };
        self.packets
            .iter()
            .filter(|p| p.pid == pid && p.unit_start && p.has_payload)
            .map(|p| {
                let pes = &self.bytes[p.offset + p.payload_at..p.offset + 188];
                assert_eq!(&pes[..3], &[0, 0, 1], "PES start code");
                let pts = time(&pes[9..14]);
                let dts = if pes[7] & 0x40 != 0 {
                    time(&pes[14..19])
                } else {
                    pts
                };
                (pts as f64 / 90_000.0, dts as f64 / 90_000.0)
            })
            .collect()
    }
}

/// AC-3 and E-AC-3 go into TS with the stream types and registration descriptors players
/// look for (0x81 'AC-3', 0x87 'EC-3': ATSC A/52, Apple's HLS authoring specification), and
/// decode to the source's PCM (the fixtures are in `fixtures/ts/`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_carries_ac3_and_eac3_with_their_stream_types() {
    let Some(server) = start().await else { return };
    for (fixture, codec, stream_type, registration) in [
        ("ts/ac3-3s.mp4", "ac3", 0x81u8, b"AC-3"),
        ("ts/eac3-3s.mp4", "eac3", 0x87, b"EC-3"),
    ] {
        let input = Via::HlsTs.input(&server, fixture);
        let output = probe_streams(&input).await;
        assert_eq!(output.count("audio"), 1, "{fixture}");
        assert_eq!(output.streams[0].codec, codec, "{fixture}");
        let want = decode_pcm(&Via::Source.input(&server, fixture), "a:0", None).await;
        let got = decode_pcm(&input, "a:0", None).await;
        assert!(want.len() >= 48_000, "{fixture}: the source has no audio");
        // The encoder delay the source's edit list hides (256 samples here) stays in TS,
        // which has no edit lists: at most one 1536-sample frame.
        let offset = pcm_offset(&want, &got);
        assert!(
            offset.is_some_and(|o| o <= 1536),
            "{fixture}: TS PCM differs from the source ({offset:?})"
        );
        // The PMT, second packet of the first segment.
        let base = format!("/vod/{fixture}/");
        let master = fetch_text(&server, &format!("{base}master-ts.m3u8")).await;
        let uri = master_playlist_uris(&master).remove(0);
        let playlist = MediaPlaylist::parse(&fetch_text(&server, &format!("{base}{uri}")).await);
        let folder = uri.rsplit_once('/').unwrap().0;
        let segment = fetch_ok(&server, &format!("{base}{folder}/{}", playlist.segments[0])).await;
        let pmt = &segment.body[188..376];
        let entry = [stream_type, 0xE1, 0x01];
        let at = pmt.windows(3).position(|w| w == entry).unwrap_or_else(|| {
            panic!("{fixture}: no stream type {stream_type:#x} on PID 0x101 in the PMT")
        });
        let descriptors = &pmt[at + 5..at + 5 + usize::from(pmt[at + 4])];
        assert!(
            descriptors
                .windows(6)
                .any(|w| w[..2] == [0x05, 4] && &w[2..] == registration),
            "{fixture}: no registration descriptor {registration:?}"
        );
    }
    server.shutdown().await;
}

/// A title with nothing MPEG-TS carries (Opus alone) answers `master-ts.m3u8` with 422
/// and a reason pointing at `master.m3u8`, which still plays; its TS names are 422 too,
/// never 404 or an empty 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_title_ts_cannot_carry_is_a_422_pointing_at_master() {
    let server = fixtures_server().await;
    let base = "/vod/ts/opus-3s.mp4";
    let reply = common::get(server.addr, &format!("{base}/master-ts.m3u8")).await;
    let text = reply.text();
    assert_eq!(reply.status, 422, "master-ts.m3u8: {text}");
    assert!(text.contains("use master.m3u8"), "master-ts.m3u8: {text}");
    let master = fetch_text(&server, &format!("{base}/master.m3u8")).await;
    let uri = master_playlist_uris(&master).remove(0);
    let ts_uri = uri.replace("index-", "index-ts-");
    let reply = common::get(server.addr, &format!("{base}/{ts_uri}")).await;
    assert_eq!(reply.status, 422, "{ts_uri}: {}", reply.text());
    server.shutdown().await;
}
