//! Elementary stream configuration: what a sample entry says about how its samples are
//! coded, for outputs that carry the samples outside an MP4 (MPEG-TS, `package::ts`).
//!
//! CMAF copies the sample entry byte for byte and needs none of this; MPEG-TS must put the
//! decoder configuration in band (H.264/HEVC parameter sets before key frames, ADTS headers
//! built from the AudioSpecificConfig), so it needs the configuration records themselves.
//! This module reads them from the raw `stsd` (only `media` reads mp4-atom's parse types)
//! and returns plain data; a sample entry it cannot read is [`StreamConfig::Other`].

use mp4_atom::{Codec, Decode, Stsd};

/// How the samples of a track are coded, as far as an MPEG-TS muxer needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamConfig {
    /// H.264 (`avc1`/`avc3`): NAL units prefixed by `length_size`-byte lengths
    /// (ISO/IEC 14496-15 5.3.2), with the `avcC` parameter sets, SPS first, then PPS.
    Avc {
        length_size: u8,
        parameter_sets: Vec<Vec<u8>>,
    },
    /// HEVC (`hvc1`/`hev1`): as `Avc`, with the `hvcC` arrays' NAL units in their order
    /// (VPS, SPS, PPS, then any SEI).
    Hevc {
        length_size: u8,
        parameter_sets: Vec<Vec<u8>>,
    },
    /// MPEG-4 AAC (`mp4a` with object type 0x40, or 0x66-0x68 for MPEG-2 AAC): the
    /// AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) as the `esds` holds it.
    Aac { audio_specific_config: Vec<u8> },
    /// MPEG-1/2 Audio layer III (`.mp3`, or `mp4a` with object type 0x6B or 0x69): frames
    /// carry their own headers.
    Mp3,
    /// AC-3 (`ac-3`): frames carry their own sync information; `dac3` is the body of the
    /// AC3SpecificBox (ETSI TS 102 366 F.4), which HLS SAMPLE-AES restates in the PMT.
    Ac3 { dac3: Vec<u8> },
    /// E-AC-3 (`ec-3`): frames carry their own sync information; `dec3` is the body of the
    /// EC3SpecificBox (F.6), for the same purpose.
    Eac3 { dec3: Vec<u8> },
    /// Anything else (VP9, AV1, Opus, FLAC, ...), or an entry that could not be read.
    Other,
}

/// The stream configuration of the first sample entry of a raw `stsd` box (header
/// included), as `TrackIndex::sample_description` holds it.
pub fn stream_config(stsd: &[u8]) -> StreamConfig {
    let Ok(stsd) = Stsd::decode(&mut &stsd[..]) else {
        return StreamConfig::Other;
    };
    let Some(codec) = stsd.codecs.first() else {
        return StreamConfig::Other;
    };
    let avc = |c: &mp4_atom::Avcc| StreamConfig::Avc {
        length_size: c.length_size,
        parameter_sets: (c.sequence_parameter_sets.iter())
            .chain(&c.picture_parameter_sets)
            .cloned()
            .collect(),
    };
    let hevc = |c: &mp4_atom::Hvcc| StreamConfig::Hevc {
        length_size: c.length_size_minus_one + 1,
        parameter_sets: (c.arrays.iter())
            .flat_map(|a| a.nalus.iter().cloned())
            .collect(),
    };
    match codec {
        Codec::Avc1(e) => avc(&e.avcc),
        Codec::Avc3(e) => avc(&e.avcc),
        Codec::Hvc1(e) => hevc(&e.hvcc),
        Codec::Hev1(e) => hevc(&e.hvcc),
        Codec::Mp4a(e) => {
            let config = &e.esds.es_desc.dec_config;
            match config.object_type_indication {
                0x40 | 0x66..=0x68 => match &config.dec_specific {
                    Some(specific) if !specific.raw.is_empty() => StreamConfig::Aac {
                        audio_specific_config: specific.raw.clone(),
                    },
                    _ => StreamConfig::Other,
                },
                0x69 | 0x6B => StreamConfig::Mp3,
                _ => StreamConfig::Other,
            }
        }
        Codec::Mp3(_) => StreamConfig::Mp3,
        Codec::Ac3(e) => StreamConfig::Ac3 {
            dac3: box_body(&e.dac3),
        },
        Codec::Eac3(e) => StreamConfig::Eac3 {
            dec3: box_body(&e.dec3),
        },
        _ => StreamConfig::Other,
    }
}

/// The body of the decoder configuration box of the first sample entry of a raw `stsd`
/// (`hvcC` for HEVC, `av1C` for AV1, `avcC` for H.264), as ISO/IEC 14496-15 8.3.3 and the
/// AV1 ISOBMFF binding 2.3 define it: what a decoder such as libavcodec takes as its
/// extradata. `None` for other entries (VP9's `vpcC` configures no decoder: VP9 frames
/// carry their own headers) and for an entry that cannot be read.
pub fn decoder_configuration(stsd: &[u8]) -> Option<Vec<u8>> {
    let stsd = Stsd::decode(&mut &stsd[..]).ok()?;
    let body = match stsd.codecs.first()? {
        Codec::Avc1(e) => box_body(&e.avcc),
        Codec::Avc3(e) => box_body(&e.avcc),
        Codec::Hvc1(e) => box_body(&e.hvcc),
        Codec::Hev1(e) => box_body(&e.hvcc),
        Codec::Av01(e) => box_body(&e.av1c),
        _ => return None,
    };
    (!body.is_empty()).then_some(body)
}

/// The body of `atom` as mp4-atom writes it (its 8-byte header dropped); empty if it
/// cannot be written.
fn box_body<A: mp4_atom::Atom>(atom: &A) -> Vec<u8> {
    let mut out = Vec::new();
    match mp4_atom::Encode::encode(atom, &mut out) {
        Ok(()) => out.split_off(8.min(out.len())),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_stsd(name: &str, track_pos: usize) -> bytes::Bytes {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let file = bytes::Bytes::from(std::fs::read(path).unwrap());
        let index =
            crate::media::index_from_bytes(&file, &crate::media::MediaLimits::default()).unwrap();
        index.tracks[track_pos].sample_description.clone()
    }

    /// Given the H.264 + AAC fixture, then its video gives 4-byte lengths and one SPS and
    /// one PPS, and its audio the 2-byte AAC-LC 48 kHz stereo AudioSpecificConfig.
    #[test]
    fn h264_and_aac_configurations_are_read() {
        match stream_config(&fixture_stsd("h264-aac-3s.mp4", 0)) {
            StreamConfig::Avc {
                length_size,
                parameter_sets,
            } => {
                assert_eq!(length_size, 4);
                assert_eq!(parameter_sets.len(), 2);
                assert_eq!(parameter_sets[0][0] & 0x1f, 7, "SPS first");
                assert_eq!(parameter_sets[1][0] & 0x1f, 8, "then PPS");
            }
            other => panic!("{other:?}"),
        }
        match stream_config(&fixture_stsd("h264-aac-3s.mp4", 1)) {
            StreamConfig::Aac {
                audio_specific_config,
            } => assert_eq!(&audio_specific_config[..2], &[0x11, 0x90]),
            other => panic!("{other:?}"),
        }
    }

    /// Given the HEVC and AV1 fixtures, then their decoder configuration is the `hvcC`
    /// (version 1) and `av1C` (marker and version 1) body; audio and garbage have none.
    #[test]
    fn decoder_configurations_are_the_record_bodies() {
        let hvcc = decoder_configuration(&fixture_stsd("hevc-aac-3s.mp4", 0)).unwrap();
        assert_eq!(hvcc[0], 1, "configurationVersion");
        let av1c = decoder_configuration(&fixture_stsd("av1-10bit-pq-aac-3s.mp4", 0)).unwrap();
        assert_eq!(av1c[0], 0x81, "marker and version");
        assert_eq!(
            decoder_configuration(&fixture_stsd("h264-aac-3s.mp4", 1)),
            None
        );
        assert_eq!(decoder_configuration(b"garbage"), None);
    }

    /// Given HEVC, then VPS, SPS and PPS come in that order; MP3 is named; garbage is Other.
    #[test]
    fn hevc_mp3_and_garbage() {
        match stream_config(&fixture_stsd("hevc-aac-3s.mp4", 0)) {
            StreamConfig::Hevc { parameter_sets, .. } => {
                let types: Vec<u8> = parameter_sets.iter().map(|p| (p[0] >> 1) & 0x3f).collect();
                assert_eq!(&types[..3], &[32, 33, 34]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            stream_config(&fixture_stsd("h264-mp3-3s.mp4", 1)),
            StreamConfig::Mp3
        );
        assert_eq!(stream_config(b"garbage"), StreamConfig::Other);
        assert_eq!(stream_config(&[]), StreamConfig::Other);
    }
}
