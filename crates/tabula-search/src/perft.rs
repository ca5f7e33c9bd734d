//! Counting game trees: move sequences and distinct positions by ply, and the results
//! of every complete game. The counts are the classic correctness oracles for rules.

use std::collections::HashMap;

use tabula_core::{Game, Outcome, Player};

/// The counts for one ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerftRow {
    /// Number of moves played.
    pub ply: usize,
    /// Move sequences of this length (games stop at their end).
    pub nodes: u64,
    /// Distinct positions reached after exactly this many moves.
    pub positions: u64,
    /// How many of those distinct positions are finished games.
    pub terminal: u64,
}

/// Counts sequences and distinct positions for plies `0..=depth`, one ply at a time,
/// stopping early (fewer rows) when the next ply would hold more than `max_positions`
/// positions.
///
/// Positions are told apart by their Zobrist hash (64 bits: a collision among the
/// at most millions of positions counted here has a probability below 1e-6).
pub fn perft<G: Game>(root: &G, depth: usize, max_positions: usize) -> Vec<PerftRow> {
    // hash -> (a representative state, number of sequences reaching it)
    let mut level: HashMap<u64, (G, u64)> = HashMap::new();
    level.insert(root.position_hash(), (root.clone(), 1));
    let mut rows = Vec::with_capacity(depth + 1);
    for ply in 0..=depth {
        let row = PerftRow {
            ply,
            nodes: level.values().map(|(_, n)| n).sum(),
            positions: level.len() as u64,
            terminal: level.values().filter(|(g, _)| g.is_terminal()).count() as u64,
        };
        rows.push(row);
        if ply == depth || level.is_empty() {
            break;
        }
        let mut next: HashMap<u64, (G, u64)> = HashMap::with_capacity(level.len() * 4);
        for (g, n) in level.values() {
            for mv in g.legal_moves() {
                let mut child = g.clone();
                child.play(mv);
                next.entry(child.position_hash())
                    .and_modify(|e| e.1 += n)
                    .or_insert((child, *n));
            }
            if next.len() > max_positions {
                // the next ply would not fit: stop here rather than run out of memory
                return rows;
            }
        }
        level = next;
    }
    rows
}

/// How every complete game from a position ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GameCounts {
    /// Games the first player wins.
    pub first_wins: u64,
    /// Games the second player wins.
    pub second_wins: u64,
    /// Drawn games.
    pub draws: u64,
}

impl GameCounts {
    /// All games.
    pub fn total(&self) -> u64 {
        self.first_wins + self.second_wins + self.draws
    }
}

/// Plays out every possible game from `root` (only for small games).
pub fn count_games<G: Game>(root: &G) -> GameCounts {
    let mut counts = GameCounts::default();
    fn walk<G: Game>(g: &G, c: &mut GameCounts) {
        match g.outcome() {
            Some(Outcome::Win(Player::First)) => c.first_wins += 1,
            Some(Outcome::Win(Player::Second)) => c.second_wins += 1,
            Some(Outcome::Draw) => c.draws += 1,
            None => {
                for mv in g.legal_moves() {
                    let mut child = g.clone();
                    child.play(mv);
                    walk(&child, c);
                }
            }
        }
    }
    walk(root, &mut counts);
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::{ConnectFour, TicTacToe};

    #[test]
    fn tictactoe_counts() {
        let rows = perft(&TicTacToe::new(), 9, usize::MAX);
        let nodes: Vec<u64> = rows.iter().map(|r| r.nodes).collect();
        assert_eq!(
            nodes,
            [1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]
        );
        let positions: u64 = rows.iter().map(|r| r.positions).sum();
        assert_eq!(positions, 5478);
        let games = count_games(&TicTacToe::new());
        assert_eq!(games.total(), 255_168);
        assert_eq!(games.first_wins, 131_184);
        assert_eq!(games.second_wins, 77_904);
        assert_eq!(games.draws, 46_080);
    }

    #[test]
    fn connect4_positions_by_ply() {
        let rows = perft(&ConnectFour::new(), 8, usize::MAX);
        let positions: Vec<u64> = rows.iter().map(|r| r.positions).collect();
        assert_eq!(positions, [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]);
        // no game can end before the 7th move
        assert_eq!(rows[6].terminal, 0);
        assert!(rows[7].terminal > 0);
        assert_eq!(rows[4].nodes, 7u64.pow(4));
        // ply 3 has 238 positions: with room for 100, counting stops after ply 2
        assert_eq!(perft(&ConnectFour::new(), 8, 100).len(), 3);
    }
}
