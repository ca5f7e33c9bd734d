//! Learning the 3x3 pattern weights of the heavy playouts from the engine's own games.
//!
//! The engine (UCT with its current knowledge) plays itself; at every move, each legal
//! point's pattern counts as available and the chosen point's as chosen. A pattern's
//! gamma is how much more often than average it was chosen
//! ([`PatternCounts::gammas`]). Only this project's own games are used: no game
//! collection, no other engine's moves.

use std::sync::atomic::{AtomicU64, Ordering};

use tabula_core::go::patterns::PatternCounts;
use tabula_core::{Game, Go, GoRules};

use crate::go_knowledge::GoKnowledge;
use crate::uct::{RaveSchedule, Uct, UctConfig};

/// What to play to learn from.
#[derive(Clone, Debug)]
pub struct SelfPlay {
    /// Board size.
    pub size: usize,
    /// Games to play.
    pub games: usize,
    /// Simulations per move.
    pub simulations: usize,
    /// Worker threads.
    pub threads: usize,
    /// Seed of the first game (game k uses seed + k).
    pub seed: u64,
}

/// Plays the games and counts the patterns; `tick` is called after each game.
pub fn count_patterns(
    plan: &SelfPlay,
    knowledge: &GoKnowledge,
    tick: &(dyn Fn() + Sync),
) -> PatternCounts {
    let next = AtomicU64::new(0);
    let threads = plan.threads.clamp(1, plan.games.max(1));
    let parts: Vec<PatternCounts> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut counts = PatternCounts::default();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= plan.games as u64 {
                            break;
                        }
                        play_one(plan, knowledge, plan.seed.wrapping_add(k), &mut counts);
                        tick();
                    }
                    counts
                })
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    let mut total = PatternCounts::default();
    for p in &parts {
        total.merge(p);
    }
    total
}

fn play_one(plan: &SelfPlay, knowledge: &GoKnowledge, seed: u64, counts: &mut PatternCounts) {
    let Ok(mut pos) = Go::new(plan.size, GoRules::default()) else {
        return;
    };
    let mut move_seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut candidates = Vec::new();
    while !pos.is_terminal() {
        move_seed = tabula_core::zobrist::mix(move_seed);
        let config = UctConfig {
            simulations: plan.simulations,
            seed: move_seed,
            rave: 1000.0,
            // the schedule the shipped weights were counted with, so that they regenerate
            rave_schedule: RaveSchedule::Visits,
            exploration: 0.25,
            ..UctConfig::default()
        };
        let Some(best) = Uct::with_knowledge(config, knowledge.clone())
            .search(&pos)
            .best
        else {
            break;
        };
        candidates.clear();
        candidates.extend(
            pos.legal_moves()
                .into_iter()
                .filter(|&a| a != pos.pass())
                .map(|a| pos.pattern_code(a)),
        );
        let chosen = (best != pos.pass()).then(|| pos.pattern_code(best));
        counts.record(&candidates, chosen);
        pos.play(best);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_small_games_give_weights() {
        let plan = SelfPlay {
            size: 5,
            games: 2,
            simulations: 50,
            threads: 2,
            seed: 1,
        };
        let ticks = AtomicU64::new(0);
        let counts = count_patterns(&plan, &GoKnowledge::light(), &|| {
            ticks.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ticks.load(Ordering::Relaxed), 2);
        let w = counts.gammas(1);
        assert!(!w.is_empty());
    }
}
