//! The MPD schema of ISO/IEC 23009-1 (5th edition, Annex B), restated for the tests: the
//! element tree read with quick-xml (`parse`), which elements may hold which, in which
//! order, which attributes each may carry and of which value types (`schema`). The rules
//! beyond the schema are `mpd_rules.rs`'s.
//!
//! Why our own: the schema files cannot be fetched by CI (no package registry carries
//! them) nor committed here; nothing here is shared with the writer in `src/package/dash/`.

use std::collections::HashMap;

/// The MPD namespace (23009-1 5.2).
pub const MPD_NS: &str = "urn:mpeg:dash:schema:mpd:2011";

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

    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    pub fn first(&self, name: &str) -> Option<&Element> {
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

pub struct Checker {
    pub findings: Vec<Finding>,
    /// Namespace prefixes declared on the root.
    pub prefixes: HashMap<String, String>,
}

impl Checker {
    pub fn fail(&mut self, rule: &'static str, at: &str, what: impl Into<String>) {
        self.findings.push(Finding {
            rule,
            at: at.to_owned(),
            what: what.into(),
        });
    }
}

/// The schema: element names and order, attributes allowed and required, value types.
pub fn schema(checker: &mut Checker, element: &Element, at: &str) {
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
