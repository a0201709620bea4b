//! TTML sidecars: any bytes through `media::parse_sidecar` as TTML (the parse the server
//! runs on a `.ttml`, `.dfxp` or `.xml` subtitle file). Must not panic, hang or allocate
//! without bound; an error must be one line; every cue must end after it starts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vodpack::media::{parse_sidecar, SidecarFormat};

fuzz_target!(|file: &[u8]| {
    match parse_sidecar(SidecarFormat::Ttml, file) {
        Ok(cues) => assert!(cues.iter().all(|c| c.end_ns > c.start_ns)),
        Err(e) => assert!(!e.to_string().contains('\n')),
    }
});
