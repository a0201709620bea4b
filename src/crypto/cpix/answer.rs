//! The key server's CPIX answer, read: the content key for our KID and each DRM system's
//! signalling, every field decoded and checked. A key server is hostile input: nothing it
//! says may break a box or add a playlist line. XML is read with `quick-xml` by local
//! names, so any namespace prefixes work.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use quick_xml::events::Event;

use crate::crypto::drm::{check_hls_lines, check_pro, check_pssh, check_uri};
use crate::crypto::keys::{uuid_string, ContentKey, DrmSystem, KeyError};

fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `value` (element text) base64-decoded, whitespace inside it allowed (answers are often
/// wrapped).
fn base64_text(value: &str) -> Option<Vec<u8>> {
    let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD.decode(compact).ok()
}

/// One DRM system's field of a CPIX answer (`PSSH`, `URIExtXKey`, `HLSSignalingData` of
/// `playlist`, `SmoothStreamingProtectionHeaderData`), decoded and checked, into `system`.
/// Other elements are ignored.
fn read_field(
    system: &mut DrmSystem,
    element: &[u8],
    playlist: Option<&str>,
    value: &str,
) -> Result<(), String> {
    let decoded = || base64_text(value).ok_or_else(|| "not base64".to_owned());
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned());
    match element {
        b"PSSH" => {
            let pssh = decoded()?;
            check_pssh(&pssh, &system.system_id)?;
            system.pssh = Some(pssh);
        }
        b"URIExtXKey" => {
            let uri = text(decoded()?)?;
            let uri = uri.trim();
            check_uri(uri)?;
            system.hls_key_uri = Some(uri.to_owned());
        }
        b"HLSSignalingData" => {
            let lines = text(decoded()?)?;
            // CPIX: the playlist attribute defaults to "media".
            if playlist == Some("master") {
                system.hls_master = Some(check_hls_lines(&lines, "#EXT-X-SESSION-KEY:")?);
            } else {
                system.hls_media = Some(check_hls_lines(&lines, "#EXT-X-KEY:")?);
            }
        }
        b"SmoothStreamingProtectionHeaderData" => {
            let pro = decoded()?;
            check_pro(&pro)?;
            system.playready_pro = Some(pro);
        }
        _ => {}
    }
    Ok(())
}

/// The key `kid` and its DRM systems' signalling from a CPIX answer: per `DRMSystem` of
/// that KID, its `PSSH`, `URIExtXKey`, `HLSSignalingData` (both playlists) and
/// `SmoothStreamingProtectionHeaderData`, each decoded and checked (a key server is
/// hostile input: nothing it says may break a box or add a playlist line).
///
/// # Errors
/// [`KeyError::Unavailable`] when the answer is not CPIX, lacks the key, or holds a field
/// that is not what it should be.
pub fn parse_answer(xml: &[u8], kid: &[u8; 16]) -> Result<ContentKey, KeyError> {
    let mut keys = parse_answers(xml, &[*kid])?;
    keys.pop().flatten().ok_or_else(|| KeyError::Unavailable {
        reason: "key server answer: no key for the requested KID".into(),
    })
}

/// [`parse_answer`] for each of `kids` (a key split's, at most a few), read in one pass:
/// the keys in the order of `kids`, `None` for a KID the answer has no key for (the
/// caller names its usage).
///
/// # Errors
/// [`KeyError::Unavailable`] when the answer is not CPIX or holds a field that is not
/// what it should be.
pub fn parse_answers(xml: &[u8], kids: &[[u8; 16]]) -> Result<Vec<Option<ContentKey>>, KeyError> {
    let bad = |why: &str| KeyError::Unavailable {
        reason: format!("key server answer: {why}"),
    };
    let text = std::str::from_utf8(xml).map_err(|_| bad("not UTF-8"))?;
    let mut reader = quick_xml::Reader::from_str(text);
    // Where we are: the kid of the ContentKey being read, the system of the DRMSystem
    // being read (for one of our KIDs) with that KID, the element and its `playlist`
    // attribute.
    let mut in_key: Option<[u8; 16]> = None;
    let mut in_system: Option<([u8; 16], DrmSystem)> = None;
    let mut element = Vec::new();
    let mut playlist: Option<String> = None;
    let mut keys: Vec<Option<[u8; 16]>> = vec![None; kids.len()];
    let mut systems: Vec<Vec<DrmSystem>> = vec![Vec::new(); kids.len()];
    let mut saw_cpix = false;
    let slot = |kid: &[u8; 16]| kids.iter().position(|k| k == kid);
    loop {
        match reader.read_event().map_err(|_| bad("not XML"))? {
            Event::Start(e) | Event::Empty(e) => {
                let name = e.local_name().as_ref().to_vec();
                let attr = |wanted: &[u8]| {
                    e.attributes().flatten().find_map(|a| {
                        (a.key.local_name().as_ref() == wanted)
                            .then(|| {
                                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                    .ok()
                                    .map(|v| v.into_owned())
                            })
                            .flatten()
                    })
                };
                match name.as_slice() {
                    b"CPIX" => saw_cpix = true,
                    b"ContentKey" => in_key = attr(b"kid").as_deref().and_then(parse_uuid),
                    b"DRMSystem" => {
                        let k = attr(b"kid").as_deref().and_then(parse_uuid);
                        let s = attr(b"systemId").as_deref().and_then(parse_uuid);
                        in_system = match (k, s) {
                            (Some(k), Some(s)) if slot(&k).is_some() => {
                                Some((k, DrmSystem::new(s)))
                            }
                            _ => None,
                        };
                    }
                    _ => {}
                }
                playlist = attr(b"playlist");
                element = name;
            }
            Event::Text(t) => {
                let value = t.decode().map_err(|_| bad("bad text"))?;
                let value = value.trim();
                if value.is_empty() {
                    continue;
                }
                let key_slot = in_key.as_ref().and_then(slot);
                match (element.as_slice(), in_system.as_mut()) {
                    (b"PlainValue", _) if key_slot.is_some() => {
                        let bytes = base64_text(value).ok_or_else(|| bad("key not base64"))?;
                        let key = <[u8; 16]>::try_from(bytes.as_slice())
                            .map_err(|_| bad("key not 16 bytes"))?;
                        if let Some(held) = key_slot.and_then(|i| keys.get_mut(i)) {
                            *held = Some(key);
                        }
                    }
                    (field, Some((_, system))) => {
                        read_field(system, field, playlist.as_deref(), value).map_err(|why| {
                            bad(&format!(
                                "{} of {}: {why}",
                                String::from_utf8_lossy(field),
                                uuid_string(&system.system_id)
                            ))
                        })?;
                    }
                    _ => {}
                }
            }
            Event::End(e) => {
                match e.local_name().as_ref() {
                    b"ContentKey" => in_key = None,
                    b"DRMSystem" => {
                        if let Some((kid, system)) = in_system.take() {
                            let list = slot(&kid).and_then(|i| systems.get_mut(i));
                            if let Some(list) = list {
                                // One entry per system: a repeated DRMSystem adds its fields.
                                match list.iter_mut().find(|s| s.system_id == system.system_id) {
                                    Some(known) => merge(known, system),
                                    None => list.push(system),
                                }
                            }
                        }
                    }
                    _ => {}
                }
                element.clear();
                playlist = None;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_cpix {
        return Err(bad("no CPIX element"));
    }
    Ok((kids.iter().zip(keys).zip(systems))
        .map(|((kid, key), systems)| {
            key.map(|key| ContentKey {
                kid: *kid,
                key,
                systems,
            })
        })
        .collect())
}

/// `more`'s fields into `known`, where `known` has none.
fn merge(known: &mut DrmSystem, more: DrmSystem) {
    known.pssh = known.pssh.take().or(more.pssh);
    known.hls_key_uri = known.hls_key_uri.take().or(more.hls_key_uri);
    known.hls_media = known.hls_media.take().or(more.hls_media);
    known.hls_master = known.hls_master.take().or(more.hls_master);
    known.playready_pro = known.playready_pro.take().or(more.playready_pro);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::cpix::{cpix_kid, PLAYREADY, WIDEVINE};
    #[test]
    fn answers_give_the_key_and_each_systems_pssh() {
        let kid = cpix_kid("films/a.mp4");
        let pssh = crate::crypto::raw_drm::pssh_v0(&WIDEVINE, b"data");
        let xml = format!(
            "<?xml version=\"1.0\"?><CPIX xmlns=\"urn:dashif:org:cpix\" xmlns:p=\"urn:ietf:params:xml:ns:keyprov:pskc\" contentId=\"films/a.mp4\">\
             <ContentKeyList><ContentKey kid=\"{}\"><Data><p:Secret><p:PlainValue>{}</p:PlainValue></p:Secret></Data></ContentKey></ContentKeyList>\
             <DRMSystemList><DRMSystem kid=\"{}\" systemId=\"{}\"><PSSH>{}</PSSH></DRMSystem></DRMSystemList></CPIX>",
            uuid_string(&kid),
            STANDARD.encode([7u8; 16]),
            uuid_string(&kid),
            uuid_string(&WIDEVINE),
            STANDARD.encode(&pssh)
        );
        let key = parse_answer(xml.as_bytes(), &kid).unwrap();
        assert_eq!(key.key, [7; 16]);
        assert_eq!(
            key.systems,
            vec![DrmSystem {
                pssh: Some(pssh),
                ..DrmSystem::new(WIDEVINE)
            }]
        );
    }

    #[test]
    fn answers_without_the_key_or_not_cpix_are_unavailable() {
        let kid = cpix_kid("a.mp4");
        for xml in [
            "<html/>",
            "not xml <<",
            "<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\"/>",
        ] {
            assert!(matches!(
                parse_answer(xml.as_bytes(), &kid),
                Err(KeyError::Unavailable { .. })
            ));
        }
    }

    fn answer_with(systems: &str) -> (String, [u8; 16]) {
        let kid = cpix_kid("films/a.mp4");
        let xml = format!(
            "<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\" version=\"2.3\">\
             <cpix:ContentKeyList><cpix:ContentKey kid=\"{k}\"><cpix:Data><pskc:Secret><pskc:PlainValue>{}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey></cpix:ContentKeyList>\
             <cpix:DRMSystemList>{}</cpix:DRMSystemList></cpix:CPIX>",
            STANDARD.encode([7u8; 16]),
            systems.replace("{k}", &uuid_string(&kid)),
            k = uuid_string(&kid),
        );
        (xml, kid)
    }

    #[test]
    fn answers_give_each_systems_uri_hls_lines_and_playready_header() {
        let pro = crate::crypto::raw_drm::playready_object("<WRMHEADER/>");
        let media = "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://k\",KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\"";
        let master = media.replace("#EXT-X-KEY:", "#EXT-X-SESSION-KEY:");
        let (xml, kid) = answer_with(&format!(
            "<cpix:DRMSystem kid=\"{{k}}\" systemId=\"94ce86fb-07ff-4f43-adb8-93d2fa968ca2\">\
             <cpix:URIExtXKey>{}</cpix:URIExtXKey>\
             <cpix:HLSSignalingData playlist=\"media\">{}</cpix:HLSSignalingData>\
             <cpix:HLSSignalingData playlist=\"master\">{}</cpix:HLSSignalingData></cpix:DRMSystem>\
             <cpix:DRMSystem kid=\"{{k}}\" systemId=\"9a04f079-9840-4286-ab92-e65be0885f95\">\
             <cpix:SmoothStreamingProtectionHeaderData>{}</cpix:SmoothStreamingProtectionHeaderData></cpix:DRMSystem>",
            STANDARD.encode("skd://k"),
            STANDARD.encode(media),
            STANDARD.encode(&master),
            STANDARD.encode(&pro),
        ));
        let key = parse_answer(xml.as_bytes(), &kid).unwrap();
        assert_eq!(key.systems.len(), 2);
        let fairplay = &key.systems[0];
        assert_eq!(fairplay.hls_key_uri.as_deref(), Some("skd://k"));
        assert_eq!(fairplay.hls_media.as_deref(), Some(media));
        assert_eq!(fairplay.hls_master.as_deref(), Some(master.as_str()));
        assert!(fairplay.usable() && key.systems[1].usable());
        assert_eq!(key.systems[1].playready_pro.as_deref(), Some(&pro[..]));
    }

    /// Given answers whose fields would break a box or a playlist, then the answer is
    /// refused (503), never written.
    #[test]
    fn hostile_fields_are_refused() {
        let field = |element: &str, value: &[u8], system: &str| {
            format!(
                "<cpix:DRMSystem kid=\"{{k}}\" systemId=\"{system}\"><cpix:{element} playlist=\"media\">{}</cpix:{element}></cpix:DRMSystem>",
                STANDARD.encode(value)
            )
        };
        const FP: &str = "94ce86fb-07ff-4f43-adb8-93d2fa968ca2";
        const WV: &str = "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed";
        let mut short = crate::crypto::raw_drm::pssh_v0(&WIDEVINE, b"data");
        short.pop();
        for systems in [
            field("HLSSignalingData", b"#EXT-X-KEY:A\nseg.m4s", FP),
            field("HLSSignalingData", b"#EXTINF:1,", FP),
            field("URIExtXKey", b"skd://a\"b", FP),
            field("PSSH", &short, WV),
            field("PSSH", &crate::crypto::raw_drm::pssh_v0(&PLAYREADY, b"x"), WV),
            field("SmoothStreamingProtectionHeaderData", b"\x09\0\0\0", WV),
            format!("<cpix:DRMSystem kid=\"{{k}}\" systemId=\"{WV}\"><cpix:PSSH>***</cpix:PSSH></cpix:DRMSystem>"),
        ] {
            let (xml, kid) = answer_with(&systems);
            assert!(
                matches!(parse_answer(xml.as_bytes(), &kid), Err(KeyError::Unavailable { .. })),
                "{systems}"
            );
        }
    }
}
