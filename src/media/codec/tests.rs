//! Codec strings (RFC 6381) from sample entries: every entry form the fixtures and the
//! specifications give, and the unsupported ones named.

use super::*;
use mp4_atom::esds::{DecoderConfig, DecoderSpecific};
use mp4_atom::{Audio, Decode, Esds, FourCC, Visual};

fn visual() -> Visual {
    Visual {
        width: 1920,
        height: 1080,
        ..Default::default()
    }
}

fn audio(channels: u16, rate: u16) -> Audio {
    Audio {
        data_reference_index: 1,
        channel_count: channels,
        sample_size: 16,
        sample_rate: rate.into(),
    }
}

fn rfc(codec: impl Into<Codec>) -> String {
    match describe_codec(&codec.into(), 1) {
        Ok(info) => info.rfc6381,
        Err(e) => panic!("{e}"),
    }
}

fn aac(oti: u8, dec_specific: Option<DecoderSpecific>) -> mp4_atom::Mp4a {
    let mut esds = Esds::default();
    esds.es_desc.dec_config = DecoderConfig {
        object_type_indication: oti,
        stream_type: 5,
        dec_specific,
        ..Default::default()
    };
    mp4_atom::Mp4a {
        audio: audio(2, 44100),
        esds,
        btrt: None,
        taic: None,
    }
}

fn aot(profile: u8) -> Option<DecoderSpecific> {
    Some(DecoderSpecific {
        profile,
        freq_index: 4,
        chan_conf: 2,
        raw: Vec::new(),
    })
}

#[test]
fn avc_both_entries_with_frame_size() {
    let avcc = Avcc {
        avc_profile_indication: 0x64,
        profile_compatibility: 0x00,
        avc_level_indication: 0x1f,
        ..Default::default()
    };
    let codec = Codec::from(mp4_atom::Avc1 {
        visual: visual(),
        avcc: avcc.clone(),
        ..Default::default()
    });
    let info = describe_codec(&codec, 7).expect("avc1");
    assert_eq!(info.rfc6381, "avc1.64001f");
    assert_eq!(&info.fourcc, b"avc1");
    assert_eq!((info.width, info.height), (1920, 1080));
    assert_eq!((info.channels, info.sample_rate), (0, 0));
    let avc3 = mp4_atom::Avc3 {
        avcc: Avcc {
            avc_profile_indication: 0x42,
            profile_compatibility: 0xc0,
            avc_level_indication: 0x1e,
            ..avcc
        },
        ..Default::default()
    };
    assert_eq!(rfc(avc3), "avc3.42c01e");
}

#[test]
fn hevc_annex_e_forms() {
    let hvcc = Hvcc {
        general_profile_idc: 1,
        general_profile_compatibility_flags: [0x60, 0, 0, 0],
        general_constraint_indicator_flags: [0xb0, 0, 0, 0, 0, 0],
        general_level_idc: 93,
        ..Hvcc::new()
    };
    let hvc1 = mp4_atom::Hvc1 {
        visual: visual(),
        hvcc: hvcc.clone(),
        ..Default::default()
    };
    assert_eq!(rfc(hvc1), "hvc1.1.6.L93.B0");
    // Main 10, high tier, profile space 1, an inner zero byte kept, trailing ones dropped.
    let hev1 = mp4_atom::Hev1 {
        hvcc: Hvcc {
            general_profile_space: 1,
            general_tier_flag: true,
            general_profile_idc: 2,
            general_profile_compatibility_flags: [0x20, 0, 0, 0],
            general_constraint_indicator_flags: [0x90, 0, 0x08, 0, 0, 0],
            general_level_idc: 153,
            ..hvcc
        },
        ..Default::default()
    };
    assert_eq!(rfc(hev1), "hev1.A2.4.H153.90.0.8");
    assert_eq!(rfc(mp4_atom::Hvc1::default()), "hvc1.0.0.L0");
}

#[test]
fn av1_vp9_vp8() {
    let mut av01 = mp4_atom::Av01::default();
    av01.av1c.seq_level_idx_0 = 8;
    (
        av01.av1c.chroma_subsampling_x,
        av01.av1c.chroma_subsampling_y,
    ) = (true, true);
    assert_eq!(rfc(av01.clone()), "av01.0.08M.08");
    av01.av1c.seq_profile = 2;
    av01.av1c.seq_level_idx_0 = 13;
    av01.av1c.seq_tier_0 = true;
    av01.av1c.high_bitdepth = true;
    assert_eq!(rfc(av01.clone()), "av01.2.13H.10");
    av01.av1c.twelve_bit = true;
    assert_eq!(rfc(av01), "av01.2.13H.12");
    // PQ in `colr`: the optional fields follow, all of them; 4:2:0 with the chroma
    // sample position of av1C; full range.
    let mut hdr = mp4_atom::Av01::default();
    hdr.av1c.seq_level_idx_0 = 8;
    hdr.av1c.high_bitdepth = true;
    (hdr.av1c.chroma_subsampling_x, hdr.av1c.chroma_subsampling_y) = (true, true);
    hdr.av1c.chroma_sample_position = 1;
    hdr.colr = Some(mp4_atom::Colr::Nclx {
        colour_primaries: 9,
        transfer_characteristics: 16,
        matrix_coefficients: 9,
        full_range_flag: true,
    });
    let info = describe_codec(&hdr.into(), 1).expect("av01");
    assert_eq!(info.rfc6381, "av01.0.08M.10.0.111.09.16.09.1");
    assert_eq!(info.color.map(|c| c.transfer), Some(16));
    let vpcc = VpcC {
        profile: 2,
        level: 41,
        bit_depth: 10,
        ..Default::default()
    };
    let vp09 = mp4_atom::Vp09 {
        vpcc,
        ..Default::default()
    };
    assert_eq!(rfc(vp09), "vp09.02.41.10");
    assert_eq!(rfc(mp4_atom::Vp08::default()), "vp8");
}

#[test]
fn mp4a_forms() {
    let info = describe_codec(&aac(0x40, aot(2)).into(), 1).expect("aac");
    assert_eq!(info.rfc6381, "mp4a.40.2");
    assert_eq!((info.channels, info.sample_rate), (2, 44100));
    assert_eq!((info.width, info.height), (0, 0));
    assert_eq!(rfc(aac(0x40, aot(5))), "mp4a.40.5");
    assert_eq!(rfc(aac(0x40, None)), "mp4a.40.2");
    assert_eq!(rfc(aac(0x6b, None)), "mp4a.6B");
    assert_eq!(rfc(aac(0x69, None)), "mp4a.69");
    // xHE-AAC: AOT 42 needs the escape (31, then 6 bits of 42 - 32).
    let usac = DecoderSpecific::decode(&mut &[0xf9, 0x46, 0x40, 0x00][..]).expect("asc");
    assert_eq!(rfc(aac(0x40, Some(usac))), "mp4a.40.42");
    // An AudioSpecificConfig too short to read falls back to AAC-LC.
    let short = DecoderSpecific::decode(&mut &[0x12][..]).expect("asc");
    assert_eq!(rfc(aac(0x40, Some(short))), "mp4a.40.2");
}

#[test]
fn other_audio() {
    let mp3 = mp4_atom::Mp3 {
        audio: audio(2, 48000),
    };
    let info = describe_codec(&mp3.into(), 2).expect("mp3");
    assert_eq!((info.rfc6381.as_str(), &info.fourcc), ("mp4a.6B", b".mp3"));
    assert_eq!((info.channels, info.sample_rate), (2, 48000));
    let dops = mp4_atom::Dops {
        output_channel_count: 2,
        pre_skip: 312,
        input_sample_rate: 48000,
        output_gain: 0,
        channel_mapping: None,
    };
    let opus = mp4_atom::Opus {
        audio: audio(2, 48000),
        dops,
        btrt: None,
    };
    assert_eq!(rfc(opus), "opus");
    let flac = mp4_atom::Flac {
        audio: audio(2, 44100),
        dfla: mp4_atom::Dfla { blocks: Vec::new() },
    };
    assert_eq!(rfc(flac), "flac");
    let dac3 = mp4_atom::Ac3SpecificBox {
        fscod: 0,
        bsid: 8,
        bsmod: 0,
        acmod: 7,
        lfeon: true,
        bit_rate_code: 15,
    };
    let ac3 = mp4_atom::Ac3 {
        audio: audio(6, 48000),
        dac3,
    };
    assert_eq!(rfc(ac3), "ac-3");
    let dec3 = mp4_atom::Ec3SpecificBox {
        data_rate: 640,
        substreams: Vec::new(),
    };
    let eac3 = mp4_atom::Eac3 {
        audio: audio(6, 48000),
        dec3,
    };
    assert_eq!(rfc(eac3), "ec-3");
}

fn refused(codec: Codec) -> (String, u32) {
    match describe_codec(&codec, 9) {
        Err(MediaError::UnsupportedCodec { fourcc, track_id }) => (fourcc, track_id),
        other => panic!("expected UnsupportedCodec, got {other:?}"),
    }
}

#[test]
fn unsupported_codecs_are_named() {
    let unknown = Codec::Unknown(FourCC::new(b"dvh1"), vec![1, 2]);
    assert_eq!(refused(unknown), ("dvh1".to_owned(), 9));
    let hostile = Codec::Unknown(FourCC::new(b"a\n\xff\""), Vec::new());
    assert_eq!(refused(hostile).0, "a\\n\\xff\\\"");
    let err = describe_codec(&mp4_atom::Tx3g::default().into(), 3).expect_err("text");
    assert_eq!(err.to_string(), "unsupported codec tx3g in track 3");
}
