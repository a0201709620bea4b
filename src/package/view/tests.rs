//! Views: clips and track selections parsed and printed the same, and applied to titles.

use super::*;

#[test]
fn clips_parse_and_print_the_same() {
    for text in ["0-1000", "1500-2500", "1000-"] {
        assert_eq!(Clip::parse(text).unwrap().to_string(), text);
    }
}

#[test]
fn malformed_or_empty_clips_are_refused_with_the_reason() {
    for text in [
        "",
        "1000",
        "a-b",
        "-5",
        "1.5-3",
        "+1-2",
        "1-2-3",
        "99999999999999-",
    ] {
        assert!(
            matches!(Clip::parse(text), Err(ViewError::Malformed { .. })),
            "{text}: {:?}",
            Clip::parse(text)
        );
    }
    assert_eq!(
        Clip::parse("3000-2000"),
        Err(ViewError::EmptyClip {
            from_ms: 3000,
            to_ms: 2000
        })
    );
    assert!(matches!(
        Clip::parse("2000-2000"),
        Err(ViewError::EmptyClip { .. })
    ));
}

#[test]
fn a_clip_of_a_clip_is_a_window_of_the_source() {
    let outer = Clip::new(10_000, Some(20_000)).unwrap();
    let inner = Clip::new(2_000, Some(50_000)).unwrap();
    assert_eq!(
        inner.within(outer).unwrap(),
        Clip::new(12_000, Some(20_000)).unwrap()
    );
    let late = Clip::new(15_000, None).unwrap();
    assert!(matches!(late.within(outer), Err(ViewError::PastEnd { .. })));
}

#[test]
fn track_selections_parse_and_print_the_same() {
    for text in [
        "v1-a2",
        "a1",
        "v-lang=fr",
        "t3-t4",
        "v1-a1-s1",
        "lang=en-lang=fr",
    ] {
        assert_eq!(TrackSelection::parse(text).unwrap().to_string(), text);
    }
    for text in ["", "x1", "v0", "a-", "lang=f", "lang=fr1", "v1a1", "t"] {
        assert!(TrackSelection::parse(text).is_err(), "{text}");
    }
}

#[test]
fn a_selection_keeps_picked_tracks_in_the_listed_languages() {
    let s = TrackSelection::parse("v1-a").unwrap();
    assert!(s.keeps(PickKind::Video, 1, 1, None));
    assert!(!s.keeps(PickKind::Video, 2, 5, None));
    assert!(s.keeps(PickKind::Audio, 2, 3, Some("fr")));
    assert!(!s.keeps(PickKind::Subtitle, 1, 4, Some("fr")));
    let s = TrackSelection::parse("lang=pt").unwrap();
    assert!(s.keeps(PickKind::Video, 1, 1, None));
    assert!(s.keeps(PickKind::Audio, 1, 2, Some("pt-BR")));
    assert!(!s.keeps(PickKind::Audio, 2, 3, Some("en")));
    assert!(!s.keeps(PickKind::Audio, 3, 4, None));
    let s = TrackSelection::parse("lang=fr").unwrap();
    assert!(s.keeps(PickKind::Audio, 2, 3, Some("fra")));
    assert!(!s.keeps(PickKind::Audio, 1, 2, Some("eng")));
    let s = TrackSelection::parse("t2").unwrap();
    assert!(s.keeps(PickKind::Audio, 1, 2, None));
    assert!(!s.keeps(PickKind::Video, 1, 1, None));
}

fn media(start: u64, duration: u64, media_time: u64) -> Edit {
    Edit {
        start_ticks: start,
        duration_ticks: duration,
        media_time_ticks: Some(media_time),
    }
}

/// Given a track delayed by an empty edit of 500 ms, when clipped from 200 ms to
/// 1200 ms (1000 Hz), then it starts 300 ms into the clip, at the media's start, and
/// presents 700 ms of it.
#[test]
fn a_clip_composes_with_the_edit_list() {
    let edits = EditList {
        edits: vec![
            Edit {
                start_ticks: 0,
                duration_ticks: 500,
                media_time_ticks: None,
            },
            media(500, 3000, 40),
        ],
    };
    let clip = Clip::new(200, Some(1200)).unwrap();
    let out = clip_edits(&edits, clip, 1000, 3000).unwrap();
    assert_eq!(
        out.edits,
        vec![
            Edit {
                start_ticks: 0,
                duration_ticks: 300,
                media_time_ticks: None
            },
            media(300, 700, 40)
        ]
    );
    // From inside the media: its media time moves by as much.
    let clip = Clip::new(1000, None).unwrap();
    let out = clip_edits(&edits, clip, 1000, 3000).unwrap();
    assert_eq!(out.edits, vec![media(0, 2500, 540)]);
    // Past the end: nothing presented.
    let clip = Clip::new(3500, None).unwrap();
    assert_eq!(clip_edits(&edits, clip, 1000, 3000), None);
}

/// Without an edit list, a clip is one media edit at the window's start, in the
/// track's own ticks.
#[test]
fn a_clip_of_a_track_without_edits_is_one_media_edit() {
    let clip = Clip::new(1500, Some(2500)).unwrap();
    let out = clip_edits(&EditList::default(), clip, 48_000, 48_000 * 3).unwrap();
    assert_eq!(out.edits, vec![media(0, 48_000, 72_000)]);
}
