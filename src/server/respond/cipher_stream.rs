//! The encrypting stream of an encrypted CMAF segment: its header and the source chunks
//! through the cipher its output chose (`answer::SegmentCipher`), and the asked window cut
//! from the ciphertext. Encryption runs while the body streams, a chunk at a time.

use bytes::Bytes;
use futures_util::StreamExt;

use super::answer::SegmentCipher;
use crate::crypto::{SampleEncryptor, WholeSegmentEncryptor};
use crate::server::body::window_part;
use crate::source::{ByteRange, ByteStream, ObjectKey, SourceError};

enum Encryptor {
    Whole(Box<WholeSegmentEncryptor>),
    Samples(Box<SampleEncryptor>),
}

/// The encrypted bytes `window` of an encrypted segment of `key`: its `header` and the
/// source chunks run through `cipher`, and the window cut from its output. Any failure
/// ends the stream with an error, so the body is cut rather than completed wrongly.
pub fn encrypted_stream(
    key: &ObjectKey,
    (header, cipher): (Bytes, SegmentCipher),
    source_chunks: ByteStream,
    window: ByteRange,
) -> ByteStream {
    let (start, end) = (window.start, window.end());
    let header_len = header.len() as u64;
    let encryptor = match cipher {
        SegmentCipher::Whole { key, iv } => {
            Encryptor::Whole(Box::new(WholeSegmentEncryptor::new(&key, &iv)))
        }
        SegmentCipher::Samples { key, mode, layouts } => Encryptor::Samples(Box::new(
            SampleEncryptor::new(&key, mode, header_len, layouts),
        )),
    };
    let input = futures_util::stream::once(async move { Ok(header) }).chain(source_chunks);
    let key_name = key.as_str().to_owned();
    let state = (Box::pin(input), Some(encryptor), 0u64);
    futures_util::stream::unfold(state, move |(mut input, mut encryptor, mut pos)| {
        let key_name = key_name.clone();
        async move {
            let fail = |e: String| SourceError::Io {
                key: key_name.clone(),
                source: std::io::Error::other(e),
            };
            loop {
                if pos >= end {
                    return None;
                }
                let out = match input.next().await {
                    Some(Err(e)) => return Some((Err(e), (input, None, end))),
                    Some(Ok(chunk)) => match encryptor.as_mut() {
                        Some(Encryptor::Whole(w)) => Ok(w.feed(&chunk)),
                        Some(Encryptor::Samples(s)) => {
                            s.feed(&chunk).map_err(|e| fail(e.to_string()))
                        }
                        None => return None,
                    },
                    None => match encryptor.take() {
                        Some(Encryptor::Whole(w)) => Ok(w.finish()),
                        Some(Encryptor::Samples(s)) => s
                            .finish()
                            .map(|()| Bytes::new())
                            .map_err(|e| fail(e.to_string())),
                        None => return None,
                    },
                };
                let bytes = match out {
                    Ok(b) => b,
                    Err(e) => return Some((Err(e), (input, None, end))),
                };
                let (from, to) = (pos, pos + bytes.len() as u64);
                pos = to;
                if let Some(piece) = window_part(&bytes, from, start..end) {
                    return Some((Ok(piece), (input, encryptor, pos)));
                }
                if encryptor.is_none() && to == from {
                    return None;
                }
            }
        }
    })
    .boxed()
}
