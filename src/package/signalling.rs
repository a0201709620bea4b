//! What a manifest says beyond its title, as plain data the HLS and DASH writers take: the
//! version folder its URIs name, a query every URI carries (a signed URL's token), whether
//! trick play is offered, renditions held back, and the protection it signals (the key's
//! method, URI and IVs in HLS; `ContentProtection` and the licence URL in DASH).
//!
//! [`ManifestOptions::default`] is the clear output, written as it always was. The writers
//! place each piece where it belongs as they write, so nothing edits rendered text.

use std::borrow::Cow;
use std::sync::Arc;

use super::thumb::Storyboard;
use super::{version_folder, Title, VersionToken};
pub use crate::config::{DashProfile, DashSubtitleFormat};
use crate::crypto::keys::ContentKey;
use crate::crypto::Scheme;

/// What a manifest says beyond its title. The default is the clear output.
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    /// The version token of the folder versioned URIs name (`v{token}/`); `None` is the
    /// title's own ([`Title::version_token`]). An encrypted output lives in a folder of
    /// its own, so its URLs never meet the clear ones in a cache.
    pub version: Option<VersionToken>,
    /// A query appended to every URI, without `?` (`token=...`): a signed URL's token
    /// carried on, so the resources a manifest names pass the same check.
    pub query: Option<String>,
    /// Whether trick play is offered: I-frame playlists in multivariant playlists, and
    /// the DASH trick-play sets. Its key frames are served clear only, so an encrypted
    /// output leaves it out.
    pub trick_play: bool,
    /// Renditions (by track id) the MPEG-TS multivariant playlist leaves out: their
    /// variants and `EXT-X-MEDIA` tags go, and nothing else changes (the rates and codecs
    /// of the rest stay as they were). SAMPLE-AES leaves out what it does not cover.
    pub withheld: Vec<u32>,
    /// Track ids (renditions, text tracks, sidecar files) a manifest filter leaves out of
    /// an entry manifest (`filter.rs`), ascending: their tags and elements go, and what
    /// stays keeps its names and numbers.
    pub filtered: Vec<u32>,
    /// The protection to signal; `None` is clear.
    pub protection: Option<ManifestProtection>,
    /// The storyboard to signal (DASH-IF thumbnails in the MPD, an image playlist in
    /// HLS); `None`: not signalled (the setting is off, the title has no video, or the
    /// output is encrypted).
    pub storyboard: Option<Storyboard>,
    /// The rules the MPD is written by (the server's `--dash-profile`, or a title
    /// document's own). Not part of [`ManifestOptions::is_clear`]: an MPD of either
    /// profile depends on the title alone, so each may be kept with it.
    pub dash_profile: DashProfile,
    /// How the MPD offers text tracks (the `dash-subtitle-format` setting; a profile that
    /// requires one form, such as DVB's IMSC1, sets it). A server-wide choice, the same
    /// for every request, so the clear MPD kept with a title stays right: it is not part
    /// of [`ManifestOptions::is_clear`].
    pub dash_subtitles: DashSubtitleFormat,
}

impl ManifestOptions {
    /// The form DASH text sets take: the setting's, except in the DVB profile, which has
    /// subtitles only as EBU-TT-D (IMSC1 Text Profile) segments (TS 103 285 7.1).
    pub fn dash_text_format(&self) -> DashSubtitleFormat {
        match self.dash_profile {
            DashProfile::Dvb => DashSubtitleFormat::Imsc1,
            DashProfile::Default => self.dash_subtitles,
        }
    }
}

impl Default for ManifestOptions {
    fn default() -> Self {
        Self {
            version: None,
            query: None,
            trick_play: true,
            withheld: Vec::new(),
            filtered: Vec::new(),
            protection: None,
            storyboard: None,
            dash_profile: DashProfile::Default,
            dash_subtitles: DashSubtitleFormat::default(),
        }
    }
}

/// The protection a manifest signals.
///
/// HLS: `EXT-X-SESSION-KEY` in multivariant playlists and `EXT-X-KEY` in media playlists,
/// by method (`encrypt::manifest::HlsKey`: AES-128 with an IV per segment, SAMPLE-AES
/// MPEG-TS with one IV per rendition, SAMPLE-AES `cbcs` fMP4 with W3C ClearKey and a line
/// per DRM system of the key). DASH: `ContentProtection` in each audio and video
/// AdaptationSet.
#[derive(Debug, Clone)]
pub struct ManifestProtection {
    /// The scheme of the output.
    pub scheme: Scheme,
    /// The title's key: its KID is signalled, its DRM systems' `pssh` data go in the MPD.
    pub key: Arc<ContentKey>,
    /// The clear version token: HLS IVs derive from it and the KID (`encrypt::hls_*_iv`),
    /// as the encrypted segments' do.
    pub clear_token: VersionToken,
    /// The HLS key resource's name (`hls.key`): relative in media playlists (they live in
    /// the version folder), under the version folder in multivariant playlists.
    pub key_name: String,
    /// The W3C ClearKey licence URL (HLS SAMPLE-AES over fMP4, and DASH), absolute.
    pub licence_url: String,
    /// Whether W3C ClearKey is signalled (HLS SAMPLE-AES over fMP4, and DASH); the key's
    /// DRM systems (`ContentKey::systems`) are signalled beside it.
    pub clearkey: bool,
    /// Under a key split (`crypto::KeyPresets`), each audio and video track's key by track
    /// id, `None` for a track the split leaves clear; empty under the default split, where
    /// every track has `key`.
    pub track_keys: Vec<(u32, Option<Arc<ContentKey>>)>,
}

impl ManifestProtection {
    /// The key track `track_id` is encrypted with; `None`: it is clear.
    pub fn key_of(&self, track_id: u32) -> Option<&Arc<ContentKey>> {
        if self.track_keys.is_empty() {
            return Some(&self.key);
        }
        (self.track_keys.iter())
            .find(|(t, _)| *t == track_id)
            .and_then(|(_, k)| k.as_ref())
    }

    /// The licence URI an HLS `EXT-X-KEY` of `key` names (SAMPLE-AES CMAF with ClearKey):
    /// the licence URL, and under a key split the KID as a query (`?kid=HEX`, which the
    /// licence route ignores) so each key has a URI of its own. hls.js keeps one key
    /// session per key URI: with one URI for an audio and a video key it asks the licence
    /// for the first only, and the other track never decrypts.
    pub fn hls_licence_uri(&self, key: &ContentKey) -> Cow<'_, str> {
        if self.track_keys.is_empty() {
            return Cow::Borrowed(&self.licence_url);
        }
        Cow::Owned(format!(
            "{}?kid={}",
            self.licence_url,
            crate::crypto::keys::hex(&key.kid)
        ))
    }

    /// Every key a track uses, each once, in track order (`key` alone under the default
    /// split): what a multivariant playlist's `EXT-X-SESSION-KEY` lines name.
    pub fn keys_in_use(&self) -> Vec<&Arc<ContentKey>> {
        if self.track_keys.is_empty() {
            return vec![&self.key];
        }
        let mut keys: Vec<&Arc<ContentKey>> = Vec::new();
        for key in self.track_keys.iter().filter_map(|(_, k)| k.as_ref()) {
            if !keys.iter().any(|k| k.kid == key.kid) {
                keys.push(key);
            }
        }
        keys
    }
}

impl ManifestOptions {
    /// Whether these are the default options, the DASH profile aside: the clear rendering
    /// (of that profile), which depends on the title alone (and may be cached with it), is
    /// the answer.
    pub fn is_clear(&self) -> bool {
        self.version.is_none()
            && self.query.is_none()
            && self.trick_play
            && self.withheld.is_empty()
            && self.filtered.is_empty()
            && self.protection.is_none()
            && self.storyboard.is_none()
    }

    /// Whether a manifest filter leaves out track `track_id`.
    pub(super) fn left_out(&self, track_id: u32) -> bool {
        self.filtered.binary_search(&track_id).is_ok()
    }

    /// The version folder of the title's versioned URIs, `v{token}/`.
    pub(super) fn folder(&self, title: &Title) -> String {
        match &self.version {
            Some(token) => version_folder(token),
            None => version_folder(&title.version_token()),
        }
    }

    /// `uri` with the query, after `?` (or `&` when it has one already).
    pub(super) fn with_query<'u>(&self, uri: &'u str) -> Cow<'u, str> {
        match &self.query {
            None => Cow::Borrowed(uri),
            Some(query) => {
                let sep = if uri.contains('?') { '&' } else { '?' };
                Cow::Owned(format!("{uri}{sep}{query}"))
            }
        }
    }

    /// `value`, an escaped XML attribute value or element text, with the query (its `&`
    /// escaped), after `?` (or `&amp;` when it has one already).
    pub(super) fn with_xml_query<'u>(&self, value: &'u str) -> Cow<'u, str> {
        match &self.query {
            None => Cow::Borrowed(value),
            Some(query) => {
                let sep = if value.contains('?') { "&amp;" } else { "?" };
                Cow::Owned(format!("{value}{sep}{}", query.replace('&', "&amp;")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! What the writers say for each option, as small stories over the synthetic titles.

    use std::sync::Arc;

    use super::{DashProfile, ManifestOptions, ManifestProtection};
    use crate::crypto::keys::{hex, ContentKey};
    use crate::crypto::Scheme;
    use crate::package::encrypt::hls_segment_iv;
    use crate::package::testing::{fixture_title, text, title};
    use crate::package::ts::TsTitle;
    use crate::package::*;

    const PROTECTED: &str = "0123456789abcdef";

    /// The options of an encrypted output of `title` in `scheme`, its URLs signed.
    fn protected(title: &Title, scheme: Scheme) -> ManifestOptions {
        ManifestOptions {
            version: VersionToken::parse(PROTECTED),
            query: Some("token=t&u".into()),
            trick_play: false,
            withheld: Vec::new(),
            filtered: Vec::new(),
            dash_subtitles: DashSubtitleFormat::default(),
            protection: Some(ManifestProtection {
                scheme,
                key: Arc::new(ContentKey {
                    kid: [0x11; 16],
                    key: [0x22; 16],
                    systems: Vec::new(),
                }),
                clear_token: title.version_token(),
                key_name: "hls.key".into(),
                licence_url: "https://cdn.example/vod/a.mp4/clearkey.json".into(),
                clearkey: true,
                track_keys: Vec::new(),
            }),
            storyboard: None,
            dash_profile: DashProfile::Default,
        }
    }

    /// Given AES-128, then each segment of a media playlist has its own `EXT-X-KEY` after
    /// `EXT-X-MAP` (the init segment stays clear), with the IV the segment is encrypted with,
    /// and every URI, the key's included, carries the token.
    #[test]
    fn aes_128_keys_every_segment_after_the_map_with_its_own_iv() {
        let title = title(|_| true, Vec::new());
        let options = protected(&title, Scheme::Aes128);
        let text = render_media_playlist_with(&title, &title.renditions[0], &options);
        let lines: Vec<&str> = text.lines().collect();
        let map = lines
            .iter()
            .position(|l| l.starts_with("#EXT-X-MAP"))
            .unwrap();
        assert_eq!(lines[map], "#EXT-X-MAP:URI=\"init-t1.mp4?token=t&u\"");
        let keys: Vec<usize> = (0..lines.len())
            .filter(|k| lines[*k].starts_with("#EXT-X-KEY:"))
            .collect();
        assert_eq!(keys.len(), title.plan.segment_count);
        for (n, k) in (1u64..).zip(&keys) {
            assert!(*k > map, "the init segment stays clear");
            let iv = hls_segment_iv(&title.version_token(), &[0x11; 16], 1, n);
            let expected = format!(
                "#EXT-X-KEY:METHOD=AES-128,URI=\"hls.key?token=t&u\",IV=0x{}",
                hex(&iv)
            );
            assert_eq!(lines[k + 2], format!("seg-t1-{n}.m4s?token=t&u"));
            assert_eq!(lines[*k], expected);
        }
    }

    /// Given SAMPLE-AES over fMP4, then one `EXT-X-KEY` names the ClearKey licence and the
    /// KID before the first segment, with no IV (`cbcs` carries its own).
    #[test]
    fn sample_aes_fmp4_names_the_licence_once() {
        let title = title(|_| true, Vec::new());
        let options = protected(&title, Scheme::Cbcs);
        let text = render_media_playlist_with(&title, &title.renditions[1], &options);
        let keys: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("#EXT-X-KEY:"))
            .collect();
        assert_eq!(
        keys,
        ["#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"https://cdn.example/vod/a.mp4/clearkey.json?token=t&u\",\
          KEYFORMAT=\"org.w3.clearkey\",KEYFORMATVERSIONS=\"1\",KEYID=0x11111111111111111111111111111111"]
    );
        let first = text.find("#EXTINF").unwrap();
        assert!(text.find("#EXT-X-KEY").unwrap() < first);
    }

    /// Given an encrypted output, then the multivariant playlist names its own version
    /// folder, offers the key up front (`EXT-X-SESSION-KEY` after the header) and no I-frame
    /// playlist (trick play is clear only).
    #[test]
    fn protected_multivariant_playlists_offer_the_key_up_front_and_no_trick_play() {
        let title = title(|_| true, Vec::new());
        let clear = render_multivariant_playlist(&title);
        assert!(clear.contains("#EXT-X-I-FRAME-STREAM-INF"));
        let text = render_multivariant_playlist_with(&title, &protected(&title, Scheme::Aes128));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[3],
            "#EXT-X-SESSION-KEY:METHOD=AES-128,URI=\"v0123456789abcdef/hls.key?token=t&u\""
        );
        assert!(!text.contains("I-FRAME") && !text.contains(title.version_token().as_str()));
        assert!(lines.contains(&"v0123456789abcdef/index-t1.m3u8?token=t&u"));
    }

    /// Given an encrypted DASH output, then each audio and video set starts with its
    /// `ContentProtection` (the scheme, the KID, the licence carrying the token), the text
    /// sets have none, the trick-play set is gone, and every reference carries the token,
    /// escaped.
    #[test]
    fn protected_mpds_protect_audio_and_video_sets_only() {
        let mut title = title(|_| true, Vec::new());
        title.index.text_tracks = vec![text(3, Some("eng"))];
        let mpd = render_mpd_with(&title, &protected(&title, Scheme::Cenc));
        assert!(mpd.contains("<MPD xmlns:cenc=\"urn:mpeg:cenc:2013\" "));
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        assert_eq!(sets.len(), 3, "video, audio, text; no trick play");
        let mp4protection =
            "\n      <ContentProtection schemeIdUri=\"urn:mpeg:dash:mp4protection:2011\" \
         value=\"cenc\" cenc:default_KID=\"11111111-1111-1111-1111-111111111111\"/>\n";
        for set in &sets[..2] {
            let first = &set[set.find('>').unwrap() + 1..];
            assert!(first.starts_with(mp4protection), "{set}");
        }
        assert!(!sets[2].contains("ContentProtection"));
        assert!(mpd.contains(
        "<dashif:Laurl>https://cdn.example/vod/a.mp4/clearkey.json?token=t&amp;u</dashif:Laurl>"
    ));
        let folder = version_folder(&VersionToken::parse(PROTECTED).unwrap());
        assert!(mpd.contains(&format!(
            "initialization=\"{folder}init-$RepresentationID$.mp4?token=t&amp;u\""
        )));
        // Text stays clear, and is still listed, its segments signed as the rest.
        assert!(mpd.contains(&format!(
            "media=\"{folder}sub-$RepresentationID$-$Number$.m4s?token=t&amp;u\""
        )));
        assert!(sets[2].contains("codecs=\"wvtt\""));
    }

    /// Given SAMPLE-AES over MPEG-TS, then the key is signalled for TS (`hls.key`, no
    /// KEYFORMAT), an audio group that only names the muxed audio goes with the variants'
    /// reference to it, and a withheld rendition's variant goes while the rest stays.
    #[test]
    fn ts_sample_aes_drops_muxed_only_groups_and_withheld_renditions() {
        let title = fixture_title("h264-aac-3s.mp4", 1000);
        let ts = TsTitle::new(&title).unwrap();
        let clear = render_ts_multivariant_playlist(&title, &ts);
        assert!(clear.contains("#EXT-X-MEDIA:TYPE=AUDIO") && clear.contains("AUDIO=\"audio\""));
        let mut options = protected(&title, Scheme::Cbcs);
        let text = render_ts_multivariant_playlist_with(&title, &ts, &options);
        assert!(text.contains(
            "\n#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"v0123456789abcdef/hls.key?token=t&u\"\n"
        ));
        assert!(!text.contains("#EXT-X-MEDIA:TYPE=AUDIO") && !text.contains("AUDIO=\"audio\""));
        assert_eq!(text.matches("#EXT-X-STREAM-INF").count(), 1, "{text}");
        options.withheld = vec![ts.renditions[0].rendition.track_id];
        let text = render_ts_multivariant_playlist_with(&title, &ts, &options);
        assert!(!text.contains("#EXT-X-STREAM-INF"), "{text}");
    }

    /// Given the default options, then they are the clear output, the one a title's cache
    /// holds; any other option is not.
    #[test]
    fn only_the_default_options_are_the_cached_clear_output() {
        let title = title(|_| true, Vec::new());
        assert!(ManifestOptions::default().is_clear());
        let signed = ManifestOptions {
            query: Some("token=t".into()),
            ..ManifestOptions::default()
        };
        assert!(!signed.is_clear());
        assert!(!protected(&title, Scheme::Cenc).is_clear());
    }

    /// A key with FairPlay (a key URI), Widevine (a `pssh`) and PlayReady (a `pssh` and a
    /// PRO, and the key server's own media playlist line).
    fn drm_options(title: &Title) -> ManifestOptions {
        use crate::crypto::drm::{DrmSystem, FAIRPLAY, PLAYREADY, WIDEVINE};
        use crate::crypto::raw_drm::{playready_object, pssh_v0};
        let mut options = protected(title, Scheme::Cbcs);
        let p = options.protection.as_mut().unwrap();
        let pro = playready_object("<WRMHEADER/>");
        p.key = Arc::new(ContentKey {
            kid: [0x11; 16],
            key: [0x22; 16],
            systems: vec![
                DrmSystem {
                    hls_key_uri: Some("skd://keys/11".into()),
                    ..DrmSystem::new(FAIRPLAY)
                },
                DrmSystem {
                    pssh: Some(pssh_v0(&WIDEVINE, b"wv")),
                    ..DrmSystem::new(WIDEVINE)
                },
                DrmSystem {
                    pssh: Some(pssh_v0(&PLAYREADY, &pro)),
                    playready_pro: Some(pro),
                    hls_media: Some("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"pr-as-supplied\"".into()),
                    ..DrmSystem::new(PLAYREADY)
                },
            ],
        });
        p.clearkey = false;
        options
    }

    /// Given a SAMPLE-AES CMAF output signalled for FairPlay, Widevine and PlayReady without
    /// ClearKey, then the media playlist has one `EXT-X-KEY` per system after `EXT-X-MAP`
    /// and before the first segment (the key server's line as supplied), and the
    /// multivariant playlist one `EXT-X-SESSION-KEY` per system.
    #[test]
    fn sample_aes_cmaf_signals_each_drm_system() {
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let title = title(|_| true, Vec::new());
        let options = drm_options(&title);
        let key = options.protection.as_ref().unwrap().key.clone();
        let text = render_media_playlist_with(&title, &title.renditions[1], &options);
        let keys: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("#EXT-X-KEY:"))
            .collect();
        let widevine = format!(
        "METHOD=SAMPLE-AES,URI=\"data:text/plain;base64,{}\",KEYID=0x11111111111111111111111111111111,\
         KEYFORMAT=\"urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed\",KEYFORMATVERSIONS=\"1\"",
        b64(key.systems[1].pssh.as_deref().unwrap())
    );
        assert_eq!(
        keys,
        [
            "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://keys/11\",KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\"".to_owned(),
            format!("#EXT-X-KEY:{widevine}"),
            "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"pr-as-supplied\"".to_owned(),
        ]
    );
        let map = text.find("#EXT-X-MAP").unwrap();
        let first = text.find("#EXTINF").unwrap();
        assert!(
            map < text.find("#EXT-X-KEY").unwrap() && text.rfind("#EXT-X-KEY").unwrap() < first
        );
        let master = render_multivariant_playlist_with(&title, &options);
        let session: Vec<&str> = (master.lines())
            .filter(|l| l.starts_with("#EXT-X-SESSION-KEY:"))
            .collect();
        assert_eq!(session.len(), 3, "{master}");
        assert!(session[1].ends_with(&widevine));
        assert_eq!(
            session[2],
            format!(
            "#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"data:text/plain;charset=UTF-16;base64,{}\",\
             KEYFORMAT=\"com.microsoft.playready\",KEYFORMATVERSIONS=\"1\"",
            b64(key.systems[2].playready_pro.as_deref().unwrap())
        )
        );
        assert!(!master.contains("org.w3.clearkey") && !text.contains("org.w3.clearkey"));
    }

    /// Given the same key in DASH, then after `mp4protection` each system with data has its
    /// `ContentProtection`: Widevine's `cenc:pssh`, PlayReady's `cenc:pssh` and `mspr:pro`;
    /// FairPlay, with no `pssh`, has none, nor does ClearKey when not asked for.
    #[test]
    fn dash_signals_each_drm_system_with_its_pssh_and_pro() {
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let title = title(|_| true, Vec::new());
        let options = drm_options(&title);
        let key = options.protection.as_ref().unwrap().key.clone();
        let mpd = render_mpd_with(&title, &options);
        assert!(mpd.contains("xmlns:mspr=\"urn:microsoft:playready\""));
        let widevine = format!(
        "<ContentProtection schemeIdUri=\"urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed\" value=\"Widevine\">\n        <cenc:pssh>{}</cenc:pssh>\n",
        b64(key.systems[1].pssh.as_deref().unwrap())
    );
        let playready = format!(
        "<ContentProtection schemeIdUri=\"urn:uuid:9a04f079-9840-4286-ab92-e65be0885f95\" value=\"MSPR 2.0\">\n        <cenc:pssh>{}</cenc:pssh>\n        <mspr:pro>{}</mspr:pro>\n",
        b64(key.systems[2].pssh.as_deref().unwrap()),
        b64(key.systems[2].playready_pro.as_deref().unwrap())
    );
        let mp4 = mpd.find("urn:mpeg:dash:mp4protection:2011").unwrap();
        assert!(mp4 < mpd.find(&widevine).expect("widevine"));
        assert!(mpd.find(&widevine).unwrap() < mpd.find(&playready).expect("playready"));
        assert!(!mpd.contains("94ce86fb") && !mpd.contains("ClearKey1.0"));
    }
}
