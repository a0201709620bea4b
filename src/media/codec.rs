//! Codec facts for playlists: the RFC 6381 `codecs` string, frame size, channel count,
//! sample rate, colour and Dolby Vision configuration of one track, read from its mp4-atom
//! sample entry (`stsd`).
//!
//! HLS `CODECS=` and DASH `@codecs` must match what players feed to
//! `MediaSource.isTypeSupported`, so the strings follow the same rules as ffmpeg's HLS muxer
//! and Shaka Packager (ISO/IEC 14496-15 Annex E for AVC/HEVC, the AV1 and VP9 ISOBMFF
//! bindings, RFC 6381 for MPEG-4 audio). Sample entries we cannot name this way are
//! refused here, once, rather than producing a playlist no player can use.

use mp4_atom::{Atom, Av1c, Avcc, Codec, Encode, FourCC, Hvcc, VpcC};

use super::color::{self, ColorInfo};
use super::dolby::{self, DolbyVision};
use super::{CodecInfo, MediaError};

/// MPEG-4 Audio `objectTypeIndication` (ISO/IEC 14496-1): the AOT follows in the string.
const OTI_MPEG4_AUDIO: u8 = 0x40;

/// Describes one track's sample entry for playlists, or refuses a codec we cannot name.
///
/// The colour comes from the entry's `colr` box, else from the codec configuration (see
/// `color`). The Dolby Vision configuration is found here only for Dolby Vision sample
/// entries (`dvh1`, `dvhe`, `dav1`: profiles 5 and 10.0, named by their Dolby Vision codec
/// string); for a `dvvC` inside an `hvc1`/`av01` entry, which mp4-atom does not decode, see
/// [`describe_dolby_vision`].
pub fn describe_codec(codec: &Codec, track_id: u32) -> Result<CodecInfo, MediaError> {
    if let Codec::Unknown(kind, body) = codec {
        return dolby_vision_entry(*kind, body, track_id);
    }
    let color = video_color(codec);
    let (fourcc, rfc6381) = match codec {
        Codec::Avc1(e) => (mp4_atom::Avc1::KIND, avc("avc1", &e.avcc)),
        Codec::Avc3(e) => (mp4_atom::Avc3::KIND, avc("avc3", &e.avcc)),
        Codec::Hvc1(e) => (mp4_atom::Hvc1::KIND, hevc("hvc1", &e.hvcc)),
        Codec::Hev1(e) => (mp4_atom::Hev1::KIND, hevc("hev1", &e.hvcc)),
        Codec::Av01(e) => (mp4_atom::Av01::KIND, av1("av01", &e.av1c, color)),
        Codec::Vp09(e) => (mp4_atom::Vp09::KIND, vp9(&e.vpcc)),
        Codec::Vp08(_) => (mp4_atom::Vp08::KIND, "vp8".to_owned()),
        Codec::Mp4a(e) => (mp4_atom::Mp4a::KIND, mp4a(&e.esds.es_desc.dec_config)),
        // QuickTime's `.mp3` entry: MPEG-1 Audio, as `mp4a` with OTI 0x6B says it.
        Codec::Mp3(_) => (mp4_atom::Mp3::KIND, "mp4a.6B".to_owned()),
        Codec::Opus(_) => (mp4_atom::Opus::KIND, "opus".to_owned()),
        // "flac" is what every MSE takes; HLS writes the spec's `fLaC` (see package::hls).
        Codec::Flac(_) => (mp4_atom::Flac::KIND, "flac".to_owned()),
        Codec::Ac3(_) => (mp4_atom::Ac3::KIND, "ac-3".to_owned()),
        Codec::Eac3(_) => (mp4_atom::Eac3::KIND, "ec-3".to_owned()),
        _ => {
            return Err(MediaError::UnsupportedCodec {
                fourcc: fourcc_name(codec),
                track_id,
            })
        }
    };
    let (width, height) = codec.visual().map_or((0, 0), |v| (v.width, v.height));
    let (channels, sample_rate) = codec.audio().map_or((0, 0), |a| {
        (a.channel_count, u32::from(a.sample_rate.integer()))
    });
    let dolby_channel_mask = match codec {
        Codec::Ac3(e) => Some(dolby_channel_mask(e.dac3.acmod, e.dac3.lfeon, None)),
        Codec::Eac3(e) => (e.dec3.substreams.first()).map(|s| {
            dolby_channel_mask(s.acmod, s.lfeon, s.chan_loc.filter(|_| s.num_dep_sub > 0))
        }),
        _ => None,
    };
    Ok(CodecInfo {
        fourcc: fourcc.into(),
        rfc6381,
        width,
        height,
        channels,
        sample_rate,
        color,
        dolby_vision: None,
        dolby_channel_mask,
    })
}

/// The Dolby channel mask (ETSI TS 102 366 Table E.1.4's `chanmap` order: bit 15 L, 14 C,
/// 13 R, 12 Ls, 11 Rs, 10 Lc/Rc, 9 Lrs/Rrs, 8 Cs, 7 Ts, 6 Lsd/Rsd, 5 Lw/Rw, 4 Vhl/Vhr,
/// 3 Vhc, 2 Lts/Rts, 1 LFE2, 0 LFE; what DASH's
/// `tag:dolby.com,2014:dash:audio_channel_configuration:2011` carries) of an independent
/// substream's `acmod` and `lfeon`, with its dependent substreams' `chan_loc` (the nine
/// `chanmap` locations 5 to 13, in order, TS 102 366 F.6.2.16).
fn dolby_channel_mask(acmod: u8, lfeon: bool, chan_loc: Option<u16>) -> u16 {
    // acmod 0 (1+1) to 7 (3/2): L R, C, L R, L C R, L R Cs, L C R Cs, L R Ls Rs, L C R Ls Rs.
    const ACMOD: [u16; 8] = [
        0xA000, 0x4000, 0xA000, 0xE000, 0xA100, 0xE100, 0xB800, 0xF800,
    ];
    let front = ACMOD.get(usize::from(acmod & 7)).copied().unwrap_or(0);
    let lfe = u16::from(lfeon);
    let more = chan_loc.map_or(0, |loc| (loc & 0x1FF) << 2);
    front | lfe | more
}

impl CodecInfo {
    /// This codec with the Dolby Vision configuration of its raw sample description `stsd`
    /// when the entry itself gave none (a `dvvC` inside an `hvc1`/`av01` entry, which
    /// mp4-atom skips).
    pub fn with_dolby_vision_of(self, stsd: &[u8]) -> Self {
        Self {
            dolby_vision: self.dolby_vision.or_else(|| describe_dolby_vision(stsd)),
            ..self
        }
    }
}

/// The Dolby Vision configuration of a track whose first sample entry is in `stsd` (the
/// raw box, header included): a `dvcC`/`dvvC`/`dvwC` child of a video entry, which mp4-atom
/// skips. `None` when there is none or it cannot be read (the base layer still plays).
pub fn describe_dolby_vision(stsd: &[u8]) -> Option<DolbyVision> {
    dolby::from_sample_description(stsd)
}

/// The colour description of a video sample entry: `colr` first, then the codec's header.
fn video_color(codec: &Codec) -> Option<ColorInfo> {
    match codec {
        Codec::Avc1(e) => {
            color::from_colr(e.colr.as_ref()).or_else(|| color::from_avc_vui(&e.avcc))
        }
        Codec::Avc3(e) => {
            color::from_colr(e.colr.as_ref()).or_else(|| color::from_avc_vui(&e.avcc))
        }
        Codec::Hvc1(e) => {
            color::from_colr(e.colr.as_ref()).or_else(|| color::from_hevc_vui(&e.hvcc))
        }
        Codec::Hev1(e) => {
            color::from_colr(e.colr.as_ref()).or_else(|| color::from_hevc_vui(&e.hvcc))
        }
        Codec::Av01(e) => {
            color::from_colr(e.colr.as_ref()).or_else(|| color::from_av1_config(&e.av1c))
        }
        Codec::Vp09(e) => color::from_colr(e.colr.as_ref()).or(Some(color::from_vpcc(&e.vpcc))),
        _ => None,
    }
}

/// A Dolby Vision sample entry without a compatible base layer: `dvh1`/`dvhe` (profile 5,
/// laid out as `hvc1`) or `dav1` (profile 10.0, laid out as `av01`), named by the Dolby
/// Vision codec string of its configuration box. Any other unknown entry is refused.
fn dolby_vision_entry(kind: FourCC, body: &[u8], track_id: u32) -> Result<CodecInfo, MediaError> {
    let refused = || MediaError::UnsupportedCodec {
        fourcc: <[u8; 4]>::from(kind).escape_ascii().to_string(),
        track_id,
    };
    let fourcc: [u8; 4] = kind.into();
    let decoded = match &fourcc {
        b"dvh1" | b"dvhe" => mp4_atom::Hvc1::decode_body(&mut &body[..]).map(|e| {
            let color = color::from_colr(e.colr.as_ref()).or_else(|| color::from_hevc_vui(&e.hvcc));
            (e.visual, color)
        }),
        b"dav1" => mp4_atom::Av01::decode_body(&mut &body[..]).map(|e| {
            let color =
                color::from_colr(e.colr.as_ref()).or_else(|| color::from_av1_config(&e.av1c));
            (e.visual, color)
        }),
        _ => return Err(refused()),
    };
    let (visual, color) = decoded.map_err(|_| refused())?;
    let dolby_vision = dolby::from_entry_body(fourcc, body).ok_or_else(refused)?;
    Ok(CodecInfo {
        fourcc,
        rfc6381: dolby_vision.codec(),
        width: visual.width,
        height: visual.height,
        channels: 0,
        sample_rate: 0,
        color,
        dolby_vision: Some(dolby_vision),
        dolby_channel_mask: None,
    })
}

/// `avc1.PPCCLL`: profile, constraint flags and level from `avcC`, two hex digits each.
fn avc(prefix: &str, c: &Avcc) -> String {
    format!(
        "{prefix}.{:02x}{:02x}{:02x}",
        c.avc_profile_indication, c.profile_compatibility, c.avc_level_indication
    )
}

/// ISO/IEC 14496-15 E.3: `hvc1.[A-C]P.FLAGS.{L|H}LEVEL[.CC...]`, as Shaka Packager writes it.
fn hevc(prefix: &str, c: &Hvcc) -> String {
    let space = match c.general_profile_space & 0b11 {
        0 => "",
        1 => "A",
        2 => "B",
        _ => "C",
    };
    // Stored in record order (flag 0 is the top bit); the string wants flag 31 on top.
    let compat = u32::from_be_bytes(c.general_profile_compatibility_flags).reverse_bits();
    let tier = if c.general_tier_flag { 'H' } else { 'L' };
    let mut s = format!(
        "{prefix}.{space}{}.{compat:X}.{tier}{}",
        c.general_profile_idc, c.general_level_idc
    );
    let flags = &c.general_constraint_indicator_flags;
    let used = flags.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    for byte in flags.iter().take(used) {
        s.push_str(&format!(".{byte:X}"));
    }
    s
}

/// `av01.P.LLT.DD[.M.CCC.cp.tc.mc.F]` (AV1 Codec ISO Media File Format Binding, Codecs
/// Parameter String): profile, level, tier (M/H) and bit depth from `av1C`; then, only
/// when one differs from its default (`0.110.01.01.01.0`), all of monochrome, chroma
/// subsampling and position, and the colour code points and range.
fn av1(prefix: &str, c: &Av1c, color: Option<ColorInfo>) -> String {
    let tier = if c.seq_tier_0 { 'H' } else { 'M' };
    // twelve_bit only exists for the Professional profile (2); elsewhere it must be 0.
    let depth = match (c.high_bitdepth, c.twelve_bit && c.seq_profile == 2) {
        (false, _) => 8,
        (true, false) => 10,
        (true, true) => 12,
    };
    let mut s = format!(
        "{prefix}.{}.{:02}{tier}.{depth:02}",
        c.seq_profile, c.seq_level_idx_0
    );
    let (x, y) = (c.chroma_subsampling_x, c.chroma_subsampling_y);
    let position = if x && y { c.chroma_sample_position } else { 0 };
    let chroma = format!("{}{}{position}", u8::from(x), u8::from(y));
    let (cp, tc, mc, full) = color.map_or((1, 1, 1, false), |c| {
        (c.primaries, c.transfer, c.matrix, c.full_range)
    });
    let optional = (c.monochrome, chroma.as_str(), cp, tc, mc, full);
    if optional != (false, "110", 1, 1, 1, false) {
        s.push_str(&format!(
            ".{}.{chroma}.{cp:02}.{tc:02}.{mc:02}.{}",
            u8::from(c.monochrome),
            u8::from(full)
        ));
    }
    s
}

/// `vp09.PP.LL.DD`: profile, level and bit depth from `vpcC`, two decimal digits each.
fn vp9(c: &VpcC) -> String {
    format!("vp09.{:02}.{:02}.{:02}", c.profile, c.level, c.bit_depth)
}

/// `mp4a.40.AOT` for MPEG-4 audio, else `mp4a.OTI` in upper-case hex (e.g. `mp4a.6B` for
/// MPEG-1 Audio, which is how ffmpeg stores MP3; Chromium matches these strings exactly).
fn mp4a(dc: &mp4_atom::esds::DecoderConfig) -> String {
    if dc.object_type_indication != OTI_MPEG4_AUDIO {
        return format!("mp4a.{:02X}", dc.object_type_indication);
    }
    // mp4-atom already resolves the AOT escape (31 -> 32 + 6-bit extension) in `profile`.
    // 0 means "absent or unparseable AudioSpecificConfig": assume AAC-LC, as players do.
    match dc.dec_specific.as_ref().map(|d| d.profile) {
        None | Some(0) => "mp4a.40.2".to_owned(),
        Some(aot) => format!("mp4a.40.{aot}"),
    }
}

/// The sample entry type of a codec we refuse, escaped for an error message sent to clients.
fn fourcc_name(codec: &Codec) -> String {
    let bytes: [u8; 4] = match codec {
        Codec::Unknown(kind, _) => (*kind).into(),
        other => {
            // mp4-atom has no `Codec::kind()`; every entry is a box, whose type is bytes 4..8.
            let mut buf = Vec::new();
            let encoded = other.encode(&mut buf).is_ok();
            match buf.get(4..8).map(<[u8; 4]>::try_from) {
                Some(Ok(kind)) if encoded => kind,
                _ => *b"????",
            }
        }
    };
    bytes.escape_ascii().to_string()
}

#[cfg(test)]
mod tests {
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

    /// Given AC-3 3/2 with LFE, then its loudspeakers are 5.1 (`F801`), whatever the
    /// sample entry's channel count; given E-AC-3 2/0 with a dependent substream adding
    /// Lrs/Rrs and no LFE, then L R Lrs Rrs (`A200`); given AAC, none.
    #[test]
    fn dolby_loudspeakers_come_from_dac3_and_dec3() {
        let dac3 = mp4_atom::Ac3SpecificBox {
            fscod: 0,
            bsid: 8,
            bsmod: 0,
            acmod: 7,
            lfeon: true,
            bit_rate_code: 15,
        };
        let ac3 = mp4_atom::Ac3 {
            audio: audio(2, 48000),
            dac3,
        };
        let info = describe_codec(&ac3.into(), 1).expect("ac-3");
        assert_eq!(info.dolby_channel_mask, Some(0xF801));
        let substream = mp4_atom::Ec3IndependentSubstream {
            fscod: 0,
            bsid: 16,
            asvc: false,
            bsmod: 0,
            acmod: 2,
            lfeon: false,
            num_dep_sub: 1,
            // chanmap location 6 (Lrs/Rrs) is the second of the nine: bit 7 of chan_loc.
            chan_loc: Some(1 << 7),
        };
        let eac3 = mp4_atom::Eac3 {
            audio: audio(2, 48000),
            dec3: mp4_atom::Ec3SpecificBox {
                data_rate: 640,
                substreams: vec![substream],
            },
        };
        let info = describe_codec(&eac3.into(), 1).expect("ec-3");
        assert_eq!(info.dolby_channel_mask, Some(0xA200));
        let mp3 = mp4_atom::Mp3 {
            audio: audio(2, 48000),
        };
        assert_eq!(
            describe_codec(&mp3.into(), 1)
                .expect("mp3")
                .dolby_channel_mask,
            None
        );
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
}
