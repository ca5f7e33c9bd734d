//! The replay buffer: the last positions of self-play with their targets, sampled into
//! training batches, each sample under a random symmetry of the game.
//!
//! A position is kept as the network sees it — its encoded planes (bit-packed when
//! every value is 0 or 1, as for every game here) and its sparse policy target — not
//! as a game state: a Go state carries its superko history and chain arrays, and a
//! window holds hundreds of thousands of positions. Symmetries are applied to the
//! encoding with [`Game::transform_point`] and to the policy with
//! [`Game::transform_action`].

use std::collections::VecDeque;

use rand::Rng;
use tabula_core::Game;
use tabula_nn::Batch;

use crate::records::GameRecord;

/// Encoded input planes, compact.
#[derive(Clone, Debug, PartialEq)]
enum Planes {
    /// One bit per value (every value was 0 or 1).
    Bits(Box<[u64]>),
    /// Any other values.
    Floats(Box<[f32]>),
}

impl Planes {
    fn pack(x: &[f32]) -> Planes {
        if x.iter().all(|&v| v == 0.0 || v == 1.0) {
            let mut bits = vec![0u64; x.len().div_ceil(64)];
            for (i, _) in x.iter().enumerate().filter(|(_, &v)| v == 1.0) {
                bits[i / 64] |= 1 << (i % 64);
            }
            Planes::Bits(bits.into_boxed_slice())
        } else {
            Planes::Floats(x.into())
        }
    }

    #[inline]
    fn get(&self, i: usize) -> f32 {
        match self {
            Planes::Bits(b) => ((b[i / 64] >> (i % 64)) & 1) as f32,
            Planes::Floats(f) => f[i],
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Planes::Bits(b) => b.len() * 8,
            Planes::Floats(f) => f.len() * 4,
        }
    }
}

/// A training position: encoded input, policy target (action, share), value target.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    planes: Planes,
    policy: Box<[(u32, f32)]>,
    /// Value target for the side to move.
    pub value: f32,
}

impl Row {
    /// The row of `game` with a sparse policy target `(action, share)` (as game records
    /// keep it; entries outside the action space or of zero share are dropped).
    pub fn new<G: Game>(game: &G, policy: &[(u32, f32)], value: f32) -> Row {
        let [p, h, w] = game.encoding_shape();
        let mut x = vec![0.0; p * h * w];
        game.encode(&mut x);
        let actions = game.action_count();
        Row {
            planes: Planes::pack(&x),
            policy: policy
                .iter()
                .copied()
                .filter(|&(a, v)| (a as usize) < actions && v != 0.0)
                .collect(),
            value,
        }
    }

    /// Writes the encoding under symmetry `sym` of `game` (the buffer's prototype: same
    /// board) into `input`, and adds the policy target to `policy` (zeroed, one entry per
    /// action).
    pub fn write<G: Game>(&self, game: &G, sym: usize, input: &mut [f32], policy: &mut [f32]) {
        let [planes, h, w] = game.encoding_shape();
        for p in 0..planes {
            for r in 0..h {
                for c in 0..w {
                    let (r2, c2) = if sym == 0 {
                        (r, c)
                    } else {
                        game.transform_point(sym, r, c)
                    };
                    input[(p * h + r2) * w + c2] = self.planes.get((p * h + r) * w + c);
                }
            }
        }
        for &(a, v) in self.policy.iter() {
            let a = if sym == 0 {
                a as usize
            } else {
                game.transform_action(sym, a as usize)
            };
            if let Some(slot) = policy.get_mut(a) {
                *slot = v;
            }
        }
    }

    /// Memory the row holds, its own size included.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Row>()
            + self.planes.heap_bytes()
            + self.policy.len() * std::mem::size_of::<(u32, f32)>()
    }
}

/// The most recent `window` training positions.
pub struct ReplayBuffer<G> {
    /// A position of the game (for shapes and symmetries; the board never changes).
    prototype: G,
    rows: VecDeque<Row>,
    window: usize,
}

impl<G: Game> ReplayBuffer<G> {
    /// An empty buffer of positions of `game`'s board keeping the last `window` positions.
    pub fn new(game: &G, window: usize) -> Self {
        ReplayBuffer {
            prototype: game.clone(),
            rows: VecDeque::new(),
            window: window.max(1),
        }
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Mean memory per position held, in bytes.
    pub fn bytes_per_position(&self) -> f64 {
        let total: usize = self.rows.iter().map(Row::bytes).sum();
        total as f64 / self.rows.len().max(1) as f64
    }

    /// Adds the positions of one game that carry a policy target (full searches), with
    /// value target `(1 - value_mix) · result + value_mix · root value`.
    pub fn add_game(
        &mut self,
        start: &G,
        record: &GameRecord,
        value_mix: f32,
    ) -> Result<(), String> {
        let mut rows = Vec::new();
        // Positions are encoded as the game is replayed; none is kept as a state.
        record.walk(start, |i, game| {
            let Some(Some(policy)) = record.policy.get(i) else {
                return;
            };
            let z = record.result_for(game.to_move());
            let v = record.root_value.get(i).copied().unwrap_or(z);
            rows.push(Row::new(
                game,
                policy,
                (1.0 - value_mix) * z + value_mix * v,
            ));
        })?;
        // A record refused halfway adds nothing.
        self.rows.extend(rows);
        while self.rows.len() > self.window {
            self.rows.pop_front();
        }
        Ok(())
    }

    /// `size` positions drawn uniformly (with replacement), each under a random symmetry
    /// when `symmetries` is on.
    pub fn batch(&self, size: usize, symmetries: bool, rng: &mut impl Rng) -> Batch {
        let mut batch = Batch {
            size,
            ..Batch::default()
        };
        if self.rows.is_empty() {
            batch.size = 0;
            return batch;
        }
        let [planes, h, w] = self.prototype.encoding_shape();
        let per = planes * h * w;
        let actions = self.prototype.action_count();
        batch.inputs.resize(size * per, 0.0);
        batch.policy.resize(size * actions, 0.0);
        let n = self.prototype.symmetry_count();
        for i in 0..size {
            let row = &self.rows[rng.random_range(0..self.rows.len())];
            let sym = if symmetries && n > 1 {
                rng.random_range(0..n)
            } else {
                0
            };
            row.write(
                &self.prototype,
                sym,
                &mut batch.inputs[i * per..(i + 1) * per],
                &mut batch.policy[i * actions..(i + 1) * actions],
            );
            batch.value.push(row.value);
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tabula_core::{ConnectFour, Go, GoRules, TicTacToe};

    fn sparse(dense: &[f32]) -> Vec<(u32, f32)> {
        dense
            .iter()
            .enumerate()
            .map(|(a, &p)| (a as u32, p))
            .collect()
    }

    /// A row written under symmetry `sym` is the encoding of the transformed position,
    /// with the policy moved by the same symmetry.
    fn check_symmetry<G: Game>(start: G, picks: &[usize]) -> Result<(), TestCaseError> {
        let mut game = start.clone();
        for &p in picks {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            game.play(moves[p % moves.len()]);
        }
        let actions = game.action_count();
        let policy: Vec<f32> = (0..actions).map(|a| (a % 7) as f32 / 10.0).collect();
        let row = Row::new(&game, &sparse(&policy), 0.5);
        let [p, h, w] = game.encoding_shape();
        for sym in 0..game.symmetry_count() {
            let mut input = vec![9.0; p * h * w];
            let mut target = vec![0.0; actions];
            row.write(&start, sym, &mut input, &mut target);
            let mut want = vec![0.0; p * h * w];
            game.transformed(sym).encode(&mut want);
            prop_assert_eq!(&input, &want, "symmetry {}", sym);
            for (a, v) in policy.iter().enumerate() {
                prop_assert_eq!(target[game.transform_action(sym, a)], *v);
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn rotated_rows_are_the_rotated_positions_with_rotated_targets(
            picks in proptest::collection::vec(0usize..30, 0..12)
        ) {
            check_symmetry(TicTacToe::new(), &picks)?;
            check_symmetry(ConnectFour::default(), &picks)?;
            check_symmetry(Go::new(5, GoRules::default()).unwrap(), &picks)?;
        }
    }

    #[test]
    fn planes_pack_bits_and_keep_other_values() {
        let bits = Planes::pack(&[0.0, 1.0, 1.0, 0.0]);
        assert!(matches!(bits, Planes::Bits(_)));
        assert_eq!(
            (0..4).map(|i| bits.get(i)).collect::<Vec<_>>(),
            [0.0, 1.0, 1.0, 0.0]
        );
        let floats = Planes::pack(&[0.0, 0.5]);
        assert!(matches!(floats, Planes::Floats(_)));
        assert_eq!(floats.get(1), 0.5);
    }

    #[test]
    fn a_row_of_9x9_go_is_small() {
        let mut g = Go::new(9, GoRules::default()).unwrap();
        for m in ["E5", "C3", "G7", "C7"] {
            g.play_text(m).unwrap();
        }
        let mut policy = vec![0.0; g.action_count()];
        for (i, p) in policy.iter_mut().enumerate().take(20) {
            *p = i as f32 / 190.0;
        }
        let row = Row::new(&g, &sparse(&policy), 1.0);
        // 4 planes of 81 bits in 6 words, 19 non-zero policy entries
        assert_eq!(row.bytes(), std::mem::size_of::<Row>() + 6 * 8 + 19 * 8);
        assert!(row.bytes() < 300, "{}", row.bytes());
    }
}
