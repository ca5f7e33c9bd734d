//! Seed 000's "mini AlphaGo" game: stones on a 7x7 board, no captures, the game ends
//! after 44 moves (or two passes), and whoever has more stones on the board wins.
//!
//! It is its own small type rather than a flag on [`crate::Go`]: none of Go's chains,
//! liberties, ko or territory applies, and the seed's experiment should not pay for
//! them. Moves and the board use Go's GTP coordinates.

use std::fmt;

use crate::game::{Game, GameError, Outcome, Player};
use crate::go::{format_vertex, parse_vertex};
use crate::symmetry;
use crate::zobrist;

/// Board size.
pub const SIZE: usize = 7;
const POINTS: usize = SIZE * SIZE;
/// The action that passes.
pub const PASS: u16 = POINTS as u16;
/// Moves after which the game ends.
pub const MAX_MOVES: usize = 44;

const ZOBRIST: [u64; POINTS * 2 + 1] = zobrist::table(0x61);
const SIDE_KEY: usize = POINTS * 2;

/// A mini-go position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MiniGo {
    stones: [Option<Player>; POINTS],
    to_move: Player,
    ply: usize,
    passes: u8,
    hash: u64,
}

impl Default for MiniGo {
    fn default() -> Self {
        MiniGo::new()
    }
}

impl MiniGo {
    /// The empty board, Black to move.
    pub fn new() -> MiniGo {
        MiniGo {
            stones: [None; POINTS],
            to_move: Player::First,
            ply: 0,
            passes: 0,
            hash: 0,
        }
    }

    /// The stone at `(row, col)`, row 0 at the top.
    pub fn stone(&self, row: usize, col: usize) -> Option<Player> {
        self.stones[row * SIZE + col]
    }

    /// Black's stones minus White's.
    pub fn score(&self) -> i32 {
        self.stones
            .iter()
            .map(|s| match s {
                Some(Player::First) => 1,
                Some(Player::Second) => -1,
                None => 0,
            })
            .sum()
    }

    fn key(point: usize, player: Player) -> u64 {
        ZOBRIST[point * 2 + player.index()]
    }
}

impl Game for MiniGo {
    type Move = u16;

    fn name(&self) -> String {
        "mini-go".into()
    }

    fn to_move(&self) -> Player {
        self.to_move
    }

    fn ply(&self) -> usize {
        self.ply
    }

    /// Every empty point; a pass only when the board is full.
    fn legal_moves(&self) -> Vec<u16> {
        if self.outcome().is_some() {
            return Vec::new();
        }
        let mut moves: Vec<u16> = (0..POINTS)
            .filter(|&p| self.stones[p].is_none())
            .map(|p| p as u16)
            .collect();
        if moves.is_empty() {
            moves.push(PASS);
        }
        moves
    }

    fn play(&mut self, mv: u16) {
        debug_assert!(
            self.legal_moves().contains(&mv),
            "illegal mini-go move {mv}"
        );
        if mv == PASS {
            self.passes += 1;
        } else {
            self.passes = 0;
            self.stones[mv as usize] = Some(self.to_move);
            self.hash ^= Self::key(mv as usize, self.to_move);
        }
        self.ply += 1;
        self.to_move = self.to_move.other();
        self.hash ^= ZOBRIST[SIDE_KEY];
    }

    fn outcome(&self) -> Option<Outcome> {
        if self.passes < 2 && self.ply < MAX_MOVES {
            return None;
        }
        Some(match self.score() {
            s if s > 0 => Outcome::Win(Player::First),
            s if s < 0 => Outcome::Win(Player::Second),
            _ => Outcome::Draw,
        })
    }

    fn position_hash(&self) -> u64 {
        self.hash
    }

    fn action_count(&self) -> usize {
        POINTS + 1
    }

    fn action_of(&self, mv: u16) -> usize {
        mv as usize
    }

    fn move_of(&self, action: usize) -> Option<u16> {
        (action <= POINTS).then_some(action as u16)
    }

    fn encoding_shape(&self) -> [usize; 3] {
        [3, SIZE, SIZE]
    }

    fn encode(&self, out: &mut [f32]) {
        for (p, s) in self.stones.iter().enumerate() {
            out[p] = f32::from(*s == Some(self.to_move));
            out[POINTS + p] = f32::from(*s == Some(self.to_move.other()));
            out[2 * POINTS + p] = f32::from(s.is_none());
        }
    }

    fn symmetry_count(&self) -> usize {
        symmetry::SQUARE_SYMMETRIES
    }

    fn transformed(&self, sym: usize) -> Self {
        // The side key is in the hash exactly when White is to move.
        let side = if self.to_move == Player::Second {
            ZOBRIST[SIDE_KEY]
        } else {
            0
        };
        let mut t = MiniGo {
            stones: [None; POINTS],
            hash: side,
            ..self.clone()
        };
        for (p, s) in self.stones.iter().enumerate() {
            if let Some(player) = s {
                let q = self.transform_action(sym, p);
                t.stones[q] = Some(*player);
                t.hash ^= Self::key(q, *player);
            }
        }
        t
    }

    fn transform_action(&self, sym: usize, action: usize) -> usize {
        if action >= POINTS {
            return action;
        }
        let (r, c) = symmetry::square(sym, SIZE, action / SIZE, action % SIZE);
        r * SIZE + c
    }

    fn transform_point(&self, sym: usize, row: usize, col: usize) -> (usize, usize) {
        symmetry::square(sym, SIZE, row, col)
    }

    /// GTP coordinates (`D4`) or `pass`.
    fn parse_move(&self, text: &str) -> Result<u16, GameError> {
        Ok(parse_vertex(SIZE, text)?.map_or(PASS, |p| p as u16))
    }

    fn format_move(&self, mv: u16) -> String {
        format_vertex(SIZE, (mv != PASS).then_some(mv as usize))
    }
}

/// Draws the board with GTP coordinates; X is Black, O is White.
impl fmt::Display for MiniGo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::go::draw_board(f, SIZE, |r, c| self.stone(r, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mini_go_is_seed_000() {
        let mut g = MiniGo::new();
        assert_eq!(g.name(), "mini-go");
        let mut moves = 0;
        while g.outcome().is_none() {
            let m = g.legal_moves()[0];
            assert_ne!(m, PASS);
            g.play(m);
            moves += 1;
        }
        assert_eq!(moves, 44);
        // no captures happen: 22 stones each, so a draw by stone count
        assert_eq!(g.score(), 0);
        assert_eq!(g.outcome(), Some(Outcome::Draw));
    }

    #[test]
    fn moves_are_empty_points_in_gtp_coordinates() {
        let mut g = MiniGo::new();
        g.play_text("D4").unwrap();
        assert_eq!(g.stone(3, 3), Some(Player::First));
        assert_eq!(g.score(), 1);
        let before = g.clone();
        assert!(g.play_text("D4").is_err(), "an occupied point");
        assert!(
            g.play_text("pass").is_err(),
            "no pass while points are empty"
        );
        assert_eq!(g, before, "refused moves change nothing");
        assert_eq!(g.format_move(g.parse_move("A7").unwrap()), "A7");
        assert_eq!(g.parse_move("A7").unwrap(), 0);
        assert!(g.parse_move("H1").is_err(), "off the board");
        assert_eq!(g.legal_moves().len(), 48);
    }

    #[test]
    fn symmetries_keep_hashes_consistent() {
        let mut g = MiniGo::new();
        for m in ["C3", "D4", "E6", "B2", "G7"] {
            g.play_text(m).unwrap();
        }
        for sym in 0..8 {
            let t = g.transformed(sym);
            // the same position reached by the transformed moves has the same hash
            let mut direct = MiniGo::new();
            for m in ["C3", "D4", "E6", "B2", "G7"] {
                let a = g.parse_move(m).unwrap() as usize;
                direct.play(g.transform_action(sym, a) as u16);
            }
            assert_eq!(t.position_hash(), direct.position_hash(), "sym {sym}");
            assert_eq!(t.score(), g.score());
        }
    }
}
