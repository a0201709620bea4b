//! Display matrices (ISO/IEC 14496-12 8.2.2.3, 8.3.2.3): how a player places the decoded
//! picture on screen. A phone's portrait video is coded landscape with a 90° matrix in its
//! video `tkhd`, so a packager that drops the matrix shows it on its side.
//!
//! The index keeps one matrix per track, the track's and the movie's (`mvhd`) composed here,
//! so an init segment needs no `mvhd` choice and players that read only `tkhd` see the whole
//! transform. Nothing is checked: a hostile matrix is passed on as it is.

/// The unity matrix, the default of `mvhd` and `tkhd`.
pub const UNITY_MATRIX: [i32; 9] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000];

/// The matrix that applies `track` then `movie`: their product `track * movie`.
///
/// With a unity `movie` (what nearly every writer leaves there) this is `track` itself, bit
/// for bit. Otherwise each term is rounded as ffmpeg's reader rounds it (each product
/// shifted down by the fraction bits of the shared index, then summed), so ffprobe reads the
/// same matrix from the output as from the source; a sum outside 32 bits saturates.
pub(super) fn track_then_movie(track: [i32; 9], movie: [i32; 9]) -> [i32; 9] {
    if movie == UNITY_MATRIX {
        return track;
    }
    // Column 2 (u, v, w) is 2.30; the others 16.16.
    let fraction_bits = |index: usize| if index == 2 { 30 } else { 16 };
    let at = |m: &[i32; 9], row: usize, column: usize| i64::from(m[row * 3 + column]);
    let mut out = [0i32; 9];
    for (i, slot) in out.iter_mut().enumerate() {
        let (row, column) = (i / 3, i % 3);
        // Each product is below 2^62 in size and is shifted down by at least 16 bits, so
        // the sum of three cannot overflow.
        let sum: i64 = (0..3)
            .map(|k| (at(&track, row, k) * at(&movie, k, column)) >> fraction_bits(k))
            .sum();
        *slot = i32::try_from(sum).unwrap_or(if sum < 0 { i32::MIN } else { i32::MAX });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quarter turn as ffmpeg writes it (`-metadata:s:v:0 rotate=90`).
    const QUARTER_TURN: [i32; 9] = [0, -0x0001_0000, 0, 0x0001_0000, 0, 0, 0, 0, 0x4000_0000];
    /// A half turn.
    const HALF_TURN: [i32; 9] = [-0x0001_0000, 0, 0, 0, -0x0001_0000, 0, 0, 0, 0x4000_0000];

    #[test]
    fn a_unity_movie_matrix_leaves_the_track_s_as_it_is() {
        let odd = [1, -2, 3, i32::MIN, i32::MAX, 0, 7, 8, -9];
        assert_eq!(track_then_movie(odd, UNITY_MATRIX), odd);
        assert_eq!(track_then_movie(QUARTER_TURN, UNITY_MATRIX), QUARTER_TURN);
    }

    #[test]
    fn a_movie_turn_adds_to_the_track_s() {
        assert_eq!(track_then_movie(UNITY_MATRIX, QUARTER_TURN), QUARTER_TURN);
        assert_eq!(track_then_movie(QUARTER_TURN, QUARTER_TURN), HALF_TURN);
        assert_eq!(track_then_movie(HALF_TURN, HALF_TURN), UNITY_MATRIX);
    }

    #[test]
    fn a_movie_translation_moves_the_track_s_origin() {
        let mut shift = UNITY_MATRIX;
        shift[6] = 100 << 16;
        shift[7] = 50 << 16;
        let mut want = QUARTER_TURN;
        want[6] = 100 << 16;
        want[7] = 50 << 16;
        assert_eq!(track_then_movie(QUARTER_TURN, shift), want);
    }

    #[test]
    fn hostile_numbers_saturate_instead_of_overflowing() {
        let huge = [i32::MAX; 9];
        let out = track_then_movie(huge, huge);
        assert!(out.iter().all(|v| *v == i32::MAX));
        let low = [i32::MIN; 9];
        assert_eq!(track_then_movie(low, low), [i32::MAX; 9]);
        let mixed = track_then_movie(low, huge);
        assert!(mixed.iter().all(|v| *v == i32::MIN));
    }
}
