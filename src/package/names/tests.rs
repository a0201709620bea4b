//! Resource names: made and parsed back the same, in every form a manifest writes.

use super::*;

#[test]
fn every_name_round_trips() {
    for r in [
        Resource::Multivariant,
        Resource::MultivariantTs,
        Resource::Mpd,
        Resource::MediaPlaylist { track_id: 1 },
        Resource::Init { track_id: 20 },
        Resource::Segment {
            track_id: 3,
            number: 600,
        },
        Resource::SubtitleSegment {
            track_id: 4,
            number: 12,
        },
        Resource::SubtitleFile { track_id: 4 },
        Resource::IframePlaylist { track_id: 1 },
        Resource::KeyFrame {
            track_id: 1,
            number: 90,
        },
        Resource::KeyFrame {
            track_id: document_track_id(3, 1).unwrap(),
            number: 2,
        },
        Resource::TsMediaPlaylist { track_id: 1 },
        Resource::TsSegment {
            track_id: 1,
            number: 600,
        },
        Resource::TsSubtitleSegment {
            track_id: 4,
            number: 2,
        },
        Resource::TsIframePlaylist { track_id: 1 },
    ] {
        assert_eq!(Resource::parse(&r.to_string()), Some(r));
    }
}

/// Given the TS output's names, then they read as written, for document renditions
/// too, and near misses are not resources.
#[test]
fn ts_names_round_trip_and_near_misses_do_not() {
    let id = document_track_id(2, 1).unwrap();
    let named = [
        (
            Resource::TsMediaPlaylist { track_id: 1 },
            "index-ts-t1.m3u8",
        ),
        (
            Resource::TsSegment {
                track_id: id,
                number: 7,
            },
            "seg-ts-f2-t1-7.ts",
        ),
        (
            Resource::TsSubtitleSegment {
                track_id: 3,
                number: 1,
            },
            "sub-ts-t3-1.vtt",
        ),
        (
            Resource::TsIframePlaylist { track_id: id },
            "iframes-ts-f2-t1.m3u8",
        ),
    ];
    for (resource, name) in named {
        assert_eq!(resource.to_string(), name);
        assert_eq!(Resource::parse(name), Some(resource));
    }
    for odd in [
        "seg-ts-t1-0.ts",
        "seg-ts-t1.ts",
        "seg-ts-t1-1.m4s",
        "index-ts-t1-1.m3u8",
        "index-ts-t1.ts",
        "sub-ts-t1.vtt",
        "iframes-ts-t1-2.m3u8",
        "init-ts-t1.mp4",
        "seg-ts-t01-1.ts",
        "seg-ts-t1-1.ts.ts",
    ] {
        assert_eq!(Resource::parse(odd), None, "{odd}");
    }
}

/// Given renditions of a title document, then their names say which file they come
/// from, round-trip, and never collide with a plain MP4's names.
#[test]
fn document_names_say_which_file_and_round_trip() {
    let id = document_track_id(2, 1).unwrap();
    assert_eq!(split_document_track_id(id), Some((2, 1)));
    assert_eq!(split_document_track_id(1), None);
    let named = [
        (Resource::MediaPlaylist { track_id: id }, "index-f2-t1.m3u8"),
        (Resource::Init { track_id: id }, "init-f2-t1.mp4"),
        (
            Resource::Segment {
                track_id: id,
                number: 7,
            },
            "seg-f2-t1-7.m4s",
        ),
        (
            Resource::SubtitleSegment {
                track_id: id,
                number: 3,
            },
            "sub-f2-t1-3.vtt",
        ),
        (Resource::SubtitleFile { track_id: id }, "sub-f2-t1.vtt"),
        // A sidecar subtitle file goes by track 0, which no MP4 track has.
        (
            Resource::SubtitleSegment {
                track_id: document_track_id(5, 0).unwrap(),
                number: 1,
            },
            "sub-f5-t0-1.vtt",
        ),
    ];
    for (resource, name) in named {
        assert_eq!(resource.to_string(), name);
        assert_eq!(Resource::parse(name), Some(resource));
    }
    assert_eq!(Resource::dash_representation_id(id), "f2-t1");
    assert_eq!(document_track_id(0, 1), None);
    assert_eq!(document_track_id(1, 1 << 20), None);
    // The packed id spelled as a plain one is not a second name for it.
    assert_eq!(Resource::parse(&format!("index-t{id}.m3u8")), None);
    for odd in [
        "index-f0-t1.m3u8",
        "index-f02-t1.m3u8",
        "index-f2t1.m3u8",
        "index-f2-t.m3u8",
        "seg-f2-t1.m4s",
        "sub-f2-t1-0.vtt",
    ] {
        assert_eq!(Resource::parse(odd), None, "{odd}");
    }
}

#[test]
fn dash_templates_expand_to_our_names() {
    let id = Resource::dash_representation_id(2);
    let init = Resource::DASH_INIT_TEMPLATE.replace("$RepresentationID$", &id);
    let media = Resource::DASH_MEDIA_TEMPLATE
        .replace("$RepresentationID$", &id)
        .replace("$Number$", "7");
    assert_eq!(Resource::parse(&init), Some(Resource::Init { track_id: 2 }));
    assert_eq!(
        Resource::parse(&media),
        Some(Resource::Segment {
            track_id: 2,
            number: 7
        })
    );
    let trick = Resource::dash_trick_media_template(2).replace("$Number$", "7");
    assert_eq!(
        Resource::parse(&trick),
        Some(Resource::KeyFrame {
            track_id: 2,
            number: 7
        })
    );
    assert_ne!(Resource::dash_trick_representation_id(2), id);
}

#[test]
fn version_folders_round_trip() {
    let token = VersionToken::parse("0123456789abcdef").unwrap();
    let folder = version_folder(&token);
    assert_eq!(folder, "v0123456789abcdef/");
    assert_eq!(
        parse_version_folder(folder.trim_end_matches('/')),
        Some(token)
    );
    assert_eq!(
        VersionToken::of_hash(0xf830_3217_d362_30f6),
        "f8303217d36230f6"
    );
    for odd in [
        "v0123",
        "V0123456789abcdef",
        "v0123456789ABCDEF",
        "x0123456789abcdef",
    ] {
        assert_eq!(parse_version_folder(odd), None, "{odd}");
    }
}

#[test]
fn odd_spellings_are_not_resources() {
    for name in [
        "seg-t1-0.m4s",
        "seg-t1-01.m4s",
        "seg-t1-99999999999999999999.m4s",
        "seg-t-1.m4s",
        "seg-t1-+1.m4s",
        "sub-t4-0.vtt",
        "sub-t4-01.vtt",
        "ifr-t1-0.m4s",
        "ifr-t1.m4s",
        "iframes-t1-1.m3u8",
        "sub-t-4.vtt",
        "sub-t4-1-2.vtt",
        "sub-t4.m4s",
        "index-t1.m3u",
        "init-t1",
        "MASTER.m3u8",
        "",
    ] {
        assert_eq!(Resource::parse(name), None, "{name}");
    }
}

/// Given the names of a sequence's parts, then they read as written, say which
/// part, and leave every name without a part as it was; near misses are not resources.
#[test]
fn part_names_round_trip_and_near_misses_do_not() {
    let id = document_track_id(3, 1).unwrap();
    let parts = [
        (
            Resource::PartInit {
                part: 2,
                track_id: id,
            },
            "init-p2-f3-t1.mp4",
        ),
        (
            Resource::PartSegment {
                part: 1,
                track_id: id,
                number: 7,
            },
            "seg-p1-f3-t1-7.m4s",
        ),
        (
            Resource::PartSubtitleSegment {
                part: 12,
                track_id: document_track_id(5, 0).unwrap(),
                number: 3,
            },
            "sub-p12-f5-t0-3.vtt",
        ),
        (
            Resource::PartSubtitleFile {
                part: 2,
                track_id: 4,
            },
            "sub-p2-t4.vtt",
        ),
    ];
    for (resource, name) in parts {
        assert_eq!(resource.to_string(), name);
        assert_eq!(Resource::parse(name), Some(resource));
        assert!(resource.part().is_some());
    }
    assert_eq!(
        Resource::Init { track_id: id }.to_string(),
        "init-f3-t1.mp4"
    );
    assert_eq!(Resource::Init { track_id: id }.part(), None);
    for miss in [
        "init-p0-f3-t1.mp4",
        "init-p02-f3-t1.mp4",
        "init-p2-f3-t1.m4s",
        "seg-p2-f3-t1.m4s",
        "init-p2-f3-t1-1.mp4",
        "seg-p2-f3-t1-0.m4s",
        "index-p2-f3-t1.m3u8",
        "init-p-f3-t1.mp4",
    ] {
        assert_eq!(Resource::parse(miss), None, "{miss}");
    }
}

/// Given the DASH text segment names of both codings, alone and in a sequence's part, then
/// each reads back as written, the templates expand to them, and near misses are not
/// resources.
#[test]
fn text_segment_names_round_trip_and_near_misses_do_not() {
    let id = document_track_id(4, 0).unwrap();
    let names = [
        (
            Resource::TextInit {
                track_id: 3,
                coding: TextCoding::Wvtt,
            },
            "sub-t3-init.mp4",
        ),
        (
            Resource::TextSegment {
                track_id: id,
                coding: TextCoding::Imsc1,
                number: 12,
            },
            "ttml-f4-t0-12.m4s",
        ),
        (
            Resource::PartTextInit {
                part: 2,
                track_id: id,
                coding: TextCoding::Imsc1,
            },
            "ttml-p2-f4-t0-init.mp4",
        ),
        (
            Resource::PartTextSegment {
                part: 3,
                track_id: 5,
                coding: TextCoding::Wvtt,
                number: 1,
            },
            "sub-p3-t5-1.m4s",
        ),
    ];
    for (resource, name) in names {
        assert_eq!(resource.to_string(), name);
        assert_eq!(Resource::parse(name), Some(resource), "{name}");
        assert_eq!(resource.kind(), ResourceKind::Subtitle);
    }
    for (coding, part) in [
        (TextCoding::Wvtt, None),
        (TextCoding::Imsc1, None),
        (TextCoding::Wvtt, Some(2)),
        (TextCoding::Imsc1, Some(7)),
    ] {
        let rep = Resource::dash_representation_id(id);
        let init =
            Resource::dash_text_init_template(coding, part).replace("$RepresentationID$", &rep);
        let media = Resource::dash_text_media_template(coding, part)
            .replace("$RepresentationID$", &rep)
            .replace("$Number$", "9");
        let (init, media) = (Resource::parse(&init), Resource::parse(&media));
        assert_eq!(init.and_then(|r| r.part()), part);
        assert_eq!(media.and_then(|r| r.number()), Some(9));
        assert!(matches!(
            init,
            Some(Resource::TextInit { .. } | Resource::PartTextInit { .. })
        ));
    }
    for miss in [
        "sub-t3-init.m4s",
        "sub-t3-0.m4s",
        "sub-t3-01.m4s",
        "sub-t3.m4s",
        "ttml-t3-1.mp4",
        "ttml-t3-1.vtt",
        "ttml-t3.vtt",
        "sub-t3-init-1.m4s",
        "sub-p2-t3-init.m4s",
        "ttml-p0-t3-1.m4s",
        "vtt-t3-1.m4s",
    ] {
        assert_eq!(Resource::parse(miss), None, "{miss}");
    }
}
