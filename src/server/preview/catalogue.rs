//! The catalogue: one page of the titles under a prefix, each a card with its poster,
//! duration, video ladder, languages and status (ok, or the status and reason a player
//! gets).
//!
//! Bounded: a page reads at most [`PAGE_SCAN`] listed objects to find at most
//! [`PAGE_TITLES`] titles (media files and title documents), and links to the next page
//! after the last object it read, so no request lists or loads the whole catalogue. Each
//! title shown is asked for as a player would (`probe`: its `master.m3u8` and
//! `manifest.mpd`, in process, [`PROBES_AT_ONCE`] at a time), which costs what a manifest
//! request costs (its metadata load, then cached in the catalog like any title's) and
//! nothing per title beyond it. The poster is an ordinary thumbnail URL in the title's
//! version folder, so a browser or CDN caches it for a year; the page's script asks for
//! the posters in view two at a time (the default `thumbnail-max-decodes`), so a page of
//! 50 does not queue 50 decodes at once.

use std::fmt::Write as _;
use std::sync::Arc;

use futures_util::StreamExt;

use super::chart::time_text;
use super::facts::version_folder;
use super::facts::{ladder_text, languages_text, mpd_duration_ms, mpd_periods, mpd_protected};
use super::html::{escape, page, page_script, with_token, Query};
use super::probe::{encode_key, probe_as, Caller, Probed};
use crate::server::app::App;
use crate::source::{ObjectKey, SourceError};

/// Titles shown per page.
pub const PAGE_TITLES: usize = 50;
/// Listed objects read at most to fill one page (the rest of a page may be other files).
pub const PAGE_SCAN: usize = 2_000;
/// Titles of a page probed at once (each a manifest request's load, under admission).
pub const PROBES_AT_ONCE: usize = 4;
/// Width of a poster, in pixels.
const POSTER_WIDTH: u32 = 320;

/// Extensions of the titles listed: media files and title documents.
const TITLE_EXTENSIONS: [&str; 5] = [".mp4", ".m4v", ".m4a", ".mov", ".json"];

/// One page of the titles under the prefix.
pub async fn list_page(app: &Arc<App>, query: &Query, caller: &Caller) -> String {
    let listed = list(app, query).await;
    let token = caller.token.as_deref();
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>vodpack preview</h1>\n<form class=\"search\" method=\"get\" action=\"/\"><label>\
         prefix <input name=\"prefix\" value=\"{}\"></label>{} <button>list</button></form>\n",
        escape(&query.prefix),
        match token {
            Some(t) => format!(
                "<input type=\"hidden\" name=\"token\" value=\"{}\">",
                escape(t)
            ),
            None => String::new(),
        }
    );
    if let Some(error) = &listed.error {
        let _ = writeln!(
            body,
            "<p class=\"reason\" id=\"reason\">{}</p>",
            escape(error)
        );
    }
    if listed.titles.is_empty() {
        body.push_str("<p>No titles (.mp4, .m4v, .m4a, .mov, .json) here.</p>\n");
    }
    // Probed a few at a time, in listing order.
    let probes: Vec<(String, Option<Probed>)> =
        futures_util::stream::iter(listed.titles.iter().cloned())
            .map(|key| async move {
                let probed = match ObjectKey::parse(&key) {
                    Ok(parsed) => Some(probe_as(app, &parsed, caller).await),
                    Err(_) => None,
                };
                (key, probed)
            })
            .buffered(PROBES_AT_ONCE)
            .collect()
            .await;
    body.push_str("<ul id=\"titles\">\n");
    for (key, probed) in &probes {
        card(&mut body, query, caller, key, probed.as_ref());
    }
    body.push_str("</ul>\n");
    if let (true, Some(last)) = (listed.more, &listed.last_scanned) {
        let _ = writeln!(
            body,
            "<p class=\"pages\"><a id=\"next\" href=\"{}\">next page</a></p>",
            escape(&Query::href(&query.prefix, Some(last), None, token))
        );
    }
    page("vodpack preview", &body, &page_script())
}

/// One title's card: poster, key, facts, status.
fn card(body: &mut String, query: &Query, caller: &Caller, key: &str, probed: Option<&Probed>) {
    let href = Query::href(&query.prefix, None, Some(key), caller.token.as_deref());
    let _ = write!(body, "<li class=\"card\" data-key=\"{}\">", escape(key));
    let poster = probed.and_then(|p| poster_url(key, p, caller));
    match poster {
        Some(src) => {
            let _ = write!(
                body,
                "<a href=\"{}\"><img class=\"poster\" alt=\"\" data-src=\"{}\"></a>",
                escape(&href),
                escape(&src)
            );
        }
        None => {
            let _ = write!(
                body,
                "<a href=\"{}\" class=\"poster noposter\">no picture</a>",
                escape(&href)
            );
        }
    }
    let _ = write!(
        body,
        "<div class=\"about\"><a class=\"title\" href=\"{}\">{}</a>",
        escape(&href),
        escape(key)
    );
    match probed {
        Some(Probed { report, mpd }) if report.is_ok() => {
            let mut facts = Vec::new();
            if let Some(ms) = mpd_duration_ms(mpd) {
                facts.push(time_text(ms));
            }
            let ladder = ladder_text(report);
            facts.push(match ladder.is_empty() {
                true => "audio only".to_owned(),
                false => ladder,
            });
            let languages = languages_text(report);
            if !languages.is_empty() {
                facts.push(languages);
            }
            let _ = write!(
                body,
                "<div class=\"facts\"><span class=\"badge ok\">ok</span> {}</div>",
                escape(&facts.join(" \u{b7} "))
            );
        }
        Some(Probed { report, .. }) => {
            let _ = write!(
                body,
                "<div class=\"facts\"><span class=\"badge failed\">{}</span></div>\
                 <div class=\"why\">{}</div>",
                report.status(),
                escape(report.reason.as_deref().unwrap_or_default())
            );
        }
        None => body.push_str(
            "<div class=\"facts\"><span class=\"badge failed\">400</span></div>\
             <div class=\"why\">bad request path</div>",
        ),
    }
    body.push_str("</div></li>\n");
}

/// The poster of a served title with a video: the frame a tenth of the way in (at most a
/// minute), `POSTER_WIDTH` wide, in its version folder. `None` for audio only, an
/// encrypted title or a sequence (thumbnails are not offered for those), and for a codec
/// this build does not decode.
pub fn poster_url(key: &str, probed: &Probed, caller: &Caller) -> Option<String> {
    let report = &probed.report;
    let first = report.variants.first()?;
    if !report.is_ok()
        || first.resolution.is_none()
        || !decodes_here(first.codecs.as_deref().unwrap_or_default())
        || mpd_protected(&probed.mpd)
        || mpd_periods(&probed.mpd).len() > 1
    {
        return None;
    }
    let folder = version_folder(&first.uri)?;
    let at_ms = (mpd_duration_ms(&probed.mpd).unwrap_or(0) / 10).min(60_000);
    Some(with_token(
        format!(
            "/vod/{}/{folder}/thumb-{at_ms}-w{POSTER_WIDTH}.jpg",
            encode_key(key)
        ),
        caller,
    ))
}

/// Whether this build decodes the thumbnails of a video with these `CODECS`: H.264
/// always (OpenH264), the others with the `libavcodec` feature (else they answer 422).
fn decodes_here(codecs: &str) -> bool {
    cfg!(feature = "libavcodec")
        || (codecs.split(',').next())
            .is_some_and(|video| video.starts_with("avc1") || video.starts_with("avc3"))
}

/// What one page's listing found.
struct Listed {
    /// The title keys, in listing order (at most [`PAGE_TITLES`]).
    titles: Vec<String>,
    /// The last object read, where the next page starts.
    last_scanned: Option<String>,
    /// Whether there is more to list.
    more: bool,
    /// Why the listing stopped short, in words for the page.
    error: Option<String>,
}

/// List up to [`PAGE_SCAN`] objects under the prefix after `query.after`, keeping up to
/// [`PAGE_TITLES`] titles.
async fn list(app: &Arc<App>, query: &Query) -> Listed {
    let source = app.catalog.source().clone();
    let mut listing = source.list(query.prefix.clone(), query.after.clone());
    let mut listed = Listed {
        titles: Vec::new(),
        last_scanned: None,
        more: false,
        error: None,
    };
    let mut scanned = 0usize;
    while let Some(item) = listing.next().await {
        if listed.titles.len() >= PAGE_TITLES || scanned >= PAGE_SCAN {
            listed.more = true;
            break;
        }
        scanned += 1;
        match item {
            Ok(object) => {
                let lower = object.key.to_ascii_lowercase();
                if TITLE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
                    listed.titles.push(object.key.clone());
                }
                listed.last_scanned = Some(object.key);
            }
            Err(e) => {
                tracing::warn!(error = %e, prefix = %query.prefix, "preview listing failed");
                listed.error = Some(match e {
                    SourceError::NotFound { .. } | SourceError::OutsideRoot { .. } => {
                        "no such prefix".to_owned()
                    }
                    _ => "the source could not be listed".to_owned(),
                });
                break;
            }
        }
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::preview::probe::{KeyReport, Variant, Verdict};

    fn probed(codecs: &str, resolution: Option<&str>, mpd: &str) -> Probed {
        Probed {
            report: KeyReport {
                key: "a b.mp4".into(),
                verdict: Verdict::Ok,
                hls_status: 200,
                dash_status: 200,
                reason: None,
                variants: vec![Variant {
                    bandwidth: 1,
                    resolution: resolution.map(str::to_owned),
                    codecs: Some(codecs.into()),
                    frame_rate: None,
                    video_range: None,
                    audio: None,
                    subtitles: None,
                    closed_captions: None,
                    uri: "v0123456789abcdef/index-t1.m3u8".into(),
                }],
                renditions: Vec::new(),
                breaks: Vec::new(),
            },
            mpd: mpd.into(),
        }
    }

    const MPD: &str = "<MPD mediaPresentationDuration=\"PT30S\"><Period id=\"1\"></Period></MPD>";

    #[test]
    fn a_poster_is_a_thumbnail_in_the_version_folder_a_tenth_of_the_way_in() {
        let caller = Caller {
            token: Some("1.n.x.y".into()),
            peer: None,
        };
        assert_eq!(
            poster_url(
                "a b.mp4",
                &probed("avc1.64001f,mp4a.40.2", Some("640x360"), MPD),
                &caller
            )
            .as_deref(),
            Some("/vod/a%20b.mp4/v0123456789abcdef/thumb-3000-w320.jpg?token=1.n.x.y")
        );
    }

    #[test]
    fn no_poster_for_audio_encryption_sequences_or_codecs_not_decoded_here() {
        let none = Caller::default();
        let audio = probed("mp4a.40.2", None, MPD);
        assert_eq!(poster_url("a", &audio, &none), None);
        let encrypted = probed(
            "avc1.64001f",
            Some("1x1"),
            "<MPD><ContentProtection/></MPD>",
        );
        assert_eq!(poster_url("a", &encrypted, &none), None);
        let sequence = probed("avc1.64001f", Some("1x1"), "<MPD><Period/><Period/></MPD>");
        assert_eq!(poster_url("a", &sequence, &none), None);
        let av1 = probed("av01.0.04M.10", Some("1x1"), MPD);
        assert_eq!(
            poster_url("a", &av1, &none).is_some(),
            cfg!(feature = "libavcodec")
        );
    }
}
