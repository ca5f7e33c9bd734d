//! Tic-tac-toe: seed 001's example game, as two 9-bit masks.

use std::fmt;

use crate::game::{Game, GameError, Outcome, Player};
use crate::symmetry;
use crate::zobrist;

const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];
const FULL: u16 = 0b111_111_111;
const ZOBRIST: [u64; 19] = zobrist::table(0x7177);

/// A tic-tac-toe position. Cells are numbered 0–8 row by row from the top left; a move
/// is a cell. X moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TicTacToe {
    /// Stones of X and O as bit masks over the 9 cells.
    stones: [u16; 2],
    hash: u64,
}

impl TicTacToe {
    /// The empty board.
    pub fn new() -> Self {
        Self::default()
    }

    /// Who has a stone on `cell` (0–8), if anyone.
    pub fn cell(&self, cell: usize) -> Option<Player> {
        let bit = 1u16 << cell;
        if self.stones[0] & bit != 0 {
            Some(Player::First)
        } else if self.stones[1] & bit != 0 {
            Some(Player::Second)
        } else {
            None
        }
    }

    fn occupied(&self) -> u16 {
        self.stones[0] | self.stones[1]
    }

    fn has_line(mask: u16) -> bool {
        for line in LINES {
            if mask & line == line {
                return true;
            }
        }
        false
    }
}

impl Game for TicTacToe {
    type Move = u8;

    fn name(&self) -> String {
        "tictactoe".into()
    }

    fn to_move(&self) -> Player {
        if self.ply().is_multiple_of(2) {
            Player::First
        } else {
            Player::Second
        }
    }

    fn ply(&self) -> usize {
        self.occupied().count_ones() as usize
    }

    fn legal_moves(&self) -> Vec<u8> {
        if self.is_terminal() {
            return Vec::new();
        }
        let free = !self.occupied() & FULL;
        (0..9u8).filter(|&c| free & (1 << c) != 0).collect()
    }

    fn play(&mut self, mv: u8) {
        debug_assert!(self.is_legal(mv), "illegal tic-tac-toe move {mv}");
        let p = self.to_move().index();
        self.stones[p] |= 1 << mv;
        self.hash ^= ZOBRIST[mv as usize * 2 + p] ^ ZOBRIST[18];
    }

    fn outcome(&self) -> Option<Outcome> {
        if Self::has_line(self.stones[0]) {
            Some(Outcome::Win(Player::First))
        } else if Self::has_line(self.stones[1]) {
            Some(Outcome::Win(Player::Second))
        } else if self.occupied() == FULL {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    fn position_hash(&self) -> u64 {
        self.hash
    }

    fn action_count(&self) -> usize {
        9
    }

    fn action_of(&self, mv: u8) -> usize {
        mv as usize
    }

    fn move_of(&self, action: usize) -> Option<u8> {
        (action < 9).then_some(action as u8)
    }

    fn encoding_shape(&self) -> [usize; 3] {
        [3, 3, 3]
    }

    fn encode(&self, out: &mut [f32]) {
        let me = self.to_move().index();
        let (mine, theirs) = (self.stones[me], self.stones[1 - me]);
        for cell in 0..9 {
            let bit = 1 << cell;
            out[cell] = f32::from(mine & bit != 0);
            out[9 + cell] = f32::from(theirs & bit != 0);
            out[18 + cell] = f32::from((mine | theirs) & bit == 0);
        }
    }

    fn symmetry_count(&self) -> usize {
        symmetry::SQUARE_SYMMETRIES
    }

    fn transformed(&self, sym: usize) -> Self {
        let mut t = TicTacToe::new();
        // Replay the stones in any order: the hash depends only on the final placement.
        for cell in 0..9 {
            if let Some(p) = self.cell(cell) {
                let to = self.transform_action(sym, cell);
                t.stones[p.index()] |= 1 << to;
                t.hash ^= ZOBRIST[to * 2 + p.index()];
            }
        }
        if !self.ply().is_multiple_of(2) {
            t.hash ^= ZOBRIST[18];
        }
        t
    }

    fn transform_action(&self, sym: usize, action: usize) -> usize {
        let (r, c) = symmetry::square(sym, 3, action / 3, action % 3);
        r * 3 + c
    }

    fn transform_point(&self, sym: usize, row: usize, col: usize) -> (usize, usize) {
        symmetry::square(sym, 3, row, col)
    }

    /// Accepts a cell number `1`–`9` (row by row from the top left, as the board shows
    /// them) or a 0-based `row,col` pair as the seeds write it, e.g. `(0,2)` or `0 2`.
    fn parse_move(&self, text: &str) -> Result<u8, GameError> {
        let bad = |reason: &str| GameError::BadMove {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let t = text.trim().trim_start_matches('(').trim_end_matches(')');
        let parts: Vec<&str> = t
            .split(|ch: char| ch == ',' || ch.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        match parts.as_slice() {
            [n] => match n.parse::<u8>() {
                Ok(n @ 1..=9) => Ok(n - 1),
                _ => Err(bad("expected a cell number 1-9 or row,col")),
            },
            [r, c] => match (r.parse::<u8>(), c.parse::<u8>()) {
                (Ok(r @ 0..=2), Ok(c @ 0..=2)) => Ok(r * 3 + c),
                _ => Err(bad("row and column must each be 0, 1 or 2")),
            },
            _ => Err(bad("expected a cell number 1-9 or row,col")),
        }
    }

    fn format_move(&self, mv: u8) -> String {
        (mv + 1).to_string()
    }
}

/// Draws the board; empty cells show the number that plays there.
impl fmt::Display for TicTacToe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in 0..3 {
            let row: Vec<String> = (0..3)
                .map(|c| match self.cell(r * 3 + c) {
                    Some(Player::First) => "X".to_string(),
                    Some(Player::Second) => "O".to_string(),
                    None => (r * 3 + c + 1).to_string(),
                })
                .collect();
            writeln!(f, " {} ", row.join(" | "))?;
            if r < 2 {
                writeln!(f, "---+---+---")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn after(moves: &[u8]) -> TicTacToe {
        let mut g = TicTacToe::new();
        for &m in moves {
            g.play(m);
        }
        g
    }

    #[test]
    fn seed_001_example() {
        // X centre, O top-left, X top, O bottom-right, X bottom: X wins down the middle.
        let g = after(&[4, 0, 1, 8, 7]);
        assert!(g.is_terminal());
        assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
        assert_eq!(g.terminal_value(), Some(-1.0)); // seen from O, to move
        let mut x = vec![0.0; 27];
        g.encode(&mut x);
        // plane 0 = O (to move): cells 0 and 8
        assert_eq!(&x[0..9], &[1., 0., 0., 0., 0., 0., 0., 0., 1.]);
        assert_eq!(&x[9..18], &[0., 1., 0., 0., 1., 0., 0., 1., 0.]);
        assert_eq!(&x[18..27], &[0., 0., 1., 1., 0., 1., 1., 0., 0.]);
        assert!(g.legal_moves().is_empty());
    }

    #[test]
    fn parse_and_format() {
        let g = TicTacToe::new();
        assert_eq!(g.parse_move("5"), Ok(4));
        assert_eq!(g.parse_move("(0,2)"), Ok(2));
        assert_eq!(g.parse_move(" 2 1 "), Ok(7));
        for bad in ["", "0", "10", "x", "3,3", "1,2,3", "-1"] {
            assert!(g.parse_move(bad).is_err(), "{bad:?}");
        }
        assert_eq!(g.format_move(4), "5");
    }

    #[test]
    fn illegal_moves_leave_state_unchanged() {
        let mut g = after(&[4]);
        let before = g;
        assert!(matches!(g.play_text("5"), Err(GameError::Illegal(_))));
        assert!(g.play_text("banana").is_err());
        assert_eq!(g, before);
        let mut done = after(&[0, 3, 1, 4, 2]);
        let snapshot = done;
        assert_eq!(done.play_text("9"), Err(GameError::GameOver));
        assert_eq!(done, snapshot);
    }

    proptest! {
        #[test]
        fn hash_depends_only_on_position(seq in proptest::collection::vec(0u8..9, 0..9), sym in 0usize..8) {
            let mut g = TicTacToe::new();
            let mut played = Vec::new();
            for m in seq {
                if g.is_legal(m) { g.play(m); played.push(m); }
            }
            // Same stones placed in another order (X moves and O moves interleaved
            // differently) give the same hash.
            let (xs, os): (Vec<_>, Vec<_>) = played.iter().enumerate().partition(|(i, _)| i % 2 == 0);
            let mut h = TicTacToe::new();
            // popping from the back places each side's stones in reverse order
            let mut xs: Vec<u8> = xs.into_iter().map(|(_, &m)| m).collect();
            let mut os: Vec<u8> = os.into_iter().map(|(_, &m)| m).collect();
            while let Some(x) = xs.pop() {
                h.stones[0] |= 1 << x; h.hash ^= ZOBRIST[x as usize * 2] ^ ZOBRIST[18];
                if let Some(o) = os.pop() { h.stones[1] |= 1 << o; h.hash ^= ZOBRIST[o as usize * 2 + 1] ^ ZOBRIST[18]; }
            }
            prop_assert_eq!(h, g);
            // Symmetry maps legal moves to legal moves, and the hash of the image is that
            // of the same stones played directly.
            let t = g.transformed(sym);
            let mut mapped: Vec<usize> = g.legal_moves().iter().map(|&m| g.transform_action(sym, m as usize)).collect();
            mapped.sort_unstable();
            let direct: Vec<usize> = t.legal_moves().iter().map(|&m| m as usize).collect();
            prop_assert_eq!(mapped, direct);
            let mut replay = TicTacToe::new();
            for &m in &played { replay.play(g.transform_action(sym, m as usize) as u8); }
            prop_assert_eq!(replay, t);
            prop_assert_eq!(t.outcome(), g.outcome());
        }
    }
}
