//! A TS segment's chunks: the writer turns the source's bytes (or SAMPLE-AES samples held
//! in memory) into packets as the connection pulls each chunk (`TsChunks`); with AES-128 the
//! chunks are encrypted whole, and a byte range of a segment written whole is cut from it
//! (`CutChunks`). They start and stream like every segment body (`stream.rs`).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;

use super::answer::{TsProtection, TsSegmentJob};
use crate::crypto::WholeSegmentEncryptor;
use crate::package::ts::{prepare_ts_segment, Need, TsSegment};
use crate::package::PackageError;
use crate::server::app::App;
use crate::server::body::window_part;
use crate::server::error::ServeError;
use crate::server::offload;
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::kept::TsAt;
use crate::source::{ByteRange, InterleavedReads, ObjectIdentity, ObjectKey};

/// The chunks of bytes `window` of the segment of `job`: its writer prepared, a source
/// stream opened per program stream; the chunks are made as they are polled.
///
/// # Errors
/// The packager's error for a segment TS cannot carry; [`ServeError::Internal`] if the
/// work is lost.
pub async fn ts_chunks(
    app: &App,
    job: TsSegmentJob,
    window: ByteRange,
) -> Result<TsBody, ServeError> {
    let (start, end) = (window.start, window.end());
    let TsSegmentJob {
        cached,
        rendition,
        segment,
        objects,
        protection,
        ..
    } = job;
    // Output chunks of half `stream_chunk_bytes`. A TS connection holds the chunk being
    // sent or made, the TS writer's own buffers, a read batch and the segment's plan, where
    // a CMAF one holds the chunk being sent or read: at half size a TS stream stays within
    // a CMAF stream's memory (docs/performance.md).
    let chunk = (app.settings.stream_chunk_bytes / 2).max(PACKET_BYTES);
    let (writer, readers, route, cut) = match protection {
        TsProtection::SampleAes(writer, samples) => {
            // Written whole from the samples in memory, the window cut from the output.
            let route = (0..samples.len()).map(|s| (0, s)).collect();
            let cut = Cut::Window(start..end);
            (*writer, vec![ProgramReader::Memory(samples)], route, cut)
        }
        protection => {
            let cut = match protection {
                // CBC chains every block to the ones before: written whole, the window cut
                // from the ciphertext.
                TsProtection::Aes128(key, iv) => {
                    Cut::Cbc(Box::new(WholeSegmentEncryptor::new(&key, &iv)), start..end)
                }
                _ => Cut::None,
            };
            let window = matches!(cut, Cut::None).then_some(start..end);
            let (writer, readers, route) =
                source_writer(app, &cached, (rendition, segment), objects, window).await?;
            (writer, readers, route, cut)
        }
    };
    let chunks = TsChunks {
        pending: vec![Bytes::new(); route.len()],
        writer,
        readers,
        route,
        waiting: None,
        out: Vec::new(),
        chunk,
    };
    Ok(match cut {
        Cut::None => TsBody::Written(chunks),
        cut => TsBody::Cut(CutChunks {
            inner: chunks,
            cut,
            pos: 0,
        }),
    })
}

/// A TS segment's chunks: written for the window asked, or written whole and cut.
pub enum TsBody {
    Written(TsChunks),
    Cut(CutChunks),
}

impl futures_util::Stream for TsBody {
    type Item = Result<Bytes, ServeError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        match self.get_mut() {
            TsBody::Written(chunks) => chunks.poll_next_unpin(cx),
            TsBody::Cut(chunks) => chunks.poll_next_unpin(cx),
        }
    }
}

/// The writer of bytes `window` (`None`: all) of a segment read from the source, and per
/// program stream its reader and track in it.
async fn source_writer(
    app: &App,
    cached: &Arc<CachedTitle>,
    (rendition, segment): (TsAt, usize),
    objects: Vec<(ObjectKey, ObjectIdentity)>,
    window: Option<std::ops::Range<u64>>,
) -> Result<(TsSegment, Vec<ProgramReader>, Vec<(usize, usize)>), ServeError> {
    let title = cached.clone();
    let assemble = tracing::info_span!("segment.assemble", vod.segment = segment + 1);
    let prepare = move || {
        let ts = (title.caches.ts.get())
            .and_then(|o| o.rendition_at(rendition))
            .ok_or(PackageError::NoTsRenditions)?;
        prepare_ts_segment(&title.title, &ts.program, &ts.layout, segment, window)
    };
    // Planning is pure CPU, a few microseconds for a usual segment: a hop to the blocking
    // pool and back would cost more than the work (its futex wake-ups were about a tenth of
    // a TS segment's CPU, docs/performance.md). Only segments with many samples, which
    // would hold a runtime worker for long, go to the blocking pool.
    let samples: usize = (cached.title.plan.tracks.iter())
        .filter_map(|t| t.samples(segment).map(|r| r.len()))
        .sum();
    let mut writer = offload::assemble(assemble, samples, prepare).await?;
    let source = app.catalog.source().clone();
    // Program streams from one object are read together, in file order (`InterleavedReads`).
    let mut readers: Vec<(ObjectKey, ObjectIdentity, Vec<Vec<ByteRange>>)> = Vec::new();
    let mut route = Vec::with_capacity(objects.len());
    for (ranges, (key, identity)) in std::mem::take(&mut writer.ranges).into_iter().zip(objects) {
        let at = match readers
            .iter()
            .position(|(k, i, _)| *k == key && *i == identity)
        {
            Some(at) => at,
            None => {
                readers.push((key, identity, Vec::new()));
                readers.len() - 1
            }
        };
        if let Some((_, _, lists)) = readers.get_mut(at) {
            route.push((at, lists.len()));
            lists.push(ranges);
        }
    }
    let readers = (readers.into_iter())
        .map(|(key, identity, lists)| {
            ProgramReader::Source(InterleavedReads::new(
                source.clone(),
                key,
                identity,
                lists,
                TS_READ_BYTES,
                TS_HOLD_BYTES,
            ))
        })
        .collect();
    Ok((writer, readers, route))
}

/// Where a program stream's bytes come from: the source, or samples already in memory
/// (SAMPLE-AES), handed out in pieces of [`TS_READ_BYTES`] so each chunk stays small.
enum ProgramReader {
    Source(InterleavedReads),
    Memory(Vec<Bytes>),
}

impl ProgramReader {
    fn poll_next(
        &mut self,
        track: usize,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Bytes, crate::source::SourceError>>> {
        match self {
            ProgramReader::Source(reads) => reads.poll_next(track, cx),
            ProgramReader::Memory(samples) => std::task::Poll::Ready(
                samples
                    .get_mut(track)
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(b.split_to(b.len().min(TS_READ_BYTES)))),
            ),
        }
    }
}

const PACKET_BYTES: usize = crate::package::ts::PACKET_LEN;
/// Largest source read of a TS segment. A read of a finely interleaved file is one `pread`
/// whatever its size, so small reads cost little CPU and hold little memory.
const TS_READ_BYTES: usize = 16 * 1024;
/// Most bytes read ahead for one program stream while another waits (`InterleavedReads`).
const TS_HOLD_BYTES: usize = 16 * 1024;

/// A TS segment's chunks, made when the connection polls for them: the writer runs until a
/// chunk is full, reading a stream's next source batch when it runs out of that stream's
/// bytes. Reads of pages in the cache complete in the poll itself (`source/nowait.rs`), so
/// a segment is usually made with no task hand-off at all.
pub struct TsChunks {
    writer: TsSegment,
    /// The sources of the program streams (one per object), and per program stream its
    /// reader and its track in it.
    readers: Vec<ProgramReader>,
    route: Vec<(usize, usize)>,
    /// Per program stream, the unread part of its last batch.
    pending: Vec<Bytes>,
    /// The stream whose next batch the writer waits for.
    waiting: Option<usize>,
    /// The chunk being made.
    out: Vec<u8>,
    chunk: usize,
}

impl TsChunks {
    /// Let the writer take what it can from `pending` into `out`, dropping what it took.
    /// Called once per piece of source bytes (a sample, in a finely interleaved file), so
    /// it allocates nothing for the usual program of one or two streams.
    fn write(&mut self) -> Need {
        const ON_STACK: usize = 4;
        if self.pending.len() > ON_STACK {
            let mut views: Vec<&[u8]> = self.pending.iter().map(|b| &b[..]).collect();
            let need = self.writer.write(&mut views, &mut self.out);
            let left: Vec<usize> = views.iter().map(|v| v.len()).collect();
            drop_taken(&mut self.pending, &left);
            return need;
        }
        let mut views: [&[u8]; ON_STACK] = [&[]; ON_STACK];
        for (view, bytes) in views.iter_mut().zip(&self.pending) {
            *view = bytes;
        }
        let n = self.pending.len();
        let need = self.writer.write(&mut views[..n], &mut self.out);
        let left = views.map(<[u8]>::len);
        drop_taken(&mut self.pending, &left[..n]);
        need
    }

    /// The chunk made so far.
    fn take_chunk(&mut self) -> Bytes {
        Bytes::from(std::mem::take(&mut self.out))
    }
}

/// Drop from each of `pending` what the writer took, leaving its last `left` bytes.
fn drop_taken(pending: &mut [Bytes], left: &[usize]) {
    for (bytes, left) in pending.iter_mut().zip(left) {
        let taken = bytes.len().saturating_sub(*left);
        let _ = bytes.split_to(taken);
    }
}

impl futures_util::Stream for TsChunks {
    type Item = Result<Bytes, ServeError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            if let Some(s) = this.waiting {
                let (reader, track) = this.route.get(s).copied().unwrap_or((usize::MAX, 0));
                let polled = match this.readers.get_mut(reader) {
                    Some(reader) => reader.poll_next(track, cx),
                    None => Poll::Ready(None),
                };
                match polled {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(bytes))) => {
                        if let Some(slot) = this.pending.get_mut(s) {
                            *slot = bytes;
                        }
                        this.waiting = None;
                    }
                    Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                    Poll::Ready(None) => {
                        return Poll::Ready(Some(Err(ServeError::SourceEndedEarly)));
                    }
                }
            }
            if this.out.capacity() == 0 {
                this.out.reserve_exact(this.chunk + PACKET_BYTES);
            }
            let need = this.write();
            let done = need == Need::Done;
            if this.out.len() >= this.chunk || (done && !this.out.is_empty()) {
                if let Need::Stream(s) = need {
                    this.waiting = Some(s);
                }
                return Poll::Ready(Some(Ok(this.take_chunk())));
            }
            match need {
                Need::Stream(s) => this.waiting = Some(s),
                Need::Done => return Poll::Ready(None),
            }
        }
    }
}

/// What is done to a whole segment's chunks before they go out.
enum Cut {
    /// Nothing: the writer wrote the window itself.
    None,
    /// Bytes `window` of the whole segment cut out.
    Window(std::ops::Range<u64>),
    /// HLS AES-128 (CBC, PKCS#7 padding), then bytes `window` of the ciphertext cut out.
    Cbc(Box<WholeSegmentEncryptor>, std::ops::Range<u64>),
}

/// A whole segment's chunks, encrypted or not, with a window cut out of them.
pub struct CutChunks {
    inner: TsChunks,
    /// `Cut::None` once the segment (and any padding block) is out.
    cut: Cut,
    /// Output bytes made so far.
    pos: u64,
}

impl futures_util::Stream for CutChunks {
    type Item = Result<Bytes, ServeError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            let window = match &this.cut {
                Cut::None => return Poll::Ready(None),
                Cut::Window(w) | Cut::Cbc(_, w) => w.clone(),
            };
            if this.pos >= window.end {
                return Poll::Ready(None);
            }
            let out = match this.inner.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(chunk))) => match &mut this.cut {
                    Cut::Cbc(cipher, _) => cipher.feed(&chunk),
                    _ => chunk,
                },
                Poll::Ready(None) => match std::mem::replace(&mut this.cut, Cut::None) {
                    Cut::Cbc(cipher, _) => cipher.finish(),
                    _ => return Poll::Ready(None),
                },
            };
            let from = this.pos;
            this.pos += out.len() as u64;
            if let Some(part) = window_part(&out, from, window) {
                return Poll::Ready(Some(Ok(part)));
            }
        }
    }
}
