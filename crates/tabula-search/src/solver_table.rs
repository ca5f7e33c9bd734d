//! The Connect Four solver's transposition table: one `u64` per entry, always replace.
//!
//! The position key (at most 64 bits) is first scrambled by a bijection; the low bits
//! of the result pick the slot and the remaining high bits are stored beside the 8-bit
//! value. Slot and stored bits together determine the key, so a hit is never a false
//! one, and one entry costs one cache line access.

use tabula_core::zobrist::mix;

/// A fixed-size table from position keys to one-byte values (0 means empty).
#[derive(Clone, Debug)]
pub struct SolverTable {
    slots: Vec<u64>,
    bits: u32,
}

impl SolverTable {
    /// Smallest table size (2^8 slots): below it the stored bits would not fit.
    pub const MIN_BITS: u32 = 8;

    /// A table of `2^bits` entries (8 bytes each), `bits` clamped to 8..=32.
    pub fn with_bits(bits: u32) -> Self {
        let bits = bits.clamp(Self::MIN_BITS, 32);
        SolverTable {
            slots: vec![0; 1usize << bits],
            bits,
        }
    }

    /// The largest table that fits in `megabytes` MiB.
    pub fn with_megabytes(megabytes: usize) -> Self {
        let entries = (megabytes.max(1) << 20) / 8;
        Self::with_bits(entries.ilog2())
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.slots.fill(0);
    }

    #[inline]
    fn locate(&self, key: u64) -> (usize, u64) {
        let h = mix(key);
        let index = (h & ((1u64 << self.bits) - 1)) as usize;
        (index, h >> self.bits)
    }

    /// Stores `value` (non-zero) for `key`, replacing whatever was in its slot.
    #[inline]
    pub fn put(&mut self, key: u64, value: u8) {
        let (i, tag) = self.locate(key);
        self.slots[i] = (tag << 8) | u64::from(value);
    }

    /// The value stored for `key`, or 0.
    #[inline]
    pub fn get(&self, key: u64) -> u8 {
        let (i, tag) = self.locate(key);
        let e = self.slots[i];
        if e >> 8 == tag {
            e as u8
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_never_confuses_keys() {
        let mut t = SolverTable::with_bits(8);
        for k in 0..10_000u64 {
            t.put(k * 0x1_0000_0001, (k % 200 + 1) as u8);
            assert_eq!(t.get(k * 0x1_0000_0001), (k % 200 + 1) as u8);
        }
        // with 256 slots most early keys were overwritten: a miss returns 0, never a
        // value stored for another key
        let mut misses = 0;
        for k in 0..10_000u64 {
            let v = t.get(k * 0x1_0000_0001);
            if v == 0 {
                misses += 1;
            } else {
                assert_eq!(v, (k % 200 + 1) as u8);
            }
        }
        assert!(misses > 9_000);
        assert_eq!(SolverTable::with_megabytes(64).bytes(), 64 << 20);
    }
}
