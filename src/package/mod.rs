//! Packaging: from a `MediaIndex` to the plan, the CMAF segments and the HLS and DASH
//! manifests. Everything here is synchronous and pure over plain data: it never reads the
//! source. The server does the I/O that a `PreparedSegment` lists.
//!
//! Stages, each a value the next takes by reference: `MediaIndex` -> tracks as their edit
//! lists present them (`edit.rs`) -> [`SegmentPlan`] (`plan.rs`) -> [`Title`] (`title.rs`)
//! -> manifests (`hls.rs`, `dash.rs`, with [`ManifestOptions`] from `signalling.rs`) and
//! segments (`fmp4/`, `ts/`, `webvtt/`). Resource names are made and parsed in `names.rs`.

mod break_cuts;
mod dash;
mod edit;
pub mod encrypt;
mod error;
mod filter;
pub mod fmp4;
mod hls;
mod ladder;
mod names;
mod plan;
pub mod scte35;
mod sequence;
mod signalling;
#[cfg(test)]
mod testing;
pub mod text;
pub mod thumb;
mod title;
pub mod trick;
pub mod ts;
mod view;
pub mod webvtt;
mod windows;

pub use break_cuts::{apply_breaks, breaks_in_window, AdBreaks, OutOfRange, TitleBreak};
pub use dash::{render_mpd, render_mpd_with, render_sequence_mpd};
pub use edit::{present, present_title};
pub use error::PackageError;
pub use filter::{codec_matches, FilterError, ManifestFilter, FILTER_PARAMS};
pub use fmp4::{
    init_segment, muxed_init_segment, prepare_media_segment, prepare_muxed_segment,
    PreparedMuxedSegment, PreparedSegment,
};
pub use hls::{
    render_iframe_playlist, render_iframe_playlist_with, render_image_playlist,
    render_media_playlist, render_media_playlist_with, render_multivariant_playlist,
    render_multivariant_playlist_with, render_sequence_media_playlist,
    render_sequence_multivariant, render_sequence_subtitle_playlist, render_stated_media_playlist,
    render_subtitle_playlist, render_subtitle_playlist_with,
};
pub use hls::{
    render_ts_iframe_playlist, render_ts_iframe_playlist_with, render_ts_media_playlist,
    render_ts_media_playlist_with, render_ts_multivariant_playlist,
    render_ts_multivariant_playlist_with, render_ts_subtitle_playlist,
    render_ts_subtitle_playlist_with, ts_subtitle_segment,
};
pub use ladder::{build_ladder, LadderEntry, LadderRole, CUT_TOLERANCE_MS};
pub use names::{
    document_track_id, parse_version_folder, split_document_track_id, version_folder, Resource,
    ResourceKind, TextCoding, VersionToken, MAX_DOCUMENT_FILES,
};
pub use plan::{plan_segments, SegmentPlan, TrackPlan};
pub use sequence::{build_sequence, PartInput, Sequence, SequencePart};
pub use signalling::{DashProfile, DashSubtitleFormat, ManifestOptions, ManifestProtection};
pub use title::{detected_captions, Rendition, SidecarSubtitle, Title, PACKAGER_FORMAT};
pub use view::{apply_view, Clip, PickKind, TrackPick, TrackSelection, View, ViewError};
pub use windows::{module_duration_ms, Windows, MAX_WINDOWS};
