//! Keys by usage: which content key each track of a title is encrypted with, as AWS SPEKE
//! v2's presets split a title (`PRESET-VIDEO-1` to `8`, `PRESET-AUDIO-1` to `3`, `SHARED`,
//! `UNENCRYPTED`), so a device licensed for SD never holds the HD key and a leaked audio
//! key shows no picture.
//!
//! A [`KeyPresets`] (the `key-presets` setting, or a title document's `"key_presets"`)
//! names a [`KeyUsage`] per track from its kind and its picture size or channel count;
//! each usage is one key. The default, `SHARED` for both, is the one key per title vodpack
//! always had ([`KeyUsage::All`]), so its keys, KIDs, outputs and URLs are unchanged.
//! Tiers are by pixels as SPEKE v2 defines them: SD up to 1024x576 (589,824 pixels), HD up
//! to 1920x1080, UHD1 up to 4096x2160, UHD2 above; HD1 up to 1280x720, HD2 above it.

use std::fmt;

/// Most pixels of an SD picture (1024x576).
pub const SD_MAX_PIXELS: u32 = 1024 * 576;
/// Most pixels of an HD1 picture (1280x720).
pub const HD1_MAX_PIXELS: u32 = 1280 * 720;
/// Most pixels of an HD picture (1920x1080).
pub const HD_MAX_PIXELS: u32 = 1920 * 1080;
/// Most pixels of a UHD1 picture (4096x2160).
pub const UHD1_MAX_PIXELS: u32 = 4096 * 2160;

/// What a content key is for: the tracks it encrypts. Its [`KeyUsage::name`] is SPEKE v2's
/// key name, sent as `ContentKeyUsageRule@intendedTrackType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyUsage {
    /// Every track (`SHARED`): the one key of a title, as before presets.
    All,
    /// Every video track (`PRESET-VIDEO-1`).
    Video,
    /// Video up to 1024x576.
    Sd,
    /// Video up to 1280x720 (`PRESET-VIDEO-7` and `8`: SD and HD1 under one key).
    SdHd1,
    /// Video above SD (`PRESET-VIDEO-2`), or above SD up to 1920x1080.
    Hd,
    /// Video above SD up to 1280x720.
    Hd1,
    /// Video above 1280x720 up to 1920x1080.
    Hd2,
    /// Video above 1920x1080.
    Uhd,
    /// Video above 1920x1080 up to 4096x2160.
    Uhd1,
    /// Video above 4096x2160.
    Uhd2,
    /// Every audio track (`PRESET-AUDIO-1`).
    Audio,
    /// Audio of one or two channels.
    StereoAudio,
    /// Audio of three channels or more (`PRESET-AUDIO-2`).
    MultichannelAudio,
    /// Audio of three to six channels (`PRESET-AUDIO-3`).
    MultichannelAudio3To6,
    /// Audio of seven channels or more (`PRESET-AUDIO-3`).
    MultichannelAudio7,
}

/// What a usage covers, as CPIX 2.3's `VideoFilter`/`AudioFilter` say it (inclusive
/// bounds; `None`: unbounded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageFilter {
    /// Every track.
    Any,
    /// Video tracks of `min_pixels..=max_pixels`.
    Video {
        /// Fewest pixels.
        min_pixels: Option<u32>,
        /// Most pixels.
        max_pixels: Option<u32>,
    },
    /// Audio tracks of `min_channels..=max_channels`.
    Audio {
        /// Fewest channels.
        min_channels: Option<u16>,
        /// Most channels.
        max_channels: Option<u16>,
    },
}

impl KeyUsage {
    /// SPEKE v2's key name (`intendedTrackType`).
    pub fn name(self) -> &'static str {
        match self {
            KeyUsage::All => "ALL",
            KeyUsage::Video => "VIDEO",
            KeyUsage::Sd => "SD",
            KeyUsage::SdHd1 => "SD+HD1",
            KeyUsage::Hd => "HD",
            KeyUsage::Hd1 => "HD1",
            KeyUsage::Hd2 => "HD2",
            KeyUsage::Uhd => "UHD",
            KeyUsage::Uhd1 => "UHD1",
            KeyUsage::Uhd2 => "UHD2",
            KeyUsage::Audio => "AUDIO",
            KeyUsage::StereoAudio => "STEREO_AUDIO",
            KeyUsage::MultichannelAudio => "MULTICHANNEL_AUDIO",
            KeyUsage::MultichannelAudio3To6 => "MULTICHANNEL_AUDIO_3_6",
            KeyUsage::MultichannelAudio7 => "MULTICHANNEL_AUDIO_7",
        }
    }

    /// The tracks this usage covers. `Hd` is bounded above only under a preset with a UHD
    /// key: under `PRESET-VIDEO-2` it covers everything above SD, so `upper_hd` says which.
    pub fn filter(self, hd_unbounded: bool) -> UsageFilter {
        let video = |min: Option<u32>, max: Option<u32>| UsageFilter::Video {
            min_pixels: min.map(|m| m + 1),
            max_pixels: max,
        };
        let audio = |min: Option<u16>, max: Option<u16>| UsageFilter::Audio {
            min_channels: min,
            max_channels: max,
        };
        match self {
            KeyUsage::All => UsageFilter::Any,
            KeyUsage::Video => video(None, None),
            KeyUsage::Sd => video(None, Some(SD_MAX_PIXELS)),
            KeyUsage::SdHd1 => video(None, Some(HD1_MAX_PIXELS)),
            KeyUsage::Hd if hd_unbounded => video(Some(SD_MAX_PIXELS), None),
            KeyUsage::Hd => video(Some(SD_MAX_PIXELS), Some(HD_MAX_PIXELS)),
            KeyUsage::Hd1 => video(Some(SD_MAX_PIXELS), Some(HD1_MAX_PIXELS)),
            KeyUsage::Hd2 => video(Some(HD1_MAX_PIXELS), Some(HD_MAX_PIXELS)),
            KeyUsage::Uhd => video(Some(HD_MAX_PIXELS), None),
            KeyUsage::Uhd1 => video(Some(HD_MAX_PIXELS), Some(UHD1_MAX_PIXELS)),
            KeyUsage::Uhd2 => video(Some(UHD1_MAX_PIXELS), None),
            KeyUsage::Audio => audio(None, None),
            KeyUsage::StereoAudio => audio(Some(1), Some(2)),
            KeyUsage::MultichannelAudio => audio(Some(3), None),
            KeyUsage::MultichannelAudio3To6 => audio(Some(3), Some(6)),
            KeyUsage::MultichannelAudio7 => audio(Some(7), None),
        }
    }
}

impl fmt::Display for KeyUsage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How video tracks are keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VideoPreset {
    /// One key with audio (`SHARED`).
    #[default]
    Shared,
    /// Video in the clear (`UNENCRYPTED`).
    Unencrypted,
    /// `PRESET-VIDEO-N`, N from 1 to 8.
    Preset(u8),
}

/// How audio tracks are keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AudioPreset {
    /// One key with video (`SHARED`).
    #[default]
    Shared,
    /// Audio in the clear (`UNENCRYPTED`).
    Unencrypted,
    /// `PRESET-AUDIO-N`, N from 1 to 3.
    Preset(u8),
}

/// A title's key split: a video and an audio preset, checked together as SPEKE v2 requires
/// (`SHARED` for both or neither; not both `UNENCRYPTED`; `UNENCRYPTED` not with
/// `SHARED`). The default is `SHARED` for both: one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyPresets {
    video: VideoPreset,
    audio: AudioPreset,
}

/// A kind of track, as a key split sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyedTrack {
    /// A video track of `width` x `height` coded pixels.
    Video {
        /// Coded width.
        width: u16,
        /// Coded height.
        height: u16,
    },
    /// An audio track of `channels` channels.
    Audio {
        /// Channel count (0 when the sample entry does not say: counted as stereo).
        channels: u16,
    },
}

impl KeyPresets {
    /// The one-key split (`SHARED`).
    pub const SHARED: KeyPresets = KeyPresets {
        video: VideoPreset::Shared,
        audio: AudioPreset::Shared,
    };

    /// Parse `video=PRESET-VIDEO-N,audio=PRESET-AUDIO-N` (either may be `SHARED` or
    /// `UNENCRYPTED`; case-insensitive). A side left out is `PRESET-VIDEO-1` or
    /// `PRESET-AUDIO-1` (one key for it), unless the other is `SHARED`.
    ///
    /// # Errors
    /// The reason, for a name that is no preset or a pair SPEKE v2 does not allow.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut video = None;
        let mut audio = None;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (side, value) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not video=PRESET or audio=PRESET"))?;
            let value = value.trim().to_ascii_uppercase();
            match side.trim().to_ascii_lowercase().as_str() {
                "video" if video.is_none() => video = Some(parse_video(&value)?),
                "audio" if audio.is_none() => audio = Some(parse_audio(&value)?),
                "video" | "audio" => return Err(format!("{} is given twice", side.trim())),
                other => return Err(format!("unknown side {other:?}: video or audio")),
            }
        }
        let presets = match (video, audio) {
            (None, None) => return Err("names no preset".into()),
            (Some(VideoPreset::Shared), None) => Self::SHARED,
            (None, Some(AudioPreset::Shared)) => Self::SHARED,
            (video, audio) => KeyPresets {
                video: video.unwrap_or(VideoPreset::Preset(1)),
                audio: audio.unwrap_or(AudioPreset::Preset(1)),
            },
        };
        presets.check()?;
        Ok(presets)
    }

    fn check(self) -> Result<(), String> {
        match (self.video, self.audio) {
            (VideoPreset::Shared, AudioPreset::Shared) => Ok(()),
            (VideoPreset::Shared, _) | (_, AudioPreset::Shared) => {
                Err("SHARED is one key for audio and video: give it for both".into())
            }
            (VideoPreset::Unencrypted, AudioPreset::Unencrypted) => {
                Err("UNENCRYPTED for both encrypts nothing: use --encryption none".into())
            }
            _ => Ok(()),
        }
    }

    /// Whether this is the one-key split (the default).
    pub fn is_shared(self) -> bool {
        self == Self::SHARED
    }

    /// The setting's text, as `parse` reads it (`video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1`).
    pub fn name(self) -> String {
        let video = match self.video {
            VideoPreset::Shared => "SHARED".to_owned(),
            VideoPreset::Unencrypted => "UNENCRYPTED".to_owned(),
            VideoPreset::Preset(n) => format!("PRESET-VIDEO-{n}"),
        };
        let audio = match self.audio {
            AudioPreset::Shared => "SHARED".to_owned(),
            AudioPreset::Unencrypted => "UNENCRYPTED".to_owned(),
            AudioPreset::Preset(n) => format!("PRESET-AUDIO-{n}"),
        };
        format!("video={video},audio={audio}")
    }

    /// The video usages of the preset, smallest pictures first.
    fn video_usages(self) -> &'static [KeyUsage] {
        use KeyUsage::*;
        match self.video {
            VideoPreset::Shared => &[All],
            VideoPreset::Unencrypted => &[],
            VideoPreset::Preset(1) => &[Video],
            VideoPreset::Preset(2) => &[Sd, Hd],
            VideoPreset::Preset(3) => &[Sd, Hd, Uhd],
            VideoPreset::Preset(4) => &[Sd, Hd, Uhd1, Uhd2],
            VideoPreset::Preset(5) => &[Sd, Hd1, Hd2, Uhd1, Uhd2],
            VideoPreset::Preset(6) => &[Sd, Hd1, Hd2, Uhd],
            VideoPreset::Preset(7) => &[SdHd1, Hd2, Uhd],
            VideoPreset::Preset(_) => &[SdHd1, Hd2, Uhd1, Uhd2],
        }
    }

    /// The audio usages of the preset, fewest channels first.
    fn audio_usages(self) -> &'static [KeyUsage] {
        use KeyUsage::*;
        match self.audio {
            AudioPreset::Shared => &[All],
            AudioPreset::Unencrypted => &[],
            AudioPreset::Preset(1) => &[Audio],
            AudioPreset::Preset(2) => &[StereoAudio, MultichannelAudio],
            AudioPreset::Preset(_) => &[StereoAudio, MultichannelAudio3To6, MultichannelAudio7],
        }
    }

    /// Every usage the split defines, video first, each once: the keys a key server is
    /// asked for, whether or not a title has a track of each (as SPEKE v2 encoders ask).
    pub fn usages(self) -> Vec<KeyUsage> {
        let mut out: Vec<KeyUsage> = self.video_usages().to_vec();
        for usage in self.audio_usages() {
            if !out.contains(usage) {
                out.push(*usage);
            }
        }
        out
    }

    /// What `usage` covers under this split (its CPIX filter).
    pub fn filter(self, usage: KeyUsage) -> UsageFilter {
        usage.filter(self.video == VideoPreset::Preset(2))
    }

    /// The CPIX filters of `usage`'s `ContentKeyUsageRule`, one per sub-component of its
    /// name (SPEKE v2: `SD+HD1` has an SD and an HD1 `VideoFilter`), so their union is
    /// [`KeyPresets::filter`]'s. `ALL` has an empty `VideoFilter` and `AudioFilter`.
    pub fn rule_filters(self, usage: KeyUsage) -> Vec<UsageFilter> {
        match usage {
            KeyUsage::All => vec![
                UsageFilter::Video {
                    min_pixels: None,
                    max_pixels: None,
                },
                UsageFilter::Audio {
                    min_channels: None,
                    max_channels: None,
                },
            ],
            KeyUsage::SdHd1 => vec![self.filter(KeyUsage::Sd), self.filter(KeyUsage::Hd1)],
            usage => vec![self.filter(usage)],
        }
    }

    /// The usage (so the key) of `track`; `None`: the split leaves it clear
    /// (`UNENCRYPTED`). An I-frame track is its video track's picture, so takes its key.
    pub fn usage_of(self, track: KeyedTrack) -> Option<KeyUsage> {
        let within = |f: UsageFilter| match (f, track) {
            (UsageFilter::Any, _) => true,
            (
                UsageFilter::Video {
                    min_pixels,
                    max_pixels,
                },
                KeyedTrack::Video { width, height },
            ) => {
                let pixels = u32::from(width) * u32::from(height);
                min_pixels.is_none_or(|m| pixels >= m) && max_pixels.is_none_or(|m| pixels <= m)
            }
            (
                UsageFilter::Audio {
                    min_channels,
                    max_channels,
                },
                KeyedTrack::Audio { channels },
            ) => {
                let channels = channels.max(1);
                min_channels.is_none_or(|m| channels >= m)
                    && max_channels.is_none_or(|m| channels <= m)
            }
            _ => false,
        };
        let usages = match track {
            KeyedTrack::Video { .. } => self.video_usages(),
            KeyedTrack::Audio { .. } => self.audio_usages(),
        };
        usages.iter().copied().find(|u| within(self.filter(*u)))
    }
}

fn parse_video(value: &str) -> Result<VideoPreset, String> {
    match value {
        "SHARED" => Ok(VideoPreset::Shared),
        "UNENCRYPTED" => Ok(VideoPreset::Unencrypted),
        _ => match value.strip_prefix("PRESET-VIDEO-").map(str::parse::<u8>) {
            Some(Ok(n @ 1..=8)) => Ok(VideoPreset::Preset(n)),
            _ => Err(format!(
                "unknown video preset {value:?}: PRESET-VIDEO-1 to 8, SHARED or UNENCRYPTED"
            )),
        },
    }
}

fn parse_audio(value: &str) -> Result<AudioPreset, String> {
    match value {
        "SHARED" => Ok(AudioPreset::Shared),
        "UNENCRYPTED" => Ok(AudioPreset::Unencrypted),
        _ => match value.strip_prefix("PRESET-AUDIO-").map(str::parse::<u8>) {
            Some(Ok(n @ 1..=3)) => Ok(AudioPreset::Preset(n)),
            _ => Err(format!(
                "unknown audio preset {value:?}: PRESET-AUDIO-1 to 3, SHARED or UNENCRYPTED"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn video(width: u16, height: u16) -> KeyedTrack {
        KeyedTrack::Video { width, height }
    }

    fn presets(text: &str) -> KeyPresets {
        KeyPresets::parse(text).unwrap()
    }

    #[test]
    fn the_default_is_one_shared_key_for_every_track() {
        let shared = KeyPresets::default();
        assert!(shared.is_shared());
        assert_eq!(shared.usages(), vec![KeyUsage::All]);
        assert_eq!(shared.usage_of(video(3840, 2160)), Some(KeyUsage::All));
        assert_eq!(
            shared.usage_of(KeyedTrack::Audio { channels: 6 }),
            Some(KeyUsage::All)
        );
        assert_eq!(presets("video=shared,audio=SHARED"), shared);
        assert_eq!(presets("video=SHARED"), shared);
    }

    #[test]
    fn preset_video_3_splits_sd_hd_and_uhd_at_speke_v2_s_bounds() {
        let p = presets("video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1");
        assert_eq!(p.usage_of(video(640, 360)), Some(KeyUsage::Sd));
        assert_eq!(p.usage_of(video(1024, 576)), Some(KeyUsage::Sd));
        assert_eq!(p.usage_of(video(1024, 578)), Some(KeyUsage::Hd));
        assert_eq!(p.usage_of(video(1920, 1080)), Some(KeyUsage::Hd));
        assert_eq!(p.usage_of(video(1920, 1088)), Some(KeyUsage::Uhd));
        assert_eq!(p.usage_of(video(3840, 2160)), Some(KeyUsage::Uhd));
        assert_eq!(
            p.usage_of(KeyedTrack::Audio { channels: 2 }),
            Some(KeyUsage::Audio)
        );
        assert_eq!(
            p.usages(),
            vec![KeyUsage::Sd, KeyUsage::Hd, KeyUsage::Uhd, KeyUsage::Audio]
        );
        assert_eq!(p.name(), "video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1");
    }

    #[test]
    fn preset_video_2_s_hd_key_covers_uhd_too() {
        let p = presets("video=PRESET-VIDEO-2");
        assert_eq!(p.usage_of(video(7680, 4320)), Some(KeyUsage::Hd));
        assert_eq!(
            p.filter(KeyUsage::Hd),
            UsageFilter::Video {
                min_pixels: Some(SD_MAX_PIXELS + 1),
                max_pixels: None
            }
        );
        let p3 = presets("video=PRESET-VIDEO-3");
        assert_eq!(
            p3.filter(KeyUsage::Hd),
            UsageFilter::Video {
                min_pixels: Some(589_825),
                max_pixels: Some(2_073_600)
            }
        );
    }

    #[test]
    fn every_video_preset_keys_every_picture_exactly_once() {
        for n in 1..=8 {
            let p = presets(&format!("video=PRESET-VIDEO-{n}"));
            for (w, h) in [
                (320, 180),
                (1280, 720),
                (1281, 720),
                (1920, 1080),
                (4096, 2160),
            ]
            .into_iter()
            .chain([(4097, 2160), (7680, 4320)])
            {
                let usage = p.usage_of(video(w, h));
                assert!(usage.is_some(), "PRESET-VIDEO-{n} leaves {w}x{h} clear");
                let pixels = u32::from(w) * u32::from(h);
                let covering = (p.usages().into_iter())
                    .filter(|u| {
                        matches!(p.filter(*u), UsageFilter::Video { min_pixels, max_pixels }
                            if min_pixels.is_none_or(|m| pixels >= m)
                                && max_pixels.is_none_or(|m| pixels <= m))
                    })
                    .count();
                assert_eq!(covering, 1, "PRESET-VIDEO-{n} {w}x{h}");
            }
        }
        let p8 = presets("video=PRESET-VIDEO-8");
        assert_eq!(p8.usage_of(video(1280, 720)), Some(KeyUsage::SdHd1));
        assert_eq!(p8.usage_of(video(4096, 2160)), Some(KeyUsage::Uhd1));
        assert_eq!(p8.usage_of(video(7680, 4320)), Some(KeyUsage::Uhd2));
    }

    #[test]
    fn audio_presets_split_by_channels_and_unencrypted_leaves_a_side_clear() {
        let p = presets("video=PRESET-VIDEO-1,audio=PRESET-AUDIO-3");
        let audio = |channels| p.usage_of(KeyedTrack::Audio { channels });
        assert_eq!(audio(0), Some(KeyUsage::StereoAudio));
        assert_eq!(audio(2), Some(KeyUsage::StereoAudio));
        assert_eq!(audio(6), Some(KeyUsage::MultichannelAudio3To6));
        assert_eq!(audio(8), Some(KeyUsage::MultichannelAudio7));
        let clear_audio = presets("video=PRESET-VIDEO-2,audio=UNENCRYPTED");
        assert_eq!(
            clear_audio.usage_of(KeyedTrack::Audio { channels: 2 }),
            None
        );
        assert_eq!(clear_audio.usages(), vec![KeyUsage::Sd, KeyUsage::Hd]);
    }

    #[test]
    fn pairs_speke_v2_forbids_and_unknown_names_are_refused() {
        for bad in [
            "",
            "video=SHARED,audio=PRESET-AUDIO-1",
            "video=UNENCRYPTED,audio=UNENCRYPTED",
            "video=UNENCRYPTED,audio=SHARED",
            "video=PRESET-VIDEO-9",
            "video=PRESET-VIDEO-0",
            "audio=PRESET-AUDIO-4",
            "video=PRESET-VIDEO-1,video=PRESET-VIDEO-2",
            "picture=PRESET-VIDEO-1",
            "PRESET-VIDEO-1",
        ] {
            assert!(KeyPresets::parse(bad).is_err(), "{bad:?}");
        }
    }
}
