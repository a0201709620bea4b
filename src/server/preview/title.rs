//! A title's page: the server's answer for it, its HLS (CMAF and, where offered, MPEG-TS)
//! and DASH played side by side, the timeline under them (the storyboard to scrub, the
//! ad breaks and sequence parts where they fall), the bit rate of each rendition's
//! segments (`chart.rs`), the variants and renditions as tables, and `inspect`'s text.
//!
//! Cost: the two entry manifests (as `probe`), `master-ts.m3u8`, the first media
//! playlist when the MPD says there are breaks, and the title from the catalog (already
//! loaded by those); the chart is summed from its sample index on the blocking pool. The
//! `inspect` text reads the file's metadata once more (not cached). The storyboard and its
//! sheets are fetched by the page as the ordinary cached resources they are.

use std::fmt::Write as _;
use std::sync::Arc;

use http::StatusCode;

use super::chart::{chart_svg, rung_rates, time_text, timeline_svg, Mark, MarkKind};
use super::describe::{describe, DetailError};
use super::facts::{mpd_duration_ms, mpd_periods, mpd_protected, version_folder};
use super::html::{escape, page, page_script, player_scripts, with_token, Query};
use super::probe::{encode_key, get_as, probe_as, Caller, KeyReport, Probed};
use crate::package::View;
use crate::server::app::App;
use crate::server::titles::load::load_view;
use crate::source::ObjectKey;

/// One title: the server's answer, the players, timeline and chart, the tables and the
/// description.
pub async fn title_page(app: &Arc<App>, query: &Query, caller: &Caller, key: &str) -> String {
    let back = Query::href(&query.prefix, None, None, caller.token.as_deref());
    let mut body = format!(
        "<p><a id=\"back\" href=\"{}\">&larr; titles</a></p>\n<h1 id=\"key\">{}</h1>\n",
        escape(&back),
        escape(key)
    );
    let parsed = match ObjectKey::parse(key) {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = writeln!(
                body,
                "<p class=\"reason\" id=\"reason\">400 bad request path: {}</p>",
                escape(&e.to_string())
            );
            return page(key, &body, &page_script());
        }
    };
    let probed = probe_as(app, &parsed, caller).await;
    let report = &probed.report;
    let mut scripts = page_script();
    status_html(&mut body, report);
    if report.is_ok() {
        let base = format!("/vod/{}", encode_key(parsed.as_str()));
        let (ts_status, _) = get_as(app, &format!("{base}/master-ts.m3u8"), caller).await;
        let ts = (ts_status == StatusCode::OK).then(|| format!("{base}/master-ts.m3u8"));
        players_html(&mut body, &base, ts.as_deref(), caller);
        timeline_html(&mut body, &base, &probed, caller);
        chart_html(&mut body, app, &parsed, &probed).await;
        scripts = player_scripts(&app.settings.preview);
    }
    tables_html(&mut body, report);
    if !parsed.as_str().to_ascii_lowercase().ends_with(".json") {
        let source = app.catalog.source().clone();
        let settings = &app.settings;
        let text = match describe(
            &source,
            &parsed,
            &settings.limits,
            settings.segment_duration_ms,
            settings.protect.encryption,
        )
        .await
        {
            Ok(text) => text,
            Err(DetailError::Package(edits, e)) => format!("{edits}cannot package: {e}\n"),
            Err(e) => format!("cannot read: {e}\n"),
        };
        let _ = write!(
            body,
            "<h2>inspect</h2>\n<pre id=\"inspect\">{}</pre>\n",
            escape(&text)
        );
    }
    page(key, &body, &scripts)
}

/// The players side by side: hls.js on the CMAF HLS, dash.js on the DASH, and hls.js on
/// the MPEG-TS HLS when it is offered. Their URLs reach the script only through escaped
/// `data-` attributes.
fn players_html(body: &mut String, base: &str, ts: Option<&str>, caller: &Caller) {
    let url = |path: String| escape(&with_token(path, caller));
    let _ = write!(
        body,
        "<div id=\"players\" data-hls=\"{}\" data-dash=\"{}\"{}>\n\
         <figure><figcaption>HLS, CMAF (hls.js) <span id=\"hls-state\"></span></figcaption>\
         <video id=\"hls-video\" controls muted autoplay playsinline></video></figure>\n\
         <figure><figcaption>DASH (dash.js) <span id=\"dash-state\"></span></figcaption>\
         <video id=\"dash-video\" controls muted autoplay playsinline></video></figure>\n",
        url(format!("{base}/master.m3u8")),
        url(format!("{base}/manifest.mpd")),
        match ts {
            Some(ts) => format!(" data-ts=\"{}\"", url(ts.to_owned())),
            None => String::new(),
        },
    );
    if ts.is_some() {
        body.push_str(
            "<figure><figcaption>HLS, MPEG-TS (hls.js) <span id=\"ts-state\"></span>\
             </figcaption><video id=\"ts-video\" controls muted autoplay playsinline></video>\
             </figure>\n",
        );
    }
    body.push_str("</div>\n");
}

/// The timeline: the storyboard strip (filled by the page's script from
/// `storyboard.vtt`), the marks as SVG, a playhead; a click seeks the players.
fn timeline_html(body: &mut String, base: &str, probed: &Probed, caller: &Caller) {
    let Some(duration_ms) = mpd_duration_ms(&probed.mpd) else {
        return;
    };
    let report = &probed.report;
    let periods = mpd_periods(&probed.mpd);
    let mut marks: Vec<Mark> = (report.breaks.iter())
        .map(|b| Mark {
            kind: MarkKind::Break,
            at_ms: b.cut_ms,
            label: b.id.clone(),
            duration: b.duration.clone(),
        })
        .collect();
    if periods.len() > 1 {
        marks.extend(periods.iter().map(|p| Mark {
            kind: MarkKind::Part,
            at_ms: p.start_ms,
            label: p.id.clone(),
            duration: None,
        }));
    }
    // The storyboard of a plain, clear title with a video (not offered otherwise).
    let storyboard = (report.variants.first())
        .filter(|v| v.resolution.is_some() && !mpd_protected(&probed.mpd) && periods.len() <= 1)
        .and_then(|v| version_folder(&v.uri))
        .map(|folder| format!("{base}/{folder}/storyboard.vtt"));
    let _ = write!(
        body,
        "<h2>timeline <small>{} &#183; click to seek{}</small></h2>\n\
         <section id=\"timeline\" data-duration-ms=\"{duration_ms}\"{}{}>\n\
         <div id=\"tile-pop\" hidden></div><div id=\"track\"><div id=\"strip\"></div>{}\
         <div id=\"playhead\"></div></div><small id=\"storyboard-state\"></small>\n</section>\n",
        time_text(duration_ms),
        match marks.is_empty() {
            true => "",
            false => " &#183; <span class=\"key-break\">breaks</span>, parts marked",
        },
        match &storyboard {
            Some(url) => format!(" data-storyboard=\"{}\"", escape(url)),
            None => String::new(),
        },
        match &caller.token {
            Some(token) => format!(" data-token=\"{}\"", escape(token)),
            None => String::new(),
        },
        timeline_svg(duration_ms, &marks),
    );
}

/// The chart of segment bit rates, from the title the probe loaded (a sequence's parts
/// are not drawn: its reference part alone would mislead).
async fn chart_html(body: &mut String, app: &Arc<App>, key: &ObjectKey, probed: &Probed) {
    let Some(duration_ms) = mpd_duration_ms(&probed.mpd) else {
        return;
    };
    let Ok((_, cached)) = load_view(&app.catalog, key, &View::default()).await else {
        return;
    };
    if cached.sequence.is_some() {
        body.push_str("<h2>segment bit rates</h2>\n<p id=\"chart\">not drawn for a sequence</p>\n");
        return;
    }
    // One pass over each track's sample sizes: off the workers for long titles.
    let Ok(rungs) = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let rungs = rung_rates(&cached.title);
        let samples: usize = (cached.title.index.tracks.iter())
            .map(|t| t.samples.len())
            .sum();
        let micros = started.elapsed().as_micros();
        tracing::debug!(samples, micros, "preview: segment bit rates summed");
        rungs
    })
    .await
    else {
        return;
    };
    let _ = write!(
        body,
        "<h2>segment bit rates <small>per rendition, as sent; dashed: the declared \
         bandwidth, red: segments over it</small></h2>\n<div id=\"chart\">{}</div>\n",
        chart_svg(&rungs, duration_ms)
    );
}

/// The server's answer: its statuses, or the status and reason a player gets.
fn status_html(body: &mut String, report: &KeyReport) {
    match &report.reason {
        Some(reason) => {
            let _ = writeln!(
                body,
                "<p class=\"reason\" id=\"reason\">{} {}</p>",
                report.status(),
                escape(reason)
            );
        }
        None => {
            let _ = writeln!(
                body,
                "<p id=\"status\"><span class=\"badge ok\">ok</span> master.m3u8 {} &middot; \
                 manifest.mpd {}</p>",
                report.hls_status, report.dash_status
            );
        }
    }
}

/// The variants, renditions and ad breaks as tables (nothing for a failed title).
fn tables_html(body: &mut String, report: &KeyReport) {
    if report.reason.is_some() {
        return;
    }
    body.push_str(
        "<h2>variants</h2>\n<table id=\"variants\"><tr><th>bandwidth</th><th>resolution</th>\
         <th>codecs</th><th>frame rate</th><th>range</th><th>audio</th><th>subtitles</th>\
         <th>captions</th></tr>\n",
    );
    let cell = |v: &Option<String>| escape(v.as_deref().unwrap_or("-"));
    for v in &report.variants {
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            v.bandwidth,
            cell(&v.resolution),
            cell(&v.codecs),
            cell(&v.frame_rate),
            cell(&v.video_range),
            cell(&v.audio),
            cell(&v.subtitles),
            cell(&v.closed_captions),
        );
    }
    body.push_str("</table>\n");
    if !report.renditions.is_empty() {
        body.push_str(
            "<h2>languages and subtitles</h2>\n<table id=\"renditions\"><tr><th>type</th>\
             <th>group</th><th>language</th><th>name</th><th>default</th>\
             <th>accessibility</th></tr>\n",
        );
        for r in &report.renditions {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.kind),
                escape(&r.group),
                cell(&r.language),
                cell(&r.name),
                if r.default { "yes" } else { "" },
                escape(&accessibility(r)),
            );
        }
        body.push_str("</table>\n");
    }
    if !report.breaks.is_empty() {
        body.push_str(
            "<h2>ad breaks</h2>\n<table id=\"breaks\"><tr><th>id</th><th>cut at</th>\
             <th>duration</th><th>asset</th></tr>\n",
        );
        for b in &report.breaks {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}.{:03} s</td><td>{} s</td><td>{}</td></tr>",
                escape(&b.id),
                b.cut_ms / 1000,
                b.cut_ms % 1000,
                cell(&b.duration),
                cell(&b.asset),
            );
        }
        body.push_str("</table>\n");
    }
}

/// What a rendition says for accessibility, in words: its caption channel, audio
/// description, SDH; empty when nothing.
fn accessibility(r: &super::probe::Rendition) -> String {
    let mut words: Vec<&str> = Vec::new();
    if let Some(id) = r.instream_id.as_deref() {
        words.push(id);
    }
    let characteristics = r.characteristics.as_deref().unwrap_or("");
    if characteristics.contains("public.accessibility.describes-video") {
        words.push("audio description");
    }
    if characteristics.contains("public.accessibility.transcribes-spoken-dialog") {
        words.push("SDH");
    }
    words.join(", ")
}
