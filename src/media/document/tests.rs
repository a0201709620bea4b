//! Title documents: paths resolved beside the document, hostile paths and bad documents
//! refused with what is wrong.

use super::*;

fn key(s: &str) -> ObjectKey {
    ObjectKey::parse(s).unwrap()
}

fn parse(doc: &str) -> Result<TitleDocument, DocumentError> {
    parse_title_document(&key("shows/ep1/title.json"), doc.as_bytes(), 65536, 8)
}

/// Given the issue's example document, then every path lands in the document's folder
/// and every override is kept.
#[test]
fn the_issue_example_resolves_beside_the_document() {
    let doc = parse(
        r#"{"video": [{"file": "t_240p.mp4"}, {"file": "t_360p.mp4"}],
                "audio": [{"file": "t_fr.m4a", "language": "fr", "name": "Français"},
                          {"file": "../shared/t.mp4", "track": 2}],
                "subtitles": [{"file": "t_en.vtt", "language": "en", "default": true},
                              {"file": "./t_de.srt", "language": "de", "forced": false}]}"#,
    )
    .unwrap();
    let keys: Vec<&str> = doc.entries().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "shows/ep1/t_240p.mp4",
            "shows/ep1/t_360p.mp4",
            "shows/ep1/t_fr.m4a",
            "shows/shared/t.mp4",
            "shows/ep1/t_en.vtt",
            "shows/ep1/t_de.srt"
        ]
    );
    assert_eq!(doc.audio[0].name.as_deref(), Some("Français"));
    assert_eq!(doc.audio[1].track, Some(2));
    assert_eq!(doc.audio[1].entry, "audio[1]");
    assert!(doc.subtitles[0].default && !doc.subtitles[1].forced);
}

/// Given paths that climb out of the root or are absolute, then each is refused naming
/// its entry.
#[test]
fn paths_leaving_the_root_are_refused_by_entry() {
    for (file, reason) in [
        ("../../../etc/x.mp4", "leaves the root"),
        ("/etc/x.mp4", "is an absolute path"),
        ("a//b.mp4", "has an empty path segment"),
        ("a\\..\\b.mp4", "has a forbidden character"),
        ("x.json", "does not end in .mp4, .m4v, .m4a, .mov"),
    ] {
        let doc = format!(r#"{{"video": [{{"file": "ok.mp4"}}, {{"file": {file:?}}}]}}"#);
        let err = parse(&doc).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("video[1]: file {file:?} {reason}"),
            "{file}"
        );
    }
    // Up to the root is fine: `shows/ep1` has two levels.
    let doc = parse(r#"{"video": [{"file": "../../top.mp4"}]}"#).unwrap();
    assert_eq!(doc.video[0].key.as_str(), "top.mp4");
}

/// Given broken documents, then each is refused with a one-line reason.
#[test]
fn bad_documents_say_what_is_wrong() {
    let cases = [
        (
            "{",
            "title document is not valid: EOF while parsing an object",
        ),
        (
            r#"{"video": [{"file": "a.mp4"}], "extra": 1}"#,
            "title document is not valid: unknown field `extra`",
        ),
        (r#"{"video": []}"#, "title document has no video rendition"),
        // `video` may be left out since sequences (`parts`) have none at the top.
        (r#"{"audio": []}"#, "title document has no video rendition"),
        (
            r#"{"video": [{"name": "x"}]}"#,
            "title document is not valid: missing field `file`",
        ),
        (
            r#"{"video": [{"file": "a.mp4", "track": 0}]}"#,
            "video[0]: track ids start at 1",
        ),
        (
            r#"{"video": [{"file": "a.mp4"}], "audio": [{"file": "b.m4a", "language": ""}]}"#,
            "audio[0]: language must be 1 to 256 bytes",
        ),
    ];
    for (doc, reason) in cases {
        let err = parse(doc).unwrap_err().to_string();
        assert!(err.starts_with(reason), "{doc}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
    let many = format!(
        r#"{{"video": [{}]}}"#,
        [r#"{"file": "a.mp4"}"#; 9].join(",")
    );
    assert_eq!(
        parse(&many).unwrap_err(),
        DocumentError::TooManyRenditions { count: 9, max: 8 }
    );
    let big = parse_title_document(&key("t.json"), &[b' '; 100], 99, 8).unwrap_err();
    assert_eq!(big, DocumentError::TooLarge { size: 100, max: 99 });
}

/// Given a document saved with a UTF-8 byte order mark, then it parses.
#[test]
fn a_byte_order_mark_is_tolerated() {
    let doc = "\u{feff}{\"video\": [{\"file\": \"a.mp4\"}]}";
    assert_eq!(parse(doc).unwrap().video[0].key.as_str(), "shows/ep1/a.mp4");
}

/// Given a document with a `"drm"` list, then its systems are read in order; an unknown
/// system is a malformed document naming it.
#[test]
fn drm_lists_name_the_titles_systems() {
    use crate::crypto::drm::DrmId;
    let doc = parse(r#"{"video": [{"file": "a.mp4"}], "drm": ["FairPlay", "widevine"]}"#).unwrap();
    assert_eq!(doc.drm, Some(vec![DrmId::FairPlay, DrmId::Widevine]));
    assert_eq!(
        parse(r#"{"video": [{"file": "a.mp4"}]}"#).unwrap().drm,
        None
    );
    let e = parse(r#"{"video": [{"file": "a.mp4"}], "drm": ["marlin"]}"#).unwrap_err();
    assert!(e.to_string().contains("marlin"), "{e}");
}

/// Given `"dash_profile"`, then the document's profile is read; left out, none is; an
/// unknown one is refused naming it.
#[test]
fn a_document_may_choose_its_dash_profile() {
    let doc = parse(r#"{"video": [{"file": "a.mp4"}], "dash_profile": "dvb"}"#).unwrap();
    assert_eq!(doc.dash_profile, Some(DashProfile::Dvb));
    let doc = parse(r#"{"video": [{"file": "a.mp4"}], "dash_profile": "default"}"#).unwrap();
    assert_eq!(doc.dash_profile, Some(DashProfile::Default));
    assert_eq!(
        parse(r#"{"video": [{"file": "a.mp4"}]}"#)
            .unwrap()
            .dash_profile,
        None
    );
    let e = parse(r#"{"video": [{"file": "a.mp4"}], "dash_profile": "hbbtv"}"#).unwrap_err();
    assert!(e.to_string().contains("hbbtv"), "{e}");
}

/// Given audio roles, SDH subtitles and declared captions, then each is read as written
/// (roles once each, caption names defaulted); unknown roles, roles or `sdh` on the wrong
/// kind of entry, and bad or repeated caption channels are refused naming the entry.
#[test]
fn accessibility_fields_are_read_and_checked() {
    let doc = parse(
        r#"{"video": [{"file": "v.mp4"}],
            "audio": [{"file": "ad.m4a", "roles": ["description", "dub", "description"]}],
            "subtitles": [{"file": "en.vtt", "sdh": true}, {"file": "de.vtt"}],
            "closed_captions": [{"channel": "CC1", "language": "en", "name": "English"},
                                {"channel": "SERVICE3", "language": "es"},
                                {"channel": "CC2"}]}"#,
    )
    .unwrap();
    assert_eq!(doc.audio[0].roles, [AudioRole::Description, AudioRole::Dub]);
    assert!(doc.video[0].roles.is_empty());
    assert!(doc.subtitles[0].sdh && !doc.subtitles[1].sdh);
    let captions: Vec<(String, Option<&str>, &str)> = (doc.closed_captions.iter().flatten())
        .map(|c| {
            (
                c.channel.to_string(),
                c.language.as_deref(),
                c.name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        captions,
        [
            ("CC1".to_owned(), Some("en"), "English"),
            ("SERVICE3".to_owned(), Some("es"), "es"),
            ("CC2".to_owned(), None, "CC2"),
        ]
    );
    for (doc, reason) in [
        (
            r#"{"video": [{"file": "v.mp4"}], "audio": [{"file": "a.m4a", "roles": ["narration"]}]}"#,
            "audio[0]: unknown role \"narration\" (known: main, description, commentary, dub)",
        ),
        (
            r#"{"video": [{"file": "v.mp4", "roles": ["main"]}]}"#,
            "video[0]: roles are for audio entries",
        ),
        (
            r#"{"video": [{"file": "v.mp4"}], "audio": [{"file": "a.m4a", "sdh": true}]}"#,
            "audio[0]: sdh is for subtitle entries",
        ),
        (
            r#"{"video": [{"file": "v.mp4"}], "closed_captions": [{"channel": "CC5"}]}"#,
            "closed_captions[0]: channel \"CC5\" is not CC1 to CC4 or SERVICE1 to SERVICE63",
        ),
        (
            r#"{"video": [{"file": "v.mp4"}], "closed_captions": [{"channel": "CC1"}, {"channel": "CC1"}]}"#,
            "closed_captions[1]: channel CC1 is declared twice",
        ),
        (
            r#"{"video": [{"file": "v.mp4"}], "closed_captions": [{"channel": "CC1", "name": ""}]}"#,
            "closed_captions[0]: name must be 1 to 256 bytes",
        ),
        (
            r#"{"video": [{"file": "v.mp4"}], "closed_captions": [{"channel": "CC1", "x": 1}]}"#,
            "title document is not valid: unknown field `x`",
        ),
    ] {
        let err = parse(doc).unwrap_err().to_string();
        assert!(err.starts_with(reason), "{doc}: {err}");
    }
}

/// Given a sequence of a file, a title and an inline ladder, each with or without a clip,
/// then each part resolves beside the document and names its entries within the part.
#[test]
fn a_sequence_resolves_each_part_beside_the_document() {
    let doc = parse(
        r#"{"parts": [{"file": "ident.mp4"},
                      {"title": "../recap.json", "clip": {"from": 1000, "to": 3000}},
                      {"video": [{"file": "ep_240p.mp4"}, {"file": "ep_360p.mp4"}],
                       "audio": [{"file": "ep_fr.m4a", "language": "fr"}],
                       "subtitles": [{"file": "ep_en.vtt", "language": "en"}]}]}"#,
    )
    .unwrap();
    assert!(doc.video.is_empty() && doc.audio.is_empty());
    assert_eq!(doc.parts.len(), 3);
    let PartSource::Inline(ident) = &doc.parts[0].source else {
        panic!("a file part is inline")
    };
    assert_eq!(ident.video[0].key.as_str(), "shows/ep1/ident.mp4");
    assert_eq!(ident.video[0].entry, "parts[0].file[0]");
    assert_eq!(doc.parts[0].label(), "parts[0] (shows/ep1/ident.mp4)");
    assert_eq!(
        doc.parts[1].source,
        PartSource::Title(key("shows/recap.json"))
    );
    assert_eq!(
        doc.parts[1].clip,
        Some(DocumentClip {
            from: 1000,
            to: Some(3000)
        })
    );
    let PartSource::Inline(episode) = &doc.parts[2].source else {
        panic!("an inline part")
    };
    assert_eq!(episode.video.len(), 2);
    assert_eq!(episode.audio[0].entry, "parts[2].audio[0]");
    assert_eq!(episode.subtitles[0].key.as_str(), "shows/ep1/ep_en.vtt");
}

/// Given sequences that cannot be played, then each is refused with one line naming
/// what is wrong.
#[test]
fn bad_sequences_are_refused_naming_the_part() {
    for (doc, message) in [
        (
            r#"{"parts": [{"file": "a.mp4"}], "video": [{"file": "b.mp4"}]}"#,
            "parts: a sequence has no top-level video, audio or subtitles (each part names its own)",
        ),
        (r#"{"parts": []}"#, "parts: a sequence needs at least one part"),
        (
            r#"{"parts": [{"file": "a.mp4"}, {}]}"#,
            "parts[1]: names nothing: give \"file\", \"title\" or \"video\" (with \"audio\", \"subtitles\")",
        ),
        (
            r#"{"parts": [{"file": "a.mp4", "title": "b.json"}]}"#,
            "parts[0]: names more than one of \"file\", \"title\" and an inline \"video\" list",
        ),
        (
            r#"{"parts": [{"title": "b.mp4"}]}"#,
            "parts[0].title: file \"b.mp4\" does not end in .json",
        ),
        (
            r#"{"parts": [{"title": "../../../b.json"}]}"#,
            "parts[0].title: file \"../../../b.json\" leaves the root",
        ),
        (
            r#"{"parts": [{"audio": [{"file": "a.m4a"}]}]}"#,
            "parts[0]: an inline part needs at least one video entry",
        ),
        (
            r#"{"parts": [{"file": "a.mp4"}], "clip": {"from": 0}}"#,
            "clip: a sequence clips its parts: put \"clip\" in a part",
        ),
        (
            r#"{"parts": [{"file": "a.mp4", "breaks": []}]}"#,
            "title document is not valid: unknown field `breaks`",
        ),
    ] {
        let err = parse(doc).unwrap_err().to_string();
        assert!(err.starts_with(message), "{doc}: {err}");
    }
    let many = format!(
        r#"{{"parts": [{}]}}"#,
        [r#"{"file": "a.mp4"}"#; 9].join(",")
    );
    assert_eq!(
        parse(&many).unwrap_err(),
        DocumentError::TooManyRenditions { count: 9, max: 8 }
    );
}
