//! ADTS headers (ISO/IEC 13818-7 6.2, 14496-3 1.A.2) for AAC frames carried in MPEG-TS,
//! built once per track from its AudioSpecificConfig.
//!
//! ADTS can name only the first four object types (Main, LC, SSR, LTP), one of the 13
//! table sampling rates and channel configurations 1-7. HE-AAC (SBR, object type 5) and
//! HE-AAC v2 (PS, 29) go as their AAC-LC core with implicit SBR/PS signalling, as every
//! HLS packager writes them; decoders find the extension in the bit stream. Anything ADTS
//! cannot describe (a program config element instead of a channel configuration, an
//! explicit sampling rate off the table, another object type) is refused, never guessed.

/// Sampling rates by `sampling_frequency_index` (14496-3 Table 1.18).
const RATES: [u32; 13] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
];

/// Largest frame ADTS can describe: `frame_length` is 13 bits and counts the header.
pub const MAX_ADTS_PAYLOAD: u32 = 8191 - ADTS_HEADER_LEN as u32;
/// Bytes of an ADTS header without CRC.
pub const ADTS_HEADER_LEN: usize = 7;

/// What every ADTS header of a track says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdtsConfig {
    /// `profile_ObjectType`: object type - 1 (0 Main, 1 LC, 2 SSR, 3 LTP).
    pub profile: u8,
    /// `sampling_frequency_index` (of the core, for HE-AAC).
    pub frequency_index: u8,
    /// `channel_configuration`, 1 to 7.
    pub channels: u8,
}

impl AdtsConfig {
    /// The ADTS configuration of an AudioSpecificConfig, or why there is none.
    ///
    /// # Errors
    /// A one-line reason when ADTS cannot describe the stream.
    pub fn from_audio_specific_config(asc: &[u8]) -> Result<Self, String> {
        let mut bits = Bits { bytes: asc, pos: 0 };
        let mut object_type = object_type_of(&mut bits)?;
        let mut frequency_index = read_frequency_index(&mut bits)?;
        let channels = bits.read(4)? as u8;
        if matches!(object_type, 5 | 29) {
            // Explicit hierarchical signalling: the extension rate, then the core's type.
            read_frequency_index(&mut bits)?;
            let core = object_type_of(&mut bits)?;
            object_type = core;
        }
        if frequency_index > 12 {
            frequency_index = 15;
        }
        if !(1..=4).contains(&object_type) {
            return Err(format!("AAC object type {object_type} cannot go in ADTS"));
        }
        if frequency_index == 15 {
            return Err("an AAC sampling rate off the ADTS table".into());
        }
        if !(1..=7).contains(&channels) {
            return Err(format!(
                "AAC channel configuration {channels} (a program config element) cannot go in ADTS"
            ));
        }
        Ok(Self {
            profile: object_type - 1,
            frequency_index,
            channels,
        })
    }

    /// The 7-byte header of a frame of `payload` bytes (at most [`MAX_ADTS_PAYLOAD`]).
    pub fn header(&self, payload: u32) -> [u8; ADTS_HEADER_LEN] {
        let length = payload.min(MAX_ADTS_PAYLOAD) + ADTS_HEADER_LEN as u32;
        [
            0xFF,
            // MPEG-4, layer 0, no CRC.
            0xF1,
            (self.profile << 6) | (self.frequency_index << 2) | ((self.channels >> 2) & 1),
            ((self.channels & 3) << 6) | ((length >> 11) & 3) as u8,
            (length >> 3) as u8,
            (((length & 7) << 5) as u8) | 0x1F,
            // Buffer fullness 0x7FF (variable rate), one raw data block.
            0xFC,
        ]
    }
}

/// `GetAudioObjectType()` (14496-3 1.6.2.1): 5 bits, 31 escapes to 32 + 6 bits.
fn object_type_of(bits: &mut Bits<'_>) -> Result<u8, String> {
    let t = bits.read(5)? as u8;
    Ok(if t == 31 { 32 + bits.read(6)? as u8 } else { t })
}

/// `samplingFrequencyIndex`; an explicit 24-bit rate maps to its table index if it has one.
fn read_frequency_index(bits: &mut Bits<'_>) -> Result<u8, String> {
    let index = bits.read(4)? as u8;
    if index != 15 {
        return Ok(index);
    }
    let rate = bits.read(24)?;
    Ok(RATES
        .iter()
        .position(|r| *r == rate)
        .map_or(15, |i| i as u8))
}

/// A big-endian bit reader that reports a short config instead of panicking.
struct Bits<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    fn read(&mut self, n: usize) -> Result<u32, String> {
        let mut value = 0u32;
        for _ in 0..n {
            let byte = self
                .bytes
                .get(self.pos / 8)
                .ok_or("the AudioSpecificConfig is too short")?;
            value = (value << 1) | u32::from((byte >> (7 - self.pos % 8)) & 1);
            self.pos += 1;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AAC-LC 48 kHz stereo (0x1190) gives the header ffmpeg's ADTS muxer writes.
    #[test]
    fn aac_lc_stereo_header() {
        let config = AdtsConfig::from_audio_specific_config(&[0x11, 0x90]).unwrap();
        assert_eq!(
            config,
            AdtsConfig {
                profile: 1,
                frequency_index: 3,
                channels: 2
            }
        );
        // A 371-byte frame: frame_length 378.
        assert_eq!(
            config.header(371),
            [0xFF, 0xF1, 0x4C, 0x80, 0x2F, 0x5F, 0xFC]
        );
    }

    /// HE-AAC v1 with explicit signalling (AOT 5, 24 kHz core, 48 kHz extension, LC core)
    /// goes as its AAC-LC core at 24 kHz; a 5.1 config keeps its 6 channels.
    #[test]
    fn he_aac_goes_as_its_core() {
        // 00101 0110 0010 0011 00010 ... : AOT 5, index 6, 2 ch, ext index 3, AOT 2.
        let asc = [0x2B, 0x11, 0x88, 0x00];
        let config = AdtsConfig::from_audio_specific_config(&asc).unwrap();
        assert_eq!(
            (config.profile, config.frequency_index, config.channels),
            (1, 6, 2)
        );
        let six = AdtsConfig::from_audio_specific_config(&[0x11, 0xB0]).unwrap();
        assert_eq!(six.channels, 6);
    }

    #[test]
    fn what_adts_cannot_say_is_refused() {
        // Channel configuration 0: a PCE.
        assert!(AdtsConfig::from_audio_specific_config(&[0x11, 0x80]).is_err());
        // Object type 42 (USAC) via the escape.
        assert!(AdtsConfig::from_audio_specific_config(&[0xF9, 0x46, 0x40]).is_err());
        // Explicit rate off the table (50 kHz); on the table (48 kHz) it maps to its index.
        assert!(AdtsConfig::from_audio_specific_config(&[0x17, 0x80, 0x61, 0xA8, 0x10]).is_err());
        let explicit = [0x17, 0x80, 0x5D, 0xC0, 0x10];
        assert_eq!(
            AdtsConfig::from_audio_specific_config(&explicit).map(|c| c.frequency_index),
            Ok(3)
        );
        assert!(AdtsConfig::from_audio_specific_config(&[]).is_err());
        assert!(AdtsConfig::from_audio_specific_config(&[0x11]).is_err());
    }
}
