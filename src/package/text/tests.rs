//! The text segment writers: every box decoded back with mp4-atom, samples read back with
//! the sample parser of `media::text`, TTML documents read back with quick-xml.

use mp4_atom::{Codec, Decode, Ftyp, Mdat, Moof, Moov};

use super::*;
use crate::media::{parse_text_sample, TextFormat};

fn cue(start_ms: i128, end_ms: i128, text: &str) -> Cue {
    Cue {
        start_ns: start_ms * 1_000_000,
        end_ns: end_ms * 1_000_000,
        payload: SampleCue {
            id: None,
            settings: None,
            text: text.to_owned(),
        },
    }
}

/// A media segment the limits let through.
fn written(
    coding: TextCoding,
    track_id: u32,
    language: Option<&str>,
    segment: &TextSegmentSpan<'_>,
) -> Vec<u8> {
    text_media_segment(coding, track_id, language, segment).expect("within the limits")
}

fn span(cues: &[Cue], start_ticks: u64, duration_ticks: u64) -> TextSegmentSpan<'_> {
    TextSegmentSpan {
        number: 3,
        start_ticks,
        duration_ticks,
        timescale: 1000,
        cues,
    }
}

/// A segment decoded: its `tfdt`, and its samples as (duration, bytes) from `trun` and
/// the `mdat` the data offset points into.
fn samples_of(segment: &[u8], track_id: u32) -> (u64, Vec<(u32, Vec<u8>)>) {
    let mut buf = segment;
    let moof = Moof::decode(&mut buf).unwrap();
    let moof_len = segment.len() - buf.len();
    let mdat = Mdat::decode(&mut buf).unwrap();
    assert!(buf.is_empty());
    assert_eq!(moof.mfhd.sequence_number, 3);
    let traf = &moof.traf[0];
    assert_eq!(traf.tfhd.track_id, track_id);
    let base = traf.tfdt.as_ref().unwrap().base_media_decode_time;
    let trun = &traf.trun[0];
    let offset = usize::try_from(trun.data_offset.unwrap()).unwrap();
    assert_eq!(offset, moof_len + 8, "data offset: the mdat payload");
    let mut at = 0;
    let samples = (trun.samples.iter())
        .map(|e| {
            let size = e.size.unwrap() as usize;
            let bytes = mdat.data[at..at + size].to_vec();
            at += size;
            (e.duration.unwrap(), bytes)
        })
        .collect();
    assert_eq!(at, mdat.data.len(), "the samples fill the mdat");
    (base, samples)
}

/// Given a text track, then its `wvtt` init decodes: handler `text`, `nmhd`, the `wvtt`
/// entry with `vttC` "WEBVTT", the timescale, track id and language; and the `stpp` init
/// has handler `subt`, `sthd` and the TTML namespace.
#[test]
fn text_inits_declare_their_sample_entries() {
    for coding in [TextCoding::Wvtt, TextCoding::Imsc1] {
        let init = text_init_segment(coding, 7, 90_000, Some("de"));
        let mut buf = &init[..];
        let ftyp = Ftyp::decode(&mut buf).unwrap();
        assert!(ftyp.compatible_brands.contains(&b"cmfc".into()));
        let moov = Moov::decode(&mut buf).unwrap();
        assert!(buf.is_empty());
        let trak = &moov.trak[0];
        assert_eq!(trak.tkhd.track_id, 7);
        assert_eq!(trak.mdia.mdhd.timescale, 90_000);
        assert_eq!(trak.mdia.mdhd.language, "deu");
        assert_eq!(moov.mvex.as_ref().unwrap().trex[0].track_id, 7);
        let minf = &trak.mdia.minf;
        let codec = &minf.stbl.stsd.codecs[0];
        match coding {
            TextCoding::Wvtt => {
                assert_eq!(trak.mdia.hdlr.handler, b"text".into());
                assert!(minf.nmhd.is_some() && minf.sthd.is_none());
                let Codec::Wvtt(wvtt) = codec else {
                    panic!("{codec:?}")
                };
                assert_eq!(wvtt.config.config, "WEBVTT");
            }
            TextCoding::Imsc1 => {
                assert_eq!(trak.mdia.hdlr.handler, b"subt".into());
                assert!(minf.sthd.is_some() && minf.nmhd.is_none());
                let Codec::Unknown(kind, body) = codec else {
                    panic!("{codec:?}")
                };
                assert_eq!(*kind, b"stpp".into());
                assert_eq!(&body[..8], &[0, 0, 0, 0, 0, 0, 0, 1]);
                assert_eq!(&body[8..], b"http://www.w3.org/ns/ttml\0\0\0");
            }
        }
    }
}

/// Given two overlapping cues inside a segment, then the `wvtt` segment's samples are cut
/// at every cue edge, hold the cues active over them (`vtte` where none is), fill the
/// segment exactly and start at its `tfdt`.
#[test]
fn wvtt_samples_are_cut_at_every_cue_edge() {
    let cues = [
        cue(11_000, 12_000, "<i>one</i>"),
        cue(11_500, 13_000, "two"),
    ];
    let segment = written(TextCoding::Wvtt, 4, None, &span(&cues, 10_000, 4_000));
    let (base, samples) = samples_of(&segment, 4);
    assert_eq!(base, 10_000);
    let got: Vec<(u32, Vec<String>)> = (samples.iter())
        .map(|(d, bytes)| {
            let cues = parse_text_sample(TextFormat::Wvtt, 4, bytes).unwrap();
            (*d, cues.into_iter().map(|c| c.text).collect())
        })
        .collect();
    let texts = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        [
            (1000, texts(&[])),
            (500, texts(&["<i>one</i>"])),
            (500, texts(&["<i>one</i>", "two"])),
            (1000, texts(&["two"])),
            (1000, texts(&[])),
        ]
    );
    assert_eq!(&samples[0].1[4..8], b"vtte");
}

/// Given cues that reach past the segment on both sides, an identifier and settings, then
/// the `wvtt` segment cuts them to its span and keeps `iden` and `sttg`; a segment with
/// no cue is one `vtte` sample lasting the whole segment.
#[test]
fn wvtt_cues_are_cut_to_the_segment_and_empty_segments_are_vtte() {
    let mut long = cue(5_000, 20_000, "long");
    long.payload.id = Some("c1".into());
    long.payload.settings = Some("line:0".into());
    let cues = [long];
    let (_, samples) = samples_of(
        &written(TextCoding::Wvtt, 4, None, &span(&cues, 10_000, 2_000)),
        4,
    );
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].0, 2_000);
    let parsed = parse_text_sample(TextFormat::Wvtt, 4, &samples[0].1).unwrap();
    assert_eq!(parsed, [cues[0].payload.clone()]);
    let (_, empty) = samples_of(
        &written(TextCoding::Wvtt, 4, None, &span(&[], 10_000, 2_000)),
        4,
    );
    assert_eq!(empty, [(2_000, vec![0, 0, 0, 8, b'v', b't', b't', b'e'])]);
}

/// The `p` elements of a TTML document as (begin, end, text with `[b i]` markers for
/// styled spans and `|` for `br`), read with quick-xml.
fn ttml_paragraphs(doc: &str) -> Vec<(String, String, String)> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(doc);
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut in_p = false;
    loop {
        match reader.read_event().unwrap() {
            Event::End(e) if e.local_name().as_ref() == b"p" => in_p = false,
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == name)
                        .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                };
                match e.local_name().as_ref() {
                    b"p" => {
                        in_p = true;
                        out.push((
                            attr(b"begin").unwrap(),
                            attr(b"end").unwrap(),
                            String::new(),
                        ));
                    }
                    b"br" => out.last_mut().unwrap().2.push('|'),
                    b"span" => {
                        if let Some(style) = attr(b"style") {
                            out.last_mut().unwrap().2.push_str(&format!("[{style}]"));
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(t) if in_p => {
                if let Some(p) = out.last_mut() {
                    p.2.push_str(&t.decode().unwrap());
                }
            }
            Event::GeneralRef(r) => {
                let c = match &*r.decode().unwrap() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    other => panic!("{other}"),
                };
                out.last_mut().unwrap().2.push_str(c);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// Given cues with styles, line breaks and markup characters, then the `stpp` segment is
/// one sample lasting the segment: a TTML document with `ttp:timeBase="media"`, a region,
/// and a `p` per cue at its media times (cut to the segment), its runs styled by
/// reference; an empty segment's document has an empty body.
#[test]
fn imsc1_segments_are_one_ttml_document() {
    let cues = [
        cue(
            9_000,
            10_500,
            "<b>Bold</b> <i>and &amp; <b>both</b></i>\nnext",
        ),
        cue(11_250, 11_750, "x &lt; y"),
    ];
    let segment = written(
        TextCoding::Imsc1,
        2,
        Some("en"),
        &span(&cues, 10_000, 2_000),
    );
    let (base, samples) = samples_of(&segment, 2);
    assert_eq!(base, 10_000);
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].0, 2_000);
    let doc = String::from_utf8(samples[0].1.clone()).unwrap();
    assert!(doc.contains("ttp:timeBase=\"media\""), "{doc}");
    assert!(doc.contains("xml:lang=\"en\""), "{doc}");
    assert!(doc.contains("<region xml:id=\"bottom\""), "{doc}");
    assert_eq!(
        ttml_paragraphs(&doc),
        [
            (
                "00:00:10.000".into(),
                "00:00:10.500".into(),
                "[b]Bold [i]and & [b i]both|next".into()
            ),
            ("00:00:11.250".into(), "00:00:11.750".into(), "x < y".into()),
        ]
    );
    let empty = written(TextCoding::Imsc1, 2, None, &span(&[], 0, 2_000));
    let (_, samples) = samples_of(&empty, 2);
    let doc = String::from_utf8(samples[0].1.clone()).unwrap();
    assert!(doc.contains("<body/>"), "{doc}");
    assert_eq!(ttml_paragraphs(&doc), []);
}

/// Given a long cue under 1,999 short ones in one segment (a hostile file), when its
/// `wvtt` segment is asked for, then it is refused before it is written (the long cue
/// would be repeated in some 4,000 samples), while the IMSC1 one, each cue once, is
/// written; given 2,001 cues, both are refused.
#[test]
fn a_segment_of_thousands_of_cues_is_refused_before_it_is_written() {
    let long = Cue {
        start_ns: 0,
        end_ns: 2_000_000_000,
        payload: SampleCue {
            id: None,
            settings: None,
            text: "x".repeat(5_000),
        },
    };
    let short = |n: i128| Cue {
        start_ns: n * 1_000_000,
        end_ns: n * 1_000_000 + 500_000,
        payload: SampleCue {
            id: None,
            settings: None,
            text: "y".to_owned(),
        },
    };
    let mut cues: Vec<Cue> = std::iter::once(long).chain((0..1_999).map(short)).collect();
    let segment = span(&cues, 0, 2_000);
    let refused = text_media_segment(TextCoding::Wvtt, 4, None, &segment);
    assert!(
        matches!(
            refused,
            Err(PackageError::TextSegmentTooLarge { cues: 2_000, .. })
        ),
        "{refused:?}"
    );
    assert!(text_media_segment(TextCoding::Imsc1, 4, None, &segment).is_ok());
    cues.push(short(1_999));
    let segment = span(&cues, 0, 2_000);
    for coding in [TextCoding::Wvtt, TextCoding::Imsc1] {
        assert!(text_media_segment(coding, 4, None, &segment).is_err());
    }
}
