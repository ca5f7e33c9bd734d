//! The eight symmetries of a square board (the dihedral group D4) and the mirror of a
//! rectangular one, shared by every board game that has them.

/// Number of symmetries of a square board.
pub const SQUARE_SYMMETRIES: usize = 8;

/// Maps `(row, col)` on an `n`×`n` board by symmetry `sym` (0 = identity, 1–3 =
/// rotations by 90°, 180°, 270°, 4–7 = those rotations after a left-right mirror).
#[inline]
pub fn square(sym: usize, n: usize, row: usize, col: usize) -> (usize, usize) {
    let last = n - 1;
    let (r, c) = if sym >= 4 {
        (row, last - col)
    } else {
        (row, col)
    };
    match sym % 4 {
        0 => (r, c),
        1 => (c, last - r),
        2 => (last - r, last - c),
        _ => (last - c, r),
    }
}

/// Symmetry that undoes `sym` on a square board.
pub fn square_inverse(sym: usize) -> usize {
    match sym {
        1 => 3,
        3 => 1,
        s => s, // the identity, the half turn and the four reflections are involutions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_distinct_bijections_with_inverses() {
        for n in 1..6 {
            let mut images = Vec::new();
            for sym in 0..SQUARE_SYMMETRIES {
                let mut img = Vec::new();
                for r in 0..n {
                    for c in 0..n {
                        let (r2, c2) = square(sym, n, r, c);
                        assert!(r2 < n && c2 < n);
                        let (r3, c3) = square(square_inverse(sym), n, r2, c2);
                        assert_eq!((r3, c3), (r, c), "sym {sym} n {n}");
                        img.push((r2, c2));
                    }
                }
                let mut s = img.clone();
                s.sort_unstable();
                s.dedup();
                assert_eq!(s.len(), n * n);
                images.push(img);
            }
            if n >= 2 {
                images.sort();
                images.dedup();
                assert_eq!(images.len(), 8, "n {n}");
            }
        }
    }
}
