//! Deterministic Zobrist keys.
//!
//! Keys come from SplitMix64 over a fixed seed, so hashes are identical across runs and
//! machines (records and transposition tables stay comparable) without storing tables.

/// SplitMix64: a fast, well-mixed bijection of `u64`.
#[inline]
pub const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The Zobrist key of feature `index` in the key family `family` (one family per game,
/// so that two games never share keys).
#[inline]
pub const fn key(family: u64, index: usize) -> u64 {
    mix(family.wrapping_mul(0x1000_0000_01B3) ^ (index as u64))
}

/// A table of `N` keys of one family, computed at compile time.
pub const fn table<const N: usize>(family: u64) -> [u64; N] {
    let mut t = [0u64; N];
    let mut i = 0;
    while i < N {
        t[i] = key(family, i);
        i += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_deterministic() {
        let t: [u64; 512] = table(7);
        let mut s = t.to_vec();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 512);
        assert_eq!(t[3], key(7, 3));
        assert_ne!(key(7, 3), key(8, 3));
    }
}
