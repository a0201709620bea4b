//! `NginxVodLocations`: the location prefixes under which the server answers
//! nginx-vod-module's URL grammar, and how `--nginx-vod-locations` text is read and checked.
//! Plain data for the server's nginx-vod names, defined here so the settings can carry it.

/// The location prefixes under which nginx-vod-module's URLs are answered, one
/// per output, as `hls=/hls/,hlsts=/hlsts/,dash=/dash/,thumb=/thumb/` (any subset, any
/// order; `thumb` is a location of `vod thumb`, answering `thumb-MS[-wW][-hH].jpg`). Each
/// prefix starts and ends with `/`, is not `/` or under `/vod/`, and none is a prefix of
/// another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NginxVodLocations {
    /// HLS with fMP4 segments (`vod_hls_container_format fmp4`).
    pub hls: Option<String>,
    /// HLS with MPEG-TS segments.
    pub hlsts: Option<String>,
    /// DASH.
    pub dash: Option<String>,
    /// Thumbnails (`vod thumb`).
    pub thumb: Option<String>,
}

impl NginxVodLocations {
    /// Every configured (output name, prefix).
    pub fn prefixes(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        [
            ("hls", &self.hls),
            ("hlsts", &self.hlsts),
            ("dash", &self.dash),
            ("thumb", &self.thumb),
        ]
        .into_iter()
        .filter_map(|(name, prefix)| Some((name, prefix.as_deref()?)))
    }
}

impl std::str::FromStr for NginxVodLocations {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut locations = Self::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, prefix) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not OUTPUT=/prefix/"))?;
            let slot = match name.trim() {
                "hls" => &mut locations.hls,
                "hlsts" => &mut locations.hlsts,
                "dash" => &mut locations.dash,
                "thumb" => &mut locations.thumb,
                other => {
                    return Err(format!(
                        "unknown output {other:?} (hls, hlsts, dash or thumb)"
                    ))
                }
            };
            let prefix = prefix.trim();
            let ok = prefix.len() > 1
                && prefix.starts_with('/')
                && prefix.ends_with('/')
                && !prefix.starts_with("/vod/")
                && !prefix.contains("//");
            if !ok {
                return Err(format!(
                    "{prefix:?} must start and end with '/', not be '/' and not be under /vod/"
                ));
            }
            if slot.replace(prefix.to_owned()).is_some() {
                return Err(format!("{name} is given twice"));
            }
        }
        let prefixes: Vec<&str> = locations.prefixes().map(|(_, p)| p).collect();
        for (i, a) in prefixes.iter().enumerate() {
            if let Some(b) = prefixes
                .iter()
                .skip(i + 1)
                .find(|b| a.starts_with(**b) || b.starts_with(*a))
            {
                return Err(format!("{a:?} and {b:?} overlap"));
            }
        }
        Ok(locations)
    }
}
