//! Agents: something that picks a move in a position, with a word on why. Front ends
//! play people against agents and agents against each other through this one trait.

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};

use crate::connect4_solver::Solver;
use crate::negamax::{describe, Negamax};

/// A move an agent picked and its evaluation in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice<M> {
    /// The move.
    pub mv: M,
    /// What the agent thinks of the position, from its own side, e.g. "win in 3 moves".
    pub evaluation: String,
}

/// Picks moves in games of type `G`.
pub trait Agent<G: Game> {
    /// A short name, e.g. "minimax".
    fn name(&self) -> String;
    /// A move for the side to move, or `None` when the game is over.
    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>>;
}

/// Perfect play by exhaustive negamax (small games only).
#[derive(Default)]
pub struct NegamaxAgent<G: Game> {
    search: Negamax<G>,
}

impl<G: Game> NegamaxAgent<G> {
    /// An agent that searches to the end of the game, or `depth` moves ahead.
    pub fn new(depth: Option<u32>) -> Self {
        NegamaxAgent {
            search: Negamax::with_depth(depth),
        }
    }
}

impl<G: Game> Agent<G> for NegamaxAgent<G> {
    fn name(&self) -> String {
        "minimax".into()
    }

    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>> {
        let (mv, v) = self.search.best_move(game)?;
        Some(Choice {
            mv,
            evaluation: describe(v, game.ply()),
        })
    }
}

/// Perfect Connect Four play with the solver.
///
/// Before ply `strong_from` it solves weakly (it keeps a won game won and a drawn game
/// drawn, the cheaper proof); from then on strongly (it also wins as fast as possible
/// and loses as slowly as possible).
pub struct SolverAgent {
    solver: Solver,
    strong_from: usize,
}

impl SolverAgent {
    /// Uses an opening book for the positions it holds.
    pub fn set_book(&mut self, book: std::sync::Arc<crate::opening_book::OpeningBook>) {
        self.solver.set_book(book);
    }

    /// Ply from which [`SolverAgent::new`] solves strongly on 7x6.
    pub const STRONG_FROM: usize = 12;

    /// A solver-backed agent for boards of `geo` with a table of `table_mb` MiB.
    pub fn new(geo: Geometry, table_mb: usize) -> Self {
        let strong_from = if geo.cells() >= Geometry::STANDARD.cells() {
            Self::STRONG_FROM
        } else {
            0
        };
        SolverAgent {
            solver: Solver::new(geo, table_mb),
            strong_from,
        }
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
}

/// PUCT Monte-Carlo search with any evaluator (a network, rollouts, uniform priors),
/// reusing its tree from move to move.
pub struct MctsAgent<G: Game> {
    tree: Option<crate::mcts::Mcts<G>>,
    config: crate::mcts::MctsConfig,
    evaluator: Box<dyn crate::evaluator::Evaluator<G>>,
    label: String,
}

impl<G: Game> MctsAgent<G> {
    /// An agent searching with `config` and `evaluator`, called `label` (e.g. "mcts(net)").
    pub fn new(
        config: crate::mcts::MctsConfig,
        evaluator: Box<dyn crate::evaluator::Evaluator<G>>,
        label: impl Into<String>,
    ) -> Self {
        MctsAgent {
            tree: None,
            config,
            evaluator,
            label: label.into(),
        }
    }

    /// Searches `game` (reusing the tree when `game` is its root or one move below it)
    /// and returns the statistics.
    pub fn analyze(&mut self, game: &G) -> crate::mcts::MctsResult<G::Move> {
        let hash = game.position_hash();
        let reusable = self.tree.as_mut().is_some_and(|t| {
            if t.game().position_hash() == hash && t.game().ply() == game.ply() {
                return true;
            }
            let next = t.game().legal_moves().into_iter().find(|&mv| {
                let mut g = t.game().clone();
                g.play(mv);
                g.position_hash() == hash && g.ply() == game.ply()
            });
            next.is_some_and(|mv| t.play(mv).is_ok())
        });
        if !reusable {
            self.tree = None;
        }
        let tree = self
            .tree
            .get_or_insert_with(|| crate::mcts::Mcts::new(game.clone(), self.config));
        tree.search(&mut self.evaluator)
    }
}

impl<G: Game> Agent<G> for MctsAgent<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>> {
        let result = self.analyze(game);
        let mv = result.best()?;
        let visits = result.children.first().map_or(0, |c| c.visits);
        if let Some(t) = self.tree.as_mut() {
            let _ = t.play(mv);
        }
        Some(Choice {
            mv,
            evaluation: format!(
                "value {:+.2}, {} of {} visits",
                result.value, visits, result.root_visits
            ),
        })
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
        let _ = a.name();
        let c = a.choose(&g);
        let c = c.expect("a move");
        assert_eq!(c.evaluation, "win (weak solve)");
        // any move that keeps the win will do: the opponent must lose after it
        let mut after = g;
        after.play(c.mv);
        let mut check = Solver::new(Geometry::STANDARD, 8);
        assert_eq!(check.solve(&after, true), Ok(-1));
        // late in the game the agent solves strongly
        let g = ConnectFour::from_moves(Geometry::STANDARD, "7422341735647741166133573473242566")
            .unwrap();
        let c = a.choose(&g).expect("a move");
        assert_eq!(c.evaluation, "win in 4 moves (score 1)");
    }
}
