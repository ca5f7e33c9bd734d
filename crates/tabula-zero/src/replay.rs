//! The replay buffer: the last positions of self-play with their targets, sampled into
//! training batches, each sample under a random symmetry of the game.

use std::collections::VecDeque;

use rand::Rng;
use tabula_core::Game;
use tabula_nn::Batch;

use crate::records::GameRecord;

/// A training position.
#[derive(Clone, Debug)]
pub struct Sample<G> {
    /// The position.
    pub game: G,
    /// Policy target over the action space.
    pub policy: Vec<f32>,
    /// Value target for the side to move.
    pub value: f32,
}

impl<G: Game> Sample<G> {
    /// The sample under symmetry `sym`: the transformed position with the policy target
    /// moved along (the probability of action `a` lands on `transform_action(sym, a)`).
    pub fn transformed(&self, sym: usize) -> Sample<G> {
        if sym == 0 {
            return self.clone();
        }
        let mut policy = vec![0.0; self.policy.len()];
        for (a, p) in self.policy.iter().enumerate() {
            if *p != 0.0 {
                policy[self.game.transform_action(sym, a)] = *p;
            }
        }
        Sample {
            game: self.game.transformed(sym),
            policy,
            value: self.value,
        }
    }
}

/// The last `window` training positions.
pub struct ReplayBuffer<G> {
    samples: VecDeque<Sample<G>>,
    window: usize,
}

impl<G: Game> ReplayBuffer<G> {
    /// An empty buffer keeping at most `window` positions.
    pub fn new(window: usize) -> Self {
        ReplayBuffer {
            samples: VecDeque::new(),
            window: window.max(1),
        }
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The sample at `index` (0: oldest).
    pub fn get(&self, index: usize) -> Option<&Sample<G>> {
        self.samples.get(index)
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Adds the positions of a game that are policy targets. The value target mixes the
    /// result and the root value: `(1 - value_mix) · z + value_mix · v`.
    pub fn add_game(
        &mut self,
        start: &G,
        record: &GameRecord,
        value_mix: f32,
    ) -> Result<(), String> {
        let positions = record.replay(start)?;
        let actions = start.action_count();
        for (i, game) in positions.iter().take(record.moves.len()).enumerate() {
            let Some(Some(sparse)) = record.policy.get(i) else {
                continue;
            };
            let mut policy = vec![0.0; actions];
            for &(a, p) in sparse {
                if let Some(slot) = policy.get_mut(a as usize) {
                    *slot = p;
                }
            }
            let z = record.result_for(game.to_move());
            let v = record.root_value.get(i).copied().unwrap_or(z);
            self.samples.push_back(Sample {
                game: game.clone(),
                policy,
                value: (1.0 - value_mix) * z + value_mix * v,
            });
        }
        while self.samples.len() > self.window {
            self.samples.pop_front();
        }
        Ok(())
    }

    /// A batch of `size` samples drawn uniformly (with replacement), each under a random
    /// symmetry when `symmetries` is on.
    pub fn batch(&self, size: usize, symmetries: bool, rng: &mut impl Rng) -> Batch {
        let mut batch = Batch {
            size,
            ..Batch::default()
        };
        let Some(first) = self.samples.front() else {
            batch.size = 0;
            return batch;
        };
        let [planes, h, w] = first.game.encoding_shape();
        let per = planes * h * w;
        batch.inputs.resize(size * per, 0.0);
        for i in 0..size {
            let s = &self.samples[rng.random_range(0..self.samples.len())];
            let n = s.game.symmetry_count();
            let sym = if symmetries && n > 1 {
                rng.random_range(0..n)
            } else {
                0
            };
            let s = s.transformed(sym);
            s.game.encode(&mut batch.inputs[i * per..(i + 1) * per]);
            batch.policy.extend_from_slice(&s.policy);
            batch.value.push(s.value);
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tabula_core::{ConnectFour, TicTacToe};

    fn check_symmetry<G: Game>(start: G, picks: &[usize]) -> Result<(), TestCaseError> {
        // A random game; its last position with a made-up target.
        let mut game = start.clone();
        let mut played = Vec::new();
        for &p in picks {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[p % moves.len()];
            played.push(game.action_of(mv));
            game.play(mv);
        }
        let actions = game.action_count();
        let policy: Vec<f32> = (0..actions).map(|a| a as f32 / 100.0).collect();
        let sample = Sample {
            game: game.clone(),
            policy: policy.clone(),
            value: 0.5,
        };
        for sym in 0..game.symmetry_count() {
            let t = sample.transformed(sym);
            // The rotated position is the one reached by the rotated moves…
            let mut replay = start.transformed(sym);
            for (i, &a) in played.iter().enumerate() {
                let mut before = start.clone();
                for &b in &played[..i] {
                    before.play(before.move_of(b).unwrap());
                }
                let mv = replay.move_of(before.transform_action(sym, a)).unwrap();
                replay.play(mv);
            }
            prop_assert_eq!(replay.position_hash(), t.game.position_hash());
            // …and its target is the rotated target.
            for (a, p) in policy.iter().enumerate() {
                prop_assert_eq!(t.policy[game.transform_action(sym, a)], *p);
            }
            prop_assert_eq!(t.value, 0.5);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn rotated_positions_carry_rotated_targets(picks in proptest::collection::vec(0usize..9, 0..6)) {
            check_symmetry(TicTacToe::new(), &picks)?;
            check_symmetry(ConnectFour::default(), &picks)?;
        }
    }
}
