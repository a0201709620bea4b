//! The fields of H.264 and H.265 parameter sets (sequence and picture) that other parts of
//! the media code need: the colour code reads the VUI that follows an SPS (`color::sps`),
//! and the slice header parser (`slice_header`) needs the fields that decide the length of a
//! slice header. The SPS syntax before the VUI is walked here once for both.
//!
//! Parameter sets come from the file: every read is bounded (see `bits`), and a set that
//! ends early or breaks a bound gives `None`. The walkers are lenient where only a later
//! reader needs a bound (they keep raw values; the slice header parser checks the ranges it
//! depends on), so the colour code reads what it read before.

pub(crate) mod avc;
pub(crate) mod hevc;
