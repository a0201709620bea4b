//! Manifest filters over a synthetic title: the query's values and their bounds, which
//! renditions each filter leaves out, and the manifests that leave them out without
//! renaming or renumbering what stays.

use super::*;
use crate::media::{AudioRole, CaptionChannel, ClosedCaption};
use crate::package::testing::{text, title, track};
use crate::package::{render_mpd_with, render_multivariant_playlist_with, ManifestOptions};

/// Video 1 (320x180 avc1), video 3 (1280x720 hvc1), audio 2 (eng), audio 4 (fra,
/// description), text 5 (eng) and text 6 (deu).
fn ladder() -> Title {
    let mut hevc = track(3, true);
    hevc.codec.rfc6381 = "hvc1.1.6.L93.B0".into();
    hevc.codec.height = 720;
    hevc.codec.width = 1280;
    hevc.samples.sizes.iter_mut().for_each(|s| *s *= 3);
    let mut french = track(4, false);
    french.language = Some("fra".into());
    let mut title = title(|_| true, vec![hevc, french]);
    title.index.text_tracks = vec![text(5, Some("eng")), text(6, Some("deu"))];
    for rendition in &mut title.renditions {
        if rendition.track_id == 4 {
            rendition.roles = vec![AudioRole::Description];
        }
    }
    title
}

fn parse(query: &str) -> Result<Option<ManifestFilter>, FilterError> {
    ManifestFilter::from_query(Some(query))
}

fn left_out(query: &str) -> Result<Vec<u32>, FilterError> {
    parse(query)?.expect("a filter").left_out(&ladder())
}

#[test]
fn filter_values_are_parsed_and_bounded() {
    assert_eq!(parse("token=abc&x=1"), Ok(None));
    assert_eq!(ManifestFilter::from_query(None), Ok(None));
    let f = parse("max_height=720&video_codecs=AVC1,hvc1&audio_languages=fr%2Cpt-BR&token=t")
        .unwrap()
        .unwrap();
    assert_eq!(f.max_height, Some(720));
    assert_eq!(f.video_codecs, ["avc1", "hvc1"]);
    assert_eq!(f.audio_languages, ["fr", "pt"]);
    for (query, message) in [
        ("max_height=", "max_height: is empty"),
        ("max_height", "max_height: is empty"),
        (
            "max_height=abc",
            "max_height: must be pixels, a whole number from 1 to 16384",
        ),
        ("max_height=0", "max_height: must be pixels"),
        ("max_height=-5", "max_height: must be pixels"),
        ("max_height=99999", "max_height: must be pixels"),
        (
            "max_bandwidth=1e6",
            "max_bandwidth: must be bits per second",
        ),
        (
            "max_bandwidth=99999999999999999999999",
            "max_bandwidth: must be bits per second",
        ),
        (
            "video_codecs=avc1,,hvc1",
            "video_codecs: \"\" is not an item",
        ),
        ("video_codecs=av<1", "video_codecs: \"av<1\" is not an item"),
        (
            "audio_languages=e",
            "audio_languages: a language code starts with 2 to 8 letters",
        ),
        ("subtitle_languages=%FF", "subtitle_languages: is not UTF-8"),
        (
            "max_height=1&max_height=2",
            "max_height: given more than once",
        ),
    ] {
        let e = parse(query).unwrap_err();
        assert!(e.is_malformed(), "{query}");
        assert!(e.to_string().starts_with(message), "{query}: {e}");
        assert!(!e.to_string().contains('\n'));
    }
    let many = format!("audio_languages={}", ["en"; 33].join(","));
    assert!(parse(&many)
        .unwrap_err()
        .to_string()
        .contains("more than 32"));
}

#[test]
fn each_filter_leaves_out_exactly_what_does_not_match() {
    assert_eq!(left_out("max_height=180"), Ok(vec![3]));
    assert_eq!(left_out("max_height=720"), Ok(vec![]));
    assert_eq!(left_out("video_codecs=hvc1"), Ok(vec![1]));
    assert_eq!(
        left_out("video_codecs=hev1"),
        Ok(vec![1]),
        "hev1 is hvc1's twin"
    );
    assert_eq!(left_out("video_codecs=avc1.64"), Ok(vec![3]));
    assert_eq!(left_out("video_codecs=avc1,hvc1"), Ok(vec![]));
    assert_eq!(left_out("audio_languages=fr"), Ok(vec![2]));
    assert_eq!(left_out("audio_languages=en,fra"), Ok(vec![]));
    assert_eq!(left_out("subtitle_languages=de"), Ok(vec![5]));
    assert_eq!(left_out("subtitle_languages=ja"), Ok(vec![5, 6]));
    // Bandwidth counts the largest audio left in, as the variant's BANDWIDTH does.
    let title = ladder();
    let peak = |id: u32| title.rendition(id).unwrap().peak_bandwidth;
    let low = peak(1) + peak(2).max(peak(4));
    assert_eq!(left_out(&format!("max_bandwidth={low}")), Ok(vec![3]));
    let nothing = Err(FilterError::NothingLeft { what: "video" });
    assert_eq!(left_out(&format!("max_bandwidth={}", low - 1)), nothing);
    assert_eq!(left_out("video_codecs=vp09"), nothing);
    assert_eq!(left_out("max_height=100"), nothing);
    assert_eq!(
        left_out("audio_languages=ja"),
        Err(FilterError::NothingLeft { what: "audio" })
    );
    assert!(!FilterError::NothingLeft { what: "audio" }.is_malformed());
}

/// The URIs of a playlist: its URI lines and `URI="..."` attributes.
fn uris(playlist: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in playlist.lines() {
        if !line.starts_with('#') {
            out.push(line.to_owned());
        }
        for rest in line.split("URI=\"").skip(1) {
            out.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    out
}

/// Given a filter, then the multivariant playlist and the MPD lose exactly the lines and
/// elements of what it leaves out, and every other line is the unfiltered one's.
#[test]
fn filtered_manifests_only_drop_lines() {
    let mut title = ladder();
    title.closed_captions = vec![ClosedCaption {
        channel: CaptionChannel::Cea608(1),
        language: Some("en".into()),
        name: "English".into(),
    }];
    let all = ManifestOptions::default();
    let options = ManifestOptions {
        filtered: vec![2, 3, 6],
        ..ManifestOptions::default()
    };
    let full = render_multivariant_playlist_with(&title, &all);
    let filtered = render_multivariant_playlist_with(&title, &options);
    let full_uris = uris(&full);
    assert!(
        uris(&filtered).iter().all(|u| full_uris.contains(u)),
        "{filtered}"
    );
    for gone in [
        "index-t3.m3u8",
        "iframes-t3.m3u8",
        "index-t2.m3u8",
        "index-t6.m3u8",
    ] {
        assert!(
            full.contains(gone) && !filtered.contains(gone),
            "{gone}: {filtered}"
        );
    }
    for kept in [
        "index-t1.m3u8",
        "iframes-t1.m3u8",
        "index-t4.m3u8",
        "index-t5.m3u8",
    ] {
        assert!(filtered.contains(kept), "{kept}: {filtered}");
    }
    // The audio left becomes the default; its NAME and CHARACTERISTICS stay.
    let french = filtered
        .lines()
        .find(|l| l.contains("index-t4.m3u8"))
        .unwrap();
    assert!(french.contains("DEFAULT=YES"), "{french}");
    assert!(french.contains(r#"CHARACTERISTICS="public.accessibility.describes-video""#));
    assert!(filtered.contains("CLOSED-CAPTIONS=\"cc\""), "{filtered}");

    let full = render_mpd_with(&title, &all);
    let mpd = render_mpd_with(&title, &options);
    assert!(
        !mpd.contains("id=\"t3\"") && full.contains("id=\"t3\""),
        "{mpd}"
    );
    assert!(!mpd.contains("id=\"ifr-t3\"") && full.contains("id=\"ifr-t3\""));
    assert!(!mpd.contains("id=\"t2\"") && !mpd.contains("id=\"t6\""));
    // Every AdaptationSet left keeps its unfiltered id and start tag; with one set per
    // rendition (a plain file), t2, t3, t6 and t3's trick-play set go.
    let sets = |m: &str| -> Vec<String> {
        (m.lines())
            .filter(|l| l.contains("<AdaptationSet"))
            .map(str::to_owned)
            .collect()
    };
    let full_sets = sets(&full);
    assert!(sets(&mpd).iter().all(|s| full_sets.contains(s)), "{mpd}");
    assert_eq!(sets(&mpd).len() + 4, full_sets.len(), "{mpd}");
}

/// Given a title whose default audio describes the video, then HLS makes the first other
/// audio the default, and with no other audio left keeps the described one.
#[test]
fn audio_description_is_never_the_default_while_another_is_offered() {
    let mut title = ladder();
    for rendition in &mut title.renditions {
        rendition.roles = match rendition.track_id {
            2 => vec![AudioRole::Description],
            _ => Vec::new(),
        };
    }
    let default_of = |options: &ManifestOptions| -> Vec<String> {
        let master = render_multivariant_playlist_with(&title, options);
        (master.lines())
            .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=AUDIO") && l.contains("DEFAULT=YES"))
            .map(|l| l[l.find("URI=").unwrap()..].to_owned())
            .collect()
    };
    assert_eq!(
        default_of(&ManifestOptions::default()),
        ["URI=\"v0000000000000000/index-t4.m3u8\""]
            .map(String::from)
            .map(|s| s.replace(
                "v0000000000000000/",
                &crate::package::version_folder(&title.version_token())
            ))
    );
    let only_described = ManifestOptions {
        filtered: vec![4],
        ..ManifestOptions::default()
    };
    assert_eq!(default_of(&only_described).len(), 1);
    assert!(default_of(&only_described)[0].contains("index-t2.m3u8"));
}
