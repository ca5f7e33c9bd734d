//! A Connect Four opening book: exact scores of every position up to a depth, made by
//! Tabula's own solver (`tabula book`), stored as Pons-style `moves score` lines.
//!
//! Positions are looked up under the smaller of their key and their mirror image's, so
//! one entry serves both. The solver consults the book at every node within its depth,
//! which turns the slow proofs at the start of the game into table look-ups.

use std::collections::HashMap;

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};

/// Why a book file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    /// A line that is not `moves score`.
    #[error("book line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Exact scores of positions, by mirror-canonical key.
#[derive(Clone, Debug)]
pub struct OpeningBook {
    geo: Geometry,
    depth: usize,
    scores: HashMap<u64, i8>,
}

impl OpeningBook {
    /// An empty book for boards of `geo`.
    pub fn new(geo: Geometry) -> Self {
        OpeningBook {
            geo,
            depth: 0,
            scores: HashMap::new(),
        }
    }

    /// Reads `moves score` lines (blank lines and `#` comments are skipped).
    pub fn parse(geo: Geometry, text: &str) -> Result<Self, BookError> {
        let mut book = OpeningBook::new(geo);
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |reason: String| BookError::BadLine {
                line: i + 1,
                reason,
            };
            let (moves, score) = match line.rsplit_once(char::is_whitespace) {
                Some((m, s)) => (m.trim(), s),
                None => ("", line), // the empty position
            };
            let score: i8 = score
                .parse()
                .map_err(|_| bad(format!("bad score {score:?}")))?;
            let game = ConnectFour::from_moves(geo, moves).map_err(|e| bad(e.to_string()))?;
            book.insert(&game, score);
        }
        Ok(book)
    }

    /// Records the exact score of `game`.
    pub fn insert(&mut self, game: &ConnectFour, score: i8) {
        self.depth = self.depth.max(game.ply());
        self.scores.insert(self.canonical(game.key()), score);
    }

    /// The deepest ply stored.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Number of positions stored.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The board size.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    #[inline]
    fn canonical(&self, key: u64) -> u64 {
        key.min(self.geo.mirror(key))
    }

    /// The score of the position with this key (`current + mask`), if stored.
    #[inline]
    pub fn get_key(&self, key: u64) -> Option<i32> {
        self.scores.get(&self.canonical(key)).map(|&s| i32::from(s))
    }

    /// The score of `game`, if stored.
    pub fn get(&self, game: &ConnectFour) -> Option<i32> {
        self.get_key(game.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_lookup_and_mirror() {
        let geo = Geometry::STANDARD;
        let book = OpeningBook::parse(geo, "# test\n1\t-5\n4455 18\n44 many\n").unwrap_err();
        assert!(book.to_string().contains("line 4"), "{book}");
        let book = OpeningBook::parse(geo, "# test\n1 -5\n4455 18\n").unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.depth(), 4);
        let g = |m: &str| ConnectFour::from_moves(geo, m).unwrap();
        assert_eq!(book.get(&g("1")), Some(-5));
        assert_eq!(book.get(&g("7")), Some(-5), "mirror image");
        assert_eq!(book.get(&g("4433")), Some(18), "mirror of 4455");
        assert_eq!(book.get(&g("2")), None);
        assert!(OpeningBook::parse(geo, "48 1\n").is_err());
        assert!(OpeningBook::parse(geo, "44 x\n").is_err());
    }
}
