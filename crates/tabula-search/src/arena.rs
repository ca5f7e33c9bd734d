//! Matches between two agents: alternating colours, optional random openings (so that
//! deterministic players do not replay one game), score with a 95% interval and an Elo
//! difference.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tabula_core::{Game, Outcome, Player};

use crate::agent::Agent;

/// The result of a match, from the first-named agent's side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchResult {
    /// Games won by A.
    pub wins: usize,
    /// Draws.
    pub draws: usize,
    /// Games lost by A.
    pub losses: usize,
}

impl MatchResult {
    /// Games played.
    pub fn games(&self) -> usize {
        self.wins + self.draws + self.losses
    }

    /// A's score share: (wins + draws / 2) / games.
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games() as f64
    }

    /// A 95% confidence interval of the score (normal approximation with the games'
    /// own variance, so that draws narrow it; clamped to [0, 1]). Win rates without
    /// draws use [`crate::stats::wilson95`].
    pub fn interval95(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let s = self.score();
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        if var == 0.0 {
            // Every game ended alike (e.g. 0 of 2): the games' own variance says
            // nothing, so fall back to Wilson's interval, which is never zero-width.
            return crate::stats::wilson95(s * n, self.games());
        }
        let half = crate::stats::Z95 * (var / n).sqrt();
        ((s - half).max(0.0), (s + half).min(1.0))
    }

    /// The Elo difference a score implies (±∞ clamped to ±800 at 0% and 100%).
    pub fn elo(score: f64) -> f64 {
        let s = score.clamp(0.01, 0.99);
        // `+ 0.0` turns -0 into 0 for printing.
        (-400.0 * (1.0 / s - 1.0).log10()).clamp(-800.0, 800.0) + 0.0
    }
}

/// A random opening of `plies` moves (stopping early if the game ends).
pub fn random_opening<G: Game>(start: &G, plies: usize, rng: &mut impl Rng) -> G {
    let mut game = start.clone();
    for _ in 0..plies {
        let moves = game.legal_moves();
        if moves.is_empty() || game.is_terminal() {
            break;
        }
        // Do not hand out openings that are already over.
        let mv = moves[rng.random_range(0..moves.len())];
        let mut next = game.clone();
        next.play(mv);
        if next.is_terminal() {
            break;
        }
        game = next;
    }
    game
}

/// Plays one game; returns the outcome.
pub fn play_game<G: Game>(
    start: &G,
    first: &mut dyn Agent<G>,
    second: &mut dyn Agent<G>,
) -> Option<Outcome> {
    let mut game = start.clone();
    while !game.is_terminal() {
        let agent: &mut dyn Agent<G> = if game.to_move() == Player::First {
            first
        } else {
            second
        };
        let choice = agent.choose(&game)?;
        if game.try_play(choice.mv).is_err() {
            // An illegal move loses.
            return Some(Outcome::Win(game.to_move().other()));
        }
    }
    game.outcome()
}

/// Plays `games` games between `a` and `b`, alternating colours; games come in pairs
/// sharing a random opening of `opening_plies` moves (seeded). `after_game` sees the
/// running result.
pub fn play_match<G: Game>(
    start: &G,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    games: usize,
    opening_plies: usize,
    seed: u64,
    mut after_game: impl FnMut(&MatchResult),
) -> MatchResult {
    let mut result = MatchResult::default();
    let mut opening = start.clone();
    for i in 0..games {
        if i % 2 == 0 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(i as u64 / 2));
            opening = random_opening(start, opening_plies, &mut rng);
        }
        let a_first = (i % 2 == 0) == (opening.to_move() == Player::First);
        let outcome = if a_first {
            play_game(&opening, a, b)
        } else {
            play_game(&opening, b, a)
        };
        let a_side = if a_first {
            opening.to_move()
        } else {
            opening.to_move().other()
        };
        match outcome {
            Some(Outcome::Win(p)) if p == a_side => result.wins += 1,
            Some(Outcome::Win(_)) => result.losses += 1,
            _ => result.draws += 1,
        }
        after_game(&result);
    }
    result
}

/// Uniformly random moves.
pub struct RandomAgent {
    rng: ChaCha8Rng,
}

impl RandomAgent {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> Self {
        RandomAgent {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl<G: Game> Agent<G> for RandomAgent {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose(&mut self, game: &G) -> Option<crate::agent::Choice<G::Move>> {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return None;
        }
        Some(crate::agent::Choice {
            mv: moves[self.rng.random_range(0..moves.len())],
            evaluation: "random".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::NegamaxAgent;
    use tabula_core::TicTacToe;

    #[test]
    fn minimax_never_loses_to_random_and_draws_itself() {
        let start = TicTacToe::new();
        let mut perfect = NegamaxAgent::new(None);
        let mut random = RandomAgent::new(3);
        let r = play_match(&start, &mut perfect, &mut random, 40, 0, 1, |_| {});
        assert_eq!(r.losses, 0);
        assert!(r.wins > 20, "{r:?}");
        assert!(r.score() > 0.75 && MatchResult::elo(r.score()) > 190.0);
        let mut other = NegamaxAgent::new(None);
        let r = play_match(&start, &mut perfect, &mut other, 10, 2, 1, |_| {});
        assert_eq!(r.draws + r.wins + r.losses, 10);
        let (lo, hi) = r.interval95();
        assert!(lo <= r.score() && r.score() <= hi);
    }

    #[test]
    fn elo_and_interval() {
        assert!((MatchResult::elo(0.5)).abs() < 1e-9);
        assert!((MatchResult::elo(0.75) - 190.85).abs() < 0.1);
        let r = MatchResult {
            wins: 10,
            draws: 0,
            losses: 10,
        };
        let (lo, hi) = r.interval95();
        assert!(
            (lo - 0.281).abs() < 0.01 && (hi - 0.719).abs() < 0.01,
            "{lo} {hi}"
        );
        // all games lost: an interval of real width, not [0, 0]
        let r = MatchResult {
            wins: 0,
            draws: 0,
            losses: 2,
        };
        let (lo, hi) = r.interval95();
        assert!(lo == 0.0 && hi > 0.3, "{lo} {hi}");
    }
}
