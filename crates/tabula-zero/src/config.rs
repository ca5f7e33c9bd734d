//! The configuration of a training run: one TOML file, every field optional, over
//! generic defaults and the game's own (a TOML overlay the game declares; see
//! [`ZeroConfig::for_game`]). Its `[search]` table is the one [`SearchSettings`] that
//! self-play, gating and the accuracy measurement share, and that the other commands
//! start from.

use serde::{Deserialize, Serialize};
use tabula_nn::TrainConfig;
use tabula_search::SearchSettings;

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
    /// Total Dirichlet concentration at the root (α = total / legal moves).
    pub dirichlet_total: f32,
    /// Weight of the root noise.
    pub noise_weight: f32,
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
    /// Threads (0: one per core).
    pub threads: usize,
    /// Value target = (1 - value_mix) · result + value_mix · root search value.
    pub value_mix: f32,
    /// KataGo's forced playouts in full searches, `k` of `√(k · P · N)` (KataGo: 2),
    /// with policy target pruning; 0 turns them off.
    pub forced_playouts: f32,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games: 200,
            simulations: 100,
            fast_simulations: 0,
            full_search_prob: 0.25,
            dirichlet_total: 10.0,
            noise_weight: 0.25,
            temperature_moves: 4,
            temperature: 1.0,
            resign_threshold: 0.0,
            no_resign_fraction: 0.1,
            parallel_games: 32,
            threads: 0,
            value_mix: 0.0,
            forced_playouts: 0.0,
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
    /// At most this many samples per position in the window in one iteration (0: no
    /// cap): a run whose window is still nearly empty — above all one started from
    /// `--init`, whose network is already good — takes fewer steps instead of learning
    /// its first few thousand positions by heart.
    pub max_reuse: f64,
    /// Train on the window with repeated positions merged into one sample of mean
    /// targets ([`crate::replay::ReplayBuffer::averaged`]; AlphaZero.jl's position
    /// averaging), so that the openings every game shares are not drawn over and over.
    pub average_positions: bool,
    /// Augment samples with a random symmetry of the game.
    pub symmetries: bool,
    /// The heads: `dense` (AlphaZero's) or `katago` (per-point policy, pooled value,
    /// ownership and score heads trained on the end of each game; Go).
    pub heads: tabula_nn::Heads,
    /// A global-pooling branch in every this many residual blocks (KataGo's gpool
    /// blocks, so that every point reads the whole board early; 0: none).
    pub global_pooling: usize,
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
            max_reuse: 0.0,
            average_positions: false,
            symmetries: true,
            heads: tabula_nn::Heads::Dense,
            global_pooling: 0,
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

/// A teacher for the first iterations: games played by UCT with the game's own playout
/// knowledge (Go: heavy playouts, priors, learned patterns), recorded like self-play —
/// the root's visit shares are the policy targets, the results the value targets — so a
/// network starts from what the classic engine of this project knows, then learns on
/// by self-play. No other engine's answers are used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TeacherConfig {
    /// Iterations whose games the teacher plays (the first ones; 0: none).
    pub iterations: usize,
    /// UCT simulations per move.
    pub playouts: usize,
    /// UCT's exploration constant.
    pub exploration: f64,
    /// UCT's RAVE equivalence (0: off).
    pub rave: f64,
}

impl Default for TeacherConfig {
    fn default() -> Self {
        // The strength-tuned settings of `tabula gtp` (issue 11).
        TeacherConfig {
            iterations: 0,
            playouts: 800,
            exploration: 0.1,
            rave: 3000.0,
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
    /// The search (shared by self-play, gating, accuracy and the other commands).
    pub search: SearchSettings,
    /// Self-play.
    pub selfplay: SelfPlayConfig,
    /// UCT games for the first iterations (off by default).
    pub teacher: TeacherConfig,
    /// Network and training.
    pub net: NetConfig,
    /// Gating.
    pub gate: GateConfig,
    /// Accuracy measurement.
    pub eval: EvalConfig,
}

impl Default for ZeroConfig {
    fn default() -> Self {
        ZeroConfig::generic("")
    }
}

/// Keys that older configurations kept under `[selfplay]` and now live in `[search]`.
const MOVED_TO_SEARCH: [&str; 3] = ["c_puct", "fpu_reduction", "leaves_per_search"];

impl ZeroConfig {
    /// The generic defaults, before any game's own.
    pub fn generic(game: &str) -> ZeroConfig {
        ZeroConfig {
            game: game.to_string(),
            iterations: 15,
            seed: 1,
            time_limit_s: 0,
            search: SearchSettings::default(),
            selfplay: SelfPlayConfig::default(),
            teacher: TeacherConfig::default(),
            net: NetConfig::default(),
            gate: GateConfig::default(),
            eval: EvalConfig::default(),
        }
    }

    /// The defaults for `game`: the generic ones with the game's `overlay` (TOML, as the
    /// game declares it) laid over them.
    pub fn for_game(game: &str, overlay: &str) -> Result<ZeroConfig, ZeroError> {
        let mut base = toml::Table::try_from(ZeroConfig::generic(game))
            .map_err(|e| ZeroError::Config(e.to_string()))?;
        let top: toml::Table = toml::from_str(overlay)
            .map_err(|e| ZeroError::Config(format!("{game}'s training defaults: {e}")))?;
        merge(&mut base, top);
        let config: ZeroConfig = base.try_into().map_err(|e: toml::de::Error| {
            ZeroError::Config(format!("{game}'s training defaults: {e}"))
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Reads a TOML file over `defaults` (the game's, from [`ZeroConfig::for_game`]). A
    /// file that names another game is refused.
    pub fn from_toml(text: &str, defaults: &ZeroConfig) -> Result<ZeroConfig, ZeroError> {
        let mut value: toml::Table =
            toml::from_str(text).map_err(|e| ZeroError::Config(e.to_string()))?;
        if let Some(game) = value.get("game").and_then(|g| g.as_str()) {
            if game != defaults.game {
                return Err(ZeroError::Config(format!(
                    "the configuration is for {game}, not {}",
                    defaults.game
                )));
            }
        }
        migrate(&mut value);
        let mut base =
            toml::Table::try_from(defaults).map_err(|e| ZeroError::Config(e.to_string()))?;
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

    /// Validates the configuration and checks that it trains `game` (a run's opening check).
    pub fn validate_for(&self, game: &str) -> Result<(), ZeroError> {
        self.validate()?;
        if self.game != game {
            return Err(ZeroError::Config(format!(
                "the configuration is for {}, the game is {game}",
                self.game
            )));
        }
        Ok(())
    }

    /// Rejects values that cannot work.
    pub fn validate(&self) -> Result<(), ZeroError> {
        let s = &self.selfplay;
        let bad = |m: &str| Err(ZeroError::Config(m.to_string()));
        self.search.validate().map_err(ZeroError::Config)?;
        let (blocks, _) = tabula_nn::Architecture::preset_size(&self.net.size)
            .map_err(|e| ZeroError::Config(format!("net.size: {e}")))?;
        if self.net.global_pooling > blocks.max(1) {
            return bad("net.global_pooling must lie between 0 and the number of blocks");
        }
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
        // Every number in its range (NaN fails every range test).
        let ranges: [(&str, f64, f64, f64); 10] = [
            ("teacher.exploration", self.teacher.exploration, 0.0, 100.0),
            ("teacher.rave", self.teacher.rave, 0.0, 1e9),
            ("selfplay.temperature", s.temperature.into(), 0.0, 100.0),
            (
                "selfplay.dirichlet_total",
                s.dirichlet_total.into(),
                0.0,
                1e4,
            ),
            ("selfplay.noise_weight", s.noise_weight.into(), 0.0, 1.0),
            (
                "selfplay.resign_threshold",
                s.resign_threshold.into(),
                0.0,
                1.0,
            ),
            ("selfplay.value_mix", s.value_mix.into(), 0.0, 1.0),
            (
                "selfplay.forced_playouts",
                s.forced_playouts.into(),
                0.0,
                100.0,
            ),
            ("gate.threshold", self.gate.threshold, 0.0, 1.0),
            ("net.max_reuse", self.net.max_reuse, 0.0, 1e6),
        ];
        let optimizer = self.net.optimizer.ranges();
        let named = optimizer
            .iter()
            .map(|&(name, v, lo, hi)| (format!("net.optimizer.{name}"), v, lo, hi));
        for (name, v, lo, hi) in ranges
            .iter()
            .map(|&(name, v, lo, hi)| (name.to_string(), v, lo, hi))
            .chain(named)
        {
            if !(lo..=hi).contains(&v) {
                return Err(ZeroError::Config(format!(
                    "{name} must lie in [{lo}, {hi}] (got {v})"
                )));
            }
        }
        let counts = [
            ("selfplay.parallel_games", s.parallel_games, 1, 4096),
            ("selfplay.threads", s.threads, 0, 1024),
            ("teacher.playouts", self.teacher.playouts, 1, 10_000_000),
            ("net.batch_size", self.net.batch_size, 1, 65_536),
        ];
        for (name, v, lo, hi) in counts {
            if !(lo..=hi).contains(&v) {
                return Err(ZeroError::Config(format!(
                    "{name} must lie in {lo}..={hi} (got {v})"
                )));
            }
        }
        Ok(())
    }
}

/// Moves keys that older files kept under `[selfplay]` to `[search]`, so that their runs
/// and configurations still load.
fn migrate(value: &mut toml::Table) {
    let Some(toml::Value::Table(selfplay)) = value.get_mut("selfplay") else {
        return;
    };
    let moved: Vec<(String, toml::Value)> = MOVED_TO_SEARCH
        .iter()
        .filter_map(|k| selfplay.remove(*k).map(|v| (k.to_string(), v)))
        .collect();
    if moved.is_empty() {
        return;
    }
    let search = value
        .entry("search")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(search) = search {
        for (k, v) in moved {
            search.entry(k).or_insert(v);
        }
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

    const C4: &str = "[selfplay]\ngames = 200\n[net]\nsize = \"4x48\"\n";

    #[test]
    fn partial_files_keep_the_game_defaults_and_typos_are_errors() {
        let c4 = ZeroConfig::for_game("connect4", C4).unwrap();
        let c = ZeroConfig::from_toml("game = \"connect4\"\n[selfplay]\ngames = 7\n", &c4).unwrap();
        assert_eq!(c.selfplay.games, 7);
        assert_eq!(c.net.size, "4x48");
        let ttt = ZeroConfig::for_game("tictactoe", "").unwrap();
        assert!(ZeroConfig::from_toml("game = \"connect4\"\n", &ttt).is_err());
        let err = ZeroConfig::from_toml("[selfplay]\ngamez = 7\n", &ttt).unwrap_err();
        assert!(err.to_string().contains("gamez"), "{err}");
        assert!(ZeroConfig::from_toml("[selfplay]\ngames = 0\n", &ttt).is_err());
        for bad in [
            "[search]\nc_puct = nan\n",
            "[selfplay]\ntemperature = -1\n",
            "[selfplay]\nparallel_games = 0\n",
            "[net.optimizer]\nlearning_rate = 1e30\n",
            "[net.optimizer]\nlearning_rate = nan\n",
            "[net.optimizer]\nlr_cycle_low = 1.5\n",
            "[gate]\nthreshold = 1.5\n",
            "[net]\nsize = \"99999x99999\"\n",
            "[net]\nglobal_pooling = 9\n",
        ] {
            let err = ZeroConfig::from_toml(bad, &ttt).unwrap_err();
            let key = bad
                .lines()
                .nth(1)
                .and_then(|l| l.split(' ').next())
                .unwrap();
            assert!(err.to_string().contains(key), "{bad}: {err}");
        }
        let pooled = ZeroConfig::from_toml("[net]\nglobal_pooling = 2\n", &ttt).unwrap();
        assert_eq!(pooled.net.global_pooling, 2);
        assert!(ZeroConfig::for_game("x", "[selfplay\n").is_err());
        assert_eq!(ZeroConfig::from_toml(&ttt.to_toml(), &ttt).unwrap(), ttt);
    }

    #[test]
    fn older_files_with_search_keys_under_selfplay_still_load() {
        let ttt = ZeroConfig::for_game("tictactoe", "").unwrap();
        let c = ZeroConfig::from_toml(
            "[selfplay]\nc_puct = 2.5\nfpu_reduction = 0.1\nleaves_per_search = 2\n",
            &ttt,
        )
        .unwrap();
        assert_eq!(c.search.c_puct, 2.5);
        assert_eq!(c.search.fpu_reduction, 0.1);
        assert_eq!(c.search.leaves_per_search, 2);
        assert!(c.to_toml().contains("[search]"));
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn key() -> impl Strategy<Value = &'static str> {
            prop_oneof![
                Just("iterations"),
                Just("seed"),
                Just("time_limit_s"),
                Just("game"),
                Just("[search]\nc_puct"),
                Just("[search]\nleaves_per_search"),
                Just("[search]\nfpu_reduction"),
                Just("[search]\neval_batch"),
                Just("[selfplay]\ngames"),
                Just("[selfplay]\ntemperature"),
                Just("[selfplay]\nparallel_games"),
                Just("[selfplay]\nsimulations"),
                Just("[selfplay]\nvalue_mix"),
                Just("[selfplay]\nc_puct"),
                Just("[net]\nsteps"),
                Just("[net]\nsize"),
                Just("[net]\nbatch_size"),
                Just("[net]\nreplay_window"),
                Just("[net.optimizer]\nlearning_rate"),
                Just("[net.optimizer]\nmomentum"),
                Just("[gate]\nthreshold"),
                Just("[gate]\nenabled"),
                Just("[eval]\nevery"),
                Just("[nonsense]\nx"),
            ]
        }

        fn value() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("nan".to_string()),
                Just("inf".to_string()),
                Just("-inf".to_string()),
                Just("-1".to_string()),
                Just("0".to_string()),
                Just("1e308".to_string()),
                Just("9223372036854775807".to_string()),
                Just("true".to_string()),
                Just("\"4x48\"".to_string()),
                Just("\"99999x99999\"".to_string()),
                Just("\"tictactoe\"".to_string()),
                Just("[1, 2]".to_string()),
                Just("{ a = 1 }".to_string()),
                any::<i64>().prop_map(|v| v.to_string()),
                any::<f64>().prop_map(|v| format!("{v:?}")),
                "\\PC{0,8}",
            ]
        }

        // Fuzzing (see `scripts/fuzz.sh`): a configuration file is read, in range, and
        // writes back to itself — or it is refused; never a panic.
        proptest! {
            #[test]
            fn fuzz_config_toml(entries in proptest::collection::vec((key(), value()), 0..6)) {
                let ttt = ZeroConfig::for_game("tictactoe", "").unwrap();
                let text: String = entries
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}\n"))
                    .collect();
                if let Ok(c) = ZeroConfig::from_toml(&text, &ttt) {
                    prop_assert!(c.validate().is_ok());
                    prop_assert_eq!(ZeroConfig::from_toml(&c.to_toml(), &ttt).ok(), Some(c));
                }
            }
        }
    }
}
