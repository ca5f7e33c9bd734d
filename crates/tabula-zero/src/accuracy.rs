//! Accuracy against an exact solver: the share of test positions where the network's
//! move — its raw policy, and MCTS at a fixed small budget — is optimal.
//!
//! A move is *optimal* if its exact score equals the position's best (fastest win,
//! slowest loss); it *keeps the result* if it has the same sign (win, draw or loss) as
//! the best. Both are reported; the solver is only a yardstick, never a training signal.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tabula_core::Game;
use tabula_nn::{Network, NetworkEvaluator};
use tabula_search::{Evaluator, Mcts, MctsConfig, Negamax};

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

/// Test positions with their exact move scores.
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

/// Accuracy figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Positions measured.
    pub positions: usize,
    /// Share where the raw policy's top move is optimal.
    pub policy_optimal: f64,
    /// Share where the raw policy's top move keeps the result.
    pub policy_keeps: f64,
    /// Share where MCTS's move is optimal.
    pub mcts_optimal: f64,
    /// Share where MCTS's move keeps the result.
    pub mcts_keeps: f64,
}

/// Measures `net` on `set` with MCTS at `simulations`, on `threads` threads.
pub fn measure<G: Game>(
    set: &EvalSet<G>,
    net: &Arc<Network>,
    simulations: usize,
    threads: usize,
) -> Accuracy {
    let n = set.positions.len();
    if n == 0 {
        return Accuracy::default();
    }
    let threads = threads.clamp(1, n);
    let chunk = n.div_ceil(threads);
    let counts: Vec<[usize; 4]> = std::thread::scope(|scope| {
        let handles: Vec<_> = set
            .positions
            .chunks(chunk)
            .map(|part| {
                let net = net.clone();
                scope.spawn(move || count(part, net, simulations))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or([0; 4]))
            .collect()
    });
    let mut total = [0usize; 4];
    for c in counts {
        for i in 0..4 {
            total[i] += c[i];
        }
    }
    let share = |k: usize| total[k] as f64 / n as f64;
    Accuracy {
        positions: n,
        policy_optimal: share(0),
        policy_keeps: share(1),
        mcts_optimal: share(2),
        mcts_keeps: share(3),
    }
}

fn count<G: Game>(part: &[TestPosition<G>], net: Arc<Network>, simulations: usize) -> [usize; 4] {
    let mut out = [0; 4];
    let Some(first) = part.first() else {
        return out;
    };
    let Ok(mut evaluator) = NetworkEvaluator::new(net, &first.game, 16) else {
        return out;
    };
    let config = MctsConfig {
        simulations,
        c_puct: 1.5,
        ..MctsConfig::default()
    };
    let mut evals = Vec::new();
    for p in part {
        evals.clear();
        evaluator.evaluate(std::slice::from_ref(&p.game), &mut evals);
        let moves = p.game.legal_moves();
        let top = evals[0]
            .priors
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| p.game.action_of(moves[i]));
        if let Some(a) = top {
            out[0] += p.is_optimal(a) as usize;
            out[1] += p.keeps_result(a) as usize;
        }
        let result = Mcts::new(p.game.clone(), config).search(&mut evaluator);
        if let Some(mv) = result.best() {
            let a = p.game.action_of(mv);
            out[2] += p.is_optimal(a) as usize;
            out[3] += p.keeps_result(a) as usize;
        }
    }
    out
}
