//! Exact answers about positions: the [`ExactSolver`] interface that a game's dedicated
//! solver offers to front ends, and [`EvalSet`], test positions whose every move an
//! exact search has labelled, the yardstick of a learner's accuracy.
//!
//! Only the interface and the labelled-set types live here; the solvers themselves
//! belong to the games that have one (Connect Four's is in `tabula-connect4`).

use std::collections::HashSet;

use tabula_core::Game;

use crate::negamax::Negamax;

/// The score that stands for an illegal move in a row of per-move scores, as Pascal
/// Pons' `c4solver` prints a full column.
pub const INVALID_MOVE: i32 = -1000;

/// Why an exact solver could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SolveError(pub String);

/// A solver that scores positions exactly (scores are the game's own scale, from the
/// side to move: positive wins, 0 draws, negative loses).
pub trait ExactSolver<G: Game> {
    /// The exact score of `game`, or with `weak` only its sign (1 win, 0 draw, -1 loss).
    fn solve(&mut self, game: &G, weak: bool) -> Result<i32, SolveError>;
    /// The score of every action of the action space after it is played, from the side
    /// to move here (`None`: the action is illegal).
    fn analyze(&mut self, game: &G, weak: bool) -> Result<Vec<Option<i32>>, SolveError>;
    /// Positions searched since the last [`ExactSolver::reset_nodes`].
    fn nodes(&self) -> u64;
    /// Sets the node counter to zero.
    fn reset_nodes(&mut self);
    /// Forgets every cached result (benchmarks time positions alone).
    fn clear(&mut self);
    /// Limits each later call to about `limit` positions searched (`None`: no limit);
    /// past it a call answers an error. Solvers without a limit ignore it.
    fn set_node_limit(&mut self, _limit: Option<u64>) {}
}

/// A test position with its optimal and result-keeping actions.
#[derive(Clone, Debug)]
pub struct TestPosition<G> {
    /// The position.
    pub game: G,
    /// Actions that keep the exact score.
    pub optimal: Vec<usize>,
    /// Actions that keep the result (win, draw or loss).
    pub keeps: Vec<usize>,
}

impl<G> TestPosition<G> {
    /// A position from the exact score of every legal action (side to move's view).
    pub fn from_scores(game: G, scores: &[(usize, i32)]) -> Self {
        let best = scores.iter().map(|s| s.1).max().unwrap_or(0);
        TestPosition {
            game,
            optimal: scores.iter().filter(|s| s.1 == best).map(|s| s.0).collect(),
            keeps: scores
                .iter()
                .filter(|s| s.1.signum() == best.signum())
                .map(|s| s.0)
                .collect(),
        }
    }

    /// Whether `action` is an optimal move.
    pub fn is_optimal(&self, action: usize) -> bool {
        self.optimal.contains(&action)
    }

    /// Whether `action` keeps the game-theoretic result.
    pub fn keeps_result(&self, action: usize) -> bool {
        self.keeps.contains(&action)
    }
}

/// Test positions with their exact move labels.
#[derive(Clone, Debug)]
pub struct EvalSet<G> {
    /// What the positions are (e.g. "all 4520 tic-tac-toe positions").
    pub name: String,
    /// The positions.
    pub positions: Vec<TestPosition<G>>,
}

impl<G: Game> EvalSet<G> {
    /// Every non-terminal position reachable from `start`, scored by exhaustive negamax
    /// (small games only).
    pub fn exhaustive(start: &G) -> EvalSet<G> {
        let mut seen = HashSet::new();
        let mut stack = vec![start.clone()];
        let mut exact = Negamax::<G>::new();
        let mut positions = Vec::new();
        while let Some(g) = stack.pop() {
            if g.is_terminal() || !seen.insert(g.position_hash()) {
                continue;
            }
            let scores: Vec<(usize, i32)> = exact
                .analyze(&g)
                .into_iter()
                .map(|(mv, s)| (g.action_of(mv), s))
                .collect();
            for mv in g.legal_moves() {
                let mut c = g.clone();
                c.play(mv);
                stack.push(c);
            }
            positions.push(TestPosition::from_scores(g, &scores));
        }
        EvalSet {
            name: format!(
                "all {} non-terminal {} positions",
                positions.len(),
                start.name()
            ),
            positions,
        }
    }
}
