//! Answers held in memory: the whole `200` answer to a `GET` of a manifest of a plain file,
//! kept under its request path until the file's identity window ends, because building it
//! cost more CPU than the whole HTTP exchange (docs/performance.md; nginx-vod-module's
//! `vod_response_cache` is there for the same reason). Correct because an answer is kept
//! only until the source stops reusing the identity it was built from
//! (`MediaSource::identify_until`), and only the plainest requests are answered here
//! (`GET`, no query, no conditionals, `Range` or `traceparent`; never with signed URLs, a
//! CORS origin list, access logs or exported spans). Everything else takes the full path
//! (`server::request`), which fills the map (`TitleRequest::held`). Bounded by
//! [`MAX_ANSWERS`] and [`MAX_BYTES`]; past either, an answer is not kept.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response};

use super::body::ResponseBody;
use super::http1;
use crate::server::cors::add_cors;
use crate::server::titles::load::Reuse;
use crate::telemetry::REQUEST_SPAN_TARGET;

/// Most answers held at once.
pub const MAX_ANSWERS: usize = 4096;
/// Most bytes of paths and bodies held at once (the bodies share the cached title's bytes
/// while it lives). Each answer's headers, made once, add a few hundred bytes more.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// The headers that make a request take the full path: each can change its answer.
const PER_REQUEST_HEADERS: [HeaderName; 5] = [
    header::RANGE,
    header::IF_MATCH,
    header::IF_NONE_MATCH,
    header::IF_RANGE,
    header::IF_MODIFIED_SINCE,
];

/// One kept answer.
#[derive(Debug)]
struct Held {
    body: Bytes,
    /// Its header lines but the length, written once (`http1::HeaderLines`): one copy per
    /// answer, where a header map cost a clone, a walk and a drop (1,300 instructions).
    header_lines: Bytes,
    /// The metrics label of its route.
    route: &'static str,
    /// When the source stops reusing the identity it was built from.
    until: Instant,
    /// The source's identity epoch before that identity was asked for.
    epoch: u64,
}

impl Held {
    /// Whether it may still be given: within its identity's reuse, the epoch unmoved.
    fn current(&self, now: Instant, epoch: u64) -> bool {
        now < self.until && epoch == self.epoch
    }
}

/// What a manifest answer needs to be kept: see [`Answers::keep`].
#[derive(Debug)]
pub struct Keep<'a> {
    pub body: &'a Bytes,
    pub content_type: &'static str,
    pub cache_control: &'static str,
    pub etag: &'a str,
    pub route: &'static str,
    pub reuse: Reuse,
}

/// An answer given from the map, with what the request's metrics need.
#[derive(Debug)]
pub struct Given {
    pub response: Response<ResponseBody>,
    pub route: &'static str,
    pub bytes: usize,
    /// When the request was taken up.
    pub started: Instant,
}

/// The answers held, by request path.
#[derive(Debug)]
pub struct Answers {
    /// False when something per request is configured (see the module documentation).
    enabled: bool,
    held: RwLock<Map>,
}

#[derive(Debug, Default)]
struct Map {
    by_path: HashMap<String, Held>,
    bytes: usize,
    /// When expired answers were last dropped to make room.
    swept_at: Option<Instant>,
}

/// Expired answers are dropped to make room at most this often: a sweep walks every
/// answer under the write lock, so a storm of new paths into a full map must not sweep on
/// every request.
const SWEEP_EVERY: Duration = Duration::from_millis(50);

impl Answers {
    /// A map that is used only when `enabled`.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            held: RwLock::new(Map::default()),
        }
    }

    /// The held answer to `req`, if it is a plain `GET` of a manifest whose answer is held
    /// and still current with the source at the identity epoch `epoch` gives. Any other
    /// request (a segment's) costs a few comparisons here.
    pub fn answer_to<B>(&self, req: &Request<B>, epoch: impl FnOnce() -> u64) -> Option<Given> {
        if !self.plain(req) {
            return None;
        }
        self.held_answer(req.uri().path(), Instant::now(), epoch())
    }

    /// [`Answers::answer_to`] as of `now` (tests).
    #[cfg(test)]
    fn answer_at<B>(&self, req: &Request<B>, now: Instant, epoch: u64) -> Option<Given> {
        self.plain(req)
            .then(|| self.held_answer(req.uri().path(), now, epoch))
            .flatten()
    }

    /// Whether `req` is one a held answer may answer: a plain `GET` of a manifest name.
    fn plain<B>(&self, req: &Request<B>) -> bool {
        let path = req.uri().path();
        if !self.enabled
            || req.method() != Method::GET
            || req.uri().query().is_some()
            || !(path.ends_with(".m3u8") || path.ends_with(".mpd"))
        {
            return false;
        }
        // One pass over the request's few headers, cheaper than a lookup for each name.
        let per_request = |name: &HeaderName| {
            PER_REQUEST_HEADERS.contains(name) || name.as_str() == "traceparent"
        };
        !(req.headers().keys().any(per_request)
            || tracing::enabled!(target: REQUEST_SPAN_TARGET, tracing::Level::INFO))
    }

    /// The answer held for `path`, if current at `now` and `epoch`.
    fn held_answer(&self, path: &str, now: Instant, epoch: u64) -> Option<Given> {
        let (body, header_lines, route) = {
            let held = self.held.read().ok()?;
            let answer = held.by_path.get(path)?;
            if !answer.current(now, epoch) {
                return None;
            }
            (
                answer.body.clone(),
                answer.header_lines.clone(),
                answer.route,
            )
        };
        let bytes = body.len();
        let response = Response::new(ResponseBody::Held {
            header_lines,
            body: Some(body),
        });
        Some(Given {
            route,
            bytes,
            response,
            started: now,
        })
    }

    /// Keep the answer to a `GET` of `path` (see the module documentation for which), as
    /// of `now`: expired answers are dropped first, and nothing is kept past the bounds.
    pub fn keep(&self, path: &str, answer: Keep<'_>, now: Instant) {
        if !self.enabled || now >= answer.reuse.until {
            return;
        }
        // A current answer is the same answer (the source gives the same identity until
        // it ends): the requests that take the full path (conditionals, HEAD, ...) do not
        // each take the write lock.
        let current = |held: &Map| {
            (held.by_path.get(path)).is_some_and(|a| a.current(now, answer.reuse.epoch))
        };
        if self.held.read().map_or(true, |held| current(&held)) {
            return;
        }
        let Ok(etag) = HeaderValue::from_str(answer.etag) else {
            return;
        };
        let mut headers = HeaderMap::with_capacity(8);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(answer.content_type),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(answer.cache_control),
        );
        headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        headers.insert(header::ETAG, etag);
        add_cors(&mut headers);
        // The length is the connection's to write, from the body.
        let header_lines = http1::header_lines(&headers);
        let Ok(mut held) = self.held.write() else {
            return;
        };
        let len = weight(path, answer.body);
        if let Some((old_path, old)) = held.by_path.remove_entry(path) {
            held.bytes = held.bytes.saturating_sub(weight(&old_path, &old.body));
        }
        let full = |held: &Map| held.by_path.len() >= MAX_ANSWERS || held.bytes + len > MAX_BYTES;
        if full(&held) {
            if held.swept_at.is_some_and(|at| now < at + SWEEP_EVERY) {
                return;
            }
            held.swept_at = Some(now);
            held.by_path.retain(|_, a| a.until > now);
            held.bytes = (held.by_path.iter()).map(|(p, a)| weight(p, &a.body)).sum();
            if full(&held) {
                return;
            }
        }
        held.bytes += len;
        held.by_path.insert(
            path.to_owned(),
            Held {
                body: answer.body.clone(),
                header_lines,
                route: answer.route,
                until: answer.reuse.until,
                epoch: answer.reuse.epoch,
            },
        );
    }

    /// Answers held now (tests).
    pub fn len(&self) -> usize {
        self.held.read().map_or(0, |h| h.by_path.len())
    }

    /// Whether no answer is held (tests).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What an answer held under `path` counts against [`MAX_BYTES`]: its key and its body.
fn weight(path: &str, body: &Bytes) -> usize {
    path.len() + body.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::http1::HeaderLines;
    use http::StatusCode;

    fn get(path: &str) -> Request<()> {
        Request::get(path).body(()).unwrap()
    }

    fn keep_master(answers: &Answers, body: &Bytes, until: Instant, now: Instant) {
        let keep = Keep {
            body,
            content_type: "application/vnd.apple.mpegurl",
            cache_control: "public, max-age=60",
            etag: "\"t-master.m3u8\"",
            route: "master",
            reuse: Reuse { until, epoch: 7 },
        };
        answers.keep("/vod/a.mp4/master.m3u8", keep, now);
    }

    #[test]
    fn a_kept_answer_is_given_until_its_identity_window_ends() {
        let answers = Answers::new(true);
        let now = Instant::now();
        let body = Bytes::from_static(b"#EXTM3U\n");
        keep_master(&answers, &body, now + Duration::from_secs(1), now);
        let given = answers
            .answer_at(&get("/vod/a.mp4/master.m3u8"), now, 7)
            .unwrap();
        // An identity the source dropped early (an object found changed) ends it at once.
        assert!(answers
            .answer_at(&get("/vod/a.mp4/master.m3u8"), now, 8)
            .is_none());
        assert_eq!(given.route, "master");
        let body = given.response.body();
        let lines = String::from_utf8(body.header_lines().to_vec()).unwrap();
        assert!(lines.contains("etag: \"t-master.m3u8\"\r\n"), "{lines}");
        assert!(
            lines.contains("access-control-allow-origin: *\r\n"),
            "{lines}"
        );
        assert!(
            !lines.contains("content-length"),
            "the connection writes it"
        );
        assert_eq!(http_body::Body::size_hint(body).exact(), Some(8));
        assert_eq!(given.response.status(), StatusCode::OK);
        // At the end of the window the full path answers (and sees a replaced file).
        let later = now + Duration::from_secs(1);
        assert!(answers
            .answer_at(&get("/vod/a.mp4/master.m3u8"), later, 7)
            .is_none());
        assert!(answers
            .answer_at(&get("/vod/b.mp4/master.m3u8"), now, 7)
            .is_none());
    }

    #[test]
    fn requests_that_can_change_the_answer_take_the_full_path() {
        let answers = Answers::new(true);
        let now = Instant::now();
        keep_master(
            &answers,
            &Bytes::from_static(b"x"),
            now + Duration::from_secs(1),
            now,
        );
        let path = "/vod/a.mp4/master.m3u8";
        let with =
            |name: &str, value: &str| Request::get(path).header(name, value).body(()).unwrap();
        for request in [
            with("range", "bytes=0-0"),
            with("if-none-match", "\"t-master.m3u8\""),
            with("if-match", "*"),
            with("if-range", "\"x\""),
            with("if-modified-since", "Sun, 19 Nov 2000 08:52:00 GMT"),
            with(
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
            Request::head(path).body(()).unwrap(),
            get("/vod/a.mp4/master.m3u8?token=x"),
        ] {
            assert!(answers.answer_at(&request, now, 7).is_none(), "{request:?}");
        }
        assert!(answers.answer_at(&get(path), now, 7).is_some());
        // Only manifest names are looked up at all.
        let segment = "/vod/a.mp4/seg-t1-1.m4s";
        let keep = Keep {
            body: &Bytes::from_static(b"x"),
            content_type: "video/mp4",
            cache_control: "public, max-age=60",
            etag: "\"t\"",
            route: "segment",
            reuse: Reuse {
                until: now + Duration::from_secs(1),
                epoch: 7,
            },
        };
        answers.keep(segment, keep, now);
        assert!(answers.answer_at(&get(segment), now, 7).is_none());
        // Without a CORS origin list (else nothing is held), Origin changes nothing.
        let from_a_page = with("origin", "https://player.example");
        assert!(answers.answer_at(&from_a_page, now, 7).is_some());
    }

    #[test]
    fn nothing_is_kept_when_off_expired_or_past_the_bounds() {
        let now = Instant::now();
        let soon = now + Duration::from_secs(1);
        let off = Answers::new(false);
        keep_master(&off, &Bytes::from_static(b"x"), soon, now);
        assert!(off.is_empty());
        let answers = Answers::new(true);
        keep_master(&answers, &Bytes::from_static(b"x"), now, now);
        assert!(answers.is_empty());
        let big = Bytes::from(vec![0u8; MAX_BYTES + 1]);
        keep_master(&answers, &big, soon, now);
        assert!(answers.is_empty());
        // The path counts too: a body that fits alone does not fit with its path.
        let nearly = Bytes::from(vec![0u8; MAX_BYTES - 5]);
        keep_master(&answers, &nearly, soon, now);
        assert!(answers.is_empty());
        // Full of current answers: a new one is not kept; once they expire, it is.
        let small = Bytes::from_static(b"x");
        for i in 0..MAX_ANSWERS {
            let keep = Keep {
                body: &small,
                content_type: "application/dash+xml",
                cache_control: "public, max-age=60",
                etag: "\"t\"",
                route: "mpd",
                reuse: Reuse {
                    until: soon,
                    epoch: 7,
                },
            };
            answers.keep(&format!("/vod/{i}.mp4/manifest.mpd"), keep, now);
        }
        assert_eq!(answers.len(), MAX_ANSWERS);
        keep_master(&answers, &small, soon + Duration::from_secs(1), now);
        assert!(answers
            .answer_at(&get("/vod/a.mp4/master.m3u8"), now, 7)
            .is_none());
        // Within SWEEP_EVERY of that sweep, no other is made.
        let shortly = now + SWEEP_EVERY / 2;
        keep_master(&answers, &small, soon + Duration::from_secs(1), shortly);
        assert_eq!(answers.len(), MAX_ANSWERS);
        keep_master(&answers, &small, soon + Duration::from_secs(1), soon);
        assert_eq!(answers.len(), 1);
        assert!(answers
            .answer_at(&get("/vod/a.mp4/master.m3u8"), soon, 7)
            .is_some());
    }
}
