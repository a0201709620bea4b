//! What HLS says about accessibility: `CHARACTERISTICS` of audio that describes
//! the video and of subtitles for the deaf and hard of hearing (RFC 8216 4.4.6.1, Apple's
//! UTIs), and closed captions carried in the video as `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS`
//! with `CLOSED-CAPTIONS` on every variant, or `CLOSED-CAPTIONS=NONE` on every variant
//! when none are declared, so players offer no caption track that is not there (iOS shows
//! a CC button for any video variant that does not say NONE).

use std::fmt::Write as _;

use super::attrs::Attrs;
use crate::media::AudioRole;
use crate::package::signalling::ManifestOptions;
use crate::package::{Rendition, SidecarSubtitle, Title};

/// `GROUP-ID` of the closed-caption renditions.
pub(super) const CLOSED_CAPTIONS_GROUP: &str = "cc";
/// Apple's characteristic of audio description.
pub(super) const DESCRIBES_VIDEO: &str = "public.accessibility.describes-video";
/// Apple's characteristics of SDH subtitles.
pub(super) const SDH: &str =
    "public.accessibility.transcribes-spoken-dialog,public.accessibility.describes-music-and-sound";

/// `CHARACTERISTICS` of an audio rendition: `describes-video` for audio description.
/// Commentary, dub and main have no Apple characteristic; their NAME says it.
pub(super) fn audio_characteristics(attrs: Attrs, audio: &Rendition) -> Attrs {
    match audio.roles.contains(&AudioRole::Description) {
        true => attrs.quoted("CHARACTERISTICS", DESCRIBES_VIDEO),
        false => attrs,
    }
}

/// `CHARACTERISTICS` of a sidecar subtitle rendition marked `"sdh"`.
pub(super) fn subtitle_characteristics(attrs: Attrs, sidecar: &SidecarSubtitle) -> Attrs {
    match sidecar.sdh {
        true => attrs.quoted("CHARACTERISTICS", SDH),
        false => attrs,
    }
}

/// `#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS` for each declared channel (no URI: the captions
/// are in the video), the first `DEFAULT=YES` as at most one in a group may be.
pub(super) fn closed_caption_renditions(out: &mut String, title: &Title) {
    for (n, caption) in title.closed_captions.iter().enumerate() {
        let mut attrs = Attrs::default()
            .plain("TYPE", "CLOSED-CAPTIONS")
            .quoted("GROUP-ID", CLOSED_CAPTIONS_GROUP)
            .quoted("NAME", &caption.name);
        if let Some(language) = caption.language.as_deref() {
            attrs = attrs.quoted("LANGUAGE", language);
        }
        let default = if n == 0 { "YES" } else { "NO" };
        attrs = (attrs.plain("DEFAULT", default).plain("AUTOSELECT", "YES"))
            .quoted("INSTREAM-ID", caption.channel);
        let _ = writeln!(out, "#EXT-X-MEDIA:{}", attrs.0);
    }
}

/// `CLOSED-CAPTIONS` of a video variant: the group when captions are declared, else
/// `NONE` (4.4.6.2: then every variant must say NONE, which every video variant does).
pub(super) fn closed_captions_attribute(attrs: Attrs, title: &Title) -> Attrs {
    match title.closed_captions.is_empty() {
        true => attrs.plain("CLOSED-CAPTIONS", "NONE"),
        false => attrs.quoted("CLOSED-CAPTIONS", CLOSED_CAPTIONS_GROUP),
    }
}

/// Whether a subtitle rendition is left in the manifest, so variants name the group.
pub(super) fn has_subtitles(title: &Title, options: &ManifestOptions) -> bool {
    let texts = title.index.text_tracks.iter().map(|t| t.track_id);
    let sidecars = title.sidecars.iter().map(|s| s.track_id);
    texts.chain(sidecars).any(|id| !options.left_out(id))
}
