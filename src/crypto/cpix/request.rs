//! The CPIX 2.3 request vodpack POSTs for a title: the KID it chose (a hash of the title
//! key, so every replica asks for the same one), the DRM systems it wants signalling for,
//! and, for SPEKE v2, the scheme and an encryption contract.

use sha2::{Digest, Sha256};

use super::{CpixMode, CpixOptions};
use crate::crypto::drm::{xml_escape, DrmId};
use crate::crypto::keys::uuid_string;

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
