//! Negamax with alpha-beta pruning and a transposition table, for any [`Game`].
//!
//! Scores are from the side to move. A won game scores `WIN - ply` (the ply at which it
//! ends), a lost one `-(WIN - ply)`, so the search prefers quick wins and slow losses:
//! it does not only avoid losing, it punishes mistakes as fast as it can (seed 004).
//! With a depth limit, positions at the horizon score 0 (unknown), which makes it the
//! "shallow fixed-depth alpha-beta player" used as a sparring partner.

use std::collections::HashMap;

use tabula_core::Game;

/// The score of a win at ply 0; real wins score `WIN - ply`.
pub const WIN: i32 = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    value: i32,
    bound: Bound,
    /// Remaining depth the value was searched to (`u32::MAX`: to the end).
    depth: u32,
    /// Action index of the best move found, for move ordering.
    best: u32,
}

/// A negamax searcher; its transposition table lives as long as it does.
#[derive(Clone, Debug)]
pub struct Negamax<G: Game> {
    table: HashMap<u64, Entry>,
    max_depth: Option<u32>,
    nodes: u64,
    _game: std::marker::PhantomData<fn(G)>,
}

impl<G: Game> Default for Negamax<G> {
    fn default() -> Self {
        Self::new()
    }
}

impl<G: Game> Negamax<G> {
    /// A searcher that looks to the end of the game (exact).
    pub fn new() -> Self {
        Self::with_depth(None)
    }

    /// A searcher that looks `depth` moves ahead at most (`None`: to the end).
    pub fn with_depth(depth: Option<u32>) -> Self {
        Negamax {
            table: HashMap::new(),
            max_depth: depth,
            nodes: 0,
            _game: std::marker::PhantomData,
        }
    }

    /// Positions visited so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The value of `game` for the side to move.
    pub fn value(&mut self, game: &G) -> i32 {
        let depth = self.max_depth.unwrap_or(u32::MAX);
        self.search(game, -WIN - 1, WIN + 1, depth)
    }

    /// The exact value of every legal move, from the side that plays it.
    pub fn analyze(&mut self, game: &G) -> Vec<(G::Move, i32)> {
        let depth = self.max_depth.unwrap_or(u32::MAX);
        game.legal_moves()
            .into_iter()
            .map(|mv| {
                let mut child = game.clone();
                child.play(mv);
                let v = -self.search(&child, -WIN - 1, WIN + 1, depth.saturating_sub(1));
                (mv, v)
            })
            .collect()
    }

    /// The best move and its value; ties go to the first move in the game's order.
    /// `None` when the game is over.
    pub fn best_move(&mut self, game: &G) -> Option<(G::Move, i32)> {
        let mut best: Option<(G::Move, i32)> = None;
        for (mv, v) in self.analyze(game) {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((mv, v));
            }
        }
        best
    }

    fn search(&mut self, game: &G, mut alpha: i32, mut beta: i32, depth: u32) -> i32 {
        self.nodes += 1;
        if let Some(v) = game.terminal_value() {
            let magnitude = WIN - game.ply() as i32;
            return if v > 0.0 {
                magnitude
            } else if v < 0.0 {
                -magnitude
            } else {
                0
            };
        }
        if depth == 0 {
            return 0;
        }
        let key = game.position_hash();
        let alpha0 = alpha;
        let mut first = None;
        if let Some(e) = self.table.get(&key) {
            first = Some(e.best as usize);
            if e.depth >= depth {
                match e.bound {
                    Bound::Exact => return e.value,
                    Bound::Lower => alpha = alpha.max(e.value),
                    Bound::Upper => beta = beta.min(e.value),
                }
                if alpha >= beta {
                    return e.value;
                }
            }
        }
        let mut moves = game.legal_moves();
        if let Some(a) = first {
            if let Some(i) = moves.iter().position(|&m| game.action_of(m) == a) {
                moves[..=i].rotate_right(1);
            }
        }
        let mut best_value = -WIN - 1;
        let mut best_move = 0;
        for mv in moves {
            let mut child = game.clone();
            child.play(mv);
            let v = -self.search(&child, -beta, -alpha, depth - 1);
            if v > best_value {
                best_value = v;
                best_move = game.action_of(mv) as u32;
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                break;
            }
        }
        let bound = if best_value <= alpha0 {
            Bound::Upper
        } else if best_value >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table.insert(
            key,
            Entry {
                value: best_value,
                bound,
                depth,
                best: best_move,
            },
        );
        best_value
    }
}

/// Says what a negamax score means, e.g. "win in 3 moves", for `ply` the current ply.
pub fn describe(score: i32, ply: usize) -> String {
    if score == 0 {
        return "draw".into();
    }
    let end_ply = (WIN - score.abs()) as usize;
    let plies = end_ply.saturating_sub(ply);
    let moves = plies.div_ceil(2);
    let s = if moves == 1 { "" } else { "s" };
    if score > 0 {
        format!("win in {moves} move{s}")
    } else {
        format!("loss in {moves} move{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::{ConnectFour, Outcome, Player, TicTacToe};

    fn play(moves: &[u8]) -> TicTacToe {
        let mut g = TicTacToe::new();
        for &m in moves {
            g.play(m);
        }
        g
    }

    #[test]
    fn tictactoe_is_a_draw_and_every_opening_draws() {
        let mut s = Negamax::new();
        assert_eq!(s.value(&TicTacToe::new()), 0);
        let a = s.analyze(&TicTacToe::new());
        assert_eq!(a.len(), 9);
        assert!(a.iter().all(|&(_, v)| v == 0), "{a:?}");
    }

    #[test]
    fn seed_004_punishes_an_edge_reply() {
        // X (0,0), O (0,1): X wins, and minimax self-play from there shows it.
        let mut g = play(&[0, 1]);
        let mut s = Negamax::new();
        assert!(s.value(&g) > 0);
        while !g.is_terminal() {
            let (mv, _) = s.best_move(&g).unwrap();
            g.play(mv);
        }
        assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
        // X (0,0), O (2,2) also loses for O: only the centre holds.
        let mut s = Negamax::new();
        let replies = s.analyze(&play(&[0]));
        for (mv, v) in replies {
            if mv == 4 {
                assert_eq!(v, 0);
            } else {
                assert!(v < 0, "O reply {mv} should lose, got {v}");
            }
        }
    }

    /// Every strategy the opponent could follow, as a tree: the searcher's own moves
    /// are fixed, every opponent reply is tried.
    fn never_loses(g: &TicTacToe, me: Player, s: &mut Negamax<TicTacToe>) -> u64 {
        if let Some(o) = g.outcome() {
            assert_ne!(o, Outcome::Win(me.other()), "minimax lost:\n{g}");
            return 1;
        }
        if g.to_move() == me {
            let (mv, _) = s.best_move(g).unwrap();
            let mut c = *g;
            c.play(mv);
            never_loses(&c, me, s)
        } else {
            g.legal_moves()
                .into_iter()
                .map(|mv| {
                    let mut c = *g;
                    c.play(mv);
                    never_loses(&c, me, s)
                })
                .sum()
        }
    }

    #[test]
    fn minimax_never_loses_to_any_strategy() {
        let mut s = Negamax::new();
        let as_x = never_loses(&TicTacToe::new(), Player::First, &mut s);
        let as_o = never_loses(&TicTacToe::new(), Player::Second, &mut s);
        assert!(as_x > 50 && as_o > 50, "{as_x} {as_o}");
    }

    #[test]
    fn wins_as_fast_as_possible() {
        // X to move with two ways to finish: it takes the immediate win.
        let g = play(&[0, 3, 1, 4]);
        let mut s = Negamax::new();
        let (mv, v) = s.best_move(&g).unwrap();
        assert_eq!(mv, 2);
        assert_eq!(v, WIN - 5);
        assert_eq!(describe(v, g.ply()), "win in 1 move");
    }

    #[test]
    fn small_connect4_boards() {
        use tabula_core::connect4::Geometry;
        let mut s = Negamax::new();
        let g = ConnectFour::with_geometry(Geometry::new(4, 4).unwrap());
        assert_eq!(s.value(&g), 0);
    }

    #[test]
    fn depth_limited_search_sees_short_threats() {
        // Connect Four: X has three in column 4 and wins there at once.
        let g = ConnectFour::from_moves(Default::default(), "414141").unwrap();
        let mut s = Negamax::with_depth(Some(2));
        let (mv, v) = s.best_move(&g).unwrap();
        assert_eq!(mv, 3);
        assert!(v > 0);
    }
}
