//! A title's ad breaks in its MPD: SCTE-35 splices in a Period `EventStream` (SCTE 214-1).

use std::fmt::Write as _;

use super::tag::Tag;
use crate::package::Title;

/// SCTE 214-1: SCTE-35 sections carried in an MPD `EventStream` as XML holding binary.
const SCTE35_SCHEME: &str = "urn:scte:scte35:2014:xml+bin";

/// The title's ad breaks as SCTE-35 events of the Period (SCTE 214-1,
/// `urn:scte:scte35:2014:xml+bin`): each `Event` at the break's cut from the Period's
/// start and lasting the break, in 90 kHz (the splice's own clock), `id` its
/// `splice_event_id`, holding the same `splice_info_section` as HLS `SCTE35-OUT`, base64.
pub(super) fn event_stream(out: &mut String, title: &Title) {
    if title.breaks.list.is_empty() {
        return;
    }
    Tag::new(4, "EventStream")
        .attr("schemeIdUri", SCTE35_SCHEME)
        .attr("timescale", 90_000)
        .open(out);
    for b in &title.breaks.list {
        Tag::new(6, "Event")
            .attr("presentationTime", b.period_90k)
            .attr("duration", b.request.duration_ms.saturating_mul(90))
            .attr("id", b.event_id)
            .open(out);
        let _ = writeln!(
            out,
            "        <scte35:Signal>\n          <scte35:Binary>{}</scte35:Binary>\n        </scte35:Signal>\n      </Event>",
            b.splice(0).base64()
        );
    }
    out.push_str("    </EventStream>\n");
}
