//! The MPD over the synthetic titles of `package::testing`.

use super::*;
use crate::package::testing::{hdr_title, text, title};
use crate::package::{trick, version_folder, DashSubtitleFormat};
use tag::escape;

/// 10 s of 30 fps video and 10 s of English audio, in 4 s segments.
fn av_title() -> Title {
    title(|_| true, Vec::new())
}

/// The value of `name="..."` in `text`.
fn attr<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let rest = &text[text.find(&format!(" {name}=\""))? + name.len() + 3..];
    Some(&rest[..rest.find('"')?])
}

/// Each Representation's text, from its attributes to its end tag, but for
/// trick-play ones.
fn representations(mpd: &str) -> Vec<&str> {
    all_representations(mpd)
        .into_iter()
        .filter(|r| !is_trick(r))
        .collect()
}

fn all_representations(mpd: &str) -> Vec<&str> {
    let reps = mpd.split("<Representation").skip(1);
    reps.map(|r| &r[..r.find("</Representation>").unwrap()])
        .collect()
}

fn is_trick(rep: &str) -> bool {
    attr(rep, "id").is_some_and(|id| id.starts_with("ifr-"))
}

/// Given a video with key frames, then the MPD offers them as a trick-play set of the
/// video set: an essential property naming it, one Representation per video, its
/// timeline the key frames' and its segments our key-frame resources.
#[test]
fn video_sets_have_a_trick_play_set_of_their_key_frames() {
    let title = av_title();
    let mpd = render_mpd(&title);
    let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
    assert_eq!(sets.len(), 3, "video, audio, then trick play");
    assert_eq!(attr(sets[0], "id"), Some("0"));
    let trick = sets[2];
    assert_eq!(attr(trick, "id"), Some("2"));
    assert!(trick.contains(
        "<EssentialProperty schemeIdUri=\"http://dashif.org/guidelines/trickmode\" value=\"0\"/>"
    ));
    let reps = all_representations(trick);
    assert_eq!(reps.len(), 1);
    let rep = reps[0];
    assert_eq!(attr(rep, "id"), Some("ifr-t1"));
    assert_eq!(attr(rep, "codingDependency"), Some("false"));
    assert_eq!(attr(rep, "codecs"), Some("avc1.64000d"));
    let video = &title.renditions[0];
    let frames = trick::key_frames(&title, video);
    let timeline = rep.split("<SegmentTimeline>").nth(1).unwrap();
    let (mut count, mut t) = (0usize, 0u64);
    for s in timeline.split("<S").skip(1) {
        t = attr(s, "t").map_or(t, |t| t.parse().unwrap());
        let d: u64 = attr(s, "d").unwrap().parse().unwrap();
        let r: u64 = attr(s, "r").map_or(0, |r| r.parse().unwrap());
        for _ in 0..=r {
            assert_eq!((t, d), (frames[count].pts, frames[count].duration));
            (count, t) = (count + 1, t + d);
        }
    }
    assert_eq!(count, frames.len());
    let folder = version_folder(&title.version_token());
    let media = attr(rep, "media").unwrap().strip_prefix(folder.as_str());
    let first = media.unwrap().replace("$Number$", "1");
    assert_eq!(
        Resource::parse(&first),
        Some(Resource::KeyFrame {
            track_id: 1,
            number: 1
        })
    );
    let init = attr(rep, "initialization").unwrap();
    assert_eq!(init, format!("{folder}init-t1.mp4"));
}

#[test]
fn timelines_cover_every_segment_and_the_whole_track() {
    let title = av_title();
    let mpd = render_mpd(&title);
    assert!(mpd.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MPD xmlns="));
    let duration = format!("PT{:.3}S", title.period_duration_secs());
    assert_eq!(
        attr(&mpd, "mediaPresentationDuration"),
        Some(duration.as_str())
    );
    let reps = representations(&mpd);
    assert_eq!(reps.len(), 2);
    for (rep, rendition) in reps.iter().zip(&title.renditions) {
        let track = &title.index.tracks[rendition.track_pos];
        assert_eq!(
            attr(rep, "timescale"),
            Some(track.timescale.to_string().as_str())
        );
        let timeline = rep.split("<SegmentTimeline>").nth(1).unwrap();
        let timeline = &timeline[..timeline.find("</SegmentTimeline>").unwrap()];
        let (mut count, mut total) = (0, 0);
        for s in timeline.split("<S").skip(1) {
            let d: u64 = attr(s, "d").unwrap().parse().unwrap();
            let r: u64 = attr(s, "r").map_or(0, |r| r.parse().unwrap());
            (count, total) = (count + r + 1, total + d * (r + 1));
        }
        assert_eq!(attr(timeline, "t"), Some("0"));
        assert_eq!(count as usize, title.plan.segment_count);
        assert_eq!(total, track.duration_ticks());
    }
    // Video: 4 s, 4 s, 2 s merge into two S elements.
    assert!(reps[0].contains("<S t=\"0\" d=\"61440\" r=\"1\"/><S d=\"30720\"/>"));
}

#[test]
fn sets_describe_their_media() {
    let mpd = render_mpd(&av_title());
    let reps = representations(&mpd);
    assert_eq!(attr(reps[0], "codecs"), Some("avc1.64000d"));
    assert_eq!(attr(reps[0], "frameRate"), Some("30"));
    assert_eq!(attr(reps[0], "sar"), Some("1:1"));
    assert_eq!(attr(reps[1], "audioSamplingRate"), Some("48000"));
    assert!(reps[1].contains("audio_channel_configuration:2011\" value=\"2\"/>"));
    let audio_set = mpd.split("<AdaptationSet").nth(2).unwrap();
    assert_eq!(attr(audio_set, "lang"), Some("eng"));
    assert_eq!(mpd.matches("<Role ").count(), 1);
    assert!(audio_set.contains("<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"main\"/>"));
}

#[test]
fn every_url_is_one_of_our_resources() {
    let title = av_title();
    let mpd = render_mpd(&title);
    let folder = version_folder(&title.version_token());
    for rep in representations(&mpd) {
        let id = attr(rep, "id").unwrap();
        let start: usize = attr(rep, "startNumber").unwrap().parse().unwrap();
        let init = attr(rep, "initialization")
            .unwrap()
            .strip_prefix(folder.as_str())
            .unwrap()
            .replace("$RepresentationID$", id);
        assert!(
            matches!(Resource::parse(&init), Some(Resource::Init { .. })),
            "{init}"
        );
        let media = attr(rep, "media")
            .unwrap()
            .strip_prefix(folder.as_str())
            .unwrap()
            .replace("$RepresentationID$", id);
        for number in start..start + title.plan.segment_count {
            let name = media.replace("$Number$", &number.to_string());
            assert!(
                matches!(Resource::parse(&name), Some(Resource::Segment { .. })),
                "{name}"
            );
        }
    }
}

#[test]
fn helpers_merge_timelines_write_frame_rates_and_escape() {
    let spans = [(10, 5), (15, 5), (20, 4), (30, 4), (34, 4)];
    let expected = [(Some(10), 5, 1), (None, 4, 0), (Some(30), 4, 1)];
    assert_eq!(timeline(&spans), expected);
    let rates = [30.0, 30_000.0 / 1001.0, 23.976, 12.5].map(|r| frame_rate(r).unwrap());
    assert_eq!(rates, ["30", "30000/1001", "24000/1001", "25/2"]);
    assert_eq!(frame_rate(f64::NAN), None);
    assert_eq!(escape("a&b<c>\"d"), "a&amp;b&lt;c&gt;&quot;d");
}

/// Given `webvtt-file`, then text tracks are sideloaded WebVTT files with their language.
#[test]
fn text_tracks_are_sideloaded_webvtt_sets_with_their_language() {
    let mut title = av_title();
    title.index.text_tracks = vec![text(3, Some("eng")), text(4, None)];
    let options = ManifestOptions {
        dash_subtitles: DashSubtitleFormat::WebvttFile,
        ..ManifestOptions::default()
    };
    let mpd = render_mpd_with(&title, &options);
    let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
    assert_eq!(sets.len(), 5, "video, audio, two texts, trick play");
    let folder = version_folder(&title.version_token());
    for (set, (id, lang)) in sets[2..4].iter().zip([(3, Some("eng")), (4, None)]) {
        assert_eq!(attr(set, "contentType"), Some("text"));
        assert_eq!(attr(set, "mimeType"), Some("text/vtt"));
        assert_eq!(attr(set, "codecs"), Some("wvtt"));
        assert_eq!(attr(set, "lang"), lang);
        assert!(set.contains("<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"subtitle\"/>"));
        assert!(!set.contains("SegmentTemplate"));
        // 100 bytes over 10 s.
        assert_eq!(attr(set, "bandwidth"), Some("80"));
        let url = &set[set.find("<BaseURL>").unwrap() + 9..set.find("</BaseURL>").unwrap()];
        let name = url.strip_prefix(folder.as_str()).unwrap();
        assert_eq!(
            Resource::parse(name),
            Some(Resource::SubtitleFile { track_id: id })
        );
    }
    // Set ids stay unique.
    let ids: Vec<Option<&str>> = sets.iter().map(|s| attr(s, "id")).collect();
    assert_eq!(ids, [Some("0"), Some("1"), Some("2"), Some("3"), Some("4")]);
}

#[test]
fn hdr_video_carries_cicp_descriptors_and_its_dolby_vision_layer() {
    let mpd = render_mpd(&hdr_title());
    assert!(mpd.contains(" xmlns:scte214=\"urn:scte:dash:scte214-extensions\" "));
    let video_set = mpd.split("<AdaptationSet").nth(1).unwrap();
    let video_set = &video_set[..video_set.find("<Representation").unwrap()];
    for (scheme, value) in [
        ("ColourPrimaries", 9),
        ("TransferCharacteristics", 16),
        ("MatrixCoefficients", 9),
    ] {
        let descriptor = format!(
            "<SupplementalProperty schemeIdUri=\"urn:mpeg:mpegB:cicp:{scheme}\" value=\"{value}\"/>"
        );
        assert!(video_set.contains(&descriptor), "{video_set}");
    }
    let reps = representations(&mpd);
    assert_eq!(attr(reps[0], "codecs"), Some("hvc1.2.4.L93.B0"));
    assert_eq!(
        attr(reps[0], "scte214:supplementalCodecs"),
        Some("dvh1.08.07")
    );
    assert_eq!(attr(reps[0], "scte214:supplementalProfiles"), Some("db1p"));
    // MP3 keeps its object type, spelt as Chromium matches it (its canPlayType says
    // "probably"; its MSE takes no MP3 in MP4 at all).
    assert_eq!(attr(reps[1], "codecs"), Some("mp4a.6B"));
    assert!(!reps[1].contains("scte214") && !reps[1].contains("cicp"));
    // An SDR title without colour information has neither.
    let sdr = render_mpd(&av_title());
    assert!(!sdr.contains("cicp") && !sdr.contains("scte214"), "{sdr}");
}

/// Given text tracks and the segment forms (`wvtt`, the default, and `imsc1`), then each
/// text set is `application/mp4` with its codecs, language and Role, and a
/// `SegmentTemplate` naming our text segments whose timescale, `presentationTimeOffset`,
/// `startNumber` and timeline are the video's own.
#[test]
fn text_tracks_are_segment_sets_on_the_video_timeline() {
    let mut title = av_title();
    title.index.text_tracks = vec![text(3, Some("eng"))];
    for (format, coding, codecs) in [
        (
            DashSubtitleFormat::Wvtt,
            crate::package::TextCoding::Wvtt,
            "wvtt",
        ),
        (
            DashSubtitleFormat::Imsc1,
            crate::package::TextCoding::Imsc1,
            "stpp.ttml.im1t",
        ),
    ] {
        let options = ManifestOptions {
            dash_subtitles: format,
            ..ManifestOptions::default()
        };
        let mpd = render_mpd_with(&title, &options);
        if format == DashSubtitleFormat::Wvtt {
            assert_eq!(mpd, render_mpd(&title), "wvtt is the default");
        }
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        let (video, set) = (sets[0], sets[2]);
        assert_eq!(attr(set, "contentType"), Some("text"));
        assert_eq!(attr(set, "mimeType"), Some("application/mp4"));
        assert_eq!(attr(set, "codecs"), Some(codecs));
        assert_eq!(attr(set, "lang"), Some("eng"));
        assert!(set.contains("value=\"subtitle\"/>"));
        assert!(!set.contains("BaseURL"));
        for name in ["timescale", "presentationTimeOffset", "startNumber"] {
            assert_eq!(attr(set, name), attr(video, name), "{name}");
        }
        let timeline = |s: &str| {
            let start = s.find("<SegmentTimeline>").unwrap();
            s[start..s.find("</SegmentTimeline>").unwrap()].to_owned()
        };
        assert_eq!(timeline(set), timeline(video));
        let folder = version_folder(&title.version_token());
        let rep = Resource::dash_representation_id(3);
        for (template, want) in [
            (
                "initialization",
                Resource::TextInit {
                    track_id: 3,
                    coding,
                },
            ),
            (
                "media",
                Resource::TextSegment {
                    track_id: 3,
                    coding,
                    number: 2,
                },
            ),
        ] {
            let name = attr(set, template)
                .unwrap()
                .strip_prefix(folder.as_str())
                .unwrap();
            let name = name
                .replace("$RepresentationID$", &rep)
                .replace("$Number$", "2");
            assert_eq!(Resource::parse(&name), Some(want), "{name}");
        }
    }
}
