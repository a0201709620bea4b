//! The head parser and the connection loop against hostile bytes, as a bounded fuzz run
//! on stable Rust: the same cases on every run (a seeded generator), from the seeds in
//! `tests/corpus/http1/`. What must hold for every input: no panic, no hang (the runs use
//! paused time, so a wait is a bounded jump), and no desync: the answers do not depend
//! on how the bytes arrived (whole, split at every byte, or in random pieces), and a
//! canary request sent behind the input is answered last, or not at all after a refusal.

use std::path::PathBuf;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{head, serve, Limits};

const LIMITS: Limits = Limits {
    head_timeout: Duration::from_secs(10),
    max_head_bytes: 1024,
    max_body_bytes: 64,
};

const CANARY: &[u8] = b"GET /canary HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n";

/// Mutations made of each seed.
const MUTATIONS_PER_SEED: usize = 600;

/// A small xorshift generator: the same cases on every run.
struct Cases(u64);

impl Cases {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// `seed` with one to four changes: a byte replaced, a byte that matters to the
    /// grammar inserted, a cut, or a line repeated.
    fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        const GRAMMAR: &[u8] = b"\r\n\0 :,;\t-=0123456789/?*Hh";
        let mut bytes = seed.to_vec();
        for _ in 0..=self.below(4) {
            let at = self.below(bytes.len() + 1);
            match self.below(4) {
                0 if at < bytes.len() => bytes[at] = self.next() as u8,
                1 => bytes.insert(at, GRAMMAR[self.below(GRAMMAR.len())]),
                2 => bytes.truncate(at),
                _ => {
                    let line_end = bytes[at.min(bytes.len())..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(bytes.len(), |p| at + p + 1);
                    let line_start = bytes[..at.min(bytes.len())]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |p| p + 1);
                    let line = bytes[line_start..line_end].to_vec();
                    bytes.splice(line_end..line_end, line);
                }
            }
        }
        bytes
    }
}

/// The seeds: every file of `tests/corpus/http1/`, in name order.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/http1");
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "http"))
        .map(|path| {
            let name = path.display().to_string();
            (name, std::fs::read(&path).expect("a corpus file"))
        })
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 20, "the corpus is in tests/corpus/http1");
    seeds
}

/// What a connection answers to `input` and the canary behind it, written in pieces cut
/// at `cuts`, with what depends on timing taken out: the `date` lines, and the
/// `100 Continue` sent only when a body has not arrived yet.
async fn answers(input: &[u8], cuts: &[usize]) -> String {
    let (ours, mut client) = tokio::io::duplex(64 * 1024);
    let served = tokio::spawn(serve(ours, LIMITS, || false, super::tests::echo));
    let mut sent = input.to_vec();
    sent.extend_from_slice(CANARY);
    let mut from = 0;
    for &cut in cuts.iter().chain([sent.len()].iter()) {
        let Some(piece) = sent.get(from..cut.clamp(from, sent.len())) else {
            break;
        };
        if client.write_all(piece).await.is_err() {
            break;
        }
        from = cut.clamp(from, sent.len());
        tokio::task::yield_now().await;
    }
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(600), client.read_to_end(&mut out));
    assert!(
        read.await.is_ok(),
        "the connection ends: {:?}",
        String::from_utf8_lossy(input)
    );
    let _ = served.await.expect("the connection's task does not panic");
    String::from_utf8_lossy(&out)
        .replace("HTTP/1.1 100 Continue\r\n\r\n", "")
        .split("\r\n")
        .filter(|line| !line.starts_with("date: "))
        .collect::<Vec<_>>()
        .join("\r\n")
}

/// Given the corpus and its mutations, when each is sent whole, split at every byte (the
/// seeds) or at random points (the mutations), then the answers are the same every way,
/// and the canary, when answered, is the last answer.
#[tokio::test(start_paused = true)]
async fn hostile_heads_answer_the_same_however_they_arrive() {
    let mut cases = Cases(0x9e37_79b9_7f4a_7c15);
    let mut inputs: Vec<(Vec<u8>, bool)> = Vec::new();
    for (_, seed) in seeds() {
        inputs.push((seed.clone(), true));
        for _ in 0..MUTATIONS_PER_SEED {
            inputs.push((cases.mutate(&seed), false));
        }
    }
    for (input, every_byte) in inputs {
        let whole = answers(&input, &[]).await;
        // The canary's own answer (a body that holds its bytes is another request's).
        const CANARY_ANSWER: &str = "content-length: 12\r\nconnection: close\r\n\r\nGET /canary ";
        if let Some(at) = whole.find(CANARY_ANSWER) {
            assert_eq!(
                at + CANARY_ANSWER.len(),
                whole.len(),
                "the canary's answer is the last: {:?}",
                String::from_utf8_lossy(&input)
            );
        }
        let splits: Vec<Vec<usize>> = if every_byte {
            (1..input.len()).map(|cut| vec![cut]).collect()
        } else {
            (0..4)
                .map(|_| {
                    let mut cuts: Vec<usize> = (0..=cases.below(3))
                        .map(|_| cases.below(input.len() + CANARY.len()))
                        .collect();
                    cuts.sort_unstable();
                    cuts
                })
                .collect()
        };
        for cuts in splits {
            let split = answers(&input, &cuts).await;
            assert_eq!(
                split,
                whole,
                "cut at {cuts:?}: {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
}

/// Given random bytes, and the corpus with bytes flipped or cut, when the parser reads
/// them, then a head is taken, refused or waited for, never a panic, and a taken head
/// comes off the front of the buffer.
#[test]
fn hostile_heads_never_panic_the_parser() {
    let mut cases = Cases(0x2545_f491_4f6c_dd1d);
    let seeds = seeds();
    for round in 0..20_000 {
        let bytes = if round % 2 == 0 {
            let (_, seed) = &seeds[cases.below(seeds.len())];
            cases.mutate(seed)
        } else {
            (0..cases.below(200)).map(|_| cases.next() as u8).collect()
        };
        let cut = cases.below(bytes.len() + 1);
        let mut buf = BytesMut::from(&bytes[..cut]);
        if let Ok(Some(_)) = head::take(&mut buf, LIMITS.max_head_bytes) {
            assert!(buf.len() < cut, "a taken head comes off the front");
        }
    }
}
