//! The network as an MCTS [`Evaluator`] for any game.

use std::marker::PhantomData;
use std::sync::Arc;

use tabula_core::Game;
use tabula_core::Player;
use tabula_search::{Evaluation, Evaluator, FinalEstimate, SearchSettings, SymmetryAverage};

use crate::infer::{AuxOutput, Network, Scratch};
use crate::NnError;

/// Evaluates positions with a [`Network`]: priors are the softmax of the policy logits
/// over the whole action space (MCTS masks the illegal actions), the value is the value
/// head's. Single-threaded; give each search thread its own (they can share the
/// `Arc<Network>`).
pub struct NetworkEvaluator<G> {
    net: Arc<Network>,
    scratch: Scratch,
    input: Vec<f32>,
    logits: Vec<f32>,
    values: Vec<f32>,
    max_batch: usize,
    /// Positions evaluated so far.
    pub positions: u64,
    _game: PhantomData<fn(G)>,
}

impl<G: Game> NetworkEvaluator<G> {
    /// An evaluator for `game`'s positions; fails if the network reads another encoding.
    /// Batches larger than `max_batch` are split (8–16 keeps the scratch in cache).
    pub fn new(net: Arc<Network>, game: &G, max_batch: usize) -> Result<Self, NnError> {
        net.arch().check_game(game)?;
        Ok(NetworkEvaluator {
            net,
            scratch: Scratch::default(),
            input: Vec::new(),
            logits: Vec::new(),
            values: Vec::new(),
            max_batch: max_batch.max(1),
            positions: 0,
            _game: PhantomData,
        })
    }

    /// The network.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// Replaces the network (same architecture expected by the caller).
    pub fn set_network(&mut self, net: Arc<Network>) {
        self.net = net;
    }
}

/// The evaluator of `net` that `search` asks for: batches of up to `search.eval_batch`,
/// averaged over `search.symmetries` of the game's symmetries.
pub fn search_evaluator<G: Game>(
    net: Arc<Network>,
    game: &G,
    search: &SearchSettings,
) -> Result<SymmetryAverage<NetworkEvaluator<G>>, NnError> {
    Ok(SymmetryAverage::new(
        NetworkEvaluator::new(net, game, search.eval_batch)?,
        search.symmetries,
    ))
}

/// Softmax of `logits`.
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut exp: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f32 = exp.iter().sum();
    for e in &mut exp {
        *e /= sum;
    }
    exp
}

impl<G: Game> Evaluator<G> for NetworkEvaluator<G> {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        let arch = self.net.arch().clone();
        let per = arch.planes * arch.area();
        for chunk in positions.chunks(self.max_batch) {
            self.input.clear();
            self.input.resize(chunk.len() * per, 0.0);
            for (g, x) in chunk.iter().zip(self.input.chunks_exact_mut(per)) {
                g.encode(x);
            }
            self.net.forward(
                &self.input,
                chunk.len(),
                &mut self.scratch,
                &mut self.logits,
                &mut self.values,
            );
            for (logits, &value) in self
                .logits
                .chunks_exact(arch.actions)
                .zip(&self.values)
                .take(chunk.len())
            {
                out.push(Evaluation {
                    priors: softmax(logits),
                    value,
                });
            }
            self.positions += chunk.len() as u64;
        }
    }

    fn final_estimate(&mut self, position: &G) -> Option<FinalEstimate> {
        if !self.net.arch().has_aux_heads() {
            return None;
        }
        let arch = self.net.arch().clone();
        let mut input = vec![0.0; arch.planes * arch.area()];
        position.encode(&mut input);
        let mut aux = AuxOutput::default();
        self.net.forward_aux(
            &input,
            1,
            &mut self.scratch,
            &mut self.logits,
            &mut self.values,
            Some(&mut aux),
        );
        // the heads speak for the side to move
        let sign = if position.to_move() == Player::First {
            1.0
        } else {
            -1.0
        };
        Some(FinalEstimate {
            ownership: aux.ownership.iter().map(|o| o * sign).collect(),
            score: aux.score.first().copied().unwrap_or(0.0) * sign,
        })
    }
}
