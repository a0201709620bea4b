//! The MPD rules this suite holds every MPD to, written here from the standards' text:
//! the MPD schema of ISO/IEC 23009-1 (5th edition, Annex B: which elements, in which
//! order, which attributes with which value types), the live profile's rules (8.4),
//! DASH-IF IOP's (v4.3, 3.2 and 7.x) and, for MPDs in DVB-DASH's profile, ETSI TS 103 285
//! v1.3.1's. Each finding names the clause it comes from.
//!
//! Why our own: the DASH Industry Forum's schema and schematron cannot be fetched by CI
//! (no package registry carries them) nor committed here, so the rules are restated in
//! code that reads the MPD as XML (quick-xml), apart from the writer in `src/package/dash/`:
//! nothing here is shared with it.

use std::collections::HashMap;

/// The MPD namespace (23009-1 5.2).
const MPD_NS: &str = "urn:mpeg:dash:schema:mpd:2011";
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

/// One element of the MPD namespace: its children, in order, and the attributes allowed
/// on it. A child marked `?` may appear once. Elements of other namespaces (`cenc:pssh`,
/// `scte35:Signal`) are the schema's `xs:any namespace="##other"` and allowed anywhere.
struct ElementRule {
    name: &'static str,
    children: &'static [&'static str],
    attributes: &'static [&'static str],
    required: &'static [&'static str],
}

/// RepresentationBaseType's children, first in AdaptationSet and Representation
/// (23009-1 5.3.7.3).
macro_rules! representation_base_children {
    () => {
        [
            "FramePacking",
            "AudioChannelConfiguration",
            "ContentProtection",
            "OutputProtection?",
            "EssentialProperty",
            "SupplementalProperty",
            "InbandEventStream",
            "Switching",
            "RandomAccess",
            "GroupLabel",
            "Label",
            "ProducerReferenceTime",
            "ContentPopularityRate",
            "Resync",
        ]
    };
}
/// RepresentationBaseType's attributes (5.3.7.3).
macro_rules! representation_base_attributes {
    () => {
        [
            "profiles",
            "width",
            "height",
            "sar",
            "frameRate",
            "audioSamplingRate",
            "mimeType",
            "segmentProfiles",
            "codecs",
            "containerProfiles",
            "maximumSAPPeriod",
            "startWithSAP",
            "maxPlayoutRate",
            "codingDependency",
            "scanType",
            "selectionPriority",
            "tag",
        ]
    };
}

const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

const ADAPTATION_SET_CHILDREN: [&str; 24] = concat(
    representation_base_children!(),
    [
        "Accessibility",
        "Role",
        "Rating",
        "Viewpoint",
        "ContentComponent",
        "BaseURL",
        "SegmentBase?",
        "SegmentList?",
        "SegmentTemplate?",
        "Representation",
    ],
);
const ADAPTATION_SET_ATTRIBUTES: [&str; 33] = concat(
    representation_base_attributes!(),
    [
        "id",
        "group",
        "lang",
        "contentType",
        "par",
        "minBandwidth",
        "maxBandwidth",
        "minWidth",
        "maxWidth",
        "minHeight",
        "maxHeight",
        "minFrameRate",
        "maxFrameRate",
        "segmentAlignment",
        "subsegmentAlignment",
        "subsegmentStartsWithSAP",
    ],
);
const REPRESENTATION_CHILDREN: [&str; 20] = concat(
    representation_base_children!(),
    [
        "BaseURL",
        "ExtendedBandwidth",
        "SubRepresentation",
        "SegmentBase?",
        "SegmentList?",
        "SegmentTemplate?",
    ],
);
const REPRESENTATION_ATTRIBUTES: [&str; 23] = concat(
    representation_base_attributes!(),
    [
        "id",
        "bandwidth",
        "qualityRanking",
        "dependencyId",
        "associationId",
        "associationType",
    ],
);
/// SegmentBase's and MultipleSegmentBase's attributes (5.3.9.2, 5.3.9.2.3).
const SEGMENT_TEMPLATE_ATTRIBUTES: &[&str] = &[
    "timescale",
    "eptDelta",
    "pdDelta",
    "presentationTimeOffset",
    "presentationDuration",
    "timeShiftBufferDepth",
    "indexRange",
    "indexRangeExact",
    "availabilityTimeOffset",
    "availabilityTimeComplete",
    "duration",
    "startNumber",
    "endNumber",
    "media",
    "index",
    "initialization",
    "bitstreamSwitching",
];
/// DescriptorType's attributes (5.8.2).
const DESCRIPTOR: &[&str] = &["schemeIdUri", "value", "id"];

const RULES: &[ElementRule] = &[
    ElementRule {
        name: "MPD",
        children: &[
            "ProgramInformation",
            "BaseURL",
            "Location",
            "PatchLocation",
            "ServiceDescription",
            "InitializationSet",
            "InitializationGroup",
            "InitializationPresentation",
            "ContentProtection",
            "Period",
            "Metrics",
            "EssentialProperty",
            "SupplementalProperty",
            "UTCTiming",
            "LeapSecondInformation?",
        ],
        attributes: &[
            "id",
            "profiles",
            "type",
            "availabilityStartTime",
            "publishTime",
            "availabilityEndTime",
            "mediaPresentationDuration",
            "minimumUpdatePeriod",
            "minBufferTime",
            "timeShiftBufferDepth",
            "suggestedPresentationDelay",
            "maxSegmentDuration",
            "maxSubsegmentDuration",
        ],
        required: &["profiles", "minBufferTime"],
    },
    ElementRule {
        name: "Period",
        children: &[
            "BaseURL",
            "SegmentBase?",
            "SegmentList?",
            "SegmentTemplate?",
            "AssetIdentifier?",
            "EventStream",
            "ServiceDescription",
            "ContentProtection",
            "AdaptationSet",
            "Subset",
            "SupplementalProperty",
            "EmptyAdaptationSet",
            "GroupLabel",
            "Preselection",
        ],
        attributes: &["id", "start", "duration", "bitstreamSwitching"],
        required: &[],
    },
    ElementRule {
        name: "AdaptationSet",
        children: &ADAPTATION_SET_CHILDREN,
        attributes: &ADAPTATION_SET_ATTRIBUTES,
        required: &[],
    },
    ElementRule {
        name: "Representation",
        children: &REPRESENTATION_CHILDREN,
        attributes: &REPRESENTATION_ATTRIBUTES,
        required: &["id", "bandwidth"],
    },
    ElementRule {
        name: "SegmentTemplate",
        children: &[
            "FailoverContent?",
            "Initialization?",
            "RepresentationIndex?",
            "SegmentTimeline?",
            "BitstreamSwitching?",
        ],
        attributes: SEGMENT_TEMPLATE_ATTRIBUTES,
        required: &[],
    },
    ElementRule {
        name: "SegmentTimeline",
        children: &["S"],
        attributes: &[],
        required: &[],
    },
    ElementRule {
        name: "S",
        children: &[],
        attributes: &["t", "n", "d", "r", "k"],
        required: &["d"],
    },
    ElementRule {
        name: "EventStream",
        children: &["Event"],
        attributes: &[
            "href",
            "actuate",
            "schemeIdUri",
            "value",
            "timescale",
            "presentationTimeOffset",
        ],
        required: &["schemeIdUri"],
    },
    ElementRule {
        name: "Event",
        children: &[],
        attributes: &[
            "presentationTime",
            "duration",
            "id",
            "contentEncoding",
            "messageData",
        ],
        required: &[],
    },
    ElementRule {
        name: "InbandEventStream",
        children: &[],
        attributes: &["schemeIdUri", "value"],
        required: &["schemeIdUri"],
    },
    ElementRule {
        name: "BaseURL",
        children: &[],
        attributes: &[
            "serviceLocation",
            "byteRange",
            "availabilityTimeOffset",
            "availabilityTimeComplete",
            "timeShiftBufferDepth",
            "rangeAccess",
        ],
        required: &[],
    },
    ElementRule {
        name: "Label",
        children: &[],
        attributes: &["id", "lang"],
        required: &[],
    },
];
/// Elements of DescriptorType (5.8.2): `@schemeIdUri` required, any other-namespace
/// content (`cenc:pssh`, `mspr:pro`).
const DESCRIPTORS: &[&str] = &[
    "AudioChannelConfiguration",
    "ContentProtection",
    "EssentialProperty",
    "SupplementalProperty",
    "Accessibility",
    "Role",
    "Rating",
    "Viewpoint",
    "FramePacking",
];

/// An MPD element as read: its name with any prefix, attributes by qualified name, and
/// children in document order.
#[derive(Debug, Default)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        (self.attributes.iter())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    fn first(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
}

/// Parse an MPD into its element tree; an error for text that is not well-formed XML.
pub fn parse(xml: &str) -> Result<Element, String> {
    use quick_xml::events::{BytesStart, Event};
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<Element> = vec![Element::default()];
    fn open(e: &BytesStart) -> Result<Element, String> {
        let mut element = Element {
            name: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
            ..Element::default()
        };
        for attribute in e.attributes() {
            let attribute = attribute.map_err(|e| format!("attribute: {e}"))?;
            let value = attribute
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| format!("attribute value: {e}"))?;
            element.attributes.push((
                String::from_utf8_lossy(attribute.key.as_ref()).into_owned(),
                value.into_owned(),
            ));
        }
        Ok(element)
    }
    loop {
        match reader.read_event().map_err(|e| format!("not XML: {e}"))? {
            Event::Start(e) => stack.push(open(&e)?),
            Event::Empty(e) => {
                let element = open(&e)?;
                stack.last_mut().ok_or("no parent")?.children.push(element);
            }
            Event::End(_) => {
                let element = stack.pop().ok_or("unbalanced")?;
                stack.last_mut().ok_or("unbalanced")?.children.push(element);
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text
                        .push_str(&t.decode().map_err(|e| format!("text: {e}"))?);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut document = stack.pop().ok_or("empty")?;
    if !stack.is_empty() {
        return Err("unclosed elements".into());
    }
    document
        .children
        .pop()
        .ok_or_else(|| "no root element".into())
}

/// One rule an MPD breaks: the clause, where (a path of element names and ids), what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub at: String,
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}: {}", self.rule, self.at, self.what)
    }
}

struct Checker {
    findings: Vec<Finding>,
    /// Namespace prefixes declared on the root.
    prefixes: HashMap<String, String>,
}

impl Checker {
    fn fail(&mut self, rule: &'static str, at: &str, what: impl Into<String>) {
        self.findings.push(Finding {
            rule,
            at: at.to_owned(),
            what: what.into(),
        });
    }
}

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

/// The schema: element names and order, attributes allowed and required, value types.
fn schema(checker: &mut Checker, element: &Element, at: &str) {
    for (key, value) in &element.attributes {
        if let Some((prefix, _)) = key.split_once(':') {
            if prefix != "xmlns" && prefix != "xml" && !checker.prefixes.contains_key(prefix) {
                checker.fail(
                    "XML Namespaces 5",
                    at,
                    format!("undeclared prefix of @{key}"),
                );
            }
            continue;
        }
        if key == "xmlns" {
            continue;
        }
        if let Some(problem) = value_problem(&element.name, key, value) {
            checker.fail(
                "23009-1 Annex B",
                at,
                format!("@{key}=\"{value}\": {problem}"),
            );
        }
    }
    let rule = RULES.iter().find(|r| r.name == element.name);
    if DESCRIPTORS.contains(&element.name.as_str()) {
        for (key, _) in &element.attributes {
            if !key.contains(':') && key != "xmlns" && !DESCRIPTOR.contains(&key.as_str()) {
                checker.fail("23009-1 5.8.2", at, format!("unknown attribute @{key}"));
            }
        }
        if element.attr("schemeIdUri").is_none() {
            checker.fail("23009-1 5.8.2", at, "descriptor without @schemeIdUri");
        }
    }
    if let Some(rule) = rule {
        for (key, _) in &element.attributes {
            if !key.contains(':') && key != "xmlns" && !rule.attributes.contains(&key.as_str()) {
                checker.fail("23009-1 Annex B", at, format!("unknown attribute @{key}"));
            }
        }
        for required in rule.required {
            if element.attr(required).is_none() {
                checker.fail("23009-1 Annex B", at, format!("@{required} missing"));
            }
        }
        let mut last = 0;
        let mut seen: Vec<&str> = Vec::new();
        for child in &element.children {
            if child.name.contains(':') {
                continue;
            }
            let position = rule
                .children
                .iter()
                .position(|c| c.trim_end_matches('?') == child.name);
            match position {
                None => checker.fail(
                    "23009-1 Annex B",
                    at,
                    format!("{} may not hold {}", element.name, child.name),
                ),
                Some(p) if p < last => checker.fail(
                    "23009-1 Annex B",
                    at,
                    format!("{} out of order in {}", child.name, element.name),
                ),
                Some(p) => {
                    let once = rule.children.get(p).is_some_and(|c| c.ends_with('?'));
                    if once && seen.contains(&child.name.as_str()) {
                        checker.fail("23009-1 Annex B", at, format!("second {}", child.name));
                    }
                    last = p;
                }
            }
            seen.push(&child.name);
        }
    } else if !DESCRIPTORS.contains(&element.name.as_str()) && !element.name.contains(':') {
        // Elements of the namespace without a rule above have none of their own children.
        if let Some(child) = element.children.iter().find(|c| !c.name.contains(':')) {
            checker.fail(
                "23009-1 Annex B",
                at,
                format!("unexpected {} in {}", child.name, element.name),
            );
        }
    }
    for child in &element.children {
        if let Some((prefix, _)) = child.name.split_once(':') {
            if !checker.prefixes.contains_key(prefix)
                && child.attr(&format!("xmlns:{prefix}")).is_none()
            {
                checker.fail(
                    "XML Namespaces 5",
                    at,
                    format!("undeclared prefix of {}", child.name),
                );
            }
            continue;
        }
        let id = child
            .attr("id")
            .map(|id| format!("[{id}]"))
            .unwrap_or_default();
        schema(checker, child, &format!("{at}/{}{id}", child.name));
    }
}

/// What is wrong with `value` for attribute `key` of `element`, by its schema type.
fn value_problem(element: &str, key: &str, value: &str) -> Option<&'static str> {
    let unsigned = |v: &str| {
        !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) && v.parse::<u64>().is_ok()
    };
    let unsigned_int = |v: &str| v.parse::<u32>().is_ok() && unsigned(v);
    let ok = match (element, key) {
        ("MPD", "type") => matches!(value, "static" | "dynamic"),
        (
            "MPD",
            "mediaPresentationDuration"
            | "minBufferTime"
            | "maxSegmentDuration"
            | "minimumUpdatePeriod"
            | "timeShiftBufferDepth"
            | "suggestedPresentationDelay"
            | "maxSubsegmentDuration",
        )
        | ("Period", "start" | "duration") => is_duration(value),
        ("AdaptationSet", "id" | "group") => unsigned_int(value),
        ("Representation", "id") => !value.is_empty() && !value.contains(char::is_whitespace),
        ("Representation", "bandwidth" | "qualityRanking") => unsigned_int(value),
        (_, "width" | "height" | "maxWidth" | "maxHeight" | "minWidth" | "minHeight") => {
            unsigned_int(value)
        }
        (_, "timescale" | "startNumber" | "endNumber") => unsigned_int(value),
        ("SegmentTemplate", "duration") => unsigned_int(value),
        ("SegmentTemplate" | "EventStream", "presentationTimeOffset") => unsigned(value),
        ("S", "t" | "d" | "n" | "k") => unsigned(value),
        ("S", "r") => value.parse::<i64>().is_ok(),
        ("Event", "presentationTime" | "duration") => unsigned(value),
        ("Event", "id") => unsigned_int(value),
        (_, "frameRate" | "maxFrameRate" | "minFrameRate") => {
            let (n, d) = value.split_once('/').unwrap_or((value, "1"));
            unsigned(n) && unsigned(d)
        }
        (_, "sar" | "par") => value
            .split_once(':')
            .is_some_and(|(a, b)| unsigned(a) && unsigned(b)),
        (_, "segmentAlignment" | "subsegmentAlignment" | "bitstreamSwitching") => {
            matches!(value, "true" | "false") || unsigned_int(value)
        }
        (_, "codingDependency" | "availabilityTimeComplete" | "indexRangeExact") => {
            matches!(value, "true" | "false")
        }
        (_, "startWithSAP" | "subsegmentStartsWithSAP") => {
            value.parse::<u8>().is_ok_and(|v| v <= 6) && unsigned(value)
        }
        (_, "maxPlayoutRate") => value.parse::<f64>().is_ok_and(f64::is_finite),
        (_, "audioSamplingRate") => value.split(' ').all(unsigned),
        (_, "codecs") => value
            .split(',')
            .all(|c| !c.trim().is_empty() && c.trim().bytes().all(|b| b.is_ascii_graphic())),
        (_, "mimeType") => value
            .split_once('/')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()),
        (_, "lang") => value
            .split('-')
            .all(|p| !p.is_empty() && p.len() <= 8 && p.bytes().all(|b| b.is_ascii_alphanumeric())),
        _ => true,
    };
    (!ok).then_some("not of its schema type")
}

/// xs:duration (XML Schema 2, 3.2.6): `-?P(nY)?(nM)?(nD)?(T(nH)?(nM)?(n(.n)?S)?)?`, at
/// least one part, and a `T` only with a time part after it.
fn is_duration(value: &str) -> bool {
    let Some(rest) = value.strip_prefix('-').unwrap_or(value).strip_prefix('P') else {
        return false;
    };
    let (date, time) = match rest.split_once('T') {
        Some((_, "")) => return false,
        Some((date, time)) => (date, Some(time)),
        None => (rest, None),
    };
    let parts = |text: &str, units: &[char], fraction_on: Option<char>| -> Option<usize> {
        let mut count = 0;
        let mut number = String::new();
        let mut next_unit = 0;
        for c in text.chars() {
            if c.is_ascii_digit() || (c == '.' && fraction_on.is_some()) {
                number.push(c);
                continue;
            }
            let at = units.iter().skip(next_unit).position(|u| *u == c)? + next_unit;
            let digits_ok = match number.split_once('.') {
                Some((a, b)) => {
                    Some(c) == fraction_on && !a.is_empty() && !b.is_empty() && !b.contains('.')
                }
                None => !number.is_empty(),
            };
            if !digits_ok {
                return None;
            }
            number.clear();
            next_unit = at + 1;
            count += 1;
        }
        number.is_empty().then_some(count)
    };
    let Some(date_parts) = parts(date, &['Y', 'M', 'D'], None) else {
        return false;
    };
    let time_parts = match time {
        Some(time) => match parts(time, &['H', 'M', 'S'], Some('S')) {
            Some(0) | None => return false,
            Some(n) => n,
        },
        None => 0,
    };
    date_parts + time_parts > 0
}

/// Seconds of an xs:duration without years or months (what MPDs use), if it is one.
pub fn duration_seconds(value: &str) -> Option<f64> {
    let rest = value.strip_prefix('P')?;
    let (days, time) = rest.split_once('T').unwrap_or((rest, ""));
    let mut seconds = 0.0;
    if !days.is_empty() {
        seconds += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400.0;
    }
    let mut number = String::new();
    for c in time.chars() {
        match c {
            'H' => seconds += number.parse::<f64>().ok()? * 3600.0,
            'M' => seconds += number.parse::<f64>().ok()? * 60.0,
            'S' => seconds += number.parse::<f64>().ok()?,
            _ => {
                number.push(c);
                continue;
            }
        }
        number.clear();
    }
    number.is_empty().then_some(seconds)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_xml_schema_does() {
        for good in ["PT3.000S", "PT0S", "P1D", "PT1H2M3.5S", "P1DT2H", "-PT1S"] {
            assert!(is_duration(good), "{good}");
        }
        for bad in ["PT", "P", "3S", "PT1.S", "PT1.5M", "PT1S2M", "P1H", "PTS"] {
            assert!(!is_duration(bad), "{bad}");
        }
        assert_eq!(duration_seconds("PT1M2.5S"), Some(62.5));
    }
}
