//! Shared test fixtures of the package layer: small synthetic titles (a 10 s video and
//! audio, text tracks, an HDR title) that the HLS, DASH, edit, ladder, title, TS and WebVTT
//! tests build on, and the fixture files of the repository loaded as titles.

use crate::media::{
    index_from_bytes, CodecInfo, EditList, MediaIndex, MediaLimits, SampleTable, TextFormat,
    TextTrackIndex, TrackIndex, TrackKind,
};
use crate::package::Title;
use crate::source::ObjectIdentity;

/// 10 s of 320x180 AVC at 30 fps, 15360 Hz, a sync sample every 30; or 10 s of stereo
/// 48 kHz AAC in English, 1024-sample frames.
pub(crate) fn track(track_id: u32, video: bool) -> TrackIndex {
    let (codec, w, h, channels, sample_rate, timescale, n, delta) = match video {
        true => ("avc1.64000d", 320, 180, 0, 0, 15360, 300, 512),
        false => ("mp4a.40.2", 0, 0, 2, 48000, 48000, 469, 1024),
    };
    let kind = [TrackKind::Audio, TrackKind::Video][usize::from(video)];
    let codec = CodecInfo {
        fourcc: *b"test",
        rfc6381: codec.to_owned(),
        width: w,
        height: h,
        channels,
        sample_rate,
        color: None,
        dolby_vision: None,
        dolby_channel_mask: None,
    };
    let samples = SampleTable {
        sizes: vec![if video { 2000 } else { 300 }; n as usize],
        offsets: (0..u64::from(n)).map(|i| i * 2000).collect(),
        dts: (0..u64::from(n)).map(|i| i * delta).collect(),
        durations: vec![delta as u32; n as usize],
        cts_offsets: Vec::new(),
        sync: video.then(|| (0..n).step_by(30).collect()),
    };
    TrackIndex {
        track_id,
        kind,
        timescale,
        language: (!video).then(|| "eng".to_owned()),
        codec,
        sample_description: bytes::Bytes::new(),
        tkhd_width: u32::from(w) << 16,
        tkhd_height: u32::from(h) << 16,
        display_matrix: crate::media::UNITY_MATRIX,
        edits: EditList::default(),
        samples,
        captions: Vec::new(),
    }
}

/// Video track 1 and audio track 2 but those `keep` rejects, then `more`; 4 s segments.
pub(crate) fn title(keep: fn(&TrackIndex) -> bool, more: Vec<TrackIndex>) -> Title {
    let mut tracks = vec![track(1, true), track(2, false)];
    tracks.retain(keep);
    tracks.extend(more);
    let identity = ObjectIdentity {
        size: 0,
        version: String::new(),
    };
    let index = MediaIndex {
        identity,
        movie_timescale: 1000,
        tracks,
        text_tracks: Vec::new(),
    };
    Title::new(index, 4000).unwrap()
}

/// A 10 s text track (one cue a second) in `language`; 1000 Hz.
pub(crate) fn text(track_id: u32, language: Option<&str>) -> TextTrackIndex {
    TextTrackIndex {
        track_id,
        format: TextFormat::Tx3g,
        timescale: 1000,
        language: language.map(str::to_owned),
        edits: EditList::default(),
        samples: SampleTable {
            sizes: vec![10; 10],
            offsets: (0..10).map(|i| i * 10).collect(),
            dts: (0..10).map(|i| i * 1000).collect(),
            durations: vec![1000; 10],
            cts_offsets: Vec::new(),
            sync: None,
        },
    }
}

/// A title of HEVC Main 10 in PQ with a Dolby Vision 8.1 layer, and MP3 audio.
pub(crate) fn hdr_title() -> Title {
    use crate::media::{ColorInfo, ColorSource, DolbyVision};
    let mut video = track(1, true);
    video.codec.fourcc = *b"hvc1";
    video.codec.rfc6381 = "hvc1.2.4.L93.B0".into();
    video.codec.color = Some(ColorInfo {
        primaries: 9,
        transfer: 16,
        matrix: 9,
        full_range: false,
        source: ColorSource::Colr,
    });
    video.codec.dolby_vision = Some(DolbyVision {
        profile: 8,
        level: 7,
        rpu_present: true,
        el_present: false,
        bl_present: true,
        compatibility_id: 1,
        fourcc: *b"dvh1",
    });
    let mut audio = track(2, false);
    audio.codec.rfc6381 = "mp4a.6B".into();
    title(|_| false, vec![video, audio])
}

/// The bytes of fixture file `name` (a path under the repository's `fixtures/`).
pub(crate) fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The title of fixture file `name`, cut at `target_ms`.
pub(crate) fn fixture_title(name: &str, target_ms: u32) -> Title {
    let file = bytes::Bytes::from(fixture_bytes(name));
    let index = index_from_bytes(&file, &MediaLimits::default()).unwrap();
    Title::new(index, target_ms).unwrap()
}
