//! Teacher games: the first iterations of a run played by UCT with the game's own
//! playout knowledge instead of the untrained network, recorded as self-play is — the
//! root's visit shares are policy targets, the root win rate the search value, the
//! result the value target — so that a network starts from what this project's
//! classic engine knows (issue 12's "first phase supervised on games played by the
//! heavy-playout engine") and then learns on by self-play.

use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tabula_core::Game;
use tabula_search::uct::{Knowledge, Light, Uct, UctConfig};

use crate::config::{SelfPlayConfig, TeacherConfig};
use crate::records::GameRecord;
use crate::selfplay::{Queue, SelfPlayStats};
use crate::ZeroError;

/// Makes the teacher's knowledge for one thread (`None`: light random playouts).
pub type KnowledgeSource<'a, G> =
    dyn Fn() -> Option<Box<dyn Knowledge<G> + Send + Sync>> + Sync + 'a;

/// Plays `count` games from `start` with UCT (`teacher`'s settings, `knowledge` for its
/// playouts and priors), the opening moves sampled in proportion to visits as in
/// self-play (`selfplay.temperature_moves`, `selfplay.temperature`), on
/// `selfplay.threads` threads. Every position is a policy target; games are played to
/// their end (no resignation), so each one gives ownership and score targets.
pub fn play_teacher_games<G: Game>(
    start: &G,
    count: usize,
    teacher: &TeacherConfig,
    selfplay: &SelfPlayConfig,
    knowledge: &KnowledgeSource<'_, G>,
    seed: u64,
    finished: &(dyn Fn(&GameRecord) + Sync),
) -> Result<(Vec<GameRecord>, SelfPlayStats), ZeroError> {
    let started = Instant::now();
    let threads = selfplay.thread_count().min(count.max(1));
    let queue = Queue::new(count);
    let results: Vec<Result<Vec<(usize, GameRecord)>, ZeroError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let queue = &queue;
                scope.spawn(move || {
                    let knowledge: Box<dyn Knowledge<G>> = match knowledge() {
                        Some(k) => k,
                        None => Box::new(Light),
                    };
                    let mut done = Vec::new();
                    while let Some(n) = queue.take() {
                        let record = teacher_game(start, teacher, selfplay, &knowledge, seed, n)?;
                        finished(&record);
                        done.push((n, record));
                    }
                    Ok(done)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or(Err(ZeroError::Panicked("teacher games")))
            })
            .collect()
    });
    let mut numbered = Vec::new();
    for r in results {
        numbered.extend(r?);
    }
    numbered.sort_by_key(|(n, _)| *n);
    let records: Vec<GameRecord> = numbered.into_iter().map(|(_, r)| r).collect();
    let mut stats = SelfPlayStats::default();
    stats.add_records(&records);
    stats.seconds = started.elapsed().as_secs_f64();
    Ok((records, stats))
}

/// One game, numbered `number`, between two UCT players.
fn teacher_game<G: Game>(
    start: &G,
    teacher: &TeacherConfig,
    selfplay: &SelfPlayConfig,
    knowledge: &dyn Knowledge<G>,
    seed: u64,
    number: usize,
) -> Result<GameRecord, ZeroError> {
    let game_seed = seed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
    let mut uct = Uct::with_knowledge(
        UctConfig {
            exploration: teacher.exploration,
            simulations: teacher.playouts,
            time_limit: None,
            seed: game_seed.rotate_left(17),
            rave: teacher.rave,
            track_score: false,
            ..UctConfig::default()
        },
        knowledge,
    );
    let mut record = GameRecord::new(true);
    let mut game = start.clone();
    while !game.is_terminal() {
        let result = uct.search(&game);
        let total: u32 = result.moves.iter().map(|m| m.visits).sum();
        if total == 0 {
            break;
        }
        let temperature = if record.moves.len() < selfplay.temperature_moves {
            selfplay.temperature
        } else {
            0.0
        };
        let Some(mv) = result.choose(temperature, &mut rng) else {
            break;
        };
        record.policy.push(Some(
            result
                .moves
                .iter()
                .filter(|m| m.visits > 0)
                .map(|m| (game.action_of(m.mv) as u32, m.visits as f32 / total as f32))
                .collect(),
        ));
        record.root_value.push((2.0 * result.win_rate - 1.0) as f32);
        if !game.is_legal(mv) {
            return Err(ZeroError::Config(format!(
                "the teacher chose an illegal move in game {number}"
            )));
        }
        record.moves.push(game.action_of(mv) as u32);
        game.play(mv);
    }
    record.result = GameRecord::result_of(game.outcome());
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::TicTacToe;

    #[test]
    fn teacher_games_are_whole_legal_games_with_visit_targets() {
        let start = TicTacToe::new();
        let teacher = TeacherConfig {
            playouts: 200,
            ..TeacherConfig::default()
        };
        let selfplay = SelfPlayConfig {
            threads: 2,
            temperature_moves: 2,
            ..SelfPlayConfig::default()
        };
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let tick = |_: &GameRecord| {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let (records, stats) =
            play_teacher_games(&start, 12, &teacher, &selfplay, &|| None, 3, &tick).unwrap();
        assert_eq!(records.len(), 12);
        assert_eq!(seen.into_inner(), 12);
        assert_eq!(stats.games, 12);
        assert_eq!(stats.targets, stats.moves, "every position is a target");
        let mut openings = std::collections::HashSet::new();
        for r in &records {
            let last = r.replay(&start).unwrap().pop().unwrap();
            assert!(last.is_terminal());
            assert_eq!(r.result, GameRecord::result_of(last.outcome()));
            for (p, v) in r.policy.iter().zip(&r.root_value) {
                let p = p.as_ref().unwrap();
                let sum: f32 = p.iter().map(|x| x.1).sum();
                assert!((sum - 1.0).abs() < 1e-4);
                assert!((-1.0..=1.0).contains(v));
            }
            openings.insert(r.moves[..2].to_vec());
        }
        // The temperature varies the openings; UCT with 200 playouts never loses
        // tic-tac-toe from a sound opening, so most games are drawn.
        assert!(openings.len() > 1, "{openings:?}");
        assert!(stats.draws >= 6, "{stats:?}");
        // The same seed plays the same games.
        let (again, _) =
            play_teacher_games(&start, 12, &teacher, &selfplay, &|| None, 3, &|_| {}).unwrap();
        assert_eq!(records, again);
    }
}
