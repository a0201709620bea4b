//! Stories of the object-store source over a watched in-memory store, on tokio's paused
//! clock: a segment's GETs in flight together, gap bytes shared between segments, late
//! answers hedged, objects opened with one GET, identities checked off the request path.

use ::object_store::memory::InMemory;
use ::object_store::{GetOptions, GetRange, ObjectMeta, ObjectStoreExt, PutPayload};

use super::tests::key;
use super::*;

/// `object_store`'s in-memory store, watched: every GET and HEAD counted, how many GETs were
/// in flight at most, each GET held `delay` (on tokio's clock, which the tests pause), and
/// the first GET of one range held an hour (a store's slow node).
#[derive(Debug)]
struct Watched {
    inner: InMemory,
    delay: Duration,
    slow_range: Option<std::ops::Range<u64>>,
    tally: std::sync::Mutex<Watch>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Watch {
    gets: u64,
    heads: u64,
    in_flight: u64,
    most_in_flight: u64,
    slowed: bool,
}

impl std::fmt::Display for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Watched({})", self.inner)
    }
}

impl Watched {
    fn new(delay: Duration) -> Self {
        Self {
            inner: InMemory::new(),
            delay,
            slow_range: None,
            tally: Default::default(),
        }
    }

    fn tally(&self) -> Watch {
        *self.tally.lock().unwrap()
    }
}

#[async_trait]
impl ObjectStore for Watched {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: ::object_store::PutOptions,
    ) -> ::object_store::Result<::object_store::PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: ::object_store::PutMultipartOptions,
    ) -> ::object_store::Result<Box<dyn ::object_store::MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> ::object_store::Result<::object_store::GetResult> {
        let slow = {
            let mut tally = self.tally.lock().unwrap();
            let slow = match (&options.range, &self.slow_range) {
                (Some(GetRange::Bounded(asked)), Some(slow)) => asked == slow && !tally.slowed,
                _ => false,
            };
            tally.slowed |= slow;
            match options.head {
                true => tally.heads += 1,
                false => tally.gets += 1,
            }
            tally.in_flight += 1;
            tally.most_in_flight = tally.most_in_flight.max(tally.in_flight);
            slow
        };
        let wait = match slow {
            true => Duration::from_secs(3600),
            false => self.delay,
        };
        tokio::time::sleep(wait).await;
        self.tally.lock().unwrap().in_flight -= 1;
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: futures_util::stream::BoxStream<'static, ::object_store::Result<Path>>,
    ) -> futures_util::stream::BoxStream<'static, ::object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures_util::stream::BoxStream<'static, ::object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> ::object_store::Result<::object_store::ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: ::object_store::CopyOptions,
    ) -> ::object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A watched store holding `media/a.mp4` (`len` bytes, byte i is i % 251), and a source
/// over it with `options`.
async fn watched_source(
    mut store: Watched,
    len: u64,
    options: &ObjectStoreOptions,
) -> (Arc<Watched>, Arc<ObjectStoreSource>, ObjectKey) {
    let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    store.slow_range = store.slow_range.take();
    let store = Arc::new(store);
    store
        .put(&Path::from("media/a.mp4"), PutPayload::from(body))
        .await
        .expect("put");
    let source = ObjectStoreSource::from_store(store.clone(), "media", options).expect("source");
    (store, Arc::new(source), key("a.mp4"))
}

fn object_bytes(ranges: &[ByteRange]) -> Vec<u8> {
    (ranges.iter())
        .flat_map(|r| (r.start..r.end()).map(|i| (i % 251) as u8))
        .collect()
}

async fn streamed(
    source: &Arc<ObjectStoreSource>,
    k: &ObjectKey,
    ranges: Vec<ByteRange>,
) -> Vec<u8> {
    let identity = source.identify(k).await.expect("identity");
    let mut stream = (source.clone()).stream_ranges(k.clone(), identity, ranges, 64 * 1024);
    let mut got = Vec::new();
    while let Some(chunk) = stream.next().await {
        got.extend_from_slice(&chunk.expect("chunk"));
    }
    got
}

/// Given a segment whose ranges lie far apart (a track interleaved in long chunks with
/// another, 40 runs), when it is streamed from a store that takes 20 ms per answer, then
/// its GETs are in flight together (as many as `read_concurrency` allows), not one after
/// another, and the bytes come out exactly, in order.
#[tokio::test(start_paused = true)]
async fn a_segment_of_many_runs_has_its_gets_in_flight_together() {
    let options = ObjectStoreOptions {
        open_read_bytes: 0,
        hedge_percent: 0,
        ..Default::default()
    };
    let (store, source, k) =
        watched_source(Watched::new(Duration::from_millis(20)), 8_000_000, &options).await;
    let ranges: Vec<ByteRange> = (0..40).map(|i| ByteRange::new(i * 150_000, 700)).collect();
    let got = streamed(&source, &k, ranges.clone()).await;
    assert_eq!(got, object_bytes(&ranges));
    let tally = store.tally();
    assert_eq!(tally.gets, 40);
    assert_eq!(tally.most_in_flight, 32, "{tally:?}");
}

/// Given a file whose audio sits between its video frames, when a player asks for the video
/// segment and the audio segment of the same time (one after the other, or both at once,
/// the audio first), then the file's span is read once: one GET in all, the audio taken
/// from the video's read, every byte exact.
#[tokio::test(start_paused = true)]
async fn audio_between_video_frames_is_read_once_with_the_video() {
    let video: Vec<ByteRange> = (0..150)
        .map(|i| ByteRange::new(10_000 + i * 10_000, 9_300))
        .collect();
    let audio: Vec<ByteRange> = (0..150)
        .map(|i| ByteRange::new(19_300 + i * 10_000, 700))
        .collect();
    for audio_first in [false, true] {
        let options = ObjectStoreOptions {
            open_read_bytes: 0,
            hedge_percent: 0,
            ..Default::default()
        };
        let (store, source, k) =
            watched_source(Watched::new(Duration::from_millis(20)), 2_000_000, &options).await;
        let _ = source.identify(&k).await.expect("identity");
        let before = store.tally().gets;
        let (got_video, got_audio) = if audio_first {
            let audio_task = {
                let (source, k, audio) = (source.clone(), k.clone(), audio.clone());
                tokio::spawn(async move { streamed(&source, &k, audio).await })
            };
            // The audio stream is waiting for a leader when the video one starts.
            tokio::time::sleep(Duration::from_millis(1)).await;
            let got_video = streamed(&source, &k, video.clone()).await;
            (got_video, audio_task.await.expect("audio"))
        } else {
            let got_video = streamed(&source, &k, video.clone()).await;
            (got_video, streamed(&source, &k, audio.clone()).await)
        };
        assert_eq!(
            got_video,
            object_bytes(&video),
            "audio first: {audio_first}"
        );
        assert_eq!(
            got_audio,
            object_bytes(&audio),
            "audio first: {audio_first}"
        );
        assert_eq!(store.tally().gets - before, 1, "audio first: {audio_first}");
        let payload: u64 = audio.iter().map(|r| r.len).sum();
        assert_eq!(source.counters().shared_bytes.get(), payload);
    }
}

/// Given a store whose answer to one GET never comes in time (a slow node), when that range
/// is read with hedging on, then the request is sent again after the hedge delay and the
/// second answer is used: counted as a hedge and a hedge win.
#[tokio::test(start_paused = true)]
async fn a_late_answer_is_hedged_and_the_second_answer_wins() {
    let options = ObjectStoreOptions {
        open_read_bytes: 0,
        hedge_after_ms: 50,
        ..Default::default()
    };
    let mut store = Watched::new(Duration::from_millis(20));
    store.slow_range = Some(1000..1100);
    let (store, source, k) = watched_source(store, 10_000, &options).await;
    let identity = source.identify(&k).await.expect("identity");
    let started = tokio::time::Instant::now();
    let bytes = source
        .read_range(&k, &identity, ByteRange::new(1000, 100))
        .await
        .expect("read");
    assert_eq!(&bytes[..], &object_bytes(&[ByteRange::new(1000, 100)])[..]);
    assert_eq!(started.elapsed(), Duration::from_millis(50 + 20));
    let counters = source.counters();
    assert_eq!(counters.hedged_requests.get(), 1);
    assert_eq!(counters.hedge_wins.get(), 1);
    assert_eq!(store.tally().gets, 2);
}

/// Given an object never asked for, when its identity is asked, then one GET of its first
/// bytes answers (no HEAD), concurrent first requests share it, and the read that follows
/// takes those bytes from memory and reads only what lies past them.
#[tokio::test(start_paused = true)]
async fn an_object_is_opened_with_one_get_and_its_first_bytes_are_not_read_again() {
    let options = ObjectStoreOptions {
        open_read_bytes: 256,
        ..Default::default()
    };
    let (store, source, k) =
        watched_source(Watched::new(Duration::from_millis(20)), 10_000, &options).await;
    let (a, b) = tokio::join!(source.identify(&k), source.identify(&k));
    assert_eq!(a.expect("identity"), b.expect("identity"));
    let tally = store.tally();
    assert_eq!((tally.gets, tally.heads), (1, 0));
    let identity = source.identify(&k).await.expect("identity");
    let probe = source
        .read_range(&k, &identity, ByteRange::new(0, 200))
        .await
        .expect("probe");
    assert_eq!(&probe[..], &object_bytes(&[ByteRange::new(0, 200)])[..]);
    assert_eq!(store.tally().gets, 1, "the probe came from memory");
    let moov = source
        .read_range(&k, &identity, ByteRange::new(100, 400))
        .await
        .expect("moov");
    assert_eq!(&moov[..], &object_bytes(&[ByteRange::new(100, 400)])[..]);
    let counters = source.counters();
    // One GET more, for bytes 256..500 only.
    assert_eq!(store.tally().gets, 2);
    assert_eq!(counters.read_bytes.get(), 256 + 244);
}

/// Given an object whose identity was confirmed, when its window passes, then the identity
/// is still answered at once while one HEAD checks it in the background; a replaced object
/// is answered once that check has seen it (the epoch moves, so kept answers go); past
/// the stale window a request waits for the store again.
#[tokio::test(start_paused = true)]
async fn identities_are_checked_off_the_request_path() {
    let options = ObjectStoreOptions {
        identity_ttl_ms: 1_000,
        identity_max_stale_ms: 60_000,
        open_read_bytes: 16,
        ..Default::default()
    };
    let (store, source, k) =
        watched_source(Watched::new(Duration::from_millis(20)), 1_000, &options).await;
    let old = source.identify(&k).await.expect("identity");
    let opened = store.tally();
    assert_eq!((opened.gets, opened.heads), (1, 0));
    tokio::time::advance(Duration::from_millis(1_500)).await;
    // Stale: answered without waiting (no time passes), checked by one HEAD meanwhile.
    let asked_at = tokio::time::Instant::now();
    let (stale, until) = source.identify_until(&k).await.expect("stale identity");
    assert_eq!(
        (stale, until, asked_at.elapsed()),
        (old.clone(), None, Duration::ZERO)
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(store.tally().heads, 1);
    let (fresh, until) = source.identify_until(&k).await.expect("fresh again");
    assert!(fresh == old && until.is_some());
    // Replaced; once the window passes, the next check finds the new version.
    store
        .put(&Path::from("media/a.mp4"), PutPayload::from(vec![7u8; 500]))
        .await
        .expect("replace");
    let epoch = source.identity_epoch();
    tokio::time::advance(Duration::from_millis(1_500)).await;
    assert_eq!(source.identify(&k).await.expect("stale"), old);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let new = source.identify(&k).await.expect("new");
    assert_eq!(new.size, 500);
    assert!(source.identity_epoch() > epoch);
    // A minute and more later the identity is asked again before answering.
    tokio::time::advance(Duration::from_secs(120)).await;
    let gets = store.tally().gets;
    let asked_at = tokio::time::Instant::now();
    assert_eq!(source.identify(&k).await.expect("asked"), new);
    assert_eq!(store.tally().gets, gets + 1);
    assert!(asked_at.elapsed() >= Duration::from_millis(20));
}

/// Given a catalogue whose files keep their index at the end (every load reads the last
/// 300 bytes after the first ones), when more objects are opened, then after a few opens
/// the tail is read together with the head (two GETs at once, one round trip), and the
/// load's read of the tail costs no request.
#[tokio::test(start_paused = true)]
async fn opens_learn_to_read_the_tail_with_the_head() {
    let options = ObjectStoreOptions {
        open_read_bytes: 256,
        ..Default::default()
    };
    let store = Arc::new(Watched::new(Duration::from_millis(20)));
    for n in 0..20u64 {
        let body: Vec<u8> = (0..10_000 + n).map(|i| (i % 251) as u8).collect();
        let path = Path::from(format!("media/t{n}.mp4").as_str());
        store.put(&path, PutPayload::from(body)).await.expect("put");
    }
    let source = ObjectStoreSource::from_store(store.clone(), "media", &options).expect("source");
    let mut last = (0, 0, Duration::ZERO);
    for n in 0..20u64 {
        let k = key(&format!("t{n}.mp4"));
        let before = store.tally().gets;
        let started = tokio::time::Instant::now();
        let identity = source.identify(&k).await.expect("identity");
        let opened = store.tally().gets - before;
        let tail = ByteRange::new(identity.size - 300, 300);
        let bytes = source.read_range(&k, &identity, tail).await.expect("tail");
        let expected: Vec<u8> = (tail.start..tail.end()).map(|i| (i % 251) as u8).collect();
        assert_eq!(&bytes[..], &expected[..]);
        last = (opened, store.tally().gets - before, started.elapsed());
    }
    // Two GETs at once when opening, none for the tail: one store round trip in all.
    assert_eq!(last, (2, 2, Duration::from_millis(20)));
}
