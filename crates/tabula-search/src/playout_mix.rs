//! AlphaGo's leaf evaluation: a network's value mixed with the results of playouts
//! from the same position, `(1 − λ)·v + λ·z` (Silver et al. 2016 used λ = 0.5). A young
//! network's value is noisy where a tactical playout policy already reads the fights
//! right; the mixture lets the search use both while the network learns.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tabula_core::Game;

use crate::evaluator::{Evaluation, Evaluator, FinalEstimate};
use crate::uct::{mean_playout_value, Knowledge};

/// The λ every front end mixes with unless told otherwise. AlphaGo's 0.5 beat 0.25 and
/// 0.75 head to head with the young 9x9 network; with the network of iteration 64, 0.75
/// won 36 of 40 against GnuGo level 10 where 0.5 won 32 and the network alone 30
/// (BENCHMARKS.md).
pub const DEFAULT_LAMBDA: f32 = 0.75;

/// `evaluator` with `knowledge`'s playouts mixed in at `lambda` (`playouts` a leaf), or
/// unchanged when `lambda` is 0 or the game has no playout knowledge.
pub fn mixed<G: Game, K: Knowledge<G> + Send + 'static>(
    evaluator: Box<dyn Evaluator<G>>,
    knowledge: Option<K>,
    lambda: f32,
    playouts: usize,
    seed: u64,
) -> Box<dyn Evaluator<G>> {
    match knowledge {
        Some(k) if lambda > 0.0 => Box::new(PlayoutMix::new(evaluator, k, lambda, playouts, seed)),
        _ => evaluator,
    }
}

/// An evaluator whose values are mixed with playout results (its priors and final
/// estimates are the inner evaluator's).
pub struct PlayoutMix<E, K> {
    inner: E,
    knowledge: K,
    lambda: f32,
    playouts: usize,
    rng: ChaCha8Rng,
}

impl<E, K> PlayoutMix<E, K> {
    /// `inner`'s values mixed with weight `lambda` (0 to 1, clamped) with the mean result
    /// of `playouts` playouts (at least one) of `knowledge`'s policy, seeded.
    pub fn new(inner: E, knowledge: K, lambda: f32, playouts: usize, seed: u64) -> Self {
        PlayoutMix {
            inner,
            knowledge,
            lambda: if lambda.is_finite() {
                lambda.clamp(0.0, 1.0)
            } else {
                0.0
            },
            playouts: playouts.max(1),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl<G: Game, E: Evaluator<G>, K: Knowledge<G>> Evaluator<G> for PlayoutMix<E, K> {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        let start = out.len();
        self.inner.evaluate(positions, out);
        if self.lambda == 0.0 {
            return;
        }
        for (game, e) in positions.iter().zip(&mut out[start..]) {
            let z = mean_playout_value(&self.knowledge, game, self.playouts, &mut self.rng);
            e.value = (1.0 - self.lambda) * e.value + self.lambda * z;
        }
    }

    fn final_estimate(&mut self, position: &G) -> Option<FinalEstimate> {
        self.inner.final_estimate(position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::UniformEvaluator;
    use crate::uct::Light;
    use tabula_core::{Player, TicTacToe};

    /// Even priors over the nine cells, value 0.5 for everyone.
    struct Half;

    impl Evaluator<TicTacToe> for Half {
        fn evaluate(&mut self, positions: &[TicTacToe], out: &mut Vec<Evaluation>) {
            out.extend(positions.iter().map(|_| Evaluation {
                priors: vec![1.0; 9],
                value: 0.5,
            }));
        }
    }

    #[test]
    fn values_mix_with_the_playouts_results() {
        // X: 0 1 5 7, O: 3 4 6 8; X to play the last free cell, 2, completing the top
        // row: every playout wins for X (z = 1)
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4, 5, 6, 7, 8] {
            g.play(m);
        }
        assert_eq!(g.legal_moves(), vec![2]);
        assert_eq!(g.to_move(), Player::First);
        let z = 1.0;
        for (lambda, want) in [(0.0, 0.5), (1.0, z), (0.5, 0.25 + 0.5 * z)] {
            let mut mix = PlayoutMix::new(Half, Light, lambda, 3, 1);
            let mut out = Vec::new();
            mix.evaluate(std::slice::from_ref(&g), &mut out);
            assert!(
                (out[0].value - want).abs() < 1e-6,
                "λ {lambda}: {}",
                out[0].value
            );
            assert_eq!(out[0].priors, vec![1.0; 9], "priors are the inner's");
        }
        // out of range and NaN weights are clamped / ignored, never NaN values
        let mut out = Vec::new();
        PlayoutMix::new(UniformEvaluator, Light, f32::NAN, 1, 1)
            .evaluate(std::slice::from_ref(&g), &mut out);
        PlayoutMix::new(UniformEvaluator, Light, 7.0, 0, 1)
            .evaluate(std::slice::from_ref(&g), &mut out);
        assert_eq!(out[0].value, 0.0);
        assert!((out[1].value - z).abs() < 1e-6);
    }

    /// `mixed` mixes only where there is knowledge and a weight: a game without
    /// playout knowledge, or λ 0, keeps the network's value.
    #[test]
    fn mixed_needs_knowledge_and_a_weight() {
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4, 5, 6, 7, 8] {
            g.play(m);
        }
        let value = |e: &mut Box<dyn Evaluator<TicTacToe>>| {
            let mut out = Vec::new();
            e.evaluate(std::slice::from_ref(&g), &mut out);
            out[0].value
        };
        assert_eq!(
            value(&mut mixed(Box::new(Half), None::<Light>, 0.5, 1, 1)),
            0.5
        );
        assert_eq!(
            value(&mut mixed(Box::new(Half), Some(Light), 0.0, 1, 1)),
            0.5
        );
        assert_eq!(
            value(&mut mixed(Box::new(Half), Some(Light), 0.5, 1, 1)),
            0.75
        );
    }
}
