//! Which encryption each output uses: the server default (`--encryption`) and a title
//! document's `"encryption"` entry, which overrides it per title.
//!
//! The written form is a comma-separated list of `output=scheme` pairs, the same on the
//! command line, in the TOML file and in a title document: `hls=aes-128,dash=cenc`,
//! `hls=sample-aes,dash=cbcs`, `none`. An output left out is served in the clear.

use std::fmt;

/// An encryption scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Common Encryption `cenc`: AES-CTR, video NAL units subsample-encrypted
    /// (ISO/IEC 23001-7 10.1). DASH only.
    Cenc,
    /// Common Encryption `cbcs`: AES-CBC with a constant IV and the 1:9 pattern on video
    /// (23001-7 10.4). DASH, and HLS as `METHOD=SAMPLE-AES` on fMP4; for HLS MPEG-TS,
    /// Apple's sample encryption (`package::ts::sample_aes`).
    Cbcs,
    /// HLS `METHOD=AES-128`: each segment encrypted whole with AES-128-CBC and PKCS#7
    /// padding (RFC 8216 4.3.2.4). HLS only.
    Aes128,
}

impl Scheme {
    /// The name in policies and logs.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Cenc => "cenc",
            Scheme::Cbcs => "cbcs",
            Scheme::Aes128 => "aes-128",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The scheme of each output; `None` is clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct EncryptionPolicy {
    /// HLS with CMAF segments: `Aes128` or `Cbcs` (SAMPLE-AES).
    pub hls: Option<Scheme>,
    /// DASH: `Cenc` or `Cbcs`.
    pub dash: Option<Scheme>,
}

/// Why a policy does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A part is not `output=scheme`, or names an unknown output or scheme.
    #[error("bad encryption policy {part:?}: expected none or hls=aes-128|sample-aes|none, dash=cenc|cbcs|none")]
    Malformed { part: String },
}

impl EncryptionPolicy {
    /// True when some output is encrypted.
    pub fn any(&self) -> bool {
        self.hls.is_some() || self.dash.is_some()
    }

    /// The schemes in use, each once, HLS's first.
    pub fn schemes(&self) -> Vec<Scheme> {
        let mut out: Vec<Scheme> = self.hls.into_iter().collect();
        if let Some(dash) = self.dash.filter(|d| Some(*d) != self.hls) {
            out.push(dash);
        }
        out
    }

    /// Parse the written form.
    ///
    /// # Errors
    /// [`PolicyError::Malformed`] naming the part that is wrong.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let mut policy = Self::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || PolicyError::Malformed {
                part: part.to_owned(),
            };
            if part.eq_ignore_ascii_case("none") {
                continue;
            }
            let (output, scheme) = part.split_once('=').ok_or_else(bad)?;
            let scheme = scheme.trim().to_ascii_lowercase();
            match output.trim().to_ascii_lowercase().as_str() {
                "hls" => {
                    policy.hls = match scheme.as_str() {
                        "none" => None,
                        "aes-128" | "aes128" => Some(Scheme::Aes128),
                        "sample-aes" | "cbcs" => Some(Scheme::Cbcs),
                        _ => return Err(bad()),
                    }
                }
                "dash" => {
                    policy.dash = match scheme.as_str() {
                        "none" => None,
                        "cenc" => Some(Scheme::Cenc),
                        "cbcs" => Some(Scheme::Cbcs),
                        _ => return Err(bad()),
                    }
                }
                _ => return Err(bad()),
            }
        }
        Ok(policy)
    }
}

impl fmt::Display for EncryptionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |s: Option<Scheme>, hls: bool| match s {
            None => "none",
            Some(Scheme::Cbcs) if hls => "sample-aes",
            Some(s) => s.name(),
        };
        write!(
            f,
            "hls={},dash={}",
            name(self.hls, true),
            name(self.dash, false)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print_back() {
        let p = EncryptionPolicy::parse("hls=aes-128, dash=cenc").unwrap();
        assert_eq!(p.hls, Some(Scheme::Aes128));
        assert_eq!(p.dash, Some(Scheme::Cenc));
        assert_eq!(EncryptionPolicy::parse(&p.to_string()).unwrap(), p);
        let q = EncryptionPolicy::parse("hls=sample-aes,dash=cbcs").unwrap();
        assert_eq!(q.schemes(), vec![Scheme::Cbcs]);
        assert_eq!(
            EncryptionPolicy::parse("none").unwrap(),
            EncryptionPolicy::default()
        );
        assert!(!EncryptionPolicy::parse("").unwrap().any());
    }

    #[test]
    fn unknown_outputs_and_schemes_are_refused() {
        for bad in [
            "hls=cenc",
            "dash=aes-128",
            "ts=aes-128",
            "hls",
            "dash=rot13",
        ] {
            assert!(EncryptionPolicy::parse(bad).is_err(), "{bad}");
        }
    }
}
