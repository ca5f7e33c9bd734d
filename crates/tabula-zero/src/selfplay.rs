//! Self-play: many games at once through the batched MCTS, with root noise, opening
//! temperature, playout-cap randomisation and resignation (with a measured false-resign
//! rate).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tabula_core::Game;
use tabula_nn::{search_evaluator, Network};
use tabula_search::{search_many, CachedEvaluator, Mcts, MctsConfig, SearchSettings};

use crate::config::SelfPlayConfig;
use crate::records::GameRecord;
use crate::ZeroError;

/// What a round of self-play produced, besides the records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayStats {
    /// Games played.
    pub games: usize,
    /// Moves played.
    pub moves: usize,
    /// Positions that are policy targets (full searches).
    pub targets: usize,
    /// Games won by the first player, by the second, drawn.
    pub first_wins: usize,
    /// Games won by the second player.
    pub second_wins: usize,
    /// Drawn games.
    pub draws: usize,
    /// Games ended by resignation.
    pub resigned: usize,
    /// No-resign games in which a player would have resigned.
    pub would_resign: usize,
    /// …of which that player did not lose in the end (false resigns).
    pub false_resigns: usize,
    /// Network evaluations (cache misses).
    pub evaluations: u64,
    /// Wall time.
    pub seconds: f64,
}

/// The search of a self-play move: the run's `search` settings, with a full or fast
/// budget and root noise on full searches only.
pub fn mcts_config(
    search: &SearchSettings,
    config: &SelfPlayConfig,
    full: bool,
    seed: u64,
) -> MctsConfig {
    let simulations = if full {
        config.simulations
    } else {
        config.fast_simulations.max(1)
    };
    MctsConfig {
        dirichlet_total: if full { config.dirichlet_total } else { 0.0 },
        noise_weight: config.noise_weight,
        forced_playouts: if full { config.forced_playouts } else { 0.0 },
        ..search.mcts(simulations, seed)
    }
}

/// A worker's numbered games and its evaluator's network calls.
type WorkerOutput = (Vec<(usize, GameRecord)>, u64);

struct Slot {
    number: usize,
    record: GameRecord,
    rng: ChaCha8Rng,
    full: bool,
}

/// Plays `count` games from `start` with `net`, numbering them from `first_number`
/// (each game's randomness comes from `seed` and its number). `finished` is shown each
/// game as it ends (on the thread that played it), so that a caller can save games
/// before the whole round is over.
pub fn play_games<G: Game>(
    start: &G,
    net: Arc<Network>,
    count: usize,
    search: &SearchSettings,
    config: &SelfPlayConfig,
    seed: u64,
    finished: &(dyn Fn(&GameRecord) + Sync),
) -> Result<(Vec<GameRecord>, SelfPlayStats), ZeroError> {
    let started = Instant::now();
    let threads = config.thread_count().min(count.max(1));
    let queue = Queue::new(count);
    let results: Vec<Result<WorkerOutput, ZeroError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let net = net.clone();
                let queue = &queue;
                scope.spawn(move || worker(start, net, search, config, seed, queue, finished))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(ZeroError::Panicked("self-play"))))
            .collect()
    });
    let mut numbered = Vec::new();
    let mut stats = SelfPlayStats::default();
    for r in results {
        let (records, evals) = r?;
        numbered.extend(records);
        stats.evaluations += evals;
    }
    numbered.sort_by_key(|(n, _)| *n);
    let records: Vec<GameRecord> = numbered.into_iter().map(|(_, r)| r).collect();
    stats.add_records(&records);
    stats.seconds = started.elapsed().as_secs_f64();
    Ok((records, stats))
}

impl SelfPlayStats {
    /// Counts `records`' games, moves, targets, results and resignations.
    pub(crate) fn add_records(&mut self, records: &[GameRecord]) {
        for r in records {
            self.games += 1;
            self.moves += r.moves.len();
            self.targets += r.policy.iter().filter(|p| p.is_some()).count();
            match r.result {
                x if x > 0.0 => self.first_wins += 1,
                x if x < 0.0 => self.second_wins += 1,
                _ => self.draws += 1,
            }
            self.resigned += r.resigned as usize;
            if let Some(p) = r.would_resign {
                self.would_resign += 1;
                let result = if p == 0 { r.result } else { -r.result };
                if result >= 0.0 {
                    self.false_resigns += 1;
                }
            }
        }
    }
}

fn new_slot<G: Game>(
    start: &G,
    number: usize,
    search: &SearchSettings,
    config: &SelfPlayConfig,
    seed: u64,
) -> (Slot, Mcts<G>) {
    let mut rng =
        ChaCha8Rng::seed_from_u64(seed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let no_resign = rng.random_bool(config.no_resign_fraction);
    let tree = Mcts::new(
        start.clone(),
        mcts_config(search, config, true, rng.random()),
    );
    let slot = Slot {
        number,
        record: GameRecord::new(no_resign),
        rng,
        full: true,
    };
    (slot, tree)
}

/// The numbers of the games still to play, shared by the workers.
pub(crate) struct Queue {
    next: AtomicUsize,
    count: usize,
}

impl Queue {
    /// Games numbered `0..count`.
    pub(crate) fn new(count: usize) -> Queue {
        Queue {
            next: AtomicUsize::new(0),
            count,
        }
    }

    /// The next game's number, if any is left.
    pub(crate) fn take(&self) -> Option<usize> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        (n < self.count).then_some(n)
    }
}

fn worker<G: Game>(
    start: &G,
    net: Arc<Network>,
    search: &SearchSettings,
    config: &SelfPlayConfig,
    seed: u64,
    queue: &Queue,
    finished: &(dyn Fn(&GameRecord) + Sync),
) -> Result<WorkerOutput, ZeroError> {
    let mut evaluator = CachedEvaluator::new(search_evaluator(net, start, search)?, 1 << 17);
    let mut slots = Vec::new();
    let mut trees = Vec::new();
    let mut done = Vec::new();
    let take = || queue.take();
    for _ in 0..config.parallel_games.max(1) {
        let Some(n) = take() else { break };
        let (s, t) = new_slot(start, n, search, config, seed);
        slots.push(s);
        trees.push(t);
    }
    while !slots.is_empty() {
        for (slot, tree) in slots.iter_mut().zip(trees.iter_mut()) {
            slot.full =
                config.fast_simulations == 0 || slot.rng.random_bool(config.full_search_prob);
            tree.set_config(mcts_config(search, config, slot.full, slot.rng.random()));
        }
        search_many(&mut trees, &mut evaluator);
        // Advance every searched game; games that end make room for new ones, which join
        // after this pass (they have not been searched yet).
        let mut fresh = 0;
        let mut i = 0;
        while i < slots.len() {
            if advance(&mut slots[i], &mut trees[i], config) {
                let slot = slots.swap_remove(i);
                trees.swap_remove(i);
                finished(&slot.record);
                done.push((slot.number, slot.record));
                fresh += 1;
            } else {
                i += 1;
            }
        }
        for _ in 0..fresh {
            let Some(n) = take() else { break };
            let (s, t) = new_slot(start, n, search, config, seed);
            slots.push(s);
            trees.push(t);
        }
    }
    Ok((done, evaluator.misses))
}

/// Records the search of the current move, plays a move, and says whether the game ended.
fn advance<G: Game>(slot: &mut Slot, tree: &mut Mcts<G>, config: &SelfPlayConfig) -> bool {
    let result = tree.result();
    let game = tree.game().clone();
    let record = &mut slot.record;
    record.root_value.push(result.value);
    record.policy.push(slot.full.then(|| {
        result
            .pruned_policy(tree.config().c_puct, config.forced_playouts)
            .into_iter()
            .map(|(a, p)| (a as u32, p))
            .collect()
    }));
    let me = game.to_move();
    if config.resign_threshold > 0.0 && result.value < -config.resign_threshold {
        if record.no_resign {
            record.would_resign.get_or_insert(me.index() as u8);
        } else {
            record.policy.pop();
            record.root_value.pop();
            record.resigned = true;
            record.result = GameRecord::result_of(Some(tabula_core::Outcome::Win(me.other())));
            return true;
        }
    }
    let temperature = if record.moves.len() < config.temperature_moves {
        config.temperature
    } else {
        0.0
    };
    let Some(mv) = result.choose(temperature, &mut slot.rng) else {
        record.policy.pop();
        record.root_value.pop();
        record.result = GameRecord::result_of(game.outcome());
        return true;
    };
    record.moves.push(game.action_of(mv) as u32);
    if tree.play(mv).is_err() {
        return true;
    }
    if tree.game().is_terminal() {
        record.result = GameRecord::result_of(tree.game().outcome());
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::{ConnectFour, TicTacToe};
    use tabula_nn::{Architecture, WeightFile};

    fn untrained<G: Game>(game: &G) -> Arc<Network> {
        let arch = Architecture::for_game(game, 1, 8);
        Arc::new(Network::from_weights(&WeightFile::initial(&arch, &game.name(), 1)).unwrap())
    }

    fn check<G: Game>(start: G, config: SelfPlayConfig) {
        let net = untrained(&start);
        let (records, stats) = play_games(
            &start,
            net,
            23,
            &SearchSettings::default(),
            &config,
            5,
            &|_| {},
        )
        .unwrap();
        assert_eq!(records.len(), 23);
        assert_eq!(stats.games, 23);
        for r in &records {
            let positions = r.replay(&start).unwrap();
            let last = positions.last().unwrap();
            assert!(
                r.resigned || last.is_terminal(),
                "a game stopped early: {r:?}"
            );
            if !r.resigned {
                assert_eq!(r.result, GameRecord::result_of(last.outcome()));
            }
            assert_eq!(r.policy.len(), r.moves.len());
            for p in r.policy.iter().flatten() {
                let sum: f32 = p.iter().map(|x| x.1).sum();
                assert!((sum - 1.0).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn every_game_is_played_to_its_end() {
        let config = SelfPlayConfig {
            simulations: 30,
            parallel_games: 4,
            threads: 2,
            ..SelfPlayConfig::default()
        };
        check(TicTacToe::new(), config.clone());
        check(
            ConnectFour::default(),
            SelfPlayConfig {
                fast_simulations: 8,
                resign_threshold: 0.8,
                ..config
            },
        );
    }
}
