//! The CPIX 2.3 request vodpack POSTs for a title: the KID it chose (a hash of the title
//! key, so every replica asks for the same one), the DRM systems it wants signalling for,
//! and, for SPEKE v2, the scheme and an encryption contract.

use sha2::{Digest, Sha256};

use super::{CpixMode, CpixOptions};
use crate::crypto::drm::{xml_escape, DrmId};
use crate::crypto::keys::uuid_string;
use crate::crypto::usage::{KeyPresets, KeyUsage, UsageFilter};

/// The KID vodpack asks the key server for, for `title_key`: a hash of it, so every
/// replica asks for the same one.
pub fn cpix_kid(title_key: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(b"vodpack cpix kid v1\0")
        .chain_update(title_key.as_bytes())
        .finalize();
    let mut kid = [0u8; 16];
    kid.copy_from_slice(&digest[..16]);
    // An RFC 4122 version-4 UUID, as key servers expect KIDs to look.
    kid[6] = (kid[6] & 0x0f) | 0x40;
    kid[8] = (kid[8] & 0x3f) | 0x80;
    kid
}

/// The KID vodpack asks the key server for, for `title_key`'s key of `usage`: under the
/// default split (`ALL`) [`cpix_kid`], as before; else the same hash with the usage's name
/// after a NUL, so each usage has its own, the same on every replica.
pub fn usage_kid(title_key: &str, usage: KeyUsage) -> [u8; 16] {
    if usage == KeyUsage::All {
        return cpix_kid(title_key);
    }
    let digest = Sha256::new()
        .chain_update(b"vodpack cpix kid v1\0")
        .chain_update(title_key.as_bytes())
        .chain_update(b"\0")
        .chain_update(usage.name().as_bytes())
        .finalize();
    let mut kid = [0u8; 16];
    kid.copy_from_slice(&digest[..16]);
    kid[6] = (kid[6] & 0x0f) | 0x40;
    kid[8] = (kid[8] & 0x3f) | 0x80;
    kid
}

/// A CPIX `VideoFilter` or `AudioFilter` element of `filter` (an empty one for
/// [`UsageFilter::Any`], never written: `ALL` has both).
fn filter_element(filter: UsageFilter) -> String {
    let bound = |name: &str, value: Option<String>| {
        value.map_or_else(String::new, |v| format!(" {name}=\"{v}\""))
    };
    match filter {
        UsageFilter::Video {
            min_pixels,
            max_pixels,
        } => format!(
            "<cpix:VideoFilter{}{}/>",
            bound("minPixels", min_pixels.map(|v| v.to_string())),
            bound("maxPixels", max_pixels.map(|v| v.to_string()))
        ),
        UsageFilter::Audio {
            min_channels,
            max_channels,
        } => format!(
            "<cpix:AudioFilter{}{}/>",
            bound("minChannels", min_channels.map(|v| v.to_string())),
            bound("maxChannels", max_channels.map(|v| v.to_string()))
        ),
        UsageFilter::Any => String::new(),
    }
}

/// The CPIX 2.3 request for the keys of `title_key` under the key split `presets`: one
/// `ContentKey` per usage (its KID [`usage_kid`]; SPEKE v2 adds its
/// `commonEncryptionScheme`), each DRM system of `options` asked per KID, and the
/// encryption contract: a `ContentKeyUsageRule` per key, `intendedTrackType` the usage's
/// SPEKE v2 name, with its `VideoFilter` (`minPixels`/`maxPixels`) or `AudioFilter`
/// (`minChannels`/`maxChannels`), one per sub-component of the name
/// ([`KeyPresets::rule_filters`]). Sent in both modes: CPIX 2.3 defines the rules, and a
/// key server must know which key is for which tracks to license them apart.
pub fn split_request_document(
    title_key: &str,
    presets: KeyPresets,
    options: &CpixOptions,
) -> String {
    let speke = options.mode == CpixMode::Speke2;
    let scheme = if speke {
        format!(" commonEncryptionScheme=\"{}\"", options.scheme.name())
    } else {
        String::new()
    };
    let keys: Vec<(KeyUsage, String)> = (presets.usages().into_iter())
        .map(|u| (u, uuid_string(&usage_kid(title_key, u))))
        .collect();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\n\
         \x20 <cpix:ContentKeyList>\n",
        xml_escape(title_key)
    );
    for (_, kid) in &keys {
        out.push_str(&format!("    <cpix:ContentKey kid=\"{kid}\"{scheme}/>\n"));
    }
    out.push_str("  </cpix:ContentKeyList>\n");
    if !options.systems.is_empty() {
        out.push_str("  <cpix:DRMSystemList>\n");
        for (_, kid) in &keys {
            for system in &options.systems {
                out.push_str(&format!(
                    "    <cpix:DRMSystem kid=\"{kid}\" systemId=\"{}\">{}</cpix:DRMSystem>\n",
                    uuid_string(system),
                    asked_fields(system, options.mode)
                ));
            }
        }
        out.push_str("  </cpix:DRMSystemList>\n");
    }
    out.push_str("  <cpix:ContentKeyUsageRuleList>\n");
    for (usage, kid) in &keys {
        let filters: String = (presets.rule_filters(*usage).into_iter())
            .map(filter_element)
            .collect();
        out.push_str(&format!(
            "    <cpix:ContentKeyUsageRule kid=\"{kid}\" intendedTrackType=\"{}\">{filters}</cpix:ContentKeyUsageRule>\n",
            usage.name()
        ));
    }
    out.push_str("  </cpix:ContentKeyUsageRuleList>\n</cpix:CPIX>\n");
    out
}

/// What vodpack asks of each DRM system, as the empty elements the key server fills:
/// its `pssh` (Widevine, PlayReady), PlayReady's header object, FairPlay's key URI (CPIX
/// only: SPEKE v2 deprecates `URIExtXKey`), and the HLS lines of both playlist kinds.
fn asked_fields(system: &[u8; 16], mode: CpixMode) -> String {
    let mut fields = String::new();
    let id = DrmId::of(system);
    if id != Some(DrmId::FairPlay) {
        fields.push_str("<cpix:PSSH/>");
    }
    if id == Some(DrmId::PlayReady) {
        fields.push_str("<cpix:SmoothStreamingProtectionHeaderData/>");
    }
    if id == Some(DrmId::FairPlay) && mode == CpixMode::Cpix {
        fields.push_str("<cpix:URIExtXKey/>");
    }
    fields.push_str(
        "<cpix:HLSSignalingData playlist=\"media\"/><cpix:HLSSignalingData playlist=\"master\"/>",
    );
    fields
}

/// The CPIX 2.3 request for `title_key`'s key `kid` and the signalling of `options`'
/// systems. SPEKE v2 (`CpixMode::Speke2`) adds what its profile requires: the key's
/// `commonEncryptionScheme`, and an encryption contract of one rule (`intendedTrackType`
/// `ALL` with an empty `VideoFilter` and `AudioFilter`: one key for every track).
pub fn request_document(title_key: &str, kid: &[u8; 16], options: &CpixOptions) -> String {
    let kid = uuid_string(kid);
    let speke = options.mode == CpixMode::Speke2;
    let scheme = if speke {
        format!(" commonEncryptionScheme=\"{}\"", options.scheme.name())
    } else {
        String::new()
    };
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"{}\" version=\"2.3\">\n\
         \x20 <cpix:ContentKeyList>\n    <cpix:ContentKey kid=\"{kid}\"{scheme}/>\n  </cpix:ContentKeyList>\n",
        xml_escape(title_key)
    );
    if !options.systems.is_empty() {
        out.push_str("  <cpix:DRMSystemList>\n");
        for system in &options.systems {
            out.push_str(&format!(
                "    <cpix:DRMSystem kid=\"{kid}\" systemId=\"{}\">{}</cpix:DRMSystem>\n",
                uuid_string(system),
                asked_fields(system, options.mode)
            ));
        }
        out.push_str("  </cpix:DRMSystemList>\n");
    }
    if speke {
        out.push_str(&format!(
            "  <cpix:ContentKeyUsageRuleList>\n    <cpix:ContentKeyUsageRule kid=\"{kid}\" intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>\n  </cpix:ContentKeyUsageRuleList>\n"
        ));
    }
    out.push_str("</cpix:CPIX>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::cpix::{PLAYREADY, WIDEVINE};
    use crate::crypto::policy::Scheme;
    use std::time::Duration;
    #[test]
    fn requests_name_the_title_kid_and_systems() {
        let kid = cpix_kid("a&b.mp4");
        let options = CpixOptions {
            url: "http://k/".into(),
            mode: CpixMode::Cpix,
            systems: vec![PLAYREADY],
            required: true,
            scheme: Scheme::Cbcs,
            timeout: Duration::from_secs(1),
            retries: 0,
            ttl: Duration::from_secs(1),
        };
        let doc = request_document("a&b.mp4", &kid, &options);
        assert!(doc.contains("contentId=\"a&amp;b.mp4\""));
        assert!(doc.contains(&format!("<cpix:ContentKey kid=\"{}\"/>", uuid_string(&kid))));
        assert!(doc.contains("systemId=\"9a04f079-9840-4286-ab92-e65be0885f95\""));
        assert_eq!(kid[6] >> 4, 4);
    }

    /// Given PRESET-VIDEO-8 and PRESET-AUDIO-3 in SPEKE v2, then the request has a key per
    /// usage, each DRM system asked per KID, and a usage rule per key with the preset's
    /// name and filters (`SD+HD1` with two `VideoFilter`s, one per sub-component).
    #[test]
    fn split_requests_carry_a_key_and_a_usage_rule_per_usage() {
        let options = CpixOptions {
            url: "http://k/".into(),
            mode: CpixMode::Speke2,
            systems: vec![WIDEVINE],
            required: true,
            scheme: Scheme::Cenc,
            timeout: Duration::from_secs(1),
            retries: 0,
            ttl: Duration::from_secs(1),
        };
        let presets = KeyPresets::parse("video=PRESET-VIDEO-8,audio=PRESET-AUDIO-3").unwrap();
        let doc = split_request_document("t.json", presets, &options);
        let kid = |u| uuid_string(&usage_kid("t.json", u));
        assert_eq!(doc.matches("<cpix:ContentKey ").count(), 7);
        assert_eq!(doc.matches("<cpix:DRMSystem ").count(), 7);
        assert!(doc.contains(&format!(
            "<cpix:ContentKey kid=\"{}\" commonEncryptionScheme=\"cenc\"/>",
            kid(KeyUsage::Uhd2)
        )));
        assert!(doc.contains(&format!(
            "<cpix:ContentKeyUsageRule kid=\"{}\" intendedTrackType=\"SD+HD1\"><cpix:VideoFilter maxPixels=\"589824\"/><cpix:VideoFilter minPixels=\"589825\" maxPixels=\"921600\"/></cpix:ContentKeyUsageRule>",
            kid(KeyUsage::SdHd1)
        )));
        assert!(doc.contains(
            "intendedTrackType=\"UHD1\"><cpix:VideoFilter minPixels=\"2073601\" maxPixels=\"8847360\"/>"
        ));
        assert!(doc.contains(&format!(
            "<cpix:ContentKeyUsageRule kid=\"{}\" intendedTrackType=\"MULTICHANNEL_AUDIO_3_6\"><cpix:AudioFilter minChannels=\"3\" maxChannels=\"6\"/></cpix:ContentKeyUsageRule>",
            kid(KeyUsage::MultichannelAudio3To6)
        )));
        assert_eq!(usage_kid("t.json", KeyUsage::All), cpix_kid("t.json"));
        assert_ne!(
            usage_kid("t.json", KeyUsage::Sd),
            usage_kid("t.json", KeyUsage::Hd)
        );
    }

    #[test]
    fn speke2_requests_carry_the_scheme_and_an_encryption_contract() {
        let kid = cpix_kid("a.mp4");
        let options = CpixOptions {
            url: "http://k/".into(),
            mode: CpixMode::Speke2,
            systems: vec![crate::crypto::drm::FAIRPLAY, WIDEVINE, PLAYREADY],
            required: true,
            scheme: Scheme::Cbcs,
            timeout: Duration::from_secs(1),
            retries: 0,
            ttl: Duration::from_secs(1),
        };
        let doc = request_document("a.mp4", &kid, &options);
        let k = uuid_string(&kid);
        assert!(doc.contains(&format!(
            "<cpix:ContentKey kid=\"{k}\" commonEncryptionScheme=\"cbcs\"/>"
        )));
        assert!(doc.contains(&format!(
            "<cpix:ContentKeyUsageRule kid=\"{k}\" intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"
        )));
        assert!(doc.contains("systemId=\"94ce86fb-07ff-4f43-adb8-93d2fa968ca2\"><cpix:HLSSignalingData playlist=\"media\"/>"));
        assert!(doc.contains("<cpix:PSSH/><cpix:SmoothStreamingProtectionHeaderData/>"));
        assert!(!doc.contains("URIExtXKey"), "deprecated in SPEKE v2");
    }
}
