//! Manifest filters: `?max_bandwidth=`, `?max_height=`, `?video_codecs=`,
//! `?audio_languages=` and `?subtitle_languages=` on an entry manifest, which offer a
//! device the subset of a title it can take.
//!
//! A filter only decides which track ids an entry manifest leaves out
//! ([`ManifestFilter::left_out`]); every name, number and URL of what stays is the
//! unfiltered manifest's, so a CDN caches each segment once whatever filter a player asked
//! for. Parsing the query is here too, so the values and their bounds are written down once.

use std::borrow::Cow;

use super::{Rendition, Title};
use crate::media::TrackKind;

/// The query parameters of a filter.
pub const FILTER_PARAMS: [&str; 5] = [
    "max_bandwidth",
    "max_height",
    "video_codecs",
    "audio_languages",
    "subtitle_languages",
];

/// Largest `max_bandwidth` accepted, bits per second (1 Tbit/s: anything above is a typo).
pub const MAX_BANDWIDTH_LIMIT: u64 = 1_000_000_000_000;
/// Largest `max_height` accepted, pixels (16K; no codec vodpack serves goes beyond 8K).
pub const MAX_HEIGHT_LIMIT: u32 = 16_384;
/// Most items in one list parameter.
const MAX_ITEMS: usize = 32;
/// Longest item of a list parameter, bytes.
const MAX_ITEM_BYTES: usize = 64;

/// Why a filter cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A value that is not what the parameter takes (400).
    #[error("{param}: {reason}")]
    BadValue { param: &'static str, reason: String },
    /// A parameter given more than once (400): which one counts would be a guess.
    #[error("{param}: given more than once")]
    Repeated { param: &'static str },
    /// The filter leaves a title nothing to play (422): no video of a title that has
    /// video, no audio of a title that has audio.
    #[error("the filter leaves no {what} rendition")]
    NothingLeft { what: &'static str },
}

impl FilterError {
    /// Whether the request itself is malformed (400), rather than the filter leaving this
    /// title nothing to play (422).
    pub fn is_malformed(&self) -> bool {
        !matches!(self, FilterError::NothingLeft { .. })
    }
}

/// A parsed filter; every field `None` or empty is "no limit".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestFilter {
    /// Variants up to this peak bandwidth, bits per second: a video rendition's with the
    /// largest audio rendition left in (HLS `BANDWIDTH`), an audio-only title's audio.
    pub max_bandwidth: Option<u64>,
    /// Video renditions up to this coded height (HLS `RESOLUTION`, DASH `@height`).
    pub max_height: Option<u32>,
    /// Video renditions whose codec starts with one of these (lowercase), see
    /// [`codec_matches`].
    pub video_codecs: Vec<String>,
    /// Audio renditions in one of these languages (lowercase primary subtags).
    pub audio_languages: Vec<String>,
    /// Subtitles in one of these languages (lowercase primary subtags).
    pub subtitle_languages: Vec<String>,
}

impl ManifestFilter {
    /// The filter in `query` (a URL's query string, without `?`), or `None` when it names
    /// no filter parameter. Other parameters (a signed URL's `token`) are left alone.
    ///
    /// # Errors
    /// [`FilterError::BadValue`] for an empty, non-numeric, out-of-range or malformed
    /// value; [`FilterError::Repeated`] for a parameter given twice.
    pub fn from_query(query: Option<&str>) -> Result<Option<Self>, FilterError> {
        let Some(query) = query else {
            return Ok(None);
        };
        let mut filter = Self::default();
        let mut seen = [false; FILTER_PARAMS.len()];
        for pair in query.split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let Some(at) = FILTER_PARAMS.iter().position(|p| *p == name) else {
                continue;
            };
            let param = FILTER_PARAMS.get(at).copied().unwrap_or("filter");
            let bad = |reason: &str| FilterError::BadValue {
                param,
                reason: reason.to_owned(),
            };
            if let Some(seen) = seen.get_mut(at) {
                if *seen {
                    return Err(FilterError::Repeated { param });
                }
                *seen = true;
            }
            let value: Cow<'_, str> = percent_encoding::percent_decode_str(value)
                .decode_utf8()
                .map_err(|_| bad("is not UTF-8"))?;
            if value.is_empty() {
                return Err(bad("is empty"));
            }
            match param {
                "max_bandwidth" => {
                    let n = whole_number(&value, MAX_BANDWIDTH_LIMIT).ok_or_else(|| {
                        bad(&format!(
                            "must be bits per second, a whole number from 1 to {MAX_BANDWIDTH_LIMIT}"
                        ))
                    })?;
                    filter.max_bandwidth = Some(n);
                }
                "max_height" => {
                    let n = whole_number(&value, u64::from(MAX_HEIGHT_LIMIT)).ok_or_else(|| {
                        bad(&format!(
                            "must be pixels, a whole number from 1 to {MAX_HEIGHT_LIMIT}"
                        ))
                    })?;
                    filter.max_height = u32::try_from(n).ok();
                }
                "video_codecs" => {
                    let ok = |c: char| c.is_ascii_alphanumeric() || c == '.';
                    filter.video_codecs = list(&value, ok)
                        .map_err(|r| bad(&format!("{r} (codec prefixes such as avc1,hvc1)")))?;
                }
                _ => {
                    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-';
                    let codes = list(&value, ok)
                        .map_err(|r| bad(&format!("{r} (language codes such as en,fr)")))?;
                    if codes.iter().any(|c| !primary_subtag_ok(c)) {
                        return Err(bad("a language code starts with 2 to 8 letters"));
                    }
                    let codes = codes.iter().map(|c| primary(c).to_owned()).collect();
                    match param {
                        "audio_languages" => filter.audio_languages = codes,
                        _ => filter.subtitle_languages = codes,
                    }
                }
            }
        }
        Ok((filter != Self::default()).then_some(filter))
    }

    /// The track ids (renditions, text tracks, sidecar files) an entry manifest of `title`
    /// leaves out under this filter, ascending.
    ///
    /// # Errors
    /// [`FilterError::NothingLeft`] when no video rendition of a title with video, or no
    /// audio rendition of a title with audio, is left.
    pub fn left_out(&self, title: &Title) -> Result<Vec<u32>, FilterError> {
        let (videos, audios): (Vec<&Rendition>, Vec<&Rendition>) =
            (title.renditions.iter()).partition(|r| r.kind == TrackKind::Video);
        let mut out = Vec::new();
        let language_of = |r: &Rendition| {
            let track = title.index.tracks.get(r.track_pos);
            track.and_then(|t| t.language.clone())
        };
        let audio_only = videos.is_empty();
        let kept_audio: Vec<&Rendition> = (audios.iter().copied())
            .filter(|a| in_languages(&self.audio_languages, language_of(a).as_deref()))
            .filter(|a| !audio_only || self.max_bandwidth.is_none_or(|m| a.peak_bandwidth <= m))
            .collect();
        if !audios.is_empty() && kept_audio.is_empty() {
            return Err(FilterError::NothingLeft { what: "audio" });
        }
        out.extend(
            (audios.iter())
                .filter(|a| !kept_audio.contains(a))
                .map(|a| a.track_id),
        );
        let audio_peak = kept_audio
            .iter()
            .map(|a| a.peak_bandwidth)
            .max()
            .unwrap_or(0);
        let keeps_video = |v: &Rendition| {
            let Some(codec) = title.index.tracks.get(v.track_pos).map(|t| &t.codec) else {
                return false;
            };
            let height_ok = self.max_height.is_none_or(|m| u32::from(codec.height) <= m);
            let bandwidth = v.peak_bandwidth.saturating_add(audio_peak);
            let bandwidth_ok = self.max_bandwidth.is_none_or(|m| bandwidth <= m);
            let supplemental = codec.supplemental_dolby_vision().map(|dv| dv.codec());
            let codec_ok = self.video_codecs.is_empty()
                || (self.video_codecs.iter()).any(|want| {
                    codec_matches(want, &codec.rfc6381)
                        || supplemental
                            .as_deref()
                            .is_some_and(|s| codec_matches(want, s))
                });
            height_ok && bandwidth_ok && codec_ok
        };
        let dropped_videos: Vec<u32> = (videos.iter())
            .filter(|v| !keeps_video(v))
            .map(|v| v.track_id)
            .collect();
        if !videos.is_empty() && dropped_videos.len() == videos.len() {
            return Err(FilterError::NothingLeft { what: "video" });
        }
        out.extend(dropped_videos);
        let texts = (title.index.text_tracks.iter()).map(|t| (t.track_id, t.language.clone()));
        let sidecars = (title.sidecars.iter()).map(|s| (s.track_id, s.language.clone()));
        for (track_id, language) in texts.chain(sidecars) {
            if !in_languages(&self.subtitle_languages, language.as_deref()) {
                out.push(track_id);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

/// Whether codec string `codec` (RFC 6381, `avc1.64001f`) is of the family `want` names:
/// `want` is a prefix of it (case-insensitive), or `want` is a sample entry whose twin
/// carries the same codec with parameter sets in band (`avc1`/`avc3`, `hvc1`/`hev1`,
/// `dvh1`/`dvhe`), so a device that asks for HEVC as `hvc1` gets `hev1` streams too.
pub fn codec_matches(want: &str, codec: &str) -> bool {
    let codec = codec.to_ascii_lowercase();
    if codec.starts_with(want) {
        return true;
    }
    const TWINS: [[&str; 2]; 3] = [["avc1", "avc3"], ["hvc1", "hev1"], ["dvh1", "dvhe"]];
    let (family, rest) = want.split_at(want.len().min(4));
    (TWINS.iter()).any(|twins| {
        twins.contains(&family)
            && (twins.iter()).any(|twin| codec.starts_with(&format!("{twin}{rest}")))
    })
}

/// Whether a track in `language` passes a language list (`[]`: any language). A track
/// without a language passes only an empty list.
fn in_languages(wanted: &[String], language: Option<&str>) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let Some(language) = language.filter(|l| !l.is_empty()) else {
        return false;
    };
    let have = primary(language).to_ascii_lowercase();
    (wanted.iter()).any(|want| super::view::same_language(want, &have))
}

/// The primary subtag of a language tag, lowercase (`pt-BR` -> `pt`).
fn primary(tag: &str) -> &str {
    tag.split(['-', '_']).next().unwrap_or(tag)
}

fn primary_subtag_ok(tag: &str) -> bool {
    let first = primary(tag);
    (2..=8).contains(&first.len()) && first.chars().all(|c| c.is_ascii_alphabetic())
}

/// `text` as a comma list of 1 to [`MAX_ITEMS`] items of 1 to [`MAX_ITEM_BYTES`] bytes of
/// characters `ok` allows, lowercased.
fn list(text: &str, ok: impl Fn(char) -> bool) -> Result<Vec<String>, String> {
    let items: Vec<&str> = text.split(',').collect();
    if items.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} items"));
    }
    (items.into_iter())
        .map(|item| {
            if item.is_empty() || item.len() > MAX_ITEM_BYTES || !item.chars().all(&ok) {
                return Err(format!(
                    "{:?} is not an item of 1 to {MAX_ITEM_BYTES} letters, digits or dots/dashes",
                    item.chars().take(MAX_ITEM_BYTES).collect::<String>()
                ));
            }
            Ok(item.to_ascii_lowercase())
        })
        .collect()
}

/// A decimal whole number from 1 to `max`, digits only.
fn whole_number(text: &str, max: u64) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = text.parse().ok()?;
    (1..=max).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    //! Manifest filters over a synthetic title: the query's values and their bounds, which
    //! renditions each filter leaves out, and the manifests that leave them out without
    //! renaming or renumbering what stays.

    use super::*;
    use crate::media::{AudioRole, CaptionChannel, ClosedCaption};
    use crate::package::testing::{text, title, track};
    use crate::package::{render_mpd_with, render_multivariant_playlist_with, ManifestOptions};

    /// Video 1 (320x180 avc1), video 3 (1280x720 hvc1), audio 2 (eng), audio 4 (fra,
    /// description), text 5 (eng) and text 6 (deu).
    fn ladder() -> Title {
        let mut hevc = track(3, true);
        hevc.codec.rfc6381 = "hvc1.1.6.L93.B0".into();
        hevc.codec.height = 720;
        hevc.codec.width = 1280;
        hevc.samples.sizes.iter_mut().for_each(|s| *s *= 3);
        let mut french = track(4, false);
        french.language = Some("fra".into());
        let mut title = title(|_| true, vec![hevc, french]);
        title.index.text_tracks = vec![text(5, Some("eng")), text(6, Some("deu"))];
        for rendition in &mut title.renditions {
            if rendition.track_id == 4 {
                rendition.roles = vec![AudioRole::Description];
            }
        }
        title
    }

    fn parse(query: &str) -> Result<Option<ManifestFilter>, FilterError> {
        ManifestFilter::from_query(Some(query))
    }

    fn left_out(query: &str) -> Result<Vec<u32>, FilterError> {
        parse(query)?.expect("a filter").left_out(&ladder())
    }

    #[test]
    fn filter_values_are_parsed_and_bounded() {
        assert_eq!(parse("token=abc&x=1"), Ok(None));
        assert_eq!(ManifestFilter::from_query(None), Ok(None));
        let f = parse("max_height=720&video_codecs=AVC1,hvc1&audio_languages=fr%2Cpt-BR&token=t")
            .unwrap()
            .unwrap();
        assert_eq!(f.max_height, Some(720));
        assert_eq!(f.video_codecs, ["avc1", "hvc1"]);
        assert_eq!(f.audio_languages, ["fr", "pt"]);
        for (query, message) in [
            ("max_height=", "max_height: is empty"),
            ("max_height", "max_height: is empty"),
            (
                "max_height=abc",
                "max_height: must be pixels, a whole number from 1 to 16384",
            ),
            ("max_height=0", "max_height: must be pixels"),
            ("max_height=-5", "max_height: must be pixels"),
            ("max_height=99999", "max_height: must be pixels"),
            (
                "max_bandwidth=1e6",
                "max_bandwidth: must be bits per second",
            ),
            (
                "max_bandwidth=99999999999999999999999",
                "max_bandwidth: must be bits per second",
            ),
            (
                "video_codecs=avc1,,hvc1",
                "video_codecs: \"\" is not an item",
            ),
            ("video_codecs=av<1", "video_codecs: \"av<1\" is not an item"),
            (
                "audio_languages=e",
                "audio_languages: a language code starts with 2 to 8 letters",
            ),
            ("subtitle_languages=%FF", "subtitle_languages: is not UTF-8"),
            (
                "max_height=1&max_height=2",
                "max_height: given more than once",
            ),
        ] {
            let e = parse(query).unwrap_err();
            assert!(e.is_malformed(), "{query}");
            assert!(e.to_string().starts_with(message), "{query}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
        let many = format!("audio_languages={}", ["en"; 33].join(","));
        assert!(parse(&many)
            .unwrap_err()
            .to_string()
            .contains("more than 32"));
    }

    #[test]
    fn each_filter_leaves_out_exactly_what_does_not_match() {
        assert_eq!(left_out("max_height=180"), Ok(vec![3]));
        assert_eq!(left_out("max_height=720"), Ok(vec![]));
        assert_eq!(left_out("video_codecs=hvc1"), Ok(vec![1]));
        assert_eq!(
            left_out("video_codecs=hev1"),
            Ok(vec![1]),
            "hev1 is hvc1's twin"
        );
        assert_eq!(left_out("video_codecs=avc1.64"), Ok(vec![3]));
        assert_eq!(left_out("video_codecs=avc1,hvc1"), Ok(vec![]));
        assert_eq!(left_out("audio_languages=fr"), Ok(vec![2]));
        assert_eq!(left_out("audio_languages=en,fra"), Ok(vec![]));
        assert_eq!(left_out("subtitle_languages=de"), Ok(vec![5]));
        assert_eq!(left_out("subtitle_languages=ja"), Ok(vec![5, 6]));
        // Bandwidth counts the largest audio left in, as the variant's BANDWIDTH does.
        let title = ladder();
        let peak = |id: u32| title.rendition(id).unwrap().peak_bandwidth;
        let low = peak(1) + peak(2).max(peak(4));
        assert_eq!(left_out(&format!("max_bandwidth={low}")), Ok(vec![3]));
        let nothing = Err(FilterError::NothingLeft { what: "video" });
        assert_eq!(left_out(&format!("max_bandwidth={}", low - 1)), nothing);
        assert_eq!(left_out("video_codecs=vp09"), nothing);
        assert_eq!(left_out("max_height=100"), nothing);
        assert_eq!(
            left_out("audio_languages=ja"),
            Err(FilterError::NothingLeft { what: "audio" })
        );
        assert!(!FilterError::NothingLeft { what: "audio" }.is_malformed());
    }

    /// The URIs of a playlist: its URI lines and `URI="..."` attributes.
    fn uris(playlist: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in playlist.lines() {
            if !line.starts_with('#') {
                out.push(line.to_owned());
            }
            for rest in line.split("URI=\"").skip(1) {
                out.push(rest[..rest.find('"').unwrap()].to_owned());
            }
        }
        out
    }

    /// Given a filter, then the multivariant playlist and the MPD lose exactly the lines and
    /// elements of what it leaves out, and every other line is the unfiltered one's.
    #[test]
    fn filtered_manifests_only_drop_lines() {
        let mut title = ladder();
        title.closed_captions = vec![ClosedCaption {
            channel: CaptionChannel::Cea608(1),
            language: Some("en".into()),
            name: "English".into(),
        }];
        let all = ManifestOptions::default();
        let options = ManifestOptions {
            filtered: vec![2, 3, 6],
            ..ManifestOptions::default()
        };
        let full = render_multivariant_playlist_with(&title, &all);
        let filtered = render_multivariant_playlist_with(&title, &options);
        let full_uris = uris(&full);
        assert!(
            uris(&filtered).iter().all(|u| full_uris.contains(u)),
            "{filtered}"
        );
        for gone in [
            "index-t3.m3u8",
            "iframes-t3.m3u8",
            "index-t2.m3u8",
            "index-t6.m3u8",
        ] {
            assert!(
                full.contains(gone) && !filtered.contains(gone),
                "{gone}: {filtered}"
            );
        }
        for kept in [
            "index-t1.m3u8",
            "iframes-t1.m3u8",
            "index-t4.m3u8",
            "index-t5.m3u8",
        ] {
            assert!(filtered.contains(kept), "{kept}: {filtered}");
        }
        // The audio left becomes the default; its NAME and CHARACTERISTICS stay.
        let french = filtered
            .lines()
            .find(|l| l.contains("index-t4.m3u8"))
            .unwrap();
        assert!(french.contains("DEFAULT=YES"), "{french}");
        assert!(french.contains(r#"CHARACTERISTICS="public.accessibility.describes-video""#));
        assert!(filtered.contains("CLOSED-CAPTIONS=\"cc\""), "{filtered}");

        let full = render_mpd_with(&title, &all);
        let mpd = render_mpd_with(&title, &options);
        assert!(
            !mpd.contains("id=\"t3\"") && full.contains("id=\"t3\""),
            "{mpd}"
        );
        assert!(!mpd.contains("id=\"ifr-t3\"") && full.contains("id=\"ifr-t3\""));
        assert!(!mpd.contains("id=\"t2\"") && !mpd.contains("id=\"t6\""));
        // Every AdaptationSet left keeps its unfiltered id and start tag; with one set per
        // rendition (a plain file), t2, t3, t6 and t3's trick-play set go.
        let sets = |m: &str| -> Vec<String> {
            (m.lines())
                .filter(|l| l.contains("<AdaptationSet"))
                .map(str::to_owned)
                .collect()
        };
        let full_sets = sets(&full);
        assert!(sets(&mpd).iter().all(|s| full_sets.contains(s)), "{mpd}");
        assert_eq!(sets(&mpd).len() + 4, full_sets.len(), "{mpd}");
    }

    /// Given a title whose default audio describes the video, then HLS makes the first other
    /// audio the default, and with no other audio left keeps the described one.
    #[test]
    fn audio_description_is_never_the_default_while_another_is_offered() {
        let mut title = ladder();
        for rendition in &mut title.renditions {
            rendition.roles = match rendition.track_id {
                2 => vec![AudioRole::Description],
                _ => Vec::new(),
            };
        }
        let default_of = |options: &ManifestOptions| -> Vec<String> {
            let master = render_multivariant_playlist_with(&title, options);
            (master.lines())
                .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=AUDIO") && l.contains("DEFAULT=YES"))
                .map(|l| l[l.find("URI=").unwrap()..].to_owned())
                .collect()
        };
        assert_eq!(
            default_of(&ManifestOptions::default()),
            ["URI=\"v0000000000000000/index-t4.m3u8\""]
                .map(String::from)
                .map(|s| s.replace(
                    "v0000000000000000/",
                    &crate::package::version_folder(&title.version_token())
                ))
        );
        let only_described = ManifestOptions {
            filtered: vec![4],
            ..ManifestOptions::default()
        };
        assert_eq!(default_of(&only_described).len(), 1);
        assert!(default_of(&only_described)[0].contains("index-t2.m3u8"));
    }
}
