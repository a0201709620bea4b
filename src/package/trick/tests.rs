//! Trick play over the fixtures: key frames that tile the timeline and one-frame resources.

use super::*;
use mp4_atom::{Decode, Moof};

fn fixture_title(name: &str, target_ms: u32) -> Title {
    crate::package::fmp4::tests::fixture(name, target_ms).0
}

#[test]
fn key_frames_are_sync_samples_that_tile_the_video_timeline() {
    let title = fixture_title("h264-bframes-editlist-aac.mp4", 1000);
    let video = title.renditions.first().unwrap();
    assert_eq!(video.kind, TrackKind::Video);
    let frames = key_frames(&title, video);
    assert!(
        frames.len() > 1,
        "a few seconds with key frames every second or two"
    );
    let track = &title.index.tracks[video.track_pos];
    let plan = &title.plan.tracks[video.track_pos];
    for pair in frames.windows(2) {
        assert!(track.samples.is_sync(pair[0].sample));
        assert_eq!(
            pair[0].pts + pair[0].duration,
            pair[1].pts,
            "no gap, no overlap"
        );
        assert!(pair[0].duration >= u64::from(track.timescale));
    }
    // The first frame starts the track; the last ends where its last segment does.
    let (start, _) = plan.segment_span(&track.samples, 0).unwrap();
    assert_eq!(frames[0].pts, start);
    let last = frames.last().unwrap();
    let k = title.plan.segment_count - 1;
    let (s, d) = plan.segment_span(&track.samples, k).unwrap();
    assert_eq!(last.pts + last.duration, s + d);
}

#[test]
fn a_key_frame_resource_is_one_sync_sample_lasting_until_the_next() {
    let title = fixture_title("h264-bframes-editlist-aac.mp4", 1000);
    let video = title.renditions.first().unwrap();
    let frames = key_frames(&title, video);
    let track = &title.index.tracks[video.track_pos];
    for (n, frame) in frames.iter().enumerate() {
        let prepared = prepare_key_frame(&title, video, n as u64 + 1).unwrap();
        assert_eq!(prepared.content_length(), frame.bytes);
        let moof = Moof::decode(&mut &prepared.header[..]).unwrap();
        let trun = &moof.traf[0].trun[0];
        let samples: Vec<_> = trun.samples.iter().collect();
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0].duration, Some(frame.decode_span as u32));
        assert_eq!(samples[0].flags, Some(0x0200_0000), "a sync sample");
        assert_eq!(
            prepared.payload_bytes,
            u64::from(track.samples.sizes[frame.sample])
        );
    }
    assert!(matches!(
        prepare_key_frame(&title, video, frames.len() as u64 + 1),
        Err(PackageError::SegmentOutOfRange { .. })
    ));
    assert!(prepare_key_frame(&title, video, 0).is_err());
}

#[test]
fn audio_offers_no_key_frames() {
    let title = fixture_title("h264-aac-3s.mp4", 1000);
    let audio = title.renditions.iter().find(|r| r.kind == TrackKind::Audio);
    assert!(key_frames(&title, audio.unwrap()).is_empty());
}
