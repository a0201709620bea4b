//! The players: each picks a title by Zipf popularity, fetches its HLS master, the first
//! variant's media playlist and its audio rendition's at once, both init segments at once,
//! then 1-10 segments from the start, video and audio of the same time at once over two
//! keep-alive connections, back to back (with PLAY_RATE, plays start at that rate in all).
//! Every request is timed and classified; any answer
//! but 200, or a broken connection, is an error, counted, and the player goes on.
//!
//! `Conn` is the small HTTP/1.1 client they use (`Content-Length` and chunked bodies).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Longest wait for one answer, body included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One keep-alive connection.
pub struct Conn {
    stream: BufReader<TcpStream>,
    host: String,
}

/// One answer: its status, its body when asked for, its body's length.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub bytes: u64,
    pub close: bool,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream: BufReader::with_capacity(64 * 1024, stream),
            host: addr.to_string(),
        })
    }

    /// GET `path`; the body is kept when `keep`, else read and dropped.
    pub async fn get(&mut self, path: &str, keep: bool) -> std::io::Result<Reply> {
        let head = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.host);
        self.stream.get_mut().write_all(head.as_bytes()).await?;
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status: u16 = (line.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let (mut length, mut chunked, mut close) = (None, false, false);
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let Some((name, value)) = line.trim_end().split_once(':') else {
                break;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<u64>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            }
        }
        let mut reply = Reply {
            status,
            body: Vec::new(),
            bytes: 0,
            close,
        };
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = u64::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| std::io::Error::other("bad chunk size"))?;
                if size == 0 {
                    line.clear();
                    self.stream.read_line(&mut line).await?;
                    break;
                }
                self.body(size, keep, &mut reply).await?;
                line.clear();
                self.stream.read_line(&mut line).await?;
            }
        } else {
            let length = length.ok_or_else(|| std::io::Error::other("no content-length"))?;
            self.body(length, keep, &mut reply).await?;
        }
        Ok(reply)
    }

    async fn body(
        &mut self,
        mut remaining: u64,
        keep: bool,
        reply: &mut Reply,
    ) -> std::io::Result<()> {
        let mut buf = [0u8; 16 * 1024];
        reply.bytes += remaining;
        while remaining > 0 {
            let want = remaining.min(buf.len() as u64) as usize;
            let n = self.stream.read(&mut buf[..want]).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            if keep {
                reply.body.extend_from_slice(&buf[..n]);
            }
            remaining -= n as u64;
        }
        Ok(())
    }
}

/// What a request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The first master of a title in this origin's run.
    MasterCold,
    /// A later master sent while the first was still unanswered (it waits for the load).
    MasterJoined,
    MasterWarm,
    MediaPlaylist,
    Init,
    VideoSegment,
    AudioSegment,
    /// A segment holding audio and video (the peer's default).
    MuxedSegment,
}

pub const KINDS: [Kind; 8] = [
    Kind::MasterCold,
    Kind::MasterJoined,
    Kind::MasterWarm,
    Kind::MediaPlaylist,
    Kind::Init,
    Kind::VideoSegment,
    Kind::AudioSegment,
    Kind::MuxedSegment,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::MasterCold => "master, cold",
            Kind::MasterJoined => "master, joined a cold",
            Kind::MasterWarm => "master, warm",
            Kind::MediaPlaylist => "media playlist",
            Kind::Init => "init segment",
            Kind::VideoSegment => "video segment",
            Kind::AudioSegment => "audio segment",
            Kind::MuxedSegment => "muxed segment",
        }
    }

    pub fn is_segment(self) -> bool {
        matches!(
            self,
            Kind::VideoSegment | Kind::AudioSegment | Kind::MuxedSegment
        )
    }
}

/// Times (ms) and errors of one kind.
#[derive(Default, Clone)]
pub struct Samples {
    pub ms: Vec<f64>,
    pub errors: u64,
}

/// What the players saw in one origin's run.
#[derive(Default)]
pub struct Tally {
    pub kinds: HashMap<Kind, Samples>,
    /// Cold masters by shape index.
    pub cold_by_shape: HashMap<usize, Vec<f64>>,
    pub bytes: u64,
    pub plays: u64,
    /// Seconds of media fetched (segments, at the playlist's durations).
    pub media_seconds: f64,
    /// Titles whose first master has been sent, and whether it was answered.
    pub titles: HashMap<u32, bool>,
    pub first_errors: Vec<String>,
}

/// What the players share.
pub struct Shared {
    pub addr: SocketAddr,
    pub prefix: &'static str,
    pub catalogue: Arc<crate::media::Catalogue>,
    pub zipf: Vec<f64>,
    pub end: Instant,
    pub tally: Mutex<Tally>,
    /// With PLAY_RATE: the time between two plays' starts, and when the next may start.
    pub pacing: Option<(Duration, Mutex<Instant>)>,
}

impl Shared {
    /// Wait for this player's next play to start, at the paced rate.
    async fn next_play(&self) {
        let Some((every, next)) = &self.pacing else {
            return;
        };
        let at = {
            let Ok(mut next) = next.lock() else {
                return;
            };
            let at = (*next).max(Instant::now());
            *next = at + *every;
            at
        };
        tokio::time::sleep_until(at.into()).await;
    }
}

impl Shared {
    fn record(&self, kind: Kind, started: Instant, result: &Result<Reply, String>, path: &str) {
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let Ok(mut tally) = self.tally.lock() else {
            return;
        };
        let samples = tally.kinds.entry(kind).or_default();
        match result {
            Ok(reply) if reply.status == 200 => {
                samples.ms.push(ms);
                tally.bytes += reply.bytes;
            }
            other => {
                samples.errors += 1;
                if tally.first_errors.len() < 10 {
                    let what = match other {
                        Ok(reply) => format!("status {}", reply.status),
                        Err(e) => e.clone(),
                    };
                    tally
                        .first_errors
                        .push(format!("{path}: {what} after {ms:.0} ms"));
                }
            }
        }
    }
}

/// Cumulative Zipf weights (exponent 1) of ranks 1..=n, normalised to 1.
pub fn zipf(n: u32) -> Vec<f64> {
    let mut sum = 0.0;
    let mut cdf: Vec<f64> = (1..=n)
        .map(|k| {
            sum += 1.0 / f64::from(k);
            sum
        })
        .collect();
    for c in &mut cdf {
        *c /= sum;
    }
    cdf
}

/// A seeded generator per player (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One connection slot of a player, connected on first use and after an error.
struct Slot(Option<Conn>);

impl Slot {
    async fn get(&mut self, addr: SocketAddr, path: &str, keep: bool) -> Result<Reply, String> {
        if self.0.is_none() {
            let conn = Conn::connect(addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            self.0 = Some(conn);
        }
        let Some(conn) = self.0.as_mut() else {
            return Err("no connection".into());
        };
        let result = match tokio::time::timeout(REQUEST_TIMEOUT, conn.get(path, keep)).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(format!("broken connection: {e}")),
            Err(_) => Err(format!("no answer in {} s", REQUEST_TIMEOUT.as_secs())),
        };
        if !matches!(&result, Ok(r) if !r.close) {
            self.0 = None;
        }
        result
    }
}

/// The path (and query) of `uri` resolved against the path `base`.
fn resolve(addr: SocketAddr, base: &str, uri: &str) -> Option<String> {
    let base = url::Url::parse(&format!("http://{addr}{base}")).ok()?;
    let joined = base.join(uri).ok()?;
    Some(match joined.query() {
        Some(q) => format!("{}?{q}", joined.path()),
        None => joined.path().to_owned(),
    })
}

/// The value of attribute `name` in an `#EXT-X-...:` tag line.
fn attribute<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.split_once(':')?.1;
    let at = rest.find(&format!("{name}="))?;
    let value = &rest[at + name.len() + 1..];
    match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next(),
        None => value.split(',').next(),
    }
}

/// The first variant's URI and, if the master names one for it, its audio rendition's.
fn parse_master(text: &str) -> Option<(String, Option<String>)> {
    let mut lines = text.lines().map(str::trim);
    let mut group = None;
    let mut variant = None;
    while let Some(line) = lines.next() {
        if line.starts_with("#EXT-X-STREAM-INF:") {
            group = attribute(line, "AUDIO").map(str::to_owned);
            variant = lines.find(|l| !l.is_empty() && !l.starts_with('#'));
            break;
        }
    }
    let variant = variant?.to_owned();
    let audios: Vec<&str> = (text.lines())
        .filter(|l| l.starts_with("#EXT-X-MEDIA:") && attribute(l, "TYPE") == Some("AUDIO"))
        .filter(|l| group.is_none() || attribute(l, "GROUP-ID") == group.as_deref())
        .filter(|l| attribute(l, "URI").is_some())
        .collect();
    let audio = (audios.iter())
        .find(|l| attribute(l, "DEFAULT") == Some("YES"))
        .or(audios.first())
        .and_then(|l| attribute(l, "URI"))
        .map(str::to_owned);
    Some((variant, audio))
}

/// A media playlist's init segment and segments, with their durations.
fn parse_media(text: &str) -> (Option<String>, Vec<(String, f64)>) {
    let mut init = None;
    let mut segments = Vec::new();
    let mut duration = 0.0;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#EXT-X-MAP:") {
            init = attribute(line, "URI").map(str::to_owned);
        } else if let Some(d) = line.strip_prefix("#EXTINF:") {
            duration = d
                .split(',')
                .next()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0.0);
        } else if !line.is_empty() && !line.starts_with('#') {
            segments.push((line.to_owned(), duration));
        }
    }
    (init, segments)
}

/// GET `path` (when there is one) on `slot`, timed and recorded as `kind`.
async fn fetch(
    shared: &Shared,
    slot: &mut Slot,
    path: Option<String>,
    kind: Kind,
    keep: bool,
) -> Option<(String, Result<Reply, String>)> {
    let path = path?;
    let started = Instant::now();
    let reply = slot.get(shared.addr, &path, keep).await;
    shared.record(kind, started, &reply, &path);
    Some((path, reply))
}

fn text(reply: &Result<Reply, String>) -> Option<String> {
    match reply {
        Ok(r) if r.status == 200 => Some(String::from_utf8_lossy(&r.body).into_owned()),
        _ => None,
    }
}

/// One player until the run's end.
pub async fn player(shared: Arc<Shared>, seed: u64) {
    let mut rng = Rng::new(seed);
    let (mut a, mut b) = (Slot(None), Slot(None));
    let addr = shared.addr;
    // Bounded: each play sends at most 16 requests, each at most REQUEST_TIMEOUT long.
    while Instant::now() < shared.end {
        shared.next_play().await;
        if Instant::now() >= shared.end {
            break;
        }
        let u = rng.unit();
        let rank = shared.zipf.partition_point(|&c| c < u) as u32 + 1;
        let segments = 1 + (rng.next() % 10) as usize;
        let key = shared.catalogue.key(rank);
        let master_path = format!("{}{key}/master.m3u8", shared.prefix);
        let kind = {
            let Ok(mut tally) = shared.tally.lock() else {
                return;
            };
            tally.plays += 1;
            match tally.titles.get(&rank) {
                None => {
                    tally.titles.insert(rank, false);
                    Kind::MasterCold
                }
                Some(false) => Kind::MasterJoined,
                Some(true) => Kind::MasterWarm,
            }
        };
        let started = Instant::now();
        let master = a.get(addr, &master_path, true).await;
        shared.record(kind, started, &master, &master_path);
        if kind == Kind::MasterCold {
            if let Ok(mut tally) = shared.tally.lock() {
                tally.titles.insert(rank, true);
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                if matches!(&master, Ok(r) if r.status == 200) {
                    let shape = shared.catalogue.shape_of(rank);
                    tally.cold_by_shape.entry(shape).or_default().push(ms);
                }
            }
        }
        let Some((variant, audio)) = text(&master).as_deref().and_then(parse_master) else {
            continue;
        };
        let Some(video_path) = resolve(addr, &master_path, &variant) else {
            continue;
        };
        let audio_path = audio.and_then(|u| resolve(addr, &master_path, &u));
        if Instant::now() >= shared.end {
            break;
        }
        // The two media playlists at once.
        let (video, audio) = tokio::join!(
            fetch(&shared, &mut a, Some(video_path), Kind::MediaPlaylist, true),
            fetch(&shared, &mut b, audio_path, Kind::MediaPlaylist, true),
        );
        let Some((video_path, video)) = video else {
            continue;
        };
        let Some(video_text) = text(&video) else {
            continue;
        };
        let (video_init, video_segments) = parse_media(&video_text);
        let audio = match audio {
            Some((path, reply)) => match text(&reply) {
                Some(t) => Some((path, parse_media(&t))),
                None => continue,
            },
            None => None,
        };
        let segment_kind = match audio {
            Some(_) => Kind::VideoSegment,
            None => Kind::MuxedSegment,
        };
        let at = |base: &str, uri: Option<&String>| uri.and_then(|u| resolve(addr, base, u));
        if Instant::now() >= shared.end {
            break;
        }
        let (audio_base, audio_init, audio_segments) = match &audio {
            Some((path, (init, segments))) => (path.clone(), init.clone(), segments.clone()),
            None => (String::new(), None, Vec::new()),
        };
        let (_, _) = tokio::join!(
            fetch(
                &shared,
                &mut a,
                at(&video_path, video_init.as_ref()),
                Kind::Init,
                false
            ),
            fetch(
                &shared,
                &mut b,
                at(&audio_base, audio_init.as_ref()),
                Kind::Init,
                false
            ),
        );
        for i in 0..segments.min(video_segments.len()) {
            if Instant::now() >= shared.end {
                break;
            }
            let video = at(&video_path, video_segments.get(i).map(|s| &s.0));
            let audio = at(&audio_base, audio_segments.get(i).map(|s| &s.0));
            let (_, _) = tokio::join!(
                fetch(&shared, &mut a, video, segment_kind, false),
                fetch(&shared, &mut b, audio, Kind::AudioSegment, false),
            );
            if let Ok(mut tally) = shared.tally.lock() {
                tally.media_seconds += video_segments.get(i).map_or(0.0, |s| s.1);
            }
        }
    }
}
