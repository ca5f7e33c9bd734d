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
use tabula_core::{Game, Player};
use tabula_nn::Batch;

use tabula_search::uct::Knowledge;

use crate::records::GameRecord;

/// Encoded input planes, compact.
#[derive(Clone, Debug, PartialEq)]
enum Planes {
    /// One bit per value where every value is 0 or 1, except whole planes of one other
    /// value (Go's komi plane), kept as `(plane, value)` with `area` values a plane.
    Bits {
        bits: Box<[u64]>,
        constant: Box<[(u16, f32)]>,
        area: usize,
    },
    /// Any other values.
    Floats(Box<[f32]>),
}

impl Planes {
    fn pack(x: &[f32], area: usize) -> Planes {
        let area = area.max(1);
        let mut constant = Vec::new();
        for (p, plane) in x.chunks(area).enumerate() {
            let v = plane[0];
            if v != 0.0 && v != 1.0 && plane.iter().all(|&y| y == v) {
                constant.push((p as u16, v));
            }
        }
        let is_constant = |i: usize| constant.iter().any(|&(p, _)| p as usize == i / area);
        if x.iter()
            .enumerate()
            .all(|(i, &v)| v == 0.0 || v == 1.0 || is_constant(i))
        {
            let mut bits = vec![0u64; x.len().div_ceil(64)];
            for (i, _) in x.iter().enumerate().filter(|(_, &v)| v == 1.0) {
                bits[i / 64] |= 1 << (i % 64);
            }
            Planes::Bits {
                bits: bits.into_boxed_slice(),
                constant: constant.into_boxed_slice(),
                area,
            }
        } else {
            Planes::Floats(x.into())
        }
    }

    /// The value every point of `plane` has, where the plane is kept as one constant.
    fn constant(&self, plane: usize) -> Option<f32> {
        match self {
            Planes::Bits { constant, .. } => constant
                .iter()
                .find(|&&(p, _)| p as usize == plane)
                .map(|&(_, v)| v),
            Planes::Floats(_) => None,
        }
    }

    /// Value `i`, whatever its plane (the tests' reference for `write`).
    #[cfg(test)]
    fn get(&self, i: usize) -> f32 {
        match self {
            Planes::Bits { area, .. } => self.constant(i / area).unwrap_or_else(|| self.bit(i)),
            Planes::Floats(f) => f[i],
        }
    }

    /// Value `i` of a plane that is not a constant one.
    #[inline]
    fn bit(&self, i: usize) -> f32 {
        match self {
            Planes::Bits { bits, .. } => ((bits[i / 64] >> (i % 64)) & 1) as f32,
            Planes::Floats(f) => f[i],
        }
    }

    /// The planes as bytes that are equal exactly when the planes are (a map key).
    fn key(&self) -> Vec<u8> {
        let mut key = Vec::new();
        match self {
            Planes::Bits { bits, constant, .. } => {
                key.push(0);
                for b in bits.iter() {
                    key.extend_from_slice(&b.to_le_bytes());
                }
                for &(p, v) in constant.iter() {
                    key.extend_from_slice(&p.to_le_bytes());
                    key.extend_from_slice(&v.to_bits().to_le_bytes());
                }
            }
            Planes::Floats(f) => {
                key.push(1);
                for v in f.iter() {
                    key.extend_from_slice(&v.to_bits().to_le_bytes());
                }
            }
        }
        key
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Planes::Bits { bits, constant, .. } => bits.len() * 8 + constant.len() * 8,
            Planes::Floats(f) => f.len() * 4,
        }
    }
}

/// Where point `(r, c)` goes under symmetry `sym` (0: the identity, without asking).
#[inline]
fn image<G: Game>(game: &G, sym: usize, r: usize, c: usize) -> (usize, usize) {
    if sym == 0 {
        (r, c)
    } else {
        game.transform_point(sym, r, c)
    }
}

/// A training position: encoded input, policy target (action, share), value target.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    planes: Planes,
    policy: Box<[(u32, f32)]>,
    /// Value target for the side to move.
    pub value: f32,
    /// The game's final score and the owner of every point, for the side to move (+1
    /// its own), where the game ended in a count.
    aux: Option<(f32, Box<[i8]>)>,
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
            planes: Planes::pack(&x, h * w),
            policy: policy
                .iter()
                .copied()
                .filter(|&(a, v)| (a as usize) < actions && v != 0.0)
                .collect(),
            value,
            aux: None,
        }
    }

    /// Sets the auxiliary targets from the end of the game: `ownership` and `score`
    /// from the first player's side, turned to the side of `to_move`.
    fn with_final(mut self, to_move: Player, ownership: &[f32], score: f32) -> Row {
        let sign = if to_move == Player::First { 1.0 } else { -1.0 };
        let own = ownership
            .iter()
            .map(|&o| (o * sign).round() as i8)
            .collect();
        self.aux = Some((score * sign, own));
        self
    }

    /// Writes the auxiliary targets under symmetry `sym` (`ownership`: one entry per
    /// point of the board) and returns their weight: 1, or 0 (and nothing written)
    /// where the row has none.
    pub fn write_aux<G: Game>(
        &self,
        game: &G,
        sym: usize,
        score: &mut f32,
        ownership: &mut [f32],
    ) -> f32 {
        let Some((s, own)) = &self.aux else {
            return 0.0;
        };
        let [_, h, w] = game.encoding_shape();
        if own.len() != h * w || ownership.len() != h * w {
            return 0.0;
        }
        *score = *s;
        for r in 0..h {
            for c in 0..w {
                let (r2, c2) = image(game, sym, r, c);
                ownership[r2 * w + c2] = f32::from(own[r * w + c]);
            }
        }
        1.0
    }

    /// Writes the encoding under symmetry `sym` of `game` (the buffer's prototype: same
    /// board) into `input`, and adds the policy target to `policy` (zeroed, one entry per
    /// action).
    pub fn write<G: Game>(&self, game: &G, sym: usize, input: &mut [f32], policy: &mut [f32]) {
        let [planes, h, w] = game.encoding_shape();
        for p in 0..planes {
            // a constant plane (Go's komi) is the same under every symmetry
            if let Some(v) = self.planes.constant(p) {
                input[p * h * w..(p + 1) * h * w].fill(v);
                continue;
            }
            for r in 0..h {
                for c in 0..w {
                    let (r2, c2) = image(game, sym, r, c);
                    input[(p * h + r2) * w + c2] = self.planes.bit((p * h + r) * w + c);
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
            + self.aux.as_ref().map_or(0, |(_, o)| o.len())
    }
}

/// The most recent `window` training positions.
pub struct ReplayBuffer<G: Game> {
    /// A position of the game (for shapes and symmetries; the board never changes).
    prototype: G,
    rows: VecDeque<Row>,
    window: usize,
    /// Settles the end of each counted game before its ownership and score targets.
    settle: Option<Box<dyn Knowledge<G> + Send + Sync>>,
}

impl<G: Game> ReplayBuffer<G> {
    /// An empty buffer of positions of `game`'s board keeping the last `window` positions.
    pub fn new(game: &G, window: usize) -> Self {
        ReplayBuffer {
            prototype: game.clone(),
            rows: VecDeque::new(),
            window: window.max(1),
            settle: None,
        }
    }

    /// Takes the ownership and score targets of counted games from the end as
    /// `knowledge` settles it ([`Knowledge::settled_final`]: Go's dead stones off)
    /// rather than as it stands. Value targets keep the result the game was played to.
    pub fn with_settling(mut self, knowledge: Option<Box<dyn Knowledge<G> + Send + Sync>>) -> Self {
        self.settle = knowledge;
        self
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
    /// value target `(1 - value_mix) · result · discount^plies + value_mix · root value`,
    /// where `plies` is the number of moves from the position to the end of the record
    /// (to the resignation in a resigned game, which makes its result look sooner than
    /// it would have come) and the root value was discounted by the search alike.
    pub fn add_game(
        &mut self,
        start: &G,
        record: &GameRecord,
        value_mix: f32,
        discount: f32,
    ) -> Result<(), String> {
        let length = record.moves.len();
        let mut rows = Vec::new();
        let mut movers = Vec::new();
        // Positions are encoded as the game is replayed; none is kept as a state.
        let last = record.walk(start, |i, game| {
            let Some(Some(policy)) = record.policy.get(i) else {
                return;
            };
            let z = record.result_for(game.to_move())
                * discount.powi(i32::try_from(length.saturating_sub(i)).unwrap_or(i32::MAX));
            let v = record.root_value.get(i).copied().unwrap_or(z);
            rows.push(Row::new(
                game,
                policy,
                (1.0 - value_mix) * z + value_mix * v,
            ));
            movers.push(game.to_move());
        })?;
        // A resigned game was not counted: its last position tells no owners.
        let end = if record.resigned {
            None
        } else {
            self.settle
                .as_ref()
                .and_then(|k| k.settled_final(&last, last.position_hash()))
                .or_else(|| last.final_ownership())
        };
        if let Some((own, score)) = end {
            rows = rows
                .into_iter()
                .zip(&movers)
                .map(|(r, &p)| r.with_final(p, &own, score))
                .collect();
        }
        // A record refused halfway adds nothing.
        self.rows.extend(rows);
        while self.rows.len() > self.window {
            self.rows.pop_front();
        }
        Ok(())
    }

    /// The window with every position that occurs more than once merged into one row
    /// whose policy and value targets are the means of its occurrences (AlphaZero.jl's
    /// position averaging): the opening positions, which every game passes through,
    /// are then drawn no more often than any other, and each carries the average of
    /// many searches and results rather than one. The auxiliary targets (Go's ownership
    /// and score) are those of the latest occurrence.
    pub fn averaged(&self) -> ReplayBuffer<G> {
        use std::collections::{BTreeMap, HashMap};
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        // per merged row: the row, how many were merged, summed value and policy
        let mut merged: Vec<(Row, usize, f64, BTreeMap<u32, f64>)> = Vec::new();
        for row in &self.rows {
            let slot = *index.entry(row.planes.key()).or_insert_with(|| {
                merged.push((row.clone(), 0, 0.0, BTreeMap::new()));
                merged.len() - 1
            });
            let (latest, n, value, policy) = &mut merged[slot];
            *n += 1;
            *value += f64::from(row.value);
            for &(a, v) in row.policy.iter() {
                *policy.entry(a).or_insert(0.0) += f64::from(v);
            }
            latest.aux.clone_from(&row.aux);
        }
        let rows = merged
            .into_iter()
            .map(|(mut row, n, value, policy)| {
                let n = n as f64;
                row.value = (value / n) as f32;
                row.policy = policy
                    .into_iter()
                    .map(|(a, v)| (a, (v / n) as f32))
                    .collect();
                row
            })
            .collect();
        ReplayBuffer {
            prototype: self.prototype.clone(),
            rows,
            window: self.window,
            settle: None,
        }
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
        let points = h * w;
        batch.score.resize(size, 0.0);
        batch.ownership.resize(size * points, 0.0);
        batch.aux_weight.resize(size, 0.0);
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
            batch.aux_weight[i] = row.write_aux(
                &self.prototype,
                sym,
                &mut batch.score[i],
                &mut batch.ownership[i * points..(i + 1) * points],
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

    /// The ownership target of a counted game turns with the board and speaks for the
    /// side to move: written under each symmetry it is the final position's ownership,
    /// transformed.
    #[test]
    fn value_targets_are_discounted_by_the_plies_to_the_end() {
        // X takes the top row: 5 moves, X wins
        let start = TicTacToe::new();
        let moves: Vec<u32> = vec![0, 3, 1, 4, 2];
        let mut g = start;
        for &m in &moves {
            g.play(m as u8);
        }
        let record = GameRecord {
            policy: moves.iter().map(|&a| Some(vec![(a, 1.0)])).collect(),
            root_value: vec![0.5; moves.len()],
            result: GameRecord::result_of(g.outcome()),
            moves,
            resigned: false,
            no_resign: false,
            would_resign: None,
        };
        assert_eq!(record.result, 1.0);
        let mut plain = ReplayBuffer::new(&start, 100);
        plain.add_game(&start, &record, 0.0, 1.0).unwrap();
        let mut discounted = ReplayBuffer::new(&start, 100);
        discounted.add_game(&start, &record, 0.0, 0.9).unwrap();
        let mut mixed = ReplayBuffer::new(&start, 100);
        mixed.add_game(&start, &record, 0.5, 0.9).unwrap();
        for i in 0..5 {
            // X moves at even plies, O at odd ones; the win is 5 - i plies away
            let z = if i % 2 == 0 { 1.0 } else { -1.0 };
            let want = z * 0.9f32.powi(5 - i as i32);
            assert_eq!(plain.rows[i].value, z);
            assert!((discounted.rows[i].value - want).abs() < 1e-6, "row {i}");
            assert!(
                (mixed.rows[i].value - (0.5 * want + 0.25)).abs() < 1e-6,
                "row {i}"
            );
        }
    }

    #[test]
    fn averaging_merges_repeated_positions_into_their_mean_targets() {
        // Two games that share their first two positions and then part.
        let start = TicTacToe::new();
        let record = |moves: Vec<u32>, first: u32, value: f32| GameRecord {
            policy: moves
                .iter()
                .enumerate()
                .map(|(i, &a)| Some(vec![(if i == 0 { first } else { a }, 1.0)]))
                .collect(),
            root_value: vec![value; moves.len()],
            result: 0.0,
            moves,
            resigned: false,
            no_resign: false,
            would_resign: None,
        };
        let mut buffer = ReplayBuffer::new(&start, 100);
        buffer
            .add_game(&start, &record(vec![4, 0, 8], 4, 0.5), 1.0, 1.0)
            .unwrap();
        buffer
            .add_game(&start, &record(vec![4, 1, 2], 2, -0.25), 1.0, 1.0)
            .unwrap();
        assert_eq!(buffer.len(), 6);
        let avg = buffer.averaged();
        // the empty board and the board after 4 are shared, the third positions not
        assert_eq!(avg.len(), 4);
        for (row, policy) in [(0, [(2, 0.5), (4, 0.5)]), (1, [(0, 0.5), (1, 0.5)])] {
            assert!((avg.rows[row].value - 0.125).abs() < 1e-6, "row {row}");
            assert_eq!(&*avg.rows[row].policy, &policy, "row {row}");
        }
        // a position seen once keeps its targets
        assert_eq!(avg.rows[2], buffer.rows[2]);
        assert_eq!(avg.rows[3], buffer.rows[5]);
        let mut batch_rng = rand::rng();
        assert_eq!(avg.batch(8, true, &mut batch_rng).size, 8);
    }

    #[test]
    fn ownership_targets_rotate_with_the_board() {
        let start = Go::new(5, GoRules::default()).unwrap();
        let mut g = start.clone();
        let mut moves = Vec::new();
        // Black walls off the left, White the right; both pass
        for m in [
            "B1", "D1", "B2", "D2", "B3", "D3", "B4", "D4", "B5", "D5", "pass", "pass",
        ] {
            moves.push(g.action_of(g.parse_move(m).unwrap()) as u32);
            g.play_text(m).unwrap();
        }
        let (own, score) = g.final_ownership().expect("a counted game");
        let record = GameRecord {
            policy: moves.iter().map(|&a| Some(vec![(a, 1.0)])).collect(),
            root_value: vec![0.0; moves.len()],
            moves,
            result: GameRecord::result_of(g.outcome()),
            resigned: false,
            no_resign: false,
            would_resign: None,
        };
        let mut buffer = ReplayBuffer::new(&start, 100);
        buffer.add_game(&start, &record, 0.0, 1.0).unwrap();
        assert_eq!(buffer.len(), 12);
        for (i, row) in buffer.rows.iter().enumerate() {
            // rows alternate Black, White to move
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            for sym in 0..8 {
                let mut s = 0.0;
                let mut o = vec![9.0; 25];
                assert_eq!(row.write_aux(&start, sym, &mut s, &mut o), 1.0);
                assert_eq!(s, score * sign);
                for r in 0..5 {
                    for c in 0..5 {
                        let (r2, c2) = start.transform_point(sym, r, c);
                        assert_eq!(
                            o[r2 * 5 + c2],
                            own[r * 5 + c] * sign,
                            "sym {sym} at {r},{c}"
                        );
                    }
                }
            }
        }
        // a resigned game has no ownership to learn from
        let resigned = GameRecord {
            resigned: true,
            ..record
        };
        let mut buffer = ReplayBuffer::new(&start, 100);
        buffer.add_game(&start, &resigned, 0.0, 1.0).unwrap();
        let batch = buffer.batch(4, true, &mut rand::rng());
        assert_eq!(batch.aux_weight, [0.0; 4]);
    }

    /// With settling, a game passed out with a dead stone on the board teaches the
    /// count after it is taken off; without, the count as it stands.
    #[test]
    fn settled_games_teach_the_count_without_their_dead_stones() {
        let rows = [
            "..X.O..", "..X.O..", "..X.O..", "O.X.O..", "..X.O..", "..X.O..", "..X.O..",
        ];
        let stones = tabula_core::go::stones_from_rows(&rows);
        let start = Go::from_stones(7, GoRules::default(), &stones).unwrap();
        let pass = start.action_of(start.pass()) as u32;
        let record = GameRecord {
            policy: vec![Some(vec![(pass, 1.0)]); 2],
            root_value: vec![0.0; 2],
            moves: vec![pass, pass],
            result: -1.0,
            resigned: false,
            no_resign: false,
            would_resign: None,
        };
        let a4 = start.parse_move("A4").unwrap() as usize;
        let target = |buffer: ReplayBuffer<Go>| {
            let mut score = 0.0;
            let mut own = vec![0.0; 49];
            // the first row: Black to move, so the target is Black's view
            buffer.rows[0].write_aux(&start, 0, &mut score, &mut own);
            (own[a4], score)
        };
        let mut plain = ReplayBuffer::new(&start, 100);
        plain.add_game(&start, &record, 0.0, 1.0).unwrap();
        let knowledge = tabula_search::go_knowledge::GoKnowledge::default();
        let mut settled = ReplayBuffer::new(&start, 100).with_settling(Some(Box::new(knowledge)));
        settled.add_game(&start, &record, 0.0, 1.0).unwrap();
        let (own, score) = target(plain);
        let (settled_own, settled_score) = target(settled);
        assert_eq!((own, settled_own), (-1.0, 1.0));
        assert_eq!(settled_score - score, 15.0);
    }

    #[test]
    fn planes_pack_bits_and_keep_other_values() {
        let bits = Planes::pack(&[0.0, 1.0, 1.0, 0.0], 2);
        assert!(matches!(bits, Planes::Bits { .. }));
        assert_eq!(
            (0..4).map(|i| bits.get(i)).collect::<Vec<_>>(),
            [0.0, 1.0, 1.0, 0.0]
        );
        // a whole plane of one other value stays compact
        let komi = Planes::pack(&[0.0, 1.0, -0.6, -0.6], 2);
        assert!(matches!(komi, Planes::Bits { .. }));
        assert_eq!(
            (0..4).map(|i| komi.get(i)).collect::<Vec<_>>(),
            [0.0, 1.0, -0.6, -0.6]
        );
        let floats = Planes::pack(&[0.0, 0.5], 2);
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
        // 15 planes of 81 bits in 19 words, the komi plane as one constant, 19 non-zero
        // policy entries
        assert_eq!(
            row.bytes(),
            std::mem::size_of::<Row>() + 19 * 8 + 8 + 19 * 8
        );
        assert!(row.bytes() < 500, "{}", row.bytes());
    }
}
