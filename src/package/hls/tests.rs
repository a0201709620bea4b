//! The CMAF HLS playlists over the synthetic titles of `package::testing`.

use super::attrs::{hls_codec, video_signalling, Attrs};
use super::media::listed_segments;
use super::*;
use crate::media::{TrackIndex, TrackKind};
use crate::package::testing::{hdr_title, text, title, track};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{trick, version_folder, ManifestOptions, Resource};

/// The value of attribute `name` in a tag line.
fn attr<'a>(line: &'a str, name: &str) -> &'a str {
    let rest = &line[line.find(&format!("{name}=")).unwrap() + name.len() + 1..];
    match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"').unwrap()],
        None => rest.split(',').next().unwrap(),
    }
}

#[test]
fn media_playlists_list_every_segment_with_exact_durations() {
    let title = title(|_| true, Vec::new());
    for rendition in &title.renditions {
        let text = render_media_playlist(&title, rendition);
        let lines: Vec<&str> = text.lines().collect();
        let id = rendition.track_id;
        assert_eq!(lines[..2], ["#EXTM3U", "#EXT-X-VERSION:7"]);
        assert!(lines.contains(&"#EXT-X-PLAYLIST-TYPE:VOD"));
        assert!(lines.contains(&format!("#EXT-X-MAP:URI=\"init-t{id}.mp4\"").as_str()));
        assert_eq!(lines.last(), Some(&"#EXT-X-ENDLIST"));
        let mut durations = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some(d) = line.strip_prefix("#EXTINF:") {
                durations.push(d.trim_end_matches(',').parse::<f64>().unwrap());
                assert_eq!(lines[i + 1], format!("seg-t{id}-{}.m4s", durations.len()));
                assert!(Resource::parse(lines[i + 1]).is_some());
            }
        }
        assert_eq!(durations.len(), title.plan.segment_count);
        let max = durations.iter().map(|d| d.round() as u64).max().unwrap();
        assert!(lines.contains(&format!("#EXT-X-TARGETDURATION:{max}").as_str()));
        let track = &title.index.tracks[rendition.track_pos];
        let expected = track.duration_ticks() as f64 / f64::from(track.timescale);
        let sum: f64 = durations.iter().sum();
        assert!((sum - expected).abs() < 0.001, "{sum} vs {expected}");
    }
}

/// Given stated durations (nginx-vod-module's: T, the last what remains), then the
/// playlist lists one segment per duration, named by number from 1, with those durations
/// to the millisecond, a target duration of the largest rounded to nearest, and
/// `EXT-X-MAP` only when a map is given (the TS output has none).
#[test]
fn a_stated_playlist_lists_the_durations_it_is_given() {
    let title = title(|_| true, Vec::new());
    let video = &title.renditions[0];
    let stated = [6000, 6000, 6000, 6000, 6000, 21];
    let options = ManifestOptions::default();
    let segment = |n: u64| format!("seg-{n}-v1-a1.m4s");
    let text = render_stated_media_playlist(
        &title,
        video,
        Some("init-v1-a1.mp4"),
        &stated,
        segment,
        &options,
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"#EXT-X-TARGETDURATION:6"));
    assert!(lines.contains(&"#EXT-X-MAP:URI=\"init-v1-a1.mp4\""));
    let listed: Vec<(&str, &str)> = (lines.windows(2))
        .filter(|w| w[0].starts_with("#EXTINF:"))
        .map(|w| (w[0], w[1]))
        .collect();
    assert_eq!(listed.len(), 6);
    assert_eq!(listed[0], ("#EXTINF:6.000000,", "seg-1-v1-a1.m4s"));
    assert_eq!(listed[5], ("#EXTINF:0.021000,", "seg-6-v1-a1.m4s"));
    assert_eq!(lines.last(), Some(&"#EXT-X-ENDLIST"));
    let ts = render_stated_media_playlist(&title, video, None::<&str>, &stated, |n| n, &options);
    assert!(!ts.contains("#EXT-X-MAP"));
}

/// Given a video, then its I-frame playlist lists each key frame offered as the whole
/// of its one-frame resource, lasting until the next, and only video has one.
#[test]
fn the_iframe_playlist_addresses_each_key_frame_with_a_byte_range() {
    let title = title(|_| true, Vec::new());
    let video = &title.renditions[0];
    let frames = trick::key_frames(&title, video);
    let text = render_iframe_playlist(&title, video);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"#EXT-X-I-FRAMES-ONLY"));
    assert!(lines.contains(&"#EXT-X-MAP:URI=\"init-t1.mp4\""));
    assert_eq!(lines.last(), Some(&"#EXT-X-ENDLIST"));
    let entries: Vec<&[&str]> = (lines.iter().position(|l| l.starts_with("#EXTINF")))
        .map(|first| lines[first..lines.len() - 1].chunks(3).collect())
        .unwrap();
    assert_eq!(entries.len(), frames.len());
    let timescale = title.index.tracks[video.track_pos].timescale as f64;
    for (n, (entry, frame)) in entries.iter().zip(&frames).enumerate() {
        let secs: f64 = entry[0]["#EXTINF:".len()..]
            .trim_end_matches(',')
            .parse()
            .unwrap();
        assert!((secs - frame.duration as f64 / timescale).abs() < 1e-6);
        assert_eq!(entry[1], format!("#EXT-X-BYTERANGE:{}@0", frame.bytes));
        assert_eq!(
            Resource::parse(entry[2]),
            Some(Resource::KeyFrame {
                track_id: 1,
                number: n as u64 + 1
            })
        );
    }
}

#[test]
fn the_multivariant_playlist_offers_video_with_its_audio_group() {
    let title = title(|_| true, Vec::new());
    let text = render_multivariant_playlist(&title);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
    );
    let media = lines[3];
    assert!(media.starts_with("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"eng\""));
    assert!(media.contains("LANGUAGE=\"eng\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\""));
    let (video, audio) = (&title.renditions[0], &title.renditions[1]);
    let inf = lines[4];
    let peak = video.peak_bandwidth + audio.peak_bandwidth;
    assert_eq!(attr(inf, "BANDWIDTH"), peak.to_string());
    let average = video.average_bandwidth + audio.average_bandwidth;
    assert_eq!(attr(inf, "AVERAGE-BANDWIDTH"), average.to_string());
    assert_eq!(attr(inf, "CODECS"), "avc1.64000d,mp4a.40.2");
    assert_eq!(attr(inf, "RESOLUTION"), "320x180");
    assert_eq!(attr(inf, "FRAME-RATE"), "30.000");
    assert_eq!(attr(inf, "AUDIO"), "audio");
    // Media playlists live under the title's version folder.
    let folder = version_folder(&title.version_token());
    assert_eq!(
        (lines[5], lines.len()),
        (format!("{folder}index-t1.m3u8").as_str(), 7)
    );
    // Then the video's I-frame playlist.
    let iframes = lines[6];
    assert!(iframes.starts_with("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH="));
    assert_eq!(attr(iframes, "CODECS"), "avc1.64000d");
    assert_eq!(attr(iframes, "RESOLUTION"), "320x180");
    assert!(!iframes.contains("AUDIO=") && !iframes.contains("FRAME-RATE="));
    assert_eq!(
        attr(iframes, "URI"),
        format!("{folder}iframes-t1.m3u8").as_str()
    );
    for uri in [attr(media, "URI"), lines[5], attr(iframes, "URI")] {
        let name = uri.strip_prefix(folder.as_str()).unwrap_or_default();
        assert!(Resource::parse(name).is_some(), "{uri}");
    }
}

#[test]
fn several_audio_languages_have_one_default_and_unique_names() {
    let mut french = track(3, false);
    french.language = Some("fra".to_owned());
    let more = vec![french, track(4, false)];
    let text = render_multivariant_playlist(&title(|_| true, more));
    let media: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("#EXT-X-MEDIA:"))
        .collect();
    assert_eq!(
        media.iter().filter(|l| l.contains("DEFAULT=YES")).count(),
        1
    );
    let names: Vec<&str> = media.iter().map(|l| attr(l, "NAME")).collect();
    assert_eq!(names, ["eng (track 2)", "fra", "eng (track 4)"]);
}

#[test]
fn single_media_titles_have_no_audio_group() {
    let audio_only = title(|t| t.kind == TrackKind::Audio, Vec::new());
    let text = render_multivariant_playlist(&audio_only);
    let peak = audio_only.renditions[0].peak_bandwidth;
    assert!(text.contains(&format!("INF:BANDWIDTH={peak},")));
    let folder = version_folder(&audio_only.version_token());
    assert!(text.contains(&format!(",CODECS=\"mp4a.40.2\"\n{folder}index-t2.m3u8\n")));
    let video_only = title(|t| t.kind == TrackKind::Video, Vec::new());
    for text in [text, render_multivariant_playlist(&video_only)] {
        assert!(
            !text.contains("AUDIO=") && !text.contains("#EXT-X-MEDIA:"),
            "{text}"
        );
    }
}

#[test]
fn quoted_strings_hold_no_quotes_or_newlines_and_empty_ends_are_cut() {
    let attrs = Attrs::default()
        .quoted("NAME", "a\"b\nc")
        .plain("BANDWIDTH", 5);
    assert_eq!(attrs.0, "NAME=\"a'b c\",BANDWIDTH=5");
    assert_eq!(listed_segments(&[0, 5, 0, 5, 0]), 1..4);
    assert_eq!(listed_segments(&[0, 0]), 0..2);
}

#[test]
fn text_tracks_are_a_subtitles_group_every_variant_references() {
    for keep in [(|_| true) as fn(&TrackIndex) -> bool, |t| {
        t.kind == TrackKind::Audio
    }] {
        let mut title = title(keep, Vec::new());
        title.index.text_tracks = vec![
            text(3, Some("eng")),
            text(4, Some("fra")),
            text(5, Some("fra")),
            text(6, None),
        ];
        let text = render_multivariant_playlist(&title);
        let folder = version_folder(&title.version_token());
        let subs: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=SUBTITLES,"))
            .collect();
        let names: Vec<&str> = subs.iter().map(|l| attr(l, "NAME")).collect();
        assert_eq!(
            names,
            ["eng", "fra (track 4)", "fra (track 5)", "subtitles 4"]
        );
        for (line, id) in subs.iter().zip(3..) {
            assert_eq!(attr(line, "GROUP-ID"), "subs");
            assert_eq!(
                (attr(line, "DEFAULT"), attr(line, "AUTOSELECT")),
                ("NO", "YES")
            );
            let uri = attr(line, "URI").strip_prefix(folder.as_str()).unwrap();
            assert_eq!(
                Resource::parse(uri),
                Some(Resource::MediaPlaylist { track_id: id })
            );
        }
        assert_eq!(attr(subs[0], "LANGUAGE"), "eng");
        assert!(!subs[3].contains("LANGUAGE="));
        let variants: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("#EXT-X-STREAM-INF:"))
            .collect();
        assert!(!variants.is_empty());
        for inf in variants {
            assert_eq!(attr(inf, "SUBTITLES"), "subs", "{inf}");
        }
    }
    // Without text tracks, no group and no reference to one.
    let plain = render_multivariant_playlist(&title(|_| true, Vec::new()));
    assert!(!plain.contains("SUBTITLES"), "{plain}");
}

#[test]
fn subtitle_playlists_list_webvtt_segments_timed_like_the_video() {
    let mut title = title(|_| true, Vec::new());
    title.index.text_tracks = vec![text(3, Some("eng"))];
    let plan = SubtitlePlan::new(&title);
    let subtitles = render_subtitle_playlist(&plan, 3);
    let video = render_media_playlist(&title, &title.renditions[0]);
    let timing = |text: &str| -> Vec<String> {
        (text.lines())
            .filter(|l| l.starts_with("#EXTINF:") || l.starts_with("#EXT-X-TARGETDURATION"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(timing(&subtitles), timing(&video));
    assert!(!subtitles.contains("#EXT-X-MAP"));
    assert!(subtitles.ends_with("#EXT-X-ENDLIST\n"));
    let segments: Vec<Option<Resource>> = (subtitles.lines())
        .filter(|l| !l.starts_with('#'))
        .map(Resource::parse)
        .collect();
    let expected: Vec<Option<Resource>> = (1..=3)
        .map(|number| {
            Some(Resource::SubtitleSegment {
                track_id: 3,
                number,
            })
        })
        .collect();
    assert_eq!(segments, expected);
}

#[test]
fn hdr_variants_name_their_range_and_dolby_vision_layer() {
    let text = render_multivariant_playlist(&hdr_title());
    let inf = text
        .lines()
        .find(|l| l.starts_with("#EXT-X-STREAM-INF:"))
        .unwrap();
    assert_eq!(attr(inf, "CODECS"), "hvc1.2.4.L93.B0,mp4a.40.34");
    assert_eq!(attr(inf, "VIDEO-RANGE"), "PQ");
    assert_eq!(attr(inf, "SUPPLEMENTAL-CODECS"), "dvh1.08.07/db1p");
    // HLG base (8.4); SDR says nothing; a profile 5 stream is PQ whatever its VUI says.
    let mut codec = hdr_title().index.tracks[0].codec.clone();
    codec.color.as_mut().unwrap().transfer = 18;
    codec.dolby_vision.as_mut().unwrap().compatibility_id = 4;
    let attrs = video_signalling(Attrs::default(), Some(&codec)).0;
    assert_eq!(
        attrs,
        "VIDEO-RANGE=HLG,SUPPLEMENTAL-CODECS=\"dvh1.08.07/db4h\""
    );
    codec.dolby_vision = None;
    codec.color.as_mut().unwrap().transfer = 1;
    assert_eq!(video_signalling(Attrs::default(), Some(&codec)).0, "");
    codec.dolby_vision = Some(crate::media::DolbyVision {
        profile: 5,
        level: 6,
        rpu_present: true,
        el_present: false,
        bl_present: true,
        compatibility_id: 0,
        fourcc: *b"dvh1",
    });
    codec.color = None;
    assert_eq!(
        video_signalling(Attrs::default(), Some(&codec)).0,
        "VIDEO-RANGE=PQ"
    );
    // FLAC is written as the FLAC-in-ISOBMFF spec spells it.
    // A Dolby Vision sample entry is its own codec, even with a compatibility id.
    codec.fourcc = *b"dvh1";
    codec.dolby_vision.as_mut().unwrap().compatibility_id = 1;
    assert_eq!(video_signalling(Attrs::default(), Some(&codec)).0, "");
    codec.fourcc = *b"fLaC";
    codec.rfc6381 = "flac".into();
    assert_eq!(hls_codec(&codec), "fLaC");
    // SDR fixtures keep their playlists as they were.
    let sdr = render_multivariant_playlist(&title(|_| true, Vec::new()));
    assert!(
        !sdr.contains("VIDEO-RANGE") && !sdr.contains("SUPPLEMENTAL"),
        "{sdr}"
    );
}
