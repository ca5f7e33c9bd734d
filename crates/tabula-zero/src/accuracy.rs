//! Accuracy against an exact solver: the share of test positions where the network's
//! move — its raw policy, and MCTS at a fixed small budget — is optimal.
//!
//! A move is *optimal* if its exact score equals the position's best (fastest win,
//! slowest loss); it *keeps the result* if it has the same sign (win, draw or loss) as
//! the best. Both are reported; the solver is only a yardstick, never a training signal.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tabula_core::Game;
use tabula_nn::{search_evaluator, Network};
pub use tabula_search::exact::{EvalSet, TestPosition};
use tabula_search::{Evaluator, Mcts, SearchSettings};

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

/// Measures `net` on `set` with MCTS (`search` settings, `simulations` per move), on
/// `threads` threads. A thread that panics is an error, not a zero score.
pub fn measure<G: Game>(
    set: &EvalSet<G>,
    net: &Arc<Network>,
    search: &SearchSettings,
    simulations: usize,
    threads: usize,
) -> Result<Accuracy, crate::ZeroError> {
    let n = set.positions.len();
    if n == 0 {
        return Ok(Accuracy::default());
    }
    let threads = threads.clamp(1, n);
    let chunk = n.div_ceil(threads);
    let counts: Vec<Result<[usize; 4], crate::ZeroError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = set
            .positions
            .chunks(chunk)
            .map(|part| {
                let net = net.clone();
                scope.spawn(move || count(part, net, search, simulations))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or(Err(crate::ZeroError::Panicked("accuracy")))
            })
            .collect()
    });
    let mut total = [0usize; 4];
    for c in counts {
        let c = c?;
        for i in 0..4 {
            total[i] += c[i];
        }
    }
    let share = |k: usize| total[k] as f64 / n as f64;
    Ok(Accuracy {
        positions: n,
        policy_optimal: share(0),
        policy_keeps: share(1),
        mcts_optimal: share(2),
        mcts_keeps: share(3),
    })
}

fn count<G: Game>(
    part: &[TestPosition<G>],
    net: Arc<Network>,
    search: &SearchSettings,
    simulations: usize,
) -> Result<[usize; 4], crate::ZeroError> {
    let mut out = [0; 4];
    let Some(first) = part.first() else {
        return Ok(out);
    };
    let mut evaluator = search_evaluator(net, &first.game, search)?;
    let config = search.mcts(simulations, 0);
    let mut evals = Vec::new();
    for p in part {
        evals.clear();
        evaluator.evaluate(std::slice::from_ref(&p.game), &mut evals);
        let top = evals[0]
            .legal_priors(&p.game)
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(mv, _)| p.game.action_of(mv));
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
    Ok(out)
}
