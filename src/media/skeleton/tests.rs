//! The bounded `moov` copy: the same tables as the source, and the depth and size limits
//! against hostile nesting.

use super::*;

/// `kind` boxes nested `depth` deep around `inner`.
fn nest(kind: &[u8; 4], depth: usize, inner: &[u8]) -> Vec<u8> {
    let mut b = inner.to_vec();
    for _ in 0..depth {
        let mut o = ((b.len() + 8) as u32).to_be_bytes().to_vec();
        o.extend_from_slice(kind);
        o.extend_from_slice(&b);
        b = o;
    }
    b
}

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    nest(kind, 1, body)
}

/// The `moov` box of a committed fixture.
fn fixture_moov(name: &str) -> Bytes {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let file = std::fs::read(path).unwrap();
    let mut pos = 0;
    loop {
        let child = child_at(&file, pos, file.len()).unwrap();
        if &child.kind == b"moov" {
            return Bytes::copy_from_slice(&file[child.whole]);
        }
        pos = child.whole.end;
    }
}

/// Given every fixture, the copy decodes to the same header, track and sample
/// description boxes as the whole `moov`, with empty sample tables in it; the raw sample
/// descriptions are the source's bytes, and the tables set aside decode (re-boxed) to the
/// source's tables.
#[test]
fn the_copy_decodes_to_the_same_tables_as_the_source() {
    use mp4_atom::{Decode, Moov};
    for name in [
        "h264-aac-3s.mp4",
        "h264-aac-3s-moov-end.mp4",
        "h264-bframes-editlist-aac.mp4",
        "hevc-aac-3s.mp4",
        "aac-3s-audio-only.m4a",
        "h264-3s-video-only.mp4",
        "h264-aac-2lang-3s.mp4",
    ] {
        let moov = fixture_moov(name);
        let skeleton = build(&moov, &MediaLimits::default()).unwrap();
        let source = Moov::decode(&mut &moov[..]).unwrap();
        let copy = Moov::decode(&mut &skeleton.moov[..]).unwrap();
        assert_eq!(source.mvhd, copy.mvhd, "{name}");
        assert_eq!(source.trak.len(), copy.trak.len(), "{name}");
        assert_eq!(
            skeleton.sample_descriptions.len(),
            copy.trak.len(),
            "{name}"
        );
        assert_eq!(skeleton.tables.len(), copy.trak.len(), "{name}");
        for (((s, c), raw), tables) in source
            .trak
            .iter()
            .zip(&copy.trak)
            .zip(&skeleton.sample_descriptions)
            .zip(&skeleton.tables)
        {
            assert_eq!(s.tkhd, c.tkhd, "{name}");
            assert_eq!(s.edts, c.edts, "{name}");
            assert_eq!(s.mdia.mdhd, c.mdia.mdhd, "{name}");
            assert_eq!(s.mdia.hdlr, c.mdia.hdlr, "{name}");
            let (s, c) = (&s.mdia.minf.stbl, &c.mdia.minf.stbl);
            assert_eq!(s.stsd, c.stsd, "{name}");
            assert_eq!(
                (&c.stts, &c.ctts, &c.stss, &c.stsz, &c.stsc, &c.stco, &c.co64),
                (
                    &mp4_atom::Stts::default(),
                    &None,
                    &None,
                    &mp4_atom::Stsz::default(),
                    &mp4_atom::Stsc::default(),
                    &None,
                    &None
                ),
                "{name}: the copy's tables are empty stand-ins"
            );
            fn reboxed<T: Decode>(kind: &[u8; 4], body: &Option<Bytes>) -> Option<T> {
                let body = body.as_ref()?;
                let mut boxed = ((body.len() + 8) as u32).to_be_bytes().to_vec();
                boxed.extend_from_slice(kind);
                boxed.extend_from_slice(body);
                Some(T::decode(&mut &boxed[..]).unwrap())
            }
            assert_eq!(reboxed(b"stts", &tables.stts).as_ref(), Some(&s.stts));
            assert_eq!(reboxed(b"ctts", &tables.ctts), s.ctts);
            assert_eq!(reboxed(b"stss", &tables.stss), s.stss);
            assert_eq!(reboxed(b"stsz", &tables.stsz).as_ref(), Some(&s.stsz));
            assert_eq!(reboxed(b"stsc", &tables.stsc).as_ref(), Some(&s.stsc));
            assert_eq!(reboxed(b"stco", &tables.stco), s.stco);
            assert_eq!(reboxed(b"co64", &tables.co64), s.co64);
            let raw = raw.as_ref().unwrap();
            assert_eq!(
                mp4_atom::Stsd::decode(&mut &raw[..]).unwrap(),
                s.stsd,
                "{name}"
            );
        }
    }
}

#[test]
fn nesting_is_counted_through_any_box_type() {
    let chain = nest(b"avc1", 10, b"");
    assert_eq!(check_nesting(&chain, 0..chain.len(), 10), Ok(()));
    assert_eq!(check_nesting(&chain, 0..chain.len(), 9), Err(10));
    // Size 0 (to the end of the parent) nests just as deep.
    let mut zeros = Vec::new();
    for _ in 0..10 {
        zeros.extend_from_slice(&[0, 0, 0, 0]);
        zeros.extend_from_slice(b"moov");
    }
    assert_eq!(check_nesting(&zeros, 0..zeros.len(), 9), Err(10));
}

#[test]
fn siblings_do_not_add_depth() {
    let mut flat = Vec::new();
    for _ in 0..1000 {
        flat.extend_from_slice(&boxed(b"free", &[0; 8]));
    }
    assert_eq!(check_nesting(&flat, 0..flat.len(), 2), Ok(()));
}

#[test]
fn two_thousand_nested_boxes_in_udta_are_dropped_unread() {
    let moov = boxed(
        b"moov",
        &[boxed(b"mvhd", &[0; 100]), nest(b"udta", 2000, b"")].concat(),
    );
    let skeleton = build(&Bytes::from(moov), &MediaLimits::default()).unwrap();
    assert_eq!(skeleton.moov, boxed(b"moov", &boxed(b"mvhd", &[0; 100])));
    assert!(skeleton.sample_descriptions.is_empty());
}

#[test]
fn two_thousand_nested_sample_entries_break_the_depth_limit() {
    let stsd = boxed(
        b"stsd",
        &[&[0, 0, 0, 0, 0, 0, 0, 1][..], &nest(b"avc1", 2000, b"")].concat(),
    );
    let stbl = boxed(b"stbl", &stsd);
    let minf = boxed(b"minf", &stbl);
    let mdia = boxed(b"mdia", &minf);
    let moov = boxed(b"moov", &boxed(b"trak", &mdia));
    let err = build(&Bytes::from(moov), &MediaLimits::default()).unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::TooLarge {
                limit: "max_box_depth",
                ..
            }
        ),
        "{err}"
    );
}

/// Given a sample description nested as deep as the limit allows, with the heaviest box
/// mp4-atom decodes (`moov`) at every level, then decoding the copy fits in a 1 MiB stack
/// even in a debug build (threads get 2 MiB).
#[test]
fn the_deepest_accepted_copy_decodes_in_a_small_stack() {
    let limits = MediaLimits::default();
    let inner = nest(b"moov", limits.max_box_depth - STSD_DEPTH, b"");
    let stsd = boxed(b"stsd", &[&[0, 0, 0, 0, 0, 0, 0, 1][..], &inner].concat());
    let mdia = boxed(b"mdia", &boxed(b"minf", &boxed(b"stbl", &stsd)));
    let moov = Bytes::from(boxed(b"moov", &boxed(b"trak", &mdia)));
    let skeleton = build(&moov, &limits).unwrap();
    let decoded = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            use mp4_atom::Decode;
            mp4_atom::Moov::decode(&mut &skeleton.moov[..]).is_ok()
        })
        .unwrap()
        .join();
    // An error (the boxes are empty), but an answer: no stack overflow.
    assert_eq!(decoded.ok(), Some(false));
    let deeper = nest(b"moov", limits.max_box_depth - STSD_DEPTH + 1, b"");
    let stsd = boxed(b"stsd", &[&[0, 0, 0, 0, 0, 0, 0, 1][..], &deeper].concat());
    let mdia = boxed(b"mdia", &boxed(b"minf", &boxed(b"stbl", &stsd)));
    let moov = Bytes::from(boxed(b"moov", &boxed(b"trak", &mdia)));
    assert!(build(&moov, &limits).is_err());
}

#[test]
fn a_box_of_size_3_inside_moov_is_malformed() {
    let moov = boxed(b"moov", &[0, 0, 0, 3, b't', b'r', b'a', b'k']);
    let err = build(&Bytes::from(moov), &MediaLimits::default()).unwrap_err();
    assert!(matches!(err, MediaError::Malformed { .. }), "{err}");
    assert!(err.to_string().contains("size 3"), "{err}");
}

#[test]
fn a_child_past_its_parent_is_malformed_and_64_bit_sizes_are_read() {
    let mut moov = boxed(b"moov", &[0, 0, 0, 1, b'f', b'r', b'e', b'e']);
    moov.extend_from_slice(&u64::MAX.to_be_bytes());
    moov[3] += 8;
    let err = build(&Bytes::from(moov), &MediaLimits::default()).unwrap_err();
    assert!(
        err.to_string().contains("past the end of its parent"),
        "{err}"
    );
    let mut large = vec![0, 0, 0, 1, b'm', b'v', b'h', b'd'];
    large.extend_from_slice(&20u64.to_be_bytes());
    large.extend_from_slice(&[7; 4]);
    let moov = boxed(b"moov", &large);
    let skeleton = build(&Bytes::from(moov.clone()), &MediaLimits::default()).unwrap();
    assert_eq!(skeleton.moov, moov);
}
