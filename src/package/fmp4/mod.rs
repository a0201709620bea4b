//! Fragmented MP4 (CMAF) writers: init segments and media segment headers.
//!
//! Both are synchronous functions over the index and the plan; neither reads the source.

mod init;
mod segment;
mod writer;

pub use init::init_segment;
pub use segment::{
    media_segment_header_len, prepare_media_segment, prepare_sample_fragment, PreparedSegment,
};

#[cfg(test)]
pub(crate) mod tests {
    //! Every box we write is decoded back with mp4-atom and compared with the source.
    use super::*;
    use crate::media::{parse_index, MediaIndex, MediaLimits};
    use crate::package::Title;
    use crate::source::ObjectIdentity;
    use mp4_atom::{Decode, Ftyp, Moof, Moov};

    fn fixture_title(name: &str) -> Title {
        fixture(name, 1000).0
    }

    /// The title of fixture `name` cut at `target_ms`, and the file's bytes: shared by the
    /// tests of the package writers (fMP4, trick play, protection).
    pub(crate) fn fixture(name: &str, target_ms: u32) -> (Title, Vec<u8>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let file = std::fs::read(path).unwrap();
        // Walk top-level boxes to moov (the fixtures use 32-bit sizes).
        let mut pos = 0usize;
        let moov = loop {
            let size = u32::from_be_bytes(file[pos..pos + 4].try_into().unwrap()) as usize;
            if &file[pos + 4..pos + 8] == b"moov" {
                break bytes::Bytes::copy_from_slice(&file[pos..pos + size]);
            }
            pos += size;
        };
        let identity = ObjectIdentity {
            size: file.len() as u64,
            version: "test".into(),
        };
        let index: MediaIndex = parse_index(identity, &moov, &MediaLimits::default()).unwrap();
        (Title::new(index, target_ms).unwrap(), file)
    }

    #[test]
    fn init_segments_decode_with_the_source_sample_entry() {
        let title = fixture_title("h264-aac-2lang-3s.mp4");
        for track in &title.index.tracks {
            let init = init_segment(track);
            let mut buf = &init[..];
            let ftyp = Ftyp::decode(&mut buf).unwrap();
            assert_eq!(ftyp.major_brand, b"iso6".into());
            let moov = Moov::decode(&mut buf).unwrap();
            assert!(buf.is_empty());
            let trak = &moov.trak[0];
            assert_eq!(trak.tkhd.track_id, track.track_id);
            assert_eq!(trak.mdia.mdhd.timescale, track.timescale);
            assert_eq!(
                trak.mdia.mdhd.language,
                track.language.clone().unwrap_or("und".into())
            );
            let trex = &moov.mvex.as_ref().unwrap().trex[0];
            assert_eq!(trex.track_id, track.track_id);
            // The sample description is the source's, byte for byte.
            let stsd_at = init
                .windows(4)
                .position(|w| w == b"stsd")
                .unwrap()
                .checked_sub(4)
                .unwrap();
            assert_eq!(
                &init[stsd_at..stsd_at + track.sample_description.len()],
                &track.sample_description[..]
            );
        }
    }

    #[test]
    fn media_segment_headers_decode_and_describe_their_samples() {
        let title = fixture_title("h264-bframes-editlist-aac.mp4");
        for (pos, track) in title.index.tracks.iter().enumerate() {
            let plan = &title.plan.tracks[pos];
            for segment in 0..title.plan.segment_count {
                let prepared =
                    prepare_media_segment(&title.index, &title.plan, pos, segment).unwrap();
                let mut buf = &prepared.header[..];
                let moof = Moof::decode(&mut buf).unwrap();
                // What is left is exactly the mdat header announcing the payload.
                assert_eq!(buf.len(), 8);
                assert_eq!(&buf[4..8], b"mdat");
                let mdat_len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as u64;
                assert_eq!(mdat_len, prepared.payload_bytes + 8);
                assert_eq!(moof.mfhd.sequence_number, segment as u32 + 1);
                let traf = &moof.traf[0];
                assert_eq!(traf.tfhd.track_id, track.track_id);
                let range = plan.samples(segment).unwrap();
                assert_eq!(
                    traf.tfdt.as_ref().unwrap().base_media_decode_time,
                    plan.output_dts(&track.samples, range.start)
                );
                let trun = &traf.trun[0];
                assert_eq!(
                    trun.data_offset,
                    Some(prepared.header.len() as i32),
                    "data offset points just past the mdat header"
                );
                let entries: Vec<_> = trun.samples.iter().collect();
                assert_eq!(entries.len(), range.len());
                for (entry, i) in entries.iter().zip(range.clone()) {
                    assert_eq!(entry.size, Some(track.samples.sizes[i]));
                    assert_eq!(entry.duration, Some(track.samples.durations[i]));
                    if !track.samples.cts_offsets.is_empty() {
                        let expected =
                            i64::from(track.samples.cts_offsets[i]) - i64::from(plan.cts_base);
                        assert_eq!(entry.cts, Some(expected));
                    }
                }
                let payload: u64 = track.samples.sizes[range.clone()]
                    .iter()
                    .map(|s| u64::from(*s))
                    .sum();
                assert_eq!(prepared.payload_bytes, payload);
                assert_eq!(prepared.ranges.iter().map(|r| r.len).sum::<u64>(), payload);
            }
        }
    }
}
