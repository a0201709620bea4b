//! DRM systems as plain data: which system ([`DrmId`]: FairPlay, Widevine, PlayReady,
//! ClearKey) and what it signals ([`DrmSystem`]: its `pssh` box, its HLS key URI and
//! playlist lines, PlayReady's header object), as a key server supplies them or the raw-key
//! builders (`crypto::raw_drm`) make them. The HLS and DASH writers (`package::encrypt`)
//! and the init segment writer take these as they are.
//!
//! Everything here may come from a key server, which is hostile input: the checks
//! ([`check_pssh`], [`check_hls_lines`], [`check_uri`], [`check_pro`]) make sure nothing
//! it says can break a box or inject a playlist line.

use std::fmt;

/// FairPlay's DRM system id (DASH-IF registry).
pub const FAIRPLAY: [u8; 16] = [
    0x94, 0xce, 0x86, 0xfb, 0x07, 0xff, 0x4f, 0x43, 0xad, 0xb8, 0x93, 0xd2, 0xfa, 0x96, 0x8c, 0xa2,
];
/// Widevine's DRM system id.
pub const WIDEVINE: [u8; 16] = [
    0xed, 0xef, 0x8b, 0xa9, 0x79, 0xd6, 0x4a, 0xce, 0xa3, 0xc8, 0x27, 0xdc, 0xd5, 0x1d, 0x21, 0xed,
];
/// PlayReady's DRM system id.
pub const PLAYREADY: [u8; 16] = [
    0x9a, 0x04, 0xf0, 0x79, 0x98, 0x40, 0x42, 0x86, 0xab, 0x92, 0xe6, 0x5b, 0xe0, 0x88, 0x5f, 0x95,
];
/// W3C ClearKey's DASH system id (DASH-IF IOP 7.6.2.4).
pub const CLEARKEY: [u8; 16] = [
    0xe2, 0x71, 0x9d, 0x58, 0xa9, 0x85, 0xb3, 0xc9, 0x78, 0x1a, 0xb0, 0x30, 0xaf, 0x78, 0xd3, 0x0e,
];

/// A DRM system a title can be signalled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DrmId {
    /// Apple FairPlay Streaming: HLS `skd://` key URI.
    FairPlay,
    /// Google Widevine: `pssh`.
    Widevine,
    /// Microsoft PlayReady: `pssh` and its header object (PRO).
    PlayReady,
    /// W3C ClearKey, served by vodpack itself (the licence route).
    ClearKey,
}

impl DrmId {
    /// Every system, in the order manifests list them.
    pub const ALL: [DrmId; 4] = [
        DrmId::FairPlay,
        DrmId::Widevine,
        DrmId::PlayReady,
        DrmId::ClearKey,
    ];

    /// The DRM system id.
    pub fn system_id(self) -> [u8; 16] {
        match self {
            DrmId::FairPlay => FAIRPLAY,
            DrmId::Widevine => WIDEVINE,
            DrmId::PlayReady => PLAYREADY,
            DrmId::ClearKey => CLEARKEY,
        }
    }

    /// The system of `system_id`, if it is one of ours.
    pub fn of(system_id: &[u8; 16]) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.system_id() == *system_id)
    }

    /// Its name in settings and documents (`fairplay`).
    pub fn name(self) -> &'static str {
        match self {
            DrmId::FairPlay => "fairplay",
            DrmId::Widevine => "widevine",
            DrmId::PlayReady => "playready",
            DrmId::ClearKey => "clearkey",
        }
    }

    /// The system named `name` (any case).
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    /// A comma-separated list of names, deduplicated, in the order given.
    ///
    /// # Errors
    /// The first name that is not a system.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        let mut out = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let id = Self::parse(name).ok_or_else(|| {
                format!("unknown DRM system {name:?} (fairplay, widevine, playready, clearkey)")
            })?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Whether a key server supplies this system's data (all but ClearKey, which vodpack
    /// serves itself).
    pub fn from_key_server(self) -> bool {
        self != DrmId::ClearKey
    }
}

impl fmt::Display for DrmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DrmId::FairPlay => "FairPlay",
            DrmId::Widevine => "Widevine",
            DrmId::PlayReady => "PlayReady",
            DrmId::ClearKey => "ClearKey",
        })
    }
}

/// One DRM system's signalling for a key, as a key server supplies it or the raw-key
/// builders make it. Every field is optional because systems differ (FairPlay has no
/// `pssh`); which are needed is [`DrmSystem::usable`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrmSystem {
    /// The DRM system id.
    pub system_id: [u8; 16],
    /// The complete `pssh` box, written into init segments and, base64, into the MPD's
    /// `cenc:pssh` (CPIX `PSSH`).
    pub pssh: Option<Vec<u8>>,
    /// The HLS key URI (CPIX `URIExtXKey`, decoded): FairPlay's `skd://...`.
    pub hls_key_uri: Option<String>,
    /// Whole `#EXT-X-KEY:` lines for media playlists (CPIX `HLSSignalingData`
    /// `playlist="media"`, decoded), written as supplied.
    pub hls_media: Option<String>,
    /// Whole `#EXT-X-SESSION-KEY:` lines for multivariant playlists (CPIX
    /// `HLSSignalingData` `playlist="master"`, decoded), written as supplied.
    pub hls_master: Option<String>,
    /// PlayReady's header object (PRO), for `mspr:pro` and the HLS data URI (CPIX
    /// `SmoothStreamingProtectionHeaderData`, decoded).
    pub playready_pro: Option<Vec<u8>>,
}

impl DrmSystem {
    /// An empty entry for `system_id`.
    pub fn new(system_id: [u8; 16]) -> Self {
        Self {
            system_id,
            ..Self::default()
        }
    }

    /// Which of ours it is.
    pub fn id(&self) -> Option<DrmId> {
        DrmId::of(&self.system_id)
    }

    /// PlayReady's header object: as supplied, else the data of its `pssh` box (a
    /// PlayReady `pssh` carries the PRO as its data).
    pub fn pro(&self) -> Option<&[u8]> {
        if let Some(pro) = &self.playready_pro {
            return Some(pro);
        }
        let pssh = self.pssh.as_deref()?;
        let version = *pssh.get(8)?;
        let at = if version == 0 {
            28
        } else {
            let count = be32(pssh, 28)? as usize;
            32usize.checked_add(count.checked_mul(16)?)?
        };
        let size = be32(pssh, at)? as usize;
        pssh.get(at + 4..at.checked_add(4)?.checked_add(size)?)
    }

    /// Whether it holds what its system needs to be signalled: FairPlay a key URI or
    /// HLS lines, Widevine a `pssh`, PlayReady a `pssh` or a PRO.
    pub fn usable(&self) -> bool {
        match self.id() {
            Some(DrmId::FairPlay) => self.hls_key_uri.is_some() || self.hls_media.is_some(),
            Some(DrmId::Widevine) => self.pssh.is_some(),
            Some(DrmId::PlayReady) => self.pssh.is_some() || self.playready_pro.is_some(),
            Some(DrmId::ClearKey) => true,
            None => self.pssh.is_some(),
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Check a `pssh` box from a key server: its size field is its length, it is a `pssh` full
/// box of version 0 or 1 for `system_id`, and its data fits.
///
/// # Errors
/// What is wrong with it.
pub fn check_pssh(pssh: &[u8], system_id: &[u8; 16]) -> Result<(), &'static str> {
    let size = be32(pssh, 0).ok_or("pssh too short")? as usize;
    if size != pssh.len() || pssh.get(4..8) != Some(b"pssh") {
        return Err("PSSH is not one pssh box");
    }
    if pssh.get(12..28) != Some(system_id) {
        return Err("PSSH of another system");
    }
    let version = *pssh.get(8).ok_or("pssh too short")?;
    let at = match version {
        0 => 28,
        1 => {
            let count = be32(pssh, 28).ok_or("pssh too short")? as usize;
            count
                .checked_mul(16)
                .and_then(|n| n.checked_add(32))
                .ok_or("pssh KID count")?
        }
        _ => return Err("pssh version"),
    };
    let data = be32(pssh, at).ok_or("pssh too short")? as usize;
    if at.checked_add(4).and_then(|n| n.checked_add(data)) != Some(pssh.len()) {
        return Err("pssh data size");
    }
    Ok(())
}

/// Check a PlayReady header object: its little-endian length is its length.
///
/// # Errors
/// What is wrong with it.
pub fn check_pro(pro: &[u8]) -> Result<(), &'static str> {
    let len = pro
        .get(0..4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or("PlayReady header too short")?;
    if len as usize != pro.len() || pro.len() < 10 {
        return Err("PlayReady header length");
    }
    Ok(())
}

/// Check a key URI for an HLS quoted attribute: printable ASCII, no `"`, not empty.
///
/// # Errors
/// What is wrong with it.
pub fn check_uri(uri: &str) -> Result<(), &'static str> {
    if uri.is_empty() || !uri.bytes().all(|b| b.is_ascii_graphic() && b != b'"') {
        return Err("key URI is not a printable URI");
    }
    Ok(())
}

/// Check HLS signalling from a key server and normalise its line ends: one or more lines,
/// each the tag `tag` (`#EXT-X-KEY:` or `#EXT-X-SESSION-KEY:`) and printable text, so
/// nothing else can be slipped into a playlist.
///
/// # Errors
/// What is wrong with it.
pub fn check_hls_lines(text: &str, tag: &str) -> Result<String, &'static str> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !line.starts_with(tag) {
            return Err("HLSSignalingData is not the playlist's key tag");
        }
        if !line.chars().all(|c| !c.is_control()) {
            return Err("HLSSignalingData has control characters");
        }
        out.push(line);
    }
    if out.is_empty() {
        return Err("HLSSignalingData is empty");
    }
    Ok(out.join("\n"))
}

/// `s` escaped for XML element text and attribute values (CPIX requests, PlayReady
/// headers, MPD elements).
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systems_parse_by_name_and_id() {
        assert_eq!(
            DrmId::parse_list("FairPlay, widevine,playready,widevine").unwrap(),
            vec![DrmId::FairPlay, DrmId::Widevine, DrmId::PlayReady]
        );
        assert!(DrmId::parse_list("fairplay,marlin").is_err());
        for id in DrmId::ALL {
            assert_eq!(DrmId::of(&id.system_id()), Some(id));
        }
        assert_eq!(
            crate::crypto::keys::uuid_string(&FAIRPLAY),
            "94ce86fb-07ff-4f43-adb8-93d2fa968ca2"
        );
        assert_eq!(
            crate::crypto::keys::uuid_string(&CLEARKEY),
            "e2719d58-a985-b3c9-781a-b030af78d30e"
        );
    }

    #[test]
    fn pssh_boxes_are_checked_and_their_pro_found() {
        let data = [4u8, 0, 0, 0, 1, 0, 9, 9];
        let mut pssh = vec![0, 0, 0, 0];
        pssh.extend_from_slice(b"pssh");
        pssh.extend_from_slice(&[0, 0, 0, 0]);
        pssh.extend_from_slice(&PLAYREADY);
        pssh.extend_from_slice(&(data.len() as u32).to_be_bytes());
        pssh.extend_from_slice(&data);
        let len = pssh.len() as u32;
        pssh[..4].copy_from_slice(&len.to_be_bytes());
        assert_eq!(check_pssh(&pssh, &PLAYREADY), Ok(()));
        assert!(check_pssh(&pssh, &WIDEVINE).is_err());
        assert!(check_pssh(&pssh[..pssh.len() - 1], &PLAYREADY).is_err());
        let mut long = pssh.clone();
        long.push(0);
        assert!(check_pssh(&long, &PLAYREADY).is_err());
        let system = DrmSystem {
            pssh: Some(pssh),
            ..DrmSystem::new(PLAYREADY)
        };
        assert_eq!(system.pro(), Some(&data[..]));
        assert!(system.usable());
        assert!(!DrmSystem::new(FAIRPLAY).usable());
    }

    #[test]
    fn hls_lines_must_be_the_tag_and_nothing_else() {
        assert_eq!(
            check_hls_lines(
                "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://a\"\r\n",
                "#EXT-X-KEY:"
            ),
            Ok("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://a\"".into())
        );
        assert!(check_hls_lines("#EXT-X-KEY:A\nseg-1.m4s", "#EXT-X-KEY:").is_err());
        assert!(check_hls_lines("#EXT-X-KEY:A", "#EXT-X-SESSION-KEY:").is_err());
        assert!(check_hls_lines("  ", "#EXT-X-KEY:").is_err());
        assert!(check_uri("skd://a b").is_err());
        assert!(check_uri("skd://x\"y").is_err());
        assert!(check_uri("skd://abc").is_ok());
    }
}
