//! 3x3 patterns: the neighbourhood of an empty point, seen from the side to move, and
//! learned weights for them.
//!
//! A code packs the eight neighbours (north-west to south-east, row by row; each empty,
//! own, opponent or off the board: 2 bits) and, for the four orthogonal neighbours,
//! whether that stone's chain is in atari (1 bit each): 20 bits. The eight symmetries
//! of the square map codes onto each other; weights are stored per canonical code
//! (the smallest of the eight) and looked up through a dense table of every code.
//!
//! A weight is a "gamma" in Coulom's sense: how much more often than an average
//! candidate a move with this pattern is chosen (1: average). The text format is one
//! `CODE GAMMA` line per canonical code (hexadecimal code), `#` comments.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use super::{Go, BORDER, EMPTY};

/// Number of distinct codes.
pub const CODES: usize = 1 << 20;

/// Offsets (dx, dy) of the eight neighbours, in code order (that of `Go::around`).
const CELLS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// The orthogonal neighbours' places among the eight (N, W, E, S), whose atari bits
/// follow the stones.
const ORTHOGONAL: [usize; 4] = [1, 3, 4, 6];

fn transform((x, y): (i32, i32), sym: usize) -> (i32, i32) {
    let (x, y) = if sym & 4 != 0 { (y, x) } else { (x, y) };
    let x = if sym & 1 != 0 { -x } else { x };
    let y = if sym & 2 != 0 { -y } else { y };
    (x, y)
}

/// The code of a pattern under symmetry `sym` (0..8).
pub fn transformed(code: u32, sym: usize) -> u32 {
    let mut out = 0u32;
    for (i, &cell) in CELLS.iter().enumerate() {
        let value = (code >> (2 * i)) & 3;
        let to = transform(cell, sym);
        let j = CELLS.iter().position(|&c| c == to).unwrap_or(i);
        out |= value << (2 * j);
    }
    for (k, &i) in ORTHOGONAL.iter().enumerate() {
        if code & (1 << (16 + k)) != 0 {
            let to = transform(CELLS[i], sym);
            let j = CELLS.iter().position(|&c| c == to).unwrap_or(i);
            let kk = ORTHOGONAL.iter().position(|&o| o == j).unwrap_or(k);
            out |= 1 << (16 + kk);
        }
    }
    out
}

/// The smallest of a code's eight images.
pub fn canonical(code: u32) -> u32 {
    (0..8).map(|s| transformed(code, s)).min().unwrap_or(code)
}

impl Go {
    /// The 3x3 pattern code of the empty point at `action`, from the view of the side
    /// to move.
    pub fn pattern_code(&self, action: u16) -> u32 {
        self.pattern_at(self.action_point(action), Self::colour_of(self.to_move))
    }

    /// The pattern of padded point `p` for colour `me`.
    pub(super) fn pattern_at(&self, p: usize, me: u8) -> u32 {
        let around = self.around(p);
        let mut code = 0u32;
        for (i, &q) in around.iter().enumerate() {
            let c = self.color[q];
            let v = if c == EMPTY {
                0
            } else if c == me {
                1
            } else if c == BORDER {
                3
            } else {
                2
            };
            code |= v << (2 * i);
        }
        for (k, &i) in ORTHOGONAL.iter().enumerate() {
            let q = around[i];
            let c = self.color[q];
            if c != EMPTY && c != BORDER && self.liberties(q) == 1 {
                code |= 1 << (16 + k);
            }
        }
        code
    }
}

/// Learned weights of 3x3 patterns.
#[derive(Clone, Debug)]
pub struct PatternWeights {
    /// Gamma of every code (symmetric images filled in).
    dense: Vec<f32>,
    /// Gamma per canonical code, as learned.
    learned: HashMap<u32, f32>,
}

impl Default for PatternWeights {
    /// Every pattern average (gamma 1).
    fn default() -> Self {
        PatternWeights {
            dense: vec![1.0; CODES],
            learned: HashMap::new(),
        }
    }
}

/// A pattern file that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pattern weights, line {line}: {reason}")]
pub struct PatternError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl PatternWeights {
    /// Weights from `(canonical or not) code, gamma` pairs.
    pub fn from_gammas(gammas: impl IntoIterator<Item = (u32, f32)>) -> Self {
        let mut w = PatternWeights::default();
        for (code, gamma) in gammas {
            let code = canonical(code & (CODES as u32 - 1));
            w.learned.insert(code, gamma);
            for sym in 0..8 {
                w.dense[transformed(code, sym) as usize] = gamma;
            }
        }
        w
    }

    /// The gamma of a code (1 when never learned).
    #[inline]
    pub fn gamma(&self, code: u32) -> f32 {
        self.dense[code as usize & (CODES - 1)]
    }

    /// Number of learned patterns.
    pub fn len(&self) -> usize {
        self.learned.len()
    }

    /// Whether nothing was learned.
    pub fn is_empty(&self) -> bool {
        self.learned.is_empty()
    }

    /// The weights compiled into the program (`data/go-patterns.txt`, written by
    /// `tabula go-patterns`), read once.
    pub fn shipped() -> Arc<Self> {
        static SHIPPED: OnceLock<Arc<PatternWeights>> = OnceLock::new();
        SHIPPED
            .get_or_init(|| {
                // The file is part of the source tree and checked by a test, so a parse
                // error here is a build defect; it falls back to no knowledge.
                Arc::new(
                    Self::parse(include_str!("../../data/go-patterns.txt")).unwrap_or_default(),
                )
            })
            .clone()
    }

    /// Reads the text format.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let mut pairs = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |reason: String| PatternError {
                line: i + 1,
                reason,
            };
            let mut words = line.split_whitespace();
            let (Some(code), Some(gamma), None) = (words.next(), words.next(), words.next()) else {
                return Err(bad("expected `CODE GAMMA`".into()));
            };
            let code = u32::from_str_radix(code, 16)
                .ok()
                .filter(|&c| (c as usize) < CODES)
                .ok_or_else(|| bad(format!("bad pattern code {code:?}")))?;
            let gamma: f32 = gamma
                .parse()
                .ok()
                .filter(|g: &f32| g.is_finite() && *g > 0.0 && *g < 1e6)
                .ok_or_else(|| bad(format!("gamma {gamma:?} is not a positive number")))?;
            pairs.push((code, gamma));
        }
        Ok(Self::from_gammas(pairs))
    }

    /// Writes the text format (canonical codes, ascending), after `header` comment lines.
    pub fn to_text(&self, header: &str) -> String {
        let mut out = String::new();
        for line in header.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let mut codes: Vec<_> = self.learned.iter().collect();
        codes.sort_by_key(|(c, _)| **c);
        for (code, gamma) in codes {
            let _ = writeln!(out, "{code:05x} {gamma:.4}");
        }
        out
    }
}

/// Counts of how often each pattern was available and chosen, for learning gammas.
#[derive(Clone, Debug, Default)]
pub struct PatternCounts {
    /// Per canonical code: (times a legal candidate, times chosen).
    counts: HashMap<u32, (u64, u64)>,
}

impl PatternCounts {
    /// Records one decision: the pattern of every legal candidate point, and of the
    /// chosen one (`None` for a pass).
    pub fn record(&mut self, candidates: &[u32], chosen: Option<u32>) {
        for &c in candidates {
            self.counts.entry(canonical(c)).or_default().0 += 1;
        }
        if let Some(c) = chosen {
            self.counts.entry(canonical(c)).or_default().1 += 1;
        }
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, other: &PatternCounts) {
        for (&code, &(a, b)) in &other.counts {
            let e = self.counts.entry(code).or_default();
            e.0 += a;
            e.1 += b;
        }
    }

    /// Gammas: each pattern's choice rate over the average rate, smoothed towards 1 by
    /// one virtual choice at the average rate; patterns seen fewer than `min_seen` times
    /// are left out (gamma 1).
    pub fn gammas(&self, min_seen: u64) -> PatternWeights {
        let (seen, chosen) = self
            .counts
            .values()
            .fold((0u64, 0u64), |(a, b), &(x, y)| (a + x, b + y));
        let rate = chosen as f64 / seen.max(1) as f64;
        PatternWeights::from_gammas(self.counts.iter().filter(|(_, (a, _))| *a >= min_seen).map(
            |(&code, &(a, b))| {
                let gamma = (b as f64 + 1.0) / (a as f64 * rate + 1.0);
                (code, gamma.clamp(1e-3, 1e3) as f32)
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::GoRules;
    use crate::Game;

    #[test]
    fn symmetric_images_share_a_canonical_code() {
        for code in [0u32, 0b01, 0b1101_1100, 0xfffff, 0x1_0004, 0x3_0c30] {
            let c = canonical(code);
            for sym in 0..8 {
                assert_eq!(canonical(transformed(code, sym)), c, "{code:x} {sym}");
            }
            assert_eq!(transformed(code, 0), code);
        }
    }

    #[test]
    fn codes_read_the_board_from_the_movers_view() {
        // 5x5: Black at C3's north (C4), White at C3's east (D3), Black to move
        let mut g = Go::new(5, GoRules::default()).unwrap();
        g.play(g.parse_move("C4").unwrap());
        g.play(g.parse_move("D3").unwrap());
        let c3 = g.parse_move("C3").unwrap();
        let code = g.pattern_code(c3);
        assert_eq!((code >> 2) & 3, 1, "north is own");
        assert_eq!((code >> 8) & 3, 2, "east is the opponent's");
        assert_eq!(code >> 16, 0, "nobody in atari");
        // in a corner, five neighbours are off the board
        let a1 = g.parse_move("A1").unwrap();
        let corner = g.pattern_code(a1);
        assert_eq!((0..8).filter(|i| (corner >> (2 * i)) & 3 == 3).count(), 5);
        // the same board from White's view swaps own and opponent
        let mut w = g.clone();
        w.set_to_move(crate::Player::Second);
        assert_eq!((w.pattern_code(c3) >> 2) & 3, 2);
    }

    #[test]
    fn the_shipped_weights_parse() {
        assert!(PatternWeights::parse(include_str!("../../data/go-patterns.txt")).is_ok());
    }

    #[test]
    fn weights_round_trip_through_text_and_counts_favour_what_is_chosen() {
        let mut counts = PatternCounts::default();
        for _ in 0..100 {
            counts.record(&[1, 2, 3, 4], Some(1));
        }
        let w = counts.gammas(10);
        assert!(
            w.gamma(1) > 3.0 && w.gamma(2) < 0.1,
            "{} {}",
            w.gamma(1),
            w.gamma(2)
        );
        assert_eq!(w.gamma(transformed(1, 5)), w.gamma(1));
        let back = PatternWeights::parse(&w.to_text("test")).unwrap();
        assert_eq!(back.len(), w.len());
        assert!((back.gamma(1) - w.gamma(1)).abs() < 1e-3);
        for bad in ["zz 1", "1 -1", "1 nan", "1", "1 2 3", "fffffff 1"] {
            assert!(PatternWeights::parse(bad).is_err(), "{bad}");
        }
    }
}
