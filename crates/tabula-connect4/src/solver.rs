//! The Connect Four strong solver, after Pascal Pons' tutorial.
//!
//! Scores follow his convention, from the side to move: a win with the player's
//! `k`-th stone scores `cells/2 + 1 - k` (`22 - k` on 7x6), a loss the negative of the
//! winner's, a draw 0. The search is negamax with alpha-beta on bitboards, only over
//! moves that do not hand the opponent an immediate win, ordered by how many winning
//! cells they create (centre columns first on ties), with a transposition table that
//! keeps upper and lower bounds, driven by null-window searches that bisect the score
//! range (iterative deepening on the score, not on depth).

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};
use tabula_search::exact::{ExactSolver, SolveError};

use std::sync::Arc;

use crate::book::OpeningBook;
use crate::table::{SolverTable, TableTooLarge};

/// Why a position cannot be solved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    /// The game is already over.
    #[error("the game is already over")]
    GameOver,
    /// The search went past the node limit ([`Solver::set_node_limit`]).
    #[error("not solved within {0} positions")]
    OverBudget(u64),
    /// The solver was built for another board size.
    #[error("position is {got}, the solver was built for {want}")]
    WrongBoard {
        /// The solver's board.
        want: String,
        /// The position's board.
        got: String,
    },
}

/// The value `analyze` reports for a full column (as Pons' solver prints it).
pub use tabula_search::exact::INVALID_MOVE;

#[derive(Clone, Copy, Debug)]
struct Pos {
    /// Stones of the side to move.
    current: u64,
    /// All stones.
    mask: u64,
    moves: i32,
}

impl Pos {
    #[inline]
    fn key(&self) -> u64 {
        self.current.wrapping_add(self.mask)
    }

    #[inline]
    fn play(&self, mv: u64) -> Pos {
        Pos {
            current: self.current ^ self.mask,
            mask: self.mask | mv,
            moves: self.moves + 1,
        }
    }
}

/// A move with its ordering score; a sorted run of at most `width` of them.
struct MoveSorter {
    entries: [(u64, u32); 16],
    size: usize,
}

impl MoveSorter {
    #[inline]
    fn new() -> Self {
        MoveSorter {
            entries: [(0, 0); 16],
            size: 0,
        }
    }

    /// Insertion keeps entries sorted by score; among equal scores the one added last
    /// comes out first.
    #[inline]
    fn add(&mut self, mv: u64, score: u32) {
        let mut pos = self.size;
        self.size += 1;
        while pos > 0 && self.entries[pos - 1].1 > score {
            self.entries[pos] = self.entries[pos - 1];
            pos -= 1;
        }
        self.entries[pos] = (mv, score);
    }

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.size == 0 {
            None
        } else {
            self.size -= 1;
            Some(self.entries[self.size].0)
        }
    }
}

/// A Connect Four solver for one board size; its transposition table persists between
/// calls, which speeds up solving related positions (e.g. `analyze`).
#[derive(Clone, Debug)]
pub struct Solver {
    geo: Geometry,
    table: SolverTable,
    /// Columns from the centre outwards (the first `width` entries).
    order: [usize; 16],
    /// The cells of each column.
    column_masks: [u64; 16],
    /// The lowest score a position can have (stored bounds are offsets from it).
    min_score: i32,
    nodes: u64,
    /// Exact scores of early positions, consulted up to its depth.
    book: Option<Arc<OpeningBook>>,
    /// Deepest ply looked up in the book (-1 without one).
    book_depth: i32,
    /// Positions one call may search (`u64::MAX`: no limit).
    node_limit: u64,
    /// `nodes` at which the current call stops.
    stop_at: u64,
    /// The current call went past its limit: results are meaningless and nothing more
    /// is stored in the table.
    aborted: bool,
}

impl Solver {
    /// Default transposition table size in MiB.
    pub const DEFAULT_TABLE_MB: usize = 64;

    /// A solver for boards of `geo` with a transposition table of `table_mb` MiB, or
    /// an error if that much memory cannot be had.
    pub fn try_new(geo: Geometry, table_mb: usize) -> Result<Self, TableTooLarge> {
        let table = SolverTable::try_with_megabytes(table_mb)?;
        Ok(Self::with_table(geo, table))
    }

    /// As [`Self::try_new`], for table sizes fixed in code (aborts like any allocation
    /// if memory is short).
    pub fn new(geo: Geometry, table_mb: usize) -> Self {
        Self::with_table(geo, SolverTable::with_megabytes(table_mb))
    }

    fn with_table(geo: Geometry, table: SolverTable) -> Self {
        let w = geo.width() as i32;
        let mut order = [0; 16];
        let mut column_masks = [0; 16];
        for i in 0..w {
            order[i as usize] = (w / 2 + (1 - 2 * (i % 2)) * (i + 1) / 2) as usize;
            column_masks[i as usize] = geo.column_mask(i as usize);
        }
        let cells = geo.cells() as i32;
        Solver {
            geo,
            table,
            order,
            column_masks,
            min_score: -cells / 2 + 3,
            nodes: 0,
            book: None,
            book_depth: -1,
            node_limit: u64::MAX,
            stop_at: u64::MAX,
            aborted: false,
        }
    }

    /// Limits each later `solve`, `analyze` or `best_move` to `limit` positions (`None`:
    /// no limit); past it they answer [`SolverError::OverBudget`], so that a front end
    /// can offer exact answers only where they come quickly.
    pub fn set_node_limit(&mut self, limit: Option<u64>) {
        self.node_limit = limit.unwrap_or(u64::MAX);
    }

    /// Starts a call's node budget.
    fn start_budget(&mut self) {
        self.aborted = false;
        self.stop_at = self.nodes.saturating_add(self.node_limit);
    }

    /// `value`, or the budget error if the call went past its limit.
    fn within_budget<T>(&self, value: T) -> Result<T, SolverError> {
        if self.aborted {
            Err(SolverError::OverBudget(self.node_limit))
        } else {
            Ok(value)
        }
    }

    /// Uses `book` for the positions it holds (ignored if made for another board).
    pub fn set_book(&mut self, book: Arc<OpeningBook>) {
        if book.geometry() == self.geo && !book.is_empty() {
            self.book_depth = book.depth() as i32;
            self.book = Some(book);
        }
    }

    /// The board size this solver handles.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Positions searched since the last [`Solver::reset_nodes`].
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Sets the node counter to zero.
    pub fn reset_nodes(&mut self) {
        self.nodes = 0;
    }

    /// Empties the transposition table (for benchmarks that time positions alone).
    pub fn clear(&mut self) {
        self.table.clear();
    }

    fn check(&self, game: &ConnectFour) -> Result<Pos, SolverError> {
        if game.geometry() != self.geo {
            return Err(SolverError::WrongBoard {
                want: ConnectFour::with_geometry(self.geo).name(),
                got: game.name(),
            });
        }
        if game.is_terminal() {
            return Err(SolverError::GameOver);
        }
        Ok(Pos {
            current: game.current(),
            mask: game.mask(),
            moves: game.ply() as i32,
        })
    }

    /// The exact score of `game` (strong), or only its sign (`weak`: 1 win, 0 draw, -1 loss).
    pub fn solve(&mut self, game: &ConnectFour, weak: bool) -> Result<i32, SolverError> {
        let p = self.check(game)?;
        self.start_budget();
        let score = self.solve_pos(&p, weak);
        self.within_budget(score)
    }

    /// The score of every column from the side to move (`INVALID_MOVE` for full columns).
    pub fn analyze(&mut self, game: &ConnectFour, weak: bool) -> Result<Vec<i32>, SolverError> {
        let p = self.check(game)?;
        self.start_budget();
        let cells = self.geo.cells() as i32;
        let mut scores = vec![INVALID_MOVE; self.geo.width()];
        for (col, score) in scores.iter_mut().enumerate() {
            if !game.can_play(col) {
                continue;
            }
            *score = if game.is_winning_move(col) {
                if weak {
                    1
                } else {
                    (cells + 1 - p.moves) / 2
                }
            } else {
                let mv = self.geo.possible(p.mask) & self.column_masks[col];
                let child = p.play(mv);
                -self.solve_pos(&child, weak)
            };
            if self.aborted {
                break;
            }
        }
        self.within_budget(scores)
    }

    /// A best column and the position's score (with `weak`, a column that keeps the
    /// game-theoretic result, and the score's sign); the book's move where the book
    /// holds every column's score ([`Solver::book_move`]). Cheaper than [`Solver::analyze`]:
    /// it solves the position once, then tests columns in search order with one
    /// null-window search each until one reaches that score.
    pub fn best_move(&mut self, game: &ConnectFour, weak: bool) -> Result<(u8, i32), SolverError> {
        self.start_budget();
        let answer = self.best_move_within_budget(game, weak)?;
        self.within_budget(answer)
    }

    /// The book's move and score for `game`, when the book holds the score of every
    /// column there ([`OpeningBook::best_move`]).
    pub fn book_move(&self, game: &ConnectFour) -> Option<(u8, i32)> {
        self.book.as_ref()?.best_move(game)
    }

    fn best_move_within_budget(
        &mut self,
        game: &ConnectFour,
        weak: bool,
    ) -> Result<(u8, i32), SolverError> {
        let p = self.check(game)?;
        if let Some((mv, score)) = self.book_move(game) {
            return Ok((mv, if weak { score.signum() } else { score }));
        }
        let cells = self.geo.cells() as i32;
        let possible = self.geo.possible(p.mask);
        let wins = self.geo.winning_positions(p.current, p.mask) & possible;
        let score = self.solve_pos(&p, weak);
        let found = |col: Option<usize>| col.map(|c| (c as u8, score)).ok_or(SolverError::GameOver);
        if wins != 0 {
            return found(self.first_column(wins));
        }
        let safe = self.non_losing_moves(&p);
        if safe == 0 {
            // every move loses at once: any playable column will do
            return found(self.first_column(possible));
        }
        // A move is best when the child's score is at most `target`.
        let target = if weak { -score.max(0) } else { -score };
        for i in 0..self.geo.width() {
            let col = self.order[i];
            let mv = safe & self.column_masks[col];
            if mv == 0 {
                continue;
            }
            let child = p.play(mv);
            // the child cannot win at once (the move was safe); is its value <= target?
            if p.moves + 1 >= cells || self.negamax(&child, target, target + 1) <= target {
                return Ok((col as u8, score));
            }
        }
        // Not reached when the search is consistent; fall back to the first safe column.
        found(self.first_column(safe))
    }

    /// The position's exact score and, for every column, whether playing it is optimal
    /// (keeps the exact score) and whether it keeps the result (win, draw or loss).
    /// Cheaper than [`Solver::analyze`]: one solve, then one null-window test per column
    /// instead of an exact score per column (wrong moves of early positions can take
    /// minutes to score exactly, but seconds to refute).
    pub fn classify_moves(
        &mut self,
        game: &ConnectFour,
    ) -> Result<(i32, Vec<(bool, bool)>), SolverError> {
        let p = self.check(game)?;
        self.start_budget();
        let cells = self.geo.cells() as i32;
        let score = self.solve_pos(&p, false);
        let win_now = (cells + 1 - p.moves) / 2;
        let lose_now = -(cells - p.moves) / 2;
        let safe = self.non_losing_moves(&p);
        let mut out = vec![(false, false); self.geo.width()];
        for (col, slot) in out.iter_mut().enumerate() {
            if !game.can_play(col) {
                continue;
            }
            let value = if game.is_winning_move(col) {
                Some(win_now)
            } else if safe & self.column_masks[col] == 0 {
                Some(lose_now)
            } else {
                None
            };
            *slot = match value {
                Some(v) => (v == score, v.signum() == score.signum()),
                None => {
                    let child = p.play(self.geo.possible(p.mask) & self.column_masks[col]);
                    let full = p.moves + 1 >= cells;
                    // The move is worth at least t iff the child is worth at most -t.
                    let mut at_least =
                        |t: i32| full && 0 >= t || !full && self.negamax(&child, -t, -t + 1) <= -t;
                    let optimal = at_least(score);
                    let keeps = optimal
                        || match score.signum() {
                            1 => at_least(1),
                            0 => at_least(0),
                            _ => true,
                        };
                    (optimal, keeps)
                }
            };
        }
        self.within_budget((score, out))
    }

    /// The first column in search order (centre outwards) with a cell in `moves`.
    fn first_column(&self, moves: u64) -> Option<usize> {
        self.order[..self.geo.width()]
            .iter()
            .copied()
            .find(|&c| moves & self.column_masks[c] != 0)
    }

    #[inline]
    fn can_win_next(&self, p: &Pos) -> bool {
        self.geo.winning_positions(p.current, p.mask) & self.geo.possible(p.mask) != 0
    }

    fn solve_pos(&mut self, p: &Pos, weak: bool) -> i32 {
        let cells = self.geo.cells() as i32;
        if self.can_win_next(p) {
            return if weak { 1 } else { (cells + 1 - p.moves) / 2 };
        }
        let (mut min, mut max) = if weak {
            (-1, 1)
        } else {
            (-(cells - p.moves) / 2, (cells + 1 - p.moves) / 2)
        };
        // Bisect the score range with null-window searches, probing near zero first
        // (most positions are close to it, and narrow windows cut hardest).
        while min < max {
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.negamax(p, med, med + 1);
            if self.aborted {
                return 0;
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        if weak {
            min.signum()
        } else {
            min
        }
    }

    /// A score as a non-zero table byte.
    #[inline]
    fn encode(&self, score: i32) -> u8 {
        (score - self.min_score + 1) as u8
    }

    #[inline]
    fn decode(&self, byte: u8) -> i32 {
        i32::from(byte) + self.min_score - 1
    }

    /// Moves that do not let the opponent win at once: none if the opponent has two
    /// threats to play, only the block if it has one, and never a cell just below an
    /// opponent's winning cell.
    #[inline]
    fn non_losing_moves(&self, p: &Pos) -> u64 {
        let mut possible = self.geo.possible(p.mask);
        let opponent_win = self.geo.winning_positions(p.current ^ p.mask, p.mask);
        let forced = possible & opponent_win;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return 0;
            }
            possible = forced;
        }
        possible & !(opponent_win >> 1)
    }

    /// Negamax within `(alpha, beta)`. The side to move cannot win at once (its parent
    /// only plays moves that prevent that).
    fn negamax(&mut self, p: &Pos, mut alpha: i32, mut beta: i32) -> i32 {
        debug_assert!(alpha < beta);
        self.nodes += 1;
        if self.nodes >= self.stop_at {
            self.aborted = true;
        }
        if self.aborted {
            return 0;
        }
        let cells = self.geo.cells() as i32;
        let possible = self.non_losing_moves(p);
        if possible == 0 {
            return -(cells - p.moves) / 2;
        }
        if p.moves >= cells - 2 {
            return 0;
        }
        let min = -(cells - 2 - p.moves) / 2;
        if alpha < min {
            alpha = min;
            if alpha >= beta {
                return alpha;
            }
        }
        let mut max = (cells - 1 - p.moves) / 2;
        let key = p.key();
        if p.moves <= self.book_depth {
            if let Some(score) = self.book.as_ref().and_then(|b| b.get_key(key)) {
                return score;
            }
        }
        let (lower, upper) = self.table.get(key);
        if lower != 0 {
            let lower = self.decode(lower);
            if alpha < lower {
                alpha = lower;
                if alpha >= beta {
                    return alpha;
                }
            }
        }
        if upper != 0 {
            max = max.min(self.decode(upper));
        }
        if beta > max {
            beta = max;
            if alpha >= beta {
                return beta;
            }
        }

        let mut moves = MoveSorter::new();
        for &col in self.order[..self.geo.width()].iter().rev() {
            let mv = possible & self.column_masks[col];
            if mv != 0 {
                let threats = self.geo.winning_positions(p.current | mv, p.mask);
                moves.add(mv, threats.count_ones());
                self.table.prefetch(p.play(mv).key());
            }
        }
        while let Some(mv) = moves.next() {
            let child = p.play(mv);
            let score = -self.negamax(&child, -beta, -alpha);
            if score >= beta {
                if !self.aborted {
                    self.table.put_lower(key, self.encode(score));
                }
                return score;
            }
            if score > alpha {
                alpha = score;
            }
        }
        if !self.aborted {
            self.table.put_upper(key, self.encode(alpha));
        }
        alpha
    }
}

impl ExactSolver<ConnectFour> for Solver {
    fn solve(&mut self, game: &ConnectFour, weak: bool) -> Result<i32, SolveError> {
        Solver::solve(self, game, weak).map_err(|e| SolveError(e.to_string()))
    }

    fn analyze(&mut self, game: &ConnectFour, weak: bool) -> Result<Vec<Option<i32>>, SolveError> {
        let scores = Solver::analyze(self, game, weak).map_err(|e| SolveError(e.to_string()))?;
        Ok(scores
            .into_iter()
            .map(|s| (s != INVALID_MOVE).then_some(s))
            .collect())
    }

    fn nodes(&self) -> u64 {
        self.nodes
    }

    fn reset_nodes(&mut self) {
        self.nodes = 0;
    }

    fn clear(&mut self) {
        self.table.clear();
    }

    fn set_node_limit(&mut self, limit: Option<u64>) {
        Solver::set_node_limit(self, limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(moves: &str) -> i32 {
        let g = ConnectFour::from_moves(Geometry::STANDARD, moves).unwrap();
        Solver::new(Geometry::STANDARD, 16)
            .solve(&g, false)
            .unwrap()
    }

    #[test]
    fn pons_examples() {
        assert_eq!(solve("4455"), 18);
        assert_eq!(solve("44455554221"), -15);
    }

    #[test]
    fn small_boards() {
        let value = |w, h| {
            let geo = Geometry::new(w, h).unwrap();
            Solver::new(geo, 8)
                .solve(&ConnectFour::with_geometry(geo), false)
                .unwrap()
        };
        assert_eq!(value(4, 4), 0, "4x4 draw");
        assert_eq!(value(5, 4), 0, "5x4 draw");
        assert!(value(6, 4) < 0, "6x4 second player wins");
        assert_eq!(value(5, 5), 0, "5x5 draw");
    }

    #[test]
    fn agrees_with_generic_negamax_on_a_small_board() {
        // The generic search scores by end ply; map both to win/draw/loss per column.
        use tabula_search::negamax::Negamax;
        let geo = Geometry::new(4, 4).unwrap();
        for moves in ["", "1", "12", "2332", "1234"] {
            let g = ConnectFour::from_moves(geo, moves).unwrap();
            let mut solver = Solver::new(geo, 4);
            let ours: Vec<i32> = solver
                .analyze(&g, false)
                .unwrap()
                .into_iter()
                .filter(|&s| s != INVALID_MOVE)
                .collect();
            let theirs: Vec<i32> = Negamax::new()
                .analyze(&g)
                .into_iter()
                .map(|(_, v)| v.signum())
                .collect();
            let ours: Vec<i32> = ours.iter().map(|s| s.signum()).collect();
            assert_eq!(ours, theirs, "position {moves:?}");
        }
    }

    #[test]
    fn a_node_limit_stops_a_long_search_and_leaves_the_table_sound() {
        let g = ConnectFour::from_moves(Geometry::STANDARD, "44").unwrap();
        let mut solver = Solver::new(Geometry::STANDARD, 16);
        solver.set_node_limit(Some(10_000));
        assert!(matches!(
            solver.analyze(&g, true),
            Err(SolverError::OverBudget(10_000))
        ));
        assert!(matches!(
            solver.solve(&g, false),
            Err(SolverError::OverBudget(_))
        ));
        // Easy positions still answer within the limit, and agree with an unlimited
        // solver that never saw the aborted searches.
        let late = "4453432655";
        let g = ConnectFour::from_moves(Geometry::STANDARD, late).unwrap();
        solver.set_node_limit(Some(5_000_000));
        let limited = solver.analyze(&g, false).unwrap();
        solver.set_node_limit(None);
        let fresh = Solver::new(Geometry::STANDARD, 16)
            .analyze(&g, false)
            .unwrap();
        assert_eq!(limited, fresh);
        assert_eq!(solver.solve(&g, false).unwrap(), solve(late));
    }

    #[test]
    fn analyze_and_weak() {
        let mut s = Solver::new(Geometry::STANDARD, 16);
        let g = ConnectFour::from_moves(Geometry::STANDARD, "4455").unwrap();
        assert_eq!(s.solve(&g, true).unwrap(), 1);
        // Test_L3_R1, first line: column 4 is full, the position scores -1
        let g =
            ConnectFour::from_moves(Geometry::STANDARD, "2252576253462244111563365343671351441")
                .unwrap();
        let scores = s.analyze(&g, false).unwrap();
        assert_eq!(scores[3], INVALID_MOVE);
        assert_eq!(scores.iter().max(), Some(&-1));
        assert_eq!(s.solve(&g, false).unwrap(), -1);
        let (col, v) = s.best_move(&g, false).unwrap();
        assert_eq!((scores[col as usize], v), (-1, -1));
        let (col, v) = s.best_move(&g, true).unwrap();
        assert_eq!((scores[col as usize], v), (-1, -1));
        // weak best moves keep a win a win
        let mut g = ConnectFour::from_moves(Geometry::STANDARD, "4455").unwrap();
        let (col, v) = s.best_move(&g, true).unwrap();
        assert_eq!(v, 1);
        g.play(col);
        assert_eq!(s.solve(&g, true), Ok(-1));
        let weak = s.analyze(&g, true).unwrap();
        assert_eq!(weak.iter().max(), Some(&-1));
        // a winning column scores its win
        let g = ConnectFour::from_moves(Geometry::STANDARD, "7422341735647741166133573473242566")
            .unwrap();
        let scores = s.analyze(&g, false).unwrap();
        assert_eq!(scores.iter().max(), Some(&1));
    }

    #[test]
    fn refuses_finished_and_foreign_positions() {
        let mut s = Solver::new(Geometry::STANDARD, 4);
        let won = ConnectFour::from_moves(Geometry::STANDARD, "1212121").unwrap();
        assert_eq!(s.solve(&won, false), Err(SolverError::GameOver));
        let small = ConnectFour::with_geometry(Geometry::new(4, 4).unwrap());
        assert!(matches!(
            s.solve(&small, false),
            Err(SolverError::WrongBoard { .. })
        ));
    }
}
