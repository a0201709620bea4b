//! Text samples to cues: `tx3g` text, styles and encodings, `wvtt` boxes, and malformed
//! samples as errors.

use super::*;

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

fn tx3g_sample(text: &[u8], modifiers: &[u8]) -> Vec<u8> {
    let mut out = (text.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(text);
    out.extend_from_slice(modifiers);
    out
}

fn cue(text: &str) -> SampleCue {
    SampleCue {
        id: None,
        settings: None,
        text: text.to_owned(),
    }
}

#[test]
fn tx3g_text_is_escaped_and_keeps_its_italics() {
    // A `styl` box making "world" italic, as ffmpeg writes for `<i>world</i>`, and a
    // highlight box, dropped.
    let styl = boxed(
        b"styl",
        &[0, 1, 0, 7, 0, 12, 0, 1, 2, 18, 255, 255, 255, 255],
    );
    let hlit = boxed(b"hlit", &[0, 0, 0, 5]);
    let modifiers = [styl, hlit].concat();
    let sample = tx3g_sample("Hello, world & <you>!\r\nCafé".as_bytes(), &modifiers);
    let cues = parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap();
    assert_eq!(
        cues,
        [cue("Hello, <i>world</i> &amp; &lt;you&gt;!\nCafé")],
        "markup characters are escaped, CRLF becomes LF"
    );
}

/// Style runs count characters (not bytes), may run past the text, combine flags, and
/// are ignored when they overlap an earlier run, are reversed, or are malformed.
#[test]
fn tx3g_style_runs_become_tags_and_bad_ones_are_ignored() {
    let record = |start: u16, end: u16, flags: u8| -> Vec<u8> {
        let mut r = [start.to_be_bytes(), end.to_be_bytes()].concat();
        r.extend_from_slice(&[0, 1, flags, 18, 255, 255, 255, 255]);
        r
    };
    let styl = |records: &[Vec<u8>], count: u16| -> Vec<u8> {
        boxed(
            b"styl",
            &[count.to_be_bytes().to_vec(), records.concat()].concat(),
        )
    };
    let cases: [(Vec<u8>, &str); 6] = [
        (
            styl(&[record(0, 2, 1), record(3, 99, 6)], 2),
            "<b>éa</b> <i><u>bc</u></i>",
        ),
        (styl(&[record(1, 4, 1), record(2, 5, 2)], 2), "é<b>a b</b>c"),
        (styl(&[record(0, 5, 8)], 1), "éa bc"),
        (styl(&[record(0, 5, 1)], 9), "<b>éa bc</b>"),
        (styl(&[record(4, 2, 1)], 1), "éa bc"),
        (vec![0, 0, 0, 99, b's', b't', b'y', b'l'], "éa bc"),
    ];
    for (modifiers, want) in cases {
        let sample = tx3g_sample("éa bc".as_bytes(), &modifiers);
        let cues = parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap();
        assert_eq!(cues, [cue(want)], "{modifiers:?}");
    }
}

#[test]
fn empty_tx3g_samples_are_gaps() {
    for sample in [&[][..], &[0, 0][..], &tx3g_sample(b" \n\n ", &[])[..]] {
        assert_eq!(
            parse_text_sample(TextFormat::Tx3g, 3, sample).unwrap(),
            [],
            "{sample:?}"
        );
    }
}

#[test]
fn tx3g_utf16_with_a_byte_order_mark_is_decoded() {
    let mut text = vec![0xfe, 0xff];
    text.extend("é!".encode_utf16().flat_map(u16::to_be_bytes));
    let sample = tx3g_sample(&text, &[]);
    assert_eq!(
        parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap(),
        [cue("é!")]
    );
}

#[test]
fn a_tx3g_length_past_the_sample_is_an_error_naming_the_track() {
    let err = parse_text_sample(TextFormat::Tx3g, 7, &[0, 9, b'a']).unwrap_err();
    assert!(
        matches!(&err, MediaError::InvalidTable { fourcc, track_id: 7, .. } if fourcc == "tx3g"),
        "{err}"
    );
}

#[test]
fn a_blank_line_or_arrow_cannot_end_a_cue_early() {
    let sample = tx3g_sample(b"one\n\ntwo --> three", &[]);
    assert_eq!(
        parse_text_sample(TextFormat::Tx3g, 3, &sample).unwrap(),
        [cue("one\ntwo --&gt; three")]
    );
}

/// ISO/IEC 14496-30 7.4: `vttc` holds optional `iden`, `sttg` and a `payl`; `vtte`
/// is a sample without cues; `vtta` is a comment.
#[test]
fn wvtt_samples_give_each_cue_with_its_id_and_settings() {
    let first = [
        boxed(b"iden", b"cue-1"),
        boxed(b"sttg", b"line:0 align:start"),
        boxed(b"payl", b"<b>Bold</b> text\nsecond line"),
    ]
    .concat();
    let second = [boxed(b"ctim", b"00:00:01.000"), boxed(b"payl", b"Other\0")].concat();
    let sample = [
        boxed(b"vttc", &first),
        boxed(b"vtta", b"NOTE a comment"),
        boxed(b"vttc", &second),
    ]
    .concat();
    let cues = parse_text_sample(TextFormat::Wvtt, 4, &sample).unwrap();
    assert_eq!(
        cues,
        [
            SampleCue {
                id: Some("cue-1".into()),
                settings: Some("line:0 align:start".into()),
                text: "<b>Bold</b> text\nsecond line".into(),
            },
            cue("Other"),
        ]
    );
    let empty = boxed(b"vtte", &[]);
    assert_eq!(parse_text_sample(TextFormat::Wvtt, 4, &empty).unwrap(), []);
}

#[test]
fn malformed_wvtt_boxes_are_errors_not_panics() {
    let too_long = [0, 0, 0, 200, b'v', b't', b't', b'c', 1, 2];
    let too_short = [0, 0, 0, 4, b'v', b't', b't', b'c'];
    let cut = [0, 0, 0];
    let huge = [
        0, 0, 0, 1, b'v', b't', b't', b'c', 255, 255, 255, 255, 255, 255, 255, 255,
    ];
    let nested = boxed(b"vttc", &[0, 0, 0, 50, b'p', b'a', b'y', b'l']);
    for sample in [&too_long[..], &too_short, &cut, &huge, &nested] {
        assert!(
            matches!(
                parse_text_sample(TextFormat::Wvtt, 4, sample),
                Err(MediaError::InvalidTable { track_id: 4, .. })
            ),
            "{sample:?}"
        );
    }
}
