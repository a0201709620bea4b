//! The MPD rules this suite holds every MPD to, written here from the standards' text:
//! the schema (`mpd_schema.rs`), then the rules beyond it: profiles, ids, Period starts
//! (ISO/IEC 23009-1), the live profile's (8.4), DASH-IF IOP's (v4.3) and, for MPDs in
//! DVB-DASH's profile, ETSI TS 103 285 v1.3.1's. Each finding names where it comes from.
//!
//! Why our own: the DASH Industry Forum's schematron cannot be fetched by CI (no package
//! registry carries it) nor committed here, so the rules are restated in code that reads
//! the MPD as XML, apart from the writer in `src/package/dash/`: nothing is shared with it.

use std::collections::HashMap;

use crate::mpd_schema::{duration_seconds, parse, schema, Checker, Element, Finding, MPD_NS};

/// The live profile and DVB-DASH's profiles (23009-1 8.4; TS 103 285 4.1).
const LIVE_PROFILE: &str = "urn:mpeg:dash:profile:isoff-live:2011";
const DVB_2014: &str = "urn:dvb:dash:profile:dvb-dash:2014";
const DVB_2017: &str = "urn:dvb:dash:profile:dvb-dash:2017";
/// Profiles a player knows (23009-1 8, 23000-19 Annex, TS 103 285 4.1).
const KNOWN_PROFILES: &[&str] = &[
    "urn:mpeg:dash:profile:full:2011",
    "urn:mpeg:dash:profile:isoff-on-demand:2011",
    LIVE_PROFILE,
    "urn:mpeg:dash:profile:isoff-ext-live:2014",
    "urn:mpeg:dash:profile:isoff-main:2011",
    "urn:mpeg:dash:profile:cmaf:2019",
    "urn:mpeg:dash:profile:cmaf-extended:2019",
    "http://dashif.org/guidelines/dash264",
    DVB_2014,
    DVB_2017,
];
/// Role values of `urn:mpeg:dash:role:2011` (23009-1 5.8.5.5, Table 34).
const ROLES: &[&str] = &[
    "caption",
    "subtitle",
    "main",
    "alternate",
    "supplementary",
    "commentary",
    "dub",
    "description",
    "sign",
    "metadata",
    "enhanced-audio-intelligibility",
    "emergency",
    "forced-subtitle",
    "easyreader",
    "karaoke",
];

/// Every rule `mpd` breaks (empty: it passes).
pub fn check(mpd: &str) -> Vec<Finding> {
    let root = match parse(mpd) {
        Ok(root) => root,
        Err(e) => {
            return vec![Finding {
                rule: "XML 1.0",
                at: "/".into(),
                what: e,
            }]
        }
    };
    let mut checker = Checker {
        findings: Vec::new(),
        prefixes: (root.attributes.iter())
            .filter_map(|(k, v)| Some((k.strip_prefix("xmlns:")?.to_owned(), v.clone())))
            .collect(),
    };
    if root.name != "MPD" || root.attr("xmlns") != Some(MPD_NS) {
        checker.fail(
            "23009-1 5.3.1",
            "/",
            format!("root {} is not MPD in {MPD_NS}", root.name),
        );
    }
    schema(&mut checker, &root, "MPD");
    semantics(&mut checker, &root);
    checker.findings
}

/// The profiles of the MPD, the live profile's, IOP's and DVB's rules.
fn semantics(checker: &mut Checker, mpd: &Element) {
    let profiles: Vec<&str> = (mpd.attr("profiles").unwrap_or_default().split(','))
        .map(str::trim)
        .collect();
    for profile in &profiles {
        if !KNOWN_PROFILES.contains(profile) {
            checker.fail("23009-1 8.1", "MPD", format!("unknown profile {profile}"));
        }
    }
    let live = profiles.contains(&LIVE_PROFILE);
    let dvb = profiles.contains(&DVB_2014) || profiles.contains(&DVB_2017);
    let static_mpd = mpd.attr("type").unwrap_or("static") == "static";
    let periods: Vec<&Element> = mpd.all("Period").collect();
    if periods.is_empty() {
        checker.fail("23009-1 5.3.1.2", "MPD", "no Period");
    }
    if static_mpd
        && mpd.attr("mediaPresentationDuration").is_none()
        && periods.last().is_some_and(|p| p.attr("duration").is_none())
    {
        checker.fail(
            "23009-1 5.3.1.2",
            "MPD",
            "static MPD without @mediaPresentationDuration or a last Period@duration",
        );
    }
    // Period starts: present on all but possibly the first, increasing (5.3.2.1).
    let mut previous = -1.0;
    let mut period_ids = Vec::new();
    for (i, period) in periods.iter().enumerate() {
        let at = format!("Period[{}]", period.attr("id").unwrap_or("?"));
        if periods.len() > 1 && period.attr("id").is_none() {
            checker.fail(
                "DASH-IF IOP 3.2.2",
                &at,
                "a multi-Period MPD's Period without @id",
            );
        }
        if let Some(id) = period.attr("id") {
            if period_ids.contains(&id) {
                checker.fail("23009-1 5.3.2.2", &at, "@id repeated");
            }
            period_ids.push(id);
        }
        let start = period.attr("start").and_then(duration_seconds);
        match start {
            Some(s) if s <= previous && i > 0 => {
                checker.fail("23009-1 5.3.2.1", &at, "Period starts not increasing")
            }
            Some(s) => previous = s,
            None if i > 0 => checker.fail("DASH-IF IOP 3.2.2", &at, "@start missing"),
            None => previous = 0.0,
        }
        period_rules(checker, mpd, period, &at, live, dvb);
    }
}

/// The effective value of an attribute of a Representation, which may sit on its set.
fn inherited<'a>(set: &'a Element, representation: &'a Element, key: &str) -> Option<&'a str> {
    representation.attr(key).or_else(|| set.attr(key))
}

fn period_rules(
    checker: &mut Checker,
    mpd: &Element,
    period: &Element,
    at: &str,
    live: bool,
    dvb: bool,
) {
    let sets: Vec<&Element> = period.all("AdaptationSet").collect();
    let mut set_ids = Vec::new();
    let mut representation_ids = Vec::new();
    let mut mains: HashMap<String, usize> = HashMap::new();
    for set in &sets {
        let at = format!("{at}/AdaptationSet[{}]", set.attr("id").unwrap_or("?"));
        if let Some(id) = set.attr("id") {
            if set_ids.contains(&id) {
                checker.fail("23009-1 5.3.3.2", &at, "@id repeated in the Period");
            }
            set_ids.push(id);
        }
        let representations: Vec<&Element> = set.all("Representation").collect();
        if representations.is_empty() {
            checker.fail("23009-1 5.3.3.2", &at, "no Representation");
        }
        // One mimeType (5.3.7.2: on the set or on each Representation), agreeing with
        // contentType (5.3.3.2).
        let content_type = set.attr("contentType");
        let mut kinds = Vec::new();
        for representation in &representations {
            let rat = format!(
                "{at}/Representation[{}]",
                representation.attr("id").unwrap_or("?")
            );
            match inherited(set, representation, "mimeType") {
                None => checker.fail("23009-1 5.3.7.2", &rat, "no @mimeType"),
                Some(mime) => kinds.push(mime.split('/').next().unwrap_or_default().to_owned()),
            }
            if let Some(id) = representation.attr("id") {
                if representation_ids.contains(&id) {
                    checker.fail("23009-1 5.3.5.2", &rat, "@id repeated in the Period");
                }
                representation_ids.push(id);
            }
            // Thumbnail image sets (DASH-IF IOP 6.2.6) have neither codecs nor an
            // initialization segment.
            let image =
                inherited(set, representation, "mimeType").is_some_and(|m| m.starts_with("image/"));
            if inherited(set, representation, "codecs").is_none() && !image {
                checker.fail("DASH-IF IOP codecs", &rat, "no @codecs");
            }
            if set.attr("mimeType").is_some() && representation.attr("mimeType").is_some() {
                checker.fail(
                    "DASH-IF IOP 3.2.7",
                    &rat,
                    "@mimeType on both set and Representation",
                );
            }
            if set.attr("codecs").is_some() && representation.attr("codecs").is_some() {
                checker.fail(
                    "DASH-IF IOP 3.2.7",
                    &rat,
                    "@codecs on both set and Representation",
                );
            }
            representation_rules(checker, mpd, period, set, representation, &rat, live, dvb);
        }
        kinds.dedup();
        if kinds.len() > 1 {
            checker.fail(
                "23009-1 5.3.3.1",
                &at,
                format!("media types {kinds:?} in one set"),
            );
        }
        if let (Some(content_type), Some(kind)) = (content_type, kinds.first()) {
            let agrees = content_type == kind
                || (content_type == "text" && kind == "application")
                || (content_type == "image" && kind == "image");
            if !agrees {
                checker.fail(
                    "23009-1 5.3.3.2",
                    &at,
                    format!("contentType {content_type}, mimeType {kind}/"),
                );
            }
        }
        // Segments that switch must align (IOP 3.2.2: segmentAlignment on every set of a
        // live-profile MPD with more than one Representation).
        if live
            && representations.len() > 1
            && set.attr("segmentAlignment").is_none_or(|v| v == "false")
        {
            checker.fail(
                "DASH-IF IOP 3.2.2",
                &at,
                "several Representations without @segmentAlignment",
            );
        }
        for role in set.all("Role") {
            if role.attr("schemeIdUri") == Some("urn:mpeg:dash:role:2011") {
                let value = role.attr("value").unwrap_or_default();
                if !ROLES.contains(&value) {
                    checker.fail("23009-1 5.8.5.5", &at, format!("Role value {value}"));
                }
                if value == "main" {
                    let kind = content_type
                        .map(str::to_owned)
                        .or_else(|| kinds.first().cloned())
                        .unwrap_or_default();
                    let trick = set.all("EssentialProperty").any(|p| {
                        p.attr("schemeIdUri") == Some("http://dashif.org/guidelines/trickmode")
                    });
                    if !trick {
                        *mains.entry(kind).or_default() += 1;
                    }
                }
            }
        }
        for protection in set.all("ContentProtection") {
            protection_rules(checker, protection, &at);
        }
        if dvb {
            dvb_set_rules(checker, set, &at, content_type, &kinds);
        }
    }
    if dvb {
        // TS 103 285 4.5 terminal limits; 10.x/HbbTV: exactly one main set per kind.
        let counted = sets.iter().filter(|s| {
            !s.all("EssentialProperty")
                .any(|p| p.attr("schemeIdUri") == Some("http://dashif.org/guidelines/trickmode"))
        });
        if counted.count() > 16 {
            checker.fail(
                "DVB-DASH limits (TS 103 285 4.5)",
                at,
                "more than 16 AdaptationSets",
            );
        }
        for kind in ["video", "audio"] {
            let has_kind = sets.iter().any(|s| s.attr("contentType") == Some(kind));
            let count = mains.get(kind).copied().unwrap_or(0);
            if has_kind && count != 1 {
                checker.fail(
                    "DVB-DASH roles",
                    at,
                    format!("{count} {kind} sets with Role main"),
                );
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn representation_rules(
    checker: &mut Checker,
    mpd: &Element,
    period: &Element,
    set: &Element,
    representation: &Element,
    at: &str,
    live: bool,
    dvb: bool,
) {
    let template = representation
        .first("SegmentTemplate")
        .or_else(|| set.first("SegmentTemplate"))
        .or_else(|| period.first("SegmentTemplate"));
    let mime = inherited(set, representation, "mimeType").unwrap_or_default();
    if live && template.is_none() {
        checker.fail("23009-1 8.4.2", at, "live profile: no SegmentTemplate");
    }
    for protection in representation.all("ContentProtection") {
        protection_rules(checker, protection, at);
    }
    if mime.starts_with("video/") {
        for key in ["width", "height"] {
            if inherited(set, representation, key).is_none() {
                checker.fail("DASH-IF IOP 6.2.5", at, format!("video without @{key}"));
            }
        }
    }
    if mime.starts_with("audio/") && inherited(set, representation, "audioSamplingRate").is_none() {
        checker.fail("DASH-IF IOP 6.3.3", at, "audio without @audioSamplingRate");
    }
    let Some(template) = template else {
        return;
    };
    let media = template.attr("media").unwrap_or_default();
    let image = mime.starts_with("image/");
    if live && (media.is_empty() || (template.attr("initialization").is_none() && !image)) {
        checker.fail(
            "23009-1 8.4.2",
            at,
            "SegmentTemplate without @media and @initialization",
        );
    }
    // Identifiers (5.3.9.4.4, Table 23): $$, $RepresentationID$, $Number$, $Bandwidth$,
    // $Time$, $SubNumber$, with an optional %0Nd width on the numeric ones.
    for text in [media, template.attr("initialization").unwrap_or_default()] {
        let parts: Vec<&str> = text.split('$').collect();
        if parts.len().is_multiple_of(2) {
            checker.fail("23009-1 5.3.9.4.4", at, format!("unbalanced $ in {text}"));
        }
        for identifier in parts.iter().skip(1).step_by(2) {
            let (name, format) = identifier.split_once('%').unwrap_or((identifier, ""));
            let format_ok = format.is_empty()
                || (format.starts_with('0')
                    && format.ends_with('d')
                    && format[1..format.len() - 1].parse::<u8>().is_ok());
            let known = matches!(
                name,
                "" | "RepresentationID" | "Number" | "Bandwidth" | "Time" | "SubNumber"
            );
            if !known || (!format_ok) || (name == "RepresentationID" && !format.is_empty()) {
                checker.fail(
                    "23009-1 5.3.9.4.4",
                    at,
                    format!("identifier ${identifier}$"),
                );
            }
        }
    }
    let timeline = template.first("SegmentTimeline");
    if live && !media.is_empty() && !media.contains("$Number") && !media.contains("$Time") {
        checker.fail(
            "23009-1 8.4.2",
            at,
            "@media with neither $Number$ nor $Time$",
        );
    }
    if timeline.is_none() && template.attr("duration").is_none() && live {
        checker.fail(
            "23009-1 5.3.9.2",
            at,
            "SegmentTemplate with neither SegmentTimeline nor @duration",
        );
    }
    let Some(timeline) = timeline else {
        return;
    };
    let timescale: f64 = template
        .attr("timescale")
        .and_then(|t| t.parse().ok())
        .unwrap_or(1.0);
    if timescale <= 0.0 {
        checker.fail("23009-1 5.3.9.2", at, "@timescale 0");
        return;
    }
    let mut durations = Vec::new();
    let mut next: Option<u64> = None;
    for (i, s) in timeline.all("S").enumerate() {
        let t = s.attr("t").and_then(|t| t.parse::<u64>().ok());
        let d = s.attr("d").and_then(|d| d.parse::<u64>().ok()).unwrap_or(0);
        let r = s.attr("r").and_then(|r| r.parse::<i64>().ok()).unwrap_or(0);
        if d == 0 {
            checker.fail("23009-1 5.3.9.6", at, format!("S #{i} with @d 0"));
        }
        if r < 0 && static_or_last(mpd) {
            checker.fail("DASH-IF IOP 3.2.7", at, "negative @r in a static MPD");
        }
        if let (Some(t), Some(expected)) = (t, next) {
            if t < expected {
                checker.fail(
                    "23009-1 5.3.9.6",
                    at,
                    format!("S #{i} @t {t} overlaps the one before (ends {expected})"),
                );
            }
        }
        if i == 0 && t.is_none() {
            // @t defaults to 0 on the first S.
        }
        let repeats = u64::try_from(r.max(0)).unwrap_or(0) + 1;
        let start = t.or(next).unwrap_or(0);
        next = Some(start + d * repeats);
        for _ in 0..repeats.min(100_000) {
            durations.push(d as f64 / timescale);
        }
    }
    // Segment durations: DVB 4.5 (1 s to 15 s, the last may be shorter), and within 50%
    // of each other per IOP 3.2.7.2's MPD@maxSegmentDuration-free rule of thumb is not
    // a rule: only DVB's bounds are checked.
    if dvb {
        let count = durations.len();
        for (i, d) in durations.iter().enumerate() {
            let last = i + 1 == count;
            if *d > 15.0 || (*d < 0.96 && !last) {
                checker.fail(
                    "DVB-DASH limits (TS 103 285 4.5)",
                    at,
                    format!("segment {} lasts {d:.3} s", i + 1),
                );
            }
        }
    }
}

fn static_or_last(mpd: &Element) -> bool {
    mpd.attr("type").unwrap_or("static") == "static"
}

/// ContentProtection (23001-7 11.2, DASH-IF IOP 7.5): the mp4protection descriptor names
/// the scheme and may carry a KID in UUID form; others are `urn:uuid:` systems.
fn protection_rules(checker: &mut Checker, protection: &Element, at: &str) {
    let scheme = protection
        .attr("schemeIdUri")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let uuid_like = |v: &str| {
        let parts: Vec<&str> = v.split('-').collect();
        parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
            && parts
                .iter()
                .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    if scheme == "urn:mpeg:dash:mp4protection:2011" {
        let value = protection.attr("value").unwrap_or_default();
        if !matches!(value, "cenc" | "cbcs" | "cens" | "cbc1") {
            checker.fail("23001-7 11.2.1", at, format!("mp4protection value {value}"));
        }
    } else if let Some(system) = scheme.strip_prefix("urn:uuid:") {
        if !uuid_like(system) {
            checker.fail("23009-1 5.8.5.2", at, format!("system id {system}"));
        }
    } else {
        checker.fail(
            "DASH-IF IOP 7.5.2",
            at,
            format!("ContentProtection scheme {scheme}"),
        );
    }
    if let Some(kid) = protection.attr("cenc:default_KID") {
        if !uuid_like(kid) {
            checker.fail("23001-7 11.2.1", at, format!("default_KID {kid}"));
        }
    }
    for pssh in protection.all("cenc:pssh") {
        use base64::Engine as _;
        let decoded = base64::engine::general_purpose::STANDARD.decode(pssh.text.trim());
        let ok = decoded.is_ok_and(|b| {
            b.get(4..8) == Some(b"pssh")
                && b.len() >= 32
                && u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize == b.len()
        });
        if !ok {
            checker.fail("23001-7 11.2.2", at, "cenc:pssh is not one base64 pssh box");
        }
    }
}

/// DVB-DASH (TS 103 285 v1.3.1) rules for one AdaptationSet.
fn dvb_set_rules(
    checker: &mut Checker,
    set: &Element,
    at: &str,
    content_type: Option<&str>,
    kinds: &[String],
) {
    let trick = set
        .all("EssentialProperty")
        .any(|p| p.attr("schemeIdUri") == Some("http://dashif.org/guidelines/trickmode"));
    let kind = content_type
        .or(kinds.first().map(String::as_str))
        .unwrap_or_default();
    let has_role = set
        .all("Role")
        .any(|r| r.attr("schemeIdUri") == Some("urn:mpeg:dash:role:2011"));
    // 10.x: every audio and video set has a Role in MPEG's scheme (HbbTV picks by it).
    if matches!(kind, "audio" | "video") && !trick && !has_role {
        checker.fail("DVB-DASH roles", at, "no Role in urn:mpeg:dash:role:2011");
    }
    let representations: Vec<&Element> = set.all("Representation").collect();
    match kind {
        "video" => {
            for r in &representations {
                for key in ["frameRate", "sar"] {
                    if inherited(set, r, key).is_none() && !trick {
                        checker.fail(
                            "DVB-DASH video attributes",
                            at,
                            format!("video Representation without @{key}"),
                        );
                    }
                }
            }
        }
        "audio" => {
            for r in &representations {
                let configurations: Vec<&Element> = r
                    .all("AudioChannelConfiguration")
                    .chain(set.all("AudioChannelConfiguration"))
                    .collect();
                if configurations.is_empty() {
                    checker.fail(
                        "DVB-DASH audio channels",
                        at,
                        "audio without AudioChannelConfiguration",
                    );
                }
                for c in configurations {
                    let scheme = c.attr("schemeIdUri").unwrap_or_default();
                    let known = [
                        "urn:mpeg:mpegB:cicp:ChannelConfiguration",
                        "urn:mpeg:dash:23003:3:audio_channel_configuration:2011",
                        "tag:dolby.com,2014:dash:audio_channel_configuration:2011",
                        "urn:dolby:dash:audio_channel_configuration:2011",
                    ];
                    if !known.contains(&scheme) {
                        checker.fail(
                            "DVB-DASH audio channels",
                            at,
                            format!("channel scheme {scheme}"),
                        );
                    }
                }
            }
        }
        "text" => {
            // 7.1.1/7.1.2: subtitles are EBU-TT-D in ISO BMFF, `stpp` samples.
            for r in &representations {
                let codecs = inherited(set, r, "codecs").unwrap_or_default();
                let mime = inherited(set, r, "mimeType").unwrap_or_default();
                if mime != "application/mp4" || !codecs.starts_with("stpp") {
                    checker.fail(
                        "DVB-DASH subtitles (TS 103 285 7.1)",
                        at,
                        format!("subtitles as {mime} {codecs}, not application/mp4 stpp"),
                    );
                }
            }
        }
        _ => {}
    }
}
