//! What MCTS asks of a position: move priors and a value. Networks, rollouts and
//! anything else plug in behind [`Evaluator`].
//!
//! The contract is the game's fixed action space (as in KataGo and c4a0): an evaluator
//! returns a weight for every action, legal or not, and MCTS keeps the legal ones and
//! renormalises. Evaluators therefore never generate moves (Go's move generation scans
//! its superko history), and a network's output is used as it comes.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tabula_core::Game;

use crate::uct::{mean_playout_value, Light};

/// The evaluation of one non-terminal position.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Prior weights over the whole action space (`Game::action_count()` entries,
    /// indexed by `Game::action_of`), or empty for uniform priors. MCTS keeps the legal
    /// actions' weights and renormalises them (uniform if they sum to zero or are not
    /// finite).
    pub priors: Vec<f32>,
    /// Expected result in [-1, 1] for the side to move.
    pub value: f32,
}

impl Evaluation {
    /// The priors of `game`'s legal moves, renormalised as MCTS uses them (uniform when
    /// the weights are missing, sum to zero, or are not finite).
    pub fn legal_priors<G: Game>(&self, game: &G) -> Vec<(G::Move, f32)> {
        let moves: Vec<(G::Move, usize)> = game
            .legal_moves()
            .into_iter()
            .map(|mv| (mv, game.action_of(mv)))
            .collect();
        let mut out = Vec::with_capacity(moves.len());
        masked_priors(&moves, &self.priors, |mv, p| out.push((mv, p)));
        out
    }
}

/// Calls `emit` with each move and its prior: `priors` (over the action space)
/// restricted to `moves` (with their actions) and renormalised; uniform when the
/// weights are missing, sum to zero, or are not finite.
pub fn masked_priors<M: Copy>(moves: &[(M, usize)], priors: &[f32], mut emit: impl FnMut(M, f32)) {
    let weight = |a: usize| priors.get(a).copied().unwrap_or(0.0);
    let sum: f32 = moves.iter().map(|&(_, a)| weight(a)).sum();
    let usable = sum.is_finite() && sum > 0.0;
    let uniform = 1.0 / moves.len().max(1) as f32;
    for &(mv, a) in moves {
        emit(mv, if usable { weight(a) / sum } else { uniform });
    }
}

/// What an evaluator predicts of a game's end, where it can (a network with ownership
/// and score heads): from the first player's side.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalEstimate {
    /// The final owner of every point, +1 the first player to −1 the second, row-major.
    pub ownership: Vec<f32>,
    /// The final score lead of the first player, in points.
    pub score: f32,
}

/// Evaluates batches of non-terminal positions.
pub trait Evaluator<G: Game> {
    /// Appends one evaluation per position to `out`, in order.
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>);

    /// The predicted end of `position` (ownership and score), if this evaluator makes
    /// such predictions.
    fn final_estimate(&mut self, _position: &G) -> Option<FinalEstimate> {
        None
    }
}

macro_rules! forward_evaluator {
    ($($t:ty),*) => {$(
        impl<G: Game, E: Evaluator<G> + ?Sized> Evaluator<G> for $t {
            fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
                (**self).evaluate(positions, out)
            }

            fn final_estimate(&mut self, position: &G) -> Option<FinalEstimate> {
                (**self).final_estimate(position)
            }
        }
    )*};
}

forward_evaluator!(Box<E>, &mut E);

/// Uniform priors and value 0: search guided by nothing but the rules (and terminal results).
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: Game> Evaluator<G> for UniformEvaluator {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        out.extend(positions.iter().map(|_| Evaluation {
            priors: Vec::new(),
            value: 0.0,
        }));
    }
}

/// Uniform priors and the mean result of random playouts (classic MCTS inside PUCT).
#[derive(Clone, Debug)]
pub struct RolloutEvaluator {
    rng: ChaCha8Rng,
    rollouts: usize,
}

impl RolloutEvaluator {
    /// `rollouts` random games per evaluation, seeded.
    pub fn new(rollouts: usize, seed: u64) -> Self {
        RolloutEvaluator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            rollouts: rollouts.max(1),
        }
    }
}

impl<G: Game> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        for game in positions {
            out.push(Evaluation {
                priors: Vec::new(),
                value: mean_playout_value(&Light, game, self.rollouts, &mut self.rng),
            });
        }
    }
}

/// Remembers evaluations by position hash so that transpositions and repeated searches
/// (tree reuse, self-play of similar games) skip the evaluator.
///
/// Entries are keyed by the 64-bit position hash alone (a collision among the cache's
/// at most `capacity` positions has odds of about `capacity² / 2⁶⁵`). The cache is
/// emptied when it reaches its capacity (cheap, and recent positions come back quickly).
pub struct CachedEvaluator<E> {
    inner: E,
    cache: HashMap<u64, Evaluation>,
    capacity: usize,
    /// Evaluations answered from the cache.
    pub hits: u64,
    /// Evaluations passed to the inner evaluator.
    pub misses: u64,
    scratch: Vec<Evaluation>,
}

impl<E> CachedEvaluator<E> {
    /// A cache of at most `capacity` positions in front of `inner`.
    pub fn new(inner: E, capacity: usize) -> Self {
        CachedEvaluator {
            inner,
            cache: HashMap::new(),
            capacity: capacity.max(1),
            hits: 0,
            misses: 0,
            scratch: Vec::new(),
        }
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Forgets every entry (e.g. after the network changed).
    pub fn clear(&mut self) {
        self.cache.clear();
    }
}

impl<G: Game, E: Evaluator<G>> Evaluator<G> for CachedEvaluator<E> {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        let start = out.len();
        let mut missing = Vec::new();
        let mut missing_at = Vec::new();
        for (i, game) in positions.iter().enumerate() {
            match self.cache.get(&game.position_hash()) {
                Some(e) => {
                    self.hits += 1;
                    out.push(e.clone());
                }
                None => {
                    self.misses += 1;
                    out.push(Evaluation {
                        priors: Vec::new(),
                        value: 0.0,
                    });
                    missing.push(game.clone());
                    missing_at.push(i);
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        self.scratch.clear();
        self.inner.evaluate(&missing, &mut self.scratch);
        if self.cache.len() + missing.len() > self.capacity {
            self.cache.clear();
        }
        for ((game, i), e) in missing.iter().zip(missing_at).zip(self.scratch.drain(..)) {
            self.cache.insert(game.position_hash(), e.clone());
            out[start + i] = e;
        }
    }

    fn final_estimate(&mut self, position: &G) -> Option<FinalEstimate> {
        self.inner.final_estimate(position)
    }
}

/// Evaluates each position under several of the game's symmetries and averages: the
/// values, and the priors mapped back to the position's own actions (KataGo's averaging
/// over board symmetries). A network that is not exactly equivariant gives slightly
/// different answers for a position and its mirror image; the mean of several is a
/// small ensemble at the price of that many evaluations. Symmetries `0..count` are
/// used (0 the identity), at most the game's own number.
pub struct SymmetryAverage<E> {
    inner: E,
    count: usize,
    images: Vec<usize>,
    scratch: Vec<Evaluation>,
}

impl<E> SymmetryAverage<E> {
    /// Averages `inner` over the first `count` symmetries of each position (1: none).
    pub fn new(inner: E, count: usize) -> Self {
        SymmetryAverage {
            inner,
            count: count.max(1),
            images: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl<G: Game, E: Evaluator<G>> Evaluator<G> for SymmetryAverage<E> {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        if self.count == 1 {
            return self.inner.evaluate(positions, out);
        }
        // One batch of every image of every position, so that the inner evaluator
        // batches them together.
        let mut batch = Vec::new();
        self.images.clear();
        for game in positions {
            let k = self.count.min(game.symmetry_count()).max(1);
            batch.extend((0..k).map(|sym| game.transformed(sym)));
            self.images.push(k);
        }
        self.scratch.clear();
        self.inner.evaluate(&batch, &mut self.scratch);
        let mut at = 0;
        for (game, &k) in positions.iter().zip(&self.images) {
            let evals = &self.scratch[at..at + k];
            at += k;
            let value = evals.iter().map(|e| e.value).sum::<f32>() / k as f32;
            // An image without priors (uniform) adds nothing to tell the moves apart.
            let with_priors = evals.iter().filter(|e| !e.priors.is_empty()).count();
            let priors = if with_priors == 0 {
                Vec::new()
            } else {
                (0..game.action_count())
                    .map(|a| {
                        evals
                            .iter()
                            .enumerate()
                            .filter(|(_, e)| !e.priors.is_empty())
                            .map(|(sym, e)| {
                                let image = game.transform_action(sym, a);
                                e.priors.get(image).copied().unwrap_or(0.0)
                            })
                            .sum::<f32>()
                            / with_priors as f32
                    })
                    .collect()
            };
            out.push(Evaluation { priors, value });
        }
    }

    fn final_estimate(&mut self, position: &G) -> Option<FinalEstimate> {
        self.inner.final_estimate(position)
    }
}

/// Draws an index with probability proportional to `weights` (all zero: uniform).
pub fn sample_index(weights: &[f32], rng: &mut impl Rng) -> usize {
    let total: f32 = weights.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return rng.random_range(0..weights.len().max(1));
    }
    let mut x = rng.random::<f32>() * total;
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::TicTacToe;

    #[test]
    fn priors_over_the_action_space_are_masked_and_renormalised() {
        let mut g = TicTacToe::new();
        g.play(4); // the centre is taken
        let mut weights = vec![1.0; 9];
        weights[4] = 1000.0; // weight on an illegal action is ignored
        weights[0] = 3.0;
        let e = Evaluation {
            priors: weights,
            value: 0.0,
        };
        let p = e.legal_priors(&g);
        assert_eq!(p.len(), 8);
        assert!(p.iter().all(|&(mv, _)| mv != 4));
        let total: f32 = p.iter().map(|x| x.1).sum();
        assert!((total - 1.0).abs() < 1e-6);
        assert!((p[0].1 - 0.3).abs() < 1e-6, "{p:?}");
        // missing, all-zero or non-finite weights fall back to uniform priors
        for priors in [Vec::new(), vec![0.0; 9], vec![f32::NAN; 9]] {
            let e = Evaluation { priors, value: 0.0 };
            assert!(e
                .legal_priors(&g)
                .iter()
                .all(|x| (x.1 - 0.125).abs() < 1e-6));
        }
    }

    /// Not equivariant on purpose: all its prior on cell 0, value +1 while cell 0 is free
    /// and −1 once it is taken.
    struct CellZero;

    impl Evaluator<TicTacToe> for CellZero {
        fn evaluate(&mut self, positions: &[TicTacToe], out: &mut Vec<Evaluation>) {
            for g in positions {
                let mut priors = vec![0.0; 9];
                priors[0] = 1.0;
                let free = g.legal_moves().contains(&0);
                out.push(Evaluation {
                    priors,
                    value: if free { 1.0 } else { -1.0 },
                });
            }
        }
    }

    #[test]
    fn symmetry_averaging_maps_priors_back_and_averages_values() {
        let empty = TicTacToe::new();
        let mut corner = TicTacToe::new();
        corner.play(0);
        let eval = |count: usize, g: &TicTacToe| {
            let mut out = Vec::new();
            SymmetryAverage::new(CellZero, count).evaluate(std::slice::from_ref(g), &mut out);
            out.remove(0)
        };
        // one symmetry: the inner evaluator's answer
        assert_eq!(eval(1, &corner).value, -1.0);
        assert_eq!(eval(1, &empty).priors[0], 1.0);
        // all eight: cell 0 is each corner's image under two of them (the identity and
        // a reflection), so the prior spreads evenly over the four corners
        let all = eval(8, &empty);
        for (a, p) in all.priors.iter().enumerate() {
            let expected = if [0, 2, 6, 8].contains(&a) { 0.25 } else { 0.0 };
            assert!((p - expected).abs() < 1e-6, "action {a}: {p}");
        }
        // the stone on cell 0 stays there under those two images only: (2·−1 + 6·+1) / 8
        assert!((eval(8, &corner).value - 0.5).abs() < 1e-6);
        // the identity and a quarter turn, which moves the stone off cell 0
        assert!(eval(2, &corner).value.abs() < 1e-6);
        // more than the game has: its own number
        assert_eq!(eval(100, &empty), all);
    }
}
