//! Metadata parsing: any bytes, as a whole file, through `locate` and `parse_index`
//! (`media::index_from_bytes`, the walk the server runs). Must not panic, abort, hang or
//! allocate without bound; an error must be one printable line; an index must be
//! self-consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/exercise/mod.rs"]
mod exercise;

fuzz_target!(|file: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(file);
    match vodpack::media::index_from_bytes(&bytes, &vodpack::media::MediaLimits::default()) {
        Ok(index) => exercise::check_index(&index, file.len() as u64),
        Err(e) => exercise::check_error(&e),
    }
});
