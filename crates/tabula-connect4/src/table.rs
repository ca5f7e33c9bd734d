//! The Connect Four solver's transposition table: one `u64` per entry, always replace.
//!
//! The position key (at most 64 bits) is first scrambled by a bijection; the low bits
//! of the result pick the slot and the remaining high bits are stored as a tag beside
//! two 8-bit bounds (a lower and an upper bound on the score, 0 when unknown). Slot and
//! tag together determine the key, so a hit is never a false one, and an entry costs a
//! single memory access. Keeping both bounds in one entry matters because the solver
//! re-searches the same positions with shifting null windows.

use tabula_core::zobrist::mix;

/// A table larger than the memory the system will give.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a transposition table of {megabytes} MiB cannot be allocated here (try a smaller --table-mb)"
)]
pub struct TableTooLarge {
    /// The size asked for.
    pub megabytes: usize,
}

/// A fixed-size table from position keys to a pair of one-byte bounds.
#[derive(Clone, Debug)]
pub struct SolverTable {
    slots: Vec<u64>,
    bits: u32,
}

impl SolverTable {
    /// Smallest table size (2^16 slots): below it the tag would not fit beside the bounds.
    pub const MIN_BITS: u32 = 16;

    /// A table of `2^bits` entries (8 bytes each), `bits` clamped to 16..=34; fails,
    /// instead of aborting the process, when the memory cannot be had.
    pub fn try_with_bits(bits: u32) -> Result<Self, TableTooLarge> {
        let bits = bits.clamp(Self::MIN_BITS, 34);
        let len = 1usize << bits;
        let mut slots = Vec::new();
        slots.try_reserve_exact(len).map_err(|_| TableTooLarge {
            megabytes: (len * 8) >> 20,
        })?;
        // advised before the pages are first touched, so they can be huge from the start
        advise_huge_pages(slots.spare_capacity_mut().as_ptr() as usize, len * 8);
        slots.resize(len, 0);
        Ok(SolverTable { slots, bits })
    }

    /// A table of `2^bits` entries; aborts like any allocation if memory is short
    /// (for sizes fixed in code: user-chosen sizes go through [`Self::try_with_bits`]).
    pub fn with_bits(bits: u32) -> Self {
        Self::try_with_bits(bits).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The largest table that fits in `megabytes` MiB (at least 512 KiB).
    pub fn try_with_megabytes(megabytes: usize) -> Result<Self, TableTooLarge> {
        let entries = (megabytes.clamp(1, 1 << 30) << 20) / 8;
        Self::try_with_bits(entries.ilog2()).map_err(|_| TableTooLarge { megabytes })
    }

    /// As [`Self::try_with_megabytes`], for sizes fixed in code.
    pub fn with_megabytes(megabytes: usize) -> Self {
        Self::try_with_megabytes(megabytes).unwrap_or_else(|e| panic!("{e}"))
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

    /// Starts loading the slot of `key` into the cache, so that a later
    /// [`SolverTable::get`] does not wait for memory.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let (i, _) = self.locate(key);
            let slot: *const u64 = &self.slots[i];
            // SAFETY: `_mm_prefetch` is unsafe only because it is an SSE intrinsic, and
            // SSE is part of every x86_64 target. A prefetch reads and writes nothing
            // observable (it is a cache hint that never faults), and `slot` points at a
            // live element of `self.slots` in any case.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The `(lower, upper)` bounds stored for `key`; 0 where none is known.
    #[inline]
    pub fn get(&self, key: u64) -> (u8, u8) {
        let (i, tag) = self.locate(key);
        let e = self.slots[i];
        if e >> 16 == tag {
            ((e >> 8) as u8, e as u8)
        } else {
            (0, 0)
        }
    }

    /// Records a lower bound (non-zero) for `key`, keeping a known upper bound.
    #[inline]
    pub fn put_lower(&mut self, key: u64, lower: u8) {
        let (i, tag) = self.locate(key);
        let e = self.slots[i];
        let upper = if e >> 16 == tag { e & 0xFF } else { 0 };
        self.slots[i] = (tag << 16) | (u64::from(lower) << 8) | upper;
    }

    /// Records an upper bound (non-zero) for `key`, keeping a known lower bound.
    #[inline]
    pub fn put_upper(&mut self, key: u64, upper: u8) {
        let (i, tag) = self.locate(key);
        let e = self.slots[i];
        let lower = if e >> 16 == tag { e & 0xFF00 } else { 0 };
        self.slots[i] = (tag << 16) | lower | u64::from(upper);
    }
}

/// Asks the kernel to back `slots` with huge pages: random probes into a table of tens
/// of megabytes otherwise miss the TLB on almost every access. Advice only: if the
/// kernel declines, nothing changes but speed.
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: usize, bytes: usize) {
    // SAFETY: madvise only reads the range's address and length; the range is exactly
    // the allocation's memory (`start`, `bytes` come from a live Vec's reserved
    // capacity), which this process owns and keeps alive, and MADV_HUGEPAGE does not
    // change its contents or validity (it may change only the page size that backs
    // it). The address is rounded down to a page boundary, as madvise requires; the
    // rounded range still lies within the same mapping that holds the allocation.
    unsafe {
        let page = 4096usize;
        let aligned = start & !(page - 1);
        let len = bytes + (start - aligned);
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_both_bounds_and_never_confuses_keys() {
        let mut t = SolverTable::with_bits(16);
        let key = |k: u64| k.wrapping_mul(0x1_0000_0001);
        for k in 0..200_000u64 {
            t.prefetch(key(k));
            t.put_upper(key(k), (k % 200 + 1) as u8);
            assert_eq!(t.get(key(k)), (0, (k % 200 + 1) as u8));
            t.put_lower(key(k), 7);
            assert_eq!(t.get(key(k)), (7, (k % 200 + 1) as u8));
        }
        // with 65536 slots most early keys were overwritten: a miss returns (0, 0),
        // never a value stored for another key
        let mut misses = 0;
        for k in 0..200_000u64 {
            match t.get(key(k)) {
                (0, 0) => misses += 1,
                got => assert_eq!(got, (7, (k % 200 + 1) as u8)),
            }
        }
        assert!(misses > 100_000);
        assert_eq!(SolverTable::with_megabytes(64).bytes(), 64 << 20);
    }
}
