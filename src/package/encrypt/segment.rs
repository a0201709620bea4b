//! A media segment's Common Encryption worked out in one call: from its clear header, its
//! samples' sizes and, for video, the NAL units a scan of its payload found
//! ([`NalScanner`](super::NalScanner)), the protected header (`senc`, `saiz`, `saio`) and
//! how each sample's bytes are encrypted as they stream (`crypto::SampleEncryptor`).
//! The caller does the scan's I/O; nothing here reads the source.

use std::ops::Range;

use super::boxes::{protect_segment_header, SampleEntryFormat, TrackProtection};
use super::nal::{max_subsamples, video_subsamples, Nal};
use super::{cenc_sample_iv, ProtectError};
use crate::crypto::cipher::SampleMode;
use crate::crypto::{SampleLayout, Scheme, Subsample};

/// An encrypted media segment's header and the encryption of its samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentEncryption {
    /// The header with its protection boxes.
    pub header: Vec<u8>,
    /// CTR (`cenc`) or the CBC pattern (`cbcs`).
    pub mode: SampleMode,
    /// Per sample, its IV and clear/protected spans.
    pub layouts: Vec<SampleLayout>,
}

/// The encryption of the segment whose clear header is `header`, holding samples `samples`
/// (0-based in the track, of sizes `sizes`) of track `track_id` protected as `tp`; `nals`
/// are its video samples' NAL units (empty for audio), `iv_base` the version's `cenc` IV
/// base (`iv_base`).
///
/// # Errors
/// [`ProtectError`] for a layout that cannot be written (too many subsamples, a slice
/// header past its unit, a header not as our writer makes it).
pub fn encrypt_segment(
    header: &[u8],
    tp: &TrackProtection,
    (track_id, samples): (u32, Range<usize>),
    sizes: &[u32],
    nals: &[Vec<Nal>],
    iv_base: u64,
) -> Result<SegmentEncryption, ProtectError> {
    let subsamples: Vec<Vec<Subsample>> = match tp.format {
        SampleEntryFormat::Nal(format) => {
            let max = max_subsamples(tp.iv_size());
            nals.iter()
                .map(|n| video_subsamples(n, format, tp.scheme, max, track_id))
                .collect::<Result<_, ProtectError>>()?
        }
        SampleEntryFormat::Audio => Vec::new(),
    };
    let ivs: Vec<[u8; 16]> = samples
        .map(|i| match tp.scheme {
            Scheme::Cbcs => tp.constant_iv,
            _ => cenc_sample_iv(iv_base, track_id, i as u64),
        })
        .collect();
    let header = protect_segment_header(header, tp, &ivs, &subsamples)?;
    let layouts = (ivs.iter().zip(sizes).enumerate())
        .map(|(k, (iv, size))| SampleLayout {
            iv: *iv,
            subsamples: match subsamples.get(k) {
                Some(subs) => subs.clone(),
                None => vec![Subsample {
                    clear: 0,
                    protected: *size,
                }],
            },
        })
        .collect();
    let mode = match tp.scheme {
        Scheme::Cbcs => {
            let (crypt, skip) = tp.pattern();
            SampleMode::CbcPattern { crypt, skip }
        }
        _ => SampleMode::Ctr,
    };
    Ok(SegmentEncryption {
        header,
        mode,
        layouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keys::ContentKey;
    use crate::media::TrackKind;
    use crate::package::prepare_media_segment;

    /// An audio segment is encrypted whole sample by sample: one protected span per sample,
    /// the `cenc` IVs counted by sample in the track, `cbcs` the constant IV and every
    /// block; the header is the one the box writer makes from those IVs.
    #[test]
    fn an_audio_segment_encrypts_whole_samples_with_the_schemes_ivs() {
        let (title, _) = crate::package::fmp4::tests::fixture("h264-aac-3s.mp4", 1000);
        let pos = (title.index.tracks.iter())
            .position(|t| t.kind == TrackKind::Audio)
            .unwrap();
        let track = &title.index.tracks[pos];
        let clear = prepare_media_segment(&title.index, &title.plan, pos, 1).unwrap();
        let samples = title.plan.tracks[pos].samples(1).unwrap();
        let sizes = &track.samples.sizes[samples.clone()];
        for scheme in [Scheme::Cenc, Scheme::Cbcs] {
            let tp = TrackProtection {
                scheme,
                key: ContentKey {
                    kid: [0x11; 16],
                    key: [0x22; 16],
                    systems: Vec::new(),
                },
                constant_iv: [0x33; 16],
                other_kids: Vec::new(),
                format: SampleEntryFormat::Audio,
            };
            let track_samples = (track.track_id, samples.clone());
            let sealed = encrypt_segment(&clear.header, &tp, track_samples, sizes, &[], 7).unwrap();
            assert_eq!(sealed.layouts.len(), sizes.len());
            for (k, (layout, size)) in sealed.layouts.iter().zip(sizes).enumerate() {
                let iv = match scheme {
                    Scheme::Cbcs => [0x33; 16],
                    _ => cenc_sample_iv(7, track.track_id, (samples.start + k) as u64),
                };
                assert_eq!(layout.iv, iv);
                assert_eq!(
                    layout.subsamples,
                    [Subsample {
                        clear: 0,
                        protected: *size
                    }]
                );
            }
            let ivs: Vec<[u8; 16]> = sealed.layouts.iter().map(|l| l.iv).collect();
            let header = protect_segment_header(&clear.header, &tp, &ivs, &[]).unwrap();
            assert_eq!(sealed.header, header);
            let mode = match scheme {
                Scheme::Cbcs => SampleMode::CbcPattern { crypt: 0, skip: 0 },
                _ => SampleMode::Ctr,
            };
            assert_eq!(sealed.mode, mode);
        }
    }
}
