//! The perfect Connect Four player: the solver behind the `Agent` interface.

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};
use tabula_search::agent::{Agent, Choice};

use crate::book::OpeningBook;
use crate::solver::Solver;
use crate::table::TableTooLarge;

/// Perfect Connect Four play with the solver.
///
/// Where its opening book holds the position it plays the book's move (the strongest,
/// the first from the centre out). Elsewhere, before ply `strong_from` it solves weakly
/// (it keeps a won game won and a drawn game drawn, the cheaper proof); from then on
/// strongly (it also wins as fast as possible and loses as slowly as possible).
pub struct SolverAgent {
    solver: Solver,
    strong_from: usize,
}

impl SolverAgent {
    /// Ply from which [`SolverAgent::new`] solves strongly on 7x6.
    pub const STRONG_FROM: usize = 12;

    /// A solver-backed agent for boards of `geo` with a table of `table_mb` MiB, or an
    /// error if that much memory cannot be had.
    pub fn try_new(geo: Geometry, table_mb: usize) -> Result<Self, TableTooLarge> {
        Ok(Self::with_solver(Solver::try_new(geo, table_mb)?))
    }

    /// As [`Self::try_new`], for table sizes fixed in code.
    pub fn new(geo: Geometry, table_mb: usize) -> Self {
        Self::with_solver(Solver::new(geo, table_mb))
    }

    fn with_solver(solver: Solver) -> Self {
        let strong_from = if solver.geometry().cells() >= Geometry::STANDARD.cells() {
            Self::STRONG_FROM
        } else {
            0
        };
        SolverAgent {
            solver,
            strong_from,
        }
    }

    /// Uses an opening book for the positions it holds.
    pub fn set_book(&mut self, book: std::sync::Arc<OpeningBook>) {
        self.solver.set_book(book);
    }
}

/// Says what a Pons score means for the side to move at `ply` on a board of `cells`.
pub fn describe_score(score: i32, ply: usize, cells: usize) -> String {
    if score == 0 {
        return "draw".into();
    }
    // the winner's k-th stone wins, with score = cells/2 + 1 - k
    let k = (cells / 2 + 1) as i32 - score.abs();
    let mover_stones = (ply / 2) as i32;
    let winner_stones = if score > 0 {
        mover_stones
    } else {
        ply.div_ceil(2) as i32
    };
    let moves = (k - winner_stones).max(1);
    let s = if moves == 1 { "" } else { "s" };
    if score > 0 {
        format!("win in {moves} move{s} (score {score})")
    } else {
        format!("loss in {moves} move{s} (score {score})")
    }
}

impl Agent<ConnectFour> for SolverAgent {
    fn name(&self) -> String {
        "solver".into()
    }

    fn choose(&mut self, game: &ConnectFour) -> Option<Choice<u8>> {
        if let Some((mv, score)) = self.solver.book_move(game) {
            let evaluation = describe_score(score, game.ply(), game.geometry().cells());
            return Some(Choice { mv, evaluation });
        }
        let weak = game.ply() < self.strong_from;
        let (mv, score) = self.solver.best_move(game, weak).ok()?;
        let evaluation = if weak {
            match score {
                1 => "win (weak solve)".to_string(),
                0 => "draw (weak solve)".to_string(),
                _ => "loss (weak solve)".to_string(),
            }
        } else {
            describe_score(score, game.ply(), game.geometry().cells())
        };
        Some(Choice { mv, evaluation })
    }

    fn thinking_note(&self, game: &ConnectFour) -> Option<String> {
        // Past the book, early 7x6 positions take seconds to a minute to prove.
        (game.geometry() == Geometry::STANDARD
            && game.ply() < Self::STRONG_FROM
            && self.solver.book_move(game).is_none())
        .then(|| "AI is thinking (early 7x6 positions can take a minute to prove)...".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions() {
        // 4455: X to move wins with its 4th stone, two moves from now
        assert_eq!(describe_score(18, 4, 42), "win in 2 moves (score 18)");
        // 44455554221: O to move loses to X's 7th stone, X has 6 stones
        assert_eq!(describe_score(-15, 11, 42), "loss in 1 move (score -15)");
        assert_eq!(describe_score(0, 3, 42), "draw");
    }

    #[test]
    fn solver_agent_plays_the_win() {
        let g = ConnectFour::from_moves(Geometry::STANDARD, "4455").unwrap();
        let mut a = SolverAgent::new(Geometry::STANDARD, 8);
        assert_eq!(a.name(), "solver");
        assert!(a.thinking_note(&g).is_some());
        let c = a.choose(&g).expect("a move");
        assert_eq!(c.evaluation, "win (weak solve)");
        // any move that keeps the win will do: the opponent must lose after it
        let mut after = g;
        after.play(c.mv);
        let mut check = Solver::new(Geometry::STANDARD, 8);
        assert_eq!(check.solve(&after, true), Ok(-1));
        // late in the game the agent solves strongly, and at once
        let g = ConnectFour::from_moves(Geometry::STANDARD, "7422341735647741166133573473242566")
            .unwrap();
        assert!(a.thinking_note(&g).is_none());
        let c = a.choose(&g).expect("a move");
        assert_eq!(c.evaluation, "win in 4 moves (score 1)");
    }
}
