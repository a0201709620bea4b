//! Segment building: any bytes, as a whole file, indexed and then packaged completely:
//! the plan, every manifest, every init segment and every media segment of every
//! rendition (`tests/exercise/mod.rs` lists the checks). The first byte picks the target
//! segment duration, so short and long plans are both explored.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/exercise/mod.rs"]
mod exercise;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, file)) = input.split_first() else {
        return;
    };
    let target_ms = [1, 500, 1000, 2000, 6000, 10_000, 60_000, u32::MAX][usize::from(pick % 8)];
    exercise::exercise(file, target_ms);
});
