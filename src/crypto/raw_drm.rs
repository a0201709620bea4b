//! DRM signalling without a key server, as Shaka Packager's raw-key mode makes it: the
//! Widevine `pssh` from the KID, PlayReady's header object (and its `pssh`) from the KID,
//! the key and a configured licence URL, and FairPlay's `skd://` key URI from a template.
//! A service with its own licence servers then needs no CPIX: they know the key from the
//! same derivation (docs/protection.md, "Keys").
//!
//! What they hold depends on the output's scheme (`cbcs` or `cenc`), so the server builds
//! them per output ([`raw_systems`]), not once per key.

use super::drm::xml_escape;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use aes::Aes128;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::drm::{check_uri, DrmId, DrmSystem, PLAYREADY, WIDEVINE};
use super::keys::{hex, uuid_string, ContentKey, KeyError};
use super::policy::Scheme;

/// What the raw-key systems need beyond the key: PlayReady's licence URL and FairPlay's key
/// URI template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawDrmOptions {
    /// PlayReady's licence acquisition URL (`LA_URL` of the header), if any.
    pub playready_la_url: Option<String>,
    /// FairPlay's key URI template (`skd://...`, with `{kid}`, `{kid_uuid}`, `{title}`).
    pub fairplay_key_uri: Option<String>,
}

/// The FourCC of `scheme` as a big-endian number, as Widevine's `protection_scheme` holds it.
fn fourcc(scheme: Scheme) -> u32 {
    let name = match scheme {
        Scheme::Cenc => b"cenc",
        _ => b"cbcs",
    };
    u32::from_be_bytes(*name)
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// A `pssh` box of version 0 for `system_id` with `data`.
pub fn pssh_v0(system_id: &[u8; 16], data: &[u8]) -> Vec<u8> {
    let size = 32 + data.len();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&u32::try_from(size).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(b"pssh");
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(system_id);
    out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(data);
    out
}

/// Widevine's `pssh` for `kid`: version 0 (as Shaka Packager's widevine_pssh_generator.cc,
/// "for backward compatibility"), its data the `WidevinePsshData` protobuf of
/// shaka-packager's packager/media/base/widevine_pssh_data.proto with `key_id` (field 2,
/// bytes) and `protection_scheme` (field 9, the scheme's FourCC as a uint32 varint),
/// encoded by hand: two fields need no protobuf crate.
pub fn widevine_pssh(kid: &[u8; 16], scheme: Scheme) -> Vec<u8> {
    let mut data = vec![(2 << 3) | 2, 16];
    data.extend_from_slice(kid);
    data.push(9 << 3);
    varint(&mut data, u64::from(fourcc(scheme)));
    pssh_v0(&WIDEVINE, &data)
}

/// `kid` in a GUID's byte order: the first three fields little-endian, as PlayReady
/// writes KIDs (PlayReady Header Object specification, "KID"; Shaka Packager's
/// ConvertGuidEndianness).
pub fn guid_order(kid: &[u8; 16]) -> [u8; 16] {
    let mut out = *kid;
    out[..4].reverse();
    out[4..6].reverse();
    out[6..8].reverse();
    out
}

/// The WRMHEADER XML for `kid`: version 4.3.0.0 with `ALGID="AESCBC"` for `cbcs` (PlayReady
/// 4.0+ clients), 4.0.0.0 with AESCTR and the KID's checksum (its GUID-order bytes
/// AES-ECB-encrypted under the key, first 8 bytes) for `cenc`, as Shaka Packager's
/// playready_pssh_generator.cc writes them; `LA_URL` when given.
pub fn playready_header_xml(
    kid: &[u8; 16],
    key: &[u8; 16],
    scheme: Scheme,
    la_url: Option<&str>,
) -> String {
    let guid = guid_order(kid);
    let kid_b64 = STANDARD.encode(guid);
    let la_url = la_url.map_or_else(String::new, |u| {
        format!("<LA_URL>{}</LA_URL>", xml_escape(u))
    });
    const NS: &str = "http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader";
    match scheme {
        Scheme::Cenc => {
            let mut block = aes::Block::from(guid);
            Aes128::new(&(*key).into()).encrypt_block(&mut block);
            let checksum = STANDARD.encode(&block[..8]);
            format!(
                "<WRMHEADER xmlns=\"{NS}\" version=\"4.0.0.0\"><DATA><PROTECTINFO>\
                 <KEYLEN>16</KEYLEN><ALGID>AESCTR</ALGID></PROTECTINFO><KID>{kid_b64}</KID>\
                 <CHECKSUM>{checksum}</CHECKSUM>{la_url}</DATA></WRMHEADER>"
            )
        }
        _ => format!(
            "<WRMHEADER xmlns=\"{NS}\" version=\"4.3.0.0\"><DATA><PROTECTINFO><KIDS>\
             <KID ALGID=\"AESCBC\" VALUE=\"{kid_b64}\"></KID></KIDS></PROTECTINFO>{la_url}\
             </DATA></WRMHEADER>"
        ),
    }
}

/// The PlayReady Header Object (PRO) holding `xml`: little-endian length and record count
/// (1), then one record of type 1 (rights management header) with the XML in UTF-16LE.
pub fn playready_object(xml: &str) -> Vec<u8> {
    let record: Vec<u8> = xml.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let record_len = u16::try_from(record.len()).unwrap_or(u16::MAX);
    let total = u32::try_from(record.len() + 10).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(record.len() + 10);
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&record_len.to_le_bytes());
    out.extend_from_slice(&record);
    out
}

/// Characters a title keeps in a FairPlay key URI: unreserved ones and `/`.
const TITLE_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// FairPlay's key URI from `template`: `{kid}` the KID in hex, `{kid_uuid}` as a UUID,
/// `{title}` the title key percent-encoded. The key is never in it: the key server
/// behind `skd://` looks it up.
///
/// # Errors
/// [`KeyError::Config`] when the result is not a printable URI.
pub fn fairplay_key_uri(template: &str, kid: &[u8; 16], title: &str) -> Result<String, KeyError> {
    let title = utf8_percent_encode(title, TITLE_KEEP).to_string();
    let uri = template
        .replace("{kid_uuid}", &uuid_string(kid))
        .replace("{kid}", &hex(kid))
        .replace("{title}", &title);
    check_uri(&uri).map_err(|why| KeyError::Config {
        reason: format!("fairplay-key-uri: {why}"),
    })?;
    Ok(uri)
}

/// The raw-key signalling of `systems` for `key` of the title at `title`, for an output
/// of `scheme`; ClearKey needs none.
///
/// # Errors
/// [`KeyError::Config`] when FairPlay is asked for without a key URI template.
pub fn raw_systems(
    systems: &[DrmId],
    options: &RawDrmOptions,
    key: &ContentKey,
    title: &str,
    scheme: Scheme,
) -> Result<Vec<DrmSystem>, KeyError> {
    let mut out = Vec::new();
    for id in systems {
        let system = match id {
            DrmId::Widevine => DrmSystem {
                pssh: Some(widevine_pssh(&key.kid, scheme)),
                ..DrmSystem::new(WIDEVINE)
            },
            DrmId::PlayReady => {
                let xml = playready_header_xml(
                    &key.kid,
                    &key.key,
                    scheme,
                    options.playready_la_url.as_deref(),
                );
                let pro = playready_object(&xml);
                DrmSystem {
                    // Shaka Packager writes PlayReady's pssh as version 0 too.
                    pssh: Some(pssh_v0(&PLAYREADY, &pro)),
                    playready_pro: Some(pro),
                    ..DrmSystem::new(PLAYREADY)
                }
            }
            DrmId::FairPlay => {
                let template =
                    options
                        .fairplay_key_uri
                        .as_deref()
                        .ok_or_else(|| KeyError::Config {
                            reason: "FairPlay needs --fairplay-key-uri without a key server".into(),
                        })?;
                DrmSystem {
                    hls_key_uri: Some(fairplay_key_uri(template, &key.kid, title)?),
                    ..DrmSystem::new(id.system_id())
                }
            }
            DrmId::ClearKey => continue,
        };
        out.push(system);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::drm::check_pssh;

    const KID: [u8; 16] = [
        0x10, 0x77, 0xef, 0xec, 0xc0, 0xb2, 0x4d, 0x02, 0xac, 0xe3, 0x3c, 0x1e, 0x52, 0xe2, 0xfb,
        0x4b,
    ];

    /// The bytes written out by hand from the proto (field 2 tag 0x12, length 16; field 9
    /// tag 0x48, varint of 0x63626373 'cbcs'), not by the code under test. The 'cenc' varint
    /// `48 e3 dc 95 9b 06` is the one real Widevine pssh boxes carry.
    #[test]
    fn widevine_pssh_is_the_known_encoding() {
        let mut expected = vec![0, 0, 0, 0x38];
        expected.extend_from_slice(b"pssh");
        expected.extend_from_slice(&[0, 0, 0, 0]);
        expected.extend_from_slice(&[
            0xed, 0xef, 0x8b, 0xa9, 0x79, 0xd6, 0x4a, 0xce, 0xa3, 0xc8, 0x27, 0xdc, 0xd5, 0x1d,
            0x21, 0xed,
        ]);
        expected.extend_from_slice(&[0, 0, 0, 0x18, 0x12, 0x10]);
        expected.extend_from_slice(&KID);
        expected.extend_from_slice(&[0x48, 0xf3, 0xc6, 0x89, 0x9b, 0x06]);
        assert_eq!(widevine_pssh(&KID, Scheme::Cbcs), expected);
        let cenc = widevine_pssh(&KID, Scheme::Cenc);
        assert!(cenc.ends_with(&[0x48, 0xe3, 0xdc, 0x95, 0x9b, 0x06]));
        assert_eq!(check_pssh(&cenc, &WIDEVINE), Ok(()));
    }

    #[test]
    fn playready_headers_hold_the_guid_ordered_kid_and_licence_url() {
        assert_eq!(
            guid_order(&KID),
            [
                0xec, 0xef, 0x77, 0x10, 0xb2, 0xc0, 0x02, 0x4d, 0xac, 0xe3, 0x3c, 0x1e, 0x52, 0xe2,
                0xfb, 0x4b
            ]
        );
        let xml = playready_header_xml(&KID, &[1; 16], Scheme::Cbcs, Some("https://l/?a=1&b=2"));
        assert!(xml.contains("version=\"4.3.0.0\""));
        assert!(xml.contains("<KID ALGID=\"AESCBC\" VALUE=\"7O93ELLAAk2s4zweUuL7Sw==\">"));
        assert!(xml.contains("<LA_URL>https://l/?a=1&amp;b=2</LA_URL>"));
        let xml = playready_header_xml(&KID, &[1; 16], Scheme::Cenc, None);
        assert!(xml.contains("version=\"4.0.0.0\""));
        assert!(xml.contains("<ALGID>AESCTR</ALGID>"));
        assert!(xml.contains("<CHECKSUM>"));
        let pro = playready_object("<A/>");
        assert_eq!(
            pro,
            [18, 0, 0, 0, 1, 0, 1, 0, 8, 0, b'<', 0, b'A', 0, b'/', 0, b'>', 0]
        );
        assert_eq!(crate::crypto::drm::check_pro(&pro), Ok(()));
    }

    /// Shaka Packager's known vector (packager/media/base/pssh_generator_unittest.cc,
    /// `kExpectedPlayReadyPsshData`): KID `keyid1~~~~~~~~~~`, key `contentkey1~~~~~`,
    /// `cenc`, no licence URL. Its checksum `uFY/OirQj/U=` was computed by their AES.
    #[test]
    fn playready_object_matches_shaka_packagers_vector() {
        let xml = "<WRMHEADER xmlns=\"http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader\" \
                   version=\"4.0.0.0\"><DATA><PROTECTINFO><KEYLEN>16</KEYLEN><ALGID>AESCTR</ALGID>\
                   </PROTECTINFO><KID>aXllazFkfn5+fn5+fn5+fg==</KID><CHECKSUM>uFY/OirQj/U=</CHECKSUM>\
                   </DATA></WRMHEADER>";
        let mut expected = vec![0x06, 0x02, 0, 0, 1, 0, 1, 0, 0xfc, 0x01];
        expected.extend(xml.encode_utf16().flat_map(u16::to_le_bytes));
        let made = playready_object(&playready_header_xml(
            b"keyid1~~~~~~~~~~",
            b"contentkey1~~~~~",
            Scheme::Cenc,
            None,
        ));
        assert_eq!(made, expected);
    }

    #[test]
    fn fairplay_uris_come_from_the_template() {
        let uri =
            fairplay_key_uri("skd://keys/{kid}?t={title}&u={kid_uuid}", &KID, "a b/c.mp4").unwrap();
        assert_eq!(
            uri,
            "skd://keys/1077efecc0b24d02ace33c1e52e2fb4b?t=a%20b/c.mp4&u=1077efec-c0b2-4d02-ace3-3c1e52e2fb4b"
        );
        assert!(fairplay_key_uri("skd://{kid} x", &KID, "t").is_err());
    }
}
