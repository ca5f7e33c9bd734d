//! The configuration of a training run: one TOML file, every field optional, with
//! documented defaults per game ([`ZeroConfig::defaults_for`]).

use serde::{Deserialize, Serialize};
use tabula_nn::TrainConfig;

use crate::ZeroError;

/// Self-play settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Games per iteration.
    pub games: usize,
    /// Simulations of a full search.
    pub simulations: usize,
    /// Playout-cap randomisation (KataGo): with probability `1 - full_search_prob` a move
    /// gets only `fast_simulations` and no noise, and its position is not a policy target.
    /// `fast_simulations = 0` turns it off.
    pub fast_simulations: usize,
    /// Probability of a full search when playout-cap randomisation is on.
    pub full_search_prob: f64,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// Total Dirichlet concentration at the root (α = total / legal moves).
    pub dirichlet_total: f32,
    /// Weight of the root noise.
    pub noise_weight: f32,
    /// First-play urgency: unvisited children get the parent's value minus this.
    pub fpu_reduction: f32,
    /// Moves played at temperature `temperature` (proportional to visits); greedy after.
    pub temperature_moves: usize,
    /// Move temperature for the opening moves.
    pub temperature: f32,
    /// Resign when the root value for the side to move falls below `-resign_threshold`
    /// (0 disables resignation).
    pub resign_threshold: f32,
    /// Fraction of games that never resign, to measure the false-resign rate.
    pub no_resign_fraction: f64,
    /// Games played at once by each thread (their leaves are evaluated together).
    pub parallel_games: usize,
    /// Leaves one search gathers per round (virtual loss spreads them).
    pub leaves_per_search: usize,
    /// Threads (0: one per core).
    pub threads: usize,
    /// Value target = (1 - value_mix) · result + value_mix · root search value.
    pub value_mix: f32,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games: 200,
            simulations: 100,
            fast_simulations: 0,
            full_search_prob: 0.25,
            c_puct: 1.5,
            dirichlet_total: 10.0,
            noise_weight: 0.25,
            fpu_reduction: 0.2,
            temperature_moves: 4,
            temperature: 1.0,
            resign_threshold: 0.0,
            no_resign_fraction: 0.1,
            parallel_games: 32,
            leaves_per_search: 4,
            threads: 0,
            value_mix: 0.0,
        }
    }
}

impl SelfPlayConfig {
    /// Threads to use: `threads`, or one per core when it is 0.
    pub fn thread_count(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// Network and training settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Tower size: a preset (`seed`, `small`, `medium`, `large`, `huge`) or `BxC`.
    pub size: String,
    /// Positions kept in the replay window.
    pub replay_window: usize,
    /// Training steps per iteration.
    pub steps: usize,
    /// Samples per training step.
    pub batch_size: usize,
    /// Augment samples with a random symmetry of the game.
    pub symmetries: bool,
    /// Optimiser and learning rate.
    pub optimizer: TrainConfig,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            size: "small".into(),
            replay_window: 20_000,
            steps: 100,
            batch_size: 128,
            symmetries: true,
            optimizer: TrainConfig::default(),
        }
    }
}

/// Gating: the new network must beat the current best to replace it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateConfig {
    /// On: gated (AlphaGo Zero); off: every new network is used (AlphaZero).
    pub enabled: bool,
    /// Arena games (colours alternate).
    pub games: usize,
    /// Score (wins + draws/2) share the new network needs.
    pub threshold: f64,
    /// Simulations per move in the arena.
    pub simulations: usize,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            enabled: false,
            games: 40,
            threshold: 0.55,
            simulations: 50,
        }
    }
}

/// Measuring progress against the exact solver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Measure every this many iterations (0: never).
    pub every: usize,
    /// Simulations of the MCTS accuracy measurement.
    pub simulations: usize,
    /// Test positions used (0: all); Connect Four takes them from Pons' test sets.
    pub positions: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            every: 1,
            simulations: 200,
            positions: 0,
        }
    }
}

/// A whole training run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZeroConfig {
    /// The game, as the command line names it.
    pub game: String,
    /// Iterations to run (a resumed run continues up to this number).
    pub iterations: usize,
    /// Seed of everything.
    pub seed: u64,
    /// Stop after this many seconds of wall time in total (0: no limit).
    pub time_limit_s: u64,
    /// Self-play.
    pub selfplay: SelfPlayConfig,
    /// Network and training.
    pub net: NetConfig,
    /// Gating.
    pub gate: GateConfig,
    /// Accuracy measurement.
    pub eval: EvalConfig,
}

impl Default for ZeroConfig {
    fn default() -> Self {
        ZeroConfig::defaults_for("tictactoe")
    }
}

impl ZeroConfig {
    /// The defaults for `game`: small and fast for tic-tac-toe, larger for Connect Four
    /// and Go.
    pub fn defaults_for(game: &str) -> ZeroConfig {
        let mut c = ZeroConfig {
            game: game.to_string(),
            iterations: 15,
            seed: 1,
            time_limit_s: 0,
            selfplay: SelfPlayConfig::default(),
            net: NetConfig::default(),
            gate: GateConfig::default(),
            eval: EvalConfig::default(),
        };
        if game == "tictactoe" {
            // Temperature on every move: the games visit unusual positions (blunders
            // included), which is what the last fraction of a percent of accuracy needs.
            c.iterations = 20;
            c.selfplay.temperature_moves = 9;
        } else if game.starts_with("connect4") {
            c.iterations = 200;
            c.selfplay.games = 200;
            c.selfplay.simulations = 200;
            c.selfplay.fast_simulations = 40;
            c.selfplay.temperature_moves = 8;
            c.selfplay.resign_threshold = 0.9;
            c.selfplay.parallel_games = 64;
            c.net.size = "4x48".into();
            c.net.replay_window = 200_000;
            c.net.steps = 200;
            c.net.batch_size = 256;
            c.eval.every = 2;
            c.eval.simulations = 200;
            c.eval.positions = 500;
        } else if game.starts_with("go") || game == "mini-go" {
            c.iterations = 100;
            c.selfplay.simulations = 200;
            c.selfplay.temperature_moves = 12;
            c.net.size = "medium".into();
            c.net.replay_window = 200_000;
            c.net.batch_size = 256;
            c.eval.every = 0;
        }
        c
    }

    /// Reads a TOML file over the defaults for the game it names (or `game` if it names
    /// none).
    pub fn from_toml(text: &str, game: &str) -> Result<ZeroConfig, ZeroError> {
        let value: toml::Table =
            toml::from_str(text).map_err(|e| ZeroError::Config(e.to_string()))?;
        let game = value
            .get("game")
            .and_then(|g| g.as_str())
            .unwrap_or(game)
            .to_string();
        let mut base = toml::Table::try_from(ZeroConfig::defaults_for(&game))
            .map_err(|e| ZeroError::Config(e.to_string()))?;
        merge(&mut base, value);
        let config: ZeroConfig = base
            .try_into()
            .map_err(|e: toml::de::Error| ZeroError::Config(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }

    /// Rejects values that cannot work.
    pub fn validate(&self) -> Result<(), ZeroError> {
        let s = &self.selfplay;
        let bad = |m: &str| Err(ZeroError::Config(m.to_string()));
        if s.games == 0 || s.simulations == 0 {
            return bad("selfplay.games and selfplay.simulations must be positive");
        }
        if !(0.0..=1.0).contains(&s.full_search_prob)
            || !(0.0..=1.0).contains(&s.no_resign_fraction)
        {
            return bad("probabilities must lie in [0, 1]");
        }
        if self.net.batch_size == 0 || self.net.replay_window == 0 {
            return bad("net.batch_size and net.replay_window must be positive");
        }
        if self.gate.enabled && self.gate.games == 0 {
            return bad("gate.games must be positive when gating is on");
        }
        Ok(())
    }
}

/// Overlays `top` on `base`, table by table.
fn merge(base: &mut toml::Table, top: toml::Table) {
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge(b, t),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_keep_the_game_defaults_and_typos_are_errors() {
        let c = ZeroConfig::from_toml("game = \"connect4\"\n[selfplay]\ngames = 7\n", "tictactoe")
            .unwrap();
        assert_eq!(c.selfplay.games, 7);
        assert_eq!(c.net.size, "4x48");
        let err = ZeroConfig::from_toml("[selfplay]\ngamez = 7\n", "tictactoe").unwrap_err();
        assert!(err.to_string().contains("gamez"), "{err}");
        assert!(ZeroConfig::from_toml("[selfplay]\ngames = 0\n", "tictactoe").is_err());
        let c = ZeroConfig::defaults_for("tictactoe");
        assert_eq!(ZeroConfig::from_toml(&c.to_toml(), "x").unwrap(), c);
    }
}
